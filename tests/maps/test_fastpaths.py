"""The fast paths of rkcore.fastpaths against brute force (exact rationals where it matters).

Every fast path computes a known formula in another order: these tests pin it to the
definition (prod_j (1 + x_j y_j), e_m as a sum over m-subsets), CSR to dense, float32 to float64.
"""
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
import scipy.sparse as sp

from rkcore import RandomKernel
from rkcore.fastpaths import (
    AllSubsetsProductBlock,
    AllSubsetsSignsBlock,
    AnovaBlock,
    all_subsets_gram,
    gemm_into,
    padded_support,
)
from rkcore.kernels import all_subsets_kernel, anova_kernel

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
    import rkcore.fastpaths as fp
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
