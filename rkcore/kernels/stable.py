"""The stable recursion of the accuracy contract (rkcore.kernels.numerics): elementary symmetric
polynomials and products in (mantissa, exponent) form, never overflowing or underflowing on the way."""
from __future__ import annotations

import numpy as np

from .numerics import BLOCK_BYTES, row_blocks
from ..base.arrays import dense


#: Exponent that stands for "exactly zero" in the (mantissa, exponent) recursion.
_ZERO_EXPONENT = -(2**40)


def _frexp64(a: np.ndarray):
    """(mantissa, int64 exponent) with exact zeros given _ZERO_EXPONENT."""
    f, E = np.frexp(a)
    E = E.astype(np.int64)
    E[f == 0] = _ZERO_EXPONENT
    return f, E


def elementary_stable(U: np.ndarray, V: np.ndarray | None = None, degree: int = 2,
                      all_orders: bool = False, summed: bool = False, factor: float = 1.0):
    """e_0..e_degree of each row of z = U * V (element-wise; V=None: z = U), computed stably.

    The recursion e_k <- e_k + z_j e_{k-1} over the columns (Blondel et al. 2016) adds
    every product prod_{j in V} z_j with at most ``k + d`` roundings, so the error is at most
    gamma_{k+d} * e_k(|z|) - no cancellation beyond that. Values are held as a mantissa and
    a 64-bit exponent (and z_j = u_j v_j is never formed), so nothing overflows or
    underflows in between: the result is inf only where the exact value exceeds float64.
    Zero columns are skipped exactly, so fewer than k non-zeros give exactly 0.

    Where e_k overflowed although it is negligible against its scale e_k(|z|) (huge terms that
    cancel), 0.0 is returned (within the contract); elsewhere inf stays.

    Parameters
    ----------
    U : ndarray of shape (N, d)
        Float values (cast to float64).
    V : ndarray of shape (N, d), optional
        The second factors; None: z = U.
    degree : int, default=2
        The highest order m, >= 0.
    all_orders : bool, default=False
        Return every order e_0..e_degree.
    summed : bool, default=False
        Return sum_{k<=degree} e_k, added in (mantissa, exponent) form: inf only where the sum
        is, never inf - inf.
    factor : float, default=1.0
        A positive factor (e.g. 1 / sqrt(D) of a feature) applied before the rounding to float64:
        inf only where factor times the exact value is beyond float64.

    Returns
    -------
    ndarray of shape (N,) or list of ndarray
        e_degree per row (float64); with ``all_orders`` the list e_0..e_degree; with ``summed``
        the sum of the orders.
    """
    U = np.asarray(U, dtype=np.float64)
    zf, zE = _frexp64(U)
    if V is not None:
        vf, vE = _frexp64(np.asarray(V, dtype=np.float64))
        zf = zf * vf
        zE = np.where(zf == 0, _ZERO_EXPONENT, zE + vE)
    out = elementary_fe(zf, zE, degree, all_orders, summed, factor)
    return _settle_sum(out, zf, zE, degree, factor) if summed else _settle_overflow(out, zf, zE, degree, all_orders)


def _settle_sum(out: np.ndarray, zf: np.ndarray, zE: np.ndarray, degree: int, factor: float = 1.0) -> np.ndarray:
    """The summed orders sum_k e_k where they came back non-finite, settled on (mantissa, exponent) values:
    where |sum| <= 4 (m + d + 2) u sum_k e_k(|z|) (huge orders that cancel, e.g. a factor 1 + z_j = 0 with
    m >= d - 1: exactly 0) the exact value is within 5 (m + d + 2) u of its scale: 0.0 is within the
    contract; elsewhere the rounding cannot flip the sign, so the value (+-inf beyond float64) keeps it."""
    bad = np.flatnonzero(~np.isfinite(out))
    d = zf.shape[1]
    if not bad.size or 5 * (degree + d + 2) * 2.0**-53 > 1e-12:
        return out
    f, E = zf[bad], zE[bad]
    vf, vE = _sum_fe(*(a.T for a in _recursion_fe(f, E, degree)))
    Sf, SE = _sum_fe(*(a.T for a in _recursion_fe(np.abs(f), E, degree)))
    ratio = np.abs(vf) / np.where(Sf > 0, Sf, 1.0)
    small = (vf == 0) | (ratio * np.exp2(np.clip(vE - SE, -1100, 60)) <= 4 * (degree + d + 2) * 2.0**-53)
    with np.errstate(over="ignore", under="ignore"):
        out[bad] = np.where(small, 0.0, np.ldexp(vf * factor, np.clip(vE, -2200, 2200)))
    return out


