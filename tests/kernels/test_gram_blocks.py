"""The fused exact Grams (kernels.anova_gram, fastpaths.all_subsets_gram) branch by branch.

Block and sub-block sizes are shrunk so that a handful of rows crosses several row blocks
(GEMMs), sub-blocks (fused check passes) and, for K(X, X), the upper-triangle mirror. Each
branch (non-negative data: no GEMM of |x|; many zeros: shared-non-zero counts; the Pa_3 test;
the summed up-to check) is checked against exact rationals under the accuracy contract.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rkcore.kernels import anova_gram as AG
from rkcore.kernels import blas_blocks as FP
from rkcore.kernels import witnesses as GW
from rkcore.kernels import numerics as KN
from rkcore.kernels import exact as K
from rkcore.kernels.itemsets import ItemsetFamily
from tests.kernels.numerics_oracle import elementary_exact, family_value, fr
from tests.kernels.test_numerics_contract import check_value, matrices


def assert_gram_exact(label: str, G, X, Y, family=None) -> None:
    """Every entry of the Gram G of X and Y (the all-subsets kernel unless ``family`` is given)
    within the contract, against exact rationals."""
    family = family or ItemsetFamily.all_subsets(X.shape[1])
    for i in range(X.shape[0]):
        for k in range(Y.shape[0]):
            exact, scale = family_value(X[i], Y[k], family)
            check_value(label, G[i, k], exact, scale)


PROPERTY = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Row blocks of 2 rows, fused sub-blocks of 1 row."""
    monkeypatch.setattr(AG, "GRAM_SCRATCH_BYTES", 1)
    monkeypatch.setattr(AG, "GRAM_MIN_ROWS", 2)
    monkeypatch.setattr(AG, "FUSED_BYTES", 1)


@st.composite
def gram_cases(draw):
    d = draw(st.integers(2, 6))
    X = draw(matrices(5, d))
    Y = draw(matrices(4, d))
    zeros = draw(st.sampled_from(["none", "most", "some"]))
    if zeros != "none":  # the shared-non-zero count branch (more than 25 % zeros)
        p = 0.7 if zeros == "most" else 0.3
        rng = np.random.default_rng(draw(st.integers(0, 2**16)))
        X = np.where(rng.random(X.shape) < p, 0.0, X)
        Y = np.where(rng.random(Y.shape) < p, 0.0, Y)
    sign = draw(st.sampled_from(["signed", "nonnegative", "x nonnegative only"]))
    if sign != "signed":
        X = np.abs(X)
    if sign == "nonnegative":
        Y = np.abs(Y)
    return X, Y, draw(st.booleans()), draw(st.booleans()), draw(st.sampled_from(["anova", "up_to"]))


@PROPERTY
@given(gram_cases())
def test_fused_grams_meet_the_contract_across_blocks(tiny_blocks, case):
    X, Y, symmetric, sparse, kind = case
    d = X.shape[1]
    if symmetric:
        Y = X
    fn = K.anova_kernel if kind == "anova" else K.up_to_kernel
    for m in ((2, 3) if kind == "anova" else (1, 2, 3)):
        if m > d:
            continue
        Xin = sp.csr_matrix(X) if sparse else X
        G = fn(Xin, None if symmetric else (sp.csr_matrix(Y) if sparse else Y), degree=m)
        family = ItemsetFamily.anova(d, m) if kind == "anova" else ItemsetFamily.up_to(d, m)
        for i in range(X.shape[0]):
            for k in range(Y.shape[0]):
                exact, scale = family_value(X[i], Y[k], family)
                check_value(f"fused Gram {kind}-{m}", G[i, k], exact, scale)
        if symmetric:
            assert np.array_equal(G, G.T, equal_nan=True)


