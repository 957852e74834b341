"""A chart's text alternative: what a screen reader says in place of a plotly figure.

One short paragraph computed from the figure itself (its title, axis titles and traces), so it can never
disagree with the chart: per line or marker series its name, its number of points, its first and last
points and the range of its values; per heatmap its size and the range of its values. Pure: a figure in,
a sentence out (the dashboard puts it next to every chart, visually hidden; rkapp.layout.chart).
"""
from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

#: Series named one by one; more are counted ("and 7 more series").
MAX_SERIES = 8
#: Characters of the whole text at most (a screen reader reads it in one go).
MAX_CHARS = 900


def _text(value) -> str:
    if value is None:
        return ""
    text = getattr(value, "text", value)
    return "" if text is None else " ".join(str(text).replace("<br>", " ").split())


def _number(value) -> str:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return _text(value)
    if not math.isfinite(number):
        return str(number)
    return f"{number:.3g}"


def _finite(values) -> np.ndarray:
    array = np.asarray(values if values is not None else [], dtype=object).ravel()
    numbers = []
    for v in array:
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f):
            numbers.append(f)
    return np.asarray(numbers, dtype=float)


def _series(trace) -> str:
    name = _text(getattr(trace, "name", None)) or "series"
    kind = trace.type or "scatter"
    if kind in ("heatmap", "contour", "histogram2d"):
        z = _finite(trace.z)
        shape = np.shape(trace.z) if trace.z is not None else (0,)
        size = " x ".join(map(str, shape))
        span = f", values from {_number(z.min())} to {_number(z.max())}" if z.size else ""
        return f"{name}: a heatmap of {size} cells{span}"
    x, y = trace.x, trace.y
    if y is None:
        return f"{name}: {kind}"
    y_values = list(y)
    if not y_values:
        return f"{name}: no points"
    x_values = list(x) if x is not None else list(range(len(y_values)))
    finite = _finite(y_values)
    text = f"{name}: {len(y_values)} point{'s' if len(y_values) != 1 else ''}"
    if len(y_values) > 1 and len(x_values) == len(y_values):
        text += (f", from {_number(y_values[0])} at {_number(x_values[0])} to {_number(y_values[-1])} at "
                 f"{_number(x_values[-1])}")
    elif len(y_values) == 1:
        text += f", {_number(y_values[0])}"
    if finite.size > 2:
        text += f" (values from {_number(finite.min())} to {_number(finite.max())})"
    return text


def figure_alt_text(fig: go.Figure | dict) -> str:
    """The text alternative of a chart: its title, its axes and its series in numbers.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure or dict
        The chart (a dict is read as a figure's JSON).

    Returns
    -------
    str
        At most MAX_CHARS characters.
    """
    if isinstance(fig, dict):
        fig = go.Figure(fig, _validate=False)
    layout = fig.layout
    parts = [f"Chart: {_text(layout.title) or 'untitled'}."]
    axes = [(name, _text(getattr(layout, name).title)) for name in ("xaxis", "yaxis")
            if getattr(layout, name, None) is not None]
    axes_text = "; ".join(f"{name[0]} axis: {title}" for name, title in axes if title)
    if axes_text:
        parts.append(axes_text + ".")
    traces = [t for t in fig.data if getattr(t, "visible", True) not in (False, "legendonly")
              and (getattr(t, "name", None) or len(fig.data) == 1 or t.type in ("heatmap", "contour"))]
    shown = traces[:MAX_SERIES]
    if shown:
        parts.append("; ".join(_series(t) for t in shown) + ".")
    if len(traces) > MAX_SERIES:
        parts.append(f"And {len(traces) - MAX_SERIES} more series.")
    text = " ".join(parts)
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1] + "…"