def _settle_overflow(out, zf: np.ndarray, zE: np.ndarray, degree: int, all_orders: bool):
    """Where e_k overflowed although the exact e_k is negligible against its contract scale
    e_k(|z|) (which alone exceeds float64: e.g. exactly 0 by cancellation of huge terms), 0.0
    instead of inf: e_k and e_k(|z|) recomputed in (mantissa, exponent) form, |e_k| <= 4 (k + d) u
    e_k(|z|) proves |exact| <= 5 (k + d) u e_k(|z|), within the contract. Elsewhere inf stays: the
    exact value is then beyond float64 (up to the rounding of the last binade)."""
    orders = out if all_orders else [None] * degree + [out]
    ks = range(1, degree + 1) if all_orders else [degree]
    bad_rows = np.flatnonzero(np.any([~np.isfinite(orders[k]) for k in ks], axis=0))
    d = zf.shape[1]
    if not bad_rows.size or 5 * (degree + d) * 2.0**-53 > 1e-12:
        return out
    f, E = zf[bad_rows], zE[bad_rows]
    vf, vE = _recursion_fe(f, E, degree)
    Sf, SE = _recursion_fe(np.abs(f), E, degree)
    for k in ks:
        # |v| <= 4 (k + d) u S, compared on (mantissa, exponent): no overflow
        ratio = np.abs(vf[k]) / np.where(Sf[k] > 0, Sf[k], 1.0)
        small = (vf[k] == 0) | (ratio * np.exp2(np.clip(vE[k] - SE[k], -1100, 60)) <= 4 * (k + d) * 2.0**-53)
        settle = small & ~np.isfinite(orders[k][bad_rows])
        orders[k][bad_rows[settle]] = 0.0
    return out


def elementary_fe(zf: np.ndarray, zE: np.ndarray, degree: int, all_orders: bool = False, summed: bool = False,
                  factor: float = 1.0):
    """:func:`elementary_stable` of z given in (mantissa, exponent) form, without the overflow settlement.

    Parameters
    ----------
    zf : ndarray of shape (N, d)
        Mantissas (zeros: zf = 0), z = zf * 2^zE.
    zE : ndarray of shape (N, d), int64
        Exponents.
    degree : int
        The highest order m.
    all_orders : bool, default=False
        Return every order e_0..e_degree.
    summed : bool, default=False
        Return sum_{k<=degree} e_k.
    factor : float, default=1.0
        A positive factor applied before the rounding to float64 (as :func:`elementary_stable`).

    Returns
    -------
    ndarray of shape (N,) or list of ndarray
        As :func:`elementary_stable`; inf where a value exceeds float64, including values that
        are negligible against their scale (the caller settles those: ``_settle_overflow``).
    """
    N, d = zf.shape
    fast = _elementary_scaled(zf, zE, degree, all_orders, summed, factor)
    if fast is not None:
        return fast
    ef, eE = _recursion_fe(zf, zE, degree)
    if summed:
        return _sum_of_scaled(ef, eE, factor)
    # ldexp saturates to inf / 0 exactly where the value leaves float64's range
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(ef * factor, np.clip(eE, -2200, 2200))
    return list(out) if all_orders else out[degree]


def _recursion_fe(zf: np.ndarray, zE: np.ndarray, degree: int):
    """(ef, eE): e_0..e_degree of each row of z = zf 2^zE as mantissas (degree + 1, N) and int64
    exponents, by the recursion e_k <- e_k + z_j e_{k-1}; nothing overflows or underflows."""
    N, d = zf.shape
    ef = np.zeros((degree + 1, N))
    eE = np.full((degree + 1, N), _ZERO_EXPONENT, dtype=np.int64)
    ef[0], eE[0] = 0.5, 1  # e_0 = 1 = 0.5 * 2^1
    # exponents of terms far below the other summand: their mantissa shifts to 0 (saturate)
    floor = -1100
    for j in range(d):
        fj, Ej = zf[:, j], zE[:, j]
        if not fj.any():
            continue
        for q in range(min(j + 1, degree), 0, -1):
            tf = fj * ef[q - 1]
            tE = Ej + eE[q - 1]
            E = np.maximum(eE[q], tE)
            f = np.ldexp(ef[q], np.maximum(eE[q] - E, floor)) + np.ldexp(tf, np.maximum(tE - E, floor))
            f, dE = np.frexp(f)
            E = E + dE
            E[f == 0] = _ZERO_EXPONENT
            ef[q], eE[q] = f, E
    return ef, eE


