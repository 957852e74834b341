"""Accuracy contract (rkcore.kernels.exact module docstring), property-based against exact rationals.

Every exact kernel value, RK / SCRK feature and FM forward value must be within
1e-12 * sum_V |prod_{j in V} z_j| of the exact value (z = x * y, or x * w), and never NaN or
inf where the exact value is a finite float64. Inputs are adversarial: magnitudes spread
over 20 orders, exact zeros and +-1, whole rows scaled by 1e+-100 or 1e150.

Set RKCORE_NUMERICS_REPORT=path.json to write the worst relative error seen per kernel/map.
"""
from __future__ import annotations

import atexit
import json
import os
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rkcore.maps.circulant import SignedCirculantRandomKernel
from rkcore.kernels.itemsets import ItemsetFamily
from rkcore.kernels.exact import CONTRACT_RTOL, itemset_kernel
from rkcore.maps.random_kernel import RandomKernel
from rkcore.learners import FactorizationMachineClassifier
from tests.kernels.numerics_oracle import elementary_exact, family_value, fr

FLOAT_MAX = Fraction(np.finfo(np.float64).max)
TINY = Fraction(2) ** -1000
WORST: dict[str, float] = {}

PROPERTY = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@atexit.register
def _write_report():  # pragma: no cover - only with the environment variable
    path = os.environ.get("RKCORE_NUMERICS_REPORT")
    if path and WORST:
        with open(path, "w") as fh:
            json.dump(WORST, fh, indent=1, sort_keys=True)


def check_value(label: str, computed: float, exact: Fraction, scale: Fraction) -> None:
    """The contract for one value; records the worst |error| / scale under ``label``."""
    if abs(exact) > FLOAT_MAX / 2:  # the exact value (nearly) overflows: inf of the right sign is exact enough
        assert np.isinf(computed) or abs(fr(computed) - exact) <= Fraction(CONTRACT_RTOL) * scale, (label, computed)
        if np.isinf(computed):
            assert (computed > 0) == (exact > 0), (label, computed, float(exact))
        return
    assert np.isfinite(computed), f"{label}: {computed} where the exact value is {float(exact)!r}"
    diff = abs(fr(computed) - exact)
    rel = 0.0 if diff == 0 else (float(diff / scale) if scale else float("inf"))
    WORST[label] = max(WORST.get(label, 0.0), rel if diff > TINY else 0.0)
    assert diff <= Fraction(CONTRACT_RTOL) * scale + TINY, (
        f"{label}: computed {computed!r}, exact {float(exact)!r}, error/scale {rel:.3g}")


# ---------------------------------------------------------------------------- strategies
def _entry():
    magnitude = st.builds(lambda s, mant, k: s * mant * 10.0**k, st.sampled_from([-1.0, 1.0]),
                          st.floats(1.0, 9.99), st.integers(-10, 10))
    return st.one_of(st.just(0.0), st.just(1.0), st.just(-1.0), magnitude)


@st.composite
def matrices(draw, n_rows, d):
    rows = []
    for _ in range(n_rows):
        row = np.array([draw(_entry()) for _ in range(d)])
        row *= draw(st.sampled_from([1.0, 1.0, 1.0, 1e-100, 1e100, 1e150]))
        rows.append(row)
    return np.array(rows)


@st.composite
def families(draw, d):
    kind = draw(st.sampled_from(["anova", "up_to", "dot", "all_subsets", "custom", "cross_fields"]))
    if kind == "anova":
        return ItemsetFamily.anova(d, draw(st.integers(1, d)))
    if kind == "up_to":
        return ItemsetFamily.up_to(d, draw(st.integers(0, d)))
    if kind == "dot":
        return ItemsetFamily.dot(d)
    if kind == "all_subsets":
        return ItemsetFamily.all_subsets(d)
    if kind == "cross_fields" and d >= 2:
        labels = draw(st.lists(st.integers(0, d - 1), min_size=d, max_size=d))
        groups = [tuple(j for j in range(d) if labels[j] == g) for g in sorted(set(labels))]
        if len(groups) >= 2:
            return ItemsetFamily.cross_fields(groups, draw(st.integers(2, len(groups))), d=d)
    subsets = draw(st.lists(st.lists(st.integers(0, d - 1), unique=True, max_size=d), min_size=1, max_size=6))
    unique = sorted({tuple(sorted(v)) for v in subsets})
    return ItemsetFamily.custom(d, unique)


