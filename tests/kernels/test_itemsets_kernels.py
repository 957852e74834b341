"""Itemset families and exact kernels, tested against brute-force enumeration (paper eq. 4)."""
from itertools import combinations
from math import comb

import numpy as np
import pytest
import scipy.sparse as sp

from rkcore import ItemsetFamily, explicit_features, itemset_kernel
from rkcore.kernels import exact as K


def brute_force_kernel(X, Y, itemsets):
    """sum over V in S of prod_{j in V} x_j y_j, by explicit loops over the itemsets."""
    out = np.zeros((X.shape[0], Y.shape[0]))
    for V in itemsets:
        V = list(V)
        out += np.outer(np.prod(X[:, V], axis=1), np.prod(Y[:, V], axis=1))
    return out


def all_subsets_list(d):
    return [V for k in range(d + 1) for V in combinations(range(d), k)]


def families(d):
    return [
        (ItemsetFamily.anova(d, 1), list(combinations(range(d), 1))),
        (ItemsetFamily.anova(d, 2), list(combinations(range(d), 2))),
        (ItemsetFamily.anova(d, 3), list(combinations(range(d), 3))),
        (ItemsetFamily.anova(d, d), [tuple(range(d))]),
        (ItemsetFamily.all_subsets(d), all_subsets_list(d)),
        (ItemsetFamily.dot(d), [(j,) for j in range(d)]),
        (ItemsetFamily.up_to(d, 2), [V for V in all_subsets_list(d) if len(V) <= 2]),
        (ItemsetFamily.up_to(d, 0), [()]),
        (ItemsetFamily.custom(d, [(0, 2), (1,), (0, 1, 3), ()]), [(0, 2), (1,), (0, 1, 3), ()]),
        (ItemsetFamily.cross_fields([(0, 1), (2, 3), (4, 5)], m=2, d=d),
         [(a, b) for f, g in combinations([(0, 1), (2, 3), (4, 5)], 2) for a in f for b in g]),
        (ItemsetFamily.cross_fields([(0, 1), (2, 3), (4, 5)], m=3, d=d),
         [(a, b, c) for a in (0, 1) for b in (2, 3) for c in (4, 5)]),
    ]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("case", range(11))
def test_exact_kernel_equals_brute_force(case, seed):
    rng = np.random.RandomState(seed)
    d = 7
    family, listing = families(d)[case]
    X, Y = rng.uniform(-1.5, 1.5, (6, d)), rng.uniform(-1.5, 1.5, (5, d))
    expected = brute_force_kernel(X, Y, listing)
    scale = np.abs(expected).max()
    for A, B in [(X, Y), (sp.csr_matrix(X), sp.csr_matrix(Y))]:
        got = itemset_kernel(A, B, family=family)
        assert got.dtype == np.float64 and got.shape == (6, 5)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10 * scale)
    # Y=None means the Gram of X with itself
    np.testing.assert_allclose(itemset_kernel(X, family=family), brute_force_kernel(X, X, listing),
                               rtol=1e-10, atol=1e-10 * scale)
    # counts and enumeration agree with the brute-force listing
    assert family.n_itemsets == len(listing)
    assert sorted(family.enumerate()) == sorted(tuple(sorted(V)) for V in listing)
    sizes = {}
    for V in listing:
        sizes[len(V)] = sizes.get(len(V), 0) + 1
    assert family.counts_by_size() == sizes


@pytest.mark.parametrize("case", range(11))
def test_explicit_features_inner_product(case):
    rng = np.random.RandomState(5)
    family, listing = families(7)[case]
    X = rng.randn(4, 7)
    Phi = explicit_features(X, family)
    assert Phi.shape == (4, len(listing))
    np.testing.assert_allclose(Phi @ Phi.T, brute_force_kernel(X, X, listing), rtol=1e-10, atol=1e-10)


def test_named_kernel_functions():
    rng = np.random.RandomState(0)
    X, Y = rng.randn(5, 6), rng.randn(3, 6)
    np.testing.assert_allclose(K.anova_kernel(X, Y, degree=2), brute_force_kernel(X, Y, combinations(range(6), 2)))
    np.testing.assert_allclose(K.all_subsets_kernel(X, Y), brute_force_kernel(X, Y, all_subsets_list(6)))
    np.testing.assert_allclose(K.all_subsets_kernel(X, Y), np.prod(1 + X[:, None] * Y[None], axis=2))
    np.testing.assert_allclose(K.dot_kernel(X, Y), X @ Y.T)
    np.testing.assert_allclose(K.polynomial_kernel(X, Y, 3, 1.0), (1 + X @ Y.T) ** 3)
    np.testing.assert_allclose(K.anova_kernel(X, Y, degree=0), np.ones((5, 3)))


