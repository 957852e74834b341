"""Figures of the guided story (pages/0_Story.py): one matrix, error against D, a classifier duel."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..distributions import DISTRIBUTIONS
from .style import SEQUENTIAL, TEMPLATE, log_ticks


def matrix_figure(K: np.ndarray, labels, title: str) -> go.Figure:
    """One Gram matrix (rows sorted by label), label boundaries as tick marks."""
    labels = np.asarray(labels)
    starts = [0, *np.flatnonzero(labels[1:] != labels[:-1]) + 1]
    lo, hi = (float(v) for v in np.percentile(K, (1, 99)))
    fig = go.Figure(go.Heatmap(z=K, colorscale=SEQUENTIAL, zmin=lo, zmax=hi,
                               colorbar=dict(title=dict(text="K(xᵢ, xⱼ)", side="top")),
                               hovertemplate="i=%{y}<br>j=%{x}<br>%{z:.3g}<extra></extra>"))
    ticks = dict(tickvals=starts, ticktext=[f"digit {labels[s]}" if isinstance(labels[s], (int, np.integer))
                                             else str(labels[s]) for s in starts])
    fig.update_layout(template=TEMPLATE, title_text=title, height=430)
    fig.update_xaxes(title_text="point j (sorted by label)", showgrid=False, constrain="domain")
    fig.update_yaxes(title_text="point i", autorange="reversed", showgrid=False, scaleanchor="x",
                     constrain="domain", **ticks)
    return fig


def pair_figure(K: np.ndarray, K_hat: np.ndarray, D: int) -> go.Figure:
    """Exact and approximate side by side on one color scale."""
    lo, hi = (float(v) for v in np.percentile(np.concatenate([K.ravel(), K_hat.ravel()]), (1, 99)))
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Exact K", f"RK estimate K̂, D = {D:,}"),
                        horizontal_spacing=0.08)
    for col, M in ((1, K), (2, K_hat)):
        fig.add_trace(go.Heatmap(z=M, coloraxis="coloraxis", hovertemplate="%{z:.3g}<extra></extra>"), 1, col)
        fig.update_xaxes(title_text="point j", showgrid=False, constrain="domain", row=1, col=col)
        fig.update_yaxes(title_text="point i", autorange="reversed", showgrid=False, constrain="domain",
                         scaleanchor=f"x{'' if col == 1 else col}", row=1, col=col)
    fig.update_layout(template=TEMPLATE, title_text="Exact and approximate Gram matrices, one color scale",
                      coloraxis=dict(colorscale=SEQUENTIAL, cmin=lo, cmax=hi), height=430)
    return fig


def error_curve_figure(trials: pd.DataFrame, medians: pd.DataFrame, title: str) -> go.Figure:
    """Median relative error against D per distribution (log-log), every trial as a dot, and 1/√D."""
    fig = go.Figure()
    for dist, m in medians.groupby("distribution", sort=False):
        entry = DISTRIBUTIONS[dist]
        t = trials[trials["distribution"] == dist]
        fig.add_trace(go.Scatter(x=t["D"], y=t["rel_fro"], mode="markers", marker=dict(color=entry.color, size=7,
                                 opacity=0.5), name=f"{entry.label}: each trial", showlegend=False))
        fig.add_trace(go.Scatter(x=m["D"], y=m["median_rel_fro"], mode="lines+markers", name=entry.label,
                                 line=dict(color=entry.color, width=3)))
    first = medians.sort_values("D").iloc[0]
    D = np.asarray(sorted(medians["D"].unique()), dtype=float)
    fig.add_trace(go.Scatter(x=D, y=first.median_rel_fro * np.sqrt(D[0] / D), mode="lines", name="1/√D",
                             line=dict(color="#666", dash="dash")))
    fig.update_layout(template=TEMPLATE, title_text=title, height=420,
                      legend=dict(x=0.98, y=0.98, xanchor="right", yanchor="top"))
    fig.update_xaxes(type="log", title_text="D (random features)", **log_ticks(D))
    fig.update_yaxes(type="log", title_text="relative error ‖K̂ − K‖ / ‖K‖ (Frobenius)",
                     **log_ticks(pd.concat([trials["rel_fro"], medians["median_rel_fro"]])))
    return fig


def duel_figure(summary: pd.DataFrame) -> go.Figure:
    """Test accuracy and training seconds of each method, side by side."""
    labels = summary["label"].tolist()
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Test accuracy", "Training time (s)"),
                        horizontal_spacing=0.15)
    fig.add_trace(go.Bar(x=labels, y=summary["accuracy_mean"], text=[f"{a:.1%}" for a in summary["accuracy_mean"]],
                         textposition="auto", marker_color="#0072B2", showlegend=False), 1, 1)
    fig.add_trace(go.Bar(x=labels, y=summary["train_seconds"], text=[f"{s:.2f} s" for s in summary["train_seconds"]],
                         textposition="auto", marker_color="#E69F00", showlegend=False), 1, 2)
    fig.update_yaxes(title_text="accuracy", tickformat=".0%", range=[0, 1], row=1, col=1)
    fig.update_yaxes(title_text="seconds", row=1, col=2)
    fig.update_layout(template=TEMPLATE, title_text="Linear model on RK features vs kernel SVM (measured)",
                      height=420)
    return fig
