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

from rkcore import kernels as K
from rkcore.itemsets import ItemsetFamily
from tests.maps.numerics_oracle import elementary_exact, family_value, fr
from tests.maps.test_numerics_contract import check_value, matrices

PROPERTY = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Row blocks of 2 rows, fused sub-blocks of 1 row."""
    monkeypatch.setattr(K, "GRAM_SCRATCH_BYTES", 1)
    monkeypatch.setattr(K, "GRAM_MIN_ROWS", 2)
    monkeypatch.setattr(K, "FUSED_BYTES", 1)


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
        G = K.anova_kernel(X, Y, degree=m)
        family = ItemsetFamily.anova(4, m)
        for i in range(4):
            for k in range(4):
                exact, scale = family_value(X[i], Y[k], family)
                check_value("fused Gram x>=0, y signed", G[i, k], exact, scale)


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
            eps = K.newton_error_bounds([None] + [float(p) for p in Pa[1:]], degree, gamma)[degree]
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
    from rkcore import fastpaths as F

    monkeypatch.setattr(F, "SPARSE_GRAM_RATIO", 0)
    monkeypatch.setattr(F, "SPARSE_GRAM_CHUNK", 3)
    monkeypatch.setattr(F, "GRAM_BLOCK_BYTES", 2 * 8 * 4)
    X, Y, sparse_x, sparse_y = case
    G = K.all_subsets_kernel(sp.csr_matrix(X) if sparse_x else X, sp.csr_matrix(Y) if sparse_y else Y)
    family = ItemsetFamily.all_subsets(X.shape[1])
    for i in range(X.shape[0]):
        for k in range(Y.shape[0]):
            exact, scale = family_value(X[i], Y[k], family)
            check_value("kernel all_subsets (sparse Gram)", G[i, k], exact, scale)


def test_sparse_all_subsets_is_chosen_for_sparse_rows_only():
    from rkcore import fastpaths as F

    rng = np.random.default_rng(0)
    onehot = np.zeros((50, 40))
    onehot[np.arange(50), rng.integers(0, 40, 50)] = 1.0
    assert F._sparse_if_cheaper(onehot, onehot)[0] is not None
    assert F._sparse_if_cheaper(sp.csr_matrix(onehot), onehot)[0] is not None
    dense = rng.standard_normal((50, 40))
    assert F._sparse_if_cheaper(dense, dense)[0] is None
    np.testing.assert_allclose(K.all_subsets_kernel(sp.csr_matrix(onehot)), K.all_subsets_kernel(onehot), rtol=1e-15)
