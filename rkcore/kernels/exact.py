"""Exact itemset kernels as Gram matrices.

Every function has the signature ``(X, Y=None, ...)``, accepts dense arrays or
scipy.sparse matrices, and returns a dense float64 array of shape
(n_samples_X, n_samples_Y). ANOVA-type kernels use the power-sum recursion
(paper eq. 12) on matrix products, so their cost is a few GEMMs of the data.
Every value meets the accuracy contract of :mod:`rkcore.kernels.numerics`.
"""
from __future__ import annotations

import numpy as np

from .anova_gram import anova_gram
from .all_subsets_gram import all_subsets_gram
from .itemsets import MAX_ENUMERATION, ItemsetFamily
from .numerics import (
    BLOCK_BYTES,
    CONTRACT_RTOL,
    UNIT_ROUNDOFF,
    _broadcast_full,
    _pair,
    check_gram_fits,
    check_array,
    closed_form_check_constants,
    elementary_from_power_sums,
    elementary_top,
    may_overflow,
    newton_is_safe,
    power_sums,
    rounding_gamma,
    row_blocks,
)
from .matrices import gram_dense
from ..base.arrays import dense
from .ranges import ranged_gram, row_exponents, scale_rows
from .stable import cross_field_pairs, custom_pairs, elementary_pairs, elementary_stable, product_one_plus
from ..base.validation import check_order, is_int

#: Names of the accuracy-contract machinery that callers import from here.
__all__ = [
    "BLOCK_BYTES", "CONTRACT_RTOL", "UNIT_ROUNDOFF", "all_subsets_kernel", "anova_kernel", "anova_newton_float",
    "check_array", "check_polynomial_parameters", "closed_form_check_constants", "cross_fields_kernel",
    "dot_kernel", "elementary_from_power_sums", "elementary_pairs", "elementary_stable", "elementary_top",
    "explicit_features", "itemset_kernel", "itemset_support", "may_overflow", "newton_is_safe",
    "polynomial_kernel", "power_sums", "product_one_plus", "rounding_gamma", "row_blocks", "up_to_kernel",
]

# ---------------------------------------------------------------------- named kernels
def anova_kernel(X, Y=None, degree: int = 2) -> np.ndarray:
    """ANOVA kernel of order m: sum over j_1 < ... < j_m of prod x_{j_k} y_{j_k} (paper eq. 2).

    Cost: ``degree`` matrix products plus element-wise work, O(n_X n_Y d m); K(X, X) (Y=None)
    computes the upper triangle and mirrors it.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        The rows x: finite real numbers, dense or sparse (sparse input is read through a canonical
        copy: duplicates summed); never modified.
    Y : {array-like, sparse matrix} of shape (n_samples_Y, n_features), optional
        The rows y; None: K(X, X) (symmetric, computed once per pair).
    degree : int, default=2
        The order m, between 0 and n_features (0 gives all ones).

    Returns
    -------
    ndarray of shape (n_samples_X, n_samples_Y)
        float64, every value within the accuracy contract of :mod:`rkcore.kernels.numerics`:
        CONTRACT_RTOL * sum_V |prod_{j in V} x_j y_j| + 2^-1022 of the exact value, +-inf only
        where the exact value exceeds float64.
        Exactly 0.0 where fewer than m products x_j y_j are non-zero.

    Raises
    ------
    ValueError
        For invalid data (not finite, ragged, complex, feature counts that differ) or an order out
        of range.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.kernels import anova_kernel
    >>> anova_kernel(np.array([[1.0, 2.0, 3.0]]), np.array([[1.0, 1.0, 1.0]]), degree=2)
    array([[11.]])
    """
    symmetric = Y is None or Y is X
    X, Y = _pair(X, Y, gram_copies=None)  # priced below, by degree
    check_order(degree, X.shape[1], allow_zero=True, bound=f"the number of features ({X.shape[1]})")
    check_gram_fits(X.shape[0], Y.shape[0], _anova_gram_copies(degree))
    if degree == 0:
        return np.ones((X.shape[0], Y.shape[0]))
    return ranged_gram(X, Y, degree, lambda A, B, sym: anova_gram(A, B, degree, symmetric=sym), symmetric=symmetric)


