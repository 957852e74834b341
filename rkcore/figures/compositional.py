"""Figures of the compositional-kernels page: the skeleton, the dual activations, error vs D.

Pure functions of :class:`rkcore.teaching.compositional.Skeleton` objects and the tidy DataFrame of
:func:`rkcore.teaching.compositional.compositional_error_curve`. Traces and layouts are plain dicts in plotly's
canonical form, built once by :func:`rkcore.figures.style.figure` (no per-property validation: the page
redraws them on every rerun).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..teaching.compositional import ACTIVATIONS, Skeleton
from .foundations import band_traces, loglog_slope, metric_axis_title, reference_slope, signed
from .style import LEGEND_BELOW, PALETTE, figure, log_ticks, plotly_text, spans_decades

DEDUP_LABELS = {
    "none": "no de-duplication (D i.i.d. draws)",
    "unbiased": "de-duplicated, Des Raj weights (unbiased)",
    "counts": "de-duplicated, multiplicity weights (paper, biased)",
}
DEDUP_COLORS = {"none": PALETTE[3], "unbiased": PALETTE[2], "counts": PALETTE[4]}
NODE_COLORS = {"sphere": PALETTE[0], "gaussian": PALETTE[5], "categorical": PALETTE[1]}


def _layers(skeleton: Skeleton) -> list[int]:
    depth: list[int] = []
    for i, node in enumerate(skeleton.nodes):
        depth.append(0 if node.is_input else 1 + max(depth[c] for c in skeleton.children_of(i)))
    return depth


def skeleton_figure(skeleton: Skeleton) -> go.Figure:
    """The skeleton as a layered DAG: inputs at the bottom, the output on top; hover for details.

    Parameters
    ----------
    skeleton : Skeleton
        Computation skeleton to draw.

    Returns
    -------
    plotly.graph_objects.Figure
        The skeleton chart.
    """
    depth = _layers(skeleton)
    pos: dict[int, tuple[float, float]] = {}
    for level in sorted(set(depth)):
        members = [i for i, dl in enumerate(depth) if dl == level]
        for k, i in enumerate(members):
            pos[i] = ((k + 1) / (len(members) + 1), float(level))
    ex, ey = [], []
    for i, node in enumerate(skeleton.nodes):
        if not node.is_input:
            for c in skeleton.children_of(i):
                ex += [pos[c][0], pos[i][0], None]
                ey += [pos[c][1], pos[i][1], None]
    traces = [dict(type="scatter", x=ex, y=ey, mode="lines", line=dict(color="#999", width=2), hoverinfo="skip",
                   showlegend=False, name="edges")]
    groups: dict[str, list[int]] = {}
    for i, node in enumerate(skeleton.nodes):
        groups.setdefault(node.kernel if node.is_input else f"act:{node.activation}", []).append(i)
    for group, idx in groups.items():
        is_input = not group.startswith("act:")
        name = f"input: {group}" if is_input else f"node: {ACTIVATIONS[group[4:]].label}"
        color = NODE_COLORS.get(group, PALETTE[0]) if is_input else PALETTE[2 + list(ACTIVATIONS).index(group[4:]) % 5]
        traces.append(dict(
            type="scatter", x=[pos[i][0] for i in idx], y=[pos[i][1] for i in idx], mode="markers+text", name=name,
            text=[plotly_text(skeleton.nodes[i].name) for i in idx],
            textposition="bottom center" if is_input else "middle right", textfont=dict(size=13),
            marker=dict(size=22 if is_input else 28, color=color, symbol="square" if is_input else "circle",
                        line=dict(color="#333", width=1)),
            hovertext=[skeleton.nodes[i].label() for i in idx], hoverinfo="text"))
    # the whole title shown literally (a skeleton's name may carry markup)
    title = plotly_text(f"Computation skeleton “{skeleton.name}”: {len(skeleton.nodes)} nodes, "
                        f"complexity {skeleton.complexity():.2f}")
    return figure(traces, dict(
        title=dict(text=title), height=max(300, 130 * (max(depth) + 1) + 120),
        xaxis=dict(visible=False, range=[0, 1.08]),
        yaxis=dict(title=dict(text="depth (0 = inputs)"), dtick=1, range=[-0.5, max(depth) + 0.5]),
        legend=dict(orientation="h", yanchor="top", y=-0.05, x=0)))


def activation_figure(curves: pd.DataFrame) -> go.Figure:
    """The dual activations σ̂(ρ) on [-1, 1] (all map 1 to 1: the kernels stay normalized).

    ``curves`` is :func:`rkcore.teaching.compositional.activation_curves` output (activation, label, rho, value).

    Parameters
    ----------
    curves : pandas.DataFrame
        Activation curves (columns activation, label, rho, value).

    Returns
    -------
    plotly.graph_objects.Figure
        One line per activation.
    """
    if curves.empty:
        raise ValueError("No activation curves to draw.")
    traces = [dict(type="scatter", x=g["rho"].to_numpy(), y=g["value"].to_numpy(), mode="lines",
                   name=g["label"].iloc[0], line=dict(width=3, color=PALETTE[(2 + k) % len(PALETTE)]))
              for k, (_, g) in enumerate(curves.groupby("activation", sort=False))]
    return figure(traces, dict(
        title=dict(text="Dual activations σ̂(ρ)"), height=420,
        xaxis=dict(title=dict(text="ρ (mean of the children's kernel values)")),
        yaxis=dict(title=dict(text="σ̂(ρ) (kernel value at the node)"))))


def compositional_error_figure(df: pd.DataFrame, metric: str = "rel_fro") -> go.Figure:
    """Error vs D for each de-duplication mode: median over trials, 10-90% band, 1/√D guide.

    Parameters
    ----------
    df : pandas.DataFrame
        Compositional study output (columns metric, dedup, D, trial, value).
    metric : str, default "rel_fro"
        Error metric to draw.

    Returns
    -------
    plotly.graph_objects.Figure
        The log-log error chart.
    """
    sub = df[df["metric"] == metric]
    if sub.empty:
        raise ValueError(f"No rows with metric {metric!r}; available: {sorted(df['metric'].unique())}.")
    # the 10/50/90% quantiles of every (mode, D) in one grouping (one per mode cost more than the drawing)
    by = sub.groupby(["dedup", "D"])["value"]
    stats = pd.DataFrame({"q10": by.quantile(0.1), "q50": by.quantile(0.5), "q90": by.quantile(0.9)})
    traces: list[dict[str, Any]] = []
    first: tuple[np.ndarray, float] | None = None
    for mode in sub["dedup"].dropna().unique():  # in order of appearance
        q = stats.xs(mode)  # rows by increasing D
        D = q.index.to_numpy()
        traces += band_traces(D, q["q10"], q["q50"], q["q90"], name=DEDUP_LABELS.get(mode, mode),
                               color=DEDUP_COLORS.get(mode, PALETTE[0]))
        first = (D, q["q50"].iloc[0]) if first is None else first
    assert first is not None  # at least one mode: the rows are not empty (checked above)
    D, y0 = first
    guide = reference_slope(D, y0, D[0])
    traces.append(dict(type="scatter", x=D, y=guide, mode="lines", name="∝ 1/√D (guide)",
                       line=dict(color="#555", dash="dash", width=2)))
    n_trials = int(sub["trial"].nunique())
    return figure(traces, dict(
        title=dict(text="Compositional random features: Gram error vs D"), height=520,
        xaxis=dict(type="log", title=dict(text="D (stored features, log scale)"), tickvals=sorted(sub["D"].unique())),
        yaxis=dict(type="log", title=dict(text=metric_axis_title(metric)),
                   **log_ticks(np.r_[sub["value"].to_numpy(), guide])),
        legend=LEGEND_BELOW,
        annotations=[dict(text=f"bands: 10–90% of {n_trials} trials", xref="paper", yref="paper", x=0.0, y=0.0,
                          xanchor="left", yanchor="bottom", showarrow=False, font=dict(size=14, color="#555"))]))


def draws_figure(df: pd.DataFrame) -> go.Figure:
    """Executions of Algorithm 1 per stored feature vs D (de-duplication draws more to fill D).

    Parameters
    ----------
    df : pandas.DataFrame
        Compositional study output with ``draws_per_feature`` rows.

    Returns
    -------
    plotly.graph_objects.Figure
        Median draws per stored feature per mode.
    """
    sub = df[df["metric"] == "draws_per_feature"]
    if sub.empty:
        raise ValueError("No draws_per_feature rows to draw.")
    traces = []
    for mode, part in sub.groupby("dedup", sort=False):
        q = part.groupby("D")["value"].median()
        traces.append(dict(type="scatter", x=q.index.to_numpy(), y=q.to_numpy(), mode="lines+markers",
                           name=DEDUP_LABELS.get(mode, mode),
                           line=dict(color=DEDUP_COLORS.get(mode, PALETTE[0]), width=3)))
    log_y = spans_decades(sub["value"])
    return figure(traces, dict(
        title=dict(text="Draws of Algorithm 1 per stored feature"), height=420,
        xaxis=dict(type="log", title=dict(text="D (stored features, log scale)"), tickvals=sorted(sub["D"].unique())),
        yaxis=dict(type="log" if log_y else "linear", rangemode="tozero",
                   title=dict(text="draws / D (median over trials" + (", log scale)" if log_y else ")"))),
        legend=dict(x=0.01, xanchor="left", y=0.99, yanchor="top")))


def compositional_summary(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The Compositional page's table: the median error per D (rows) and de-duplication mode (columns),
    and the ratio none / de-duplicated when both were drawn.

    Parameters
    ----------
    df : pandas.DataFrame
        Compositional study output.
    metric : str
        Error metric to tabulate.

    Returns
    -------
    pandas.DataFrame
        Column D, one column per de-duplication mode and, when available, the error ratio.
    """
    sub = df[df.metric == metric].groupby(["D", "dedup"])["value"].median().unstack("dedup")
    summary = sub.reset_index()
    summary.columns.name = None
    if {"none", "unbiased"} <= set(sub.columns):
        summary["error ratio (none / de-dup)"] = (sub["none"] / sub["unbiased"]).to_numpy()
    return summary


