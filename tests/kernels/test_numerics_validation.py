"""Issue 11, items 3-7: each case failed (wrong number, NaN or a misleading message) before."""
from __future__ import annotations

import numpy as np
import pytest

from rkcore.kernels import exact as K
from rkcore.kernels.itemsets import ItemsetFamily
from rkcore.maps.random_kernel import RandomKernel
from rkcore.registry import KernelSpec, make_map


# ---------------------------------------------------------------------------- item 3
def test_rk_map_accepts_the_up_to_zero_family():
    X = np.random.default_rng(0).random((3, 6))
    Z = RandomKernel(8, kernel="itemset", itemsets=ItemsetFamily.up_to(6, 0), random_state=0).fit_transform(X)
    np.testing.assert_array_equal(Z, np.full((3, 8), 1 / np.sqrt(8)))  # only the empty itemset: K = 1
    np.testing.assert_allclose(Z @ Z.T, K.itemset_kernel(X, family=ItemsetFamily.up_to(6, 0)), rtol=1e-15)


# ---------------------------------------------------------------------------- item 4
def test_repeated_children_are_refused():
    from rkcore.teaching.compositional import InputNode, InternalNode
    with pytest.raises(ValueError, match="lists the child 'a' more than once"):
        InternalNode("out", "exponential", ("a", "a", "b"))
    with pytest.raises(ValueError, match="integer column indices"):
        InputNode("x", "sphere", (0.5,))


# ---------------------------------------------------------------------------- item 5
def _movielens_like(n=37, seed=0):
    """One-hot blocks plus genre flags, L1-normalized: the shape of the paper's MovieLens rows."""
    rng = np.random.default_rng(seed)
    blocks = [2, 7, 21]
    cols = []
    for size in blocks:
        onehot = np.zeros((n, size))
        onehot[np.arange(n), rng.integers(0, size, n)] = 1.0
        cols.append(onehot)
    cols.append((rng.random((n, 19)) < 0.12).astype(float))
    X = np.hstack(cols)
    return X / X.sum(axis=1, keepdims=True)


def test_nonzero_pairs_are_the_exact_support_independent_of_blocking():
    from rkcore.studies.errors import error_study
    X = _movielens_like()
    shared = (X != 0).astype(int) @ (X != 0).astype(int).T
    counts = set()
    for block in (None, 5, 7, 37):
        df = error_study(X, KernelSpec("anova", 3), [("rk", "rademacher")], [8], 1, pairs="nonzero", block_size=block)
        counts.add(int(df["n_pairs"].iloc[0]))
    assert counts == {int(np.count_nonzero(shared >= 3))}
    # the exact kernel is exactly 0 outside the support (no rounding residues left)
    Kx = K.anova_kernel(X, degree=3)
    assert np.array_equal(Kx != 0, shared >= 3)


def test_nonzero_float_is_the_papers_mask_and_named_in_the_table1_cli():
    from rkcore.studies.errors import PAIRS
    from rkcore.cli import build_parser
    assert "nonzero_float" in PAIRS
    assert build_parser().parse_args(["table1", "--data", "x"]).pairs == "nonzero_float"


# ---------------------------------------------------------------------------- item 6
def test_variance_is_never_negative():
    """x with exactly m non-zeros and Rademacher weights: K_A^m(x, w)^2 = prod x_j^2 for every w,
    so the variance is exactly 0; E f^2 - K^2 cancels and rounded to -48 (K^2 ~ 2e16) before."""
    from rkcore.theory.variance import rk_variance, rk_variance_gram, second_moment
    x = np.array([[4.19918831, 96.22613949, 45.8860569]])
    v = rk_variance(x, x, 1, kernel="anova", degree=3, distribution="rademacher")
    assert v[0] >= 0
    assert v[0] <= 1e-14 * second_moment(x, x, kernel="anova", degree=3)[0]  # rounding of E f^2 only
    rng = np.random.default_rng(0)
    for m in (1, 2, 3):
        X = np.zeros((50, 4))
        X[:, :m] = rng.random((50, m)) * 10.0 ** rng.integers(-3, 3, (50, m))
        assert (rk_variance(X, X, 1, kernel="anova", degree=m, distribution="rademacher") >= 0).all()
    x = np.array([[0.3, 0.0, 0.0, 0.0], [0.1, 0.7, 0.0, 0.0]])
    for kernel in ("anova", "up_to", "dot", "all_subsets"):
        for dist in ("rademacher", "gaussian"):
            assert (rk_variance(x, x, 10, kernel=kernel, degree=2, distribution=dist) >= 0).all()
            assert (rk_variance_gram(x, 10, kernel=kernel, degree=2, distribution=dist) >= 0).all()


@pytest.mark.parametrize("eps", [1e-6, 1e-7, 3e-8])
def test_min_components_is_the_smallest_sufficient_D_beyond_1e11(eps):
    import math
    from fractions import Fraction
    from rkcore.theory import bounds as B
    delta, R = 0.05, 1.0
    D = B.min_components_lemma1(eps, delta, R)
    assert D > 1e11
    # D* = 2 e^{4R} log(2/delta) / eps^2 in high precision (mpmath): D = ceil(D*)
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    D_star = 2 * mpmath.e ** (4 * R) * mpmath.log(2 / mpmath.mpf(delta)) / mpmath.mpf(eps) ** 2
    assert D == int(mpmath.ceil(D_star))
    assert math.isfinite(float(Fraction(D)))