def up_to_kernel(X, Y=None, degree: int = 2) -> np.ndarray:
    """Sum of the ANOVA kernels of orders 0..m (itemsets of size at most m).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        The rows x: finite real numbers, dense or sparse (sparse input is read through a canonical
        copy: duplicates summed); never modified.
    Y : {array-like, sparse matrix} of shape (n_samples_Y, n_features), optional
        The rows y; None: K(X, X) (symmetric, computed once per pair).
    degree : int, default=2
        The largest order m, between 0 and n_features.

    Returns
    -------
    ndarray of shape (n_samples_X, n_samples_Y)
        float64, every value within the accuracy contract of :mod:`rkcore.kernels.numerics`:
        CONTRACT_RTOL * sum_V |prod_{j in V} x_j y_j| + 2^-1022 of the exact value, +-inf only
        where the exact value exceeds float64.

    Raises
    ------
    ValueError
        For invalid data or an order out of range.
    """
    symmetric = Y is None or Y is X
    X, Y = _pair(X, Y, gram_copies=None)  # priced below, by degree
    check_order(degree, X.shape[1], allow_zero=True, bound=f"the number of features ({X.shape[1]})")
    check_gram_fits(X.shape[0], Y.shape[0], _anova_gram_copies(degree))
    if degree == 0:
        return np.ones((X.shape[0], Y.shape[0]))
    return ranged_gram(X, Y, degree, lambda A, B, sym: anova_gram(A, B, degree, summed=True, symmetric=sym),
                       mode="sum", symmetric=symmetric)


def _anova_gram_copies(degree: int) -> int:
    """Gram-sized arrays the ANOVA and up-to engines hold at their peak, priced 3 (m + 1): tracemalloc measured
    up to 2.5 (m + 1) at n = 1,600-2,400, d = 10-40 (up-to of order 8 on rows scaled by 1e150, the
    range-checked path, is the worst: 21 Gram matrices beyond a fixed 240 MB of blocks)."""
    return 3 * (int(degree) + 1)


def dot_kernel(X, Y=None) -> np.ndarray:
    """The standard dot product <x, y> (itemsets = singletons).

    One GEMM, its error at most gamma_d sum_j |x_j y_j| (no cancellation to fear); rows scaled by
    powers of two where a product could overflow or underflow (rkcore.kernels.ranges).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        The rows x: finite real numbers, dense or sparse (sparse input is read through a canonical
        copy: duplicates summed); never modified.
    Y : {array-like, sparse matrix} of shape (n_samples_Y, n_features), optional
        The rows y; None: K(X, X) (symmetric, computed once per pair).

    Returns
    -------
    ndarray of shape (n_samples_X, n_samples_Y)
        float64, every value within the accuracy contract of :mod:`rkcore.kernels.numerics`:
        CONTRACT_RTOL * sum_V |prod_{j in V} x_j y_j| + 2^-1022 of the exact value, +-inf only
        where the exact value exceeds float64.
    """
    X, Y = _pair(X, Y)
    return ranged_gram(X, Y, 1, lambda A, B, sym: gram_dense(A, B))


def all_subsets_kernel(X, Y=None) -> np.ndarray:
    """All-subsets kernel prod_j (1 + x_j y_j) (paper eq. 3), in row blocks of bounded memory.

    Products that overflow on the way (a huge factor before a small one, or x_j y_j itself
    beyond float64) are recomputed in log space: inf only where the exact value is.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        The rows x: finite real numbers, dense or sparse (sparse input is read through a canonical
        copy: duplicates summed); never modified.
    Y : {array-like, sparse matrix} of shape (n_samples_Y, n_features), optional
        The rows y; None: K(X, X) (symmetric, computed once per pair).

    Returns
    -------
    ndarray of shape (n_samples_X, n_samples_Y)
        float64, within the accuracy contract of :mod:`rkcore.kernels.numerics` (scale
        prod_j (1 + |x_j y_j|)); inf only where the exact value exceeds float64.
    """
    symmetric = Y is None or Y is X
    X, Y = _pair(X, Y)
    out = np.empty((X.shape[0], Y.shape[0]))
    # grouped GEMMs / direct products (fastpaths); both are accurate to the contract where
    # finite (sums of non-negative terms, or (1 + x_j y_j) factors one by one), but a product
    # can overflow on the way (phi_G(x) with huge x against tiny y, inf * 0): those entries
    # are recomputed in log space.
    with np.errstate(over="ignore", invalid="ignore"):
        all_subsets_gram(X, Y, out, symmetric=symmetric)
    bad = ~np.isfinite(out)
    if bad.any():
        r, c = np.nonzero(bad)
        for sl in row_blocks(len(r), 8 * 8 * X.shape[1]):  # (pairs x d) temporaries, bounded
            out[r[sl], c[sl]] = product_one_plus(dense(X[r[sl]], dtype=None), dense(Y[c[sl]], dtype=None))
    return out


