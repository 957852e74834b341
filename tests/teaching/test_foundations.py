"""Foundations: explicit features vs kernels (identities), RFF, random projections (Theorem 1).

Statistical checks compare a mean over independent repetitions with its expectation within
Z_TOL = 4.5 standard errors (SE = sample std / sqrt(repetitions)); false-alarm probability
per compared quantity ~7e-6.
"""
from itertools import combinations
from math import comb, log, sqrt

import numpy as np
import pytest
from scipy.stats import kstest
from sklearn.kernel_approximation import RBFSampler

from rkcore.teaching.foundations import (
    distortion_bands,
    EXPANSIONS,
    MAX_SUBSETS_D,
    PROJECTIONS,
    all_subsets_features,
    chi2_band,
    distortion_summary,
    gamma_from_sigma,
    gaussian_kernel,
    interaction_features,
    kernel_errors,
    kernel_trick_timing,
    median_heuristic_gamma,
    n_explicit_features,
    polynomial_feature_names,
    polynomial_features,
    projection_distortion,
    rff_error_curve,
    rff_features,
    theorem1_band,
)
from rkcore.kernels.exact import anova_kernel, up_to_kernel

Z_TOL = 4.5


@pytest.fixture(scope="module")
def XY():
    rng = np.random.RandomState(0)
    return rng.randn(7, 5), rng.randn(6, 5)


# ---------------------------------------------------------------------------- explicit features
@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("c", [1.0, 0.5, 0.0])
def test_polynomial_features_inner_product(XY, degree, c):
    X, Y = XY
    P, Q = polynomial_features(X, degree, c), polynomial_features(Y, degree, c)
    assert P.shape[1] == comb(5 + degree, degree)
    np.testing.assert_allclose(P @ Q.T, (c + X @ Y.T) ** degree, rtol=1e-10, atol=1e-10)


def test_degree2_features_are_the_notes_features():
    # notes, Section 1.1: (1, sqrt2 x_i, x_i^2, sqrt2 x_i x_j for i < j), 1 + 2d + C(d, 2) of them
    x = np.array([0.3, -1.2, 2.0])
    notes = [1.0] + [sqrt(2) * v for v in x] + [v * v for v in x] + [sqrt(2) * x[i] * x[j] for i, j in combinations(range(3), 2)]
    ours = polynomial_features(x[None, :], 2, 1.0)[0]
    assert ours.size == 1 + 2 * 3 + comb(3, 2)
    np.testing.assert_allclose(np.sort(ours), np.sort(notes), rtol=1e-12)
    names = polynomial_feature_names(3)
    assert names[0] == "1" and "1.414*x0*x1" in names and "1*x0^2" in names


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_interaction_features_inner_products(XY, degree):
    X, Y = XY
    A = interaction_features(X, degree)
    assert A.shape[1] == comb(5, degree)
    np.testing.assert_allclose(A @ interaction_features(Y, degree).T, anova_kernel(X, Y, degree), rtol=1e-10, atol=1e-12)
    U = interaction_features(X, degree, lower_orders=True)
    assert U.shape[1] == sum(comb(5, k) for k in range(degree + 1))
    np.testing.assert_allclose(U @ interaction_features(Y, degree, lower_orders=True).T, up_to_kernel(X, Y, degree),
                               rtol=1e-10, atol=1e-12)


def test_all_subsets_features_inner_product(XY):
    X, Y = XY
    F = all_subsets_features(X)
    assert F.shape == (7, 2**5)
    brute = np.prod(1.0 + X[:, None, :] * Y[None, :, :], axis=2)
    np.testing.assert_allclose(F @ all_subsets_features(Y).T, brute, rtol=1e-10)
    with pytest.raises(ValueError, match="too many"):
        all_subsets_features(np.ones((2, MAX_SUBSETS_D + 1)))


