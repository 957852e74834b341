r"""Figures of the Timing page: mapping time vs d and vs D (the paper's Figure 1), and the growth the
complexity formulas predict.

Measured side: :func:`rkcore.timing.time_maps` output (one row per map, d, D, n, repeat, phase),
drawn as the median over repeats with the interquartile band, log-log, and the fitted
slope of log time against log d (or D) from :func:`rkcore.timing.growth_exponent` in the
legend: a slope of 1 is linear growth, 0 is flat, and log d growth shows as a slope that
falls towards 0.

Predicted side: :data:`OPERATIONS` are the per-sample costs of the registry's
``time_complexity`` without constants, so only their slopes (not their heights) compare
with a measurement.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..registry import MAPS
from ..timing import growth_exponent
from .style import MAP_COLORS, PALETTE, log_ticks, new_figure

AXIS_LABELS = {
    "d": "d (input features, log scale)",
    "D": "D (random features, log scale)",
    "n": "n (samples mapped, log scale)",
}
PHASE_LABELS = {"transform": "transform (mapping)", "fit": "fit (drawing the weights)"}

#: Per-sample operation counts of each map's transform, big-O without constants
#: (the ``time_complexity`` of :data:`rkcore.registry.MAPS`).
OPERATIONS: dict[str, Callable[[np.ndarray, np.ndarray, int], np.ndarray]] = {
    "rk": lambda d, D, m: D * d * m,
    "scrk": lambda d, D, m: m * D * np.log2(np.maximum(d, 2)),
    "ts": lambda d, D, m: m * (d + D * np.log2(np.maximum(D, 2))),
    "rm": lambda d, D, m: D * d * m,
    "rff": lambda d, D, m: D * d,
    "nystroem": lambda d, D, m: D * d + D * D,
}


def short_label(map_key: str) -> str:
    """"Random Kernel (RK)" -> "RK"; keys without a parenthesized short name keep their label."""
    label = MAPS[map_key].label if map_key in MAPS else map_key
    return label[label.rfind("(") + 1:-1] if label.endswith(")") and "(" in label else label


# ============================================================================ data behind the charts
def predicted_operations(map_keys: Sequence[str], along: str, values: Sequence[int], *, d: int = 256,
                         D: int = 1024, degree: int = 2) -> pd.DataFrame:
    """Operations per sample predicted by the complexity formulas, along d or D (the other fixed).

    Returns one row per (map, value): map, label, ``along`` value, operations, slope (the local
    slope of log operations against log ``along``, by finite differences).
    """
    if along not in ("d", "D"):
        raise ValueError(f"along must be 'd' or 'D', got {along!r}.")
    unknown = [k for k in map_keys if k not in OPERATIONS]
    if unknown:
        raise ValueError(f"No complexity formula for map(s) {unknown}; known: {', '.join(OPERATIONS)}.")
    x = np.asarray(sorted(set(int(v) for v in values)), dtype=np.float64)
    if x.size == 0 or x.min() < 1:
        raise ValueError(f"values must hold integers >= 1, got {list(values)!r}.")
    frames = []
    for key in map_keys:
        dd, DD = (x, np.full_like(x, D)) if along == "d" else (np.full_like(x, d), x)
        ops = OPERATIONS[key](dd, DD, degree).astype(np.float64)
        slope = np.gradient(np.log(ops), np.log(x)) if x.size > 1 else np.full_like(x, np.nan)
        frames.append(pd.DataFrame({"map": key, "label": short_label(key), along: x.astype(np.int64),
                                    "operations": ops, "slope": slope}))
    return pd.concat(frames, ignore_index=True)


def median_table(df: pd.DataFrame, phase: str = "transform") -> pd.DataFrame:
    """Median seconds per (d, D, n) x map for one phase, one column per map (milliseconds)."""
    sub = df[df["phase"] == phase]
    if sub.empty:
        raise ValueError(f"No timings of phase {phase!r}.")
    med = sub.groupby(["d", "D", "n", "map"])["seconds"].median().unstack("map") * 1e3
    order = list(dict.fromkeys(sub["map"]))
    med = med[order]
    med.columns = [f"{short_label(k)} (ms)" for k in order]
    return med.reset_index()


# ============================================================================ figures
def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"


def _fixed_text(df: pd.DataFrame, along: str) -> str:
    parts = []
    for dim in ("d", "D", "n"):
        if dim != along:
            vals = sorted(df[dim].unique())
            parts.append(f"{dim} = {vals[0]:,}" if len(vals) == 1 else f"{dim} = {', '.join(map(str, vals))}")
    return ", ".join(parts)


def timing_figure(df: pd.DataFrame, along: str = "d", phase: str = "transform", *,
                  title: str | None = None) -> go.Figure:
    """Median time vs ``along`` per map (band: interquartile range over repeats), log-log, with the
    fitted growth exponent (slope of log time vs log ``along``) in each legend entry."""
    if along not in AXIS_LABELS:
        raise ValueError(f"along must be one of {', '.join(AXIS_LABELS)}, got {along!r}.")
    sub = df[df["phase"] == phase]
    if sub.empty:
        raise ValueError(f"No timings of phase {phase!r}.")
    slopes = growth_exponent(sub, along=along, phase=phase).groupby("map")["exponent"].first()
    repeats = int(sub.groupby(["map", "d", "D", "n"])["seconds"].count().min())
    fig = new_figure(title or f"Mapping time vs {along} ({_fixed_text(sub, along)})", height=520)
    for key, g in sub.groupby("map", sort=False):
        q = g.groupby(along)["seconds"].agg(median="median", q1=lambda s: s.quantile(0.25),
                                            q3=lambda s: s.quantile(0.75)).reset_index()
        color = MAP_COLORS.get(key, PALETTE[7])
        x = q[along].to_numpy(float)
        slope = slopes.get(key, np.nan)
        name = f"{short_label(key)}: slope {slope:.2f}" if np.isfinite(slope) else short_label(key)
        fig.add_trace(go.Scatter(x=np.concatenate([x, x[::-1]]), y=np.concatenate([q["q3"], q["q1"][::-1]]) * 1e3,
                                 mode="lines", fill="toself", fillcolor=_rgba(color, 0.18), line=dict(width=0), hoverinfo="skip",
                                 name=f"{short_label(key)}: interquartile range", legendgroup=key, showlegend=False))
        fig.add_trace(go.Scatter(x=x, y=q["median"] * 1e3, mode="lines+markers", name=name, legendgroup=key,
                                 line=dict(color=color, width=3), marker=dict(size=9),
                                 hovertemplate=f"{along}=%{{x}}<br>median %{{y:.3g}} ms<extra>{short_label(key)}</extra>"))
    fig.update_xaxes(type="log", title_text=AXIS_LABELS[along], tickvals=sorted(sub[along].unique()))
    q = sub.groupby(["map", along])["seconds"]
    fig.update_yaxes(type="log", title_text=f"{PHASE_LABELS.get(phase, phase)} time (ms, log scale)",
                     **log_ticks(1e3 * np.r_[q.quantile(0.25), q.quantile(0.75)]))
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.22, x=0, title_text="fitted slope: "),
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
                                 line=dict(color=MAP_COLORS.get(key, PALETTE[7]), width=3, dash="dot"),
                                 marker=dict(size=7)))
    fig.update_xaxes(type="log", title_text=AXIS_LABELS[along], tickvals=sorted(pred[along].unique()))
    fig.update_yaxes(type="log", title_text="operations per sample (log scale)",
                     **log_ticks(pred["operations"]))
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.22, x=0, title_text="slope at the right end: "))
    return fig
