"""The fast paths of rkcore.kernels.fastpaths against brute force (exact rationals where it matters).

Every fast path computes a known formula in another order: these tests pin it to the
definition (prod_j (1 + x_j y_j), e_m as a sum over m-subsets), CSR to dense, float32 to float64.
"""
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
import scipy.sparse as sp

from rkcore import RandomKernel
from rkcore.kernels.all_subsets_blocks import AllSubsetsProductBlock, AllSubsetsSignsBlock, padded_support
from rkcore.kernels.all_subsets_gram import all_subsets_gram
from rkcore.kernels.anova_blocks import AnovaBlock
from rkcore.kernels.blas_blocks import gemm_into
from rkcore.kernels.exact import all_subsets_kernel, anova_kernel

EPS = np.finfo(np.float64).eps


def _exact_all_subsets(x, y) -> Fraction:
    out = Fraction(1)
    for a, b in zip(x, y):
        out *= 1 + Fraction(float(a)) * Fraction(float(b))
    return out


def _exact_anova(x, y, m) -> Fraction:
    prods = [Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, y)]
    total = Fraction(0)
    for idx in combinations(range(len(prods)), m):
        term = Fraction(1)
        for j in idx:
            term *= prods[j]
        total += term
    return total


def _sparse_rows(rng, n, d, density):
    return rng.rand(n, d) * (rng.rand(n, d) < density)


# ---------------------------------------------------------------------- gemm_into
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sparse", [False, True])
def test_gemm_into_accumulates_in_place(dtype, sparse):
    rng = np.random.RandomState(0)
    A, B_T = _sparse_rows(rng, 30, 9, 0.4), rng.randn(9, 17)
    out = rng.randn(30, 17).astype(dtype)
    start = out.copy()
    A_in = sp.csr_matrix(A) if sparse else A
    res = gemm_into(-2.0, A_in, B_T, 1.0, out)
    assert res is out and out.dtype == dtype
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out, start - 2.0 * A @ B_T, rtol=tol, atol=tol)
    gemm_into(1.0, A_in, B_T, 0.0, out)  # beta = 0 ignores the old content
    np.testing.assert_allclose(out, A @ B_T, rtol=tol, atol=tol)


# ---------------------------------------------------------------------- RK blocks
@pytest.mark.parametrize("degree", [2, 3])
@pytest.mark.parametrize("signs", [True, False])
def test_anova_block_is_e_m_over_sqrt_D_dense_and_csr(degree, signs):
    rng = np.random.RandomState(1)
    X = _sparse_rows(rng, 12, 6, 0.6) * 3 - 0.5 * (rng.rand(12, 6) < 0.2)
    D = 7
    W = np.sign(rng.randn(D, 6)) if signs else rng.randn(D, 6)
    block = AnovaBlock(W, degree, signs)
    expected = np.array([[float(_exact_anova(x, w, degree)) for w in W] for x in X]) / np.sqrt(D)
    for Xin in (X, sp.csr_matrix(X)):
        out = np.empty((12, D))
        block(Xin, out)
        np.testing.assert_allclose(out, expected, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("sparse", [False, True])
def test_all_subsets_signs_block_branches(sparse):
    """Log trick over the stored entries: |x| = 1 (vanishing factors) and |x| > 1 (signs)."""
    rng = np.random.RandomState(2)
    X = rng.uniform(-2.5, 2.5, size=(40, 9)) * (rng.rand(40, 9) < 0.5)
    X[0, 2], X[1, 4], X[2, 0], X[3, 1] = 1.0, -1.0, 1.0, -1.0
    X[5] = 0.0  # empty row: the constant 1/sqrt(D)
    W = np.sign(rng.randn(300, 9))
    out = np.empty((40, 300))
    AllSubsetsSignsBlock(W)(sp.csr_matrix(X) if sparse else X, out)
    expected = np.prod(1.0 + X[:, None, :] * W[None], axis=2) / np.sqrt(300)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-13)
    assert (out[0] == 0).any() and (out < 0).any()


