"""Figures of the Gram matrices page: exact vs approximate heatmaps, their difference, a scatter.

Pure functions of arrays / tidy DataFrames (from :mod:`rkcore.studies.gram`). The heatmaps draw the
matrices they are given: the engine averages matrices larger than
:data:`rkcore.base.limits.HEATMAP_SIDE` cells per side over b x b blocks (:func:`rkcore.studies.gram.block_average`)
and passes ``block=b`` and the number of points ``n``, so the title says so and the axes stay
in units of the data point index i, j (block centers when averaged).

Traces and layouts are plain dicts in plotly's canonical form, built once by
:func:`rkcore.figures.style.figure` (no per-property validation: the page redraws them on every rerun).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .style import DIVERGING, FONT_SIZE, PALETTE, SEQUENTIAL, figure, plotly_text
from ..teaching.claims import entries_sentence, nystroem_sentence

EXACT_LABEL = "Exact K"
APPROX_LABEL = "Approximate K̂ = Z Zᵀ"


#: the Gram views fit under the page title and the view selector at 1280x720, x-axis title included
GRAM_HEIGHT = 480


def _axis_coords(n: int, b: int) -> np.ndarray:
    """Centers of the b-blocks along a side of length n, in point-index units."""
    starts = np.arange(0, n, b)
    ends = np.minimum(starts + b, n)
    return (starts + ends - 1) / 2.0


def _ordinal(p: float) -> str:
    text = f"{p:g}"
    if not text.isdigit():
        return text + "th"
    n = int(text)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _block_note(b: int) -> str:
    return "" if b == 1 else f" (averaged over {b}×{b} blocks)"


def gram_title(n: int, block: int, clip_percentiles=None) -> str:
    """"Gram matrices, n = 200 (2×2 block averages; colors: 1st–99th percentile)": one parenthesis
    holding every note (two in a row read as a stutter).

    Parameters
    ----------
    n : int
        Number of points.
    block : int
        Block size of the averages; 1 for none.
    clip_percentiles : tuple of float or None, optional
        Percentiles of the colour range, if clipped.

    Returns
    -------
    str
        The title.
    """
    notes = [f"{block}×{block} block averages"] if block != 1 else []
    if clip_percentiles is not None:
        # short: the whole title fits one line over the presenter-mode pair at 1280x720 (a second line took
        # 31 px from the squares)
        notes.append(f"colors: {_ordinal(clip_percentiles[0])}–{_ordinal(clip_percentiles[1])} percentile")
    return f"Gram matrices, n = {n}" + (f" ({'; '.join(notes)})" if notes else "")


def _points(K: np.ndarray, block: int, n: int | None) -> int:
    if n is None:
        if block != 1:
            raise ValueError("Averaged matrices (block > 1) need n, the number of points they stand for.")
        return K.shape[0]
    return int(n)


#: Heatmap cells travel to the browser as float32 when every value fits its normal range: a relative rounding of
#: at most 2**-24 (7 significant digits), finer than anything the chart shows (the hover 4 digits, the difference's
#: 3, a colour scale of 256 steps). It halves the Gram page's chart (2 x 250² cells at most) and with it the
#: server's JSON, protobuf and websocket work per rerun (benchmarks/results/cpu_per_change.md). Values beyond
#: float32's range (tiny or huge kernel values) keep float64: the chart never shows an inf or a 0 they are not.
CELL_DTYPE = np.float32


def shown_cells(Z: np.ndarray) -> np.ndarray:
    """The heatmap cells as sent: float32 when every finite nonzero value is within its normal range, else float64.

    Parameters
    ----------
    Z : numpy.ndarray
        The cells (float64).

    Returns
    -------
    numpy.ndarray
        ``Z`` as float32 (relative rounding at most 2**-24), or ``Z`` itself.
    """
    info = np.finfo(CELL_DTYPE)
    magnitudes = np.abs(Z[np.isfinite(Z) & (Z != 0)])
    if magnitudes.size and (magnitudes.max() > info.max or magnitudes.min() < info.tiny):
        return Z
    return Z.astype(CELL_DTYPE)


def gram_heatmaps(K: np.ndarray, K_hat: np.ndarray, *, block: int = 1, n: int | None = None,
                  titles: tuple[str, ...] = (EXACT_LABEL, APPROX_LABEL),
                  clip_percentiles: tuple[float, float] | None = (1.0, 99.0)) -> go.Figure:
    """The exact and approximate Gram matrices side by side on ONE shared color scale.

    ``K``, ``K_hat`` are drawn as given; when they are b x b block averages of n x n matrices
    (:func:`rkcore.studies.gram.block_average`), pass ``block=b`` and ``n``.

    The color range is taken over both (drawn) matrices, so equal colors mean equal values
    on both sides. With ``clip_percentiles`` it spans those percentiles of the entries:
    the diagonal K(x, x) usually dwarfs the off-diagonal entries, and a full range would
    paint everything but the diagonal one color (values beyond the range saturate).
    The y axis runs downward (matrix orientation).

    Parameters
    ----------
    K : numpy.ndarray
        Exact Gram matrix (or its block averages).
    K_hat : numpy.ndarray
        Approximate Gram matrix, same shape.
    block : int, default 1
        Block size of the averages.
    n : int or None, optional
        Number of points before block averaging.
    titles : tuple of str
        Panel titles, exact then approximate.
    clip_percentiles : tuple of float or None, default (1.0, 99.0)
        Percentiles spanned by the colour range; None for the full range.

    Returns
    -------
    plotly.graph_objects.Figure
        Two heatmaps on one colour axis.
    """
    K_small, Kh_small, b = np.asarray(K, dtype=np.float64), np.asarray(K_hat, dtype=np.float64), int(block)
    n = _points(K_small, b, n)
    coords = _axis_coords(n, b)
    both = np.concatenate([K_small.ravel(), Kh_small.ravel()])
    if clip_percentiles is None:
        zmin, zmax = float(both.min()), float(both.max())
    else:
        zmin, zmax = (float(v) for v in np.percentile(both, clip_percentiles))
        if zmax <= zmin:  # (nearly) constant matrices: fall back to the full range
            zmin, zmax = float(both.min()), float(both.max())
    clipped = clip_percentiles is not None and (zmin > both.min() or zmax < both.max())
    titles = tuple(plotly_text(t) for t in titles)  # a caller's text, shown literally
    traces, axes, panel_titles = [], {}, []
    # two panels laid out here as make_subplots(1, 2, horizontal_spacing=0.1) would (it alone costs ~27 ms)
    for col, (Z, name), domain in zip((1, 2), ((K_small, titles[0]), (Kh_small, titles[1])), ([0.0, 0.45], [0.55, 1.0])):
        suffix = "" if col == 1 else str(col)
        traces.append(dict(type="heatmap", z=shown_cells(Z), x=coords, y=coords, coloraxis="coloraxis", name=name,
                           hovertemplate="i=%{y}<br>j=%{x}<br>value=%{z:.4g}<extra>" + name + "</extra>",
                           xaxis=f"x{suffix}", yaxis=f"y{suffix}"))
        axes[f"xaxis{suffix}"] = dict(anchor=f"y{suffix}", domain=domain, title=dict(text="point j"),
                                      constrain="domain", constraintoward="right", showgrid=False)
        axes[f"yaxis{suffix}"] = dict(anchor=f"x{suffix}", domain=[0.0, 1.0], title=dict(text="point i"),
                                      autorange="reversed", constrain="domain", scaleanchor=f"x{suffix}",
                                      showgrid=False)
        # centred over the square (its axes' domain, which shrinks to the square), not over the panel's share
        # of the width: there the title ran into the y tick labels beside the square
        panel_titles.append(dict(text=name, x=0.5, xanchor="center", xref=f"x{suffix} domain", y=1.0,
                                 yanchor="bottom", yref=f"y{suffix} domain", showarrow=False,
                                 font=dict(size=FONT_SIZE + 1)))
    return figure(traces, dict(
        title=dict(text=gram_title(n, b, clip_percentiles if clipped else None)), annotations=panel_titles,
        coloraxis=dict(colorscale=SEQUENTIAL, cmin=zmin, cmax=zmax,
                       colorbar=dict(title=dict(text="K(xᵢ, xⱼ)", side="top"), exponentformat="e")),
        height=GRAM_HEIGHT, **axes))


def gram_difference(K: np.ndarray, K_hat: np.ndarray, *, block: int = 1, n: int | None = None) -> go.Figure:
    """The error K̂ - K on a diverging color scale centered at 0 (white = exact); ``block`` and ``n``
    as in :func:`gram_heatmaps` (the difference of block averages is the block average of K̂ - K).

    Parameters
    ----------
    K : numpy.ndarray
        Exact Gram matrix (or its block averages).
    K_hat : numpy.ndarray
        Approximate Gram matrix, same shape.
    block : int, default 1
        Block size of the averages.
    n : int or None, optional
        Number of points before block averaging.

    Returns
    -------
    plotly.graph_objects.Figure
        The difference heatmap.
    """
    E_small, b = np.asarray(K_hat, dtype=np.float64) - np.asarray(K, dtype=np.float64), int(block)
    coords = _axis_coords(_points(E_small, b, n), b)
    bound = float(np.abs(E_small).max()) or 1.0
    heatmap = dict(type="heatmap", z=shown_cells(E_small), x=coords, y=coords, colorscale=DIVERGING, zmid=0.0,
                   zmin=-bound, zmax=bound, colorbar=dict(title=dict(text="K̂ − K", side="top"), exponentformat="e"),
                   name="K̂ − K", hovertemplate="i=%{y}<br>j=%{x}<br>K̂−K=%{z:.3g}<extra></extra>")
    return figure([heatmap], dict(
        title=dict(text=f"Difference K̂ − K{_block_note(b)}"), height=GRAM_HEIGHT,
        xaxis=dict(title=dict(text="point j"), showgrid=False, constrain="domain", constraintoward="right"),
        yaxis=dict(title=dict(text="point i"), autorange="reversed", showgrid=False, scaleanchor="x",
                   constrain="domain")))


def gram_scatter(pairs: pd.DataFrame, *, n_total: int | None = None) -> go.Figure:
    """Approximate against exact entries (columns ``exact``, ``approx`` of :func:`rkcore.studies.gram.gram_pairs`)
    with the line y = x: points on the line are estimated exactly.

    Parameters
    ----------
    pairs : pandas.DataFrame
        Entries (columns exact, approx).
    n_total : int or None, optional
        Number of entries before sampling, shown in the title.

    Returns
    -------
    plotly.graph_objects.Figure
        The scatter chart.
    """
    exact = pairs["exact"].to_numpy()
    approx = pairs["approx"].to_numpy()
    lo = float(min(exact.min(), approx.min()))
    hi = float(max(exact.max(), approx.max()))
    pad = 0.03 * (hi - lo or 1.0)
    span = [lo - pad, hi + pad]
    traces = [
        dict(type="scattergl", x=exact, y=approx, mode="markers", name="entries (i ≤ j)",
             marker=dict(size=5, color=PALETTE[0], opacity=0.45),
             hovertemplate="K=%{x:.4g}<br>K̂=%{y:.4g}<extra></extra>"),
        dict(type="scatter", x=list(span), y=list(span), mode="lines", name="y = x (exact)",
             line=dict(color=PALETTE[3], width=2, dash="dash")),
    ]
    shown = f"{len(pairs):,}" + (f" of {n_total:,}" if n_total and n_total > len(pairs) else "")
    # same range on both axes (so y = x is the diagonal); no scaleanchor, which squeezes the
    # plot and lets the y title run into the tick labels
    return figure(traces, dict(
        title=dict(text=f"Approximate vs exact entries ({shown} entries)"), height=GRAM_HEIGHT,
        legend=dict(x=0.02, y=0.98, xanchor="left", yanchor="top"),
        xaxis=dict(title=dict(text="exact K(xᵢ, xⱼ)"), range=list(span), exponentformat="e"),
        yaxis=dict(title=dict(text="approximate K̂(xᵢ, xⱼ)", standoff=12), range=list(span),
                   exponentformat="e")))


def gram_note(stats: pd.DataFrame, *, D: int, map_label: str, distribution_label: str | None = None,
              pairs: pd.DataFrame | None = None, n: int | None = None, unbiased: bool = True,
              nystroem: bool = False) -> str:
    """The Gram page's "what to notice", from the error table it shows (``metric``/``value`` rows of
    :func:`rkcore.studies.gram.gram_error_stats`) and the entries the scatter draws (``pairs``: columns exact,
    approx): every number in the sentence is one on the screen; comparisons come from
    :mod:`rkcore.teaching.claims` (the side of y = x by a stated share, Nyström exact at D ≥ n); what the
    theory predicts is stated as a prediction ("if ... falls like 1/√D"), not as a measurement. The first
    sentence is the short one (the screen shows it, the rest is behind "More").

    Parameters
    ----------
    stats : pandas.DataFrame
        Error table (columns metric, value).
    D : int
        Number of random features.
    map_label : str
        Name of the map.
    distribution_label : str or None, optional
        Name of the weight distribution, if any.
    pairs : pandas.DataFrame or None, optional
        The drawn entries (columns exact, approx); None leaves the sentence on their side out.
    n : int or None, optional
        Number of points (Nyström's exactness at D ≥ n).
    unbiased : bool, default=True
        Whether the map is unbiased (E K̂ = K): only then is a 1/√D rate predicted.
    nystroem : bool, default=False
        Whether the map is Nyström.

    Returns
    -------
    str
        The note, a few sentences.
    """
    value = stats.set_index("metric")["value"]
    rel, mean_abs, max_abs = (float(value[k]) for k in ("relative Frobenius error", "mean absolute error",
                                                          "max absolute error"))
    weights = f" with {distribution_label} weights" if distribution_label else ""
    halved = float(f"{rel:.3g}") / 2  # half of the number shown, so the reader's arithmetic agrees
    quality = ("the two heatmaps should look alike" if rel < 0.3 else
               "expect the approximate heatmap to look noisier than the exact one" if rel < 1.0 else
               "the approximate heatmap is dominated by noise at this D")
    parts = [f"{map_label}{weights} at D = {D:,}: relative Frobenius error {rel:.3g}, so {quality}.",
             f"Mean |K̂ − K| = {mean_abs:.3g}, largest {max_abs:.3g}."]
    if nystroem and n is not None:
        parts.append(nystroem_sentence(D, n, rel))
    if pairs is not None and len(pairs) and not (nystroem and n is not None and D >= n):
        parts.append(entries_sentence(pairs["exact"], pairs["approx"], unbiased=unbiased))
    if unbiased:
        parts.append(f"If the error falls like 1/√D, D = {4 * D:,} brings it to about {halved:.3g}; try it in the "
                     "sidebar.")
    return " ".join(parts)
