"""The story's last step: the linear model on RK features against the exact kernel SVM, as the skeptic's chart
shows it (:mod:`rkcore.studies.speed_accuracy`): accuracy and prediction time over seeds at D = 16 d, and time
against n up to where the exact kernel no longer fits in memory, with the crossover. Every sentence follows the
rules of :mod:`rkcore.teaching.speed` (no "1.2x faster (0.02 s vs 0.02 s)").
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import pandas as pd
from threadpoolctl import threadpool_limits

from ..spec import load_view_data
from ..studies.accuracy import DEFAULT_SPLIT
from ..studies.costs import speed_accuracy_cost
from ..studies.speed_accuracy import MEASURED_N, TimeStudy, summarize_sweep, sweep_D, time_study
from .speed import crossover_sentence, lead_sentence

__all__ = ["DUEL_SEEDS", "JUST_NOW_S", "SpeedDuel", "duel_cost", "measure_duel", "measured_when", "speed_sentence_of"]

#: seeds (split and map) of the duel, for both models
DUEL_SEEDS = 3
#: D of the duel, as a multiple of d (the paper's largest)
DUEL_D_MULTIPLE = 16
#: a result older than this many seconds is not "measured just now" (it was kept from an earlier run)
JUST_NOW_S = 60.0


@dataclass(frozen=True)
class SpeedDuel:  # numpydoc ignore=PR02
    """The duel's numbers.

    Parameters
    ----------
    summary : DataFrame
        :func:`rkcore.studies.speed_accuracy.summarize_sweep` rows of the exact ANOVA SVM and RK.
    timing : TimeStudy
        Time against n with the crossovers.
    D : int
        RK's D.
    """

    summary: pd.DataFrame
    timing: TimeStudy
    D: int


def measured_when(measured_at: float | None, now: float | None = None) -> str:
    """When a number was measured, truthfully: "measured just now", or "measured at 09:12:03, 5 min ago, kept from
    an earlier run" for a cached result (``measured_at``, ``now``: seconds since the epoch).

    Parameters
    ----------
    measured_at : float or None
        When the number was measured (seconds since the epoch); None if unknown.
    now : float or None, optional
        The current time; None reads the clock.

    Returns
    -------
    str
        The phrase, e.g. "measured just now".
    """
    if measured_at is None:
        return "measured on this server"
    now = time.time() if now is None else now
    age = max(now - measured_at, 0.0)
    if age < JUST_NOW_S:
        return "measured just now"
    clock = time.strftime("%H:%M:%S", time.localtime(measured_at))
    ago = f"{age / 60:.0f} min" if age < 5400 else f"{age / 3600:.1f} h"
    return f"measured at {clock}, {ago} ago, kept from an earlier run"


def measure_duel(n: int) -> tuple[SpeedDuel, int, float]:
    """The duel, measured now: (numbers, training points, when) on n points of the interaction data (L1 rows).

    Parameters
    ----------
    n : int
        Points of the interaction data (half of them train).

    Returns
    -------
    tuple
        (SpeedDuel, n_train, measured_at seconds since the epoch).
    """
    data = load_view_data("interactions", "l1", int(n))
    D = DUEL_D_MULTIPLE * data.X.shape[1]
    with threadpool_limits(limits=1, user_api="blas"):
        runs = sweep_D(data.X, data.y, [D], range(DUEL_SEEDS), ["svm_anova", "rk"])
    C = float(runs.loc[runs["contender"] == "svm_anova", "C"].iloc[0])
    duel = SpeedDuel(summarize_sweep(runs), time_study(MEASURED_N, D, C), D)
    return duel, int(runs["n_train"].iloc[0]), time.time()


def duel_cost(n: int):
    """What :func:`measure_duel` asks of the server (:func:`rkcore.studies.costs.speed_accuracy_cost` for RK and
    the exact ANOVA SVM alone), so the duel waits for a server slot like every other heavy run.

    Parameters
    ----------
    n : int
        Points of the duel, as for :func:`measure_duel`.

    Returns
    -------
    RunCost
        Estimated seconds and peak bytes.
    """
    data = load_view_data("interactions", "l1", int(n))
    n_rows, d = data.X.shape
    assert DEFAULT_SPLIT[0] == 0.5  # the cost model's split
    return speed_accuracy_cost(n_rows, d, [DUEL_D_MULTIPLE * d], DUEL_SEEDS, MEASURED_N, DUEL_D_MULTIPLE * d,
                               maps=(("rk", "anova"),), exact_kernels=("anova",))


def speed_sentence_of(duel: SpeedDuel, n_train: int, measured_at: float | None, now: float | None = None) -> str:
    """Step 5's words: prediction speed and accuracy over seeds (the rules of :mod:`rkcore.teaching.speed`), then
    both crossovers, and when it was measured.

    Parameters
    ----------
    duel : SpeedDuel
        The duel's numbers.
    n_train : int
        Training points of the accuracy part.
    measured_at : float or None
        When it was measured.
    now : float or None, optional
        The present; None reads the clock.

    Returns
    -------
    str
        The sentences.
    """
    s = duel.summary
    rk, svm = s[s["contender"] == "rk"].iloc[0], s[s["contender"] == "svm_anova"].iloc[0]
    t = duel.timing
    lead = lead_sentence(rk, svm, "RK features", "the kernel SVM")
    crossings = " ".join(crossover_sentence(*t.crossovers[p], p, t.n_memory, t.max_measured, say_memory=p == "train")
                         for p in ("predict", "train"))
    return (f"{lead} {crossings} Accuracy and times over {int(rk['seeds'])} seeds (split and map) on {n_train:,} "
            f"training points, {measured_when(measured_at, now)}.")
