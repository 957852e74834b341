"""Series told apart without colour: no two series of a chart differ by colour alone.

About one man in twelve sees some colours alike (deuteranomaly, protanomaly), and a projector washes
colours out. The palette (Okabe-Ito, :data:`rkcore.figures.style.PALETTE`) is chosen for colour-vision
deficiencies, but ten maps or six distributions on one chart need more than colour: :func:`without_colour_alone`
gives every series of the legend whose line and marker look like another's a marker symbol of its own
(at most MAX_MARKERS_SHOWN markers drawn per line, so a long line is not buried). Series that already
differ (a dashed bound beside a solid measurement, another symbol) keep their look. Pure: a figure in, a
figure out.
"""
from __future__ import annotations

import plotly.graph_objects as go

#: Marker symbols handed out in this order (plotly names), all distinct in shape at 8 px.
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "cross", "triangle-down", "star", "hexagon",
           "pentagon", "triangle-left", "hourglass")
#: Markers drawn per line at most (plotly's marker.maxdisplayed).
MAX_MARKERS_SHOWN = 12


def series_traces(fig: go.Figure) -> list:
    """The traces that stand for a series in the legend: named scatter lines or markers, shown, not a band.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The chart.

    Returns
    -------
    list
        The traces, in drawing order.
    """
    return [t for t in fig.data
            if t.type in ("scatter", "scattergl") and t.name and t.showlegend is not False
            and t.visible is not False and not (t.fill and t.fill != "none") and (t.mode or "lines") != "text"]


def series_key(trace) -> str:
    """The series a trace draws: one series may be several traces (a panel each) sharing a legend group or name.

    Parameters
    ----------
    trace : plotly trace
        A scatter trace.

    Returns
    -------
    str
        Its legend group, else its name.
    """
    return trace.legendgroup or trace.name


def look(trace) -> tuple:
    """What tells a series apart without colour: its line's dash (if drawn), its marker symbol (if drawn).

    Parameters
    ----------
    trace : plotly trace
        A scatter trace.

    Returns
    -------
    tuple
        (dash or None, symbol or None).
    """
    mode = trace.mode or ("lines+markers" if trace.y is not None and len(trace.y) < 20 else "lines")
    dash = (trace.line.dash or "solid") if "lines" in mode else None
    symbol = (trace.marker.symbol or "circle") if "markers" in mode else None
    return dash, symbol if not isinstance(symbol, (list, tuple)) else tuple(symbol)


def without_colour_alone(fig: go.Figure, *, copy: bool = True) -> go.Figure:
    """A copy of ``fig`` in which no two series look alike but for their colour.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The chart; not modified unless ``copy`` is False.
    copy : bool, default=True
        False: restyle ``fig`` itself, for a caller that owns it (the app's ``chart``, which gets a new figure
        every rerun): a copy builds every trace object again, with or without plotly's validation, which was
        most of the CPU a chart cost the app's server (benchmarks/results/cpu_per_change.md).

    Returns
    -------
    plotly.graph_objects.Figure
        The copy, or ``fig`` restyled (the same figure when nothing had to change).
    """
    traces = series_traces(fig)
    looks: dict[str, tuple] = {}
    for trace in traces:
        looks.setdefault(series_key(trace), look(trace))
    seen: dict[str, tuple] = {}  # series key -> its look, for the series kept as drawn
    restyle: dict[str, str] = {}
    used = {symbol for _, symbol in looks.values() if symbol}
    free = [s for s in SYMBOLS if s not in used]
    for key, shown in looks.items():
        if shown in seen.values() and free:
            restyle[key] = free.pop(0)
        else:
            seen[key] = shown
    if not restyle:
        return fig
    if copy:
        fig = go.Figure(fig)
    for trace in series_traces(fig):
        symbol = restyle.get(series_key(trace))
        if symbol is None:
            continue
        mode = trace.mode or "lines"
        if "markers" not in mode:
            trace.mode = mode + "+markers"
        trace.marker.symbol = symbol
        if trace.marker.size is None:
            trace.marker.size = 8
        trace.marker.maxdisplayed = MAX_MARKERS_SHOWN
    return fig


def alike_series(fig: go.Figure) -> list[tuple[str, str]]:
    """Pairs of series that differ by colour alone (what :func:`without_colour_alone` leaves none of).

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        The chart.

    Returns
    -------
    list of (str, str)
        The names of such pairs.
    """
    looks: dict[str, tuple] = {}
    for trace in series_traces(fig):
        looks.setdefault(series_key(trace), look(trace))
    keys = list(looks)
    return [(a, b) for i, a in enumerate(keys) for b in keys[i + 1:] if looks[a] == looks[b]]
