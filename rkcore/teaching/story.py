"""The guided five-minute story of the dashboard: the paper's argument on data chosen to show it.

Pure functions (no streamlit): each step's data, and each step's one sentence computed from the
same table the step draws, so the sentence can never contradict the screen.

Data: the built-in digits (L2-normalized, sorted by digit so that the Gram matrix shows blocks of
similar images) under the degree-2 ANOVA kernel; the last step (:mod:`rkcore.teaching.story_speed`) uses the
synthetic interaction data (binary labels that need degree-2 terms) at a size chosen on the page.

``JUST_NOW_S``, ``measured_when`` and ``duel_cost`` are the last step's, kept importable from here.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..maps.distributions import DISTRIBUTIONS
from ..studies.gram import gram_errors, gram_pair
from ..metrics import SEPARATION_SE, separated
from ..registry import KernelSpec
from ..spec import load_view_data
from ..studies.variance_study import variance_by_distribution
from .claims import flat_sentence
from .story_speed import JUST_NOW_S, SpeedDuel, duel_cost, measure_duel, measured_when, speed_sentence_of  # noqa: F401

STORY_DATASET = "digits"
STORY_NORMALIZATION = "l2"
STORY_N = 240
STORY_KERNEL = KernelSpec("anova", degree=2)
STORY_D_GRID = (16, 64, 256, 1024, 4096)
STORY_DISTRIBUTIONS = ("rademacher", "gaussian")


def story_data(n: int = STORY_N, dataset: str = STORY_DATASET, normalization: str = STORY_NORMALIZATION):
    """(X, labels) of the story: n points of the dataset (digits: L2-normalized), sorted by label.

    Parameters
    ----------
    n : int, default=240
        Number of points.
    dataset : str, default="digits"
        A built-in dataset key.
    normalization : str, default="l2"
        Row normalization.

    Returns
    -------
    X : numpy.ndarray of shape (n, n_features)
        The points, sorted by label.
    labels : numpy.ndarray of shape (n,)
        Their labels.
    """
    data = load_view_data(dataset, normalization, int(n))
    assert data.y is not None  # the story's data sets are labelled
    order = np.argsort(data.y, kind="stable")
    return np.asarray(data.X)[order], np.asarray(data.y)[order]


def gram_for(X, D: int, distribution: str = "rademacher", seed: int = 0):
    """Exact K and RK estimate K̂ of the story kernel at D features.

    Parameters
    ----------
    X : numpy.ndarray of shape (n_samples, n_features)
        The story's points.
    D : int
        Number of random features.
    distribution : str, default="rademacher"
        RK's weight distribution.
    seed : int, default=0
        Seed of the map.

    Returns
    -------
    K, K_hat : numpy.ndarray of shape (n_samples, n_samples)
        The exact Gram matrix and its estimate.
    """
    return gram_pair(X, STORY_KERNEL, "rk", int(D), distribution, int(seed))


def error_vs_D(X, D_grid=STORY_D_GRID, distributions=STORY_DISTRIBUTIONS, trials: int = 3, seed: int = 0
               ) -> pd.DataFrame:
    """Relative Frobenius error ‖K̂ − K‖/‖K‖ for every distribution, D and trial (seeds seed, seed+1, ...).

    Parameters
    ----------
    X : numpy.ndarray of shape (n_samples, n_features)
        The story's points.
    D_grid : sequence of int
        Numbers of random features.
    distributions : sequence of str
        Distribution keys.
    trials : int, default=3
        Draws per (distribution, D).
    seed : int, default=0
        Seed of the first trial.

    Returns
    -------
    pandas.DataFrame
        One row per (distribution, D, trial) with the relative error.
    """
    rows = []
    for dist in distributions:
        for D in D_grid:
            for t in range(int(trials)):
                K, K_hat = gram_for(X, D, dist, seed + t)
                rows.append({"distribution": dist, "D": int(D), "trial": t, "seed": seed + t,
                             "rel_fro": gram_errors(K, K_hat)["rel_fro"]})
    return pd.DataFrame(rows)


def median_error(df: pd.DataFrame) -> pd.DataFrame:
    """Median relative error per (distribution, D): the line the story draws.

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`error_vs_D` output.

    Returns
    -------
    pandas.DataFrame
        The median relative error per (distribution, D).
    """
    return (df.groupby(["distribution", "D"], sort=False)["rel_fro"].median().rename("median_rel_fro")
            .reset_index())


def gram_sentence(K: np.ndarray, K_hat: np.ndarray, D: int, labels) -> str:
    """Step 2: how alike the two heatmaps are, from their numbers.

    Parameters
    ----------
    K : numpy.ndarray
        The exact Gram matrix.
    K_hat : numpy.ndarray
        Its RK estimate.
    D : int
        Number of random features.
    labels : array-like
        Label of each row (the blocks).

    Returns
    -------
    str
        The sentence shown under the step's chart.
    """
    rel = gram_errors(K, K_hat)["rel_fro"]
    labels = np.asarray(labels)
    same = labels[:, None] == labels[None, :]
    off = ~np.eye(len(labels), dtype=bool)
    ratio_exact = K[same & off].mean() / K[~same].mean()
    ratio_hat = K_hat[same & off].mean() / K_hat[~same].mean()
    return (f"Same blocks in both: pairs of the same digit average {ratio_exact:.2f}× the kernel value of "
            f"different digits in K and {ratio_hat:.2f}× in K̂, computed from just D = {D:,} random features "
            f"(relative error {rel:.2f}).")


def convergence_sentence(medians: pd.DataFrame, distribution: str = "rademacher") -> str:
    """Step 3: the error at the smallest and largest D and the fitted slope on log-log axes.

    Parameters
    ----------
    medians : pandas.DataFrame
        :func:`median_error` output.
    distribution : str, default="rademacher"
        The distribution described.

    Returns
    -------
    str
        The sentence shown under the step's chart.
    """
    m = medians[medians["distribution"] == distribution].sort_values("D")
    first, last = m.iloc[0], m.iloc[-1]
    slope = float(np.polyfit(np.log(m["D"]), np.log(m["median_rel_fro"]), 1)[0])
    verb = "falls" if last.median_rel_fro < first.median_rel_fro else "does not fall: it goes"
    return (f"The error {verb} from {first.median_rel_fro:.2f} at D = {int(first.D):,} to "
            f"{last.median_rel_fro:.3f} at D = {int(last.D):,}: a log-log slope of {slope:.2f} "
            f"(1/√D would be −0.5).")


def step3_sentence(trials: pd.DataFrame, distribution: str = "rademacher") -> str:
    """Step 3's words: :func:`convergence_sentence` and, where the median does not fall between neighbouring
    D, :func:`rkcore.teaching.claims.flat_sentence` with the draws that explain it.

    Parameters
    ----------
    trials : pandas.DataFrame
        :func:`error_vs_D` output.
    distribution : str, default="rademacher"
        The distribution described.

    Returns
    -------
    str
        The sentence(s) under the step's chart.
    """
    medians = median_error(trials)
    own = medians[medians["distribution"] == distribution]
    return " ".join(filter(None, [convergence_sentence(medians, distribution),
                                  flat_sentence(trials[trials["distribution"] == distribution], own)]))


def separation_by_D(trials: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Per D, which of two distributions has the lower mean error beyond the trials' spread
    (:func:`rkcore.metrics.separated`: more than SEPARATION_SE standard errors of the difference).

    Parameters
    ----------
    trials : pandas.DataFrame
        :func:`error_vs_D` output (one row per distribution, D and trial).
    a, b : str
        The two distribution keys.

    Returns
    -------
    pandas.DataFrame
        Index D; columns ``lower`` (a, b, or "" for a tie) and ``trials`` (the fewer trials of the two).
    """
    stats = trials.groupby(["distribution", "D"])["rel_fro"].agg(
        mean="mean", std=lambda v: float(np.std(v)), n="count")  # std ddof 0, as separated() takes it
    rows = {}
    for D in sorted(trials["D"].unique()):
        sa, sb = stats.loc[(a, D)], stats.loc[(b, D)]
        real = separated(sa["mean"], sa["std"], int(sa["n"]), sb["mean"], sb["std"], int(sb["n"]))
        rows[int(D)] = {"lower": (a if sa["mean"] < sb["mean"] else b) if real else "",
                        "trials": int(min(sa["n"], sb["n"]))}
    return pd.DataFrame.from_dict(rows, orient="index")


