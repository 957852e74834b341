"""SCRK (paper section 4): exactness against the explicit Omega, unbiasedness, estimator checks."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from rkcore.maps import circulant
from rkcore.maps.circulant import SignedCirculantRandomKernel
from rkcore.kernels.exact import CONTRACT_RTOL, anova_kernel, elementary_from_power_sums


def _unit_rows(n, d, seed):
    X = np.random.RandomState(seed).standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


# ------------------------------------------------------------------ structure
@pytest.mark.parametrize("d, D, degree", [(8, 16, 2), (8, 20, 2), (7, 30, 3), (6, 13, 4), (5, 5, 5), (1, 3, 1), (6, 9, 1)])
def test_matches_rk_computed_with_the_explicit_projection(d, D, degree):
    """FFT path == K_A^m(x, omega_s) / sqrt(D) with the dense Omega (power-sum GEMMs), incl. partial blocks."""
    X = np.random.RandomState(0).standard_normal((11, d))
    scrk = SignedCirculantRandomKernel(D, degree=degree, random_state=3).fit(X)
    Omega = scrk.projection_matrix()
    assert Omega.shape == (D, d)
    expected = anova_kernel(X, Omega, degree) / np.sqrt(D)
    Z = scrk.transform(X)
    assert Z.shape == (11, D)
    np.testing.assert_allclose(Z, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())


def test_projection_is_signed_circulant_with_rademacher_rows():
    scrk = SignedCirculantRandomKernel(10, degree=2, random_state=0).fit(np.ones((2, 4)))
    Omega = scrk.projection_matrix()
    assert scrk.n_blocks_ == 3 and set(np.unique(Omega)) == {-1.0, 1.0}
    w, sigma = scrk.random_weights_, scrk.random_signs_
    # block 1, row i, column j = sigma_1[i] * w_1[(i - j) mod d]; first column is sigma * w
    np.testing.assert_array_equal(Omega[4:8, 0], sigma[1] * w[1])
    np.testing.assert_array_equal(Omega[5, :], sigma[1, 1] * np.roll(w[1][::-1], 2))


def test_sparse_input_and_row_blocking(monkeypatch):
    X = np.random.RandomState(1).standard_normal((40, 12))
    X[X < 0.5] = 0.0
    for degree in (2, 3):
        scrk = SignedCirculantRandomKernel(30, degree=degree, random_state=0).fit(X)
        Z = scrk.transform(X)
        np.testing.assert_allclose(scrk.transform(sp.csr_matrix(X)), Z, rtol=1e-12, atol=1e-14)
        monkeypatch.setattr(circulant, "TRANSFORM_BLOCK_BYTES", 1)  # one row per block
        np.testing.assert_allclose(scrk.transform(X), Z, rtol=1e-12, atol=1e-14)
        monkeypatch.undo()


@pytest.mark.parametrize("degree, signs_matter", [(2, False), (4, False), (3, True)])
def test_signs_matter_only_for_odd_degree(degree, signs_matter):
    """K_A^m(-w, x) = (-1)^m K_A^m(w, x): flipping sigma changes nothing for even m."""
    X = np.random.RandomState(2).standard_normal((5, 8))
    scrk = SignedCirculantRandomKernel(16, degree=degree, random_state=0).fit(X)
    Z = scrk.transform(X)
    scrk.random_signs_ = -scrk.random_signs_
    assert np.allclose(scrk.transform(X), Z) != signs_matter


# ------------------------------------------------------------------ unbiasedness
def _misscaled_features(scrk, X):
    """The public implementation's bug: odd power sums scaled by 1/sqrt(D) before the recursion too."""
    D, m = scrk.n_components, scrk.degree
    Omega = scrk.projection_matrix()
    P = [None] + [(X**t) @ (Omega**t).T / (np.sqrt(D) if t % 2 else 1.0) for t in range(1, m + 1)]
    return elementary_from_power_sums(P, m)[m] / np.sqrt(D)


