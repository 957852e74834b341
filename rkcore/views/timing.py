"""Timing: how the mapping time of each random feature map grows with d and with D (the paper's Figure 1).

A measurement (wall-clock times): the page runs :data:`TIMING` only on its button, never cached. The
page (``pages/5_Timing.py``) draws what :func:`compute` returns, the predicted cost (:func:`predictions`)
and the complexity of each chosen map (:func:`complexity_latex`, from the registry).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from rkcore.figures.timing import predicted_figure, slope_spread, timing_figure, timing_note
from rkcore.registry import MAPS
from rkcore.studies.costs import timing_cost
from rkcore.studies.costs.rates import RunCost
from rkcore.studies.timing import growth_exponent, median_table, predicted_operations, time_maps, timing_kernel
from rkcore.teaching.glossary import defined

from .base import View
from .settings import ViewSpec

#: The run button.
RUN_LABEL = "Run the timings"
#: What the estimate and a refusal name.
MEASURED = "these timings"
#: Shown instead of the last run's timings when the current settings fail.
HIDDEN = ("The timings of the last run are hidden: they came from earlier settings, and the current ones failed "
          "(see the message above).")
#: Shown before the first run.
BEFORE_THE_RUN = (f"Press **{RUN_LABEL}**: the note then reports the growth exponents this run measured next to "
                  "what the operation counts predict (slope 1 for RK in d and D; below 1 in d for SCRK).")
#: A measured slope is stable when the standard error of the slopes of its single repeats (their standard deviation
#: over the square root of their number) is at most this: the exponent is then known to about ±0.1 (2 standard
#: errors). On a busy machine the first repeats may disagree more; the timings then repeat the unstable maps, one
#: repeat per cell at a time, at most ``tm_rep`` extra repeats (priced in :func:`cost`), instead of asking the
#: reader to measure again later.
STABLE_STANDARD_ERROR = 0.05
#: Below this many repeats a standard error says little: the slope counts as not yet stable.
MIN_REPEATS_FOR_STABLE = 3
#: The page's own fields of the state table that the timings read.
SETTINGS = ("tm_maps", "tm_m", "tm_n", "tm_sweep_n_features", "tm_at_n_components", "tm_sweep_n_components",
            "tm_at_n_features", "tm_rep", "tm_1t")


@dataclass(frozen=True)
class Sweep:  # numpydoc ignore=PR02
    """The two sweeps the settings ask for, as numbers.

    Parameters
    ----------
    maps : tuple of str
        Registry keys of the maps timed.
    d_list : tuple of int
        The values of d swept (at ``D_at``), sorted.
    D_at : int
        The fixed D of the sweep over d.
    D_list : tuple of int
        The values of D swept (at ``d_at``), sorted.
    d_at : int
        The fixed d of the sweep over D.
    n, degree, repeats : int
        Samples mapped, the kernel's order m, timed runs per cell.
    single_thread : bool
        One BLAS thread.
    """

    maps: tuple[str, ...]
    d_list: tuple[int, ...]
    D_at: int
    D_list: tuple[int, ...]
    d_at: int
    n: int
    degree: int
    repeats: int
    single_thread: bool

    def cost(self, n: int | None = None) -> RunCost:
        """Seconds and peak bytes of both sweeps (at ``n`` samples; default the chosen n).

        Parameters
        ----------
        n : int, optional
            Samples mapped.

        Returns
        -------
        RunCost
            The estimate.
        """
        return timing_cost(self.maps, self.d_list, self.D_at, self.D_list, self.d_at,
                           self.n if n is None else int(n), self.degree, self.repeats)


def sweep(*, tm_maps, tm_m, tm_n, tm_sweep_n_features, tm_at_n_components, tm_sweep_n_components, tm_at_n_features,
          tm_rep, tm_1t) -> Sweep:
    """The page's settings as numbers (not checked: :func:`checked_sweep` checks them).

    Parameters
    ----------
    tm_maps, tm_m, tm_n, tm_sweep_n_features, tm_at_n_components, tm_sweep_n_components, tm_at_n_features, \
