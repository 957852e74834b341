"""The whole float range for the fast paths (accuracy contract, rkcore.kernels.numerics).

The power sums P_t = <x^t, y^t> behind Newton's identities form x^t and y^t separately, so x^t
can underflow (or overflow) while (x y)^t is an ordinary number, and the a-posteriori check,
computed from the same powers, is fooled. The fast paths are therefore used only where every
power and product they form is a normal float64 with room to spare (:data:`SAFE_BINADES`):

* **In range** (decided on the binary exponents of the smallest and largest non-zero |entry| of
  each row, one pass over the data): nothing changes, the fast path runs as before.
* **Otherwise** each row is scaled by a power of two (exact) so that its largest |entry| lies in
  [1/2, 1); for homogeneous families (ANOVA, dot) the value scales by 2^(m (p_i + q_k)), which
  ``np.ldexp`` restores exactly (inf only where the exact value overflows, subnormal rounding
  below 2^-1074). Pairs whose rows span too many binades for order m even then (the smallest
  products of m-th powers would underflow) are recomputed by the stable recursion, which never
  under- or overflows on the way.

Both decisions cost O(nnz) per row block: far below the GEMMs they guard.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .numerics import CONTRACT_RTOL
from .stable import elementary_pairs
from ..base.annotations import is_sparse

#: Every power and product the fast paths form stays within 2^(+-SAFE_BINADES) (float64): a
#: margin of 120 binades below the underflow threshold for the check's own products (gamma
#: times a product, 1 / sqrt(D) and 1 / m! folded into the weights).
SAFE_BINADES = 900
#: The same for float32 computations (normal range 2^-126 .. 2^128).
SAFE_BINADES_32 = 90


def safe_binades(dtype) -> int:
    """The binades of headroom the fast paths keep for a computation in ``dtype``.

    Parameters
    ----------
    dtype : numpy dtype or type
        The dtype the computation runs in.

    Returns
    -------
    int
        SAFE_BINADES_32 for float32, SAFE_BINADES otherwise (float64).
    """
    return SAFE_BINADES_32 if np.dtype(dtype) == np.float32 else SAFE_BINADES


def row_exponents(A) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the binary exponents of the smallest and the largest non-zero |a|.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix of shape (n, d)
        Dense or canonical CSR (stored zeros are skipped).

    Returns
    -------
    lo : ndarray of shape (n,), int64
        The frexp exponent e of each row's smallest non-zero |a| (|a| in [2^(e-1), 2^e)).
    hi : ndarray of shape (n,), int64
        The same of each row's largest |a|. Rows without non-zeros get lo = hi = 0.
    """
    if is_sparse(A):
        A = sp.csr_matrix(A)
        n = A.shape[0]
        data = np.abs(A.data)
        live = np.diff(A.indptr) > 0
        lo_v, hi_v = np.zeros(n), np.zeros(n)
        nz = np.where(data > 0, data, np.inf)
        if live.any():
            starts = A.indptr[:-1][live]
            hi_v[live] = np.maximum.reduceat(data, starts)
            lo_v[live] = np.minimum.reduceat(nz, starts)
    else:
        absA = np.abs(A)
        hi_v = absA.max(axis=1, initial=0.0)
        lo_v = np.where(absA > 0, absA, np.inf).min(axis=1, initial=np.inf)
    lo_v = np.where(np.isfinite(lo_v), lo_v, 0.0)
    lo = np.frexp(lo_v)[1].astype(np.int64)
    hi = np.frexp(hi_v)[1].astype(np.int64)
    return lo, hi


def in_range(lo_x, hi_x, lo_y, hi_y, degree: int, d: int, safe: int = SAFE_BINADES) -> bool:
    """Whether, for every pair of rows, every power |x_j|^t, |y_j|^t (t <= degree), every product
    of them and every power sum (at most d terms) is within 2^(+-safe): then Newton's power sums
    and their check carry only rounding errors.

    Parameters
    ----------
    lo_x, hi_x : ndarray or int
        :func:`row_exponents` of the rows x (arrays, or the extremes as ints).
    lo_y, hi_y : ndarray or int
        The same of the rows y (or of the weights).
    degree : int
        The largest power m.
    d : int
        Terms per power sum (the number of features).
    safe : int, default=SAFE_BINADES
        The headroom in binades (:func:`safe_binades`).

    Returns
    -------
    bool
        True when every pair is in range (decided on the extremes: one test for the whole Gram).
    """
    lx, hx = int(np.min(lo_x, initial=0)), int(np.max(hi_x, initial=0))
    ly, hy = int(np.min(lo_y, initial=0)), int(np.max(hi_y, initial=0))
    m, log_d = degree, float(np.log2(max(d, 2)))
    return (m * min(0, lx + ly - 2) >= -safe and m * min(0, lx - 1) >= -safe and m * min(0, ly - 1) >= -safe
            and m * max(0, hx) <= safe and m * max(0, hy) <= safe and m * (max(0, hx + hy) + log_d) <= safe)


