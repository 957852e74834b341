"""Error bounds of Lemmas 1-3 (paper eqs. 8-10), their log-space evaluation and their inverses."""
import math

import numpy as np
import pytest
import scipy.sparse as sp

from rkcore.theory import bounds as B

# moderate values: the formulas can be evaluated directly without overflow
D_GRID = np.array([1.0, 10.0, 100.0, 1e3, 1e4, 1e5])
EPS_GRID = np.array([0.01, 0.1, 0.5, 1.0, 3.0])
R_GRID = np.array([0.1, 0.5, 1.0, 2.0, 3.0])


def direct1(D, eps, R):
    return 2.0 * np.exp(-D * eps**2 / (2.0 * np.exp(4.0 * R)))


def direct2(D, eps, R, d):
    return 2.0 * (32.0 * R * np.sqrt(d * np.exp(2.0 * R)) / eps) ** (2 * d) * np.exp(-D * eps**2 / (8.0 * np.exp(4.0 * R)))


def direct3(D, eps, R, m):
    return 2.0 * np.exp(-D * eps**2 / (2.0 * R ** (4 * m)))


def grid(*extra):
    return np.meshgrid(D_GRID, EPS_GRID, R_GRID, *extra, indexing="ij")


def assert_log_matches(got_log, expected, naive_log):
    """Where the direct value is a normal float, its log; where it underflows to 0 the
    log-space value must still be finite and equal the log formula evaluated naively."""
    normal = expected > 1e-300
    assert normal.any() and (~normal).any()  # the grid covers both regimes
    np.testing.assert_allclose(got_log[normal], np.log(expected[normal]), rtol=1e-12, atol=1e-12)
    assert np.isfinite(got_log).all()
    np.testing.assert_allclose(got_log, naive_log, rtol=1e-12, atol=1e-12)


def test_lemma1_matches_formula():
    D, eps, R = grid()
    expected = direct1(D, eps, R)
    np.testing.assert_allclose(B.lemma1(D, eps, R, clip=False), expected, rtol=1e-12)
    assert_log_matches(B.log_lemma1(D, eps, R), expected, np.log(2) - D * eps**2 / (2 * np.exp(4 * R)))
    np.testing.assert_allclose(B.lemma1(D, eps, R), np.minimum(expected, 1.0), rtol=1e-12)


def test_lemma2_matches_formula():
    D, eps, R, d = grid(np.array([1.0, 2.0, 5.0]))
    expected = direct2(D, eps, R, d)
    assert np.isfinite(expected).all()  # the grid is small enough for the direct formula
    np.testing.assert_allclose(B.lemma2(D, eps, R, d, clip=False), expected, rtol=1e-11, atol=1e-300)
    naive = np.log(2) + 2 * d * np.log(32 * R * np.sqrt(d * np.exp(2 * R)) / eps) - D * eps**2 / (8 * np.exp(4 * R))
    assert_log_matches(B.log_lemma2(D, eps, R, d), expected, naive)
    np.testing.assert_allclose(B.lemma2(D, eps, R, d), np.minimum(expected, 1.0), rtol=1e-11, atol=1e-300)


def test_lemma3_matches_formula():
    D, eps, R, m = grid(np.array([1.0, 2.0, 3.0]))
    expected = direct3(D, eps, R, m)
    np.testing.assert_allclose(B.lemma3(D, eps, R, m, clip=False), expected, rtol=1e-12)
    assert_log_matches(B.log_lemma3(D, eps, R, m), expected, np.log(2) - D * eps**2 / (2 * R ** (4 * m)))


def test_clip_caps_vacuous_bounds_at_one():
    # Lemma 2 with few features is far above 1: raw value is huge, clipped value is 1
    assert B.lemma2(10, 0.1, 1.0, 10, clip=False) > 1e60
    assert B.lemma2(10, 0.1, 1.0, 10) == 1.0
    assert B.lemma1(1, 0.1, 1.0) == 1.0 and B.lemma1(1, 0.1, 1.0, clip=False) > 1.9
    assert B.log_lemma1(1, 0.1, 1.0) > 0  # the log functions are never clipped