def polynomial_kernel(X, Y=None, degree: int = 2, c: float = 1.0) -> np.ndarray:
    """Polynomial kernel (c + <x, y>)^m; c = 0 gives the homogeneous kernel <x, y>^m.

    m must be an integer >= 0 and c a finite number >= 0: otherwise (c + <x, y>)^m is not
    a positive semi-definite kernel (and can be NaN). Not an itemset kernel: :func:`dot_kernel`
    plus c, raised to the m-th power in float64 (where c + <x, y> cancels, its relative error
    can be large).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        The rows x: finite real numbers, dense or sparse (sparse input is read through a canonical
        copy: duplicates summed); never modified.
    Y : {array-like, sparse matrix} of shape (n_samples_Y, n_features), optional
        The rows y; None: K(X, X) (symmetric, computed once per pair).
    degree : int, default=2
        The order m, >= 0.
    c : float, default=1.0
        The offset, finite and >= 0.

    Returns
    -------
    ndarray of shape (n_samples_X, n_samples_Y)
        (c + <x, y>)^m, float64.

    Raises
    ------
    ValueError
        For invalid data, a non-integer or negative order, or an offset that is negative or not
        finite.
    """
    check_polynomial_parameters(degree, c)
    return (c + dot_kernel(X, Y)) ** degree


def check_polynomial_parameters(degree, c) -> None:
    """Refuse orders and offsets for which (c + <x, y>)^m is not a kernel.

    Parameters
    ----------
    degree : object
        The order m: must be an integer >= 0 (bool and 2.0 are refused).
    c : object
        The offset: must be a finite real number >= 0.

    Raises
    ------
    ValueError
        Naming the parameter and what is allowed.
    """
    if not is_int(degree) or degree < 0:
        raise ValueError(f"degree={degree!r} is not allowed: the polynomial kernel needs an integer order >= 0.")
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, float, np.integer, np.floating)) \
            or not np.isfinite(c) or c < 0:
        raise ValueError(f"c={c!r} is not allowed: the polynomial kernel's offset must be a finite number >= 0.")


def explicit_features(X, family: ItemsetFamily, max_features: int = MAX_ENUMERATION) -> np.ndarray:
    """phi_S(x): one column prod_{j in V} x_j per itemset V, in ``family.enumerate()`` order.

    Each product is formed in float64 (|V| - 1 roundings; no range scaling: a product may
    overflow or underflow).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The rows x (validated; sparse rows are densified).
    family : ItemsetFamily
        The family S, over n_features features.
    max_features : int, default=MAX_ENUMERATION
        The most columns allowed.

    Returns
    -------
    ndarray of shape (n_samples, |S|)
        phi_S(x), float64; the empty itemset gives a column of ones.

    Raises
    ------
    ValueError
        For invalid data, a family over another d, or more than ``max_features`` itemsets (the
        matrix would be too big).
    """
    X = check_array(X)
    _check_family_d(family, X.shape[1])
    if family.n_itemsets > max_features:
        raise ValueError(
            f"explicit_features: the family has {family.n_itemsets_text} itemsets, more than the "
            f"{max_features:,} columns allowed; use itemset_kernel, which never lists them."
        )
    itemsets = family.enumerate(limit=max_features)
    Xd = dense(X, dtype=None)
    n = Xd.shape[0]
    out = np.empty((n, len(itemsets)))
    col = 0
    by_size: dict[int, list] = {}
    for v in itemsets:
        by_size.setdefault(len(v), []).append(v)
    # itemsets are ordered by size, so each size fills a contiguous block of columns
    for size, group in by_size.items():
        stop = col + len(group)
        if size == 0:
            out[:, col:stop] = 1.0
        else:
            idx = np.asarray(group, dtype=np.intp)  # (n_group, size)
            for rows in row_blocks(n, 8 * idx.size):
                out[rows, col:stop] = Xd[rows][:, idx].prod(axis=2)
        col = stop
    return out


