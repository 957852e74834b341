"""Exact itemset kernels as Gram matrices.

Every function has the signature ``(X, Y=None, ...)``, accepts dense arrays or
scipy.sparse matrices, and returns a dense float64 array of shape
(n_samples_X, n_samples_Y). ANOVA-type kernels use the power-sum recursion
(paper eq. 12) on matrix products, so their cost is a few GEMMs of the data.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np
import scipy.sparse as sp

from .fastpaths import all_subsets_gram, anova_gram
from .itemsets import MAX_ENUMERATION, ItemsetFamily

#: Bytes of temporary memory one block of a blocked computation may use.
BLOCK_BYTES = 64 * 2**20


def check_array(X, name: str = "X") -> np.ndarray | sp.csr_matrix:
    """Validate a data matrix: 2-D, numeric, finite; returns float64 (dense or CSR)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        data = X.data
    else:
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a numeric matrix; it holds values that are not numbers.") from None
        data = X
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix (n_samples, n_features), got {X.ndim} dimension(s).")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {X.shape}); it needs at least one sample and one feature.")
    if not np.isfinite(data).all():
        raise ValueError(f"{name} contains NaN or infinity; only finite values are allowed.")
    return X


def _pair(X, Y):
    X = check_array(X, "X")
    Y = X if Y is None else check_array(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}; they must match.")
    return X, Y


def _dense(A) -> np.ndarray:
    return A.toarray() if sp.issparse(A) else A


def _power(A, t: int):
    """Element-wise t-th power, keeping sparsity."""
    if t == 1:
        return A
    return A.power(t) if sp.issparse(A) else A**t


def _gram(A, B) -> np.ndarray:
    """A @ B.T as a dense float64 array (A, B dense or sparse)."""
    out = A @ B.T
    return _dense(out) if sp.issparse(out) else np.asarray(out)