def test_log_space_at_extreme_values_against_mpmath():
    import mpmath  # a test requirement (requirements.txt): this check must not skip silently
    mpmath.mp.dps = 50
    cases = [  # (D, eps, R, d, m): e^{4R}, R^{4m} and (.)^{2d} overflow float64 here
        (1e6, 0.1, 50.0, 1e4, 10),
        (1e12, 1e-3, 200.0, 1e4, 200),
        (1e30, 0.5, 10.0, 1e4, 100),
        (10.0, 2.0, 0.5, 3.0, 100),
    ]
    for D, eps, R, d, m in cases:
        D_, e_, R_, d_ = (mpmath.mpf(v) for v in (D, eps, R, d))
        exact1 = mpmath.log(2) - D_ * e_**2 / (2 * mpmath.e ** (4 * R_))
        exact2 = mpmath.log(2 * (32 * R_ * mpmath.sqrt(d_ * mpmath.e ** (2 * R_)) / e_) ** (2 * d_)
                            * mpmath.exp(-D_ * e_**2 / (8 * mpmath.e ** (4 * R_))))
        exact3 = mpmath.log(2) - D_ * e_**2 / (2 * R_ ** (4 * m))
        for got, exact in [(B.log_lemma1(D, eps, R), exact1), (B.log_lemma2(D, eps, R, d), exact2),
                           (B.log_lemma3(D, eps, R, m), exact3)]:
            assert np.isfinite(got)
            assert got == pytest.approx(float(exact), rel=1e-12, abs=1e-12)
    # R = 50, d = 10^4: all finite (the brief's example)
    assert np.isfinite([B.log_lemma1(1e4, 0.1, 50), B.log_lemma2(1e4, 0.1, 50, 1e4), B.log_lemma3(1e4, 0.1, 50, 10)]).all()
    # the clipped bound stays a valid probability even when the raw value overflows
    assert B.lemma2(1e4, 0.1, 50, 1e4) == 1.0
    assert B.lemma2(1e4, 0.1, 50, 1e4, clip=False) == np.inf


def test_log_underflow_only_below_float_range():
    # D eps^2 / (2 R^{4m}) = 1e400 is not a float: the log bound is -inf and the bound 0
    assert B.log_lemma3(1.0, 1.0, 0.01, 50) == -np.inf
    assert B.lemma3(1.0, 1.0, 0.01, 50) == 0.0


def test_monotonicity():
    D = np.logspace(0, 8, 30)
    for logb in (B.log_lemma1(D, 0.3, 1.0), B.log_lemma2(D, 0.3, 1.0, 5), B.log_lemma3(D, 0.3, 1.5, 2)):
        assert (np.diff(logb) < 0).all()  # decreasing in D
    eps = np.linspace(0.05, 3.0, 30)
    for logb in (B.log_lemma1(1e4, eps, 1.0), B.log_lemma2(1e4, eps, 1.0, 5), B.log_lemma3(1e4, eps, 1.5, 2)):
        assert (np.diff(logb) < 0).all()  # decreasing in eps
    R = np.linspace(0.1, 3.0, 30)
    for logb in (B.log_lemma1(1e4, 0.3, R), B.log_lemma2(1e4, 0.3, R, 5), B.log_lemma3(1e4, 0.3, R, 2)):
        assert (np.diff(logb) > 0).all()  # increasing in R
    d = np.arange(1, 50)
    assert (np.diff(B.log_lemma2(1e4, 0.3, 1.0, d)) > 0).all()  # increasing in d
    m = np.arange(1, 10)
    assert (np.diff(B.log_lemma3(1e3, 0.3, 1.2, m)) > 0).all()  # R > 1: R^{4m} grows with m
    assert (np.diff(B.log_lemma3(1e3, 0.3, 0.8, m)) < 0).all()  # R < 1: it shrinks
    assert np.ptp(B.log_lemma3(1e3, 0.3, 1.0, m)) == 0.0  # R = 1: independent of m


def test_broadcasting_shapes():
    out = B.lemma1(np.array([10.0, 100.0])[:, None], np.array([0.1, 0.2, 0.3]), 1.0)
    assert out.shape == (2, 3)
    assert B.lemma2(np.ones((4, 1, 1)), np.full((3, 1), 0.5), np.ones(2), 3).shape == (4, 3, 2)
    assert np.ndim(B.lemma3(10, 0.5, 1.0, 2)) == 0
    assert B.min_components_lemma3(np.array([0.1, 0.2]), 0.05, np.array([[1.0], [2.0]]), 2).shape == (2, 2)


# ------------------------------------------------------------------------- inverses
def closed_form_D(which, eps, delta, R, d=None, m=None):
    if which == 1:
        return math.ceil(2 * math.exp(4 * R) * math.log(2 / delta) / eps**2)
    if which == 3:
        return math.ceil(2 * R ** (4 * m) * math.log(2 / delta) / eps**2)
    bracket = math.log(2 / delta) + 2 * d * math.log(32 * R * math.sqrt(d) * math.exp(R) / eps)
    return max(1, math.ceil(8 * math.exp(4 * R) * bracket / eps**2))


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.7, 2.0, 40.0])
@pytest.mark.parametrize("delta", [1e-6, 0.05, 0.5, 0.99])
@pytest.mark.parametrize("R", [0.05, 0.5, 1.0, 2.5])
def test_inverses_are_the_smallest_sufficient_D(eps, delta, R):
    cases = [
        (1, B.min_components_lemma1(eps, delta, R), lambda D: B.log_lemma1(D, eps, R), {}),
        (2, B.min_components_lemma2(eps, delta, R, 3), lambda D: B.log_lemma2(D, eps, R, 3), {"d": 3}),
        (2, B.min_components_lemma2(eps, delta, R, 78), lambda D: B.log_lemma2(D, eps, R, 78), {"d": 78}),
        (3, B.min_components_lemma3(eps, delta, R, 2), lambda D: B.log_lemma3(D, eps, R, 2), {"m": 2}),
        (3, B.min_components_lemma3(eps, delta, R, 5), lambda D: B.log_lemma3(D, eps, R, 5), {"m": 5}),
    ]
    for which, D, log_bound, kw in cases:
        assert isinstance(D, int) and D >= 1
        assert log_bound(D) <= math.log(delta)
        if D > 1:
            assert log_bound(D - 1) > math.log(delta)
        # agrees with the textbook closed form up to the rounding of ceil
        assert abs(D - closed_form_D(which, eps, delta, R, **kw)) <= max(1, 1e-12 * D)


