"""Random Fourier features: how fast the Gaussian-kernel estimate improves with D, and how i.i.d.,
orthogonal and structured maps of the same kernel compare (error against D, time against d).

Three views: the error curve (:data:`RFF_CURVE`), the map comparison (:data:`STRUCTURED`) and its timings
(:data:`STRUCTURED_TIMING`). The page (``pages/8_Random_Fourier_features.py``) draws what they return with
the figure builders and notes re-exported here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from rkcore.base.arrays import dense
from rkcore.figures.foundations import METRIC_LABELS, rff_error_figure, rff_note, rff_summary
from rkcore.figures.fourier import FOURIER_METRICS, fourier_mse_figure
from rkcore.figures.timing import timing_figure, timing_note
from rkcore.registry import MAPS
from rkcore.studies.costs import rff_curve_cost, timing_cost
from rkcore.studies.costs.rates import RunCost
from rkcore.studies.fourier_study import fourier_map_study, fourier_note, fourier_study_cost, fourier_summary
from rkcore.studies.timing import growth_exponent, time_maps
from rkcore.teaching.fourier_features import median_heuristic_gamma, rff_error_curve

from .base import View
from .settings import ViewSpec, choices

#: The largest D offered for the error curve.
D_MAX_OPTIONS = list(choices("rff_Dmax"))
#: How γ is set.
BANDWIDTHS = {"median": "Median heuristic", "manual": "Set γ by hand"}
#: Rows kept for the map comparison: it keeps trials x n²/2 estimates per cell.
STRUCTURED_ROWS = 300
#: The d timed for the map comparison's "time against d", at D = TIMING_D_MULTIPLE x the largest d.
TIMING_D = (16, 32, 64, 128, 256, 512)
TIMING_D_MULTIPLE = 4
#: Points and timed runs of the map comparison's timings (N(0, 1) rows).
TIMING_N = 500
TIMING_REPEATS = 3


def curve_D(rff_Dmax: int) -> tuple[int, ...]:
    """The D of the error curve: powers of two from 16 to the largest D.

    Parameters
    ----------
    rff_Dmax : int
        The largest D.

    Returns
    -------
    tuple of int
        The D values.
    """
    return tuple(int(D) for D in 2 ** np.arange(4, int(np.log2(rff_Dmax)) + 1))


def bandwidth(X, rff_bw: str, rff_gamma: float) -> float:
    """γ: the median heuristic on X, or the one set by hand.

    Parameters
    ----------
    X : ndarray
        The points.
    rff_bw : {"median", "manual"}
        How γ is set.
    rff_gamma : float
        γ set by hand.

    Returns
    -------
    float
        γ.
    """
    return median_heuristic_gamma(X) if rff_bw == "median" else float(rff_gamma)


# ============================================================================ the error curve
@dataclass(frozen=True)
class CurveResult:  # numpydoc ignore=PR02
    """The RFF error curve: every (trial, D, metric) error, the γ used, the data's shape and the D.

    Parameters
    ----------
    curve : DataFrame
        rff_error_curve's tidy table.
    gamma : float
        The kernel width used.
    n, d : int
        Points and features.
    D_list : tuple of int
        The D.
    """

    curve: pd.DataFrame
    gamma: float
    n: int
    d: int
    D_list: tuple

    def summary(self, metric: str) -> pd.DataFrame:
        """The page's table for one error measure.

        Parameters
        ----------
        metric : str
            A key of METRIC_LABELS.

        Returns
        -------
        DataFrame
            rff_summary's table.
        """
        return rff_summary(self.curve, metric)


def curve_compute(spec: ViewSpec, data, *, rff_bw: str, rff_gamma: float, rff_Dmax: int,
                  rff_trials: int) -> CurveResult:
    """The error of the RFF Gram estimate against D, ``rff_trials`` maps per D (seeds spec.seed, ...).

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    data : Dataset
        The view's data.
    rff_bw, rff_gamma, rff_Dmax, rff_trials
        The page's settings: bandwidth rule, γ by hand, largest D, trials.

    Returns
    -------
    CurveResult
        The curve.
    """
    X = dense(data.X)
    gamma, D_list = bandwidth(X, rff_bw, rff_gamma), curve_D(rff_Dmax)
    with threadpool_limits(limits=1, user_api="blas"):  # small products: one BLAS thread avoids oversubscription
        df = rff_error_curve(X, gamma, list(D_list), trials=int(rff_trials), seed=spec.seed)
    return CurveResult(df, float(gamma), X.shape[0], X.shape[1], D_list)


def curve_cost(spec: ViewSpec, n: int, d: int, *, rff_bw: str, rff_gamma: float, rff_Dmax: int,
               rff_trials: int) -> RunCost:
    """Seconds and peak bytes of :func:`curve_compute` for n points of d features.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Points and features.
    rff_bw, rff_gamma, rff_Dmax, rff_trials
        The page's settings.

    Returns
    -------
    RunCost
        The estimate.
    """
    return rff_curve_cost(n, d, curve_D(rff_Dmax), int(rff_trials))


def curve_fits(spec: ViewSpec, largest: int, d: int, *, rff_Dmax: int, rff_trials: int, **settings) -> str:
    """The end of a refusal: the largest n that fits, and what else helps.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    largest : int
        The largest n that fits.
    d : int
        Features.
    rff_Dmax, rff_trials
        The page's largest D and trials.
    **settings
        The page's other settings.

    Returns
    -------
    str
        The sentence.
    """
    return (f"With the largest D = {curve_D(rff_Dmax)[-1]:,} and {rff_trials} trials, n up to {largest:,} fits; "
            "or lower the largest D or the trials.")


def curve_reproduce(spec: ViewSpec, *, rff_bw: str, rff_gamma: float, rff_Dmax: int, rff_trials: int,
                    rff_metric: str = "rel_fro") -> str:
    """Python code computing the error curve and the page's table with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    rff_bw, rff_gamma, rff_Dmax, rff_trials
        The page's settings.
    rff_metric : str, default="rel_fro"
        The error measure of the table and the chart (a page field the figures read, not the computation).

    Returns
    -------
    str
        The code.
    """
    return "\n".join([
        *[line for line in spec.code().splitlines() if "KernelSpec" not in line],
        "from rkcore.teaching.fourier_features import median_heuristic_gamma, rff_error_curve",
        "from rkcore.figures.foundations import rff_error_figure, rff_summary",
        "from rkcore.base.arrays import dense",
        "",
        "X = dense(X)",
        f"gamma = {'median_heuristic_gamma(X)' if rff_bw == 'median' else repr(float(rff_gamma))}",
        f"df = rff_error_curve(X, gamma, {list(curve_D(rff_Dmax))}, trials={int(rff_trials)}, seed={spec.seed})",
        'print(f"gamma = {gamma:.4g}")',
        f"print(rff_summary(df, {rff_metric!r}).to_string(index=False, float_format='%.4g'))  # the page's table",
        f"rff_error_figure(df, {rff_metric!r}).show()",
    ])


# ============================================================================ the map comparison
def structured_D(rff_mult, d: int) -> tuple[int, ...]:
    """The D of the map comparison: the chosen multiples of d, sorted.

    Parameters
    ----------
    rff_mult : tuple of str
        Multiples of d.
    d : int
        Features.

    Returns
    -------
    tuple of int
        The D values.
    """
    return tuple(sorted(int(m) * d for m in rff_mult))


def _check_choice(rff_maps, rff_mult=("1",)) -> None:
    if not rff_maps or not rff_mult:
        raise ValueError("Choose at least one map and one multiple of d.")


@dataclass(frozen=True)
class StructuredResult:  # numpydoc ignore=PR02
    """The map comparison: MSE, variance and squared bias per (map, D), on the first rows.

    Parameters
    ----------
    study : DataFrame
        fourier_map_study's table.
    gamma : float
        γ (median heuristic on the rows used).
    n, d : int
        Rows used and features.
    """

    study: pd.DataFrame
    gamma: float
    n: int
    d: int


def structured_compute(spec: ViewSpec, data, *, rff_maps, rff_mult, rff_strials: int,
                       progress=None) -> StructuredResult:
    """Error, variance and bias of each map's Gram estimate at D = multiples of d, on the first
    STRUCTURED_ROWS rows, ``rff_strials`` maps per (map, D) sharing their seeds.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    data : Dataset
        The view's data.
    rff_maps, rff_mult, rff_strials
        The page's settings: maps, multiples of d, maps per D.
    progress : callable, optional
        ``report(fraction, message)`` after each (map, D).

    Returns
    -------
    StructuredResult
        The comparison.
    """
    _check_choice(rff_maps, rff_mult)
    X = dense(data.X)[:STRUCTURED_ROWS]
    n, d = X.shape
    gamma = median_heuristic_gamma(X)
    with threadpool_limits(limits=1, user_api="blas"):
        df = fourier_map_study(X, gamma, list(rff_maps), list(structured_D(rff_mult, d)), int(rff_strials),
                               seed=spec.seed, progress=progress)
    return StructuredResult(df, float(gamma), n, d)


def structured_cost(spec: ViewSpec, n: int, d: int, *, rff_maps, rff_mult, rff_strials: int) -> RunCost:
    """Seconds and peak bytes of :func:`structured_compute` for n points (at most STRUCTURED_ROWS used).

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Points and features.
    rff_maps, rff_mult, rff_strials
        The page's settings.

    Returns
    -------
    RunCost
        The estimate.
    """
    _check_choice(rff_maps, rff_mult)
    return fourier_study_cost(min(n, STRUCTURED_ROWS), d, rff_maps, structured_D(rff_mult, d), int(rff_strials))


def structured_fits(spec: ViewSpec, largest: int, d: int, **settings) -> str:
    """The end of a refusal (the rows are capped already: fewer maps or D help).

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    largest : int
        Unused.
    d : int
        Unused.
    **settings
        The page's settings.

    Returns
    -------
    str
        The sentence.
    """
    return "Fewer maps, multiples of d or maps per D also help."


def structured_reproduce(spec: ViewSpec, *, rff_maps, rff_mult, rff_strials: int) -> str:
    """Python code computing the map comparison with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    rff_maps, rff_mult, rff_strials
        The page's settings.

    Returns
    -------
    str
        The code.
    """
    return "\n".join([
        *[line for line in spec.code().splitlines() if "KernelSpec" not in line],
        "from rkcore.teaching.fourier_features import median_heuristic_gamma",
        "from rkcore.studies.fourier_study import fourier_map_study, fourier_summary",
        "from rkcore.base.arrays import dense",
        "",
        f"X = dense(X)[:{STRUCTURED_ROWS}]",
        f"D_list = sorted(m * X.shape[1] for m in {[int(m) for m in rff_mult]})",
        f"df = fourier_map_study(X, median_heuristic_gamma(X), {list(rff_maps)}, D_list, {int(rff_strials)}, "
        f"seed={spec.seed})",
        "print(fourier_summary(df).to_string(index=False, float_format='%.4g'))",
    ])


# ============================================================================ the map comparison's timings
@dataclass(frozen=True)
class TimingResult:  # numpydoc ignore=PR02
    """Mapping times of the compared maps against d, and each map's fitted exponent.

    Parameters
    ----------
    timing : DataFrame
        time_maps' table.
    slopes : DataFrame
        growth_exponent's table (time ∝ d^k).
    """

    timing: pd.DataFrame
    slopes: pd.DataFrame

    def note(self) -> str:
        """The "what to notice" of the timings.

        Returns
        -------
        str
            The note.
        """
        return timing_note(self.slopes.assign(along="d"))


def timing_D() -> int:
    """The D of the timings: TIMING_D_MULTIPLE x the largest d timed.

    Returns
    -------
    int
        D.
    """
    return TIMING_D_MULTIPLE * TIMING_D[-1]


def timing_compute(spec: ViewSpec, data, *, rff_maps) -> TimingResult:
    """Time each map's fit and transform of TIMING_N N(0, 1) rows for every d of TIMING_D.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings (its seed).
    data : None
        The view reads no dataset.
    rff_maps : tuple of str
        The maps.

    Returns
    -------
    TimingResult
        The times and the fitted exponents.
    """
    _check_choice(rff_maps)
    with threadpool_limits(limits=1, user_api="blas"):
        timing = time_maps(list(rff_maps), list(TIMING_D), [timing_D()], [TIMING_N], repeats=TIMING_REPEATS,
                           warmup=1, random_state=spec.seed)
    return TimingResult(timing, growth_exponent(timing, "d"))


def timing_view_cost(spec: ViewSpec, n: int, d: int, *, rff_maps) -> RunCost:
    """Seconds and peak bytes of :func:`timing_compute` (its own data: n and d unused).

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Unused.
    rff_maps : tuple of str
        The maps.

    Returns
    -------
    RunCost
        The estimate.
    """
    _check_choice(rff_maps)
    return timing_cost(rff_maps, TIMING_D, timing_D(), [], TIMING_D[0], TIMING_N, 1, TIMING_REPEATS)


def timing_reproduce(spec: ViewSpec, *, rff_maps) -> str:
    """Python code timing the maps against d with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    rff_maps : tuple of str
        The maps.

    Returns
    -------
    str
        The code.
    """
    return "\n".join([
        "from rkcore.studies.timing import growth_exponent, time_maps",
        "",
        f"timing = time_maps({list(rff_maps)}, {list(TIMING_D)}, [{timing_D()}], [{TIMING_N}], "
        f"repeats={TIMING_REPEATS}, warmup=1, random_state={spec.seed})",
        "print(growth_exponent(timing, 'd'))",
    ])


RFF_CURVE = View(key="rff", what="the error curve", compute=curve_compute, cost=curve_cost,
                 reproduce=curve_reproduce, settings=("rff_bw", "rff_gamma", "rff_Dmax", "rff_trials"), fits=curve_fits)
STRUCTURED = View(key="rff_struct", what="the comparison", compute=structured_compute, cost=structured_cost,
                  reproduce=structured_reproduce, settings=("rff_maps", "rff_mult", "rff_strials"),
                  fits=structured_fits, progress="Comparing the maps…")
STRUCTURED_TIMING = View(key="rff_time", what="the timings", compute=timing_compute, cost=timing_view_cost,
                         reproduce=timing_reproduce, settings=("rff_maps",), needs_data=False)
VIEWS = (RFF_CURVE, STRUCTURED, STRUCTURED_TIMING)

__all__ = ["BANDWIDTHS", "D_MAX_OPTIONS", "FOURIER_METRICS", "MAPS", "METRIC_LABELS", "RFF_CURVE", "STRUCTURED",
           "STRUCTURED_ROWS", "STRUCTURED_TIMING", "TIMING_N", "TIMING_REPEATS", "CurveResult", "StructuredResult",
           "TimingResult", "curve_D", "fourier_mse_figure", "fourier_note", "fourier_summary", "rff_error_figure",
           "rff_note", "timing_D", "timing_figure"]
