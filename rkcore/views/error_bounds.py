"""Error bounds: Lemmas 1-3 of the paper against the measured tail probability of the RK error.

:func:`compute` is the error study (every pair of X, the study's D and ε grids); the ε, δ and D the charts
show are picked from it afterwards (:func:`bounds_at`: formulas, no random map), so changing them recomputes
nothing. The page (``pages/3_Error_bounds.py``) draws what these return with the figure builders re-exported here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from rkcore.base.limits import format_estimate
from rkcore.figures.bounds import LEMMA_LABELS, bounds_note, bounds_vs_D_figure, bounds_vs_eps_figure, sci
from rkcore.registry import ITEMSET_KERNELS, KERNELS
from rkcore.studies import errors
from rkcore.studies.costs import error_study_cost
from rkcore.studies.costs.rates import RunCost
from rkcore.theory.bounds import bounds_table, l1_radius
from rkcore.theory.measured_tails import measured_tails, required_components

from .base import View
from .settings import ViewSpec, choices

#: The D and ε of the study (the charts pick one of them, so changing it reruns nothing): the state table's.
D_GRID, EPS_GRID, TRIALS, DELTAS = choices("eb_D"), choices("eb_eps"), choices("eb_trials"), choices("eb_delta")
#: The page's settings that only pick what the charts show (not in the study's cache key).
SHOWN = ("eb_eps", "eb_delta", "eb_D")


@dataclass(frozen=True)
class BoundsStudy:  # numpydoc ignore=PR02
    """The error study of RK on the view's data, and what the bounds need of the data.

    Parameters
    ----------
    study : DataFrame
        :func:`rkcore.studies.errors.error_study` rows over D_GRID and EPS_GRID.
    measured : DataFrame
        Tail probabilities per (D, ε) (:func:`rkcore.theory.measured_tails.measured_tails`).
    R : float
        max ‖x‖₁ over the rows.
    n, d : int
        Points and features.
    degree : int or None
        The ANOVA order (Lemma 3), None for other kernels.
    kernel_label : str
        The kernel in words.
    """

    study: pd.DataFrame
    measured: pd.DataFrame
    R: float
    n: int
    d: int
    degree: int | None
    kernel_label: str


def _degree(kernel) -> int | None:
    """The order m of Lemma 3 (ANOVA kernels), else None."""
    return int(kernel.degree) if kernel.entry.single_order else None


def compute(spec: ViewSpec, data, *, eb_trials: int, progress=None) -> BoundsStudy:
    """The error study of the RK map with the view's distribution over D_GRID and EPS_GRID (all pairs of X).

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    data : Dataset
        The view's data.
    eb_trials : int
        Random maps per D.
    progress : callable, optional
        ``report(fraction, message)`` (the dashboard's progress bar).

    Returns
    -------
    BoundsStudy
        The study and its tail probabilities.
    """
    kernel = spec.kernel_spec(data)
    n, d = data.X.shape
    # one BLAS thread: the products here are small, and threads fighting over a shared
    # 2-core machine cost far more than they bring (a 200×20×256 product went from 0.2 to 40 ms)
    with threadpool_limits(limits=1, user_api="blas"):
        study = errors.error_study(data.X, kernel, [("rk", spec.distribution)], list(D_GRID), int(eb_trials),
                                   eps=EPS_GRID, random_state=spec.seed, progress=progress)
    return BoundsStudy(study, measured_tails(study), l1_radius(data.X), n, d, _degree(kernel),
                       kernel.label())


def cost(spec: ViewSpec, n: int, d: int, *, eb_trials: int) -> RunCost:
    """Seconds and peak bytes of :func:`compute` for n points of d features.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Points and features.
    eb_trials : int
        Random maps per D.

    Returns
    -------
    RunCost
        The estimate.
    """
    kernel = spec.kernel_spec(d=d)
    return error_study_cost(n, d, kernel.name, kernel.degree, D_GRID, [("rk", spec.distribution)], int(eb_trials),
                            len(EPS_GRID))


def reproduce(spec: ViewSpec, *, eb_trials: int, eb_eps: float, eb_delta: float, eb_D: int) -> str:
    """Python code running the error study and the bounds of this view with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    eb_trials : int
        Random maps per D.
    eb_eps, eb_delta : float
        The ε and δ shown.
    eb_D : int
        The D of the ε chart.

    Returns
    -------
    str
        The code.
    """
    degree = f"{spec.degree}" if KERNELS[spec.kernel].single_order else "None"
    return spec.code(
        "from rkcore.theory.bounds import bounds_table, l1_radius",
        "from rkcore.theory.measured_tails import measured_tails, required_components",
        "from rkcore.studies.errors import error_study",
        "from rkcore.figures.bounds import bounds_vs_eps_figure",
        "",
        "R = l1_radius(X)",
        f"study = error_study(X, spec, [('rk', {spec.distribution!r})], {list(D_GRID)}, {int(eb_trials)},",
        f"                    eps={list(EPS_GRID)}, random_state={spec.seed})",
        "measured = measured_tails(study)",
        f"bounds = bounds_table({eb_D}, np.logspace(-6, 0.5, 160), R, d=d"
        + (f", degree={degree})" if degree != "None" else ")"),
        f"bounds_vs_eps_figure(measured, bounds, D={eb_D}, R=R).show()",
        f"print(required_components({float(eb_eps)!r}, {float(eb_delta)!r}, R, d, {degree}, measured))",
    )


@dataclass(frozen=True)
class BoundsShown:  # numpydoc ignore=PR02
    """What the charts, metrics and table show at one ε, δ and D (formulas over the study: no random map).

    Parameters
    ----------
    bounds_eps : DataFrame
        The bounds at D over an ε grid (the ε chart).
    bounds_D : DataFrame
        The bounds at ε over a D grid reaching 10× the largest finite pointwise requirement (the D chart).
    needed : DataFrame
        The D each lemma asks for, beside the D measured to suffice.
    max_error, mean_error : float
        Largest and mean |E| of the study at D.
    """

    bounds_eps: pd.DataFrame
    bounds_D: pd.DataFrame
    needed: pd.DataFrame
    max_error: float
    mean_error: float


def bounds_at(result: BoundsStudy, *, eps: float, delta: float, D: int) -> BoundsShown:
    """The bounds and the lemmas' requirements at the ε, δ and D shown.

    Parameters
    ----------
    result : BoundsStudy
        The view's result.
    eps, delta : float
        Error threshold and allowed failure probability.
    D : int
        The D of the ε chart (one of D_GRID).

    Returns
    -------
    BoundsShown
        The tables behind the charts and the metrics.
    """
    study, R, d, degree = result.study, result.R, result.d, result.degree
    at_D = study[study["D"] == D]
    max_error = float(at_D[at_D["metric"] == "max_abs_error"]["value"].max())
    mean_error = float(at_D[at_D["metric"] == "mean_abs_error"]["value"].mean())
    b_eps = bounds_table(D, np.logspace(np.log10(EPS_GRID[0]), 0.5, 160), R, d=d, degree=degree)
    needed = required_components(float(eps), float(delta), R, d, degree, result.measured)
    # the D axis reaches 10x the largest finite requirement of Lemmas 1 and 3 (Lemma 2 is far beyond)
    pointwise = needed.loc[needed["lemma"] != "lemma2", "D_bound"].to_numpy(float)
    pointwise = pointwise[np.isfinite(pointwise)]
    D_top = float(np.clip(10 * pointwise.max() if pointwise.size else 1e6, 1e4, 1e12))
    b_D = bounds_table(np.logspace(0, np.log10(D_top), 200), float(eps), R, d=d, degree=degree)
    return BoundsShown(b_eps, b_D, needed, max_error, mean_error)


def tail_rows(measured: pd.DataFrame, *, D: int | None = None, eps: float | None = None) -> pd.DataFrame:
    """The measured tail probabilities a chart draws (its CSV): those at one D, or at one ε.

    Parameters
    ----------
    measured : DataFrame
        :attr:`BoundsStudy.measured`.
    D : int, optional
        Keep the rows at this D.
    eps : float, optional
        Keep the rows at this ε (to rounding: np.isclose).

    Returns
    -------
    DataFrame
        The rows.
    """
    if D is not None:
        measured = measured[measured["D"] == D]
    if eps is not None:
        measured = measured[np.isclose(measured["eps"], float(eps))]
    return measured


def requirements(needed: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The table of the D each lemma asks for, and the notes under it.

    Parameters
    ----------
    needed : DataFrame
        :func:`rkcore.theory.measured_tails.required_components` rows.

    Returns
    -------
    (DataFrame, str)
        The table as shown, and the sentences on its rows that need one.
    """
    display = pd.DataFrame({
        "bound": [LEMMA_LABELS[k] for k in needed["lemma"]],
        "bounds the probability of": needed["bounds"],
        "D (lemma)": needed["D_bound"],
        "D (measured)": needed["D_measured"],
        "lemma / measured": needed["ratio"],
    })
    # the notes go under the table (a long text column made it scroll sideways at 1280 px)
    notes = ["smallest D tried: the true need may be lower, the ratio larger" if s else
             ("" if np.isfinite(m) else f"no D up to {D_GRID[-1]} was enough")
             for s, m in zip(needed["at_smallest"], needed["D_measured"])]
    return display, "".join(f" {label.split(' (')[0]}: {note}." for label, note in zip(display["bound"], notes)
                            if note)


def asks_for(row) -> tuple[str, str, str]:
    """A lemma's requirement as a metric: (label, value, delta).

    Parameters
    ----------
    row : namedtuple
        A row of :func:`rkcore.theory.measured_tails.required_components`.

    Returns
    -------
    (str, str, str)
        The metric's label, value and delta text.
    """
    sign = "≥ " if row.at_smallest else ""
    return (f"{LEMMA_LABELS[row.lemma].split(' (')[0]} asks for D =", sci(row.D_bound),
            f"{sign}{sci(row.ratio)}× the D measured to suffice" if np.isfinite(row.ratio)
            else f"measured: not reached by D = {D_GRID[-1]}")


def describe(spec: ViewSpec, result: BoundsStudy, *, description: str, kernel: str, eb_trials: int) -> str:
    """The caption naming the data, the kernel, the map and the study's grid and cost.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    result : BoundsStudy
        The view's result.
    description, kernel : str
        The data's description and the kernel's label, escaped for markdown by the caller.
    eb_trials : int
        Random maps per D.

    Returns
    -------
    str
        The caption.
    """
    n, d = result.n, result.d
    seconds = cost(spec, n, d, eb_trials=eb_trials).seconds
    return (f"{description} n = {n} points (n² = {n * n:,} pairs, diagonal included), "
            f"d = {d}, {spec.normalization}-normalized; {kernel} kernel; RK map with "
            f"{spec.distribution} weights, D ∈ {{{', '.join(map(str, D_GRID))}}}, {eb_trials} trials each; "
            f"estimated cost {format_estimate(seconds)}.")


def note(spec: ViewSpec, shown: BoundsShown, *, D: int, trials: int) -> str:
    """The note of the charts, computed from the numbers (:func:`rkcore.figures.bounds.bounds_note`).

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    shown : BoundsShown
        What the charts show.
    D : int
        The D of the ε chart.
    trials : int
        Random maps per D.

    Returns
    -------
    str
        The note.
    """
    return bounds_note(shown.bounds_eps, shown.needed, D=int(D), max_error=shown.max_error, trials=int(trials),
                       distribution=spec.distribution)


BOUNDS = View(key="eb", what="the error study", compute=compute, cost=cost, reproduce=reproduce,
              settings=("eb_trials",), progress="Measuring the errors…")
VIEWS = (BOUNDS,)

__all__ = ["BOUNDS", "DELTAS", "D_GRID", "EPS_GRID", "ITEMSET_KERNELS", "SHOWN", "TRIALS", "BoundsShown",
           "BoundsStudy", "asks_for", "bounds_at", "bounds_vs_D_figure", "bounds_vs_eps_figure", "describe", "note",
           "requirements", "tail_rows"]