def row_blocks(n_rows: int, bytes_per_row: int, budget: int | None = None) -> Iterator[slice]:
    """Slices over rows so that one block needs at most ``budget`` bytes (default BLOCK_BYTES)."""
    budget = BLOCK_BYTES if budget is None else budget
    step = max(1, int(budget // max(1, bytes_per_row)))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


# ---------------------------------------------------------------------- power sums
def power_sums(X, Y, degree: int, y_is_sign: bool = False) -> list:
    """P_t = <x^t, y^t> for t = 1..degree, as Gram matrices (index 0 unused).

    With ``y_is_sign`` (Y has entries +-1 only, e.g. Rademacher weights) the odd
    powers of Y equal Y and the even ones are all ones, so even P_t reduce to
    row sums of X^t: a column vector that broadcasts, and half the GEMMs vanish.
    """
    P: list = [None]
    for t in range(1, degree + 1):
        if y_is_sign and t % 2 == 0:
            P.append(np.asarray(_power(X, t).sum(axis=1), dtype=np.float64).reshape(-1, 1))
        elif y_is_sign:
            P.append(_gram(_power(X, t), Y))
        else:
            P.append(_gram(_power(X, t), _power(Y, t)))
    return P


def elementary_from_power_sums(P: list, degree: int) -> list:
    """Newton's identities (paper eq. 12): e_k = (1/k) sum_{t=1}^k (-1)^(t+1) e_{k-t} P_t.

    ``P[t]`` are arrays that broadcast together (P is not modified); returns e_0..e_degree
    with e_0 = 1.0 and each e_k a new array of the broadcast shape. The sums run in
    place with one scratch buffer: these passes, not the GEMMs, dominate for small d.
    """
    shape = np.broadcast_shapes(*(np.shape(p) for p in P[1:degree + 1]))
    e: list = [1.0]
    scratch = np.empty(shape) if degree >= 2 else None
    for k in range(1, degree + 1):
        acc = np.empty(shape)
        np.multiply(P[1], e[k - 1], out=acc)
        for t in range(2, k + 1):
            if k == t:  # e_0 = 1: the term is P_t itself
                term = P[t]
            else:
                term = np.multiply(P[t], e[k - t], out=scratch)
            if t % 2 == 0:
                acc -= term
            else:
                acc += term
        if k > 1:
            acc *= 1.0 / k
        e.append(acc)
    return e


def elementary_top(P: list, degree: int):
    """Only e_degree of :func:`elementary_from_power_sums`, in fewer passes over the output.

    Orders 2 and 3 use the closed forms e_2 = (P_1^2 - P_2)/2 and
    e_3 = (P_1 (P_1^2 - 3 P_2) + 2 P_3)/6: four or five in-place passes over a
    (rows x D) array instead of the recursion's ten for m = 3. These passes, not the
    GEMMs, dominate the RK map for small d. Overwrites P[2] and P[3] (scratch).
    """
    if degree == 1:
        return P[1]
    if degree not in (2, 3):
        return elementary_from_power_sums(P, degree)[degree]
    shape = np.broadcast_shapes(*(np.shape(p) for p in P[1:degree + 1]))
    out = np.multiply(P[1], P[1], out=np.empty(shape))
    if degree == 2:
        out -= P[2]
        out *= 0.5
        return out
    P[2] *= 3.0
    out -= P[2]
    out *= P[1]
    P[3] *= 2.0
    out += P[3]
    out *= 1.0 / 6.0
    return out


def _broadcast_full(a, shape) -> np.ndarray:
    return np.broadcast_to(np.asarray(a, dtype=np.float64), shape).copy()


# ---------------------------------------------------------------------- named kernels
def anova_kernel(X, Y=None, degree: int = 2) -> np.ndarray:
    """ANOVA kernel of order m: sum over j_1 < ... < j_m of prod x_{j_k} y_{j_k} (paper eq. 2).

    Cost: ``degree`` matrix products plus element-wise work, O(n_X n_Y d m).
    """
    X, Y = _pair(X, Y)
    _check_degree(degree, X.shape[1], allow_zero=True)
    if degree == 0:
        return np.ones((X.shape[0], Y.shape[0]))
    if degree in (2, 3):  # blocked, in-place GEMMs: peak memory = output + one block
        return anova_gram(X, Y, degree, np.empty((X.shape[0], Y.shape[0])))
    e_m = elementary_top(power_sums(X, Y, degree), degree)
    return _broadcast_full(e_m, (X.shape[0], Y.shape[0]))


def up_to_kernel(X, Y=None, degree: int = 2) -> np.ndarray:
    """Sum of the ANOVA kernels of orders 0..m (itemsets of size at most m)."""
    X, Y = _pair(X, Y)
    _check_degree(degree, X.shape[1], allow_zero=True)
    e = elementary_from_power_sums(power_sums(X, Y, degree), degree)
    return _broadcast_full(sum(e), (X.shape[0], Y.shape[0]))


def dot_kernel(X, Y=None) -> np.ndarray:
    """The standard dot product <x, y> (itemsets = singletons)."""
    X, Y = _pair(X, Y)
    return _gram(X, Y)


def all_subsets_kernel(X, Y=None) -> np.ndarray:
    """All-subsets kernel prod_j (1 + x_j y_j) (paper eq. 3), in row blocks of bounded memory."""
    X, Y = _pair(X, Y)
    return all_subsets_gram(X, Y, np.empty((X.shape[0], Y.shape[0])))


def polynomial_kernel(X, Y=None, degree: int = 2, c: float = 1.0) -> np.ndarray:
    """Polynomial kernel (c + <x, y>)^m; c = 0 gives the homogeneous kernel <x, y>^m."""
    return (c + dot_kernel(X, Y)) ** degree


def _check_degree(degree, d: int, allow_zero: bool = False) -> None:
    low = 0 if allow_zero else 1
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or not low <= degree <= d:
        raise ValueError(
            f"degree={degree!r} is not allowed: the order must be an integer between {low} and "
            f"the number of features ({d})."
        )


# ---------------------------------------------------------------------- general families
def explicit_features(X, family: ItemsetFamily, max_features: int = MAX_ENUMERATION) -> np.ndarray:
    """phi_S(x): one column prod_{j in V} x_j per itemset V, in ``family.enumerate()`` order.

    Refuses families with more than ``max_features`` itemsets (the matrix would be too big).
    """
    X = check_array(X)
    _check_family_d(family, X.shape[1])
    if family.n_itemsets > max_features:
        raise ValueError(
            f"explicit_features: the family has {family.n_itemsets:,} itemsets, more than the "
            f"{max_features:,} columns allowed; use itemset_kernel, which never lists them."
        )
    itemsets = family.enumerate(limit=max_features)
    Xd = _dense(X)
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
    """e_m of the per-field dot products <x_F, y_F>: one GEMM per field, then Newton's identities."""
    fields = [np.asarray(f, dtype=np.intp) for f in family.fields]
    G = [_gram(X[:, f], Y[:, f]) for f in fields]
    P = [None] + [sum(g**t for g in G) for t in range(1, family.degree + 1)]
    return _broadcast_full(elementary_top(P, family.degree), (X.shape[0], Y.shape[0]))


def itemset_kernel(X, Y=None, family: ItemsetFamily | None = None) -> np.ndarray:
    """K_S(x, y) = sum_{V in S} prod_{j in V} x_j y_j (paper eq. 4) for any family S.

    Named families take their fast path; cross-field families use per-field
    products; custom families go through the explicit features phi_S.
    """
    if family is None:
        raise ValueError("itemset_kernel needs family=: an ItemsetFamily (see rkcore.itemsets).")
    X, Y = _pair(X, Y)
    _check_family_d(family, X.shape[1])
    kind = family.kind
    if kind == "anova":
        return anova_kernel(X, Y, family.degree)
    if kind == "up_to":
        return up_to_kernel(X, Y, family.degree)
    if kind == "dot":
        return dot_kernel(X, Y)
    if kind == "all_subsets":
        return all_subsets_kernel(X, Y)
    if kind == "cross_fields":
        return cross_fields_kernel(X, Y, family)
    return _gram(explicit_features(X, family), explicit_features(Y, family))