def distribution_sentence(trials: pd.DataFrame, a: str = "rademacher", b: str = "gaussian") -> str:
    """Step 4: how much larger the error is with b than with a (the median of the ratios of the medians the
    chart draws), and where one is lower beyond the trials' spread; within it, they tie.

    Parameters
    ----------
    trials : pandas.DataFrame
        :func:`error_vs_D` output.
    a : str, default="rademacher"
        The reference distribution.
    b : str, default="gaussian"
        The distribution compared with it.

    Returns
    -------
    str
        The sentence shown under the step's chart.
    """
    wide = median_error(trials).pivot(index="D", columns="distribution", values="median_rel_fro")
    ratio = float((wide[b] / wide[a]).median())
    by_D = separation_by_D(trials, a, b)
    la, lb = DISTRIBUTIONS[a].label, DISTRIBUTIONS[b].label
    spread = f"{SEPARATION_SE:g} standard errors of the difference over {int(by_D['trials'].min())} trials"
    a_lower, b_lower = int((by_D["lower"] == a).sum()), int((by_D["lower"] == b).sum())
    if not a_lower and not b_lower:
        return (f"{la} and {lb} weights tie: at every D their errors differ by less than {spread} (median ratio "
                f"{ratio:.2f}×), so Lemma 4's prediction (a statement about the worst pair x, y) does not show here.")
    ties = [f"{D:,}" for D in by_D.index[by_D["lower"] == ""]]
    verdict = ("as Lemma 4 predicts" if a_lower > len(by_D) / 2 and not b_lower else
               "so here Lemma 4's prediction (a statement about the worst pair x, y) does not show")
    return (f"{lb} weights give {ratio:.2f}× the error of {la} weights (median over D); beyond the trials' spread "
            f"({spread}) {la} is lower at {a_lower} of {len(by_D)} values of D"
            + (f", {lb} at {b_lower}" if b_lower else "") + f", {verdict}"
            + (f"; they tie at D = {', '.join(ties)}" if ties else "") + ".")


