"""One look for every figure: a plotly template readable on a projector, and fixed colors.

Every figure builder in :mod:`rkcore.figures` builds its traces and layout as dicts and hands them to
:func:`figure`, which puts the rkcore template on, so fonts, margins and colors match across the dashboard. Colors
live in the registries (``Distribution.color``, ``MapEntry.color``), so "Rademacher" or "RK" has
the same color on every page.

Public names
------------
FONT_SIZE, TITLE_SIZE          base and title font sizes (px)
TEMPLATE                       the plotly template ("rkcore"), registered in plotly.io.templates
SEQUENTIAL, DIVERGING          colorscales for magnitudes and for signed differences
LEGEND_BELOW                   a horizontal legend under the plot, below the x-axis title
rgba(hex_color, alpha)         a translucent version of a color (bands)
plotly_text(text) -> str       text a user typed or a file carried (column, file names), shown literally
figure(data, layout) -> go.Figure   (traces as dicts, built without plotly's per-property validation)
check_canonical(fig)           raises unless the figure's JSON is what plotly's validation makes of it
spans_decades(values, decades=2) -> bool   (whether a log axis is the honest choice)
square_panel_share(fig) -> float | None    (the width share of a heatmap's square panel, if it has one)
"""
from __future__ import annotations

import html
import json
import os

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

FONT_SIZE = 17
TITLE_SIZE = 21
FONT_FAMILY = "Source Sans Pro, Helvetica, Arial, sans-serif"

# Okabe-Ito palette: distinguishable for the common forms of color blindness.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")


def _spelt_out(name: str) -> list:
    """A named colorscale as the [position, color] list plotly's validation makes of it (figure() skips
    validation, and plotly's own positions differ from plotly.colors.get_colorscale's in the last bit)."""
    return [list(step) for step in go.layout.Coloraxis(colorscale=name).colorscale]


SEQUENTIAL = _spelt_out("Viridis")
DIVERGING = _spelt_out("RdBu_r")  # red = positive, blue = negative, white = 0 (with zmid=0)

TEMPLATE = go.layout.Template(
    layout=go.Layout(
        font=dict(family=FONT_FAMILY, size=FONT_SIZE, color="#222"),
        # pad: in the PNG export the title touched the image's left edge
        title=dict(font=dict(size=TITLE_SIZE), x=0.0, xanchor="left", pad=dict(l=12)),
        colorway=list(PALETTE),
        paper_bgcolor="white",
        plot_bgcolor="white",
        margin=dict(l=70, r=30, t=70, b=60),
        xaxis=dict(showgrid=True, gridcolor="#e5e5e5", zeroline=False, linecolor="#444", ticks="outside",
                   title=dict(font=dict(size=FONT_SIZE + 1)), automargin=True),
        yaxis=dict(showgrid=True, gridcolor="#e5e5e5", zeroline=False, linecolor="#444", ticks="outside",
                   title=dict(font=dict(size=FONT_SIZE + 1)), automargin=True),
        legend=dict(font=dict(size=FONT_SIZE - 1), bgcolor="rgba(255,255,255,0.8)"),
        coloraxis=dict(colorbar=dict(thickness=18, tickfont=dict(size=FONT_SIZE - 2))),
        hoverlabel=dict(font=dict(size=FONT_SIZE - 1)),
    )
)
pio.templates["rkcore"] = TEMPLATE


def rgba(hex_color: str, alpha: float) -> str:
    """"#rrggbb" with an opacity, for translucent bands: rgba(r,g,b,alpha).

    Parameters
    ----------
    hex_color : str
        Colour as "#rrggbb".
    alpha : float
        Opacity from 0 to 1.

    Returns
    -------
    str
        The CSS colour "rgba(r,g,b,alpha)".
    """
    h = hex_color.lstrip("#")
    if len(h) != 6:
        raise ValueError(f"rgba needs a '#rrggbb' color, got {hex_color!r}.")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"


def plotly_text(text) -> str:
    """``text`` as plotly shows it literally. Plotly reads <b>, <br>, <sup> and <a href=...> in titles, axis
    titles, legends, ticks and annotations as markup (a column named '<a href="...">x</a>' would be a live
    link in a title); with < > & written as entities, which plotly decodes back, no tag is ever formed.
    The one escaping of user text (column and file names, typed itemsets) on its way into a figure.

    Parameters
    ----------
    text : object
        Text to show; converted with ``str``.

    Returns
    -------
    str
        The text with < > & escaped as HTML entities.
    """
    return html.escape(str(text), quote=False)


