r"""Figures of the Error bounds page: Lemmas 1-3 (paper eqs. 8-10) against measured tail probabilities.

Pure drawing. The measured side is :func:`rkcore.theory.measured_tails.measured_tails` of an
:func:`rkcore.studies.errors.error_study` (two estimates per (D, eps)):

* ``pair``: :math:`\hat p = \frac{1}{T}\sum_t \frac{1}{|P|}\sum_{(i,j)\in P} [|\mathcal{E}_{ij}| \ge \varepsilon]`,
  the tail probability of one pair averaged over the |P| pairs. Lemmas 1 and 3 bound
  :math:`p(|\mathcal{E}(\mathbf{x},\mathbf{y})| \ge \varepsilon)` for *every* pair, hence also this average.
* ``sup``: :math:`\hat p = \frac{1}{T}\sum_t [\max_{P} |\mathcal{E}_{ij}| \ge \varepsilon]`, the fraction of
  trials whose worst pair reaches eps; Lemma 2 bounds :math:`p(\sup |\mathcal{E}| \ge \varepsilon)`.

A probability of 0 cannot sit on a log axis: such points are drawn at the resolution
of the measurement (1 / (pairs x trials), resp. 1 / trials) as open down-triangles, meaning
"none observed, below this". The bounds come from :func:`rkcore.theory.bounds.bounds_table`
(clipped at 1, where they say nothing).

Traces and layouts are plain dicts in plotly's canonical form, built once by
:func:`rkcore.figures.style.figure` (no per-property validation: the page redraws them on every rerun).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..theory.measured_tails import MEASURED_QUANTITIES
from .style import PALETTE, figure, log_ticks

LEMMA_LABELS = {
    "lemma1": "Lemma 1 bound (eq. 8), any S",
    "lemma2": "Lemma 2 bound (eq. 9), sup over pairs",
    "lemma3": "Lemma 3 bound (eq. 10), ANOVA",
}
LEMMA_COLORS = {"lemma1": PALETTE[3], "lemma2": PALETTE[4], "lemma3": PALETTE[2]}
MEASURED_LABELS = {kind: f"measured {text}" for kind, text in MEASURED_QUANTITIES.items()}
MEASURED_COLORS = {"pair": PALETTE[0], "sup": PALETTE[1]}


# ============================================================================ figures
def _measured_traces(sub: pd.DataFrame, x: str, kinds) -> list[dict]:
    """A line per measured kind; zero estimates as open triangles at the measurement floor."""
    traces = []
    # one grouping, not a boolean mask per kind (masks on string columns cost more than the drawing)
    by_kind = dict(tuple(sub.groupby("kind", sort=False)))
    for kind in kinds:
        g = by_kind.get(kind)
        if g is None or g.empty:
            continue
        g = g.sort_values(x)
        color = MEASURED_COLORS[kind]
        xs, prob = g[x].to_numpy(), g["prob"].to_numpy()
        seen, unseen = prob > 0, prob <= 0  # a NaN estimate is neither: not drawn
        traces.append(dict(
            type="scatter", x=xs[seen], y=prob[seen], mode="lines+markers", name=MEASURED_LABELS[kind],
            legendgroup=kind, line=dict(color=color, width=3), marker=dict(size=9),
            hovertemplate=f"{x}=%{{x:.3g}}<br>P=%{{y:.3g}}<extra>{MEASURED_LABELS[kind]}</extra>"))
        if unseen.any():
            traces.append(dict(
                type="scatter", x=xs[unseen], y=g["floor"].to_numpy()[unseen], mode="markers",
                legendgroup=kind, name=f"{'pairs' if kind == 'pair' else 'trials'}: none observed (below this)",
                marker=dict(symbol="triangle-down-open", size=11, color=color, line=dict(width=2)),
                hovertemplate=f"{x}=%{{x:.3g}}<br>P < %{{y:.2g}} (none observed)<extra></extra>"))
    return traces


def _bound_traces(bounds: pd.DataFrame, x: str) -> list[dict]:
    traces = []
    for lemma, g in bounds.groupby("lemma", sort=False):
        lemma = str(lemma)  # pandas-stubs types group keys as any Scalar; here the column holds names
        g = g.sort_values(x)
        traces.append(dict(
            type="scatter", x=g[x].to_numpy(), y=g["bound"].to_numpy(), mode="lines",
            name=LEMMA_LABELS.get(lemma, lemma),
            line=dict(color=LEMMA_COLORS.get(lemma, "#444"), width=3, dash="dash"),
            hovertemplate=f"{x}=%{{x:.3g}}<br>bound=%{{y:.3g}}<extra>{LEMMA_LABELS.get(lemma, lemma)}</extra>"))
    return traces


def _y_floor(measured: pd.DataFrame) -> float:
    """Lower end of the probability axis: a decade below the smallest measured value or floor
    (the bounds fall far lower; past that they are off the chart, which is the point)."""
    v = np.concatenate([measured["prob"].to_numpy(float), measured["floor"].to_numpy(float)])
    v = v[np.isfinite(v) & (v > 0)]
    low = float(v.min()) if v.size else 1e-6
    return max(low / 10.0, 1e-15)


#: The legend beside the plot, top-aligned with it: below the x axis it fell under the fold at 1280x720 and
#: 1440x900 in both modes (issue 38); the page draws the charts one per row, so the plot keeps its width.
_LEGEND_BESIDE = dict(orientation="v", x=1.02, xanchor="left", y=1.0, yanchor="top", tracegroupgap=2)


def _tail_layout(title: str, x_title: str, low: float, traces: list[dict]) -> dict:
    """The layout both tail charts share: log x, a log probability axis from ``low`` to just above 1, and a
    line at probability 1 (a bound clipped there says nothing). Ticks are given (log_ticks): on a wide chart
    (presenter mode) plotly's own log ticks labelled 2 and 5 at three quarters of the font size."""
    xs = np.concatenate([np.asarray(t["x"], dtype=float) for t in traces]) if traces else np.array([])
    return dict(
        title=dict(text=title), height=500, legend=_LEGEND_BESIDE,  # the legend beside: no room below to keep
        xaxis=dict(type="log", title=dict(text=x_title), exponentformat="power", **log_ticks(xs)),
        yaxis=dict(type="log", range=[np.log10(low), 0.15], exponentformat="power",
                   title=dict(text="probability (log scale)"), **log_ticks([low, 1.0])),
        # what fig.add_hline(y=1.0) adds: a line across the x domain
        shapes=[dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=1.0, y1=1.0,
                     line=dict(color="#999", width=1))])