def test_padded_support_rows_and_padding():
    X = np.array([[0, 2.0, 0, 3.0], [0, 0, 0, 0], [5.0, 0, 0, 0]])
    for Xin in (X, sp.csr_matrix(X)):
        cols, vals, counts = padded_support(Xin, pad_col=4)
        np.testing.assert_array_equal(counts, [2, 0, 1])
        np.testing.assert_array_equal(cols, [[1, 3], [4, 4], [0, 4]])
        np.testing.assert_array_equal(vals, [[2, 3], [0, 0], [5, 0]])


@pytest.mark.parametrize("case", ["sparse", "dense_full", "dense_with_zeros", "tiny_values", "explicit_zero"])
def test_all_subsets_product_block_equals_full_product(case):
    rng = np.random.RandomState(3)
    X = {
        "sparse": _sparse_rows(rng, 50, 10, 0.3),
        "dense_full": rng.randn(50, 10),
        "dense_with_zeros": rng.randn(50, 10) * (rng.rand(50, 10) < 0.7),
        # prod v would underflow: the 1 + v w form must take over
        "tiny_values": np.where(rng.rand(50, 10) < 0.6, 1e-200, 0.5),
        "explicit_zero": _sparse_rows(rng, 50, 10, 0.3),
    }[case]
    W = rng.randn(33, 10)
    expected = np.prod(1.0 + X[:, None, :] * W[None], axis=2) / np.sqrt(33)
    inputs = [X, sp.csr_matrix(X)]
    if case == "explicit_zero":
        S = sp.csr_matrix(X)
        S.data[::3] = 0.0  # stored zeros are factors of 1 too
        X = S.toarray()
        expected = np.prod(1.0 + X[:, None, :] * W[None], axis=2) / np.sqrt(33)
        inputs = [S]
    for Xin in inputs:
        out = np.empty((50, 33))
        AllSubsetsProductBlock(W)(Xin, out)
        np.testing.assert_allclose(out, expected, rtol=1e-11, atol=1e-300)


def test_all_subsets_product_error_matches_the_reference_order():
    """v (w + 1/v) is as accurate as 1 + v w: exact-rational error within the condition bound."""
    rng = np.random.RandomState(4)
    X = rng.rand(40, 8) + 0.1
    W = rng.randn(25, 8) * 2
    out = np.empty((40, 25))
    AllSubsetsProductBlock(W)(X, out)
    out *= 5.0  # undo 1/sqrt(25) exactly
    for i in range(0, 40, 7):
        for s in range(0, 25, 4):
            exact = _exact_all_subsets(X[i], W[s])
            cond = np.prod(1 + np.abs(X[i] * W[s])) / abs(float(exact))
            err = abs(Fraction(float(out[i, s])) - exact) / abs(exact)
            assert float(err) <= 4 * 8 * EPS * cond + 4 * EPS


@pytest.mark.parametrize("kernel,degree", [("anova", 2), ("anova", 3), ("all_subsets", 2)])
@pytest.mark.parametrize("distribution", ["rademacher", "gaussian"])
def test_random_kernel_csr_equals_dense(kernel, degree, distribution):
    rng = np.random.RandomState(5)
    X = _sparse_rows(rng, 700, 20, 0.3)  # several transform blocks
    rk = RandomKernel(96, kernel=kernel, degree=degree, distribution=distribution, random_state=0).fit(X)
    np.testing.assert_allclose(rk.transform(sp.csr_matrix(X)), rk.transform(X), rtol=1e-11, atol=1e-14)


def test_blocks_preserve_float32():
    rng = np.random.RandomState(6)
    X = _sparse_rows(rng, 20, 8, 0.5)
    W = rng.randn(16, 8)
    for block in (AnovaBlock(W, 2, False), AnovaBlock(W, 3, False), AllSubsetsProductBlock(W),
                  AllSubsetsSignsBlock(np.sign(W)), AnovaBlock(np.sign(W), 3, True)):
        ref = block(X, np.empty((20, 16)))
        for Xin in (X.astype(np.float32), sp.csr_matrix(X.astype(np.float32))):
            out = block(Xin, np.empty((20, 16), dtype=np.float32))
            assert out.dtype == np.float32
            np.testing.assert_allclose(out, ref, rtol=2e-5, atol=1e-6)