@st.composite
def kernel_cases(draw):
    d = draw(st.integers(1, 6))
    return draw(matrices(2, d)), draw(matrices(2, d)), draw(families(d))


# ---------------------------------------------------------------------------- exact kernels
@PROPERTY
@given(kernel_cases())
def test_exact_kernels_meet_the_contract(case):
    X, Y, family = case
    K = itemset_kernel(X, Y, family=family)
    for i in range(X.shape[0]):
        for j in range(Y.shape[0]):
            exact, scale = family_value(X[i], Y[j], family)
            check_value(f"kernel {family.kind}", K[i, j], exact, scale)


@pytest.mark.parametrize("d,m", [(12, 12), (12, 11), (8, 7)])
def test_anova_near_full_order_on_normal_rows(d, m):
    rng = np.random.default_rng(d + m)
    X, Y = rng.standard_normal((6, d)), rng.standard_normal((5, d))
    family = ItemsetFamily.anova(d, m)
    K = itemset_kernel(X, Y, family=family)
    for i in range(6):
        for j in range(5):
            exact, scale = family_value(X[i], Y[j], family)
            check_value("kernel anova (m ~ d, N(0,1))", K[i, j], exact, scale)


# ---------------------------------------------------------------------------- RK map
@st.composite
def map_cases(draw):
    d = draw(st.integers(1, 6))
    kind = draw(st.sampled_from(["anova", "up_to", "dot", "all_subsets", "itemset"]))
    degree = draw(st.integers(1, d))
    family = draw(families(d)) if kind == "itemset" else None
    dist = draw(st.sampled_from(["rademacher", "gaussian", "uniform", "laplace"]))
    D = draw(st.sampled_from([1, 4, 9]))  # perfect squares: 1/sqrt(D) is rational
    return draw(matrices(3, d)), kind, degree, family, dist, D, draw(st.integers(0, 2**16))


@PROPERTY
@given(map_cases())
def test_rk_features_meet_the_contract(case):
    X, kind, degree, family, dist, D, seed = case
    rk = RandomKernel(D, kernel=kind, degree=degree, itemsets=family, distribution=dist, random_state=seed).fit(X)
    with np.errstate(over="ignore"):
        Z = rk.transform(X)
    root = Fraction(int(round(np.sqrt(D))))
    for i in range(X.shape[0]):
        for s in range(D):
            exact, scale = family_value(X[i], rk.random_weights_[s], rk.family_)
            check_value(f"RK {rk.family_.kind} ({dist})", Z[i, s], exact / root, scale / root)


@PROPERTY
@given(st.integers(1, 6).flatmap(lambda d: st.tuples(matrices(3, d), st.integers(1, d),
                                                      st.sampled_from([1, 4, 9, 16]), st.integers(0, 2**16))))
def test_scrk_features_meet_the_contract(case):
    X, m, D, seed = case
    scrk = SignedCirculantRandomKernel(D, degree=m, random_state=seed).fit(X)
    with np.errstate(over="ignore"):
        Z = scrk.transform(X)
    omega = scrk.projection_matrix()
    root = Fraction(int(round(np.sqrt(D))))
    for i in range(X.shape[0]):
        for s in range(D):
            exact, scale = family_value(X[i], omega[s], ItemsetFamily.anova(X.shape[1], m))
            check_value("SCRK anova", Z[i, s], exact / root, scale / root)


# ---------------------------------------------------------------------------- FM forward pass
@PROPERTY
@given(st.integers(2, 6).flatmap(lambda d: st.tuples(matrices(3, d), matrices(3, d), st.integers(2, d))))
def test_fm_forward_meets_the_contract(case):
    X, P, m = case
    fm = FactorizationMachineClassifier(degree=m, n_components=P.shape[0])
    fm.lambdas_ = np.ones(P.shape[0])
    with np.errstate(over="ignore"):
        _, e = fm._forward(0.0, None, P, fm._prepare(X))
    for i in range(X.shape[0]):
        for s in range(P.shape[0]):
            z = [fr(a) * fr(b) for a, b in zip(X[i], P[s])]
            exact = elementary_exact(z, m)[m]
            scale = elementary_exact([abs(v) for v in z], m)[m]
            check_value("FM forward e_m", e[m][i, s], exact, scale)


