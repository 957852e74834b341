"""Figure of a class's question (issue 39, "predict, then reveal"): how many students chose each answer.

The trace and layout are plain dicts in plotly's canonical form, built by :func:`rkcore.figures.style.figure`
(the live tally on the projector is redrawn every second).
"""
from __future__ import annotations

import plotly.graph_objects as go

from .style import PALETTE, figure, plotly_text

#: a choice's label on the axis is cut to this many characters (the full text is in the hover and the question)
AXIS_LABEL_CHARS = 40


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= AXIS_LABEL_CHARS else text[:AXIS_LABEL_CHARS - 1] + "…"


def tally_figure(choices, counts, question: str = "Answers") -> go.Figure:
    """Horizontal bar chart of the number of students who chose each answer, with the count on each bar
    and "k answered" in the title.

    Parameters
    ----------
    choices : sequence of str
        The question's choices, in order (the first on top).
    counts : sequence of int
        How many students chose each choice (as long as ``choices``).
    question : str, default "Answers"
        The question, the figure's title (shown literally).

    Returns
    -------
    plotly.graph_objects.Figure
        The bar chart.

    Raises
    ------
    ValueError
        When ``counts`` is not one non-negative whole number per choice.

    Examples
    --------
    >>> fig = tally_figure(["uniform", "Rademacher"], [3, 5], "Which weights give the lower error?")
    >>> list(fig.data[0].x), fig.layout.xaxis.title.text
    ([3, 5], 'students who chose it')
    """
    choices, counts = [str(c) for c in choices], list(counts)
    if len(counts) != len(choices) or any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in counts):
        raise ValueError("A tally needs one count (a whole number, 0 or more) per choice.")
    answered = sum(counts)
    labels = [f"{number}. {plotly_text(_short(choice))}" for number, choice in enumerate(choices, start=1)]
    bar = dict(type="bar", orientation="h", x=counts, y=labels, text=[str(c) for c in counts],
               textposition="outside", cliponaxis=False, marker=dict(color=PALETTE[0]), name="answers",
               customdata=[plotly_text(choice) for choice in choices],
               hovertemplate="%{customdata}: %{x} students<extra></extra>")
    title = f"{plotly_text(question)} ({answered} answered)"
    return figure([bar], dict(
        title=dict(text=title), height=140 + 56 * len(choices), showlegend=False, bargap=0.3,
        margin=dict(l=20, r=40, t=90, b=60),
        xaxis=dict(title=dict(text="students who chose it"), rangemode="tozero", **({"dtick": 1} if answered <= 10 else {}),
                   range=[0, max(max(counts, default=0), 1) * 1.15]),
        yaxis=dict(title=dict(text="answer"), autorange="reversed", automargin=True, type="category")))
