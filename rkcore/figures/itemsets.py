"""Figures of the Itemsets page: what an itemset family S contains.

The trace and layout are plain dicts in plotly's canonical form, built once by
:func:`rkcore.figures.style.figure` (no per-property validation: the page redraws them on every rerun).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .style import FONT_SIZE, PALETTE, figure, plotly_text, spans_decades


def family_counts_figure(counts: pd.DataFrame, title: str = "Itemsets in S by size") -> go.Figure:
    """Bar chart of |{V in S : |V| = k}| against k (columns ``size``, ``count``, ``count_text``
    of :func:`rkcore.studies.family_views.family_counts`); the y axis is logarithmic when the counts span
    two decades or more, and each bar carries its exact count.

    Parameters
    ----------
    counts : pandas.DataFrame
        Itemset counts per size (columns size, count, count_text).
    title : str, default "Itemsets in S by size"
        Figure title.

    Returns
    -------
    plotly.graph_objects.Figure
        The bar chart.
    """
    sizes, text = counts["size"].to_numpy(), counts["count_text"].tolist()
    if "log10_count" in counts and not np.isfinite(counts["count"]).all():
        # counts beyond float range (all-subsets of d > 1030 features): plot their exponents instead
        bar: dict[str, Any] = dict(type="bar", x=sizes, y=counts["log10_count"].to_numpy(), text=text,
                   marker=dict(color=PALETTE[0]), name="itemsets",
                   hovertemplate="size %{x}: %{text} itemsets<extra></extra>")
        return figure([bar], dict(
            title=dict(text=plotly_text(title)), height=430, showlegend=False, bargap=0.25,
            xaxis=dict(title=dict(text="itemset size |V|")),
            yaxis=dict(title=dict(text="log10 of the number of itemsets"))))
    log_y = spans_decades(counts["count"], 2.0)
    # exact counts on the bars while they are short; SI prefixes (126k, 1.8M) beyond, so that
    # plotly does not shrink the labels to unreadable sizes. The hover and the CSV stay exact.
    compact = counts["count"].max() >= 1e4
    bar = dict(type="bar", x=sizes, y=counts["count"].to_numpy(), text=text, textposition="outside",
               texttemplate="%{y:.3~s}" if compact else "%{text}",
               marker=dict(color=PALETTE[0]), name="itemsets", cliponaxis=False,
               hovertemplate="size %{x}: %{text} itemsets<extra></extra>")
    if len(counts) <= 3:  # a lone bar would fill the whole plot width
        bar["width"] = 0.4
    xaxis: dict[str, Any] = dict(title=dict(text="itemset size |V|"), type="category" if len(counts) <= 30 else "linear")
    if len(counts) > 30:
        xaxis["dtick"] = 1
    yaxis: dict[str, Any] = dict(title=dict(text="number of itemsets" + (" (log scale)" if log_y else "")))
    if log_y:
        yaxis["type"] = "log"
    return figure([bar], dict(
        title=dict(text=plotly_text(title)), height=430, showlegend=False, xaxis=xaxis, yaxis=yaxis,
        bargap=0.25, uniformtext=dict(minsize=FONT_SIZE - 4, mode="show")))
