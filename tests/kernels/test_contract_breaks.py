"""The accuracy contract where it broke (issue 35, item 6): one property test per input class, each with a
generator that produces that class, against exact rationals (tests/kernels/numerics_oracle.py).

Set RKCORE_CONTRACT_EXAMPLES to widen the search and RKCORE_CONTRACT_REPORT=path.json to write, per
label, the worst error in contract units and the number of values checked.
"""
from __future__ import annotations

import atexit
import json
import os
from fractions import Fraction

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rkcore.kernels.exact import CONTRACT_RTOL, all_subsets_kernel, itemset_kernel
from rkcore.kernels.itemsets import ItemsetFamily
from tests.kernels.numerics_oracle import family_value, fr
from tests.kernels.test_numerics_contract import families

FLOAT_MAX = Fraction(np.finfo(np.float64).max)
TINY = Fraction(2) ** -1000
WORST: dict[str, list] = {}
PROPERTY = settings(max_examples=int(os.environ.get("RKCORE_CONTRACT_EXAMPLES", "60")), deadline=None,
                    derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@atexit.register
def _write_report():  # pragma: no cover - only with the environment variable
    path = os.environ.get("RKCORE_CONTRACT_REPORT")
    if path and WORST:
        with open(path, "w") as fh:
            json.dump(WORST, fh, indent=1, sort_keys=True)


def check_value(label: str, computed: float, exact: Fraction, scale: Fraction) -> None:
    """The contract for one value (rkcore.kernels.numerics); records the worst error in contract units."""
    worst = WORST.setdefault(label, [0.0, 0])
    worst[1] += 1
    tolerance = Fraction(CONTRACT_RTOL) * scale + TINY
    if abs(exact) > FLOAT_MAX - tolerance:  # at or beyond the threshold: inf of the exact value's sign is right
        if np.isinf(computed):
            assert (computed > 0) == (exact > 0), (label, computed, float(exact))
            return
    assert np.isfinite(computed), f"{label}: {computed} where the exact value is {float(exact)!r}"
    diff = abs(fr(computed) - exact)
    units = float(min(diff / tolerance, Fraction(10) ** 300))
    worst[0] = max(worst[0], units)
    assert diff <= tolerance, f"{label}: computed {computed!r}, exact {float(exact)!r}, {units:.3g} contract units"


#: Binary exponents from subnormals to the largest float, with 1 (0) most common.
EXPONENTS = [-1074, -1040, -1000, -800, -665, -400, -200, -60, 0, 0, 0, 60, 200, 400, 665, 800, 1000, 1023]


def wide_values():
    """+-mantissa * 2^e over the whole float range."""
    return st.builds(lambda s, m, e: s * float(np.ldexp(m, e)), st.sampled_from([-1.0, 1.0]),
                     st.floats(0.5, 1.0, exclude_max=True), st.sampled_from(EXPONENTS))


# ---------------------------------------------------------------------------- tiny x huge on CSR
@st.composite
def level_csr(draw, n_rows, d):
    """CSR rows whose non-zeros share one value per row (the level table's input class), the
    values tiny or huge: a float32 shadow of the pattern loses 1e-200 and keeps 1e200 as inf."""
    rows = []
    for _ in range(n_rows):
        level = draw(wide_values())
        pattern = draw(st.lists(st.booleans(), min_size=d, max_size=d))
        rows.append([level if p else 0.0 for p in pattern])
    return np.array(rows)


@PROPERTY
@given(st.integers(1, 4).flatmap(lambda d: st.tuples(level_csr(3, d), level_csr(2, d))))
def test_all_subsets_on_csr_tiny_times_huge(case):
    X, Y = case
    d = X.shape[1]
    family = ItemsetFamily.all_subsets(d)
    K = all_subsets_kernel(sp.csr_matrix(X), sp.csr_matrix(Y))
    G = all_subsets_kernel(sp.csr_matrix(X))
    for i in range(X.shape[0]):
        for j in range(Y.shape[0]):
            check_value("all_subsets CSR (level rows)", K[i, j], *family_value(X[i], Y[j], family))
        for j in range(X.shape[0]):
            check_value("all_subsets CSR Gram (level rows)", G[i, j], *family_value(X[i], X[j], family))
    assert (G == G.T).all()  # the symmetric Gram is mirrored, whatever the values


def test_the_issue_pairs_on_csr():
    assert all_subsets_kernel(sp.csr_matrix([[1e-200]]), sp.csr_matrix([[3e200]]))[0, 0] == 4.0
    G = all_subsets_kernel(sp.csr_matrix([[1e200], [1e-200]]))
    assert G[0, 0] == np.inf and G[0, 1] == G[1, 0] == 2.0 and G[1, 1] == 1.0
    for family in (ItemsetFamily.all_subsets(1), ItemsetFamily.up_to(1, 1), ItemsetFamily.anova(1, 1)):
        K = itemset_kernel(sp.csr_matrix([[1e-200]]), sp.csr_matrix([[3e200]]), family=family)
        check_value(f"{family.kind} CSR issue pair", K[0, 0], *family_value([1e-200], [3e200], family))


# ---------------------------------------------------------------------------- duplicate entries
@st.composite
def csr_with_duplicates(draw, dtype):
    """A (2 x 3) CSR matrix of ``dtype`` whose first row stores column 0 two or three times."""
    if dtype == np.bool_:
        values = st.booleans()
    elif np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        values = st.integers(int(info.min), int(info.max))
    else:
        values = st.floats(allow_nan=False, allow_infinity=False, width=32) if dtype == np.float32 else wide_values()
    repeats = draw(st.integers(2, 3))
    first = [draw(values) for _ in range(repeats)] + [draw(values)]
    second = [draw(values), draw(values)]
    data = np.array(first + second, dtype=object)
    with np.errstate(over="ignore"):
        data = np.array([dtype(v) for v in data], dtype=dtype)
    indices = np.array([0] * repeats + [2, 1, 2])
    indptr = np.array([0, repeats + 1, repeats + 3])
    return sp.csr_matrix((data, indices, indptr), shape=(2, 3))


@PROPERTY
@given(st.sampled_from([np.bool_, np.int8, np.int16, np.uint8, np.float32, np.float64])
       .flatmap(lambda dt: st.tuples(st.just(dt), csr_with_duplicates(dt), st.sampled_from(["csr", "coo", "csc"]))))
def test_duplicates_take_the_matrix_value_or_are_refused(case):
    """Bool: logical or (toarray()'s True); numbers: their sum where it fits the dtype, else a clear error;
    the same in every sparse format, for the kernels and for rkcore.data.normalize."""
    import pytest
    from rkcore.data import normalize
    from rkcore.kernels.numerics import canonical_csr

    dtype, X, fmt = case
    X = X.asformat(fmt)
    raw = sp.coo_matrix(X)
    exact_sum = {}
    for i, j, v in zip(raw.row, raw.col, raw.data):
        exact_sum[(i, j)] = exact_sum.get((i, j), 0) + (bool(v) if dtype == np.bool_ else Fraction(float(v)))
    if dtype == np.bool_:
        expected = X.toarray().astype(np.float64)
    else:
        with np.errstate(over="ignore"):
            native = X.toarray()
        fits = all(np.isfinite(float(native[k])) and (not np.issubdtype(dtype, np.integer) or int(native[k]) == v)
                   for k, v in exact_sum.items())
        if not fits:
            with pytest.raises(ValueError, match="stores some entries twice"):
                canonical_csr(X)
            with pytest.raises(ValueError, match="stores some entries twice"):
                normalize(X, "l2")
            return
        expected = np.zeros(X.shape)
        for (i, j), v in exact_sum.items():
            expected[i, j] = float(v)
    got = canonical_csr(X).toarray()
    # 3 ulps, or the contract's absolute floor (2^-1000) where the sum is subnormal: scipy 1.11's
    # sum_duplicates returned 0 for an exact -4.2e-314 (the floors job)
    assert np.all(np.abs(got - expected) <= 2.0**-52 * 3 * np.abs(expected) + 2.0**-1000), (got, expected)
    dense = normalize(expected, "l2")
    sparse = normalize(X, "l2").toarray()
    assert np.all(np.abs(sparse - dense) <= 8 * 2.0**-52 * (np.abs(dense) + 2.0**-1022)), (sparse, dense)
    K = all_subsets_kernel(X.astype(np.float64) if dtype == np.float64 else X)
    K_dense = all_subsets_kernel(expected)
    for i in range(2):
        for j in range(2):
            check_value("all_subsets with duplicates", K[i, j], *family_value(expected[i], expected[j],
                                                                            ItemsetFamily.all_subsets(3)))
            assert np.isinf(K_dense[i, j]) or np.isfinite(K[i, j])


def test_the_issue_duplicates():
    from rkcore.data import normalize

    twice = sp.csr_matrix((np.array([1.0, 1.0]), np.array([0, 0]), np.array([0, 2])), shape=(1, 2))
    assert normalize(twice, "l2").toarray().tolist() == [[1.0, 0.0]]
    flags = sp.csr_matrix((np.array([True, True]), np.array([0, 0]), np.array([0, 2])), shape=(1, 2))
    assert itemset_kernel(flags, flags, family=ItemsetFamily.dot(2))[0, 0] == 1.0  # True, as toarray() says


# ---------------------------------------------------------------------------- a zero factor, S beyond float64
@st.composite
def zero_factor_pairs(draw):
    """(x, y, m): some factor 1 + x_j y_j is exactly 0 (x_j = -2^k, y_j = 2^-k) next to huge products, so
    S = sum_V |prod z_V| is far beyond float64 while the up-to value of order m >= d - 1 may be 0 or
    modest; m = d gives exactly prod_j (1 + z_j) = 0."""
    d = draw(st.integers(2, 7))
    x, y = [], []
    for j in range(d):
        if j == 0 or draw(st.integers(0, 3)) == 0:
            k = draw(st.integers(-60, 60))
            x.append(-float(np.ldexp(1.0, k)))
            y.append(float(np.ldexp(1.0, -k)))
        else:
            x.append(draw(wide_values()))
            y.append(draw(st.sampled_from([1.0, -1.0, 0.5, 3.0])) * draw(st.sampled_from([1.0, 1e10, 1e300])))
    order = draw(st.permutations(range(d)))
    x, y = np.array(x)[order], np.array(y)[order]
    return x, y, draw(st.sampled_from([d, d - 1, max(1, d - 2)]))


@PROPERTY
@given(zero_factor_pairs())
def test_up_to_with_a_zero_factor_and_huge_terms(case):
    from rkcore.kernels.exact import up_to_kernel

    x, y, m = case
    family = ItemsetFamily.up_to(len(x), m)
    exact, scale = family_value(x, y, family)
    check_value(f"up_to (zero factor, m = d - {len(x) - m})", up_to_kernel(x[None], y[None], degree=m)[0, 0],
                exact, scale)
    check_value("itemset_kernel up_to (zero factor)", itemset_kernel(x[None], y[None], family=family)[0, 0],
                exact, scale)


@PROPERTY
@given(zero_factor_pairs(), st.integers(0, 2**16))
def test_rk_up_to_with_a_zero_factor_and_huge_terms(case, seed):
    from rkcore.maps.random_kernel import RandomKernel

    x, _, m = case
    x = np.where(np.abs(x) <= 2.0**60, np.sign(x), x)  # +-1 entries: a Rademacher weight makes 1 + x_j w_j = 0
    rk = RandomKernel(4, kernel="up_to", degree=m, random_state=seed).fit(x[None])
    Z = rk.transform(x[None])
    for s in range(4):
        exact, scale = family_value(x, rk.random_weights_[s], rk.family_)
        check_value("RK up_to (zero factor)", Z[0, s], exact / 2, scale / 2)


def test_the_issue_zero_factor():
    from rkcore.kernels.exact import up_to_kernel

    x = np.array([[8.34590695656473e307, 1.0, -0.2929083368171752, 1e300]])
    w = np.array([[1.0, -1.0, 1.0, -1.0]])
    assert up_to_kernel(x, w, degree=4)[0, 0] == 0.0
    assert up_to_kernel(x, w, degree=3)[0, 0] == np.inf  # 0 - z_0 z_1 z_2 z_3 = +2.4e607


# ---------------------------------------------------------------------------- K beyond float64, K / sqrt(D) inside
@st.composite
def near_overflow_rows(draw, d):
    """Rows with one to three entries in [2^1020, 2^1024) beside small ones (+-1, 2, 8, 0.5, 0): K(x, w)
    lands beyond float64 by a factor of a few while K / sqrt(D) (D = 4 .. 64) may be back inside."""
    row = []
    for _ in range(d):
        if draw(st.integers(0, 2)) == 0:
            row.append(draw(st.sampled_from([-1.0, 1.0])) * float(np.ldexp(draw(st.floats(0.5, 1.0, exclude_max=True)),
                                                                            draw(st.integers(1020, 1024)))))
        else:
            row.append(draw(st.sampled_from([0.0, 1.0, -1.0, 2.0, -2.0, 8.0, 0.5, -3.0])))
    return np.array(row)


@st.composite
def overflow_map_cases(draw):
    d = draw(st.integers(1, 5))
    kind = draw(st.sampled_from(["anova", "up_to", "dot", "all_subsets", "itemset"]))
    degree = draw(st.integers(1, d))
    family = draw(families(d)) if kind == "itemset" else None
    dist = draw(st.sampled_from(["rademacher", "gaussian", "uniform", "laplace", "gaussian-orthogonal",
                                 "rademacher-hadamard"]))
    D = draw(st.sampled_from([4, 16, 64]))  # perfect squares: 1/sqrt(D) is rational
    X = np.array([draw(near_overflow_rows(d)) for _ in range(2)])
    return X, kind, degree, family, dist, D, draw(st.integers(0, 2**16))


@PROPERTY
@given(overflow_map_cases())
def test_rk_features_where_k_overflows_but_k_over_sqrt_d_does_not(case):
    import scipy.sparse as sp

    from rkcore.maps.random_kernel import RandomKernel

    X, kind, degree, family, dist, D, seed = case
    rk = RandomKernel(D, kernel=kind, degree=degree, itemsets=family, distribution=dist, random_state=seed).fit(X)
    root = Fraction(int(round(np.sqrt(D))))
    for Xin, label in ((X, "dense"), (sp.csr_matrix(X), "CSR")):
        with np.errstate(over="ignore"):
            Z = rk.transform(Xin)
        for i in range(X.shape[0]):
            for s in range(D):
                exact, scale = family_value(X[i], rk.random_weights_[s], rk.family_)
                check_value(f"RK {rk.family_.kind} near overflow ({label})", Z[i, s], exact / root, scale / root)


def test_the_issue_overflow_features():
    from rkcore.maps.random_kernel import RandomKernel

    x = np.array([[1e308, 2.0]])
    Z = RandomKernel(4, kernel="anova", degree=2, random_state=0).fit(x).transform(x)
    assert np.isfinite(Z).all() and np.allclose(np.abs(Z), 1e308, rtol=1e-12)
    x = np.array([[1e308, 1e308, 1e308, -2.0]])
    assert np.isfinite(RandomKernel(4, kernel="dot", random_state=0).fit(x).transform(x)).all()


# ---------------------------------------------------------------------------- float32 angles past 3.4e38
BIG32, MAX32 = float(np.float32(1e37)), float(np.finfo(np.float32).max)


@PROPERTY
@given(st.integers(1, 6).flatmap(lambda d: st.lists(
    st.lists(st.sampled_from([0.0, 1.0, -0.5]) | st.floats(BIG32, MAX32, width=32).map(float)
             | st.floats(-MAX32, -BIG32, width=32).map(float), min_size=d, max_size=d), min_size=1, max_size=3)),
       st.sampled_from(["FastFood", "OrthogonalRandomFeatures", "RandomFourierPairs",
                        "StructuredOrthogonalRandomFeatures"]), st.integers(0, 2**16))
def test_fourier_maps_on_float32_near_its_largest_value(rows, name, seed):
    """Angles <w, x> past float32's range are inf there and cos(inf) is NaN; the features (cosines and sines,
    at most sqrt(2 / F) in size) are finite: such rows are computed in float64 and rounded to float32."""
    from rkcore.maps import structured

    X = np.array(rows, dtype=np.float32)
    fmap = getattr(structured, name)(n_components=8, random_state=seed).fit(X)
    Z = fmap.transform(X)
    assert Z.dtype == np.float32 and np.isfinite(Z).all(), Z
    F = 8 - fmap.n_pairs_
    assert (np.abs(Z) <= np.float32(np.sqrt(2.0 / F) * (1 + 1e-6))).all()


def test_fourier_maps_refuse_angles_past_float64():
    import pytest
    from rkcore.maps import structured

    X = np.full((1, 4), 1e308)
    for name in ("FastFood", "OrthogonalRandomFeatures", "RandomFourierPairs", "StructuredOrthogonalRandomFeatures"):
        fmap = getattr(structured, name)(n_components=8, random_state=0).fit(X)
        with pytest.raises(ValueError, match="angles"):
            fmap.transform(X)
