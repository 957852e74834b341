"""Figures of the guided story (pages/0_Story.py): one matrix, error against D, the skeptic's chart (time against
n with the crossover), and the older classifier duel's bars.

Traces and layouts are plain dicts in plotly's canonical form, built once by
:func:`rkcore.figures.style.figure` (no per-property validation: the page redraws them on every rerun).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..maps.distributions import DISTRIBUTIONS
from .speed_accuracy import time_vs_n_figure
from .style import SEQUENTIAL, figure, log_ticks

#: subplot titles as make_subplots writes them (font size 16 is its default)
#: every story chart fits a 1280x720 screen whole under the step's controls and sentence
STORY_HEIGHT = 370
_PANEL_TITLE = dict(xanchor="center", xref="paper", y=1.0, yanchor="bottom", yref="paper", showarrow=False)


def _two_panels(titles, x_domains, *, over_squares: bool = False) -> tuple[dict, list[dict]]:
    """The axes and subplot-title annotations make_subplots(rows=1, cols=2, ...) lays out (it alone costs
    ~27 ms); ``x_domains`` are the two panels' [left, right], the titles sit centered above them."""
    axes = {"xaxis": dict(anchor="y", domain=x_domains[0]), "yaxis": dict(anchor="x", domain=[0.0, 1.0]),
            "xaxis2": dict(anchor="y2", domain=x_domains[1]), "yaxis2": dict(anchor="x2", domain=[0.0, 1.0])}
    notes = [dict(_PANEL_TITLE, text=text, x=sum(domain) / 2, font=dict(size=16))
             for text, domain in zip(titles, x_domains)]
    if over_squares:  # centred over each square (its axes' domain shrinks to it), clear of the y tick labels
        for note, suffix in zip(notes, ("", "2")):
            note.update(x=0.5, xref=f"x{suffix} domain", yref=f"y{suffix} domain")
    return axes, notes


def matrix_figure(K: np.ndarray, labels, title: str) -> go.Figure:
    """One Gram matrix (rows sorted by label), label boundaries as tick marks.

    Parameters
    ----------
    K : numpy.ndarray
        Gram matrix, rows and columns sorted by label.
    labels : array-like
        Label of each row, in the same order.
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The heatmap.
    """
    labels = np.asarray(labels)
    ticks = block_ticks(labels)
    lo, hi = (float(v) for v in np.percentile(K, (1, 99)))
    heatmap = dict(type="heatmap", z=K, colorscale=SEQUENTIAL, zmin=lo, zmax=hi,
                   colorbar=dict(title=dict(text="K(xᵢ, xⱼ)", side="top")),
                   hovertemplate="i=%{y}<br>j=%{x}<br>%{z:.3g}<extra></extra>")
    return figure([heatmap], dict(
        title=dict(text=title), height=STORY_HEIGHT,
        xaxis=dict(title=dict(text="point j (sorted by label)"), showgrid=False, constrain="domain",
                   constraintoward="right"),  # a wide figure: the square keeps to the colour bar's side
        yaxis=dict(title=dict(text="point i, by label"), autorange="reversed", showgrid=False, scaleanchor="x",
                   constrain="domain", **ticks)))


#: fewest rows between two tick labels of the story's heatmap, as a share of all rows: at 230 px a label
#: needs about 19 px in presenter type, so 1 / 12 of the side ("digit 4" and "digit 5" ran into each other)
MIN_TICK_SHARE = 1 / 12


def block_ticks(labels) -> dict:
    """Tick values and texts for a matrix sorted by label: one short label ("4", not "digit 4") at the middle
    of each block, leaving out a block whose middle lies closer than MIN_TICK_SHARE of the rows to the
    previous label's.

    Parameters
    ----------
    labels : array-like
        Label of each row, sorted.

    Returns
    -------
    dict
        ``tickvals`` and ``ticktext`` for a plotly axis.
    """
    labels = np.asarray(labels)
    edges = [0, *(np.flatnonzero(labels[1:] != labels[:-1]) + 1), len(labels)]
    values: list[float] = []
    texts: list[str] = []
    for start, end in zip(edges[:-1], edges[1:]):
        middle = (start + end - 1) / 2
        if values and middle - values[-1] < MIN_TICK_SHARE * len(labels):
            continue
        values.append(float(middle))
        texts.append(str(labels[start]))
    return dict(tickvals=values, ticktext=texts)


def pair_figure(K: np.ndarray, K_hat: np.ndarray, D: int) -> go.Figure:
    """Exact and approximate side by side on one color scale.

    Parameters
    ----------
    K : numpy.ndarray
        Exact Gram matrix.
    K_hat : numpy.ndarray
        Its random-feature estimate.
    D : int
        Number of random features of the estimate, shown in its panel title.

    Returns
    -------
    plotly.graph_objects.Figure
        Two heatmaps sharing one colour axis.
    """
    lo, hi = (float(v) for v in np.percentile(np.concatenate([K.ravel(), K_hat.ravel()]), (1, 99)))
    # horizontal_spacing=0.08: panels [0, 0.46] and [0.54, 1]
    axes, notes = _two_panels(("Exact K", f"RK estimate K̂, D = {D:,}"), ([0.0, 0.46], [0.54, 1.0]),
                              over_squares=True)
    traces = []
    for col, M in ((1, K), (2, K_hat)):
        suffix = "" if col == 1 else str(col)
        traces.append(dict(type="heatmap", z=M, coloraxis="coloraxis", hovertemplate="%{z:.3g}<extra></extra>",
                           xaxis=f"x{suffix}", yaxis=f"y{suffix}"))
        axes[f"xaxis{suffix}"].update(title=dict(text="point j"), showgrid=False, constrain="domain",
                                      constraintoward="right")  # a wide figure: the squares keep to the colour bar
        axes[f"yaxis{suffix}"].update(title=dict(text="point i"), autorange="reversed", showgrid=False,
                                      constrain="domain", scaleanchor=f"x{suffix}")
    return figure(traces, dict(
        annotations=notes, title=dict(text="Exact and approximate Gram matrices, one color scale"),
        coloraxis=dict(colorscale=SEQUENTIAL, cmin=lo, cmax=hi), height=STORY_HEIGHT, **axes))