def _sum_of_scaled(f: np.ndarray, E: np.ndarray, factor: float = 1.0) -> np.ndarray:
    """sum_k f[k] 2^E[k] over axis 0 (f: (K, N) floats, E: int64 exponents), without
    overflow on the way: the terms are added relative to the largest one's binade."""
    g, dE = np.frexp(f)
    E = np.where(g == 0, _ZERO_EXPONENT, E + dE)
    top = E.max(axis=0)
    top = np.where(top == _ZERO_EXPONENT, 0, top)
    with np.errstate(over="ignore", under="ignore"):
        s = np.ldexp(g, np.clip(E - top, -1100, 0)).sum(axis=0) * factor
        return np.ldexp(s, np.clip(top, -2200, 2200))


def _elementary_scaled(zf: np.ndarray, zE: np.ndarray, degree: int, all_orders: bool, summed: bool = False,
                       factor: float = 1.0):
    """:func:`elementary_stable`'s recursion in plain floating point, or None where it is unsafe.

    z = zf * 2^zE (zf = 0 for zeros). Each row is scaled by 2^-max(zE) (exact): when the
    exponents of a row's non-zeros span less than 1000 / degree - 2 binades and d^degree <
    2^1000, every product of at most ``degree`` scaled values is a normal float64 in
    [2^-1000, 1] and every e_k is below 2^1000, so the recursion neither overflows nor
    underflows and keeps its bound gamma_{k+d} e_k(|z|); the scale is restored by ldexp
    (inf / subnormal only where the exact value is out of range). Fewer than k non-zeros
    still give exactly 0. About seven times fewer passes than the (mantissa, exponent) form.
    """
    N, d = zf.shape
    if N == 0 or degree * np.log2(max(d, 2)) >= 1000:
        return None
    live = zf != 0
    big = np.where(live, zE, np.iinfo(np.int64).min).max(axis=1)
    small = np.where(live, zE, np.iinfo(np.int64).max).min(axis=1)
    has = live.any(axis=1)
    if np.any((big[has] - small[has] + 2) * degree > 1000):
        return None
    big = np.where(has, big, 0)
    zs = np.ldexp(zf, np.where(live, zE - big[:, None], 0))
    e = np.zeros((degree + 1, N))
    e[0] = 1.0
    for j in range(d):
        zj = zs[:, j]
        if not zj.any():
            continue
        for q in range(min(j + 1, degree), 0, -1):
            e[q] += zj * e[q - 1]
    if summed:
        return _sum_of_scaled(e, np.arange(degree + 1)[:, None] * big[None, :], factor)
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(e * factor, np.arange(degree + 1)[:, None] * big[None, :])
    return list(out) if all_orders else out[degree]


def elementary_pairs(X, Y, rows: np.ndarray, cols: np.ndarray, degree: int,
                     all_orders: bool = False, summed: bool = False, factor: float = 1.0):
    """:func:`elementary_stable` of z = x_i * y_j for the pairs (rows[p], cols[p]), in chunks
    of bounded memory (BLOCK_BYTES), over each pair's shared non-zeros: the fallback of every
    fast path, within the accuracy contract (error at most gamma_{k+d} e_k(|z|)); inf only where
    the exact value exceeds float64.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_X, d)
        Rows x, float64.
    Y : ndarray or scipy.sparse matrix of shape (n_Y, d)
        Rows y (or weights w), float64.
    rows : ndarray of int, shape (n_pairs,)
        Indices into X.
    cols : ndarray of int, shape (n_pairs,)
        Indices into Y, aligned with ``rows``.
    degree : int
        The order m.
    all_orders : bool, default=False
        Return every order e_0..e_degree.
    summed : bool, default=False
        Return sum_{k<=degree} e_k per pair (the up-to kernel), overflow-safe.
    factor : float, default=1.0
        A positive factor (a feature's 1 / sqrt(D)) applied before the rounding to float64.

    Returns
    -------
    ndarray of shape (n_pairs,) or list of ndarray
        e_degree per pair; with ``all_orders`` the list e_0..e_degree, each of shape (n_pairs,);
        with ``summed`` the sum of the orders.
    """
    if summed:
        n_pairs, d = len(rows), X.shape[1]
        out = np.empty(n_pairs)
        for sl in row_blocks(n_pairs, 8 * 8 * d, BLOCK_BYTES):
            U, V = _shared_nonzeros(dense(X[rows[sl]], dtype=None), dense(Y[cols[sl]], dtype=None))
            out[sl] = elementary_stable(U, V, degree, summed=True, factor=factor)
        return out
    n_pairs, d = len(rows), X.shape[1]
    out = np.empty((degree + 1, n_pairs)) if all_orders else np.empty(n_pairs)
    for sl in row_blocks(n_pairs, 8 * 8 * d, BLOCK_BYTES):
        U, V = dense(X[rows[sl]], dtype=None), dense(Y[cols[sl]], dtype=None)
        U, V = _shared_nonzeros(U, V)
        e = elementary_stable(U, V, degree, all_orders, factor=factor)
        if all_orders:
            out[:, sl] = np.asarray(e)
        else:
            out[sl] = e
    return list(out) if all_orders else out