def bounds_vs_eps_figure(measured: pd.DataFrame, bounds: pd.DataFrame, *, D: int, R: float) -> go.Figure:
    """Tail probability against eps at one D: measured curves and the lemma bounds, log-log.

    ``measured``: :func:`rkcore.theory.measured_tails.measured_tails` rows (filtered here to ``D``); ``bounds``:
    :func:`rkcore.theory.bounds.bounds_table` rows at this D over an eps grid.

    Parameters
    ----------
    measured : pandas.DataFrame
        Measured tail probabilities (all D; filtered here).
    bounds : pandas.DataFrame
        Lemma bounds at this D over an eps grid.
    D : int
        Number of random features to draw at.
    R : float
        L1 radius of the inputs, shown in the title.

    Returns
    -------
    plotly.graph_objects.Figure
        The log-log tail chart against eps.
    """
    sub = measured[measured["D"] == D]
    if sub.empty:
        raise ValueError(f"No measured tail probabilities at D = {D}; measured D: {sorted(measured['D'].unique())}.")
    traces = _bound_traces(bounds, "eps") + _measured_traces(sub, "eps", ("pair", "sup"))
    return figure(traces, _tail_layout(f"Tail probability vs ε at D = {D:,} (R = {R:.3g})",
                                       "ε (absolute error threshold, log scale)", _y_floor(sub), traces))