tm_rep, tm_1t
        The page's settings (fields of the state table).

    Returns
    -------
    Sweep
        The sweeps.
    """
    return Sweep(tuple(tm_maps), tuple(sorted(int(v) for v in tm_sweep_n_features)), int(tm_at_n_components),
                 tuple(sorted(int(v) for v in tm_sweep_n_components)), int(tm_at_n_features), int(tm_n), int(tm_m),
                 int(tm_rep), bool(tm_1t))


def checked_sweep(**settings) -> Sweep:
    """:func:`sweep`, refused in the user's words when it cannot be measured.

    Parameters
    ----------
    **settings
        The page's settings.

    Returns
    -------
    Sweep
        The sweeps.

    Raises
    ------
    ValueError
        No map, fewer than two values of d or D, or an ANOVA degree above the smallest d.
    """
    s = sweep(**settings)
    if not s.maps:
        raise ValueError("Choose at least one map to time.")
    if len(s.d_list) < 2 or len(s.D_list) < 2:
        raise ValueError("Choose at least two values of d and two values of D: a growth rate needs two points.")
    smallest = min(s.d_list + (s.d_at,))
    for key in s.maps:
        if timing_kernel(key, s.degree).entry.single_order and s.degree > smallest:
            raise ValueError(f"Degree m = {s.degree} exceeds the smallest d = {smallest}: the ANOVA kernel of "
                             f"{MAPS[key].label} needs m ≤ d. Lower m or drop the small d values.")
    return s


@dataclass(frozen=True)
class TimingResult:  # numpydoc ignore=PR02
    """The measured times of both sweeps.

    Parameters
    ----------
    times : DataFrame
        :func:`rkcore.studies.timing.time_maps` rows of both sweeps, column ``sweep`` ("d" or "D").
    load : tuple of (float, int)
        The machine's load average and its cores, right after measuring.
    """

    times: pd.DataFrame
    load: tuple[float, int]

    def along(self, axis: str) -> pd.DataFrame:
        """The rows of the sweep over ``axis``.

        Parameters
        ----------
        axis : {"d", "D"}
            The swept dimension.

        Returns
        -------
        DataFrame
            Its rows.
        """
        return self.times[self.times["sweep"] == axis]

    def slopes(self) -> pd.DataFrame:
        """The growth exponents of both sweeps with the spread of the single repeats' slopes.

        Returns
        -------
        DataFrame
            Columns map (short label), along, exponent, low, high, stable (:func:`slope_errors`), and the rest
            of the fit.
        """
        by_d, by_D = self.along("d"), self.along("D")
        slopes = pd.concat([growth_exponent(by_d, "d").assign(along="d"), growth_exponent(by_D, "D").assign(along="D")],
                           ignore_index=True)
        spread = pd.concat([slope_spread(by_d, "d"), slope_spread(by_D, "D")], ignore_index=True)
        slopes = slopes.merge(spread, on=["map", "along"], how="left")
        stable = slope_errors(self.times)[["map", "along", "stable"]]
        slopes = slopes.merge(stable, on=["map", "along"], how="left")
        slopes["map"] = [MAPS[k].short_label for k in slopes["map"]]
        return slopes

    def medians(self) -> pd.DataFrame:
        """Median transform time per setting, one column per map.

        Returns
        -------
        DataFrame
            :func:`rkcore.studies.timing.median_table` of both sweeps.
        """
        return median_table(self.times.drop(columns="sweep"))

    def note(self) -> str:
        """The note: the measured slopes, their spread, and what the operation counts predict.

        Returns
        -------
        str
            :func:`rkcore.figures.timing.timing_note`.
        """
        return timing_note(self.slopes(), self.load)


def compute(spec: ViewSpec, data, *, progress: Callable[[float, str], None] | None = None, **settings) -> TimingResult:
    """Both sweeps, timed on N(0, 1) data (one BLAS thread if asked): a warm-up and ``tm_rep`` timed runs per cell.

    Parameters
    ----------
    spec : ViewSpec
        The shared settings (the seed).
    data : None
        Unused: the timings draw their own data.
    progress : callable, optional
        ``progress(fraction, message)`` over both sweeps.
    **settings
        The page's settings (:data:`SETTINGS`).

    Returns
    -------
    TimingResult
        The measured times.
    """
    s = checked_sweep(**settings)
    cells = (len(s.d_list), len(s.D_list))

    def part(k: int):  # the two sweeps share one progress bar  # numpydoc ignore=GL08
        start = 0.0 if k == 0 else cells[0] / sum(cells)
        return None if progress is None else (lambda f, msg: progress(start + f * cells[k] / sum(cells), msg))

    with threadpool_limits(limits=1 if s.single_thread else None, user_api="blas"):
        times = _sweeps(s, list(s.maps), list(s.maps), s.repeats, 1, spec.seed, part)
        for extra in range(s.repeats):  # repeat the unstable slopes, one repeat per cell, while they disagree
            unstable = unstable_slopes(times)
            if not unstable:
                break
            if progress is not None:
                progress(1.0, f"Repeating {', '.join(sorted({MAPS[k].short_label for k, _ in unstable}))}: "
                              f"their repeats disagree (extra repeat {extra + 1}/{s.repeats})")
            by_sweep = {along: [k for k, a in unstable if a == along] for along in ("d", "D")}
            more = _sweeps(s, by_sweep["d"], by_sweep["D"], 1, 0, spec.seed + s.repeats + extra, None)
            times = pd.concat([times, more.assign(repeat=more["repeat"] + s.repeats + extra)], ignore_index=True)
    return TimingResult(times, (os.getloadavg()[0], os.cpu_count() or 1))  # the note says when the machine was busy


def _sweeps(s: Sweep, maps_d: list, maps_D: list, repeats: int, warmup: int, seed: int, part) -> pd.DataFrame:
    """The sweep over d for ``maps_d`` and the sweep over D for ``maps_D`` (rows tagged with their sweep)."""
    frames = []
    if maps_d:
        frames.append(time_maps(maps_d, list(s.d_list), [s.D_at], [s.n], kernel_degree=s.degree, repeats=repeats,
                                warmup=warmup, random_state=seed, progress=part(0) if part else None).assign(sweep="d"))
    if maps_D:
        frames.append(time_maps(maps_D, [s.d_at], list(s.D_list), [s.n], kernel_degree=s.degree, repeats=repeats,
                                warmup=warmup, random_state=seed, progress=part(1) if part else None).assign(sweep="D"))
    return pd.concat(frames, ignore_index=True)


def slope_errors(times: pd.DataFrame) -> pd.DataFrame:
    """Per map and sweep: the standard error of the slopes fitted to single repeats (log time against log d or D).

    Parameters
    ----------
    times : DataFrame
        :class:`TimingResult` times (column ``sweep``).

    Returns
    -------
    DataFrame
        Columns map, along, repeats, standard_error (NaN below two repeats), stable (None below
        :data:`MIN_REPEATS_FOR_STABLE` repeats: too few to tell).
    """
    rows = []
    for along in ("d", "D"):
        sub = times[(times["sweep"] == along) & (times["phase"] == "transform") & (times["seconds"] > 0)]
        for key, g in sub.groupby("map", sort=False):
            slopes = [np.polyfit(np.log(r[along].to_numpy(float)), np.log(r["seconds"].to_numpy(float)), 1)[0]
                      for _, r in g.groupby("repeat") if r[along].nunique() >= 2]
            k = len(slopes)
            error = float(np.std(slopes, ddof=1) / np.sqrt(k)) if k >= 2 else np.nan
            rows.append({"map": key, "along": along, "repeats": k, "standard_error": error,
                         "stable": None if k < MIN_REPEATS_FOR_STABLE else bool(error <= STABLE_STANDARD_ERROR)})
    return pd.DataFrame(rows, columns=["map", "along", "repeats", "standard_error", "stable"])


def unstable_slopes(times: pd.DataFrame) -> list[tuple[str, str]]:
    """The (map, sweep) pairs whose slope is not yet stable (:data:`STABLE_STANDARD_ERROR`).

    Parameters
    ----------
    times : DataFrame
        :class:`TimingResult` times.

    Returns
    -------
    list of tuple
        (map key, "d" or "D").
    """
    errors = slope_errors(times)
    return [(map_key, along) for map_key, along, stable in zip(errors["map"], errors["along"], errors["stable"])
            if stable is not True]  # None: too few to tell


def cost(spec: ViewSpec, n: int, d: int, **settings) -> RunCost:
    """Seconds and peak bytes of :func:`compute` (the timings draw their own data: ``n`` and ``d`` are unused).

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    n, d : int
        Unused.
    **settings
        The page's settings.

    Returns
    -------
    RunCost
        The estimate.

    Raises
    ------
    ValueError
        Settings that cannot be measured (:func:`checked_sweep`).
    """
    s = checked_sweep(**settings)
    return s.cost() + extra_repeats_cost(s)


def extra_repeats_cost(s: Sweep, n: int | None = None) -> RunCost:
    """The most the repeats until stable add: ``repeats`` more timed runs per cell, without warm-ups.

    Parameters
    ----------
    s : Sweep
        The sweeps.
    n : int, optional
        Samples mapped (default the chosen n).

    Returns
    -------
    RunCost
        A section named for what it is.
    """
    full = timing_cost(s.maps, s.d_list, s.D_at, s.D_list, s.d_at, s.n if n is None else int(n), s.degree, s.repeats)
    share = s.repeats / (1 + s.repeats)  # timing_cost prices a warm-up and the repeats of each cell
    return RunCost(full.seconds * share, full.bytes, (("at most as many repeats again where they disagree",
                                                       full.seconds * share, full.bytes),))


def fits(spec: ViewSpec, data, largest: Callable[[Callable[[int], RunCost], int], int], **settings) -> str:
    """The sentence naming the largest n (samples mapped) that fits the limits.

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    data : None
        Unused.
    largest : callable
        ``largest(cost_of, upper)``: the largest size up to ``upper`` whose cost fits.
    **settings
        The page's settings.

    Returns
    -------
    str
        The sentence.
    """
    s = checked_sweep(**settings)
    fitting_n = largest(lambda size: s.cost(size) + extra_repeats_cost(s, size), s.n)
    return (f"With these maps, d and D, n up to {fitting_n:,} fits; or lower the repeats." if fitting_n
            else "Lower the largest d or D, or time fewer maps.")


def measured_what(spec: ViewSpec, data, **settings) -> str:
    """What the estimate and a refusal name.

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    data : None
        Unused.
    **settings
        The page's settings.

    Returns
    -------
    str
        :data:`MEASURED`.
    """
    return MEASURED


def predictions(**settings) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Operations per sample the complexity formulas predict along both sweeps (constants dropped).

    Parameters
    ----------
    **settings
        The page's settings.

    Returns
    -------
    tuple of DataFrame
        Along d (at the fixed D) and along D (at the fixed d).
    """
    s = checked_sweep(**settings)
    return (predicted_operations(s.maps, "d", s.d_list, D=s.D_at, degree=s.degree),
            predicted_operations(s.maps, "D", s.D_list, d=s.d_at, degree=s.degree))