def failing_pairs(lo_x, lo_y, degree: int, safe: int = SAFE_BINADES) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the pairs of *scaled* rows (largest |entry| in [1/2, 1); lo the exponents
    of the smallest non-zeros after scaling) whose smallest product of m-th powers would fall
    below 2^-safe: m (lo_i + lo_k - 2) < -safe. Only rows that fail against the other side's
    widest row are crossed, so the cost is O(n_X + n_Y) unless many rows fail.

    Parameters
    ----------
    lo_x : array-like of int, shape (n_X,)
        Exponents of each scaled row x's smallest non-zero (:func:`row_exponents` minus hi).
    lo_y : array-like of int, shape (n_Y,)
        The same for the rows y.
    degree : int
        The order m.
    safe : int, default=SAFE_BINADES
        The headroom in binades.

    Returns
    -------
    rows : ndarray of intp
        Row indices into x of the failing pairs.
    cols : ndarray of intp
        Row indices into y, aligned with ``rows``.
    """
    lo_x, lo_y = np.asarray(lo_x), np.asarray(lo_y)
    limit = -safe / degree + 2
    cand_x = np.flatnonzero(lo_x + lo_y.min(initial=0) < limit)
    cand_y = np.flatnonzero(lo_y + lo_x.min(initial=0) < limit)
    if not cand_x.size or not cand_y.size:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    bad = lo_x[cand_x][:, None] + lo_y[cand_y][None, :] < limit
    r, c = np.nonzero(bad)
    return cand_x[r], cand_y[c]


def unscaled_failing_rows(lo, hi, lo_w, hi_w, degree: int, d: int, safe: int = SAFE_BINADES) -> np.ndarray:
    """Rows of X for which :func:`in_range` fails against the weights: those a map must recompute.

    Parameters
    ----------
    lo, hi : array-like of int, shape (n,)
        :func:`row_exponents` of the rows of X (unscaled).
    lo_w, hi_w : int
        The smallest and largest exponents of the weights.
    degree : int
        The largest power m.
    d : int
        Terms per power sum (the number of features).
    safe : int, default=SAFE_BINADES
        The headroom in binades (:func:`safe_binades`).

    Returns
    -------
    ndarray of intp
        Indices of the rows out of range.
    """
    m, log_d = degree, float(np.log2(max(d, 2)))
    lo, hi = np.asarray(lo), np.asarray(hi)
    ok = (m * np.minimum(0, lo + lo_w - 2) >= -safe) & (m * np.minimum(0, lo - 1) >= -safe)
    ok &= (m * np.maximum(0, hi) <= safe) & (m * (np.maximum(0, hi + hi_w) + log_d) <= safe)
    return np.flatnonzero(~ok)


def scale_rows(A, exponents: np.ndarray):
    """A copy of A with row i multiplied by 2^-exponents[i]: exact (ldexp, no factor that could overflow).

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix of shape (n, d)
        Dense or sparse; not modified.
    exponents : array-like of int, shape (n,)
        The power of two to divide each row by (e.g. ``row_exponents(A)[1]``, which brings the
        largest |entry| to [1/2, 1)).

    Returns
    -------
    ndarray or scipy.sparse.csr_matrix of shape (n, d)
        The scaled copy (CSR for sparse input). Exact unless a scaled entry falls below 2^-1022.
    """
    e = np.asarray(exponents, dtype=np.int64)
    if is_sparse(A):
        A = sp.csr_matrix(A, copy=True)
        A.data = np.ldexp(A.data, -np.repeat(e, np.diff(A.indptr)))
        return A
    return np.ldexp(A, -e[:, None])


def restore_scale(K: np.ndarray, exponents) -> np.ndarray:
    """K * 2^exponents in place: the scale :func:`scale_rows` took off, put back.

    Parameters
    ----------
    K : ndarray of float64
        Values computed on scaled rows; overwritten.
    exponents : array-like of int
        Broadcast against K (a homogeneous order-m Gram: m (hx_i + hy_k)).

    Returns
    -------
    ndarray
        ``K`` itself: inf only where the exact value overflows; values below 2^-1022 are rounded
        once (absolute error at most 2^-1075), others are exact.
    """
    with np.errstate(over="ignore", under="ignore"):
        np.ldexp(K, exponents, out=K)
    return K


def _mark_crossed(bad: np.ndarray, cand_x: np.ndarray, cand_y: np.ndarray, fails) -> None:
    """bad[i, k] |= fails(i's, k's) over the candidate rows and columns only."""
    if cand_x.size and cand_y.size:
        bad[np.ix_(cand_x, cand_y)] |= fails(cand_x[:, None], cand_y[None, :])


def _pair_fails(lx, hx, ly, hy, m: int, log_d: float, safe: int, overflow_only: bool):
    """Predicate on index arrays (i, k): the pair condition of :func:`in_range` fails."""
    def fails(i, k):
        bad = (m * np.maximum(0, hx[i]) > safe) | (m * np.maximum(0, hy[k]) > safe)
        bad = bad | (m * (np.maximum(0, hx[i] + hy[k]) + log_d) > safe)
        if not overflow_only:
            bad = bad | (m * np.minimum(0, lx[i] + ly[k] - 2) < -safe)
            bad = bad | (m * np.minimum(0, lx[i] - 1) < -safe) | (m * np.minimum(0, ly[k] - 1) < -safe)
        return bad
    return fails


def _unscaled_failures(K, lx, hx, ly, hy, m: int, d: int, overflow_only: bool) -> np.ndarray:
    """Boolean mask of the pairs outside :func:`in_range` (or with a non-finite value)."""
    log_d = float(np.log2(max(d, 2)))
    fails = _pair_fails(lx, hx, ly, hy, m, log_d, SAFE_BINADES, overflow_only)
    # a row can fail only if it fails against the other side's extreme rows
    ext_y = (np.array([ly.min(initial=0)]), np.array([hy.max(initial=0)]))
    ext_x = (np.array([lx.min(initial=0)]), np.array([hx.max(initial=0)]))
    cand_x = np.flatnonzero(_pair_fails(lx, hx, ext_y[0], ext_y[1], m, log_d, SAFE_BINADES, overflow_only)(
        np.arange(len(lx)), np.zeros(len(lx), dtype=np.intp)))
    cand_y = np.flatnonzero(_pair_fails(ext_x[0], ext_x[1], ly, hy, m, log_d, SAFE_BINADES, overflow_only)(
        np.zeros(len(ly), dtype=np.intp), np.arange(len(ly))))
    bad = ~np.isfinite(K)
    _mark_crossed(bad, cand_x, cand_y, fails)
    return bad


def ranged_gram(X, Y, degree: int, compute, *, mode: str = "scale", fallback=None,
                symmetric: bool = False) -> np.ndarray:
    """``compute(X, Y, symmetric)``, a fast Gram of a family whose itemsets have at most
    ``degree`` elements, made valid over the whole float range.

    In range (:func:`in_range`): ``compute`` as is. Otherwise, by ``mode``:

    * "scale" (homogeneous families: every itemset has ``degree`` elements, e.g. ANOVA, dot,
      cross-field): rows scaled by powers of two (:func:`scale_rows`), the scale restored
      exactly, the pairs whose rows span too many binades even then (:func:`failing_pairs`)
      recomputed;
    * "sum" (up-to: sums over orders do not scale, but their scale is at least 1, so underflow
      costs at most 2^-1000 absolutely): the pairs whose powers could overflow recomputed;
    * "plain" (custom families): every pair outside :func:`in_range` recomputed.

    Entries left non-finite are recomputed too.

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of shape (n_X, d)
        Validated float64 rows.
    Y : ndarray or scipy.sparse.csr_matrix of shape (n_Y, d)
        Validated float64 rows (``Y is X`` for K(X, X)).
    degree : int
        The largest itemset size m.
    compute : callable
        ``compute(A, B, symmetric)``: the fast Gram of rows A, B (in range), an (n_A, n_B) array.
    mode : {"scale", "sum", "plain"}, default="scale"
        How pairs out of range are handled (above).
    fallback : callable, optional
        ``fallback(X, Y, rows, cols)``: the exact values of the pairs (rows[p], cols[p]) (inf only
        where the exact value overflows). None: the stable recursion of e_degree, or of the sum of
        orders for "sum" (:func:`rkcore.kernels.stable.elementary_pairs`).
    symmetric : bool, default=False
        Passed to ``compute`` (Y is X: it may compute one triangle).

    Returns
    -------
    ndarray of shape (n_X, n_Y), float64
        The Gram, within the accuracy contract wherever ``compute`` and ``fallback`` are.
    """
    lx, hx = row_exponents(X)
    ly, hy = (lx, hx) if Y is X else row_exponents(Y)
    d, m = X.shape[1], degree
    if in_range(lx, hx, ly, hy, m, d):
        return compute(X, Y, symmetric)
    with np.errstate(all="ignore"):
        if mode == "scale":
            Xs = scale_rows(X, hx)
            Ys = Xs if Y is X else scale_rows(Y, hy)
            K = restore_scale(compute(Xs, Ys, symmetric), m * (hx[:, None] + hy[None, :]))
            bad = ~np.isfinite(K)
            lo_x, lo_y = lx - hx, ly - hy
            limit = -SAFE_BINADES / m + 2
            _mark_crossed(bad, np.flatnonzero(lo_x + lo_y.min(initial=0) < limit),
                          np.flatnonzero(lo_y + lo_x.min(initial=0) < limit), lambda i, k: lo_x[i] + lo_y[k] < limit)
        else:
            K = compute(X, Y, symmetric)
            bad = _unscaled_failures(K, lx, hx, ly, hy, m, d, overflow_only=mode == "sum")
    rows, cols = np.nonzero(bad)
    if rows.size:
        if fallback is None:
            K[rows, cols] = elementary_pairs(X, Y, rows, cols, m, summed=mode == "sum")
        else:
            K[rows, cols] = fallback(X, Y, rows, cols)
    return K


def saturate_float32(values: np.ndarray, magnitude: np.ndarray) -> np.ndarray:
    """Round float64 values within the contract to float32, saturating where infinity is not certain.

    A value v beyond float32's largest finite F = 3.4e38 becomes +-inf only where the exact value
    is beyond F for sure, ``|v| - CONTRACT_RTOL * S > F``; otherwise it is stored as +-F, which is
    then at least as close to the exact value as v itself (so within the contract).

    Parameters
    ----------
    values : ndarray of float64
        Values computed within the float64 contract (inf where the exact value exceeds float64).
    magnitude : ndarray of float64, broadcastable to ``values``
        S of each value: the sum over the itemsets of the absolute products (inf allowed).

    Returns
    -------
    ndarray of float32
        The rounded values, of the shape of ``values``.
    """
    largest = float(np.finfo(np.float32).max)
    with np.errstate(over="ignore", invalid="ignore"):
        # written as "not within" so that v = inf with S = inf (inf - inf) counts as certain
        certain = ~(np.abs(values) - CONTRACT_RTOL * magnitude <= largest)
        return np.where(certain, values, np.clip(values, -largest, largest)).astype(np.float32)


def saturate_overflowed_rows(out: np.ndarray, float64_rows) -> None:
    """Store again, by :func:`saturate_float32`, the rows of a float32 ``out`` that hold an inf.

    The maps compute float32 features in float64 and round once; a float64 value past float32's range
    became +-inf in ``out``. Only those rows (rare) are computed again with their S and stored
    saturated. The common case costs two reductions over ``out`` (its max and min), no temporary.

    Parameters
    ----------
    out : ndarray of float32, shape (n, D)
        The rounded output, written in place.
    float64_rows : callable
        ``float64_rows(rows)`` for an int array of row indices: (values, magnitude), the float64 values of
        those rows within the contract and S of each (broadcastable to the values).
    """
    if out.size == 0 or (np.isfinite(out.max()) and np.isfinite(out.min())):
        return
    rows = np.flatnonzero(np.isinf(out).any(axis=1))
    if rows.size:
        values, magnitude = float64_rows(rows)
        out[rows] = saturate_float32(values, magnitude)