# ---------------------------------------------------------------------- exact Grams
@pytest.mark.parametrize("case", ["nonnegative", "signed", "mixed_columns"])
@pytest.mark.parametrize("sparse", [False, True])
def test_all_subsets_gram_equals_exact_rationals(case, sparse):
    rng = np.random.RandomState(7)
    X, Y = _sparse_rows(rng, 9, 11, 0.6), _sparse_rows(rng, 7, 11, 0.6)
    if case == "signed":
        X, Y = X - 0.4 * (X > 0), -Y
    if case == "mixed_columns":  # grouped (same-sign) and direct (mixed-sign) columns together
        X[:, :3] *= np.where(rng.rand(9, 3) < 0.5, -1, 1)
    Xin, Yin = (sp.csr_matrix(X), sp.csr_matrix(Y)) if sparse else (X, Y)
    K = all_subsets_kernel(Xin, Yin)
    for i in range(9):
        for k in range(7):
            exact = _exact_all_subsets(X[i], Y[k])
            scale = np.prod(1 + np.abs(X[i] * Y[k]))
            assert abs(Fraction(float(K[i, k])) - exact) <= Fraction(40 * EPS * scale)


def test_all_subsets_gram_adversarial_magnitudes_relative_error():
    """Non-negative data over 16 orders of magnitude: the grouped GEMM is forward stable."""
    rng = np.random.RandomState(8)
    for trial in range(5):
        X = 10.0 ** rng.uniform(-8, 8, (6, 13)) * (rng.rand(6, 13) < 0.8)
        Y = 10.0 ** rng.uniform(-8, 8, (5, 13)) * (rng.rand(5, 13) < 0.8)
        with np.errstate(over="ignore"):
            K = all_subsets_kernel(X, Y)
        for i in range(6):
            for k in range(5):
                exact = _exact_all_subsets(X[i], Y[k])
                if exact > Fraction(np.finfo(float).max):
                    assert np.isinf(K[i, k])
                    continue
                assert abs(Fraction(float(K[i, k])) - exact) / exact <= Fraction((2**4 + 4 + 13) * 2 * EPS)


def test_all_subsets_gram_blocks_are_invisible(monkeypatch):
    import rkcore.kernels.all_subsets_gram as fp
    rng = np.random.RandomState(9)
    X = _sparse_rows(rng, 70, 15, 0.4)
    full = all_subsets_kernel(X)
    monkeypatch.setattr(fp, "GRAM_BLOCK_BYTES", 16 * 8 * 70)
    monkeypatch.setattr(fp, "GRAM_GROUP", 3)
    np.testing.assert_allclose(all_subsets_kernel(X), full, rtol=1e-13)
    expected = np.prod(1 + X[:, None, :] * X[None], axis=2)
    np.testing.assert_allclose(full, expected, rtol=1e-13)


