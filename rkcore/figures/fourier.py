"""Figures of the i.i.d. / orthogonal / structured random Fourier comparison (:mod:`rkcore.studies.fourier_study`)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..registry import get_map
from .style import figure, log_ticks, plotly_text

FOURIER_METRICS = {"mse": "mean squared error of K̂", "variance": "variance of K̂ (mean over pairs)",
                   "bias2": "squared bias of K̂ (mean over pairs)"}


def fourier_mse_figure(study: pd.DataFrame, metric: str = "mse", *, title: str | None = None) -> go.Figure:
    """``metric`` of the Gram estimate vs D per map, log-log, each map in its registry colour.

    Parameters
    ----------
    study : pandas.DataFrame
        Fourier study output (columns map, D, n_trials and the metric).
    metric : str, default "mse"
        Metric to draw, a key of ``FOURIER_METRICS``.
    title : str or None, optional
        Figure title; None gives a default naming the metric.

    Returns
    -------
    plotly.graph_objects.Figure
        The log-log chart.
    """
    if metric not in FOURIER_METRICS:
        raise ValueError(f"Unknown metric {metric!r}; allowed: {', '.join(FOURIER_METRICS)}.")
    if study.empty:
        raise ValueError("No study rows to draw.")
    traces = []
    positive = study[metric].to_numpy()
    positive = positive[positive > 0]
    by_map = dict(tuple(study.sort_values("D", kind="stable").groupby("map", sort=False)))
    for key in dict.fromkeys(study["map"]):  # the study's order (the registry's)
        entry, rows = get_map(key), by_map[key]
        y = rows[metric].to_numpy(dtype=float)
        traces.append(dict(type="scatter", x=rows["D"].to_numpy(), y=np.where(y > 0, y, np.nan), mode="lines+markers",
                           name=entry.short_label, line=dict(color=entry.color, width=2.5,
                                                             dash="dot" if not entry.unbiased else "solid")))
    D = np.sort(study["D"].unique())
    n_trials = int(study["n_trials"].iloc[0])
    return figure(traces, dict(
        height=480, legend=dict(x=0.99, xanchor="right", y=0.99),
        title=dict(text=plotly_text(title or f"Gaussian kernel: {FOURIER_METRICS[metric]} vs D ({n_trials} maps each)")),
        xaxis=dict(type="log", title=dict(text="D (features, log scale)"), tickvals=D.tolist()),
        yaxis=dict(type="log", title=dict(text=FOURIER_METRICS[metric]),
                   **(log_ticks(positive) if positive.size else {}))))
