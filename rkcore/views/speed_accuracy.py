"""Speed and accuracy: the chart that convinces a skeptic. Accuracy, training and prediction time against D of
linear models on RK, SCRK, RFF and Nystroem features and of the exact kernel SVMs they approximate, over seeds;
time against n up to where the exact kernel no longer fits in memory, with the crossover.

The page (``pages/11_Speed_and_accuracy.py``) draws what :func:`compute` returns with the figure builders and the
sentences re-exported here; the story's last step (:mod:`rkcore.views.story`) reuses the time-against-n part.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from rkcore.data.ratings import is_regression_target
from rkcore.figures.speed_accuracy import speed_accuracy_figure, time_vs_n_figure
from rkcore.studies.costs.rates import RunCost
from rkcore.studies.costs.views import speed_accuracy_cost
from rkcore.studies.speed_accuracy import (
    CONTENDERS, MEASURED_N, TIME_D, TimeStudy, summarize_sweep, sweep_D, time_study,
)
from rkcore.teaching.speed import comparison_sentences, crossover_sentence, fm_sentence

from .base import View
from .settings import ViewSpec

#: What a first visit opens on: 2,000 points of the interaction data (1,000 training points), where the exact
#: SVM's training time and RK's are of the same order, so both sides of the crossover are in view.
OPENING = {"n": 2000}
#: The D grid: halvings of the largest D, six values.
GRID_STEPS = 6


def D_grid(D_max: int) -> list[int]:
    """Six D, halving from ``D_max`` (at least 1 each, distinct).

    Parameters
    ----------
    D_max : int
        The largest D.

    Returns
    -------
    list of int
        Increasing D.
    """
    return sorted({max(int(D_max) >> k, 1) for k in range(GRID_STEPS)})


@dataclass(frozen=True)
class SpeedResult:  # numpydoc ignore=PR02
    """What the page draws.

    Parameters
    ----------
    runs : DataFrame
        One row per (contender, D, seed) (:func:`rkcore.studies.speed_accuracy.sweep_D`).
    summary : DataFrame
        Per (contender, D) (:func:`rkcore.studies.speed_accuracy.summarize_sweep`).
    timing : TimeStudy
        Time against n, measured and extrapolated, with the crossovers.
    n_train : int
        Training points of the sweep.
    measured_at : float
        When it was measured (seconds since the epoch).
    """

    runs: pd.DataFrame
    summary: pd.DataFrame
    timing: TimeStudy
    n_train: int
    measured_at: float


def _labels(data) -> np.ndarray:
    if data.y is None or is_regression_target(data.y):
        raise ValueError("This comparison needs class labels: choose a labelled data set (not a rating or other "
                         "real-valued target).")
    return np.asarray(data.y)


def compute(spec: ViewSpec, data, sa_seeds: int, sa_Dmax: int) -> SpeedResult:
    """The sweep over D and seeds on the view's data, and time against n on the synthetic interaction data.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings (its seed is the first of ``sa_seeds`` consecutive seeds).
    data : Dataset
        The view's labelled data.
    sa_seeds : int
        Seeds (splits and maps) per method.
    sa_Dmax : int
        The largest D.

    Returns
    -------
    SpeedResult
        The tables.
    """
    y = _labels(data)
    with threadpool_limits(limits=1, user_api="blas"):
        runs = sweep_D(data.X, y, D_grid(sa_Dmax), range(spec.seed, spec.seed + int(sa_seeds)))
    C = float(runs.loc[runs["contender"] == "svm_anova", "C"].iloc[0])
    return SpeedResult(runs, summarize_sweep(runs), time_study(MEASURED_N, TIME_D, C), int(runs["n_train"].iloc[0]),
                       time.time())


def cost(spec: ViewSpec, n: int, d: int, sa_seeds: int, sa_Dmax: int) -> RunCost:
    """Seconds and peak bytes of :func:`compute` (:func:`rkcore.studies.costs.speed_accuracy_cost`).

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Points and features.
    sa_seeds, sa_Dmax : int
        As for :func:`compute`.

    Returns
    -------
    RunCost
        The estimate.
    """
    return speed_accuracy_cost(n, d, D_grid(sa_Dmax), int(sa_seeds), MEASURED_N, TIME_D)


def reproduce(spec: ViewSpec, sa_seeds: int, sa_Dmax: int) -> str:
    """Python code running this comparison with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    sa_seeds, sa_Dmax : int
        As for :func:`compute`.

    Returns
    -------
    str
        The code.
    """
    return spec.code(
        "",
        "from rkcore.studies.speed_accuracy import (crossover_n, extrapolate, fits_in_memory, summarize_sweep,",
        "                                           sweep_D, time_against_n)",
        f"runs = sweep_D(X, y, {D_grid(sa_Dmax)}, range({spec.seed}, {spec.seed + int(sa_seeds)}))",
        "print(summarize_sweep(runs))",
        f"measured = time_against_n({list(MEASURED_N)}, {TIME_D})",
        "print(extrapolate(measured, fits_in_memory()))",
        "print(crossover_n(measured, 'train'), crossover_n(measured, 'predict'))",
    )


def sentences(result: SpeedResult) -> list[str]:
    """What the page says, computed from the result (:mod:`rkcore.teaching.speed`): RK against the exact ANOVA SVM,
    Nystroem against the exact RBF SVM, the crossovers, and why the factorization machine wins where it does.

    Parameters
    ----------
    result : SpeedResult
        The comparison.

    Returns
    -------
    list of str
        Sentences, the lead first.
    """
    t = result.timing
    out = [" ".join(comparison_sentences(result.summary, "rk", "svm_anova"))]
    out += [crossover_sentence(*t.crossovers[p], p, t.n_memory, t.max_measured, say_memory=p == "train")
                         for p in ("predict", "train")]
    if {"nystroem", "svm_rbf"} <= set(result.summary["contender"]):
        out.append(" ".join(comparison_sentences(result.summary, "nystroem", "svm_rbf")))
    out.append(fm_sentence())
    return out


COLORS = {key: c.color for key, c in CONTENDERS.items()}

SPEED = View(key="speed_accuracy", what="the speed and accuracy comparison", compute=compute, cost=cost,
             reproduce=reproduce, settings=("sa_seeds", "sa_Dmax"))
VIEWS = (SPEED,)

__all__ = ["COLORS", "CONTENDERS", "MEASURED_N", "OPENING", "SPEED", "TIME_D", "SpeedResult", "D_grid", "sentences",
           "speed_accuracy_figure", "time_vs_n_figure"]