#: A horizontal legend under the plot: anchored to the bottom of the figure (container coordinates), so plotly
#: grows the bottom margin to hold it below the axis titles. A paper-coordinate y < 0 is a fraction of the
#: plot's height and, on a short plot, lands on the x-axis title (seen at 1280x720 on four pages).
LEGEND_BELOW = dict(orientation="h", yref="container", yanchor="bottom", y=0.0, x=0)


def figure(data=(), layout: dict | None = None) -> go.Figure:
    """A figure from trace dicts (``dict(type="scatter", ...)``) and a layout dict, built without plotly's
    per-property validation. Pages rebuild their figures on every rerun, and validating graph objects
    cost 5-20x the drawing (variance_figure: 150 ms validated, 10 ms not); the figure JSON is the same.
    Unvalidated, nested dicts are kept as written: write them in plotly's canonical form (``title=dict(
    text=...)`` inside an axis, not ``title_text``), which plotly.js reads. With RKCORE_VALIDATE_FIGURES set
    (the test suite sets it) every figure is checked against its validated form (:func:`check_canonical`),
    so a misspelt or raw property fails in CI rather than being dropped by the browser. The template
    applies unless the layout names one.

    Parameters
    ----------
    data : iterable of dict, default ()
        Trace dicts.
    layout : dict or None, optional
        Layout dict; the template is added unless it names one.

    Returns
    -------
    plotly.graph_objects.Figure
        The unvalidated figure.
    """
    fig = go.Figure(data=list(data), layout=dict({"template": TEMPLATE}, **(layout or {})), _validate=False)
    if os.environ.get(VALIDATE_FIGURES_ENV):
        check_canonical(fig)
    return fig


#: when set, :func:`figure` (and rkapp's chart) check every figure with :func:`check_canonical`
VALIDATE_FIGURES_ENV = "RKCORE_VALIDATE_FIGURES"


def check_canonical(fig: go.Figure) -> None:
    """Raise ValueError unless the figure's JSON is what plotly's validation makes of it: every property
    exists (validation raises on a misspelt one) and is written in canonical form (a raw ``title_text``
    inside an axis dict would reach plotly.js, which ignores it). A property set to None (null: plotly.js's
    default) counts as unset, as validation makes it, and so does a dict left empty.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        Figure to check.
    """
    shown = _without_nulls(json.loads(pio.to_json(fig, validate=False)))
    validated = _without_nulls(json.loads(pio.to_json(go.Figure(shown), validate=False)))
    if shown != validated:
        diff = [k for part in ("data", "layout") for k in _differing_paths(shown.get(part), validated.get(part), part)]
        raise ValueError("Figure not in plotly's canonical form at: " + ", ".join(diff[:8]))