def _check_family_d(family: ItemsetFamily, d: int) -> None:
    if not isinstance(family, ItemsetFamily):
        raise ValueError(f"family must be an ItemsetFamily, got {type(family).__name__}.")
    if family.d != d:
        raise ValueError(f"The itemset family is defined over d={family.d} features but the data has {d}.")


def cross_fields_kernel(X, Y, family: ItemsetFamily) -> np.ndarray:
    """e_m of the per-field dot products g_F = <x_F, y_F>: one GEMM per field, then the
    stable recursion e_k <- e_k + g_F e_{k-1} over the (few) fields.

    Accuracy contract: the recursion has no cancellation beyond rounding, so the error is a
    small multiple of gamma_d * sum_V |prod_{j in V} x_j y_j|; out of float range, rows are
    scaled by powers of two and the pairs still out of range are recomputed in (mantissa,
    exponent) form (:func:`rkcore.kernels.ranges.ranged_gram`, :func:`cross_field_pairs`).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        The rows x: finite real numbers, dense or sparse (sparse input is read through a canonical
        copy: duplicates summed); never modified.
    Y : {array-like, sparse matrix} of shape (n_samples_Y, n_features), optional
        The rows y; None: K(X, X) (symmetric, computed once per pair).
    family : ItemsetFamily
        A cross-field family (:meth:`ItemsetFamily.cross_fields`) over n_features features.

    Returns
    -------
    ndarray of shape (n_samples_X, n_samples_Y)
        float64, every value within the accuracy contract of :mod:`rkcore.kernels.numerics`:
        CONTRACT_RTOL * sum_V |prod_{j in V} x_j y_j| + 2^-1022 of the exact value, +-inf only
        where the exact value exceeds float64.

    Raises
    ------
    ValueError
        For invalid data or a family over another d.
    """
    X, Y = _pair(X, Y)
    _check_family_d(family, X.shape[1])
    fields = [np.asarray(f, dtype=np.intp) for f in family.field_groups]
    m = family.order
    return ranged_gram(X, Y, m, lambda A, B, sym: _cross_fields_gram(A, B, fields, m),
                       fallback=lambda A, B, r, c: cross_field_pairs(A, B, r, c, fields, m))


def _cross_fields_gram(X, Y, fields: list, m: int) -> np.ndarray:
    e = [np.ones((X.shape[0], Y.shape[0]))] + [np.zeros((X.shape[0], Y.shape[0])) for _ in range(m)]
    for n_done, f in enumerate(fields, start=1):
        g = gram_dense(X[:, f], Y[:, f])
        for k in range(min(n_done, m), 0, -1):
            e[k] += g * e[k - 1]
    return e[m]


def row_power_of_two_scale(A):
    """(exponents E_i, A_i * 2^-E_i) with max_j |A_ij 2^-E_i| in [0.5, 1): an exact scaling.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix of shape (n, d)
        Dense or canonical CSR.

    Returns
    -------
    E : ndarray of shape (n,), int64
        The frexp exponent of each row's largest |a| (0 for a row without non-zeros).
    scaled : ndarray or scipy.sparse matrix of shape (n, d)
        A with row i multiplied by 2^-E_i: exact, since only exponents change.
    """
    E = row_exponents(A)[1]
    return E, scale_rows(A, E)


def itemset_support(X, Y, family: ItemsetFamily) -> np.ndarray:
    """Boolean (n_X, n_Y): whether some itemset V of the family has x_j y_j != 0 for all j in V.

    Decided combinatorially from the non-zero patterns (counts of shared non-zeros), so it
    does not depend on rounding or blocking: outside it K_S is exactly 0 (and is returned
    as 0.0 by the kernels here); inside it K_S is usually, not always, non-zero (signed
    terms can cancel).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        The rows x: finite real numbers, dense or sparse (sparse input is read through a canonical
        copy: duplicates summed); never modified.
    Y : {array-like, sparse matrix} of shape (n_samples_Y, n_features), optional
        The rows y; None: K(X, X) (symmetric, computed once per pair).
    family : ItemsetFamily
        The family S, over n_features features.

    Returns
    -------
    ndarray of shape (n_samples_X, n_samples_Y), bool
        True where some itemset's products are all non-zero.

    Raises
    ------
    ValueError
        For invalid data or a family over another d.
    """
    X, Y = _pair(X, Y)
    _check_family_d(family, X.shape[1])
    shape = (X.shape[0], Y.shape[0])
    B = (X != 0).astype(np.float64)
    C = (Y != 0).astype(np.float64)
    kind = family.kind
    if kind in ("up_to", "all_subsets"):  # the empty itemset is in the family
        return np.ones(shape, dtype=bool)
    if kind in ("anova", "dot"):
        return gram_dense(B, C) >= (family.order if kind == "anova" else 1)
    if kind == "cross_fields":
        hits = sum(((gram_dense(B[:, list(f)], C[:, list(f)]) >= 1).astype(np.int64) for f in family.field_groups),
                   start=np.zeros(shape, dtype=np.int64))
        return hits >= family.order
    if () in family.custom_itemsets:
        return np.ones(shape, dtype=bool)
    return gram_dense(explicit_features(B, family), explicit_features(C, family)) > 0


