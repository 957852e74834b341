r"""Figures of the Timing page: mapping time vs d and vs D (the paper's Figure 1), and the growth the
complexity formulas predict.

Measured side: :func:`rkcore.studies.timing.time_maps` output (one row per map, d, D, n, repeat, phase),
drawn as the median over repeats with the interquartile band, log-log, and the fitted
slope of log time against log d (or D) from :func:`rkcore.studies.timing.growth_exponent` in the
legend: a slope of 1 is linear growth, 0 is flat, and log d growth shows as a slope that
falls towards 0.

Predicted side: :func:`rkcore.studies.timing.predicted_operations` (the registry's per-sample
``operations`` without constants), so only their slopes (not their heights) compare with a
measurement. Both figures take the engine's DataFrames and compute nothing but the drawing.

The pages rebuild these figures on every rerun, so they are built from trace dicts with
:func:`rkcore.figures.style.figure` (no per-property validation; nested dicts in plotly's canonical form).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..registry import get_map
from .style import LEGEND_BELOW, figure, log_ticks, plotly_text, rgba

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

    ``slopes`` is :func:`rkcore.studies.timing.growth_exponent` output for the same ``along`` and phase:
    each legend entry then shows the map's fitted growth exponent.

    Parameters
    ----------
    df : pandas.DataFrame
        time_maps output (columns map, phase, d, D, n, seconds).
    along : str, default "d"
        Swept axis, a key of ``AXIS_LABELS``.
    phase : str, default "transform"
        Timed phase to draw.
    slopes : pandas.DataFrame or None, optional
        Growth exponents per map, shown in the legend.
    title : str or None, optional
        Figure title; None gives a default naming the swept axis.

    Returns
    -------
    plotly.graph_objects.Figure
        The log-log timing chart.
    """
    if along not in AXIS_LABELS:
        raise ValueError(f"along must be one of {', '.join(AXIS_LABELS)}, got {along!r}.")
    sub = df[df["phase"] == phase]
    if sub.empty:
        raise ValueError(f"No timings of phase {phase!r}.")
    slope_of = (pd.Series(dtype=float) if slopes is None
                else slopes[slopes["phase"] == phase].groupby("map")["exponent"].first())
    repeats = int(sub.groupby(["map", "d", "D", "n"])["seconds"].count().min())
    # one grouping for every (map, along) cell, sorted by along within a map (a grouping per map with quantile
    # lambdas cost more than the drawing); the quartiles are np.nanpercentile of each cell's seconds, which is
    # Series.quantile's arithmetic
    cells = sub.groupby(["map", along])["seconds"]
    median = cells.median()
    seconds = sub["seconds"].to_numpy(float)
    quartiles = {cell: np.nanpercentile(seconds[rows], [25.0, 75.0]) for cell, rows in cells.indices.items()}
    traces = []
    for key in sub["map"].unique():  # in order of appearance
        med = median.loc[key]
        x = med.index.to_numpy(float)
        q1, q3 = np.array([quartiles[(key, v)] for v in med.index]).T
        entry = get_map(key)
        color, short = entry.color, entry.short_label
        slope = slope_of.get(key, np.nan)
        name = f"{short}: slope {slope:.2f}" if np.isfinite(slope) else short
        traces.append(dict(type="scatter", x=np.concatenate([x, x[::-1]]), y=np.concatenate([q3, q1[::-1]]) * 1e3,
                           mode="lines", fill="toself", fillcolor=rgba(color, 0.18), line=dict(width=0),
                           hoverinfo="skip", name=f"{short}: interquartile range", legendgroup=key, showlegend=False))
        traces.append(dict(type="scatter", x=x, y=med.to_numpy() * 1e3, mode="lines+markers", name=name,
                           legendgroup=key, line=dict(color=color, width=3), marker=dict(size=9),
                           hovertemplate=f"{along}=%{{x}}<br>median %{{y:.3g}} ms<extra>{short}</extra>"))
    title = plotly_text(title or f"Mapping time vs {along} ({_fixed_text(sub, along)})")
    return figure(traces, dict(
        height=520,
        title=dict(text=title + f"<br><sup>{PHASE_LABELS.get(phase, phase)}: median of {repeats} repeats · band: "
                                "interquartile range</sup>"),
        xaxis=dict(type="log", title=dict(text=AXIS_LABELS[along]), tickvals=sorted(sub[along].unique())),
        # short: a vertical title longer than the plot ran into the figure title (presenter mode, 1280x720)
        yaxis=dict(type="log", title=dict(text=f"{phase} time (ms)"),
                   **log_ticks(1e3 * np.r_[cells.quantile(0.25), cells.quantile(0.75)])),
        # below the plot, anchored to the figure's bottom, one entry per line (inside the plot the lines ran
        # through it; a horizontal legend is wider than a half-width chart)
        legend=dict(LEGEND_BELOW, orientation="v", title=dict(text="fitted slope"))))