def _without_nulls(value):
    if isinstance(value, dict):
        kept = {k: _without_nulls(v) for k, v in value.items() if v is not None}
        return {k: v for k, v in kept.items() if v != {}}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _differing_paths(a, b, path: str) -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [p for k in sorted(set(a) | set(b)) for p in _differing_paths(a.get(k), b.get(k), f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [p for i, (x, y) in enumerate(zip(a, b)) for p in _differing_paths(x, y, f"{path}[{i}]")]
    return [] if a == b else [path]


def spans_decades(values, decades: float = 2.0) -> bool:
    """True when the positive values span at least ``decades`` orders of magnitude.

    Parameters
    ----------
    values : array-like
        Values; non-positive and non-finite ones are ignored.
    decades : float, default 2.0
        Orders of magnitude required.

    Returns
    -------
    bool
        Whether the positive values span ``decades`` or more.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size < 2:
        return False
    return bool(np.log10(v.max()) - np.log10(v.min()) >= decades)


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_label(v: float) -> str:
    """2·10⁻⁶ (1·10ᵏ is written 10ᵏ); numbers from 0.01 to 9999 stay plain.

    Parameters
    ----------
    v : float
        Nonzero tick value.

    Returns
    -------
    str
        The label.
    """
    if 0.01 <= abs(v) < 1e4:
        return f"{v:g}"
    exp = int(np.floor(np.log10(abs(v)) + 1e-12))
    mant = v / 10.0**exp
    head = "" if np.isclose(mant, 1.0) else f"{mant:g}·"
    return f"{head}10{str(exp).translate(_SUPERSCRIPT)}"


def log_ticks(values) -> dict:
    """tickvals / ticktext for a log axis over ``values``: 1-2-5 steps when they span less than two
    decades (plotly would label every minor tick 2, 3, 4 ... there), powers of ten beyond.

    Parameters
    ----------
    values : array-like
        Values the axis shows; non-positive and non-finite ones are ignored.

    Returns
    -------
    dict
        ``tickvals`` and ``ticktext``, or empty when fewer than two ticks fit.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return {}
    lo, hi = np.floor(np.log10(v.min())), np.ceil(np.log10(v.max()))
    span = np.log10(v.max() / v.min())
    steps = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0) if span <= 1 else (1.0, 2.0, 5.0) if span <= 2 else (1.0,)
    ticks = [m * 10.0**k for k in np.arange(lo, hi + 1) for m in steps]
    ticks = [t for t in ticks if v.min() / 1.5 <= t <= v.max() * 1.5]
    return dict(tickvals=ticks, ticktext=[power_label(t) for t in ticks]) if len(ticks) >= 2 else {}


#: keys under which plotly keeps a font (a dict with ``size``): the global font, titles, ticks, legends,
#: colorbars, annotations, hover labels, bar labels
_FONT_KEYS = ("font", "tickfont", "textfont", "titlefont", "insidetextfont", "outsidetextfont")


def _enlarge_sizes(value, step: float):
    """``value`` (plotly JSON) with every font size grown by ``step`` px."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in _FONT_KEYS and isinstance(item, dict):
                item = dict(item)
                if isinstance(item.get("size"), (int, float)) and not isinstance(item["size"], bool):
                    item["size"] = item["size"] + step
            out[key] = _enlarge_sizes(item, step)
        return out
    if isinstance(value, list):
        return [_enlarge_sizes(v, step) for v in value]
    return value


def enlarged(fig: go.Figure, step: float) -> go.Figure:
    """A copy of ``fig`` with every font ``step`` px larger: the global font and every size set explicitly
    (the template's legend, colorbar and axis-title sizes, panel titles, bar labels). Growing only the global
    font left those at their fixed sizes, smaller than the ticks beside them (presenter mode). A size
    given as a list (one per point) is left alone.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        Figure to enlarge; it is not modified.
    step : float
        Pixels added to every font size.

    Returns
    -------
    plotly.graph_objects.Figure
        The enlarged copy.
    """
    spec = _enlarge_sizes(json.loads(pio.to_json(fig, validate=False)), step)
    layout = spec.setdefault("layout", {})
    template_font = (layout.get("template") or {}).get("layout", {}).get("font", {})
    if "size" not in layout.get("font", {}):  # the global font came from the template: grown there already
        layout.setdefault("font", {})["size"] = template_font.get("size", FONT_SIZE)
    return go.Figure(spec, _validate=False)


def square_panel_share(fig: go.Figure) -> float | None:
    """The share of the figure's width that each square heatmap panel's x-axis domain takes (a y-axis
    ``scaleanchor``-ed to its x-axis keeps the cells square), or None when the figure has no such panel. The
    app sizes a presenter-mode chart's width by it, so that the squares fill their domains and the colour bar
    beside the last one stays next to it.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        Figure to inspect.

    Returns
    -------
    float or None
        The narrowest such panel's domain width, from 0 to 1.
    """
    shares = []
    for trace in fig.data:
        if trace.type != "heatmap":
            continue
        x_name = "xaxis" + (trace.xaxis or "x")[1:]
        y_name = "yaxis" + (trace.yaxis or "y")[1:]
        x_axis, y_axis = fig.layout[x_name], fig.layout[y_name]
        if y_axis.scaleanchor and y_axis.scaleanchor == (trace.xaxis or "x"):
            domain = x_axis.domain or (0.0, 1.0)
            shares.append(float(domain[1]) - float(domain[0]))
    return min(shares) if shares else None