@pytest.mark.parametrize("degree", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_anova_kernel_equals_exact_rationals(degree, sparse):
    rng = np.random.RandomState(10)
    X, Y = rng.randn(8, 7) * (rng.rand(8, 7) < 0.7), rng.randn(6, 7)
    Xin, Yin = (sp.csr_matrix(X), sp.csr_matrix(Y)) if sparse else (X, Y)
    K = anova_kernel(Xin, Yin, degree=degree)
    for i in range(8):
        for k in range(6):
            exact = _exact_anova(X[i], Y[k], degree)
            scale = (1 + np.abs(X[i] * Y[k]).sum()) ** degree
            assert abs(Fraction(float(K[i, k])) - exact) <= Fraction(50 * EPS * scale)


def test_all_subsets_gram_memory():
    import tracemalloc

    rng = np.random.RandomState(11)
    X = rng.rand(600, 30)
    out2 = np.empty((600, 600))
    tracemalloc.start()
    all_subsets_gram(X, X, out2)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # one block (here all 600 rows: 2.9 MB) + the subset products phi_G of both sides, O(n d 2^g / g)
    assert peak <= out2.nbytes + 3 * 8 * 600 * 16 * 8 + 2**16
    np.testing.assert_allclose(out2, np.prod(1 + X[:, None, :] * X[None], axis=2), rtol=1e-12)


# ---------------------------------------------------------------------- fused ANOVA check
def _newton_verdict(block, Xb, gamma):
    """newton_is_safe on every entry, with the power sums of |z| from full GEMMs (the unfused
    check): the reference the fused check must never be more lenient than."""
    from rkcore.kernels.blas_blocks import as_sparse_if_sparse
    from rkcore.kernels.exact import newton_is_safe

    Xb = as_sparse_if_sparse(Xb)
    n, D = Xb.shape[0], block.W_T[1].shape[1]
    absX = abs(Xb)
    P2 = gemm_into(1.0, Xb.power(2) if sp.issparse(Xb) else Xb**2, block._weights(2, np.float64), 0.0, np.empty((n, D)))
    Pa = [None, gemm_into(1.0, absX, block._abs_weights(1), 0.0, np.empty((n, D))), P2]
    if block.m == 3:
        Pa.append(gemm_into(1.0, absX.power(3) if sp.issparse(absX) else absX**3, block._abs_weights(3), 0.0,
                            np.empty((n, D))))
    return newton_is_safe(Pa, block.m, gamma)


def _checked_against_newton(block, Xb, gamma):
    """AnovaBlock.checked on Xb: its output, the (rows, cols) it rejects, the accepted mask and newton_is_safe's
    verdicts; asserts it never accepts an entry newton_is_safe rejects."""
    out = np.empty((Xb.shape[0], block.W_T[1].shape[1]))
    rows, cols = block.checked(Xb, out, gamma)
    accepted = np.ones(out.shape, dtype=bool)
    accepted[rows, cols] = False
    newton_ok = np.broadcast_to(_newton_verdict(block, Xb, gamma), out.shape)
    assert not (accepted & ~newton_ok).any()
    return out, rows, cols, accepted, newton_ok



#: AnovaBlock.checked sends blocks of at most FEW_ROWS rows to tier 2 whole; the tests below have few rows,
#: so each runs both ways: tier 1 on (FEW_ROWS = 0) and the few-rows path
TIER1_OR_FEW_ROWS = pytest.mark.parametrize("few_rows", [0, None], ids=["tier1", "few_rows"])


def _set_few_rows(monkeypatch, few_rows):
    import rkcore.kernels.anova_blocks as fastpaths

    if few_rows is not None:
        monkeypatch.setattr(fastpaths, "FEW_ROWS", few_rows)


def _cancellation_sweep(m, n_features=400):
    """Rows whose features sweep across the tier-1 boundary: z = (1, -a) (m = 2) or
    (1, 1, -a) (m = 3) for a from 0 to 0.2 (0.6), so that e_m / P2 runs through ~0 (one product
    dominates) and newton_is_safe flips from reject to accept; plus random rows."""
    a = np.linspace(0.0, 0.2 if m == 2 else 0.6, n_features)
    if m == 2:
        X = np.array([[1.0, 1.0, 0.0], [1.0, 0.5, 0.0]])
        W = np.column_stack([np.ones_like(a), -a, np.zeros_like(a)])
    else:
        X = np.array([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.5, 0.0]])
        W = np.column_stack([np.ones_like(a), np.ones_like(a), -a, np.zeros_like(a)])
    rng = np.random.RandomState(m)
    X = np.vstack([X, rng.randn(3, X.shape[1]) * (rng.rand(3, X.shape[1]) < 0.7)])
    return X, W + 1e-9 * rng.randn(*W.shape)


