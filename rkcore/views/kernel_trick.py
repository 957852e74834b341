"""Kernel trick: the Gram matrix from explicit feature expansions vs from the kernel formula, timed as d grows.

The page (``pages/7_Kernel_trick.py``) draws what :func:`compute` returns with the figure builders and
notes re-exported here. The timings are wall-clock: the view is never cached (``cached=False``), and it
runs on its own synthetic N(0, 1/d) data, ``kt_n`` points (no dataset).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from rkcore.figures.foundations import feature_count_figure, kernel_trick_figure, kernel_trick_note
from rkcore.registry import latex_with_degree
from rkcore.studies.costs import kernel_trick_cost
from rkcore.studies.costs.rates import RunCost
from rkcore.teaching.kernel_trick import ALL_SUBSETS_EXPANSION, EXPANSIONS, MAX_SUBSETS_D, feature_count_table, kernel_trick_timing

from .base import View
from .settings import ViewSpec

#: Largest d to time, per expansion (explicit features must fit in memory and time).
D_OPTIONS = {
    "polynomial": [8, 16, 32, 64, 128, 256],
    "interactions": [8, 16, 32, 64, 128, 256],
    "all_subsets": [4, 6, 8, 10, 12, 14, 16],
}
assert max(D_OPTIONS[ALL_SUBSETS_EXPANSION]) <= MAX_SUBSETS_D
#: The largest d a page opens on for all subsets when the stored one is not offered there.
SUBSETS_FALLBACK_D = 12
#: Timed runs per (d, method), after one warm-up run.
REPEATS = 3
#: The d of the exact feature-count chart (not timed).
COUNT_D = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def order(kt_kind: str, kt_m: int) -> int:
    """The order m the expansion uses: the page's degree, 2 for all subsets (which has none).

    Parameters
    ----------
    kt_kind : str
        A key of EXPANSIONS.
    kt_m : int
        The page's degree.

    Returns
    -------
    int
        The order.
    """
    return 2 if kt_kind == ALL_SUBSETS_EXPANSION else int(kt_m)


def d_values(kt_kind: str, kt_m: int, kt_dmax: int) -> list[int]:
    """The d timed: up to the largest d (even d for all subsets, powers of two otherwise), at least m for
    interactions (m > d has no interaction).

    Parameters
    ----------
    kt_kind : str
        A key of EXPANSIONS.
    kt_m : int
        The page's degree.
    kt_dmax : int
        The largest d, one of ``D_OPTIONS[kt_kind]``.

    Returns
    -------
    list of int
        The d values.
    """
    if int(kt_dmax) not in D_OPTIONS[kt_kind]:
        raise ValueError(f"Largest d timed = {kt_dmax!r} is not offered for {EXPANSIONS[kt_kind].label}; "
                         f"allowed: {', '.join(map(str, D_OPTIONS[kt_kind]))}.")
    d_list = ([d for d in (2, 4, 6, 8, 10, 12, 14, 16) if d <= kt_dmax] if kt_kind == ALL_SUBSETS_EXPANSION
              else [int(d) for d in 2 ** np.arange(1, int(np.log2(kt_dmax)) + 1)])
    return [d for d in d_list if d >= order(kt_kind, kt_m) or kt_kind != "interactions"]


@dataclass(frozen=True)
class KernelTrickResult:  # numpydoc ignore=PR02
    """What the Kernel trick page draws.

    Parameters
    ----------
    timings : DataFrame
        Every timed run (kernel_trick_timing's tidy table).
    summary : DataFrame
        Medians per d: explicit features, both times (ms) and their ratio.
    slope : float
        Log-log slope of the explicit time over the last three d (NaN with fewer).
    d_list : list of int
        The d timed.
    """

    timings: pd.DataFrame
    summary: pd.DataFrame
    slope: float
    d_list: list

    def note(self, kind: str) -> str:
        """The "what to notice" of the timings.

        Parameters
        ----------
        kind : str
            The expansion's key.

        Returns
        -------
        str
            The note.
        """
        return kernel_trick_note(self.summary, self.slope, EXPANSIONS[kind].label)


def timing_summary(df: pd.DataFrame) -> tuple[pd.DataFrame, float]:
    """Median times per d and method, their ratio, and the explicit time's log-log slope over the last 3 d.

    Parameters
    ----------
    df : DataFrame
        kernel_trick_timing's table.

    Returns
    -------
    summary : DataFrame
        One row per d.
    slope : float
        The slope (NaN with fewer than three d).
    """
    med = df.groupby(["d", "method"])["seconds"].median().unstack("method")
    summary = pd.DataFrame({
        "d": med.index,
        "explicit features": df[df.method == "explicit features"].groupby("d")["n_features"].first().to_numpy(),
        "explicit (ms)": 1e3 * med["explicit features"].to_numpy(),
        "kernel trick (ms)": 1e3 * med["kernel trick"].to_numpy(),
        "ratio explicit / kernel": (med["explicit features"] / med["kernel trick"]).to_numpy(),
    })
    slope = np.polyfit(np.log(summary["d"].iloc[-3:]), np.log(summary["explicit (ms)"].iloc[-3:]), 1)[0] \
        if len(summary) >= 3 else float("nan")
    return summary, float(slope)


def compute(spec: ViewSpec, data, *, kt_kind: str, kt_m: int, kt_dmax: int, kt_n: int) -> KernelTrickResult:
    """Time the Gram matrix of ``kt_n`` synthetic points both ways for every d up to ``kt_dmax``.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings (its seed seeds the data).
    data : None
        The view reads no dataset.
    kt_kind, kt_m, kt_dmax, kt_n
        The page's settings: expansion, degree, largest d, points.

    Returns
    -------
    KernelTrickResult
        The timings and their summary.
    """
    d_list = d_values(kt_kind, kt_m, kt_dmax)
    # one BLAS thread: on a shared server, thread hand-offs would dominate these small products
    with threadpool_limits(limits=1, user_api="blas"):
        df = kernel_trick_timing(kt_kind, d_list, n=int(kt_n), degree=order(kt_kind, kt_m), repeats=REPEATS,
                                 seed=int(spec.seed))
    summary, slope = timing_summary(df)
    return KernelTrickResult(df, summary, slope, d_list)


def cost(spec: ViewSpec, n: int, d: int, *, kt_kind: str, kt_m: int, kt_dmax: int, kt_n: int) -> RunCost:
    """Seconds and peak bytes of :func:`compute` for n points (the view's ``size``, ``kt_n``).

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n : int
        Points (the page's ``kt_n``, or a size tried for the refusal's "n up to ... fits").
    d : int
        Unused (no dataset).
    kt_kind, kt_m, kt_dmax, kt_n
        The page's settings.

    Returns
    -------
    RunCost
        The estimate.
    """
    d_list, m = d_values(kt_kind, kt_m, kt_dmax), order(kt_kind, kt_m)
    return kernel_trick_cost([EXPANSIONS[kt_kind].n_features(dd, m) for dd in d_list], d_list, int(n), m, REPEATS)


def fits(spec: ViewSpec, largest: int, d: int, **settings) -> str:
    """The end of a refusal: the largest n that fits.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    largest : int
        The largest n that fits.
    d : int
        Unused.
    **settings
        The page's settings.

    Returns
    -------
    str
        The sentence.
    """
    return f"n up to {largest:,} fits; or lower the largest d."


def reproduce(spec: ViewSpec, *, kt_kind: str, kt_m: int, kt_dmax: int, kt_n: int) -> str:
    """Python code timing the same Gram matrices with rkcore, and the identity behind them.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    kt_kind, kt_m, kt_dmax, kt_n
        The page's settings.

    Returns
    -------
    str
        The code.
    """
    d_list, m = d_values(kt_kind, kt_m, kt_dmax), order(kt_kind, kt_m)
    return "\n".join([
        "from rkcore.teaching.kernel_trick import feature_count_table, kernel_trick_timing, polynomial_features",
        "from rkcore.figures.foundations import kernel_trick_figure",
        "",
        f"df = kernel_trick_timing({kt_kind!r}, {d_list}, n={int(kt_n)}, degree={m}, repeats={REPEATS}, "
        f"seed={int(spec.seed)})",
        "print(df.groupby(['d', 'method'])['seconds'].median().unstack())",
        "kernel_trick_figure(df).show()",
        "",
        "# the identity behind it: <phi(x), phi(y)> = (1 + <x, y>)^2",
        "import numpy as np",
        "X = np.random.RandomState(0).randn(5, 3)",
        "P = polynomial_features(X, degree=2, c=1.0)",
        "print(np.abs(P @ P.T - (1 + X @ X.T) ** 2).max())",
    ])


def feature_counts(kt_kind: str, kt_m: int) -> pd.DataFrame:
    """The exact explicit feature counts against d (not timed: light, drawn without the run protocol).

    Parameters
    ----------
    kt_kind, kt_m
        The page's expansion and degree.

    Returns
    -------
    DataFrame
        feature_count_table's tidy table.
    """
    return feature_count_table(COUNT_D, degree=order(kt_kind, kt_m))


KERNEL_TRICK = View(key="kt", what="the timings", compute=compute, cost=cost, reproduce=reproduce,
                    settings=("kt_kind", "kt_m", "kt_dmax", "kt_n"), needs_data=False, cached=False, size="kt_n",
                    fits=fits)
VIEWS = (KERNEL_TRICK,)

__all__ = ["COUNT_D", "D_OPTIONS", "EXPANSIONS", "KERNEL_TRICK", "REPEATS", "SUBSETS_FALLBACK_D", "KernelTrickResult",
           "d_values", "feature_count_figure", "feature_counts", "kernel_trick_figure", "latex_with_degree", "order"]
