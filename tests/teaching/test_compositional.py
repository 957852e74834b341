"""Compositional kernels (Daniely et al. 2017): exact kernel, activations, random features, de-duplication.

Statistical tolerances: a mean over S independent seeds is compared with its target within
Z_TOL standard errors, the SE being the sample std / sqrt(S). With ~15 Gram entries per check
and Z_TOL = 4.5 the chance of a false alarm per entry is ~7e-6 (normal tail), so a failure means
a bias, not bad luck.
"""
from math import acos, exp, pi, sqrt

import numpy as np
import pandas as pd
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rkcore.teaching.compositional.activations import _relu_log_b  # a module's own helper, tested where it lives
from rkcore.teaching.compositional.sampling import _keys_and_masses, _sample_forest
from rkcore.teaching.compositional import (
    ACTIVATIONS,
    BASE_KERNELS,
    PRESETS,
    CompositionalFeatures,
    InputNode,
    InternalNode,
    Skeleton,
    activation_curves,
    compositional_error_curve,
    deep_skeleton,
    describe_features,
    gaussian_skeleton,
    mixed_skeleton,
    prepare_data,
    preset_skeleton,
    sample_features,
    shallow_skeleton,
)
# the package re-exports only public names; these tests reach into the modules that own the helpers
from rkcore.teaching.compositional.activations import _relu_log_b
from rkcore.teaching.compositional.sampling import _keys_and_masses, _sample_forest

Z_TOL = 4.5


# ---------------------------------------------------------------------------- fixtures
def small_skeleton():
    """s0: sphere on x0,x1; g: Gaussian on x2 (gamma 0.5); cat: categorical x3 (c = 3);
    h = relu(mean(s0, cat)); out = exp(mean(h, g))."""
    return Skeleton((
        InputNode("s0", "sphere", (0, 1)),
        InputNode("g", "gaussian", (2,), gamma=0.5),
        InputNode("cat", "categorical", (3,), n_categories=3),
        InternalNode("h", "relu", ("s0", "cat")),
        InternalNode("out", "exponential", ("h", "g")),
    ), name="small")


def discrete_skeleton():
    """Only discrete base features (so de-duplication has work to do), two layers."""
    return Skeleton((
        InputNode("a", "sphere", (0, 1)),
        InputNode("b", "sphere", (2, 3)),
        InputNode("cat", "categorical", (4,), n_categories=3),
        InternalNode("h", "polynomial", ("a", "b")),
        InternalNode("out", "exponential", ("h", "cat")),
    ), name="discrete")


@pytest.fixture(scope="module")
def X_disc():
    rng = np.random.RandomState(3)
    X = rng.randn(5, 5)
    X[:, 4] = [0, 1, 2, 1, 0]
    return X


# ---------------------------------------------------------------------------- exact kernel
def test_exact_kernel_matches_hand_computation():
    x = [3.0, 4.0, 0.0, 1.0]
    y = [4.0, 3.0, 1.0, 1.0]
    z = [0.0, 1.0, 2.0, 2.0]
    K = small_skeleton().kernel(np.array([x, y, z]))

    def relu(r):
        return (sqrt(1 - r * r) + (pi - acos(r)) * r) / pi

    # x, y: sphere 24/25, categorical 1 -> rho_h = 0.98; Gaussian exp(-0.5 * 1)
    k_xy = exp((relu((24 / 25 + 1) / 2) + exp(-0.5)) / 2 - 1)
    # x, z: sphere 4/5, categorical 0 -> rho_h = 0.4; Gaussian exp(-0.5 * 4)
    k_xz = exp((relu(0.4) + exp(-2.0)) / 2 - 1)
    # y, z: sphere 3/5, categorical 0 -> 0.3; Gaussian exp(-0.5 * 1)
    k_yz = exp((relu(0.3) + exp(-0.5)) / 2 - 1)
    expected = np.array([[1, k_xy, k_xz], [k_xy, 1, k_yz], [k_xz, k_yz, 1]])
    np.testing.assert_allclose(K, expected, rtol=1e-12)


def test_exact_kernel_is_psd_and_normalized():
    rng = np.random.RandomState(0)
    for key in PRESETS:
        skel, X = preset_skeleton(key, rng.randn(40, 9))
        K = skel.kernel(X)
        np.testing.assert_allclose(np.diag(K), 1.0, atol=1e-12)
        np.testing.assert_allclose(K, K.T, atol=1e-12)
        assert np.linalg.eigvalsh(K).min() > -1e-9, key