@TIER1_OR_FEW_ROWS
@pytest.mark.parametrize("degree", [2, 3])
@pytest.mark.parametrize("sparse", [False, True])
def test_anova_checked_never_accepts_what_newton_is_safe_rejects(degree, sparse, few_rows, monkeypatch):
    from rkcore.kernels.matrices import max_nnz_per_row
    from rkcore.kernels.numerics import rounding_gamma

    _set_few_rows(monkeypatch, few_rows)

    X, W = _cancellation_sweep(degree)
    block = AnovaBlock(W, degree, signs=False)
    Xb = sp.csr_matrix(X) if sparse else X
    gamma = float(rounding_gamma(max_nnz_per_row(Xb) + 2 * degree))
    out, rows, cols, accepted, newton_ok = _checked_against_newton(block, Xb, gamma)
    # the sweep exercises every outcome: rejected (repaired by the caller) and accepted entries
    assert len(rows) > 0 and accepted.sum() > accepted.size // 4
    # ...and no more rejected than newton_is_safe rejects (up to rounding of A at the edge):
    # for m = 2 tier 1 alone rejects a band newton_is_safe accepts (its bound on A is 2x looser
    # there), so this holds only because tier 2 hands those entries to newton_is_safe
    assert (accepted == newton_ok).mean() > 0.99
    # accepted values are Newton's (1/m! and 1/sqrt(D) folded in): within the contract
    D = W.shape[0]
    for i, s in zip(*np.nonzero(accepted[:2])):
        exact = _exact_anova(X[i], W[s], degree) / Fraction(float(np.sqrt(D)))
        scale = _exact_anova(np.abs(X[i]), np.abs(W[s]), degree) / Fraction(float(np.sqrt(D)))
        assert abs(Fraction(float(out[i, s])) - exact) <= Fraction(1e-12) * scale * Fraction(1001, 1000) + Fraction(1, 10**300)


def test_anova_tier1_constants_refuse_large_gamma():
    """Where gamma is so large that newton_is_safe's own constant is <= 0 (it accepts only
    P2 = 0), the fused check declines and the caller keeps the unfused one. Below, m = 2 keeps
    the max test (its |e| >= rho P2 test only to d ~ 130) and m = 3 newton_is_safe's branch 1."""
    from rkcore.kernels.anova_blocks import anova_tier1_constants
    from rkcore.kernels.exact import closed_form_check_constants, rounding_gamma

    assert anova_tier1_constants(2, float(rounding_gamma(11)))["rho"] is not None
    assert anova_tier1_constants(3, float(rounding_gamma(13))) is not None
    at_1000 = anova_tier1_constants(2, float(rounding_gamma(1004)))
    assert at_1000["rho"] is None and 0 < at_1000["kappa_max"] < float(closed_form_check_constants(2, rounding_gamma(1004))[0])
    at_1000 = anova_tier1_constants(3, float(rounding_gamma(1006)))
    assert (at_1000["c"], at_1000["c_b"]) == tuple(closed_form_check_constants(3, rounding_gamma(1006)))
    huge = 1e-13  # newton_is_safe's constants are negative: it accepts only P2 = 0
    assert closed_form_check_constants(2, huge)[0] < 0 and anova_tier1_constants(2, huge) is None
    assert closed_form_check_constants(3, 5e-14)[0] < 0 and anova_tier1_constants(3, 5e-14) is None
    W = np.random.RandomState(0).randn(5, 4096)
    out = np.empty((2, 5))
    assert AnovaBlock(W, 3, signs=False).checked(np.ones((2, 4096)), out, float(rounding_gamma(4102))) is None


def _exact_e2_recursion(x, w) -> Fraction:
    e1 = e2 = Fraction(0)
    for a, b in zip(x, w):
        z = Fraction(float(a)) * Fraction(float(b))
        e2 += z * e1
        e1 += z
    return e2


