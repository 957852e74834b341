"""The lemmas against a measurement: the tail probabilities an error study observed, and the D each lemma asks for
beside the smallest D that reached the same probability.

The bounds are :mod:`rkcore.theory.bounds` (Lemmas 1-3 of Atarashi, Maji & Oyama, AAAI-19); the study is
:func:`rkcore.studies.errors.error_study` output, read here as a plain DataFrame.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .bounds import min_components_lemma1, min_components_lemma2, min_components_lemma3

#: What each measured estimate of :func:`measured_tails` is: "pair" (the tail of one pair, averaged
#: over the pairs) or "sup" (the fraction of trials whose worst pair reaches eps).
MEASURED_QUANTITIES = {
    "pair": "P(|E| ≥ ε), mean over pairs",
    "sup": "P(max over pairs |E| ≥ ε)",
}
#: Which measured quantity each lemma bounds.
LEMMA_MEASURE = {"lemma1": "pair", "lemma2": "sup", "lemma3": "pair"}


def measured_tails(study: pd.DataFrame) -> pd.DataFrame:
    """Tail probabilities per (D, eps) from an error study of one method.

    ``study`` is :func:`rkcore.studies.errors.error_study` output (``tail_prob`` rows for the
    eps grid, ``max_abs_error`` rows per trial). Returns one row per (D, eps, kind) with
    columns D, eps, kind ("pair" or "sup"), prob, floor (the smallest non-zero value the
    measurement can show: 1 / (pairs x trials) for "pair", 1 / trials for "sup"),
    n_trials, n_pairs.

    Parameters
    ----------
    study : pandas.DataFrame
        The error study of one method.

    Returns
    -------
    pandas.DataFrame
        One row per (D, eps, kind), the columns described above.
    """
    need = {"D", "trial", "metric", "eps", "value", "n_pairs"}
    missing = need - set(study.columns)
    if missing:
        raise ValueError(f"measured_tails needs error_study output; missing columns: {sorted(missing)}.")
    if "method" in study.columns and study["method"].nunique() > 1:
        raise ValueError(f"measured_tails takes the study of one method; got {sorted(study['method'].unique())}.")
    tails = study[study["metric"] == "tail_prob"]
    if tails.empty:
        raise ValueError("The error study has no tail_prob rows: run it with a grid of eps values.")
    pair = (tails.groupby(["D", "eps"])
            .agg(prob=("value", "mean"), n_trials=("trial", "nunique"), n_pairs=("n_pairs", "first"))
            .reset_index())
    pair["kind"] = "pair"
    pair["floor"] = 1.0 / (pair["n_pairs"] * pair["n_trials"])

    maxima = study[study["metric"] == "max_abs_error"][["D", "trial", "value"]]
    eps_grid = np.sort(tails["eps"].unique())
    rows = []
    for D, g in maxima.groupby("D"):
        m = g["value"].to_numpy()
        # fraction of trials whose worst pair reaches each eps (vectorized over the grid)
        prob = (m[None, :] >= eps_grid[:, None]).mean(axis=1)
        rows.append(pd.DataFrame({"D": D, "eps": eps_grid, "prob": prob, "n_trials": m.size,
                                  "n_pairs": int(pair.loc[pair["D"] == D, "n_pairs"].iloc[0])}))
    sup = pd.concat(rows, ignore_index=True)
    sup["kind"] = "sup"
    sup["floor"] = 1.0 / sup["n_trials"]
    out = pd.concat([pair, sup], ignore_index=True)
    return out[["D", "eps", "kind", "prob", "floor", "n_trials", "n_pairs"]].astype(
        {"D": np.int64, "n_trials": np.int64, "n_pairs": np.int64})


def required_components(eps: float, delta: float, R: float, d: int, degree: int | None,
                        measured: pd.DataFrame) -> pd.DataFrame:
    """The D each lemma asks for P(error >= eps) <= delta, beside the smallest measured D that achieved it.

    ``measured`` is :func:`measured_tails` output restricted to this eps (or containing it).
    Lemma 3 is included when ``degree`` is given (ANOVA). Columns: lemma, bounds (what it
    bounds), D_bound (from ``min_components_lemma*``), D_measured (smallest D of the study
    with measured probability <= delta; NaN if none), at_smallest (True when already the
    smallest D tried was enough, so D_measured is an upper estimate of what is needed), ratio
    D_bound / D_measured.

    Parameters
    ----------
    eps : float
        The error threshold.
    delta : float
        The failure probability to reach.
    R : float
        L1 radius of the data.
    d : int
        Number of features.
    degree : int or None
        The ANOVA order (None leaves Lemma 3 out).
    measured : pandas.DataFrame
        :func:`measured_tails` output.

    Returns
    -------
    pandas.DataFrame
        One row per lemma, the columns described above.
    """
    sub = measured[np.isclose(measured["eps"], eps, rtol=1e-9, atol=0.0)]
    lemmas = [("lemma1", float(min_components_lemma1(eps, delta, R))),
              ("lemma2", float(min_components_lemma2(eps, delta, R, d)))]
    if degree is not None:
        lemmas.append(("lemma3", float(min_components_lemma3(eps, delta, R, degree))))
    rows = []
    for lemma, D_bound in lemmas:
        kind = LEMMA_MEASURE[lemma]
        g = sub[sub["kind"] == kind].sort_values("D")
        ok = g[g["prob"] <= delta]
        D_measured = float(ok["D"].iloc[0]) if len(ok) else np.nan
        at_smallest = bool(len(ok) and len(g) and ok["D"].iloc[0] == g["D"].iloc[0])
        rows.append({"lemma": lemma, "bounds": MEASURED_QUANTITIES[kind],
                     "D_bound": D_bound, "D_measured": D_measured, "at_smallest": at_smallest,
                     "ratio": D_bound / D_measured if np.isfinite(D_measured) else np.nan})
    return pd.DataFrame(rows)