def test_fused_gram_one_dominant_entry_nonnegative_x_signed_y(tiny_blocks):
    """X >= 0 but Y signed: the |z| power sums need their own GEMM (the non-negative
    shortcut would take P1 = sum z_j, which cancels here, as sum |z_j|)."""
    # row 4 against column 4: z ~ (7.4e7, -7.4e7, 1.8, -1.8), so sum z_j ~ 1 while sum |z_j| ~ 1.5e8,
    # and P_3 / P_1 is huge: taken for A (the non-negative shortcut applied wrongly), the signed
    # sums pass the Pa_3 test and Newton's value is off by 3.5e-10 x the contract scale
    X = np.array([[1e8, 1.0, 1.0, 0.0], [1.0, 2.0, 3.0, 4.0], [1e8, 1e-8, 1.0, 1.0],
                  [74137974.13114646, 85409919.68039428, 1.0811639728420739, 1.776096243642394]])
    Y = np.array([[1.0, -1e8, 1e8, 1.0], [-1.0, 1.0, -1.0, 1.0], [1e-8, -1e8, 1.0, -1.0],
                  [1.0, -0.8680253346438211, 1.7037298776771694, -1.037491131924698]])
    for m in (2, 3):
        assert_gram_exact("fused Gram x>=0, y signed", K.anova_kernel(X, Y, degree=m), X, Y, ItemsetFamily.anova(4, m))


def test_shared_count_zeroes_pairs_with_too_few_common_non_zeros(tiny_blocks):
    """One-hot-like rows: pairs sharing fewer than m non-zeros are exactly 0.0, the rest exact."""
    rng = np.random.default_rng(5)
    X = np.zeros((9, 12))
    for i in range(9):
        X[i, rng.choice(12, 4, replace=False)] = rng.uniform(0.1, 1.0, 4) / 3.0
    for m in (2, 3):
        G = K.anova_kernel(X, degree=m)
        shared = (X != 0).astype(int) @ (X != 0).astype(int).T
        assert np.all(G[shared < m] == 0.0)
        for i in range(9):
            for k in range(9):
                exact = elementary_exact([fr(a) * fr(b) for a, b in zip(X[i], X[k])], m)[m]
                assert abs(fr(G[i, k]) - exact) <= Fraction(1e-12) * abs(exact)


@pytest.mark.parametrize("degree", [2, 3])
def test_closed_form_check_implies_the_general_bound(degree):
    """closed_form_check_constants' test (what newton_is_safe and anova_gram use for orders 2, 3)
    never vouches where the general test 2 eps (1 + tol) <= tol (S - eps) fails, eps from
    newton_error_bounds and S = e_m(|z|) exact; gamma up to where the test can no longer pass."""
    rng = np.random.default_rng(degree)
    tol = K.CONTRACT_RTOL
    checked = vouched = 0
    for gamma in (1e-16, 1e-15, 1e-14, 2.5e-14, 3.2e-14, 6e-14):
        for trial in range(150):
            d = int(rng.integers(degree, 40))
            z = rng.standard_normal(d) * 10.0 ** rng.uniform(-3, 3, d) * (rng.random(d) < 0.8)
            a = [abs(fr(v)) for v in z]
            Pa = [None] + [sum(v ** t for v in a) for t in range(1, degree + 1)]
            Pa_f = [None] + [np.array([float(p)]) for p in Pa[1:]]
            ok = bool(K.newton_is_safe(Pa_f, degree, gamma)[0])
            eps = KN.newton_error_bounds([None] + [float(p) for p in Pa[1:]], degree, gamma)[degree]
            S = elementary_exact(a, degree)[degree]
            general = 2 * Fraction(eps) * (1 + Fraction(tol)) <= Fraction(tol) * (S - Fraction(eps))
            checked += 1
            vouched += ok
            assert not ok or general, (gamma, z.tolist())
    assert vouched > checked // 4  # the test is not vacuous