# ---------------------------------------------------------------------------- item 7
@pytest.mark.parametrize("make", [
    lambda: KernelSpec("polynomial", degree=-1),
    lambda: KernelSpec("polynomial", degree=2.5, c=-3.0),
    lambda: KernelSpec("polynomial", c=float("nan")),
    lambda: KernelSpec("polynomial", c=-1.0),
    lambda: KernelSpec("anova", degree=True),
    lambda: KernelSpec("rbf", gamma=0.0),
    lambda: make_map("ts", KernelSpec("polynomial", c=-1.0), 8),
    lambda: K.polynomial_kernel(np.ones((2, 2)), degree=-1),
    lambda: K.polynomial_kernel(np.ones((2, 2)), degree=2, c=float("nan")),
])
def test_non_kernels_are_refused(make):
    with pytest.raises(ValueError, match="not allowed"):
        make()


def test_exact_kernel_svc_refuses_a_negative_degree():
    from rkcore.learners import ExactKernelSVC
    with pytest.raises(ValueError, match="not allowed"):
        ExactKernelSVC(spec=KernelSpec("polynomial", degree=-1)).fit(np.eye(4), [0, 1, 0, 1])


def test_complex_and_ragged_input_are_refused_with_clear_messages():
    with pytest.raises(ValueError, match="complex numbers"):
        K.dot_kernel(np.ones((2, 2)) * (1 + 1j))
    with pytest.raises(ValueError, match="ragged"):
        K.dot_kernel([[1.0, 2.0], [3.0]])


@pytest.mark.parametrize("make,match", [
    (lambda: ItemsetFamily.cross_fields([(0.7,), (1.2,)]), "integer feature indices"),
    (lambda: __import__("rkcore.data.datasets", fromlist=["x"]).make_interactions(n_features=2.7), "integer"),
    (lambda: __import__("rkcore.data.datasets", fromlist=["x"]).make_interactions(n_features=True), "integer"),
    (lambda: __import__("rkcore.studies.splits", fromlist=["x"]).split_sizes(100, (float("nan"), 0.1, 0.4)), "split entries"),
    (lambda: __import__("rkcore.teaching.random_projections", fromlist=["x"]).chi2_band(0), "must be >= 1"),
])
def test_non_integers_and_nan_are_refused(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_accuracy_study_refuses_fractional_D():
    from rkcore.studies.accuracy import accuracy_study
    X = np.random.default_rng(0).random((60, 4))
    y = (X[:, 0] > 0.5).astype(int)
    with pytest.raises(ValueError, match="integers >= 1"):
        accuracy_study((X, y), ["rk"], [1.5], 1)


def test_messages_name_the_real_problem():
    from rkcore.teaching.compositional import PRESETS, compositional_error_curve
    from rkcore.studies.errors import error_study
    from rkcore.learners import FactorizationMachineClassifier
    X = np.random.default_rng(0).random((8, 3))
    with pytest.raises(ValueError, match="negative weight"):
        FactorizationMachineClassifier(max_iter=2).fit(X, [0, 1] * 4, sample_weight=[-1.0] + [1.0] * 7)
    with pytest.raises(ValueError, match="string '0.1'"):
        error_study(X, KernelSpec("anova", 2), [("rk", "rademacher")], [4], 1, eps="0.1")
    preset = next(iter(PRESETS.values()))
    skeleton = preset.build(X.shape[1]) if callable(getattr(preset, "build", None)) else preset
    with pytest.raises(ValueError, match="string 'none'"):
        compositional_error_curve(X, skeleton, [4], 1, dedup_modes="none")


def test_empty_pair_set_is_an_error_not_nan():
    from rkcore.studies.errors import error_study
    X = np.eye(4)  # no two rows share a feature
    with pytest.raises(ValueError, match="no pair of rows is selected"):
        error_study(X, KernelSpec("anova", 2), [("rk", "rademacher")], [4], 1, pairs="nonzero")


# ---------------------------------------------------------------------------- item 2 (overflow)
def test_overflow_cases_give_finite_exact_values_or_clear_errors():
    from rkcore.data.datasets import normalize
    from rkcore.learners import AllSubsetsModelClassifier
    assert K.anova_kernel(np.array([[1e100, 1e-100, 2.0, -2.0]]), degree=2)[0, 0] == pytest.approx(8e200, rel=1e-12)
    Z = RandomKernel(4, degree=2, random_state=0).fit_transform(np.array([[1e200, 1.0, 0.5, 0.25]]))
    assert np.isfinite(Z).all()
    rk = RandomKernel(6, kernel="all_subsets", distribution="gaussian", random_state=0).fit(np.ones((1, 4)))
    Z = rk.transform(np.array([[1e154, 1e154, 0.0, 0.0]]))
    W = rk.random_weights_
    assert np.isfinite(Z).all()
    from fractions import Fraction
    x = Fraction(1e154)
    exact = [float((1 + x * Fraction(w[0])) * (1 + x * Fraction(w[1])) / 10**300) for w in W]
    np.testing.assert_allclose(Z[0] / 1e300, np.array(exact) / np.sqrt(6), rtol=1e-12)
    np.testing.assert_allclose(normalize(np.array([[1e308, 1e308, 1.0]]))[0, :2], [0.5, 0.5])
    model = AllSubsetsModelClassifier(n_components=3, max_iter=3, random_state=0)
    X = np.random.default_rng(0).random((10, 3))
    model.fit(X, [0, 1] * 5)
    with pytest.raises(ValueError, match="overflows float64"):
        model.decision_function(np.array([[1e300, 1e300, 1e300]]))
