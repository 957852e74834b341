"""Figures of the Itemsets page: what an itemset family S contains."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .style import FONT_SIZE, PALETTE, TEMPLATE, plotly_text, spans_decades


def family_counts_figure(counts: pd.DataFrame, title: str = "Itemsets in S by size") -> go.Figure:
    """Bar chart of |{V in S : |V| = k}| against k (columns ``size``, ``count``, ``count_text``
    of :func:`rkcore.family_views.family_counts`); the y axis is logarithmic when the counts span
    two decades or more, and each bar carries its exact count."""
    if "log10_count" in counts and not np.isfinite(counts["count"]).all():
        # counts beyond float range (all-subsets of d > 1030 features): plot their exponents instead
        fig = go.Figure(go.Bar(x=counts["size"], y=counts["log10_count"], text=counts["count_text"],
                               marker_color=PALETTE[0], name="itemsets",
                               hovertemplate="size %{x}: %{text} itemsets<extra></extra>"))
        fig.update_layout(template=TEMPLATE, title_text=plotly_text(title), height=430, showlegend=False, bargap=0.25,
                          xaxis_title="itemset size |V|", yaxis_title="log10 of the number of itemsets")
        return fig
    log_y = spans_decades(counts["count"], 2.0)
    # exact counts on the bars while they are short; SI prefixes (126k, 1.8M) beyond, so that
    # plotly does not shrink the labels to unreadable sizes. The hover and the CSV stay exact.
    compact = counts["count"].max() >= 1e4
    fig = go.Figure(go.Bar(x=counts["size"], y=counts["count"], text=counts["count_text"], textposition="outside",
                           texttemplate="%{y:.3~s}" if compact else "%{text}",
                           marker_color=PALETTE[0], name="itemsets", cliponaxis=False,
                           hovertemplate="size %{x}: %{text} itemsets<extra></extra>"))
    fig.update_layout(template=TEMPLATE, title_text=plotly_text(title), height=430, showlegend=False,
                      xaxis_title="itemset size |V|", yaxis_title="number of itemsets" + (" (log scale)" if log_y else ""),
                      bargap=0.25, uniformtext=dict(minsize=FONT_SIZE - 4, mode="show"))
    fig.update_xaxes(type="category" if len(counts) <= 30 else "linear", dtick=1 if len(counts) > 30 else None)
    if len(counts) <= 3:  # a lone bar would fill the whole plot width
        fig.update_traces(width=0.4)
    if log_y:
        fig.update_yaxes(type="log")
    return fig