@pytest.mark.parametrize("degree", [2, 3, 4])
def test_unbiased_on_unit_norm_data_and_detects_misscaling(degree):
    """Mean of Z Z^T over seeds equals K_A^m within 5 standard errors, entry by entry.

    The estimator is an average over independent seeds, so by the CLT each entry of the
    mean is ~ normal with standard error SE = sd / sqrt(seeds); |bias| <= 5 SE fails by
    chance with probability < 1e-5 for the 10 entries. The same seeds run through the
    mis-scaled variant must fail that tolerance, so the test can see that bug.
    """
    n, d, D, seeds = 4, 6, 9, 1500  # D = 9 is a block and a half: partial blocks included
    X = _unit_rows(n, d, seed=degree)
    K = anova_kernel(X, None, degree)
    iu = np.triu_indices(n)
    good, bad = np.empty((seeds, iu[0].size)), np.empty((seeds, iu[0].size))
    for s in range(seeds):
        scrk = SignedCirculantRandomKernel(D, degree=degree, random_state=s).fit(X)
        Z = scrk.transform(X)
        good[s] = (Z @ Z.T)[iu]
        Zb = _misscaled_features(scrk, X)
        bad[s] = (Zb @ Zb.T)[iu]

    def z_scores(samples):
        se = samples.std(axis=0, ddof=1) / np.sqrt(seeds)
        return np.abs(samples.mean(axis=0) - K[iu]) / np.maximum(se, 1e-15)

    relative_bias = np.abs(good.mean(axis=0) - K[iu]) / np.abs(K[iu]).max()
    assert z_scores(good).max() < 5.0, (z_scores(good), relative_bias)
    assert z_scores(bad).max() > 5.0, z_scores(bad)


# ------------------------------------------------------------------ sklearn conventions
@parametrize_with_checks([SignedCirculantRandomKernel(n_components=7, degree=2, random_state=0),
                          SignedCirculantRandomKernel(n_components=5, degree=1, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("params, X, match", [
    ({"degree": 0}, np.ones((3, 4)), "degree"),
    ({"degree": 5}, np.ones((3, 4)), "exceeds the number of features"),
    ({"n_components": 0}, np.ones((3, 4)), "n_components"),
    ({}, np.array([[1.0, np.nan, 2.0]]), "NaN"),
])
def test_bad_input_raises_value_error(params, X, match):
    with pytest.raises(ValueError, match=match):
        SignedCirculantRandomKernel(**params).fit(X)


def test_wrong_number_of_features_at_transform():
    scrk = SignedCirculantRandomKernel(8, random_state=0).fit(np.ones((3, 4)))
    with pytest.raises(ValueError, match="features"):
        scrk.transform(np.ones((3, 5)))


def test_fit_keeps_n_components_and_params():
    scrk = SignedCirculantRandomKernel(n_components=10, degree=2, random_state=0)
    scrk.fit(np.ones((2, 4)))
    assert scrk.n_components == 10 and scrk.n_blocks_ == 3
    assert scrk.transform(np.ones((2, 4))).shape == (2, 10)


@pytest.mark.parametrize("degree", [2, 3, 4])
@pytest.mark.parametrize("d, D", [(20, 40), (20, 50), (7, 30), (6, 6)])
@pytest.mark.parametrize("sparse", [False, True])
def test_stacked_features_are_the_separate_maps(degree, d, D, sparse, monkeypatch):
    """stacked_scrk_features (error_study's trials) gives the features of fitting and transforming
    one map per seed: D a multiple of d or not, zero rows, rows where Newton's identities cancel or
    a power sum overflows (repaired rows), and small row blocks, where the check's gamma is per block.

    Within the accuracy contract, not bit for bit: the stacked FFTs run as one batch, and numpy's
    FFT may vectorize a batch differently from one row on another CPU. The scale bounds the
    contract's e_m(|x_j w_j|) from above: (||x||_1 max|w|)^m / sqrt(D) >= m! e_m / sqrt(D)."""
    from rkcore.maps.circulant import stacked_scrk_features

    monkeypatch.setattr(circulant, "TRANSFORM_BLOCK_BYTES", 40_000)  # several row blocks
    rng = np.random.RandomState(degree * 100 + d)
    X = rng.randn(60, d) * (rng.rand(60, d) < 0.6)
    X[3] = 0.0
    X[4, 0] = 1e150
    X[5, :2] = [1e5, 1e-5]
    seeds = [11, 12, 13]
    maps = [SignedCirculantRandomKernel(D, degree=degree, random_state=s).fit(X) for s in seeds]
    separate = np.hstack([m.transform(X) for m in maps])
    stacked = stacked_scrk_features(sp.csr_matrix(X) if sparse else X, degree, D, seeds)
    assert stacked.shape == (60, 3 * D)
    w_max = max(np.abs(m.projection_matrix()).max() for m in maps)
    with np.errstate(over="ignore"):
        scale = (np.abs(X).sum(axis=1) * w_max) ** degree / np.sqrt(D)
    infinite = ~np.isfinite(separate)
    assert np.array_equal(infinite, ~np.isfinite(stacked))
    assert np.array_equal(np.sign(separate[infinite]), np.sign(stacked[infinite]))
    error = np.where(infinite, 0.0, np.abs(stacked - separate))
    assert (error <= CONTRACT_RTOL * scale[:, None]).all(), float((error / scale[:, None]).max())
    assert np.isfinite(stacked).all()