@TIER1_OR_FEW_ROWS
@pytest.mark.parametrize("sparse", [False, True])
def test_anova_checked_max_test_at_large_d(sparse, few_rows, monkeypatch):
    """d = 1,000 (probabilistic gamma, |e| >= rho P2 test off): the max test
    (max|x|^2 max|c w|^2 <= kappa_max P2) accepts nearly all of N(0, 1) rows, never what
    newton_is_safe rejects: rows where one product dominates, a row with two non-zeros,
    a tiny row (its guard) and a feature with one huge weight."""
    from rkcore.kernels.anova_blocks import anova_tier1_constants
    from rkcore.kernels.matrices import max_nnz_per_row
    from rkcore.kernels.numerics import rounding_gamma

    _set_few_rows(monkeypatch, few_rows)
    rng = np.random.RandomState(5)
    d, D = 1000, 48
    X = rng.randn(8, d)
    X[1, 0] *= 40.0  # one product dominates a row
    X[2] *= 1e-160  # guard: fl(max|x|^2) < 2^-1000 switches the max test off for the block
    X[3] = 0.0
    X[3, :2] = [1.0, -1.0]
    X[4, rng.rand(d) < 0.9] = 0.0
    W = rng.randn(D, d)
    W[0, 7] *= 60.0
    for Xin, tiny_block in ((X[[0, 1, 3, 4, 5, 6, 7]], False), (X, True)):
        block = AnovaBlock(W, 2, signs=False)
        Xb = sp.csr_matrix(Xin) if sparse else Xin
        gamma = float(rounding_gamma(max_nnz_per_row(Xb) + 4))
        assert anova_tier1_constants(2, gamma)["rho"] is None
        assert (block._max_test_factors(abs(Xb), anova_tier1_constants(2, gamma)["kappa_max"]) is None) == tiny_block
        out, rows, cols, accepted, newton_ok = _checked_against_newton(block, Xb, gamma)
        assert (accepted == newton_ok).mean() > 0.99 and 0 < len(rows)
        for i, s in [(0, 0), (0, 1), (1, 3), (len(Xin) - 1, 0), (len(Xin) - 1, 5)]:
            if accepted[i, s]:
                exact = _exact_e2_recursion(Xin[i], W[s]) / Fraction(float(np.sqrt(D)))
                scale = _exact_e2_recursion(np.abs(Xin[i]), np.abs(W[s])) / Fraction(float(np.sqrt(D)))
                assert abs(Fraction(float(out[i, s])) - exact) <= Fraction(1e-12) * scale
    # the max test alone (no tier 2) on N(0, 1) rows: what it accepts is most of the block
    Xn = rng.randn(20, d)
    xq, wq, _ = AnovaBlock(W, 2, signs=False)._max_test_factors(np.abs(Xn), anova_tier1_constants(2, gamma)["kappa_max"])
    P2 = (Xn**2) @ (W**2).T * (0.5 / np.sqrt(D))
    assert (np.multiply.outer(xq, wq) <= P2).mean() > 0.9


def test_refined_max_bound_dominates_every_product():
    """The refined max test's M (top two |x_j| and |c w_j| per row and feature) is never below
    max_j |x_j| |c w_j| (ties, zeros, one non-zero, signs), and on N(0, 1) rows at d = 78 it
    accepts most entries the plain max test (max|x| max|c w|) rejects."""
    rng = np.random.RandomState(11)
    X = rng.randn(30, 9) * (rng.rand(30, 9) < 0.8)
    X[0] = 0.0
    X[1] = 0.0
    X[1, 4] = -3.0
    X[2] = 2.0  # ties everywhere
    X[3, :2] = [5.0, -5.0]
    W = rng.randn(40, 9)
    W[0] = 1.5
    W[1, :] = 0.0
    W[1, 3] = 7.0
    block = AnovaBlock(W, 2, signs=False)
    absX = np.abs(X)
    W1 = np.abs(block._weights(1, np.float64)).T  # (D, d)
    top = block._top_two(absX, absX.max(axis=1), W1.max(axis=1), 1.0)
    rows, cols = (a.ravel() for a in np.meshgrid(np.arange(30), np.arange(40), indexing="ij"))
    m_true = (absX[rows] * W1[cols]).max(axis=1)
    # Q >= (1 - 3u) M^2 >= M_true^2 (1 - 3u) > p2 below: never accepted
    assert not block._refined_max_ok(top, rows, cols, m_true**2 * (1 - 1e-12)).any()
    # ...and never above the plain bound max|x| max|c w| (where some product is not zero;
    # where all are, M may be 0 and the Q >= 2^-960 guard rejects: tier 2 decides)
    plain = absX.max(axis=1)[rows] * W1.max(axis=1)[cols]
    live = m_true > 0
    assert block._refined_max_ok(top, rows[live], cols[live], plain[live] ** 2 * (1 + 1e-9)).all()
    assert not live.all()
    # N(0, 1), d = 78, kappa_max ~ 0.82: most of what the plain test leaves, it accepts
    Xn, Wn = rng.randn(60, 78), rng.randn(300, 78)
    bn = AnovaBlock(Wn, 2, signs=False)
    P2 = (Xn**2) @ bn._weights(2, np.float64)
    xq, wq, top = bn._max_test_factors(np.abs(Xn), 0.82)
    plain_fails = np.multiply.outer(xq, wq) > P2
    r, c = np.nonzero(plain_fails)
    assert plain_fails.mean() > 0.1 and bn._refined_max_ok(top, r, c, P2[r, c]).mean() > 0.7


