"""Sentences of the speed-against-accuracy comparison, computed from the numbers they describe with a stated rule
(as :mod:`rkcore.teaching.claims`); tests/teaching/test_speed_claims.py draws many seeds and checks them.

The rules:

* **faster**: A is faster than B when both ran at least two seeds, A's slowest seed is faster than B's fastest
  (the seeds' ranges do not overlap) and the ratio of the medians is at least :data:`FASTER_RATIO`; the sentence gives that ratio and
  both medians with two significant digits (at a ratio of 1.1 or more they never print alike). Otherwise
  "about as fast" with both ranges.
* **accuracy**: two mean accuracies differ when they are more than SEPARATION_SE standard errors of the
  difference apart (:func:`rkcore.metrics.separated`); otherwise they tie at these seeds.
* **operating point**: the D compared is the smallest D of the sweep at which the random-feature model's
  accuracy is not lower than the exact SVM's by that rule (the largest D if there is none).
* **crossover**: the n where the fitted or interpolated time curves cross
  (:func:`rkcore.studies.speed_accuracy.crossover_n`), said "measured" or "extrapolated".
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..metrics import SEPARATION_SE, separated

__all__ = ["FASTER_RATIO", "FM_EVIDENCE", "accuracy_sentence", "comparison_sentences", "crossover_sentence",
           "fm_sentence", "lead_sentence", "operating_point", "ratio_text", "seconds_text", "speed_sentence"]

#: the smallest ratio of medians called "faster"
FASTER_RATIO = 1.1


def seconds_text(seconds: float) -> str:
    """A time with two significant digits, in ms below 0.1 s ("2.3 ms", "0.54 s", "12 s").

    Parameters
    ----------
    seconds : float
        A duration (>= 0).

    Returns
    -------
    str
        The text.
    """
    if seconds < 0.1:
        return f"{float(f'{seconds * 1e3:.2g}'):g} ms"
    return f"{float(f'{seconds:.2g}'):g} s"


def ratio_text(ratio: float) -> str:
    """A ratio with two significant digits below 10 ("1.2", "4.4"), whole above ("15", "230").

    Parameters
    ----------
    ratio : float
        A ratio >= 1.

    Returns
    -------
    str
        The text, without the "×".
    """
    return f"{ratio:.2g}" if ratio < 9.95 else f"{ratio:,.0f}"


def _row(summary: pd.DataFrame, key: str, D: float | None = None) -> pd.Series:
    rows = summary[summary["contender"] == key]
    if D is not None and rows["D"].notna().any():
        rows = rows[rows["D"] == D]
    if rows.empty:
        raise ValueError(f"No results for {key!r}" + (f" at D = {D:g}" if D is not None else "") + ".")
    return rows.iloc[0]


def speed_sentence(fast: pd.Series, slow: pd.Series, phase: str) -> str:
    """Which of two models is faster in ``phase`` ("train" or "predict") and by what ratio (the module's rule).

    Parameters
    ----------
    fast, slow : pandas.Series
        Rows of :func:`rkcore.studies.speed_accuracy.summarize_sweep` (the first is the one said faster if
        the rule allows; the sentence turns round when the other one is).
    phase : {"train", "predict"}
        Which times.

    Returns
    -------
    str
        One sentence.
    """
    verb = {"train": "trains", "predict": "predicts"}[phase]
    a, b = fast, slow
    if a[f"{phase}_median"] > b[f"{phase}_median"]:
        a, b = b, a
    ratio = b[f"{phase}_median"] / max(a[f"{phase}_median"], 1e-12)
    seeds = int(min(a["seeds"], b["seeds"]))
    if seeds >= 2 and a[f"{phase}_max"] < b[f"{phase}_min"] and ratio >= FASTER_RATIO:
        return (f"{a['label']} {verb} {ratio_text(ratio)}× faster than {b['label']} ({seconds_text(a[f'{phase}_median'])} "
                f"vs {seconds_text(b[f'{phase}_median'])}, medians over {seeds} seeds; every seed faster).")
    if seeds < 2:
        return (f"{a['label']} and {b['label']} {verb.rstrip('s')} about as fast as one seed can tell "
                f"({seconds_text(a[f'{phase}_median'])} vs {seconds_text(b[f'{phase}_median'])}).")
    return (f"{a['label']} and {b['label']} {verb.rstrip('s')} about as fast: over {seeds} seeds their times overlap "
            f"({seconds_text(a[f'{phase}_min'])}–{seconds_text(a[f'{phase}_max'])} vs "
            f"{seconds_text(b[f'{phase}_min'])}–{seconds_text(b[f'{phase}_max'])}).")


def _differ(a: pd.Series, b: pd.Series) -> bool:
    return separated(a["accuracy_mean"], a["accuracy_std"], int(a["seeds"]), b["accuracy_mean"], b["accuracy_std"],
                     int(b["seeds"]))


def accuracy_sentence(model: pd.Series, exact: pd.Series) -> str:
    """Whether a model's mean accuracy differs from the exact SVM's beyond SEPARATION_SE standard errors.

    Parameters
    ----------
    model, exact : pandas.Series
        Rows of :func:`rkcore.studies.speed_accuracy.summarize_sweep`.

    Returns
    -------
    str
        One sentence.
    """
    seeds = int(min(model["seeds"], exact["seeds"]))
    text = (f"Accuracy: {model['label']} {model['accuracy_mean']:.1%} against {exact['accuracy_mean']:.1%} for "
            f"{exact['label']} (means over {seeds} seeds")
    if not _differ(model, exact):
        return text + f"): within {SEPARATION_SE:g} standard errors of the difference, a tie at these seeds."
    side = "higher" if model["accuracy_mean"] > exact["accuracy_mean"] else "lower"
    gap = abs(model["accuracy_mean"] - exact["accuracy_mean"]) * 100
    return text + f"): {side} by {gap:.1f} points, more than {SEPARATION_SE:g} standard errors of the difference."


def operating_point(summary: pd.DataFrame, model: str, exact: str) -> float:
    """The smallest D at which ``model`` is not less accurate than ``exact`` beyond the rule; else the largest D.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`rkcore.studies.speed_accuracy.summarize_sweep` output.
    model, exact : str
        Contender keys.

    Returns
    -------
    float
        The D.
    """
    ref = _row(summary, exact)
    rows = summary[summary["contender"] == model].sort_values("D")
    if rows.empty:
        raise ValueError(f"No results for {model!r}.")
    for _, row in rows.iterrows():
        if not (_differ(row, ref) and row["accuracy_mean"] < ref["accuracy_mean"]):
            return float(row["D"])
    return float(rows["D"].iloc[-1])


def _speed_verdict(model: pd.Series, exact: pd.Series, phase: str) -> tuple[str, float]:
    """("faster" / "slower" / "as fast", ratio of medians >= 1) of ``model`` against ``exact`` by the module's rule."""
    m, e = model[f"{phase}_median"], exact[f"{phase}_median"]
    if min(model["seeds"], exact["seeds"]) < 2:
        return "as fast", 1.0
    if model[f"{phase}_max"] < exact[f"{phase}_min"] and e / max(m, 1e-12) >= FASTER_RATIO:
        return "faster", e / max(m, 1e-12)
    if exact[f"{phase}_max"] < model[f"{phase}_min"] and m / max(e, 1e-12) >= FASTER_RATIO:
        return "slower", m / max(e, 1e-12)
    return "as fast", 1.0


def lead_sentence(model: pd.Series, exact: pd.Series, model_name: str, exact_name: str) -> str:
    """The one-breath lead (at most about 160 characters): prediction speed and accuracy at the operating point.

    Parameters
    ----------
    model, exact : pandas.Series
        Rows of :func:`rkcore.studies.speed_accuracy.summarize_sweep` at the operating point.
    model_name, exact_name : str
        Short names ("RK features", "the exact SVM").

    Returns
    -------
    str
        One sentence.
    """
    verdict, ratio = _speed_verdict(model, exact, "predict")
    speed = (f"predict {ratio_text(ratio)}× {verdict} than" if verdict != "as fast" else "predict about as fast as")
    if not _differ(model, exact):
        accuracy = "at tied accuracy"
    else:
        accuracy = "less accurate" if model["accuracy_mean"] < exact["accuracy_mean"] else "more accurate"
        accuracy = f"{accuracy} beyond {SEPARATION_SE:g} standard errors"
    return (f"At D = {model['D']:,.0f}, {model_name} {speed} {exact_name}, {accuracy} "
            f"({model['accuracy_mean']:.1%} vs {exact['accuracy_mean']:.1%}).")


def comparison_sentences(summary: pd.DataFrame, model: str = "rk", exact: str = "svm_anova") -> list[str]:
    """The operating point, then accuracy, prediction and training time of ``model`` against ``exact`` there.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`rkcore.studies.speed_accuracy.summarize_sweep` output.
    model, exact : str, default "rk", "svm_anova"
        Contender keys.

    Returns
    -------
    list of str
        The lead (:func:`lead_sentence`), then the operating point, accuracy, prediction and training time.
    """
    D = operating_point(summary, model, exact)
    row, ref = _row(summary, model, D), _row(summary, exact)
    reached = not (_differ(row, ref) and row["accuracy_mean"] < ref["accuracy_mean"])
    where = (f"At D = {D:,.0f}, the smallest D where {row['label']} is not less accurate than {ref['label']} "
             f"beyond {SEPARATION_SE:g} standard errors:" if reached else
             f"At D = {D:,.0f}, the largest D of the sweep ({row['label']} stays less accurate than {ref['label']}):")
    return [lead_sentence(row, ref, f"{row['label'].replace('Linear SVM + ', '')} features", "the exact SVM"), where,
            accuracy_sentence(row, ref), speed_sentence(row, ref, "predict"), speed_sentence(row, ref, "train")]


def crossover_sentence(n: float | None, source: str, phase: str, n_memory: int, max_measured: int, *,
                       say_memory: bool = True) -> str:
    """Where the random-feature model's time drops below the exact SVM's, and where the exact Gram stops fitting.

    Parameters
    ----------
    n : float or None
        :func:`rkcore.studies.speed_accuracy.crossover_n`'s n.
    source : str
        Its source ("measured", "extrapolated", "already faster", "none").
    phase : {"train", "predict"}
        Which times.
    n_memory : int
        The largest n whose Gram matrix fits the memory budget.
    max_measured : int
        The largest measured n.
    say_memory : bool, default True
        End with where the exact Gram stops fitting (once per note is enough).

    Returns
    -------
    str
        One sentence.
    """
    what = {"train": "Training", "predict": "Prediction"}[phase]
    limit = (f"; beyond n = {n_memory:,} the exact kernel's n × n Gram matrix no longer fits in memory"
             if say_memory else "")
    if source == "already faster":
        return f"{what}: the linear model on RK features is faster at every measured n (up to {max_measured:,}){limit}."
    if n is None or not math.isfinite(n):
        return (f"{what}: the fitted curves do not cross below n = {n_memory:,}, the largest n whose exact n × n Gram "
                "matrix fits in memory.")
    how = ("between two measured sizes" if source == "measured" else
           f"extrapolated from the power laws fitted to n ≤ {max_measured:,}")
    return (f"{what}: the linear model on RK features becomes faster than the exact kernel SVM at n ≈ {n:,.0f} "
            f"({how}){limit}.")


#: The factorization machine against the exact ANOVA kernel SVM on the synthetic interaction data (L1 rows, the
#: Classifiers page's split and C rule, 3 seeds for FM), and an L1-penalized linear model on the 190 explicit
#: pairwise products x_j x_k (C on the validation set): measured by benchmarks/studies/bench_speed_accuracy.py
#: (benchmarks/results/speed_accuracy.md); tests/teaching/test_speed_claims.py recomputes it (slow mark).
FM_EVIDENCE = pd.DataFrame([
    {"n_train": 500, "kernel_svm": 0.7625, "fm": 0.8383, "l1_pairs": 0.94, "l1_nonzero": 11},
    {"n_train": 2000, "kernel_svm": 0.9225, "fm": 0.9206, "l1_pairs": np.nan, "l1_nonzero": np.nan},
])
#: non-zero pairwise terms of the interaction data's label function, out of d (d - 1) / 2 = 190
TRUE_PAIRS, ALL_PAIRS = 12, 190


def fm_sentence(evidence: pd.DataFrame = FM_EVIDENCE, gap_points: float = 2.0) -> str:
    """Why the factorization machine wins where it does, as the numbers show it: where its lead over the kernel
    SVM exceeds ``gap_points`` accuracy points, where it vanishes, and what a model that picks few pairs reaches.

    Parameters
    ----------
    evidence : pandas.DataFrame, default FM_EVIDENCE
        Rows n_train, kernel_svm, fm, l1_pairs, l1_nonzero (test accuracies).
    gap_points : float, default 2.0
        The lead, in accuracy points, called a win.

    Returns
    -------
    str
        One or two sentences.
    """
    ev = evidence.sort_values("n_train")
    lead = (ev["fm"] - ev["kernel_svm"]) * 100
    wins, ties = ev[lead > gap_points], ev[lead.abs() <= gap_points]
    if wins.empty:
        return (f"The factorization machine does not lead the kernel SVM by more than {gap_points:g} points at any "
                f"size measured ({', '.join(f'{n:,}' for n in ev['n_train'])} training points).")
    w = wins.iloc[0]
    text = (f"The factorization machine wins with few training points ({int(w['n_train']):,}: {w['fm']:.1%} against "
            f"the kernel SVM's {w['kernel_svm']:.1%})")
    if not ties.empty:
        t = ties.iloc[0]
        text += f" and ties by {int(t['n_train']):,} ({t['fm']:.1%} vs {t['kernel_svm']:.1%})"
    text += (f": the label depends on {TRUE_PAIRS} of the {ALL_PAIRS} pairs x_j x_k; the ANOVA kernel SVM weighs "
             "all pairs alike and needs more points to single them out, while the FM learns the pair weights")
    if pd.notna(w.get("l1_pairs")) and w["l1_pairs"] > w["kernel_svm"]:
        text += (f" (a linear model that picks few pairs, L1 on the explicit products, reaches {w['l1_pairs']:.0%} "
                 f"with {int(w['l1_nonzero'])} non-zero weights)")
    return text + "."