def predicted_figure(pred: pd.DataFrame, along: str, *, title: str | None = None) -> go.Figure:
    """Predicted operations per sample vs ``along`` per map, log-log (the slopes are the point).

    Parameters
    ----------
    pred : pandas.DataFrame
        Predicted costs (columns map, label, slope, operations and ``along``).
    along : str
        Swept axis.
    title : str or None, optional
        Figure title; None gives a default naming the swept axis.

    Returns
    -------
    plotly.graph_objects.Figure
        The log-log chart of predicted operations.
    """
    if pred.empty:
        raise ValueError("No predictions to draw.")
    traces = []
    for key, g in pred.groupby("map", sort=False):
        key = str(key)  # pandas-stubs types group keys as any Scalar; here the column holds names
        end_slope = g["slope"].iloc[-1]
        name = f"{g['label'].iloc[0]}: slope {end_slope:.2f}" if np.isfinite(end_slope) else g["label"].iloc[0]
        traces.append(dict(type="scatter", x=g[along].to_numpy(), y=g["operations"].to_numpy(), mode="lines+markers",
                           name=name, line=dict(color=get_map(key).color, width=3, dash="dot"), marker=dict(size=7)))
    return figure(traces, dict(
        height=460,
        title=dict(text=plotly_text(title or f"Predicted cost per sample vs {along} (complexity formulas, no "
                                             "constants)")),
        xaxis=dict(type="log", title=dict(text=AXIS_LABELS[along]), tickvals=sorted(pred[along].unique())),
        yaxis=dict(type="log", title=dict(text="operations per sample (log scale)"), **log_ticks(pred["operations"])),
        legend=dict(LEGEND_BELOW, orientation="v", title=dict(text="slope at the right end"))))


#: A measured slope is reported as unreliable when the slopes fitted to single repeats spread wider than this
#: (max − min), or when the machine's load average exceeded its cores while measuring.
SLOPE_SPREAD_LIMIT = 0.25


def slope_spread(df: pd.DataFrame, along: str, phase: str = "transform") -> pd.DataFrame:
    """Per map: the slope of log(time) against log(``along``) fitted to each repeat alone, summarized as
    ``low`` and ``high`` (min and max over the repeats) and ``repeats`` (how many had two or more points).
    ``df``: rkcore.studies.timing.time_maps rows of one sweep (columns map, repeat, phase, seconds, ``along``).

    Parameters
    ----------
    df : pandas.DataFrame
        time_maps rows of one sweep.
    along : str
        Swept axis column.
    phase : str, default "transform"
        Timed phase to fit.

    Returns
    -------
    pandas.DataFrame
        Columns map, along, low, high, repeats.
    """
    sub = df[(df["phase"] == phase) & (df["seconds"] > 0)]
    rows = []
    for key, g in sub.groupby("map", sort=False):
        key = str(key)  # pandas-stubs types group keys as any Scalar; here the column holds names
        slopes = []
        for _, r in g.groupby("repeat"):
            x = r[along].to_numpy(float)
            if np.unique(x).size >= 2:
                slopes.append(float(np.polyfit(np.log(x), np.log(r["seconds"].to_numpy(float)), 1)[0]))
        rows.append({"map": key, "along": along, "low": min(slopes, default=np.nan),
                     "high": max(slopes, default=np.nan), "repeats": len(slopes)})
    return pd.DataFrame(rows, columns=["map", "along", "low", "high", "repeats"])


def timing_note(slopes: pd.DataFrame, load: tuple[float, int] | None = None) -> str:
    """The Timing page's "what to notice" from the growth-exponent table it shows (columns ``map``
    (label), ``along`` ("d" or "D"), ``exponent``, and optionally ``low`` / ``high``, the spread of the
    per-repeat slopes): the measured slopes with their spread, which of them are rough (a spread
    above SLOPE_SPREAD_LIMIT, or a load average above the cores while measuring: ``load`` = (load, cores)),
    then what the formulas predict. With a ``stable`` column (the timings repeated the slopes that disagreed,
    :func:`rkcore.views.timing.slope_errors`) a slope is rough when it is still not stable after them, and the
    note gives no advice to measure more: it already did.

    Parameters
    ----------
    slopes : pandas.DataFrame
        Growth-exponent table (columns map, along, exponent, optionally low and high).
    load : tuple of (float, int) or None, optional
        Load average and core count while measuring.

    Returns
    -------
    str
        The note, a few sentences.
    """
    repeated = "stable" in slopes.columns  # the timings already repeated the slopes that disagreed
    parts, shaky, counts = [], [], []
    for label, rows in slopes.groupby("map", sort=False):
        each = []
        for r in rows.itertuples():
            text = f"time ∝ {r.along}^{r.exponent:.2f}"
            low, high = getattr(r, "low", np.nan), getattr(r, "high", np.nan)
            if np.isfinite(low) and np.isfinite(high):
                text += f" (repeats {low:.2f} to {high:.2f})"
                stable = getattr(r, "stable", None)
                if (stable is False or stable is np.False_) if repeated else high - low > SLOPE_SPREAD_LIMIT:
                    shaky.append(f"{label} in {r.along}")
                    counts.append(int(getattr(r, "repeats", 0) or 0))
            each.append(text)
        parts.append(f"{label}: {', '.join(each)}")
    note = "Measured on this run: " + "; ".join(parts) + "."
    # after the repeats a stable slope is stable whatever the load; the load then only explains a rough one
    busy = load is not None and load[0] > load[1] and (shaky or not repeated)
    if shaky or busy:
        why = []
        if shaky and repeated:
            why.append(f"the single repeats still disagree for {', '.join(shaky)} after {max(counts)} repeats")
        elif shaky:
            why.append(f"the repeats disagree by more than {SLOPE_SPREAD_LIMIT:g} for {', '.join(shaky)}")
        if busy:
            assert load is not None  # busy implies a load was given
            why.append(f"the machine was busy (load {load[0]:.1f} on {load[1]} cores)")
        note += (" Read these slopes as rough: " + " and ".join(why) + ", so other work took a different share "
                 "of the processor in each repeat" + ("." if repeated else "; more repeats narrow the range."))
    return note + (" The operation counts predict slope 1 for RK in both d and D (one dense D × d product) and, for "
                   "SCRK, about 1 in D but well below 1 in d (FFTs: log d). Slopes below the prediction mean fixed "
                   "overheads still dominate at these sizes: raise n or the largest d / D to see the asymptotic rates.")