@pytest.mark.parametrize("kind", list(EXPANSIONS))
def test_expansion_registry_is_consistent(kind, XY):
    X, Y = XY
    e = EXPANSIONS[kind]
    F = e.features(X, 2)
    assert F.shape[1] == n_explicit_features(kind, 5, 2) == e.n_features(5, 2)
    np.testing.assert_allclose(F @ e.features(Y, 2).T, e.kernel(X, Y, 2), rtol=1e-10, atol=1e-12)
    assert e.label and e.feature_latex and e.kernel_latex


def test_kernel_trick_timing_is_tidy():
    df = kernel_trick_timing("polynomial", [2, 8], n=20, repeats=2)
    assert set(df.columns) == {"kind", "d", "method", "n_features", "n", "repeat", "seconds"}
    assert len(df) == 2 * 2 * 2
    assert (df["seconds"] > 0).all()
    explicit = df[df.method == "explicit features"].groupby("d")["n_features"].first()
    assert explicit[8] == comb(10, 2)
    with pytest.raises(ValueError, match="allowed d <="):
        kernel_trick_timing("all_subsets", [MAX_SUBSETS_D + 1])
    with pytest.raises(ValueError, match="MB"):
        kernel_trick_timing("polynomial", [2000], n=5000)
    with pytest.raises(ValueError, match="Unknown expansion"):
        kernel_trick_timing("cubic", [2])


# ---------------------------------------------------------------------------- Gaussian kernel and RFF
def test_gaussian_kernel_and_bandwidths(XY):
    X, _ = XY
    sigma = 1.7
    K = gaussian_kernel(X, gamma=gamma_from_sigma(sigma))
    brute = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / (2 * sigma**2))
    np.testing.assert_allclose(K, brute, rtol=1e-12)
    g = median_heuristic_gamma(X)
    d = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))[np.triu_indices(7, 1)]
    assert g == pytest.approx(1 / (2 * np.median(d) ** 2))
    with pytest.raises(ValueError):
        gaussian_kernel(X, gamma=0.0)


def test_rff_features_are_sklearn_rbf_sampler(XY):
    X, _ = XY
    Z = rff_features(X, gamma=0.3, n_components=50, random_state=4)
    np.testing.assert_allclose(Z, RBFSampler(gamma=0.3, n_components=50, random_state=4).fit_transform(X))


def test_rff_is_unbiased(XY):
    X, _ = XY
    gamma, S = 0.2, 300
    iu = np.triu_indices(7, 1)
    est = np.array([(lambda Z: (Z @ Z.T)[iu])(rff_features(X, gamma, 8, random_state=s)) for s in range(S)])
    z = (est.mean(0) - gaussian_kernel(X, gamma=gamma)[iu]) / (est.std(0, ddof=1) / np.sqrt(S))
    assert np.all(np.abs(z) < Z_TOL), z


def test_rff_error_curve_shrinks_like_inverse_sqrt_D(XY):
    X = np.random.RandomState(1).randn(40, 5)
    df = rff_error_curve(X, gamma=0.1, D_list=[64, 1024], trials=8, seed=0)
    assert set(df.columns) == {"D", "trial", "metric", "value"}
    assert len(df) == 2 * 8 * 3
    rel = df[df.metric == "rel_fro"].groupby("D")["value"].mean()
    # the error ~ c / sqrt(D): 16x more features, ~4x smaller (loose range for 8 trials)
    assert 2.5 < rel[64] / rel[1024] < 6.5
    errs = kernel_errors(np.eye(2), np.eye(2) + 0.1)
    assert errs["max_abs_error"] == pytest.approx(0.1) and errs["mean_abs_error"] == pytest.approx(0.1)