# ---------------------------------------------------------------------------- the issue's cases
def test_issue_repro_cases_are_exact():
    from rkcore.kernels.exact import anova_kernel
    assert anova_kernel(np.array([[1e5, 1e-5, 0.0, 0.0]]), degree=2)[0, 0] == pytest.approx(1.0, rel=1e-12)
    assert anova_kernel(np.array([[1e12, 1e-6, 1e-6]]), np.ones((1, 3)), degree=2)[0, 0] == pytest.approx(2e6, rel=1e-12)
    assert anova_kernel(np.array([[1e100, 1e-100, 2.0, -2.0]]), degree=2)[0, 0] == pytest.approx(8e200, rel=1e-12)
    Z = RandomKernel(4, degree=2, random_state=0).fit_transform(np.array([[1e200, 1.0, 0.5, 0.25]]))
    assert np.isfinite(Z).all()


def test_timestamp_column_next_to_unit_features():
    """The issue's CSV: a timestamp column beside features in [0, 1], L1-normalized rows."""
    from rkcore.data.datasets import normalize
    from rkcore.kernels.exact import anova_kernel
    rng = np.random.default_rng(0)
    X = np.column_stack([1.6e9 + rng.integers(0, 10**7, 50), rng.random((50, 5))])
    X = normalize(X, "l1")
    for m in (2, 3):
        K = anova_kernel(X, degree=m)
        assert (K > 0).all()  # every entry is a sum of positive products
        for i, j in [(0, 1), (3, 7), (10, 10)]:
            exact, scale = family_value(X[i], X[j], ItemsetFamily.anova(6, m))
            check_value(f"kernel anova-{m} (timestamp column)", K[i, j], exact, scale)


# ---------------------------------------------------------------------------- fast paths (issue 16)
# rkcore.kernels.fastpaths serves ANOVA-2/3 and all-subsets RK maps (dense and CSR) and the exact
# all-subsets Gram; the a-posteriori check and the log-space repair must cover them too.
def _wide_entry():
    """Entries over 600 orders of magnitude: products overflow or underflow on the way."""
    magnitude = st.builds(lambda s, mant, k: s * mant * 10.0**k, st.sampled_from([-1.0, 1.0]),
                          st.floats(1.0, 9.99), st.integers(-300, 300))
    return st.one_of(st.just(0.0), st.just(1.0), st.just(-1.0), magnitude)


@st.composite
def sparse_matrices(draw, n_rows, d, wide=False):
    """Mostly-zero rows (CSR's case) with adversarial non-zeros."""
    X = draw(matrices(n_rows, d))
    if wide:
        X = np.array([[draw(_wide_entry()) for _ in range(d)] for _ in range(n_rows)])
    keep = np.array(draw(st.lists(st.booleans(), min_size=n_rows * d, max_size=n_rows * d))).reshape(n_rows, d)
    return np.where(keep, X, 0.0)


@st.composite
def fast_map_cases(draw):
    d = draw(st.integers(2, 9))
    kind, degree = draw(st.sampled_from([("anova", 2), ("anova", 3), ("all_subsets", 1)]))
    if degree > d:
        degree = d
    wide = kind == "all_subsets" and draw(st.booleans())
    X = draw(sparse_matrices(4, d, wide))
    dist = draw(st.sampled_from(["rademacher", "gaussian", "laplace"]))
    return X, kind, degree, dist, draw(st.sampled_from([1, 4, 9])), draw(st.integers(0, 2**16))


@PROPERTY
@given(fast_map_cases())
def test_rk_fast_paths_meet_the_contract_dense_and_csr(case):
    import scipy.sparse as sp

    X, kind, degree, dist, D, seed = case
    rk = RandomKernel(D, kernel=kind, degree=degree, distribution=dist, random_state=seed).fit(X)
    root = Fraction(int(round(np.sqrt(D))))
    for Xin, label in ((X, "dense"), (sp.csr_matrix(X), "CSR")):
        Z = rk.transform(Xin)
        for i in range(X.shape[0]):
            for s in range(D):
                exact, scale = family_value(X[i], rk.random_weights_[s], rk.family_)
                check_value(f"RK fast {kind}-{degree} {label} ({dist})", Z[i, s], exact / root, scale / root)