def _shared_nonzeros(U: np.ndarray, V: np.ndarray):
    """Columns where both U and V are non-zero moved first, the rest cut to the widest row."""
    both = (U != 0) & (V != 0)
    k = int(both.sum(axis=1).max()) if both.size else 0
    if k >= U.shape[1]:
        return U, V
    order = np.argsort(~both, axis=1, kind="stable")[:, :max(k, 1)]
    U = np.take_along_axis(U, order, axis=1)
    V = np.take_along_axis(V, order, axis=1)
    if k == 0:
        U = np.zeros_like(U)
    return U, V


def product_one_plus(U: np.ndarray, V: np.ndarray, log_scale: float = 0.0) -> np.ndarray:
    """prod_j (1 + u_j v_j) * exp(log_scale) for each row of U, V (N, d), in log space.

    The sum of log|factor| (log|u_j| + log|v_j| where u_j v_j overflows, the 1 being
    negligible there), the parity of negative factors and any exact zero factor give the
    product without overflow on the way; exp saturates to inf only where the exact value
    exceeds float64. Relative error about |log value| * u: the repair of the all-subsets
    kernel and map where their direct products overflow on the way.

    Parameters
    ----------
    U : ndarray of shape (N, d)
        First factors, float64.
    V : ndarray of shape (N, d)
        Second factors, float64.
    log_scale : float, default=0.0
        Added to the log-sum (e.g. -log(D) / 2 for the 1/sqrt(D) of a feature).

    Returns
    -------
    ndarray of shape (N,)
        The products, float64 (exactly 0.0 where a factor is exactly 0).
    """
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        z = U * V
        finite = np.isfinite(z)
        f = 1.0 + np.where(finite, z, 0.0)
        logs = np.where(finite, np.log(np.abs(f)), np.log(np.abs(U)) + np.log(np.abs(V)))
        negative = np.where(finite, f < 0, (U < 0) != (V < 0))
        zero = finite & (f == 0)
        logs[zero] = 0.0
        out = np.exp(logs.sum(axis=1) + log_scale)
    out[negative.sum(axis=1) % 2 == 1] *= -1.0
    out[zero.any(axis=1)] = 0.0
    return out


def _products_fe(U: np.ndarray, V: np.ndarray):
    """z = u * v as (mantissa, exponent) arrays, never formed in floating point."""
    uf, uE = _frexp64(np.asarray(U, dtype=np.float64))
    vf, vE = _frexp64(np.asarray(V, dtype=np.float64))
    f = uf * vf
    return f, np.where(f == 0, _ZERO_EXPONENT, uE + vE)


def _sum_fe(f: np.ndarray, E: np.ndarray):
    """(mantissa, exponent) of the sums over the last axis of f * 2^E, relative to the largest
    term's binade (terms 2^1100 below it are dropped): error gamma_n times the sum of |terms|."""
    top = E.max(axis=-1)
    top = np.where(top == _ZERO_EXPONENT, 0, top)
    s = np.ldexp(f, np.clip(E - top[..., None], -1100, 0)).sum(axis=-1)
    g, dE = np.frexp(s)
    return g, np.where(g == 0, _ZERO_EXPONENT, top + dE)


