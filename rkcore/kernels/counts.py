"""Counting itemsets without overflow: log2 of binomials, of sums and of elementary symmetric polynomials, and
a count written for people. Split from :mod:`rkcore.kernels.itemsets`, which uses them for |S|."""
from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

_LN2 = math.log(2.0)


def _log2_comb(d: int, k) -> np.ndarray:
    """log2 C(d, k) for an int or an array of k in [0, d] (float64, absolute error ~1e-9 for d <= 10^9)."""
    k = np.asarray(k, dtype=np.float64)
    return (gammaln(d + 1.0) - gammaln(k + 1.0) - gammaln(d - k + 1.0)) / _LN2


def _log2_sum(log2_values) -> float:
    """log2 of sum 2^v, without overflow."""
    v = np.asarray(log2_values if isinstance(log2_values, np.ndarray) else list(log2_values), dtype=np.float64)
    if v.size == 0:
        return -math.inf
    top = float(v.max())
    return top + float(np.log2(np.exp2(v - top).sum()))


def _log2_elementary(sizes, m: int) -> float:
    """log2 e_m(sizes) for positive sizes, by the recursion e_k <- e_k + s e_{k-1} in log space."""
    e = np.full(m + 1, -np.inf)
    e[0] = 0.0
    for s in sizes:
        e[1:] = np.logaddexp2(e[1:], math.log2(s) + e[:-1])
    return float(e[m])


def format_count(count, log2: float | None = None, exact_digits: int = 15) -> str:
    """A count for people: exact with thousands separators below 10^exact_digits, else "≈ 1.23 × 10^456".

    Never converts a huge integer to decimal (quadratic, and refused by Python beyond 4300 digits).

    Parameters
    ----------
    count : int, float or math.inf
        The count (``math.inf``: too large to hold exactly; then ``log2`` gives its size).
    log2 : float, optional
        log2 of the count; None: computed from ``count``.
    exact_digits : int, default=15
        Counts below 10^exact_digits are written out in full.

    Returns
    -------
    str
        E.g. "1,234,567", "≈ 1.23 × 10^456", or "more than 2^1024" when neither the count nor its
        logarithm is finite.
    """
    if isinstance(count, (int, np.integer)) and int(count).bit_length() <= 3.33 * exact_digits and count < 10**exact_digits:
        return f"{int(count):,}"
    if log2 is None:
        log2 = math.log2(count) if count != math.inf else math.inf
    if log2 == math.inf:
        return "more than 2^1024"
    log10 = log2 * math.log10(2.0)
    exponent = math.floor(log10)
    mantissa = 10 ** (log10 - exponent)
    if mantissa >= 9.995:  # rounding would print 10.00
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"≈ {mantissa:.2f} × 10^{exponent:,}"