def measure_text(**settings) -> str:
    """What one press measures: maps, settings, cells, repeats and threads (Markdown).

    Parameters
    ----------
    **settings
        The page's settings.

    Returns
    -------
    str
        The sentence.
    """
    s = checked_sweep(**settings)
    points = len(s.d_list) + len(s.D_list)
    return (f"**Measure:** {len(s.maps)} map(s) × {points} settings = {len(s.maps) * points} cells, "
            f"each {s.repeats} timed runs after a warm-up (up to {s.repeats} more where the single runs' slopes "
            f"disagree), n = {s.n} "
            f"({'one BLAS thread' if s.single_thread else 'all BLAS threads'}).")


def complexity_latex(map_keys) -> str:
    """Each map's time per sample from the registry (``time_complexity``), as one LaTeX line.

    Parameters
    ----------
    map_keys : iterable of str
        Registry keys (an empty choice: every map).

    Returns
    -------
    str
        "\\text{RK: } O(D\\,d\\,m)\\qquad ..." in the order given.
    """
    keys = list(map_keys) or list(MAPS)
    return r"\qquad ".join(rf"\text{{{MAPS[k].short_label}: }} {MAPS[k].time_complexity}" for k in keys)


def reproduce(spec: ViewSpec, **settings) -> str:
    """Python code timing both sweeps with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    **settings
        The page's settings.

    Returns
    -------
    str
        The code.
    """
    s = sweep(**settings)
    return "\n".join([
        "from rkcore.studies.timing import time_maps, growth_exponent, summarize",
        "from rkcore.figures.timing import timing_figure",
        "from threadpoolctl import threadpool_limits",
        "",
        f"with threadpool_limits(limits={1 if s.single_thread else None}, user_api='blas'):",
        f"    by_d = time_maps({list(s.maps)!r}, {list(s.d_list)}, [{s.D_at}], [{s.n}], "
        f"kernel_degree={s.degree}, repeats={s.repeats}, random_state={spec.seed})",
        f"    by_D = time_maps({list(s.maps)!r}, [{s.d_at}], {list(s.D_list)}, [{s.n}], "
        f"kernel_degree={s.degree}, repeats={s.repeats}, random_state={spec.seed})",
        "print(growth_exponent(by_d, 'd'), growth_exponent(by_D, 'D'))",
        "timing_figure(by_d, 'd', slopes=growth_exponent(by_d, 'd')).show()",
        "# paper Figure 1 from the command line: python -m rkcore timing --figure1",
    ])


TIMING = View(key="tm", what="the timings", compute=compute, cost=cost, reproduce=reproduce, settings=SETTINGS,
              needs_data=False, measure=True)
VIEWS = (TIMING,)

__all__ = ["BEFORE_THE_RUN", "STABLE_STANDARD_ERROR", "HIDDEN", "MAPS", "MEASURED", "RUN_LABEL", "SETTINGS", "TIMING",
           "Sweep", "TimingResult", "checked_sweep", "complexity_latex",
           "defined", "fits", "growth_exponent", "measure_text", "measured_what", "predicted_figure", "predictions",
           "slope_errors", "sweep", "timing_figure", "unstable_slopes"]