def test_inverse_is_one_when_any_D_suffices():
    # Lemma 2's prefactor can be below delta when 32 R sqrt(d) e^R < eps
    assert B.lemma2(1, 100.0, 0.01, 1) < 0.5
    assert B.min_components_lemma2(100.0, 0.5, 0.01, 1) == 1
    # Lemma 3 with tiny R: D = 1 already gives a bound far below delta
    assert B.min_components_lemma3(1.0, 0.05, 0.1, 3) == 1


def test_inverses_vectorized_and_huge():
    eps = np.array([0.05, 0.1, 0.5])
    D = B.min_components_lemma1(eps, 0.05, 1.0)
    assert D.dtype == np.float64 and (D == np.round(D)).all()
    assert list(D) == [B.min_components_lemma1(e, 0.05, 1.0) for e in eps]
    huge = B.min_components_lemma1(0.1, 0.05, 100.0)  # ~ e^400: beyond int64 but a float
    assert isinstance(huge, int) and math.log(huge) == pytest.approx(400 + math.log(2 * math.log(40) / 0.01))
    assert B.min_components_lemma1(0.1, 0.05, 300.0) == math.inf  # beyond the float range


# ------------------------------------------------------------------------- data and errors
def test_l1_radius_dense_and_sparse():
    X = np.array([[1.0, -2.0, 0.0], [0.5, 0.5, -3.5], [0.0, 0.0, 0.0]])
    assert B.l1_radius(X) == 4.5
    assert B.l1_radius(sp.csr_matrix(X)) == 4.5
    assert B.l1_radius(sp.csc_matrix(X)) == 4.5
    assert isinstance(B.l1_radius(X), float)
    with pytest.raises(ValueError, match="NaN"):
        B.l1_radius(np.array([[np.nan, 1.0]]))


@pytest.mark.parametrize("call, name", [
    (lambda: B.lemma1(10, 0.0, 1.0), "eps"),
    (lambda: B.lemma1(10, -0.1, 1.0), "eps"),
    (lambda: B.lemma1(10, 0.1, 0.0), "R"),
    (lambda: B.lemma1(0.5, 0.1, 1.0), "n_components"),
    (lambda: B.log_lemma1(np.array([10.0, 0.0]), 0.1, 1.0), "n_components"),
    (lambda: B.lemma2(10, 0.1, 1.0, 0), "d"),
    (lambda: B.lemma2(10, 0.1, 1.0, 2.5), "d"),
    (lambda: B.lemma3(10, 0.1, 1.0, 0), "degree"),
    (lambda: B.lemma3(10, 0.1, -1.0, 2), "R"),
    (lambda: B.lemma1(10, np.nan, 1.0), "eps"),
    (lambda: B.lemma1(10, "a", 1.0), "eps"),
    (lambda: B.min_components_lemma1(0.1, 0.0, 1.0), "delta"),
    (lambda: B.min_components_lemma1(0.1, 1.0, 1.0), "delta"),
    (lambda: B.min_components_lemma2(0.1, 1.5, 1.0, 3), "delta"),
    (lambda: B.min_components_lemma2(0.1, 0.1, 1.0, 0), "d"),
    (lambda: B.min_components_lemma3(0.0, 0.1, 1.0, 2), "eps"),
    (lambda: B.min_components_lemma3(0.1, 0.1, 1.0, 0), "degree"),
    (lambda: B.bounds_table(10, 0.1, 0.0), "R"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"^{name} \(.*must"):
        call()


def test_bounds_table_is_tidy():
    df = B.bounds_table([10, 100, 1000], [0.1, 0.5], 1.0, d=5, degree=2)
    assert list(df.columns) == ["lemma", "n_components", "eps", "R", "log_bound", "bound"]
    assert len(df) == 3 * 3 * 2 and set(df.lemma) == {"lemma1", "lemma2", "lemma3"}
    row = df[(df.lemma == "lemma3") & (df.n_components == 1000) & (df.eps == 0.5)].iloc[0]
    assert row.bound == pytest.approx(B.lemma3(1000, 0.5, 1.0, 2))
    assert (df.bound <= 1.0).all()
    assert set(B.bounds_table(10, 0.1, 1.0).lemma) == {"lemma1"}