def test_shallow_exponential_is_gaussian_of_normalized_inputs():
    # one sphere group, exp: e^{<u,v> - 1} = exp(-||u - v||^2 / 2) for unit u, v
    rng = np.random.RandomState(1)
    X = rng.randn(7, 4)
    K = shallow_skeleton(4, group_size=4).kernel(X)
    U = X / np.linalg.norm(X, axis=1, keepdims=True)
    D2 = ((U[:, None, :] - U[None, :, :]) ** 2).sum(-1)
    np.testing.assert_allclose(K, np.exp(-D2 / 2), rtol=1e-12)


# ---------------------------------------------------------------------------- activations
@pytest.mark.parametrize("key", list(ACTIVATIONS))
def test_activation_series_matches_closed_form(key):
    act = ACTIVATIONS[key]
    a = act.coefficients(4000)
    assert np.all(a >= 0)
    # the tail after 4000 terms: 0 except for ReLU, whose coefficients decay like n^{-5/2}
    assert abs(a.sum() - 1.0) < 1e-4
    rho = np.linspace(-0.9, 0.9, 19)
    series = np.polynomial.polynomial.polyval(rho, a)
    np.testing.assert_allclose(series, act.dual(rho), atol=1e-10)
    assert act.dual(np.array([1.0]))[0] == pytest.approx(1.0, abs=1e-12)
    h = 1e-8  # sigma'(1), the mean degree (one-sided difference; ReLU's error is ~sqrt(2h)/pi)
    assert (act.dual(np.array([1.0])) - act.dual(np.array([1.0 - h])))[0] / h == pytest.approx(act.mean_degree, abs=1e-3)


def test_relu_rejection_constant_dominates_ratio():
    k = np.arange(0, 10**6)
    ratio = np.exp(_relu_log_b(k) + 2.5 * np.log(k + 1.0))
    assert ratio.max() == pytest.approx(0.5)
    assert ratio.argmax() == 0
    assert ratio[-1] == pytest.approx(1 / (4 * sqrt(pi)), rel=1e-3)  # the asymptote is below 0.5


@pytest.mark.parametrize("key", list(ACTIVATIONS))
def test_degree_sampler_follows_coefficients(key):
    act = ACTIVATIONS[key]
    N = 200_000
    n = act.sample_degree(np.random.RandomState(0), N)
    a = act.coefficients(9)
    freq = np.bincount(n, minlength=9)[:9] / N
    se = np.sqrt(a * (1 - a) / N)
    assert np.all(np.abs(freq - a) <= Z_TOL * se + 1e-12), (freq, a)


# ---------------------------------------------------------------------------- feature masses
def test_feature_masses_match_sampling_frequencies():
    """p_j (exact, from the derivation) against the frequency of each canonical feature."""
    skel = discrete_skeleton()
    N = 60_000
    forest = _sample_forest(skel, N, np.random.RandomState(5))
    keys, logp = _keys_and_masses(skel, forest)
    uniq, first, counts = np.unique(keys, return_index=True, return_counts=True)
    p = np.exp(logp[first])
    top = np.argsort(-counts)[:40]
    se = np.sqrt(p[top] * (1 - p[top]) / N)
    assert np.all(np.abs(counts[top] / N - p[top]) <= Z_TOL * se), np.c_[counts[top] / N, p[top]]
    # identical keys always carry identical masses
    assert np.allclose(np.exp(logp), p[np.searchsorted(uniq, keys)])
    assert p.sum() <= 1 + 1e-9


# ---------------------------------------------------------------------------- unbiasedness
def _estimates(skel, X, D, mode, S):
    iu = np.triu_indices(X.shape[0])
    return np.array([CompositionalFeatures(skel, D, dedup=mode, random_state=s).fit(X).kernel_estimate(X)[iu]
                     for s in range(S)]), skel.kernel(X)[iu]


@pytest.mark.parametrize("mode", ["none", "unbiased"])
@pytest.mark.parametrize("which", ["discrete", "small"])
def test_random_features_are_unbiased(mode, which, X_disc):
    skel = discrete_skeleton() if which == "discrete" else small_skeleton()
    X = X_disc if which == "discrete" else np.c_[X_disc[:, :3], X_disc[:, 4]]
    est, exact = _estimates(skel, X, D=6, mode=mode, S=400)
    z = (est.mean(0) - exact) / (est.std(0, ddof=1) / np.sqrt(est.shape[0]))
    assert np.all(np.abs(z) < Z_TOL), z