def bounds_vs_D_figure(measured: pd.DataFrame, bounds: pd.DataFrame, *, eps: float, R: float) -> go.Figure:
    """Tail probability against D at one eps: measured points (the D of the study) and the
    lemma bounds over a wide D range (they only drop below 1 at very large D), log-log.

    Parameters
    ----------
    measured : pandas.DataFrame
        Measured tail probabilities (all eps; filtered here).
    bounds : pandas.DataFrame
        Lemma bounds at this eps over a D grid (column n_components).
    eps : float
        Error threshold to draw at.
    R : float
        L1 radius of the inputs, shown in the title.

    Returns
    -------
    plotly.graph_objects.Figure
        The log-log tail chart against D.
    """
    sub = measured[np.isclose(measured["eps"], eps, rtol=1e-9, atol=0.0)]
    if sub.empty:
        raise ValueError(f"No measured tail probabilities at eps = {eps:g}.")
    traces = (_bound_traces(bounds, "n_components")
              + _measured_traces(sub.rename(columns={"D": "n_components"}), "n_components", ("pair", "sup")))
    return figure(traces, _tail_layout(f"Tail probability vs D at ε = {eps:g} (R = {R:.3g})",
                                       "D (random features, log scale)", _y_floor(sub), traces))


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(x: float) -> str:
    """4.03·10⁸ (readable on a projector, unlike 4.03e+08); plain below 10⁴.

    Parameters
    ----------
    x : float
        Number to format.

    Returns
    -------
    str
        The formatted number; "∞" or "—" when not finite.
    """
    if not np.isfinite(x):
        return "∞" if x > 0 else "—"
    if abs(x) < 1e4:
        return f"{x:,.0f}" if x >= 1 else f"{x:.3g}"
    exp = int(np.floor(np.log10(abs(x))))
    return f"{x / 10**exp:.2f}·10{str(exp).translate(_SUPERSCRIPT)}"


def first_informative_eps(bounds: pd.DataFrame) -> dict[str, float]:
    """Per lemma of a :func:`rkcore.theory.bounds.bounds_table` over eps: the smallest eps where the bound drops
    below 1 (where it starts to say something); NaN when it never does on the grid.

    Parameters
    ----------
    bounds : pandas.DataFrame
        Bounds table over eps (columns lemma, eps, log_bound).

    Returns
    -------
    dict of str to float
        Smallest informative eps per lemma.
    """
    out = {}
    for lemma, g in bounds.groupby("lemma", sort=False):
        lemma = str(lemma)  # pandas-stubs types group keys as any Scalar; here the column holds names
        below = g[g["log_bound"] < 0]
        out[lemma] = float(below["eps"].min()) if len(below) else float("nan")
    return out


def bounds_note(bounds_eps: pd.DataFrame, needed: pd.DataFrame, *, D: int, max_error: float, trials: int,
                distribution: str) -> str:
    """The Error bounds page's "what to notice" from what it shows: the largest |E| seen at ``D`` (a
    metric), where each dashed bound of the ε chart leaves 1 (``bounds_eps``), and the lemmas' D beside
    the measured one (``needed``, :func:`rkcore.theory.measured_tails.required_components`).

    Parameters
    ----------
    bounds_eps : pandas.DataFrame
        Bounds table over eps drawn on the ε chart.
    needed : pandas.DataFrame
        Required D per lemma (columns lemma, D_bound, ratio).
    D : int
        Number of random features measured.
    max_error : float
        Largest absolute error seen at ``D``.
    trials : int
        Number of random maps measured.
    distribution : str
        Weight distribution of the maps, e.g. "rademacher".

    Returns
    -------
    str
        The note, a few sentences.
    """
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