@pytest.mark.parametrize("sparse", [False, True])
def test_anova3_checked_at_large_d_is_newton_is_safe(sparse):
    """m = 3 at d = 800 (probabilistic gamma, newton_is_safe's c ~ 0.09): the fused check
    replays newton_is_safe's branch 1 and bounds its branch 2: never more lenient, and on
    N(0, 1) rows (plus one dominated row and a row with 3 non-zeros) the same verdicts."""
    from rkcore.kernels.matrices import max_nnz_per_row
    from rkcore.kernels.numerics import rounding_gamma

    rng = np.random.RandomState(7)
    d, D = 800, 40
    X = rng.randn(6, d)
    X[1, 0] *= 60.0
    X[2] = 0.0
    X[2, :3] = [1.0, -1.0, 0.5]
    W = rng.randn(D, d)
    block = AnovaBlock(W, 3, signs=False)
    Xb = sp.csr_matrix(X) if sparse else X
    gamma = float(rounding_gamma(max_nnz_per_row(Xb) + 6))
    out, rows, cols, accepted, newton_ok = _checked_against_newton(block, Xb, gamma)
    assert (accepted == newton_ok).mean() > 0.99 and accepted.mean() > 0.5 and len(rows)


@TIER1_OR_FEW_ROWS
@pytest.mark.parametrize("degree", [2, 3])
def test_random_kernel_fused_check_repairs_what_newton_rejects(degree, few_rows, monkeypatch):
    """End to end: rows where one product dominates (Newton cancels) come out within the
    contract, as exact rationals say, dense and CSR, through the fused Gaussian path."""
    _set_few_rows(monkeypatch, few_rows)
    X, W = _cancellation_sweep(degree, 60)
    rk = RandomKernel(W.shape[0], degree=degree, distribution="gaussian", random_state=0).fit(X)
    rk.random_weights_ = W
    root = Fraction(float(np.sqrt(W.shape[0])))
    for Xin in (X, sp.csr_matrix(X)):
        Z = rk.transform(Xin)
        for i in range(2):
            for s in range(W.shape[0]):
                exact = _exact_anova(X[i], W[s], degree) / root
                scale = _exact_anova(np.abs(X[i]), np.abs(W[s]), degree) / root
                assert abs(Fraction(float(Z[i, s])) - exact) <= Fraction(1e-12) * scale + Fraction(1, 10**300)


def test_random_kernel_reuses_prepared_weights_only_while_they_are_the_same():
    """transform prepares the weights once (powers, |W|, casts): fit's weights are read-only,
    a new array assigned by hand is used (and a writeable one re-read on every call), and a
    pickled map gives the same features."""
    import pickle

    X = np.random.RandomState(3).randn(6, 5)
    rk = RandomKernel(8, degree=2, distribution="gaussian", random_state=0).fit(X)
    Z1 = rk.transform(X)
    with pytest.raises(ValueError):
        rk.random_weights_[0, 0] = 1.0
    W = rk.random_weights_ * 2.0
    rk.random_weights_ = W
    np.testing.assert_allclose(rk.transform(X), 4.0 * Z1, rtol=1e-12)  # e_2 is quadratic in w
    W[0] = 0.0
    assert np.all(rk.transform(X)[:, 0] == 0.0)
    rk2 = pickle.loads(pickle.dumps(RandomKernel(8, degree=2, distribution="gaussian", random_state=0).fit(X)))
    np.testing.assert_array_equal(rk2.transform(X), Z1)
    assert not rk2.random_weights_.flags.writeable
