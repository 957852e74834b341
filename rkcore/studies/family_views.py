"""Itemset families as tables: counts by size, the first itemsets, explicit features phi_S, a
kernel-vs-inner-product check, and restricting a family to the first features (no streamlit here)."""
from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import combinations, islice, product

import numpy as np
import pandas as pd

from ..base.arrays import dense
from ..kernels.itemsets import ORDERED_KERNELS, ItemsetFamily
from ..kernels.exact import explicit_features, itemset_kernel

def family_counts(family: ItemsetFamily) -> pd.DataFrame:
    """Itemsets per size: columns ``size``, ``count`` (float; inf beyond ~1.8e308),
    ``log10_count`` (always finite) and ``count_text`` (exact up to 2^EXACT_COUNT_BITS, else "≈ 1.23 × 10^456").

    Works for any d: the counts come from :meth:`ItemsetFamily.log2_counts_by_size`, and exact
    integers are used only where :meth:`ItemsetFamily.counts_by_size` has them.

    Parameters
    ----------
    family : ItemsetFamily
        The itemset family S.

    Returns
    -------
    pandas.DataFrame
        One row per itemset size.
    """
    from ..kernels.itemsets import format_count

    log2 = family.log2_counts_by_size()
    sizes = np.fromiter(log2.keys(), dtype=np.int64, count=len(log2))
    log2_counts = np.fromiter(log2.values(), dtype=np.float64, count=len(log2))
    exact = family.counts_by_size()  # ints where cheap (up to 2^EXACT_COUNT_BITS), inf beyond
    with np.errstate(over="ignore"):
        count = np.exp2(log2_counts)
    small = [i for i, k in enumerate(sizes.tolist()) if exact[k] != math.inf and log2_counts[i] < 1000]
    count[small] = [float(exact[int(sizes[i])]) for i in small]  # exact where a float holds it
    return pd.DataFrame({
        "size": sizes,
        "count": count,
        "log10_count": log2_counts * np.log10(2.0),
        "count_text": [format_count(exact[k], l2, exact_digits=1300) for k, l2 in zip(sizes.tolist(), log2_counts.tolist())],
    })


def itemset_label(itemset, feature_names=None) -> str:
    """"x0·x3" (or the feature names) for an itemset; "∅" for the empty set.

    Parameters
    ----------
    itemset : sequence of int
        Feature indices of the itemset.
    feature_names : sequence or None, default None
        Names of the features by index; None for x0, x1, ...

    Returns
    -------
    str
        The label.
    """
    if not itemset:
        return "∅"
    if feature_names is None:
        return "·".join(f"x{j}" for j in itemset)
    return "·".join(str(feature_names[j]) for j in itemset)


def family_listing(family: ItemsetFamily, limit: int = 200, feature_names=None) -> pd.DataFrame:
    """The first ``limit`` itemsets of the family: columns ``size``, ``itemset`` (indices), ``features``.

    Parameters
    ----------
    family : ItemsetFamily
        The itemset family S.
    limit : int, default 200
        Most itemsets listed.
    feature_names : sequence or None, default None
        Names of the features by index, for the ``features`` column; None for x0, x1, ...

    Returns
    -------
    pandas.DataFrame
        One row per listed itemset.
    """
    if family.n_itemsets > 200_000:  # enumerate() refuses beyond its limit; list only the head
        sets: list[tuple[int, ...]] = []
        for size in family.counts_by_size():
            if len(sets) >= limit:
                break
            sets.extend(_head_of_size(family, size, limit - len(sets)))
    else:
        sets = family.enumerate()[:limit]
    return pd.DataFrame({
        "size": [len(v) for v in sets],
        "itemset": ["{" + ", ".join(map(str, v)) + "}" for v in sets],
        "features": [itemset_label(v, feature_names) for v in sets],
    })


def _head_of_size(family: ItemsetFamily, size: int, limit: int) -> list[tuple[int, ...]]:
    gen: Iterator[tuple[int, ...]]
    if family.kind == "cross_fields":
        assert family.fields is not None  # a cross-fields family always has its fields
        gen = (tuple(sorted(v)) for chosen in combinations(family.fields, size) for v in product(*chosen))
    else:
        gen = combinations(range(family.d), size)
    return list(islice(gen, limit))