def _pair_chunks(n_pairs: int, width: int):
    return row_blocks(n_pairs, 8 * 8 * max(width, 1), BLOCK_BYTES)


def cross_field_pairs(X, Y, rows: np.ndarray, cols: np.ndarray, fields: list, degree: int,
                      factor: float = 1.0) -> np.ndarray:
    """The cross-field kernel e_degree(g_F), g_F = <x_F, y_F>, of the pairs (rows[p], cols[p]) in
    (mantissa, exponent) form: each g_F a sum within gamma_|F| of sum_{j in F} |x_j y_j|, the
    recursion within gamma of e_m over the fields of those sums, which is the contract scale.
    Nothing overflows or underflows on the way; inf only where the exact value exceeds float64.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_X, d)
        Rows x, float64.
    Y : ndarray or scipy.sparse matrix of shape (n_Y, d)
        Rows y, float64.
    rows : ndarray of int, shape (n_pairs,)
        Indices into X.
    cols : ndarray of int, shape (n_pairs,)
        Indices into Y, aligned with ``rows``.
    fields : list of ndarray of int
        The column indices of each field F.
    degree : int
        The order m (number of fields per itemset).
    factor : float, default=1.0
        A positive factor (a feature's 1 / sqrt(D)) applied before the rounding to float64.

    Returns
    -------
    ndarray of shape (n_pairs,)
        The kernel value of each pair, float64.
    """
    out = np.empty(len(rows))
    for sl in _pair_chunks(len(rows), X.shape[1]):
        zf, zE = _products_fe(dense(X[rows[sl]], dtype=None), dense(Y[cols[sl]], dtype=None))
        gf = np.empty((zf.shape[0], len(fields)))
        gE = np.empty(gf.shape, dtype=np.int64)
        for q, f in enumerate(fields):
            gf[:, q], gE[:, q] = _sum_fe(zf[:, f], zE[:, f])
        out[sl] = _settle_overflow(elementary_fe(gf, gE, degree, factor=factor), gf, gE, degree, False)
    return out


def custom_pairs(X, Y, rows: np.ndarray, cols: np.ndarray, itemsets, factor: float = 1.0) -> np.ndarray:
    """K_S(x, y) = sum_{V in S} prod_{j in V} x_j y_j of the pairs (rows[p], cols[p]) for an
    explicit list of itemsets, every product and the sum in (mantissa, exponent) form: error at
    most gamma_{|S| + max |V|} times sum_V |prod z_j|; inf only where the exact value is.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_X, d)
        Rows x, float64.
    Y : ndarray or scipy.sparse matrix of shape (n_Y, d)
        Rows y, float64.
    rows : ndarray of int, shape (n_pairs,)
        Indices into X.
    cols : ndarray of int, shape (n_pairs,)
        Indices into Y, aligned with ``rows``.
    itemsets : iterable of tuple of int
        The itemsets V of the family S (the empty tuple counts 1 per pair).
    factor : float, default=1.0
        A positive factor (a feature's 1 / sqrt(D)) applied before the rounding to float64.

    Returns
    -------
    ndarray of shape (n_pairs,)
        K_S(x, y) of each pair, float64.
    """
    by_size: dict[int, list] = {}
    for v in itemsets:
        by_size.setdefault(len(v), []).append(tuple(v))
    out = np.empty(len(rows))
    for sl in _pair_chunks(len(rows), X.shape[1] + 2 * len(itemsets)):
        zf, zE = _products_fe(dense(X[rows[sl]], dtype=None), dense(Y[cols[sl]], dtype=None))
        n = zf.shape[0]
        F, E = [], []
        for size, group in by_size.items():
            if size == 0:
                F.append(np.full((n, len(group)), 0.5))
                E.append(np.ones((n, len(group)), dtype=np.int64))
                continue
            idx = np.asarray(group, dtype=np.intp)
            f, e = zf[:, idx[:, 0]], zE[:, idx[:, 0]]
            for t in range(1, size):
                f, de = np.frexp(f * zf[:, idx[:, t]])
                e = e + zE[:, idx[:, t]] + de
            F.append(f)
            E.append(np.where(f == 0, _ZERO_EXPONENT, e))
        out[sl] = _sum_of_scaled(np.concatenate(F, axis=1).T, np.concatenate(E, axis=1).T, factor)
    return out
