r"""The exact variance over the whole float range: the dynamic program of :mod:`rkcore.theory.variance`
in (mantissa, exponent) form, for the pairs where the float64 program could over- or underflow.

**Why.** The float64 program forms products of up to 4M entries of one pair (x-degree and y-degree
up to 2M each), also products that belong to no wanted coefficient (x_0^2 y_1^2 for ANOVA of order
2: weight 0). At ``x = (1e200, 1), y = (1e-200, 1)`` such an unused product overflows and its
weight 0 turns it into NaN, while the exact variance is 0 (Rademacher) or 1 (Gaussian, D = 8).

**Contract.** With S2 = E[f^2] at (|x|, |y|) (the sum of |terms| of E f^2: every moment is >= 0),
the per-feature variance D V is within ``CONTRACT_RTOL * S2 + 2^-1022`` of the exact value, never
NaN, and +inf only where the exact value is beyond float64 (after the division by D). Here every
intermediate is a float64 mantissa with an int64 exponent, so nothing over- or underflows; each
state gathers at most 3 roundings per feature, so the error is a small multiple of d u S2.

**When.** :func:`out_of_range_pairs` is one pass over the pair's exponents (O(nnz)): a pair is
recomputed here when a product of 2M powers of its entries could leave 2^(+-SAFE_BINADES), or
when the float64 result is not finite. The common case never enters this module.
"""
from __future__ import annotations

import numpy as np

from ..kernels.ranges import SAFE_BINADES, row_exponents

#: Exponent that stands for an exact zero.
_ZERO = -(2**40)
#: Terms this many binades below the larger summand are dropped (far below the rounding).
_FLOOR = -1100


def out_of_range_pairs(X, Y, largest_size: int) -> np.ndarray:
    """Boolean mask of the pairs (X[i], Y[i]) whose float64 moments could over- or underflow.

    Parameters
    ----------
    X, Y : ndarray or canonical CSR of shape (n, d)
        Paired rows (already balanced where the family allows it).
    largest_size : int
        M, the largest itemset size (d for all subsets).

    Returns
    -------
    ndarray of bool, shape (n,)
        True where some product of 2M powers of a pair's entries could leave 2^(+-SAFE_BINADES).
    """
    lx, hx = row_exponents(X)
    ly, hy = row_exponents(Y)
    d = X.shape[1]
    reach = 2 * largest_size
    log_terms = reach * np.log2(3.0 * max(d, 2))
    top = reach * (np.maximum(hx, 0) + np.maximum(hy, 0)) + log_terms
    bottom = reach * (np.minimum(lx - 1, 0) + np.minimum(ly - 1, 0))
    return (top > SAFE_BINADES) | (bottom < -SAFE_BINADES)


# ------------------------------------------------------------------ (mantissa, exponent) arithmetic
def _normal(f: np.ndarray, E: np.ndarray):
    g, dE = np.frexp(f)
    return g, np.where(g == 0, _ZERO, E + dE)


def _fe(a: np.ndarray):
    return _normal(np.asarray(a, dtype=np.float64), np.zeros(np.shape(a), dtype=np.int64))


def _mul(a, b):
    return _normal(a[0] * b[0], a[1] + b[1])


def _add(a, b):
    top = np.maximum(a[1], b[1])
    s = np.ldexp(a[0], np.maximum(a[1] - top, _FLOOR)) + np.ldexp(b[0], np.maximum(b[1] - top, _FLOOR))
    return _normal(s, top)


def _scale(a, c: float):
    return _normal(a[0] * c, a[1])


def _take(a, index):
    return a[0][index], a[1][index]


def _put(a, index, value) -> None:
    a[0][index], a[1][index] = value


def _sum(a, axis: int = 0):
    """Sum over one axis, relative to the largest term's binade (no overflow on the way)."""
    top = a[1].max(axis=axis, keepdims=True)
    top = np.where(top == _ZERO, 0, top)
    s = np.ldexp(a[0], np.maximum(a[1] - top, _FLOOR)).sum(axis=axis)
    return _normal(s, np.squeeze(top, axis=axis))


def _to_float(a) -> np.ndarray:
    """The float64 nearest a (mantissa, exponent) value: +-inf beyond float64, subnormal or 0 below."""
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(a[0], np.clip(a[1], -2200, 2200))