def restrict_family(family: ItemsetFamily, d_new: int) -> ItemsetFamily:
    """The itemsets of ``family`` that use only features 0..d_new-1, as a family over d_new features.

    Parameters
    ----------
    family : ItemsetFamily
        The itemset family S.
    d_new : int
        Number of features kept; ``family`` itself is returned when it is at least ``family.d``.

    Returns
    -------
    ItemsetFamily
        The restricted family (ValueError when no itemset, or too few fields, remain).
    """
    if d_new >= family.d:
        return family
    if family.kind in ORDERED_KERNELS:
        assert family.degree is not None  # ANOVA and up-to-m families always have their order
        return getattr(ItemsetFamily, family.kind)(d_new, min(family.degree, d_new))
    if family.kind in ("all_subsets", "dot"):
        return family.with_d(d_new)
    if family.kind == "cross_fields":
        assert family.fields is not None and family.degree is not None  # a cross-fields family has both
        fields = [tuple(j for j in f if j < d_new) for f in family.fields]
        fields = [f for f in fields if f]
        if len(fields) < max(2, family.degree):
            raise ValueError(
                f"Restricted to the first {d_new} features, only {len(fields)} field(s) remain, "
                f"fewer than the itemset size m={family.degree}.")
        return ItemsetFamily.cross_fields(fields, family.degree, d_new)
    assert family.itemsets is not None  # every other (custom) family lists its itemsets
    kept = [v for v in family.itemsets if all(j < d_new for j in v)]
    if not kept:
        raise ValueError(f"No itemset of the family uses only the first {d_new} features.")
    return ItemsetFamily.custom(d_new, kept)


def explicit_view_family(family: ItemsetFamily, max_itemsets: int = 4096, d_cap: int | None = None) -> ItemsetFamily:
    """The family restricted to the first d' <= d features so that phi_S fits in ``max_itemsets`` columns.

    d' is the largest value <= min(d, d_cap) whose restricted family is small enough;
    returns the family itself when it already fits (and d <= d_cap).

    Parameters
    ----------
    family : ItemsetFamily
        The itemset family S.
    max_itemsets : int, default 4096
        Most itemsets (columns of phi_S) allowed.
    d_cap : int or None, default None
        Most features kept; None for no cap beyond d.

    Returns
    -------
    ItemsetFamily
        The family over d' features (ValueError when no restriction is small enough).
    """
    d_max = family.d if d_cap is None else min(family.d, d_cap)
    if d_max == family.d and family.n_itemsets <= max_itemsets:
        return family
    for d_new in range(d_max, 0, -1):
        try:
            sub = restrict_family(family, d_new)
        except ValueError:
            continue
        if sub.n_itemsets <= max_itemsets:
            return sub
    raise ValueError(f"No restriction of the family {family.describe()} to its first features has "
                     f"at most {max_itemsets} itemsets.")


def explicit_feature_table(X, family: ItemsetFamily, rows: int = 5, max_columns: int = 16,
                           feature_names=None) -> pd.DataFrame:
    """phi_S(x) = (prod_{j in V} x_j)_{V in S} for the first ``rows`` points, first ``max_columns`` itemsets.

    Columns are named by :func:`itemset_label`; the index is the row number of X.
    X must have exactly ``family.d`` columns (slice it first for a restricted family).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, family.d)
        The points.
    family : ItemsetFamily
        The itemset family S.
    rows : int, default 5
        Number of points shown.
    max_columns : int, default 16
        Number of itemsets (columns) shown.
    feature_names : sequence or None, default None
        Names of the features by index, for the column labels; None for x0, x1, ...

    Returns
    -------
    pandas.DataFrame
        The feature values, one row per point and one column per itemset.
    """
    X_rows = dense(X[:rows])
    itemsets = family.enumerate()[:max_columns]
    # the first columns of phi_S are phi of the sub-family made of the first itemsets
    phi = explicit_features(X_rows, ItemsetFamily.custom(family.d, itemsets))
    return pd.DataFrame(phi, columns=[itemset_label(v, feature_names) for v in itemsets],
                        index=pd.RangeIndex(len(X_rows), name="point"))


def kernel_check(X, family: ItemsetFamily, n_pairs: int = 6, random_state: int = 0) -> pd.DataFrame:
    """K_S(x_i, x_j) from the kernel formula next to <phi_S(x_i), phi_S(x_j)> from the explicit map.

    Columns: i, j, kernel, inner_product, difference. The pairs are seeded and include
    one diagonal pair (i = j).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, family.d)
        The points.
    family : ItemsetFamily
        The itemset family S.
    n_pairs : int, default 6
        Number of point pairs compared.
    random_state : int, default 0
        Seed of the pair choice.

    Returns
    -------
    pandas.DataFrame
        One row per pair.
    """
    Xd = dense(X)
    n = Xd.shape[0]
    rng = np.random.RandomState(random_state)
    i = rng.randint(0, n, size=n_pairs)
    j = rng.randint(0, n, size=n_pairs)
    j[0] = i[0]
    K = itemset_kernel(Xd[i], Xd[j], family=family).diagonal()  # K(x_i[k], x_j[k]) for each pair k
    phi_i, phi_j = explicit_features(Xd[i], family), explicit_features(Xd[j], family)
    inner = np.einsum("kf,kf->k", phi_i, phi_j)
    return pd.DataFrame({"i": i, "j": j, "kernel": K, "inner_product": inner, "difference": inner - K})
