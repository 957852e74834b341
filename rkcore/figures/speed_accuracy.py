"""Figures of the speed-against-accuracy comparison (pages/11_Speed_and_accuracy.py and the story's last step), in
the manner of scikit-learn's gallery comparison of kernel approximations: accuracy, training time and prediction
time against D on one figure, the exact kernel SVMs as flat lines; and time against n, measured then extrapolated,
with the crossover and the memory limit of the exact kernel marked.

Input: :func:`rkcore.studies.speed_accuracy.summarize_sweep` and :func:`~rkcore.studies.speed_accuracy.extrapolate`
output. Built from trace dicts with :func:`rkcore.figures.style.figure` (plotly's canonical form).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .style import figure, rgba

#: The three panels of the sweep figure and the summary columns they draw (centre, low, high).
PANELS = (("Test accuracy", "accuracy"), ("Training time", "train"), ("Prediction time", "predict"))
#: Legends above the plots, in the first screen (below the plots they fell under the fold at 1280x720), under the
#: title, which is pinned to the top of the figure (in the middle of the margin it ran into the legend).
LEGEND_ABOVE = dict(orientation="h", x=0.0, xanchor="left", y=1.12, yanchor="bottom")
TITLE_AT_TOP = dict(y=0.98, yref="container", yanchor="top")
SWEEP_HEIGHT = 470
MODEL_STYLE = {"svm_anova": ("Kernel SVM, exact ANOVA (m = 2)", "#000000"), "rk": ("Linear SVM + RK", "#0072B2")}
_PANEL_TITLE = dict(xanchor="center", xref="paper", y=1.0, yanchor="bottom", yref="paper", showarrow=False)


def _panels(titles, gap: float = 0.09) -> tuple[dict, list[dict]]:
    width = (1 - gap * (len(titles) - 1)) / len(titles)
    axes, notes = {}, []
    for k, text in enumerate(titles):
        left = k * (width + gap)
        suffix = "" if k == 0 else str(k + 1)
        axes[f"xaxis{suffix}"] = dict(anchor=f"y{suffix}", domain=[round(left, 4), round(min(left + width, 1.0), 4)])
        axes[f"yaxis{suffix}"] = dict(anchor=f"x{suffix}", domain=[0.0, 1.0])
        notes.append(dict(_PANEL_TITLE, text=text, x=round(left + width / 2, 4), font=dict(size=17)))
    return axes, notes


def _columns(value: str) -> tuple[str, str, str]:
    if value == "accuracy":
        return "accuracy_mean", "accuracy_se", "accuracy_se"
    return f"{value}_median", f"{value}_min", f"{value}_max"


def _error_bars(rows: pd.DataFrame, value: str) -> dict:
    centre, low, high = _columns(value)
    if value == "accuracy":
        se = rows[low].fillna(0.0).to_numpy()
        return dict(type="data", array=2 * se, visible=True)  # ± 2 standard errors: the claims' rule
    return dict(type="data", symmetric=False, array=(rows[high] - rows[centre]).to_numpy(),
                arrayminus=(rows[centre] - rows[low]).to_numpy(), visible=True)


def _exact_traces(row: pd.Series, D_range: tuple[float, float], panel: int, value: str, first: bool) -> list[dict]:
    centre, low, high = _columns(value)
    suffix = "" if panel == 0 else str(panel + 1)
    y = float(row[centre])
    if value == "accuracy":
        band = 2 * float(0.0 if pd.isna(row[low]) else row[low])
        lo, hi = y - band, y + band
    else:
        lo, hi = float(row[low]), float(row[high])
    color = str(row.get("color", "#000000"))
    x = [D_range[0], D_range[1], D_range[1], D_range[0]]
    return [dict(type="scatter", x=x, y=[lo, lo, hi, hi], mode="lines", fill="toself", fillcolor=rgba(color, 0.12),
                 line=dict(width=0), hoverinfo="skip", showlegend=False, legendgroup=row["contender"],
                 xaxis=f"x{suffix}", yaxis=f"y{suffix}"),
            dict(type="scatter", x=list(D_range), y=[y, y], mode="lines", name=f"{row['label']} (no D)",
                 line=dict(color=color, dash="dash", width=2.5), legendgroup=row["contender"], showlegend=first,
                 xaxis=f"x{suffix}", yaxis=f"y{suffix}")]


def speed_accuracy_figure(summary: pd.DataFrame, colors: dict[str, str], title: str) -> go.Figure:
    """Accuracy (mean ± 2 standard errors over seeds), training and prediction time (median, bars: the seeds'
    range) against D; the exact kernel SVMs as dashed flat lines with their band.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`rkcore.studies.speed_accuracy.summarize_sweep` output.
    colors : dict of str to str
        Contender key -> "#rrggbb".
    title : str
        Figure title (data set and n).

    Returns
    -------
    plotly.graph_objects.Figure
        Three panels side by side.
    """
    summary = summary.assign(color=summary["contender"].map(colors).fillna("#000000"))
    mapped = summary[summary["D"].notna()]
    D_range = (float(mapped["D"].min()), float(mapped["D"].max())) if not mapped.empty else (1.0, 2.0)
    axes, notes = _panels([text for text, _ in PANELS])
    traces: list[dict] = []
    for panel, (_, value) in enumerate(PANELS):
        suffix = "" if panel == 0 else str(panel + 1)
        for _, row in summary[summary["D"].isna()].iterrows():
            traces += _exact_traces(row, D_range, panel, value, first=panel == 0)
        for key, rows in mapped.groupby("contender", sort=False):
            rows = rows.sort_values("D")
            traces.append(dict(type="scatter", x=rows["D"].to_numpy(), y=rows[_columns(value)[0]].to_numpy(),
                               error_y=_error_bars(rows, value), mode="lines+markers", name=rows["label"].iloc[0],
                               line=dict(color=rows["color"].iloc[0], width=2.5), legendgroup=str(key),
                               showlegend=panel == 0, xaxis=f"x{suffix}", yaxis=f"y{suffix}"))
        ticks = sorted(mapped["D"].unique())
        axes[f"xaxis{suffix}"].update(type="log", title=dict(text="D (random features)"),
                                      tickvals=[float(v) for v in ticks], ticktext=[f"{int(v):,}" for v in ticks])
        axes[f"yaxis{suffix}"].update(title=dict(text="accuracy" if value == "accuracy" else "seconds"),
                                      **(dict(tickformat=".0%") if value == "accuracy" else dict(type="log")))
    return figure(traces, dict(title=dict(text=title, **TITLE_AT_TOP), annotations=notes, height=SWEEP_HEIGHT,
                               legend=LEGEND_ABOVE,
                               margin=dict(t=150), **axes))


def _vline(x: float, text: str, color: str, axis: str) -> tuple[dict, dict]:
    shape = dict(type="line", x0=x, x1=x, xref=axis, y0=0, y1=1, yref="paper", line=dict(color=color, dash="dot"))
    note = dict(x=float(np.log10(x)), xref=axis, y=1.0, yref="paper", yanchor="top", xanchor="left",
                text=text, showarrow=False, font=dict(size=14, color=color))
    return shape, note


def time_vs_n_figure(times: pd.DataFrame, crossovers: dict[str, tuple[float | None, str]], n_memory: int,
                     D: int, *, height: int = SWEEP_HEIGHT, compact: bool = False) -> go.Figure:
    """Training and prediction seconds against training points n (log-log): measured points as solid lines with
    markers, the fitted power law beyond as dotted lines; the crossover (whether measured or extrapolated: the
    sentence says) and the memory limit as vertical lines.

    Parameters
    ----------
    times : pandas.DataFrame
        :func:`rkcore.studies.speed_accuracy.extrapolate` output (model, n, phase, seconds, source).
    crossovers : dict
        Phase -> (n or None, source) from :func:`rkcore.studies.speed_accuracy.crossover_n`.
    n_memory : int
        The largest n whose exact Gram matrix fits the memory budget.
    D : int
        RK's number of random features.
    height : int, default SWEEP_HEIGHT
        Figure height in px.
    compact : bool, default False
        One legend entry per model, right of the plots (the story's short chart), instead of four above them.

    Returns
    -------
    plotly.graph_objects.Figure
        Two panels: training, prediction.
    """
    # short titles (presenter type wraps); a wider gap beside a legend: the right panel's y title stays off the left
    axes, notes = _panels(["Training time", "Prediction time"], gap=0.16 if compact else 0.1)
    traces, shapes = [], []
    for panel, phase in enumerate(("train", "predict")):
        suffix = "" if panel == 0 else str(panel + 1)
        for model, (label, color) in MODEL_STYLE.items():
            label = label if model != "rk" else f"{label}, D = {D:,}"
            for source, dash in (("measured", "solid"), ("extrapolated", "dot")):
                part = times[(times["model"] == model) & (times["phase"] == phase)].sort_values("n")
                if source == "extrapolated":  # continue from the last measured point
                    part = pd.concat([part[part["source"] == "measured"].tail(1), part[part["source"] == source]])
                else:
                    part = part[part["source"] == source]
                traces.append(dict(type="scatter", x=part["n"].to_numpy(), y=part["seconds"].to_numpy(),
                                   mode="lines+markers" if source == "measured" else "lines",
                                   name=label if compact else f"{label} ({source})",
                                   legendgroup=model if compact else f"{model}{source}",
                                   line=dict(color=color, dash=dash, width=2.5),
                                   showlegend=panel == 0 and (not compact or source == "measured"),
                                   xaxis=f"x{suffix}", yaxis=f"y{suffix}"))
        n, source = crossovers.get(phase, (None, "none"))
        if n is not None:
            shape, note = _vline(n, f"crossover ≈ {n:,.0f}", "#D55E00", f"x{suffix}")
            shapes.append(shape)
            notes.append(note)
        shape, note = _vline(n_memory, "Gram exceeds memory", "#555555", f"x{suffix}")
        shapes.append(shape)
        notes.append(dict(note, xanchor="right", y=0.0, yanchor="bottom"))
        axes[f"xaxis{suffix}"].update(type="log", title=dict(text="training points n"))
        axes[f"yaxis{suffix}"].update(type="log", title=dict(text="seconds"))
    legend = dict(x=1.02, xanchor="left", y=1.0, yanchor="top") if compact else LEGEND_ABOVE
    return figure(traces, dict(title=dict(text="Time against n: exact kernel SVM vs linear model on RK features",
                                          **({} if compact else TITLE_AT_TOP)),
                               annotations=notes, shapes=shapes, height=int(height), legend=legend,
                               margin=dict(t=70 if compact else 150), **axes))