def test_dedup_does_not_increase_error(X_disc):
    """Protocol: same X, same budget D = 24 stored features, S = 60 seeds per mode; the mean
    relative Frobenius error with de-duplication (Des Raj weights) must not exceed the plain
    one by more than 3 standard errors of the difference of the two means."""
    rng = np.random.RandomState(0)
    cases = [(discrete_skeleton(), X_disc), (mixed_skeleton(7), prepare_data(rng.randn(12, 7), categorical_last=4)),
             (gaussian_skeleton(6, group_size=3, activation="exponential"), rng.randn(10, 6))]
    S, D = 60, 24
    for skel, X in cases:
        K = skel.kernel(X)
        err = {}
        for mode in ("none", "unbiased"):
            err[mode] = np.array([np.linalg.norm(
                CompositionalFeatures(skel, D, dedup=mode, random_state=s).fit(X).kernel_estimate(X) - K)
                / np.linalg.norm(K) for s in range(S)])
        se = np.sqrt(err["none"].var(ddof=1) / S + err["unbiased"].var(ddof=1) / S)
        assert err["unbiased"].mean() <= err["none"].mean() + 3 * se, (skel.name, err["none"].mean(), err["unbiased"].mean())


def test_exhausted_feature_set_gives_exact_kernel():
    # two sphere coordinates, linear node: only 2 distinct features exist; asking for 5 enumerates them
    skel = Skeleton((InputNode("s", "sphere", (0, 1)), InternalNode("out", "linear", ("s",))))
    X = np.random.RandomState(0).randn(6, 2)
    est = CompositionalFeatures(skel, 5, dedup="unbiased", random_state=0).fit(X)
    assert est.exhausted_
    assert est.transform(X).shape == (6, 5)
    np.testing.assert_allclose(est.kernel_estimate(X), skel.kernel(X), atol=1e-12)


def test_continuous_features_get_plain_weights():
    # Gaussian inputs under a linear node: no feature can repeat, so Des Raj weights are all 1/D
    skel = Skeleton((InputNode("g", "gaussian", (0, 1)), InternalNode("out", "linear", ("g",))))
    drawn = sample_features(skel, 10, dedup="unbiased", random_state=0)
    np.testing.assert_allclose(drawn["weights"], 0.1)
    assert drawn["n_draws"] == 10


def test_dedup_shapes_and_weights(X_disc):
    est = CompositionalFeatures(discrete_skeleton(), 40, dedup="unbiased", random_state=1).fit(X_disc)
    Z = est.transform(X_disc)
    assert Z.shape == (5, 40)
    assert est.n_draws_ > 40  # duplicates were drawn and merged
    assert np.all(est.weights_ > 0) and np.all(est.feature_mass_ > 0)
    # sum_j w_j = (1/D)[D - sum_j P_{<j} + sum_j (D - j) p_j] = 1, since sum_j P_{<j} = sum_i (D - i) p_i:
    # a constant feature is estimated exactly
    assert est.weights_.sum() == pytest.approx(1.0, abs=1e-12)
    counts = CompositionalFeatures(discrete_skeleton(), 40, dedup="counts", random_state=1).fit(X_disc)
    assert counts.weights_.sum() == pytest.approx(1.0)
    table = describe_features(est, 5)
    assert list(table.columns) == ["feature", "weight", "probability", "factors", "expression"]
    assert len(table) == 5


def test_real_products_are_stored_without_phase():
    """z * conj(z) = 1 and e^{2 pi i (w1 + w2) x / c} with w1 + w2 = 0 mod c are real: they must not get
    the random output phase, which would store sqrt2 * Re or an all-zero -sqrt2 * Im column."""
    skel = Skeleton((InputNode("c", "sphere", (0, 1)), InputNode("k", "categorical", (2,), n_categories=2),
                     InternalNode("out", "polynomial", ("c", "k"))))
    X = np.c_[np.random.RandomState(0).randn(30, 2), np.arange(30) % 2]
    est = CompositionalFeatures(skel, 400, random_state=0).fit(X)
    Z = est.transform(X)
    assert not np.any(np.all(np.abs(Z) < 1e-12, axis=0)), "an all-zero feature column was stored"
    real = ~est.complex_
    assert real.any() and est.complex_.any()
    # real products of unit-modulus factors on nonzero rows: |psi| = 1 for every point
    table = describe_features(est, 400)
    np.testing.assert_allclose(np.abs(Z[:, real]) / np.sqrt(est.weights_[real]), 1.0, atol=1e-12)
    assert not table.loc[real, "expression"].str.contains("Re|Im").any()