# ---------------------------------------------------------------------------- random projections
def test_theorem1_band_formula():
    lo, hi = theorem1_band(100, 0.05)
    t = log(2 / 0.05)
    assert lo == pytest.approx(1 - 2 * sqrt(t / 100))
    assert hi == pytest.approx(1 + 2 * sqrt(t / 100) + 2 * t / 100)
    assert lo == pytest.approx(0.61587, abs=1e-5) and hi == pytest.approx(1.45791, abs=1e-5)
    with pytest.raises(ValueError, match="delta"):
        theorem1_band(10, 1.5)
    with pytest.raises(ValueError, match="m"):
        theorem1_band(0, 0.1)


@pytest.mark.parametrize("delta", [0.01, 0.05, 0.3])
def test_theorem1_band_contains_exact_chi2_interval(delta):
    # each tail of the theorem has probability <= delta/2, so it must contain the exact quantiles
    m = np.arange(1, 2001)
    lo, hi = theorem1_band(m, delta)
    clo, chi = chi2_band(m, delta)
    assert np.all(lo <= clo + 1e-12) and np.all(hi >= chi - 1e-12)


@pytest.mark.parametrize("kind", list(PROJECTIONS))
def test_projection_preserves_squared_norms_in_expectation(kind):
    X = np.random.RandomState(2).randn(30, 200)
    df = projection_distortion(X, [4, 32, 128], kind=kind, trials=40, seed=0)
    assert set(df.columns) == {"kind", "m", "trial", "vector", "ratio"}
    assert len(df) == 30 * 3 * 40
    # within a trial the vectors share A, so average per trial first; trials are independent
    per_trial = df.groupby(["m", "trial"])["ratio"].mean().unstack("trial")
    mean, se = per_trial.mean(axis=1), per_trial.std(axis=1, ddof=1) / np.sqrt(40)
    assert np.all(np.abs(mean - 1) < Z_TOL * se), (mean, se)


def test_gaussian_projection_has_chi2_distribution():
    # one vector across independent trials: m ||Av||^2/||v||^2 ~ chi2_m (also checks the nested-prefix trick)
    X = np.random.RandomState(3).randn(2, 50)
    df = projection_distortion(X, [6, 64], kind="gaussian", trials=400, seed=1)
    for m in (6, 64):
        r = df[(df.vector == 0) & (df.m == m)]["ratio"].to_numpy() * m
        assert kstest(r, "chi2", args=(m,)).pvalue > 1e-3


def test_distortion_summary_respects_theorem1():
    X = np.random.RandomState(4).randn(50, 300)
    delta = 0.1
    df = projection_distortion(X, [8, 64, 256], kind="gaussian", trials=20, seed=0)
    summary = distortion_summary(df, delta)
    assert {"kind", "m", "median", "band_low", "band_high", "outside", "delta"} <= set(summary.columns)
    # Theorem 1: P(outside) <= delta for each v; 1000 ratios per m (20 independent A), so allow 4.5 SE
    # of a proportion delta computed over the 20 independent trials only (a conservative count)
    assert np.all(summary["outside"] <= delta + Z_TOL * sqrt(delta * (1 - delta) / 20))


def test_projection_errors():
    with pytest.raises(ValueError, match="zero row"):
        projection_distortion(np.zeros((2, 3)), [2])
    with pytest.raises(ValueError, match="Unknown projection"):
        projection_distortion(np.ones((2, 3)), [2], kind="fjlt")
    with pytest.raises(ValueError, match="m_list"):
        projection_distortion(np.ones((2, 3)), [])


def test_distortion_bands_hold_the_exact_interval():
    """Theorem 1 (Laurent-Massart, each tail <= delta/2) cannot be tighter than the exact central
    chi^2_m / m interval, which holds 1 and narrows with m."""
    b = distortion_bands([4096, 1, 10, 10, 100], delta=0.05)
    assert list(b["m"]) == [1, 10, 100, 4096]
    assert (b["theorem_low"] <= b["chi2_low"]).all() and (b["chi2_high"] <= b["theorem_high"]).all()
    assert ((b["chi2_low"] < 1) & (1 < b["chi2_high"])).all()
    assert (np.diff(b["chi2_high"] - b["chi2_low"]) < 0).all()