def error_curve_figure(trials: pd.DataFrame, medians: pd.DataFrame, title: str) -> go.Figure:
    """Median relative error against D per distribution (log-log), every trial as a dot, and 1/√D.

    Parameters
    ----------
    trials : pandas.DataFrame
        One row per trial (columns distribution, D, rel_fro).
    medians : pandas.DataFrame
        Median per (distribution, D) (column median_rel_fro).
    title : str
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The log-log error chart.
    """
    traces = []
    # one grouping, not a boolean mask per distribution
    by_dist = dict(tuple(trials.groupby("distribution", sort=False)))
    for dist, m in medians.groupby("distribution", sort=False):
        dist = str(dist)  # pandas-stubs types group keys as any Scalar; here the column holds names
        entry = DISTRIBUTIONS[dist]
        t = by_dist.get(dist, trials.iloc[:0])
        traces.append(dict(type="scatter", x=t["D"].to_numpy(), y=t["rel_fro"].to_numpy(), mode="markers",
                           marker=dict(color=entry.color, size=7, opacity=0.5), name=f"{entry.label}: each trial",
                           showlegend=False))
        traces.append(dict(type="scatter", x=m["D"].to_numpy(), y=m["median_rel_fro"].to_numpy(),
                           mode="lines+markers", name=entry.label, line=dict(color=entry.color, width=3)))
    first = medians.sort_values("D").iloc[0]
    D = np.asarray(sorted(medians["D"].unique()), dtype=float)
    traces.append(dict(type="scatter", x=D, y=first.median_rel_fro * np.sqrt(D[0] / D), mode="lines", name="1/√D",
                       line=dict(color="#666", dash="dash")))
    return figure(traces, dict(
        title=dict(text=title), height=STORY_HEIGHT, legend=dict(x=0.98, y=0.98, xanchor="right", yanchor="top"),
        # every D of the grid is a tick (16 … 4096): powers of ten alone left only 100 and 1000
        xaxis=dict(type="log", title=dict(text="D (random features)"), tickvals=list(D),
                   ticktext=[f"{int(v):,}" for v in D]),
        yaxis=dict(type="log", title=dict(text="error ‖K̂ − K‖ / ‖K‖"),  # short: it fits a 370-px chart
                   **log_ticks(pd.concat([trials["rel_fro"], medians["median_rel_fro"]])))))


def duel_figure(summary: pd.DataFrame) -> go.Figure:
    """Test accuracy and training seconds of each method, side by side.

    Parameters
    ----------
    summary : pandas.DataFrame
        One row per method (columns label, accuracy_mean, train_seconds).

    Returns
    -------
    plotly.graph_objects.Figure
        Accuracy and training-time bar charts.
    """
    labels = summary["label"].tolist()
    accuracy, seconds = summary["accuracy_mean"].to_numpy(), summary["train_seconds"].to_numpy()
    # horizontal_spacing=0.15: panels [0, 0.425] and [0.575, 1]
    axes, notes = _two_panels(("Test accuracy", "Training time (s)"), ([0.0, 0.425], [0.575, 1.0]))
    traces = [
        dict(type="bar", x=labels, y=accuracy, text=[f"{a:.1%}" for a in accuracy], textposition="inside",
             insidetextanchor="end", textfont=dict(color="white"),
             marker=dict(color="#0072B2"), showlegend=False, xaxis="x", yaxis="y"),
        dict(type="bar", x=labels, y=seconds, text=[f"{s:.2f} s" for s in seconds], textposition="inside",
             insidetextanchor="end",
             marker=dict(color="#E69F00"), showlegend=False, xaxis="x2", yaxis="y2"),
    ]
    axes["yaxis"].update(title=dict(text="accuracy"), tickformat=".0%", range=[0, 1])
    axes["yaxis2"].update(title=dict(text="seconds"))
    return figure(traces, dict(
        annotations=notes, title=dict(text="Linear model on RK features vs kernel SVM (measured)"), height=STORY_HEIGHT,
        **axes))


def speed_figure(times: pd.DataFrame, crossovers: dict, n_memory: int, D: int) -> go.Figure:
    """Step 5: training and prediction time against n of the exact kernel SVM and the linear model on RK features,
    measured then extrapolated, the crossover and the memory limit marked
    (:func:`rkcore.figures.speed_accuracy.time_vs_n_figure` at the story's height, legend beside the plots).

    Parameters
    ----------
    times : pandas.DataFrame
        Measured and extrapolated times (model, n, phase, seconds, source).
    crossovers : dict
        Phase -> (n or None, source).
    n_memory : int
        The largest n whose exact Gram matrix fits in memory.
    D : int
        RK's number of random features.

    Returns
    -------
    plotly.graph_objects.Figure
        Two panels.
    """
    return time_vs_n_figure(times, crossovers, n_memory, D, height=STORY_HEIGHT, compact=True)


#: The figure builder of each kind of story step (the ``kind`` of :class:`rkcore.teaching.story.StoryStep`).
STEP_BUILDERS: dict[str, Callable[..., go.Figure]] = {"matrix": matrix_figure, "pair": pair_figure, "curve": error_curve_figure, "duel": duel_figure,
                                                      "speed": speed_figure}