def matrix_frame(K: np.ndarray, K_hat: np.ndarray | None = None) -> pd.DataFrame:
    """The drawn matrices as a tidy table (i, j, exact[, approx]) for the CSV download.

    Parameters
    ----------
    K : numpy.ndarray
        The exact Gram matrix.
    K_hat : numpy.ndarray, optional
        Its estimate.

    Returns
    -------
    pandas.DataFrame
        Columns i, j, exact and, with ``K_hat``, approx.
    """
    i, j = np.indices(K.shape)
    out = pd.DataFrame({"i": i.ravel(), "j": j.ravel(), "exact": K.ravel()})
    if K_hat is not None:
        out["approx"] = K_hat.ravel()
    return out


def kernel_sentence(K: np.ndarray, labels) -> str:
    """Step 1: the block structure and what the exact matrix costs.

    Parameters
    ----------
    K : numpy.ndarray
        The exact Gram matrix.
    labels : array-like
        Label of each row (the blocks).

    Returns
    -------
    str
        The sentence shown under the step's chart.
    """
    labels = np.asarray(labels)
    same = labels[:, None] == labels[None, :]
    off = ~np.eye(len(labels), dtype=bool)
    ratio = K[same & off].mean() / K[~same].mean()
    n = K.shape[0]
    return (f"Images of the same digit are more alike: their kernel values average {ratio:.2f}× those of "
            f"different digits, hence the blocks. A kernel SVM needs all n² = {n * n:,} entries; at "
            f"n = 100,000 that is 10¹⁰ (80 GB).")


# ============================================================================ the five steps, computed
STEP_TITLES = {1: "The kernel", 2: "Its estimate", 3: "Larger D", 4: "Weights", 5: "Speed vs SVM"}
#: D of the story's Gram matrices (steps 1 and 2)
STORY_GRAM_D = 256


@dataclass
class StoryStep:  # numpydoc ignore=PR02
    """One screen: its heading, its sentence, what its figure is built from (``kind`` names the builder
    of rkcore.figures.story, ``figure_args`` its arguments) and a caption.

    Parameters
    ----------
    number : int
        Step number, 1 to 5.
    heading : str
        Screen heading.
    sentence : str
        What the screen says.
    kind : str
        Figure builder: "matrix", "pair", "curve" or "speed" (:data:`rkcore.figures.story.STEP_BUILDERS`).
    figure_args : tuple
        Positional arguments of the builder.
    caption : str, default ""
        Caption under the figure.
    data : pandas.DataFrame or None, optional
        The numbers behind the figure, if any.
    """
    number: int
    heading: str
    sentence: str
    kind: str
    figure_args: tuple
    caption: str = ""
    data: pd.DataFrame | None = None


def gram_steps() -> list[StoryStep]:
    """Steps 1 and 2: the exact matrix of the digits and its estimate at D = STORY_GRAM_D.

    Returns
    -------
    list of StoryStep
        Steps 1 and 2.
    """
    X, y = story_data()
    K, K_hat = gram_for(X, STORY_GRAM_D)
    n = K.shape[0]
    return [StoryStep(1, f"1 · {STEP_TITLES[1]}", kernel_sentence(K, y), "matrix",
                      (K, y, f"The exact ANOVA (m = 2) kernel on {n} handwritten digits")),
            StoryStep(2, f"2 · {STEP_TITLES[2]}", gram_sentence(K, K_hat, STORY_GRAM_D, y), "pair",
                      (K, K_hat, STORY_GRAM_D))]


