"""Figure of the regression task of the accuracy study (:mod:`rkcore.studies.regression_study`)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..registry import MAPS
from .style import PALETTE, figure, plotly_text

EXACT_COLORS = {"kernel_ridge": "#000000", "fm": "#CC79A7"}


def regression_figure(df: pd.DataFrame) -> go.Figure:
    """Mean test RMSE vs D per learner (the exact learners, which have no D, as horizontal lines), and the
    RMSE of predicting the training mean (dotted).

    Parameters
    ----------
    df : pandas.DataFrame
        Regression results (columns method, label, D, rmse).

    Returns
    -------
    plotly.graph_objects.Figure
        The RMSE chart.
    """
    if df.empty:
        raise ValueError("No regression results to draw.")
    D = np.sort(df["D"].dropna().unique())
    span = [D.min(), D.max()] if D.size else [0, 1]
    traces = []
    for i, (key, rows) in enumerate(df.groupby("method", sort=False)):
        key = str(key)  # pandas-stubs types group keys as any Scalar; here the column holds names
        color = MAPS[key].color if key in MAPS else EXACT_COLORS.get(key, PALETTE[i % len(PALETTE)])
        label = rows["label"].iloc[0]
        if rows["D"].isna().all():
            traces.append(dict(type="scatter", x=span, y=[rows["rmse"].mean()] * 2, mode="lines", name=label,
                               line=dict(color=color, dash="dash", width=2)))
            continue
        means = rows.groupby("D")["rmse"].agg(["mean", "std"]).reset_index()
        traces.append(dict(type="scatter", x=means["D"], y=means["mean"], mode="lines+markers", name=label,
                           line=dict(color=color, width=2.5),
                           error_y=dict(type="data", array=means["std"].fillna(0).to_numpy(), visible=True)))
    baseline = df.attrs.get("split", {}).get("mean_rmse")
    if baseline:
        traces.append(dict(type="scatter", x=span, y=[baseline] * 2, mode="lines", name="predict the training mean",
                           line=dict(color="#999999", dash="dot", width=2)))
    return figure(traces, dict(height=460, title=dict(text=plotly_text("Regression: test RMSE vs D")),
                               xaxis=dict(title=dict(text="D (random features)"), tickvals=D.tolist()),
                               yaxis=dict(title=dict(text="test RMSE (lower is better)"))))