def compositional_note(summary: pd.DataFrame, df: pd.DataFrame) -> str:
    """The Compositional page's "what to notice" from its summary table (:func:`compositional_summary`)
    and the draws per stored feature it charts (``draws_per_feature`` rows of ``df``).

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`compositional_summary`.
    df : pandas.DataFrame
        Compositional study output (for the draws per feature).

    Returns
    -------
    str
        The note, a few sentences.
    """
    first, last = summary.iloc[0], summary.iloc[-1]
    modes = [m for m in summary.columns if m in DEDUP_LABELS]
    short = {"none": "i.i.d. draws", "unbiased": "Des Raj weights", "counts": "multiplicity weights"}
    slopes = "; ".join(f"{short[m]}: log-log slope {signed(loglog_slope(summary['D'], summary[m]))}"
                       for m in modes)
    text = f"Fitted over D = {int(first.D):,} … {int(last.D):,} ({slopes}; 1/√D would be −0.50)."
    ratio = "error ratio (none / de-dup)"
    if ratio in summary.columns:
        r0, r1 = float(first[ratio]), float(last[ratio])
        trend = "widens" if r1 > r0 * 1.05 else "narrows" if r1 < r0 / 1.05 else "stays about the same"
        better = "lower" if r1 > 1 else "higher"
        text = (f"At D = {int(last.D):,} de-duplication gives median error {last['unbiased']:.3g} against "
                f"{last['none']:.3g} for plain i.i.d. draws: {max(r1, 1 / r1):.3g}× {better} (at D = "
                f"{int(first.D):,}: ratio {r0:.3g}), so the gap {trend} with D. " + text)
    draws = df[(df.metric == "draws_per_feature") & (df.D == last.D)]
    if len(draws) and "unbiased" in set(draws["dedup"]):
        per = float(draws[draws["dedup"] == "unbiased"]["value"].median())
        text += (f" De-duplication ran Algorithm 1 {per:.3g} times per stored feature at D = {int(last.D):,}: "
                 "every repeat is merged, and the more features repeat (a constant output, base features with "
                 "few values), the more it gains.")
    return text