def error_steps() -> list[StoryStep]:
    """Steps 3 and 4: the error against D on the digits, and Rademacher against Gaussian weights.

    Returns
    -------
    list of StoryStep
        Steps 3 and 4.
    """
    X, _ = story_data()
    trials = error_vs_D(X, distributions=("rademacher",), trials=2)
    medians = median_error(trials)
    X4, _ = story_data(200, "interactions", "l1")
    trials4 = error_vs_D(X4, distributions=STORY_DISTRIBUTIONS, trials=3)
    medians4 = median_error(trials4)
    step3 = step3_sentence(trials)
    step4 = " ".join([distribution_sentence(trials4), switch_sentence(
        exact_variance_ratio(X), exact_variance_ratio(X4), "digits", "synthetic interaction data")])
    return [StoryStep(3, f"3 · {STEP_TITLES[3]}", step3, "curve",
                      (trials, medians, "Error of the estimate as D grows (digits)"), data=trials),
            StoryStep(4, f"4 · {STEP_TITLES[4]}", step4, "curve",
                      (trials4, medians4, "Rademacher vs Gaussian weights (synthetic interaction data)"), data=trials4)]


def exact_variance_ratio(X, distribution: str = "gaussian") -> float:
    """Mean exact variance of the story kernel's estimate with ``distribution`` weights over Rademacher's
    (:func:`rkcore.studies.variance_study.variance_by_distribution`; no random map enters it).

    Parameters
    ----------
    X : numpy.ndarray of shape (n_samples, n_features)
        The points.
    distribution : str, default="gaussian"
        The distribution compared with Rademacher.

    Returns
    -------
    float
        The ratio of the mean variances (at least 1 by Lemma 4).
    """
    summary = variance_by_distribution(X, STORY_KERNEL, (distribution,), max_pairs=1000)
    return float(summary["ratio_to_rademacher"].iloc[0])


def switch_sentence(ratio_before: float, ratio_after: float, before: str, after: str) -> str:
    """Step 4 changes data set; say so, and why, from the exact variance ratios (Gaussian over Rademacher)
    on the data before and after: the error ratio is about the square root of the variance ratio.

    Parameters
    ----------
    ratio_before, ratio_after : float
        Exact variance ratios on the two data sets.
    before, after : str
        Their names.

    Returns
    -------
    str
        One sentence.
    """
    return (f"This step uses the {after}, not the {before}: there Gaussian weights' exact variance is "
            f"{ratio_after:.2f}× Rademacher's (error about {ratio_after ** 0.5:.2f}×), on the {before} only "
            f"{ratio_before:.2f}× (error about {ratio_before ** 0.5:.2f}×), too small to see in a few draws.")


def duel(n: int) -> tuple[SpeedDuel, int, float]:
    """Step 5's measurement (:func:`rkcore.teaching.story_speed.measure_duel`): the exact ANOVA kernel SVM against
    the linear model on RK features at D = 16 d over seeds, and time against n with the crossover.

    Parameters
    ----------
    n : int
        Number of points of the interaction data to load.

    Returns
    -------
    tuple
        (SpeedDuel, n_train int, measured_at float seconds since the epoch).
    """
    return measure_duel(n)


def duel_step(result: SpeedDuel, n_train: int, measured_at: float | None, now: float | None = None) -> StoryStep:
    """Step 5: the skeptic's chart (time against n, the crossover) from the duel's measurement, its sentence from the
    numbers (:func:`rkcore.teaching.story_speed.speed_sentence_of`), captioned with when it ran.

    Parameters
    ----------
    result : SpeedDuel
        The duel's numbers.
    n_train : int
        Training points of the duel's accuracy part.
    measured_at : float or None
        When it was measured (seconds since the epoch).
    now : float or None, optional
        The current time; None reads the clock.

    Returns
    -------
    StoryStep
        Step 5.
    """
    clock = time.strftime("%H:%M:%S", time.localtime(measured_at)) if measured_at else "an earlier run"
    t = result.timing
    return StoryStep(5, f"5 · {STEP_TITLES[5]}", speed_sentence_of(result, n_train, measured_at, now), "speed",
                     (t.times, t.crossovers, t.n_memory, t.D),
                     caption=f"Measured at {clock} on this server (one BLAS thread; solid: measured, dotted: "
                             "extrapolated by a power law). The Speed and accuracy page runs the full comparison.",
                     data=t.times)


def story_steps(duel_n: int = 8000, progress=None) -> list[StoryStep]:
    """All five steps, computed now (the export's content).

    Parameters
    ----------
    duel_n : int, default 8000
        Points of the classifier duel.
    progress : callable or None, optional
        Called with a message before each part.

    Returns
    -------
    list of StoryStep
        The five steps.
    """
    say = progress or (lambda message: None)
    say("steps 1-2: Gram matrices")
    steps = gram_steps()
    say("steps 3-4: error against D")
    steps += error_steps()
    say(f"step 5: both classifiers on n = {int(duel_n):,} over seeds, then time against n")
    steps.append(duel_step(*duel(duel_n)))
    return steps
