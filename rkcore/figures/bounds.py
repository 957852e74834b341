r"""Figures of the Error bounds page: Lemmas 1-3 (paper eqs. 8-10) against measured tail probabilities.

The measured side comes from :func:`rkcore.experiments.error_study` (one row per method, D,
trial, metric[, eps]); :func:`measured_tails` turns it into two estimates per (D, eps):

* ``pair``: :math:`\hat p = \frac{1}{T}\sum_t \frac{1}{|P|}\sum_{(i,j)\in P} [|\mathcal{E}_{ij}| \ge \varepsilon]`,
  the tail probability of one pair averaged over the |P| pairs. Lemmas 1 and 3 bound
  :math:`p(|\mathcal{E}(\mathbf{x},\mathbf{y})| \ge \varepsilon)` for *every* pair, hence also this average.
* ``sup``: :math:`\hat p = \frac{1}{T}\sum_t [\max_{P} |\mathcal{E}_{ij}| \ge \varepsilon]`, the fraction of
  trials whose worst pair reaches eps; Lemma 2 bounds :math:`p(\sup |\mathcal{E}| \ge \varepsilon)`.

A probability of 0 cannot sit on a log axis: such points are drawn at the resolution
of the measurement (1 / (pairs x trials), resp. 1 / trials) as open down-triangles, meaning
"none observed, below this". The bounds come from :func:`rkcore.bounds.bounds_table`
(clipped at 1, where they say nothing).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..bounds import min_components_lemma1, min_components_lemma2, min_components_lemma3
from .style import PALETTE, new_figure

LEMMA_LABELS = {
    "lemma1": "Lemma 1 bound (eq. 8), any S",
    "lemma2": "Lemma 2 bound (eq. 9), sup over pairs",
    "lemma3": "Lemma 3 bound (eq. 10), ANOVA",
}
LEMMA_COLORS = {"lemma1": PALETTE[3], "lemma2": PALETTE[4], "lemma3": PALETTE[2]}
MEASURED_LABELS = {
    "pair": "measured P(|E| ≥ ε), mean over pairs",
    "sup": "measured P(max over pairs |E| ≥ ε)",
}
MEASURED_COLORS = {"pair": PALETTE[0], "sup": PALETTE[1]}
#: Which measured quantity each lemma bounds.
LEMMA_MEASURE = {"lemma1": "pair", "lemma2": "sup", "lemma3": "pair"}


# ============================================================================ data behind the charts
def measured_tails(study: pd.DataFrame) -> pd.DataFrame:
    """Tail probabilities per (D, eps) from an error study of one method.

    ``study`` is :func:`rkcore.experiments.error_study` output (``tail_prob`` rows for the
    eps grid, ``max_abs_error`` rows per trial). Returns one row per (D, eps, kind) with
    columns D, eps, kind ("pair" or "sup"), prob, floor (the smallest non-zero value the
    measurement can show: 1 / (pairs x trials) for "pair", 1 / trials for "sup"),
    n_trials, n_pairs.
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
        rows.append({"lemma": lemma, "bounds": MEASURED_LABELS[kind].replace("measured ", ""),
                     "D_bound": D_bound, "D_measured": D_measured, "at_smallest": at_smallest,
                     "ratio": D_bound / D_measured if np.isfinite(D_measured) else np.nan})
    return pd.DataFrame(rows)


# ============================================================================ figures
def _measured_traces(fig: go.Figure, sub: pd.DataFrame, x: str, kinds) -> None:
    """A line per measured kind; zero estimates as open triangles at the measurement floor."""
    for kind in kinds:
        g = sub[sub["kind"] == kind].sort_values(x)
        if g.empty:
            continue
        color = MEASURED_COLORS[kind]
        seen = g[g["prob"] > 0]
        fig.add_trace(go.Scatter(
            x=seen[x], y=seen["prob"], mode="lines+markers", name=MEASURED_LABELS[kind],
            legendgroup=kind, line=dict(color=color, width=3), marker=dict(size=9),
            hovertemplate=f"{x}=%{{x:.3g}}<br>P=%{{y:.3g}}<extra>{MEASURED_LABELS[kind]}</extra>"))
        unseen = g[g["prob"] <= 0]
        if len(unseen):
            fig.add_trace(go.Scatter(
                x=unseen[x], y=unseen["floor"], mode="markers", legendgroup=kind,
                name=f"{'pairs' if kind == 'pair' else 'trials'}: none observed (below this)",
                marker=dict(symbol="triangle-down-open", size=11, color=color, line=dict(width=2)),
                hovertemplate=f"{x}=%{{x:.3g}}<br>P < %{{y:.2g}} (none observed)<extra></extra>"))