def test_anova_order_three_is_vouched_for_at_d_512():
    """N(0,1) rows at d = 512: the probabilistic gamma is 2.5e-14; the sharper closed form
    still vouches (before, every entry went to the stable recursion: minutes, not ms)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 512))
    gamma = float(K.rounding_gamma(512 + 6))
    P = K.power_sums(np.abs(X), np.abs(X), 3)
    assert K.newton_is_safe([None, P[1], P[2], P[3]], 3, gamma).all()


@st.composite
def all_subsets_cases(draw):
    d = draw(st.integers(1, 7))
    X, Y = draw(matrices(5, d)), draw(matrices(4, d))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = np.where(rng.random(X.shape) < 0.5, 0.0, X)
    Y = np.where(rng.random(Y.shape) < 0.5, 0.0, Y)
    return X, Y, draw(st.booleans()), draw(st.booleans())


@PROPERTY
@given(all_subsets_cases())
def test_sparse_all_subsets_gram_meets_the_contract_across_blocks_and_chunks(monkeypatch, case):
    """fastpaths._sparse_products forced (any density), with row blocks of 2 rows and chunks of
    3 triples, so (i, k) pairs get their factors from several chunks and blocks start mid-way."""
    from rkcore.kernels import all_subsets_gram as F

    monkeypatch.setattr(F, "SPARSE_GRAM_RATIO", 0)
    monkeypatch.setattr(F, "SPARSE_GRAM_CHUNK", 3)
    monkeypatch.setattr(F, "GRAM_BLOCK_BYTES", 2 * 8 * 4)
    monkeypatch.setattr(F, "LEVEL_TABLE_SIZE", 0)  # not the level table
    X, Y, sparse_x, sparse_y = case
    G = K.all_subsets_kernel(sp.csr_matrix(X) if sparse_x else X, sp.csr_matrix(Y) if sparse_y else Y)
    assert_gram_exact("kernel all_subsets (sparse Gram)", G, X, Y)


def test_sparse_all_subsets_is_chosen_for_sparse_rows_only():
    from rkcore.kernels import all_subsets_gram as F

    rng = np.random.default_rng(0)
    onehot = np.zeros((50, 40))
    onehot[np.arange(50), rng.integers(0, 40, 50)] = 1.0
    assert F._sparse_if_cheaper(onehot, onehot)[0] is not None
    assert F._sparse_if_cheaper(sp.csr_matrix(onehot), onehot)[0] is not None
    dense = rng.standard_normal((50, 40))
    assert F._sparse_if_cheaper(dense, dense)[0] is None
    np.testing.assert_allclose(K.all_subsets_kernel(sp.csr_matrix(onehot)), K.all_subsets_kernel(onehot), rtol=1e-15)


# ---------------------------------------------------------------------------- proven shortcuts
@st.composite
def level_rows(draw):
    """Rows whose non-zeros share one value per row (one-hot / binary rows scaled per row), with
    levels of either sign spread over 40 orders, empty rows, and sometimes one row broken."""
    d = draw(st.integers(3, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))

    def rows(n):
        mask = rng.random((n, d)) < draw(st.sampled_from([0.3, 0.6, 1.0]))
        level = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-20, 20, n)
        return np.where(mask, level[:, None], 0.0)

    return rows(5), rows(4), draw(st.booleans()), draw(st.booleans())


@PROPERTY
@given(level_rows())
def test_level_rows_gram_is_exact_to_a_few_ulps(tiny_blocks, case):
    X, Y, symmetric, sparse = case
    if symmetric:
        Y = X
    assert FP.row_levels(X) is not None and FP.row_levels(Y) is not None
    for m in (2, 3):
        Xin, Yin = (sp.csr_matrix(X), sp.csr_matrix(Y)) if sparse else (X, Y)
        G = K.anova_kernel(Xin, None if symmetric else Yin, degree=m)
        for i in range(X.shape[0]):
            for k in range(Y.shape[0]):
                exact = elementary_exact([fr(a) * fr(b) for a, b in zip(X[i], Y[k])], m)[m]
                # the level path's own bound: (2 m + 3) u relative to the value
                assert abs(fr(G[i, k]) - exact) <= Fraction(2 * m + 3, 2**53) * abs(exact), (m, i, k)
                if exact == 0:
                    assert not np.signbit(G[i, k])  # +0.0, never -0.0


def test_level_rows_detection_and_range_guard():
    onehot = np.eye(4)[[0, 1, 1, 3]] * np.array([[0.5], [2.0], [-3.0], [1.0]])
    assert FP.row_levels(onehot).tolist() == [0.5, 2.0, -3.0, 1.0]
    assert FP.row_levels(sp.csr_matrix(onehot)).tolist() == [0.5, 2.0, -3.0, 1.0]
    assert FP.row_levels(np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])).tolist() == [1.0, 0.0]
    assert FP.row_levels(np.array([[1.0, 2.0, 0.0]])) is None
    assert FP.row_levels(np.array([[1.0, -1.0, 0.0]])) is None  # z_j of both signs: not a level
    # levels whose powers leave float64's range take the checked path, still exact
    X = np.array([[1e200, 1e200, 1e200, 0.0], [1e-200, 1e-200, 0.0, 1e-200]])
    assert not AG._levels_in_range(FP.row_levels(X), FP.row_levels(X), 4, 2)
    G = K.anova_kernel(X, degree=2)
    assert G[0, 0] == np.inf  # exact 3e800: beyond float64
    assert G[1, 1] == 0.0  # exact 3e-800: below the underflow threshold
    assert G[0, 1] == pytest.approx(1.0)  # two shared non-zeros of 1e200 x 1e-200


def test_cauchy_schwarz_witness_implies_the_first_closed_form_test():
    """Where the float32 witness V = |X| |Y|^T - s t^T is >= 0, the reference test (float64
    GEMMs, Pa_2 <= fl(c fl(A^2))) passes: rows with heavy tails, rows scaled over 30 orders,
    near-orthogonal rows; also the witness must not be vacuous."""
    rng = np.random.default_rng(1)
    vouched = total = 0
    for trial in range(30):
        d = int(rng.integers(4, 120))
        X = rng.standard_t(2, (40, d)) * 10.0 ** rng.uniform(-60, 60, (40, 1))
        Y = rng.standard_normal((30, d)) * 10.0 ** rng.uniform(-60, 60, (30, 1))
        Y[:5, : d // 2] = 0.0  # partly disjoint supports
        for m in (2, 3):
            gamma = float(K.rounding_gamma(d + 2 * m))
            c = float(K.closed_form_check_constants(m, gamma)[0])
            w = GW._cauchy_schwarz_witness(X, Y, c)
            assert w is not None
            V = FP.gemm_into(1.0, w[0], w[1], 0.0, np.empty((40, 30), dtype=np.float32))
            A = np.abs(X) @ np.abs(Y).T
            P2 = (X * X) @ (Y * Y).T
            bound = A * A
            bound *= c
            assert np.all(P2[V >= 0] <= bound[V >= 0])
            vouched += int((V >= 0).sum())
            total += V.size
    assert vouched > total // 2


def test_witness_is_refused_for_rows_spanning_more_than_2_to_the_60():
    assert GW._cauchy_schwarz_witness(np.array([[1e15, 1.0], [1.0, 2.0]]), np.ones((1, 2)), 0.9) is not None
    assert GW._cauchy_schwarz_witness(np.array([[1e-300, 1e-299]]), np.ones((1, 2)), 0.9) is not None
    assert GW._cauchy_schwarz_witness(np.array([[1e30, 1e-30]]), np.ones((1, 2)), 0.9) is None


def test_count_threshold_implies_the_first_closed_form_test():
    """Non-negative rows with spread rho: pairs sharing at least _count_threshold non-zeros pass
    the reference test (float64 GEMMs)."""
    rng = np.random.default_rng(2)
    for trial in range(40):
        d = int(rng.integers(6, 60))
        spread = 10.0 ** rng.uniform(0, 0.3)
        X = np.where(rng.random((50, d)) < 0.3, rng.uniform(1.0, spread, (50, d)), 0.0) * 10.0 ** rng.uniform(-5, 5, (50, 1))
        Y = np.where(rng.random((40, d)) < 0.3, rng.uniform(1.0, spread, (40, d)), 0.0)
        for m in (2, 3):
            gamma = float(K.rounding_gamma(d + 2 * m))
            c = float(K.closed_form_check_constants(m, gamma)[0])
            k = GW._count_threshold(X, Y, m, c)
            if k is None:
                continue
            count = (X != 0).astype(float) @ (Y != 0).astype(float).T
            A = X @ Y.T
            P2 = (X * X) @ (Y * Y).T
            bound = A * A
            bound *= c
            sel = count >= k
            assert np.all(P2[sel] <= bound[sel]), (trial, m, k)


def test_witness_failures_are_checked_pair_by_pair(monkeypatch):
    """Dense signed rows where the witness fails on some entries (one large coordinate): the
    gathered closed-form tests and the stable recursion give contract values everywhere."""
    monkeypatch.setattr(AG, "FUSED_BYTES", 8 * 8)
    monkeypatch.setattr(GW, "WITNESS_MAX_FAIL", 1.0)  # keep the witness in use
    rng = np.random.default_rng(3)
    X = rng.standard_normal((12, 10))
    X[::3, 0] *= 50.0  # a dominant |z_j| for some pairs: witness fails there, then the tests decide
    for m in (2, 3):
        G = K.anova_kernel(X, X[::-1].copy(), degree=m)
        family = ItemsetFamily.anova(10, m)
        for i in range(12):
            for k in range(12):
                exact, scale = family_value(X[i], X[::-1][k], family)
                check_value("fused Gram witness", G[i, k], exact, scale)


@PROPERTY
@given(level_rows())
def test_level_rows_all_subsets_gram_meets_the_contract(monkeypatch, case):
    """fastpaths._level_products (one GEMM of the patterns, a table of (1 + a b)^c) on rows with
    one non-zero value each, of either sign and over 40 orders (overflowing entries go to the
    log-space repair), across row blocks of 2 rows."""
    from rkcore.kernels import all_subsets_gram as F

    monkeypatch.setattr(F, "GRAM_BLOCK_BYTES", 2 * 4 * 4)
    X, Y, symmetric, sparse = case
    if symmetric:
        Y = X
    G = K.all_subsets_kernel(sp.csr_matrix(X) if sparse else X, None if symmetric else (sp.csr_matrix(Y) if sparse else Y))
    assert_gram_exact("kernel all_subsets (level table)", G, X, Y)


def test_level_all_subsets_is_used_for_level_rows_only(monkeypatch):
    from rkcore.kernels import all_subsets_gram as F

    onehot = np.eye(6)[np.arange(20) % 6] * (1.0 + np.arange(20) % 3)[:, None]
    out = np.empty((20, 20))
    assert F._level_products(onehot, onehot, out)
    np.testing.assert_allclose(out, K.product_one_plus(np.repeat(onehot, 20, 0), np.tile(onehot, (20, 1))).reshape(20, 20),
                               rtol=1e-15)
    assert not F._level_products(onehot + np.eye(6)[np.arange(20) % 6][:, ::-1] * 0.5, onehot, out)
    monkeypatch.setattr(F, "LEVEL_TABLE_SIZE", 4)
    assert not F._level_products(onehot, onehot, out)


@pytest.mark.parametrize("path", ["level table", "grouped", "sparse"])
def test_all_subsets_gram_meets_the_contract_on_thousands_of_shared_non_zeros(monkeypatch, path):
    """Rows sharing 4,097 small non-zeros: every factor 1 + x y rounds the same way, so float64
    products drift by ~c u (the grouped path reached 1.08e-12 here, above the 1e-12 contract);
    beyond the bound each path hands over to extended precision. Against exact rationals."""
    from rkcore.kernels import all_subsets_gram as F

    if path != "level table":
        monkeypatch.setattr(F, "LEVEL_TABLE_SIZE", 0)
    c = 4097
    X = np.full((2, c), 1e-4)
    X[1] *= 3.0
    if path == "level table":
        X[1, -1] = 0.0  # still one level per row; one pair shares 4,096
    G = K.all_subsets_kernel(sp.csr_matrix(X) if path == "sparse" else X)
    for i in range(2):
        for k in range(2):
            shared = c - (1 if (i == 1 or k == 1) and path == "level table" else 0)
            exact = (1 + fr(X[i, 0]) * fr(X[k, 0])) ** shared
            assert abs(Fraction(G[i, k]) - exact) <= Fraction(1, 10**12) * exact, (path, i, k)


@pytest.mark.parametrize("d", [1, 5, 1564, 1565, 3000])
def test_grouped_gram_within_contract_names_the_path_the_gram_takes(monkeypatch, d):
    """The public accessor the run estimates read (rkcore.studies.costs prices the extended path's
    column-by-column products beyond it) says exactly when the dense grouped-GEMM path hands over to
    extended precision: dense non-negative rows (no level rows, no sparsity) over d columns."""
    from rkcore.kernels import all_subsets_gram as F

    extended = []
    real = F._extended_products
    monkeypatch.setattr(F, "_extended_products", lambda X, Y, out: extended.append(X.shape) or real(X, Y, out))
    X = np.random.default_rng(d).uniform(0.1, 1.0, (3, d)) / d
    F.all_subsets_gram(X, X, np.empty((3, 3)))
    assert bool(extended) == (not F.grouped_gram_within_contract(d)), (d, extended)
    assert F.grouped_gram_within_contract(d, np.float32)


@PROPERTY
@given(all_subsets_cases())
def test_extended_all_subsets_products_meet_the_contract(monkeypatch, case):
    """The extended-precision path itself, forced on the property cases (adversarial magnitudes,
    mixed signs, zeros, overflow to inf), dense and CSR."""
    from rkcore.kernels import all_subsets_gram as F

    monkeypatch.setattr(F, "GRAM_BLOCK_BYTES", 2 * 16 * 5)  # several row blocks and column chunks
    X, Y, sparse_x, sparse_y = case
    out = np.empty((X.shape[0], Y.shape[0]))
    with np.errstate(over="ignore", invalid="ignore"):
        F._extended_products(sp.csr_matrix(X) if sparse_x else X, sp.csr_matrix(Y) if sparse_y else Y, out)
    assert_gram_exact("kernel all_subsets (extended)", out, X, Y)


def test_float64_only_platforms_refuse_instead_of_a_number_outside_the_contract(monkeypatch):
    from rkcore.kernels import all_subsets_gram as F

    monkeypatch.setattr(F, "EXTENDED", None)
    X = np.full((2, 4097), 1e-4)
    X[:, ::2] *= 3.0  # two values per row: not the level table
    with pytest.raises(ValueError, match="cannot be certified"):
        K.all_subsets_kernel(X)
    with pytest.raises(ValueError, match="cannot be certified"):
        K.all_subsets_kernel(sp.csr_matrix(X))
    small = np.full((2, 300), 1e-2)
    G = K.all_subsets_kernel(small)  # well within float64's bound: no refusal
    assert np.isfinite(G).all()


@PROPERTY
@given(all_subsets_cases())
def test_sparse_all_subsets_gram_of_x_with_itself_computes_the_upper_triangle(monkeypatch, case):
    """K(X, X) on the sparse path: each block skips the rows above it in every column of X and
    the lower triangle is mirrored; exactly symmetric and within the contract, with row blocks
    of 2 rows and chunks of 3 triples."""
    from rkcore.kernels import all_subsets_gram as F

    monkeypatch.setattr(F, "SPARSE_GRAM_RATIO", 0)
    monkeypatch.setattr(F, "SPARSE_GRAM_CHUNK", 3)
    monkeypatch.setattr(F, "GRAM_BLOCK_BYTES", 2 * 8 * 5)
    monkeypatch.setattr(F, "LEVEL_TABLE_SIZE", 0)  # not the level table
    X, _, sparse_x, _ = case
    G = K.all_subsets_kernel(sp.csr_matrix(X) if sparse_x else X)
    assert np.array_equal(G, G.T, equal_nan=True)
    assert_gram_exact("kernel all_subsets (sparse Gram, K(X, X))", G, X, X)


def test_count_threshold_path_meets_the_contract(tiny_blocks):
    """Non-negative sparse rows of small spread (not level rows): _top_counted decides by the
    shared-non-zero count (m = 2: every pair; m = 3: pairs sharing 3 non-zeros are tested)."""
    rng = np.random.default_rng(7)
    X = np.where(rng.random((9, 10)) < 0.5, rng.uniform(1.0, 1.05, (9, 10)), 0.0) * 10.0 ** rng.uniform(-3, 3, (9, 1))
    Y = np.where(rng.random((7, 10)) < 0.5, rng.uniform(1.0, 1.05, (7, 10)), 0.0)
    assert FP.row_levels(X) is None
    for m in (2, 3):
        gamma = float(K.rounding_gamma(10 + 2 * m))
        assert GW._count_threshold(X, Y, m, float(K.closed_form_check_constants(m, gamma)[0])) == (2 if m == 2 else 4)
        G = K.anova_kernel(X, Y, degree=m)
        family = ItemsetFamily.anova(10, m)
        for i in range(9):
            for k in range(7):
                exact, scale = family_value(X[i], Y[k], family)
                check_value("fused Gram count threshold", G[i, k], exact, scale)
                if exact == 0:
                    assert G[i, k] == 0.0 and not np.signbit(G[i, k])