def test_counts_are_combinatorial_for_huge_families():
    """Counting never enumerates: d = 10,000 works instantly, enumeration refuses clearly."""
    fam = ItemsetFamily.anova(10_000, 3)
    assert fam.n_itemsets == comb(10_000, 3)
    assert ItemsetFamily.all_subsets(200).n_itemsets == 2**200
    assert ItemsetFamily.cross_fields([range(0, 100), range(100, 300), range(300, 310)], m=2).n_itemsets == \
        100 * 200 + 100 * 10 + 200 * 10
    with pytest.raises(ValueError, match="more than the limit"):
        fam.enumerate()
    with pytest.raises(ValueError, match="explicit_features"):
        explicit_features(np.ones((2, 40)), ItemsetFamily.all_subsets(40))


def test_family_descriptions():
    for fam, _ in families(7):
        assert isinstance(fam.describe(), str) and fam.describe()
        assert "\\" in fam.latex()  # LaTeX source for st.latex
    assert "2^7" in ItemsetFamily.all_subsets(7).describe()


def test_family_is_immutable_and_hashable():
    fam = ItemsetFamily.custom(4, [(1, 0), (2,)])
    with pytest.raises(Exception):
        fam.d = 5
    assert hash(fam) == hash(ItemsetFamily.custom(4, [(0, 1), (2,)]))
    assert fam.itemsets == ((2,), (0, 1))


@pytest.mark.parametrize(
    "build,match",
    [
        (lambda: ItemsetFamily.anova(5, 0), "between 1 and d=5"),
        (lambda: ItemsetFamily.anova(5, 6), "between 1 and d=5"),
        (lambda: ItemsetFamily.anova(0, 1), "d \\(the number of features\\)"),
        (lambda: ItemsetFamily.custom(3, [(0, 3)]), "out of range: allowed indices are 0..2"),
        (lambda: ItemsetFamily.custom(3, [(0, 1), (1, 0)]), "more than once"),
        (lambda: ItemsetFamily.custom(3, [(1, 1)]), "repeats a feature"),
        (lambda: ItemsetFamily.custom(3, []), "empty"),
        (lambda: ItemsetFamily.custom(3, [("a",)]), "integer feature indices"),
        (lambda: ItemsetFamily.cross_fields([(0, 1), (1, 2)]), "overlap"),
        (lambda: ItemsetFamily.cross_fields([(0, 1)]), "at least two"),
        (lambda: ItemsetFamily.cross_fields([(0,), (1,)], m=3), "at most the number of fields"),
    ],
)
def test_family_validation(build, match):
    with pytest.raises(ValueError, match=match):
        build()


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: K.anova_kernel(np.array([[np.nan, 1.0]])), "NaN"),
        (lambda: K.anova_kernel(np.ones((2, 3)), np.ones((2, 4))), "features"),
        (lambda: K.anova_kernel(np.ones((2, 3)), degree=4), "between 0 and the number of features \\(3\\)"),
        (lambda: K.dot_kernel(np.array([["a", "b"]])), "numeric"),
        (lambda: K.dot_kernel(np.ones(3)), "2-D"),
        (lambda: itemset_kernel(np.ones((2, 3)), family=ItemsetFamily.dot(4)), "d=4"),
        (lambda: itemset_kernel(np.ones((2, 3))), "family"),
    ],
)
def test_kernel_input_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_all_subsets_kernel_blocks(monkeypatch):
    """Row blocking of the all-subsets Gram is invisible in the result."""
    rng = np.random.RandomState(0)
    X = rng.randn(50, 5)
    full = K.all_subsets_kernel(X)
    monkeypatch.setattr(K, "BLOCK_BYTES", 1)
    blocks = list(K.row_blocks(50, 8 * 50 * 5, budget=1))
    assert len(blocks) == 50
    np.testing.assert_allclose(K.all_subsets_kernel(X), full, rtol=1e-13)


@pytest.mark.parametrize("degree", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("even_as_column", [False, True])
def test_elementary_top_equals_the_recursion(degree, even_as_column):
    """The closed forms for e_2, e_3 (and the fallback) agree with Newton's recursion, also when the
    even power sums are columns that broadcast (Rademacher weights)."""
    rng = np.random.RandomState(degree)
    P = [None] + [rng.randn(7, 1) if even_as_column and t % 2 == 0 else rng.randn(7, 5) for t in range(1, degree + 1)]
    expected = K.elementary_from_power_sums([None if p is None else p.copy() for p in P], degree)[degree]
    np.testing.assert_allclose(np.broadcast_to(K.elementary_top(P, degree), (7, 5)), expected, rtol=1e-12, atol=1e-12)