def test_complexity_matches_mean_number_of_calls():
    skel = deep_skeleton(8)
    forest = _sample_forest(skel, 20_000, np.random.RandomState(0))
    calls = forest.node.size / 20_000  # every request is one call of Algorithm 1
    # Poisson-ish count per feature; its std is a few calls, so the SE of the mean is < 0.05
    assert calls == pytest.approx(skel.complexity(), abs=0.2)


# ---------------------------------------------------------------------------- engine and errors
def test_error_curve_is_tidy_and_decreasing():
    skel, X = preset_skeleton("shallow", np.random.RandomState(0).randn(30, 8))
    df = compositional_error_curve(X, skel, [16, 256], trials=4, seed=0)
    assert set(df.columns) == {"dedup", "D", "trial", "metric", "value"}
    assert len(df) == 2 * 2 * 4 * 4
    assert set(df.metric) == {"rel_fro", "max_abs_error", "mean_abs_error", "draws_per_feature"}
    rel = df[df.metric == "rel_fro"].groupby(["dedup", "D"])["value"].mean()
    for mode in ("none", "unbiased"):
        assert rel[(mode, 256)] < rel[(mode, 16)]


def test_bad_inputs_raise_value_errors():
    with pytest.raises(ValueError, match="not an earlier node"):
        Skeleton((InternalNode("out", "relu", ("x",)), InputNode("x", "sphere", (0,))))
    with pytest.raises(ValueError, match="feed no other node"):
        Skeleton((InputNode("a", "sphere", (0,)), InputNode("b", "sphere", (1,)), InternalNode("out", "relu", ("a",))))
    with pytest.raises(ValueError, match="Unknown activation"):
        InternalNode("out", "tanh", ("a",))
    with pytest.raises(ValueError, match="Unknown base kernel"):
        InputNode("a", "laplace", (0,))
    with pytest.raises(ValueError, match="n_categories"):
        InputNode("a", "categorical", (0,))
    with pytest.raises(ValueError, match="gamma"):
        InputNode("a", "gaussian", (0,), gamma=-1.0)
    skel = small_skeleton()
    with pytest.raises(ValueError, match="integer codes 0..2"):
        skel.kernel(np.array([[1.0, 2.0, 0.0, 5.0]]))
    with pytest.raises(ValueError, match="at least 4"):
        skel.kernel(np.ones((2, 3)))
    with pytest.raises(ValueError, match="dedup"):
        sample_features(skel, 4, dedup="merge")
    with pytest.raises(ValueError):
        CompositionalFeatures(skel, 0).fit(np.ones((2, 4)))


def test_registries_are_complete():
    for key, a in ACTIVATIONS.items():
        assert a.key == key and a.label and a.latex
    for key, b in BASE_KERNELS.items():
        assert b.key == key and b.label and b.latex and b.feature_latex
    for key, p in PRESETS.items():
        skel, X = preset_skeleton(key, np.random.RandomState(0).randn(20, 10))
        assert isinstance(skel, Skeleton) and skel.check_X(X).shape == (20, 10)
        assert isinstance(skel.describe(), pd.DataFrame) and skel.latex()


@parametrize_with_checks([CompositionalFeatures(n_components=16, random_state=0),
                          CompositionalFeatures(n_components=16, dedup="unbiased", random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_activation_curves_are_normalized_duals():
    """a_n >= 0 with sum 1: every dual maps 1 to 1 and is non-decreasing on [0, 1]."""
    curves = activation_curves(n_points=101)
    assert set(curves["activation"]) == set(ACTIVATIONS)
    for key, g in curves.groupby("activation"):
        g = g.sort_values("rho")
        assert g["value"].iloc[-1] == pytest.approx(1.0, abs=1e-9), key
        right = g[g["rho"] >= 0]["value"].to_numpy()
        assert (np.diff(right) >= -1e-12).all(), key
