"""The stable recursion's share of a run, priced (issue 37, finding 3): where the fast paths of the ANOVA and
up-to families (Newton's identities, the closed forms of m = 2, 3) cannot vouch for a value, they recompute it
by the stable recursion of :mod:`rkcore.kernels.stable`, O(d m) per value instead of O(m) per value and
column of a GEMM: at m = 5 and d = 1,024 about 200x slower than the fast path. The switch is data-dependent;
its condition is the code's own, :func:`rkcore.kernels.numerics.newton_is_safe` on the power sums of |z| with
``rounding_gamma(d + 2 m)`` (as :mod:`rkcore.maps.rk_blocks`, :mod:`rkcore.maps.circulant` and
:mod:`rkcore.kernels.anova_gram` call it on dense rows), evaluated here on a small sample of N(0, 1) rows
(the Timing page's data, and the shape of standardized data) times weights of the map's distribution.

The check is homogeneous in the scale of z, and for d much larger than m its verdict depends on d and m
almost only (measured: RK m = 5 rejects no value at d = 768 and every value at d = 900; m = 3 switches between
d = 1,024 and 2,048; m close to d rejects every value): the sample's share is what a run sees, within a few
per cent near the switch. Data whose magnitudes are more uneven than Gaussian rows can be rejected more
often than priced (the cost model does not see the data).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...kernels.numerics import newton_is_safe, rounding_gamma
from ...maps.random_kernel import draw_weights
from ...registry import KERNELS

__all__ = ["STABLE_SECONDS", "stable_seconds", "stable_share"]

#: seconds per (value, column, order) of the stable recursion (elementary_pairs / elementary_stable), one
#: thread, measured 5-17 ns on the 2-core machine (2026-11-29, /tmp benchmark of elementary_pairs at
#: d = 16..2,048, m = 2..10): the upper end, as small d pays a per-column overhead.
STABLE_SECONDS = 1.5e-8
_SAMPLE_ROWS, _SAMPLE_WEIGHTS = 4, 8
#: Widest sample evaluated (4 x 8 x 65,536 values: 16 MB). Wider inputs are priced as all stable: the check's
#: rounding term grows with d, so the rejected share only grows past here, and no cost model may allocate in
#: proportion to a size it is asked to price (d = 1e9 allocated 29.8 GiB).
MAX_SAMPLE_D = 65_536
_SAMPLE_SEED = 20261129


@lru_cache(maxsize=1024)
def stable_share(d: int, degree: int, kernel: str = "anova", weights: str = "rademacher") -> float:
    """Fraction of a run's values the Newton check hands to the stable recursion, on N(0, 1) rows.

    Parameters
    ----------
    d : int
        Number of input features (every one non-zero: dense rows).
    degree : int
        Order m of the kernel.
    kernel : str, default "anova"
        The kernel key; only ordered kernels (``KernelEntry.ordered``: ANOVA, up-to) are checked (others: 0.0).
    weights : str, default "rademacher"
        What multiplies the rows: a weight distribution of :mod:`rkcore.maps.distributions` ("rademacher"
        for RK's default and SCRK's +-1 circulant entries; "gaussian" also stands for the exact kernel's
        products x * y of two N(0, 1) rows).

    Returns
    -------
    float
        The share in [0, 1] of (row, weight) values the check rejects.
    """
    d, m = int(d), int(degree)
    entry = KERNELS.get(kernel)  # the ordered families' fast path hands values to the stable recursion
    if entry is None or not entry.ordered or m < 1 or d < 1 or (entry.single_order and m > d):
        return 0.0
    if d > MAX_SAMPLE_D:
        return 1.0
    rng = np.random.default_rng(_SAMPLE_SEED)
    X = np.abs(rng.standard_normal((_SAMPLE_ROWS, d)))
    if weights == "rademacher":  # |x w| = |x|: the power sums are the rows' (the code's Rademacher check)
        Z = X[:, None, :]
    else:
        Z = X[:, None, :] * np.abs(draw_weights(weights, _SAMPLE_WEIGHTS, d, _SAMPLE_SEED))[None, :, :]
    Pa = [None] + [np.sum(Z**t, axis=-1) for t in range(1, m + 1)]
    ok = newton_is_safe(Pa, m, rounding_gamma(d + 2 * m), all_orders=entry.sums_orders)
    return float(1.0 - np.mean(ok))


def stable_seconds(values: float, d: int, degree: int, kernel: str = "anova", weights: str = "rademacher") -> float:
    """Seconds of the stable recursion for the rejected share of ``values`` outputs (features or Gram entries).

    Parameters
    ----------
    values : float
        Outputs the fast path computes (n x D features, or the entries of a Gram block).
    d, degree : int
        Input features, order m.
    kernel, weights : str
        As :func:`stable_share`.

    Returns
    -------
    float
        Seconds on the quiet machine: share x values x d x (m + 1) x :data:`STABLE_SECONDS`.
    """
    share = stable_share(int(d), int(degree), kernel, weights)
    return share * float(values) * d * (max(int(degree), 1) + 1) * STABLE_SECONDS
