"""Sentences that compare numbers, computed from the numbers they describe with a stated rule.

Every page's "what to notice" that says *straddle*, *exact*, *smallest*, *tie* or *flat* takes it from
here, so a property test can draw many seeds on every built-in data set and check that the sentence
holds for the numbers it was given (tests/teaching/test_claims.py). The rules:

* **straddle**: the entries of one draw K̂ lie on both sides of y = x when between
  :data:`STRADDLE_BAND` of them are above it; outside the band the sentence says "mostly above/below"
  and why (one draw of the D vectors ω moves every entry together; unbiasedness is a statement about
  the average over draws, not about one draw).
* **exact Nyström**: with D ≥ n landmarks Nyström keeps every point and K̂ = K up to rounding; below
  n it is a projection, not an unbiased estimate, so no 1/√D rate is promised for it.
* **smallest variance (Lemma 4)**: Rademacher's exact per-pair variance is at most every other i.i.d.
  distribution's at every sampled pair; the gap is the ratio of the means, which the data decides.
* **flat segment**: between two neighbouring D the median error does not fall although 1/√D
  predicts a drop of a factor √(D₂/D₁); said when it happens, with the draws that explain it.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

#: share of the entries above y = x within which the dots "straddle" the line
STRADDLE_BAND = (0.25, 0.75)
#: the rounding level below which a relative error is "exact up to rounding"
ROUNDING_LEVEL = 1e-8


def share_above(exact, approx) -> float:
    """Share of the entries whose estimate is above the exact value (ties count one half).

    Parameters
    ----------
    exact, approx : array-like
        Exact and estimated entries, same length (at least one).

    Returns
    -------
    float
        A share in [0, 1].
    """
    exact, approx = np.asarray(exact, dtype=float).ravel(), np.asarray(approx, dtype=float).ravel()
    if exact.size == 0 or exact.size != approx.size:
        raise ValueError("The entries to compare must be two lists of the same, nonzero length.")
    return float(np.mean(approx > exact) + 0.5 * np.mean(approx == exact))


def entries_sentence(exact, approx, *, unbiased: bool = True) -> str:
    """What the "Entries: exact vs approximate" scatter shows about the side of y = x the dots are on.

    Parameters
    ----------
    exact, approx : array-like
        The drawn entries (exact K and estimate K̂).
    unbiased : bool, default=True
        Whether the map is unbiased (E K̂ = K); the explanation of a one-sided cloud names it.

    Returns
    -------
    str
        One sentence.
    """
    share = share_above(exact, approx)
    low, high = STRADDLE_BAND
    if low <= share <= high:
        return f"In the view \"Entries\" the dots straddle the dashed line y = x ({share:.0%} above it)."
    side = "above" if share > high else "below"
    mostly = share if share > high else 1 - share
    why = ("one draw of the D random vectors moves every entry together; unbiased means the average over "
           "seeds lies on the line, not each draw" if unbiased else "this map is not an unbiased estimate")
    return f"In the view \"Entries\" {mostly:.0%} of the dots lie {side} the dashed line y = x: {why}."


def nystroem_sentence(D: int, n: int, rel: float) -> str:
    """Nyström's error explained: exact with D ≥ n landmarks, a projection (not unbiased) below.

    Parameters
    ----------
    D : int
        Number of components (landmarks).
    n : int
        Number of points.
    rel : float
        Relative Frobenius error shown.

    Returns
    -------
    str
        One sentence.
    """
    if D >= n:
        return (f"Nyström with D = {D:,} ≥ n = {n:,} keeps every point as a landmark, so K̂ = K up to rounding "
                f"(error {rel:.3g}): this is the exact kernel, not an estimate.")
    return (f"Nyström projects onto D = {D:,} of the n = {n:,} points; it is not an unbiased estimate, so no "
            "1/√D rate is promised: the error falls as D approaches n and vanishes at D ≥ n.")


def variance_order_sentence(summaries: dict[str, pd.DataFrame]) -> str:
    """Lemma 4 against the exact variance: per data set (label -> :func:`rkcore.studies.variance_study.
    variance_by_distribution` output), whether Rademacher's variance is the smallest at every sampled
    pair, and how large the other distributions' variance is relative to it (ratio of the means).

    Parameters
    ----------
    summaries : dict of str to pandas.DataFrame
        Data set label -> exact variance summary (columns label, ratio_to_rademacher, at_least_rademacher).

    Returns
    -------
    str
        One or two sentences.
    """
    if not summaries:
        raise ValueError("No data sets to state the variance order on.")
    everywhere = all(float(s["at_least_rademacher"].min()) == 1.0 for s in summaries.values())
    gaussian = {name: float(s.loc[s["label"] == "Gaussian", "ratio_to_rademacher"].iloc[0])
                for name, s in summaries.items() if (s["label"] == "Gaussian").any()}
    held = ("at every sampled pair of every built-in data set" if everywhere else
            "at most pairs (not all: see the Distributions page)")
    text = f"Rademacher (±1) weights give the smallest exact variance {held} (Lemma 4)"
    if gaussian:
        lo, hi = min(gaussian, key=lambda k: gaussian[k]), max(gaussian, key=lambda k: gaussian[k])
        text += (f"; Gaussian weights' variance is {gaussian[lo]:.2f}× Rademacher's on {lo} and "
                 f"{gaussian[hi]:.3g}× on {hi}: how much it matters depends on the data")
    return text + "."


def flat_segments(medians: pd.DataFrame) -> list[tuple[int, int]]:
    """Neighbouring D (D₁ < D₂) where the median error does not fall (median at D₂ ≥ median at D₁).

    Parameters
    ----------
    medians : pandas.DataFrame
        Columns D and median_rel_fro, one distribution.

    Returns
    -------
    list of (int, int)
        The (D₁, D₂) pairs.
    """
    m = medians.sort_values("D")
    D, value = m["D"].to_numpy(), m["median_rel_fro"].to_numpy()
    return [(int(D[k]), int(D[k + 1])) for k in range(len(D) - 1) if value[k + 1] >= value[k]]


def flat_sentence(trials: pd.DataFrame, medians: pd.DataFrame) -> str:
    """"" when the median error falls at every step of D; else where it does not, and the draws' spread
    there (the largest and smallest draw at the upper D), so the reader sees why.

    Parameters
    ----------
    trials : pandas.DataFrame
        One row per draw (columns D, rel_fro).
    medians : pandas.DataFrame
        Columns D and median_rel_fro.

    Returns
    -------
    str
        A sentence, or "".
    """
    flat = flat_segments(medians)
    if not flat:
        return ""
    parts = []
    for D1, D2 in flat:
        draws = trials.loc[trials["D"] == D2, "rel_fro"]
        parts.append(f"from D = {D1:,} to {D2:,} (the {len(draws)} draws at {D2:,} range "
                     f"{draws.min():.2f}–{draws.max():.2f})")
    return ("The median does not fall " + "; ".join(parts) + ": at small D single draws scatter widely, so "
            "the trend shows over the whole range of D, not between neighbours.")


def variance_by_dataset(n: int = 200, normalization: str = "l1", degree: int = 2, random_state: int = 0,
                        max_pairs: int = 1000) -> dict[str, pd.DataFrame]:
    """The exact variance per i.i.d. distribution (:func:`rkcore.studies.variance_study.
    variance_by_distribution`, ANOVA kernel of the given degree) on every built-in data set that needs no
    file: the evidence behind :func:`variance_order_sentence`.

    Parameters
    ----------
    n : int, default=200
        Points per data set (seeded subsample).
    normalization : str, default="l1"
        Row normalization (the paper's).
    degree : int, default=2
        ANOVA degree m.
    random_state : int, default=0
        Seed of the pair sample.
    max_pairs : int, default=1000
        Most pairs per data set.

    Returns
    -------
    dict of str to pandas.DataFrame
        Data set label -> variance summary.
    """
    from ..data import BUILTIN
    from ..registry import KernelSpec
    from ..spec import load_view_data
    from ..studies.variance_study import variance_by_distribution

    spec = KernelSpec("anova", degree=degree)
    out = {}
    for key, entry in BUILTIN.items():
        data = load_view_data(key, normalization, n)
        out[entry.label] = variance_by_distribution(data.X, spec, ("gaussian", "uniform", "laplace"),
                                                    max_pairs=max_pairs, random_state=random_state)
    return out


#: Home's sentence on Lemma 4: :func:`variance_order_sentence` of :func:`variance_by_dataset` at its defaults
#: (3 s to compute, too slow for a landing page; tests/teaching/test_claims.py recomputes it and fails if the
#: data or the variance code change what it should say)
HOME_VARIANCE_CLAIM = ("Rademacher (±1) weights give the smallest exact variance at every sampled pair of every "
                       "built-in data set (Lemma 4); Gaussian weights' variance is 1.09× Rademacher's on Digits "
                       "(8x8) and 32.6× on Wine: how much it matters depends on the data.")


#: most characters of the sentence a lecturer reads in one breath (the rest of a note is behind "More")
LEAD_CHARS = 160
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“(])")
_CLAUSE_END = re.compile(r"(?<=[;:,])\s+")
#: a lead shorter than this says too little ("Same blocks in both …"): cut later, or not at all
MIN_LEAD_CHARS = 60


def lead_and_rest(note: str, limit: int = LEAD_CHARS) -> tuple[str, str]:
    """A note split into what the first screen shows (its first sentence, at most ``limit`` characters) and
    the rest (behind "More"). A first sentence longer than the limit is cut at its last clause end (";", ":"
    or ",") between MIN_LEAD_CHARS and the limit, the lead then ends with "…" and the rest repeats nothing;
    with no such clause end, the whole first sentence is the lead (a note to rewrite, which the tests catch).

    Parameters
    ----------
    note : str
        The whole note.
    limit : int, default=LEAD_CHARS
        Most characters of the lead.

    Returns
    -------
    lead, rest : str
        The lead and the rest ("" if none).
    """
    note = " ".join(note.split())
    parts = _SENTENCE_END.split(note, maxsplit=1)
    lead, rest = parts[0], parts[1] if len(parts) > 1 else ""
    if len(lead) > limit:
        cuts = [m.start() for m in _CLAUSE_END.finditer(lead) if MIN_LEAD_CHARS <= m.start() <= limit - 1]
        if cuts:
            cut = cuts[-1]
            lead, rest = lead[:cut - 1] + " …", ("… " + lead[cut:].strip() + (" " + rest if rest else "")).strip()
    return lead, rest