# ------------------------------------------------------------------ the moments
def _squares(x, y, mu4: float):
    """x^2, y^2, x y and (mu4 - 1) x^2 y^2 in (mantissa, exponent) form."""
    xf, yf = _fe(x), _fe(y)
    xx, yy, xy = _mul(xf, xf), _mul(yf, yf), _mul(xf, yf)
    return xx, yy, xy, _scale(_mul(xx, yy), mu4 - 1.0)


def _sizes_moments_fe(XT: np.ndarray, YT: np.ndarray, sizes: tuple, mu4: float, caps: list, weights: np.ndarray):
    """(E f^2, K) as (mantissa, exponent) pairs for paired columns (k, n), the program of
    ``variance._sizes_moments`` step by step (same recurrences, no overflow or underflow)."""
    M = max(sizes)
    n = XT.shape[1]
    h = [(np.zeros((c + 1, c + 1, n)), np.full((c + 1, c + 1, n), _ZERO, dtype=np.int64)) for c in caps]
    _put(h[0], (0, 0), (np.full(n, 0.5), np.ones(n, dtype=np.int64)))
    e = (np.zeros((M + 1, n)), np.full((M + 1, n), _ZERO, dtype=np.int64))
    _put(e, 0, (np.full(n, 0.5), np.ones(n, dtype=np.int64)))
    for x, y in zip(XT, YT):
        xx, yy, xy, both = _squares(x, y, mu4)
        for a in range(2 * M, -1, -1):
            ha, c = h[a], caps[a]
            if c:
                cross = _mul(both, _take(ha, (slice(None, -1), slice(None, -1))))
                _put(ha, slice(1, None), _add(_take(ha, slice(1, None)), _mul(xx, _take(ha, slice(None, -1)))))
                rest, shifted = (slice(None), slice(1, None)), (slice(None), slice(None, -1))
                _put(ha, rest, _add(_take(ha, rest), _mul(yy, _take(ha, shifted))))
                inner = (slice(1, None), slice(1, None))
                _put(ha, inner, _add(_take(ha, inner), cross))
            if a:
                below = _take(h[a - 1], (slice(None, c + 1), slice(None, c + 1)))
                h[a] = _add(ha, _mul(xy, below))
        _put(e, slice(1, None), _add(_take(e, slice(1, None)), _mul(xy, _take(e, slice(None, -1)))))
    terms_f, terms_E = [], []
    for a, c in enumerate(caps):
        w = np.outer(weights[a, : c + 1], weights[a, : c + 1])[:, :, None]
        f, E = _normal(h[a][0] * w, h[a][1])
        terms_f.append(f.reshape(-1, n))
        terms_E.append(E.reshape(-1, n))
    second = _sum((np.concatenate(terms_f), np.concatenate(terms_E)))
    kernel = _sum(_take(e, list(sizes)))
    return second, kernel


def _all_subsets_moments_fe(XT: np.ndarray, YT: np.ndarray, mu4: float):
    """(E f^2, K) of the all-subsets family as (mantissa, exponent) pairs: the closed-form
    products prod_j (1 + x^2 + y^2 + 4 x y + mu4 x^2 y^2) and prod_j (1 + x y), factor by factor."""
    n = XT.shape[1]
    one = (np.full(n, 0.5), np.ones(n, dtype=np.int64))
    second, kernel = one, one
    for x, y in zip(XT, YT):
        xx, yy, xy, both = _squares(x, y, mu4)
        plus_xy = _add(one, xy)
        factor = _add(_add(_add(one, xx), _add(yy, _scale(xy, 4.0))), _add(both, _mul(xx, yy)))
        second, kernel = _mul(second, factor), _mul(kernel, plus_xy)
    return second, kernel


def _variance_fe(second, kernel, scale, divisor: float, d: int) -> np.ndarray:
    """(E f^2 - K^2) / divisor as float64, clipped at 0; 0.0 where the difference is within its
    rounding bound of 0 (huge terms that cancel) and would otherwise come back as inf."""
    diff = _add(second, _scale(_mul(kernel, kernel), -1.0))
    value = _to_float(_scale(diff, 1.0 / divisor))
    # |diff| <= 8 (d + 4) u S2: indistinguishable from 0 within the rounding of the program
    bound = (8 * (d + 4) * 2.0**-53) * scale[0]
    with np.errstate(over="ignore"):
        negligible = (diff[0] == 0) | (np.abs(diff[0]) <= bound * np.exp2(np.clip(scale[1] - diff[1], -1100, 1100)))
    value = np.where(np.isfinite(value) | ~negligible, value, 0.0)
    return np.maximum(value, 0.0)
