r"""Figures of the Timing page: mapping time vs d and vs D (the paper's Figure 1), and the growth the
complexity formulas predict.

Measured side: :func:`rkcore.timing.time_maps` output (one row per map, d, D, n, repeat, phase),
drawn as the median over repeats with the interquartile band, log-log, and the fitted
slope of log time against log d (or D) from :func:`rkcore.timing.growth_exponent` in the
legend: a slope of 1 is linear growth, 0 is flat, and log d growth shows as a slope that
falls towards 0.

Predicted side: :func:`rkcore.timing.predicted_operations` (the registry's per-sample
``operations`` without constants), so only their slopes (not their heights) compare with a
measurement. Both figures take the engine's DataFrames and compute nothing but the drawing.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..registry import get_map
from .style import LEGEND_BELOW, log_ticks, new_figure, rgba

AXIS_LABELS = {
    "d": "d (input features, log scale)",
    "D": "D (random features, log scale)",
    "n": "n (samples mapped, log scale)",
}
PHASE_LABELS = {"transform": "transform (mapping)", "fit": "fit (drawing the weights)"}

# ============================================================================ figures
def _fixed_text(df: pd.DataFrame, along: str) -> str:
    parts = []
    for dim in ("d", "D", "n"):
        if dim != along:
            vals = sorted(df[dim].unique())
            parts.append(f"{dim} = {vals[0]:,}" if len(vals) == 1 else f"{dim} = {', '.join(map(str, vals))}")
    return ", ".join(parts)


def timing_figure(df: pd.DataFrame, along: str = "d", phase: str = "transform", *,
                  slopes: pd.DataFrame | None = None, title: str | None = None) -> go.Figure:
    """Median time vs ``along`` per map (band: interquartile range over repeats), log-log.

    ``slopes`` is :func:`rkcore.timing.growth_exponent` output for the same ``along`` and phase:
    each legend entry then shows the map's fitted growth exponent."""
    if along not in AXIS_LABELS:
        raise ValueError(f"along must be one of {', '.join(AXIS_LABELS)}, got {along!r}.")
    sub = df[df["phase"] == phase]
    if sub.empty:
        raise ValueError(f"No timings of phase {phase!r}.")
    slopes = (pd.Series(dtype=float) if slopes is None
              else slopes[slopes["phase"] == phase].groupby("map")["exponent"].first())
    repeats = int(sub.groupby(["map", "d", "D", "n"])["seconds"].count().min())
    fig = new_figure(title or f"Mapping time vs {along} ({_fixed_text(sub, along)})", height=520)
    for key, g in sub.groupby("map", sort=False):
        q = g.groupby(along)["seconds"].agg(median="median", q1=lambda s: s.quantile(0.25),
                                            q3=lambda s: s.quantile(0.75)).reset_index()
        entry = get_map(key)
        color, short = entry.color, entry.short_label
        x = q[along].to_numpy(float)
        slope = slopes.get(key, np.nan)
        name = f"{short}: slope {slope:.2f}" if np.isfinite(slope) else short
        fig.add_trace(go.Scatter(x=np.concatenate([x, x[::-1]]), y=np.concatenate([q["q3"], q["q1"][::-1]]) * 1e3,
                                 mode="lines", fill="toself", fillcolor=rgba(color, 0.18), line=dict(width=0), hoverinfo="skip",
                                 name=f"{short}: interquartile range", legendgroup=key, showlegend=False))
        fig.add_trace(go.Scatter(x=x, y=q["median"] * 1e3, mode="lines+markers", name=name, legendgroup=key,
                                 line=dict(color=color, width=3), marker=dict(size=9),
                                 hovertemplate=f"{along}=%{{x}}<br>median %{{y:.3g}} ms<extra>{short}</extra>"))
    fig.update_xaxes(type="log", title_text=AXIS_LABELS[along], tickvals=sorted(sub[along].unique()))
    q = sub.groupby(["map", along])["seconds"]
    fig.update_yaxes(type="log", title_text=f"{PHASE_LABELS.get(phase, phase)} time (ms, log scale)",
                     **log_ticks(1e3 * np.r_[q.quantile(0.25), q.quantile(0.75)]))
    # below the plot, anchored to the figure's bottom, one entry per line (inside the plot the lines ran
    # through it; a horizontal legend is wider than a half-width chart)
    fig.update_layout(legend=dict(LEGEND_BELOW, orientation="v", title_text="fitted slope"),
                      title_text=fig.layout.title.text + f"<br><sup>median of {repeats} repeats · band: "
                                                          "interquartile range</sup>")
    return fig


def predicted_figure(pred: pd.DataFrame, along: str, *, title: str | None = None) -> go.Figure:
    """Predicted operations per sample vs ``along`` per map, log-log (the slopes are the point)."""
    if pred.empty:
        raise ValueError("No predictions to draw.")
    fig = new_figure(title or f"Predicted cost per sample vs {along} (complexity formulas, no constants)",
                     height=460)
    for key, g in pred.groupby("map", sort=False):
        end_slope = g["slope"].iloc[-1]
        name = f"{g['label'].iloc[0]}: slope {end_slope:.2f}" if np.isfinite(end_slope) else g["label"].iloc[0]
        fig.add_trace(go.Scatter(x=g[along], y=g["operations"], mode="lines+markers", name=name,
                                 line=dict(color=get_map(key).color, width=3, dash="dot"),
                                 marker=dict(size=7)))
    fig.update_xaxes(type="log", title_text=AXIS_LABELS[along], tickvals=sorted(pred[along].unique()))
    fig.update_yaxes(type="log", title_text="operations per sample (log scale)",
                     **log_ticks(pred["operations"]))
    fig.update_layout(legend=dict(LEGEND_BELOW, orientation="v", title_text="slope at the right end"))
    return fig


def timing_note(slopes: pd.DataFrame) -> str:
    """The Timing page's "what to notice" from the growth-exponent table it shows (columns ``map``
    (label), ``along`` ("d" or "D"), ``exponent``): the measured slopes, then what the formulas predict."""
    parts = []
    for label, rows in slopes.groupby("map", sort=False):
        each = ", ".join(f"time ∝ {r.along}^{r.exponent:.2f}" for r in rows.itertuples())
        parts.append(f"{label}: {each}")
    return ("Measured on this run: " + "; ".join(parts) + ". The operation counts predict slope 1 for RK in "
            "both d and D (one dense D × d product) and, for SCRK, about 1 in D but well below 1 in d (FFTs: "
            "log d). Slopes below the prediction mean fixed overheads still dominate at these sizes: raise n "
            "or the largest d / D to see the asymptotic rates.")
