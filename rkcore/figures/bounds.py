r"""Figures of the Error bounds page: Lemmas 1-3 (paper eqs. 8-10) against measured tail probabilities.

Pure drawing. The measured side is :func:`rkcore.bounds.measured_tails` of an
:func:`rkcore.experiments.error_study` (two estimates per (D, eps)):

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

from ..bounds import MEASURED_QUANTITIES
from .style import LEGEND_BELOW, PALETTE, new_figure

LEMMA_LABELS = {
    "lemma1": "Lemma 1 bound (eq. 8), any S",
    "lemma2": "Lemma 2 bound (eq. 9), sup over pairs",
    "lemma3": "Lemma 3 bound (eq. 10), ANOVA",
}
LEMMA_COLORS = {"lemma1": PALETTE[3], "lemma2": PALETTE[4], "lemma3": PALETTE[2]}
MEASURED_LABELS = {kind: f"measured {text}" for kind, text in MEASURED_QUANTITIES.items()}
MEASURED_COLORS = {"pair": PALETTE[0], "sup": PALETTE[1]}


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


_LEGEND_BELOW = dict(LEGEND_BELOW, tracegroupgap=2)


def _probability_axis(fig: go.Figure, low: float) -> None:
    fig.update_yaxes(type="log", range=[np.log10(low), 0.15], exponentformat="power",
                     title_text="probability (log scale)")
    fig.add_hline(y=1.0, line=dict(color="#999", width=1))


def bounds_vs_eps_figure(measured: pd.DataFrame, bounds: pd.DataFrame, *, D: int, R: float) -> go.Figure:
    """Tail probability against eps at one D: measured curves and the lemma bounds, log-log.

    ``measured``: :func:`rkcore.bounds.measured_tails` rows (filtered here to ``D``); ``bounds``:
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


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(x: float) -> str:
    """4.03·10⁸ (readable on a projector, unlike 4.03e+08); plain below 10⁴."""
    if not np.isfinite(x):
        return "∞" if x > 0 else "—"
    if abs(x) < 1e4:
        return f"{x:,.0f}" if x >= 1 else f"{x:.3g}"
    exp = int(np.floor(np.log10(abs(x))))
    return f"{x / 10**exp:.2f}·10{str(exp).translate(_SUPERSCRIPT)}"


def first_informative_eps(bounds: pd.DataFrame) -> dict[str, float]:
    """Per lemma of a :func:`rkcore.bounds.bounds_table` over eps: the smallest eps where the bound drops
    below 1 (where it starts to say something); NaN when it never does on the grid."""
    out = {}
    for lemma, g in bounds.groupby("lemma", sort=False):
        below = g[g["log_bound"] < 0]
        out[lemma] = float(below["eps"].min()) if len(below) else float("nan")
    return out


def bounds_note(bounds_eps: pd.DataFrame, needed: pd.DataFrame, *, D: int, max_error: float, trials: int,
                distribution: str) -> str:
    """The Error bounds page's "what to notice" from what it shows: the largest |E| seen at ``D`` (a
    metric), where each dashed bound of the ε chart leaves 1 (``bounds_eps``), and the lemmas' D beside
    the measured one (``needed``, :func:`rkcore.bounds.required_components`)."""
    starts = first_informative_eps(bounds_eps)
    named = [(LEMMA_LABELS[k].split(" bound")[0], v) for k, v in starts.items()]
    said = "; ".join(f"{name} from ε = {v:.3g} ({v / max_error:.3g}× that error)" if np.isfinite(v)
                     else f"{name} not for any ε up to {bounds_eps['eps'].max():.3g}" for name, v in named)
    text = (f"At D = {D:,} the largest |E| any pair reached in {trials} random maps is {max_error:.3g}: the "
            f"measured tail (solid) is 0 beyond it. The bounds (dashed) stay at 1, saying nothing, until much "
            f"larger ε: {said}.")
    finite = needed[np.isfinite(needed["ratio"])]
    if len(finite):
        best = finite.loc[finite["D_bound"].idxmin()]
        text += (f" The tightest here, {LEMMA_LABELS[best.lemma].split(' bound')[0]}, asks for D = "
                 f"{sci(best.D_bound)}, {sci(best.ratio)}× the D measured to suffice.")
    text += (" The bounds hold for every pair in the L1 ball (Lemma 1 pays $e^{4R}$, Lemma 3 $R^{4m}$, Lemma 2 "
             "all pairs at once), so they prove the rate, not the constant.")
    if distribution != "rademacher":
        text += (f" Lemmas 1–3 assume Rademacher weights; with {distribution} weights the measured curves are "
                 "shown for comparison only.")
    return text