@PROPERTY
@given(st.integers(1, 9).flatmap(lambda d: st.tuples(sparse_matrices(3, d, True), sparse_matrices(3, d, True),
                                                      st.booleans(), st.booleans())))
def test_all_subsets_gram_meets_the_contract_with_huge_and_tiny_entries(case):
    """Non-negative columns go through grouped GEMMs of subset products (which overflow for
    huge x against tiny y), mixed ones through direct products: finite wherever the exact is."""
    import scipy.sparse as sp

    from rkcore.kernels.exact import all_subsets_kernel

    X, Y, nonnegative, sparse = case
    if nonnegative:
        X, Y = np.abs(X), np.abs(Y)
    K = all_subsets_kernel(sp.csr_matrix(X) if sparse else X, sp.csr_matrix(Y) if sparse else Y)
    family = ItemsetFamily.all_subsets(X.shape[1])
    for i in range(X.shape[0]):
        for j in range(Y.shape[0]):
            exact, scale = family_value(X[i], Y[j], family)
            check_value("kernel all_subsets (Gram fast path)", K[i, j], exact, scale)


@pytest.mark.parametrize("kind,degree", [("anova", 2), ("anova", 3), ("all_subsets", 1)])
@pytest.mark.parametrize("dist", ["rademacher", "gaussian"])
def test_fast_path_cancellation_and_overflow_cases(kind, degree, dist):
    """The issue's worst cases through the fast blocks: one dominant |x_j| (Newton's identities
    cancel), a row whose power sums overflow, CSR rows of 1e200 next to 1e-200."""
    import scipy.sparse as sp

    X = np.array([[1e5, 1e-5, 0.0, 0.0, 0.0, 0.0], [1e200, 1.0, 0.5, 0.25, 0.0, 0.0],
                  [1e100, 1e-100, 2.0, -2.0, 0.0, 0.0], [1e200, 1e200, 1e-200, 1e-200, 0.0, 3.0]])
    rk = RandomKernel(9, kernel=kind, degree=degree, distribution=dist, random_state=3).fit(X)
    for Xin in (X, sp.csr_matrix(X)):
        Z = rk.transform(Xin)
        for i in range(X.shape[0]):
            for s in range(9):
                exact, scale = family_value(X[i], rk.random_weights_[s], rk.family_)
                check_value(f"RK fast {kind} repro ({dist})", Z[i, s], exact / 3, scale / 3)


@pytest.mark.parametrize("kind,degree", [("anova", 3), ("all_subsets", 1)])
def test_float32_input_of_float64_families_is_the_float64_result_rounded(kind, degree):
    """Families that are not float32-safe compute in float64 and only store float32."""
    rng = np.random.RandomState(0)
    X = (rng.rand(300, 12) * (rng.rand(300, 12) < 0.4)).astype(np.float32)
    rk = RandomKernel(64, kernel=kind, degree=degree, distribution="gaussian", random_state=0).fit(X)
    Z32 = rk.transform(X)
    assert Z32.dtype == np.float32
    # At most one float32 ulp apart, not bit for bit: the float64 results may round differently when
    # the two calls' row blocks differ in shape and the BLAS kernel sums in another order (another CPU).
    np.testing.assert_array_max_ulp(Z32, rk.transform(X.astype(np.float64)).astype(np.float32), maxulp=1)


@pytest.mark.parametrize("sparse", [False, True])
def test_all_subsets_product_path_overflow_before_the_scale(sparse):
    """prod_j (1 + x_j w_j) beyond float64 while the feature, divided by sqrt(D) = 3, is finite:
    the product over non-zeros overflows on the way and the log-space repair must run."""
    import scipy.sparse as sp

    X = np.array([[1e154, 1e154, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    rk = RandomKernel(9, kernel="all_subsets", distribution="gaussian", random_state=0).fit(X)
    W = rk.random_weights_
    X[1, :2] = [1e154 / W[0, 0], 2.5e154 / W[0, 1]]  # feature 0 of row 1: about 2.5e308 / 3
    Z = rk.transform(sp.csr_matrix(X) if sparse else X)
    assert np.isfinite(Z[1, 0])
    for i in range(2):
        for s in range(9):
            exact, scale = family_value(X[i], W[s], rk.family_)
            check_value("RK fast all_subsets overflow before 1/sqrt(D)", Z[i, s], exact / 3, scale / 3)