def _bound_traces(fig: go.Figure, bounds: pd.DataFrame, x: str) -> None:
    for lemma, g in bounds.groupby("lemma", sort=False):
        g = g.sort_values(x)
        fig.add_trace(go.Scatter(
            x=g[x], y=g["bound"], mode="lines", name=LEMMA_LABELS.get(lemma, lemma),
            line=dict(color=LEMMA_COLORS.get(lemma, "#444"), width=3, dash="dash"),
            hovertemplate=f"{x}=%{{x:.3g}}<br>bound=%{{y:.3g}}<extra>{LEMMA_LABELS.get(lemma, lemma)}</extra>"))


def _y_floor(measured: pd.DataFrame) -> float:
    """Lower end of the probability axis: a decade below the smallest measured value or floor
    (the bounds fall far lower; past that they are off the chart, which is the point)."""
    v = np.concatenate([measured["prob"].to_numpy(float), measured["floor"].to_numpy(float)])
    v = v[np.isfinite(v) & (v > 0)]
    low = float(v.min()) if v.size else 1e-6
    return max(low / 10.0, 1e-15)


_LEGEND_BELOW = dict(orientation="h", yanchor="top", y=-0.3, x=0, tracegroupgap=2)


def _probability_axis(fig: go.Figure, low: float) -> None:
    fig.update_yaxes(type="log", range=[np.log10(low), 0.15], exponentformat="power",
                     title_text="probability (log scale)")
    fig.add_hline(y=1.0, line=dict(color="#999", width=1))


def bounds_vs_eps_figure(measured: pd.DataFrame, bounds: pd.DataFrame, *, D: int, R: float) -> go.Figure:
    """Tail probability against eps at one D: measured curves and the lemma bounds, log-log.

    ``measured``: :func:`measured_tails` rows (filtered here to ``D``); ``bounds``:
    :func:`rkcore.bounds.bounds_table` rows at this D over an eps grid.
    """
    sub = measured[measured["D"] == D]
    if sub.empty:
        raise ValueError(f"No measured tail probabilities at D = {D}; measured D: {sorted(measured['D'].unique())}.")
    fig = new_figure(f"Tail probability vs ε at D = {D:,} (R = {R:.3g})", height=640)
    _bound_traces(fig, bounds, "eps")
    _measured_traces(fig, sub, "eps", ("pair", "sup"))
    fig.update_xaxes(type="log", title_text="ε (absolute error threshold, log scale)", exponentformat="power")
    _probability_axis(fig, _y_floor(sub))
    fig.update_layout(legend=_LEGEND_BELOW)
    return fig


def bounds_vs_D_figure(measured: pd.DataFrame, bounds: pd.DataFrame, *, eps: float, R: float) -> go.Figure:
    """Tail probability against D at one eps: measured points (the D of the study) and the
    lemma bounds over a wide D range (they only drop below 1 at very large D), log-log."""
    sub = measured[np.isclose(measured["eps"], eps, rtol=1e-9, atol=0.0)]
    if sub.empty:
        raise ValueError(f"No measured tail probabilities at eps = {eps:g}.")
    fig = new_figure(f"Tail probability vs D at ε = {eps:g} (R = {R:.3g})", height=640)
    _bound_traces(fig, bounds, "n_components")
    _measured_traces(fig, sub.rename(columns={"D": "n_components"}), "n_components", ("pair", "sup"))
    fig.update_xaxes(type="log", title_text="D (random features, log scale)", exponentformat="power")
    _probability_axis(fig, _y_floor(sub))
    fig.update_layout(legend=_LEGEND_BELOW)
    return fig