def anova_newton_float(X, Y, degree: int) -> np.ndarray:
    """The paper's eq. 12 as plain floating point (power sums, Newton's identities), without
    the accuracy contract: only for reproducing protocols that depend on its rounding
    (``error_study(pairs="nonzero_float")``). Implementation-dependent; do not use for values.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        The rows x.
    Y : {array-like, sparse matrix} of shape (n_samples_Y, n_features)
        The rows y.
    degree : int
        The order m, >= 1.

    Returns
    -------
    ndarray of shape (n_samples_X, n_samples_Y)
        e_m by Newton's identities in float64, unchecked: it may cancel catastrophically, overflow
        or be NaN (no accuracy contract).
    """
    X, Y = _pair(X, Y)
    return _broadcast_full(elementary_top(power_sums(X, Y, degree), degree), (X.shape[0], Y.shape[0]))


def itemset_kernel(X, Y=None, family: ItemsetFamily | None = None) -> np.ndarray:
    """K_S(x, y) = sum_{V in S} prod_{j in V} x_j y_j (paper eq. 4) for any family S.

    Named families take their fast path; cross-field families use per-field
    products; custom families go through the explicit features phi_S.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        The rows x: finite real numbers, dense or sparse (sparse input is read through a canonical
        copy: duplicates summed); never modified.
    Y : {array-like, sparse matrix} of shape (n_samples_Y, n_features), optional
        The rows y; None: K(X, X) (symmetric, computed once per pair).
    family : ItemsetFamily
        The family S, over n_features features (required).

    Returns
    -------
    ndarray of shape (n_samples_X, n_samples_Y)
        float64, every value within the accuracy contract of :mod:`rkcore.kernels.numerics`:
        CONTRACT_RTOL * sum_V |prod_{j in V} x_j y_j| + 2^-1022 of the exact value, +-inf only
        where the exact value exceeds float64.

    Raises
    ------
    ValueError
        Without a family, for a family over another d, or for invalid data.
    """
    if family is None:
        raise ValueError("itemset_kernel needs family=: an ItemsetFamily (see rkcore.kernels.itemsets).")
    X, Y = _pair(X, Y)
    _check_family_d(family, X.shape[1])
    kind = family.kind
    if kind == "anova":
        return anova_kernel(X, Y, family.order)
    if kind == "up_to":
        return up_to_kernel(X, Y, family.order)
    if kind == "dot":
        return dot_kernel(X, Y)
    if kind == "all_subsets":
        return all_subsets_kernel(X, Y)
    if kind == "cross_fields":
        return cross_fields_kernel(X, Y, family)
    return _custom_gram(X, Y, family)


def _custom_gram(X, Y, family: ItemsetFamily) -> np.ndarray:
    """<phi_S(x), phi_S(y)>: a dot product of |S| products, error at most gamma_|S| times the
    contract scale where every product is in float range; the other pairs exactly
    (:func:`rkcore.kernels.stable.custom_pairs`)."""
    width = max((len(v) for v in family.custom_itemsets), default=0)
    if width == 0:
        return gram_dense(explicit_features(X, family), explicit_features(Y, family))
    itemsets = family.enumerate()
    return ranged_gram(X, Y, width, lambda A, B, sym: gram_dense(explicit_features(A, family), explicit_features(B, family)),
                       mode="plain", fallback=lambda A, B, r, c: custom_pairs(A, B, r, c, itemsets))
