"""Figures of the foundations pages: kernel-trick timing, random Fourier features, random projections.

Pure functions of the tidy DataFrames of :mod:`rkcore.teaching.kernel_trick`,
:mod:`rkcore.teaching.fourier_features` and :mod:`rkcore.teaching.random_projections`. Quantities that span
decades (times, feature counts, errors vs D) are drawn on log axes; bands are quantiles
over the trials (the figure says which). The pages rebuild these figures on every rerun, so
they are built from trace dicts with :func:`rkcore.figures.style.figure` (no per-property
validation; write nested dicts in plotly's canonical form).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..metrics import CURVE_METRICS, metric_labels
from ..teaching.random_projections import PROJECTIONS
from .style import LEGEND_BELOW, PALETTE, figure, log_ticks, plotly_text, rgba

METRIC_LABELS = metric_labels(CURVE_METRICS)  # the curves' error measures, labelled by rkcore.metrics


def metric_axis_title(metric: str) -> str:
    """The y-axis title of an error measure on a log axis, on two lines ("relative error ‖K̂ − K‖ / ‖K‖<br>
    (Frobenius, log scale)"): on one line it is longer than a short plot and runs into the figure title.

    Parameters
    ----------
    metric : str
        Metric key, e.g. "rel_fro".

    Returns
    -------
    str
        The two-line axis title.
    """
    label = METRIC_LABELS.get(metric, metric)
    head, paren, detail = label.partition(" (")
    return f"{head}<br>({detail[:-1]}, log scale)" if paren and detail.endswith(")") else f"{label}<br>(log scale)"


def band_traces(x, low, mid, high, *, name: str, color: str, band_name: str | None = None, dash: str | None = None,
                showlegend: bool = True, **axes) -> list[dict]:
    """A shaded band between ``low`` and ``high`` and a median line, as two scatter trace dicts (for
    :func:`rkcore.figures.style.figure`); the legend entry toggles both. ``axes``: e.g. xaxis="x", yaxis="y2".

    Parameters
    ----------
    x : array-like
        x values.
    low : array-like
        Lower edge of the band.
    mid : array-like
        Median line.
    high : array-like
        Upper edge of the band.
    name : str
        Legend name of the line.
    color : str
        Colour as "#rrggbb".
    band_name : str or None, optional
        Name of the band trace; None gives "<name>: band".
    dash : str or None, optional
        Dash style of the line; None draws it solid.
    showlegend : bool, default True
        Show the line in the legend.
    **axes
        Axis references passed to both traces.

    Returns
    -------
    list of dict
        The band trace and the line trace.
    """
    x = np.asarray(x)
    group = f"g_{name}"
    line = dict(color=color, width=3) if dash is None else dict(color=color, width=3, dash=dash)
    return [dict(type="scatter", x=np.concatenate([x, x[::-1]]),
                 y=np.concatenate([np.asarray(high), np.asarray(low)[::-1]]), fill="toself",
                 fillcolor=rgba(color, 0.18), line=dict(width=0), mode="lines", hoverinfo="skip",
                 name=band_name or f"{name}: band", legendgroup=group, showlegend=False, **axes),
            dict(type="scatter", x=x, y=np.asarray(mid), mode="lines+markers", name=name, legendgroup=group,
                 showlegend=showlegend, line=line, marker=dict(size=8), **axes)]


def quantiles(df: pd.DataFrame, by: list[str], value: str = "value", q=(0.1, 0.5, 0.9)) -> pd.DataFrame:
    """Quantiles of ``value`` per group of ``by``, one column per quantile (q10, q50, q90).

    Parameters
    ----------
    df : pandas.DataFrame
        Tidy rows.
    by : list of str
        Columns to group by.
    value : str, default "value"
        Column whose quantiles are taken.
    q : tuple of float, default (0.1, 0.5, 0.9)
        Quantile levels.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns and one column ``q<percent>`` per level.
    """
    g = df.groupby(by)[value]
    out = pd.concat({f"q{int(round(p * 100))}": g.quantile(p) for p in q}, axis=1).reset_index()
    return out


def reference_slope(x, y0: float, x0: float, slope: float = -0.5) -> np.ndarray:
    """y0 * (x / x0)^slope: a guide line through (x0, y0).

    Parameters
    ----------
    x : array-like
        x values of the guide.
    y0 : float
        Value of the guide at ``x0``.
    x0 : float
        x value the guide passes through.
    slope : float, default -0.5
        Log-log slope.

    Returns
    -------
    numpy.ndarray
        The guide's y values.
    """
    return y0 * (np.asarray(x, dtype=np.float64) / x0) ** slope


# ============================================================================ kernel trick
def kernel_trick_figure(df: pd.DataFrame) -> go.Figure:
    """Median time of the Gram matrix (explicit features vs kernel trick) vs d, and the feature count.

    ``df`` is :func:`rkcore.teaching.kernel_trick.kernel_trick_timing` output. Left axis: seconds
    (median over repeats, band min-max); right axis: numbers per point each method works
    with (explicit: the feature count; kernel: d), both log-log.

    Parameters
    ----------
    df : pandas.DataFrame
        Kernel-trick timings (columns method, d, n, kind, seconds, n_features).

    Returns
    -------
    plotly.graph_objects.Figure
        Times and feature counts on two y axes.
    """
    if df.empty:
        raise ValueError("No timings to draw.")
    n = int(df["n"].iloc[0])
    colors = {"explicit features": PALETTE[3], "kernel trick": PALETTE[0]}
    # one grouping for all methods, sorted by (method, d); the bands follow the methods' order in df,
    # the feature counts the sorted order
    grouped = df.groupby(["method", "d"])
    stats = grouped["seconds"].agg(["min", "median", "max"])
    stats["n_features"] = grouped["n_features"].first()
    per_method = {method: stats.loc[method] for method in stats.index.unique(level="method")}
    traces = []
    for method in df["method"].unique():
        q = per_method[method]
        traces += band_traces(q.index.to_numpy(), q["min"].to_numpy(), q["median"].to_numpy(), q["max"].to_numpy(),
                              name=f"time: {method}", color=colors.get(method, PALETTE[2]), xaxis="x", yaxis="y")
    for method, q in per_method.items():
        label = "explicit feature count" if method == "explicit features" else "kernel trick: d numbers"
        traces.append(dict(type="scatter", x=q.index.to_numpy(), y=q["n_features"].to_numpy(), mode="lines",
                           name=label, line=dict(color=colors.get(method, PALETTE[2]), dash="dot", width=2),
                           xaxis="x", yaxis="y2"))
    kind = df["kind"].iloc[0]
    # the axes make_subplots(specs=[[{"secondary_y": True}]]) lays out (it costs more than the drawing)
    return figure(traces, dict(
        height=520, legend=LEGEND_BELOW,
        title=dict(text=f"Gram matrix of n = {n} points: explicit features vs kernel trick ({kind})"),
        xaxis=dict(anchor="y", domain=[0.0, 0.94], type="log", title=dict(text="d (input features, log scale)")),
        # labelled ticks 1-2-5 or by decades: plotly labels every minor tick of a short log range, and they
        # collided at presenter-mode sizes ("5 6 7 8 9")
        yaxis=dict(anchor="x", domain=[0.0, 1.0], type="log", title=dict(text="time (s)"),
                   **log_ticks(np.concatenate([np.asarray(q[["min", "max"]], dtype=float).ravel()
                                               for q in per_method.values()]))),
        yaxis2=dict(anchor="x", overlaying="y", side="right", type="log",
                    title=dict(text="numbers per point"), showgrid=False, dtick=1, exponentformat="power")))


def feature_count_figure(df: pd.DataFrame) -> go.Figure:
    """Numbers per point vs d for each explicit expansion and for the kernel trick (log-log).

    ``df`` is :func:`rkcore.teaching.kernel_trick.feature_count_table` output.

    Parameters
    ----------
    df : pandas.DataFrame
        Feature counts (columns kind, d, n_features).

    Returns
    -------
    plotly.graph_objects.Figure
        The log-log chart.
    """
    if df.empty:
        raise ValueError("No feature counts to draw.")
    colors = {"polynomial": PALETTE[3], "interactions": PALETTE[1], "all_subsets": PALETTE[4], "kernel trick": PALETTE[0]}
    labels = {"polynomial": "polynomial m: C(d+m, m)", "interactions": "interactions m: C(d, m)",
              "all_subsets": "all subsets: 2^d", "kernel trick": "kernel trick: d"}
    traces = []
    for kind, sub in df.groupby("kind", sort=False):
        kind = str(kind)  # pandas-stubs types group keys as any Scalar; here the column holds names
        line = dict(color=colors.get(kind, PALETTE[2]), width=3)
        if kind == "kernel trick":
            line["dash"] = "dash"
        traces.append(dict(type="scatter", x=sub["d"].to_numpy(), y=sub["n_features"].to_numpy(dtype=float),
                           mode="lines+markers", name=labels.get(kind, kind), line=line))
    return figure(traces, dict(
        height=460, legend=dict(x=0.03, y=0.99),
        title=dict(text=plotly_text("Explicit feature count vs d (what a linear method must store per point)")),
        xaxis=dict(type="log", title=dict(text="d (input features, log scale)")),
        yaxis=dict(type="log", title=dict(text="numbers per point (log scale)"), exponentformat="power")))


# ============================================================================ RFF
def rff_error_figure(df: pd.DataFrame, metric: str = "rel_fro", *, title: str | None = None) -> go.Figure:
    """Error of the random Fourier features vs D: median over trials, 10-90% band, and a 1/√D guide.

    Parameters
    ----------
    df : pandas.DataFrame
        RFF error rows (columns metric, D, trial, value).
    metric : str, default "rel_fro"
        Error metric to draw.
    title : str or None, optional
        Figure title; None gives a default.

    Returns
    -------
    plotly.graph_objects.Figure
        The log-log error chart.
    """
    sub = df[df["metric"] == metric]
    if sub.empty:
        raise ValueError(f"No rows with metric {metric!r}; available: {sorted(df['metric'].unique())}.")
    q = quantiles(sub, ["D"])
    D = q["D"].to_numpy()
    traces = band_traces(D, q["q10"].to_numpy(), q["q50"].to_numpy(), q["q90"].to_numpy(),
                         name="RFF (median over trials)", color=PALETTE[0])
    guide = reference_slope(D, q["q50"].iloc[0], D[0])
    traces.append(dict(type="scatter", x=D, y=guide, mode="lines", name="∝ 1/√D (guide)",
                       line=dict(color="#555", dash="dash", width=2)))
    n_trials = int(sub["trial"].nunique())
    return figure(traces, dict(
        height=500, legend=dict(x=0.99, xanchor="right", y=0.99),
        title=dict(text=plotly_text(title or "Random Fourier features: Gaussian-kernel error vs D")),
        xaxis=dict(type="log", title=dict(text="D (random features, log scale)"), tickvals=D.tolist()),
        yaxis=dict(type="log", title=dict(text=metric_axis_title(metric)), **log_ticks(np.r_[q["q10"], q["q90"]])),
        annotations=[dict(text=f"band: 10–90% of {n_trials} trials", xref="paper", yref="paper", x=0.0, y=0.0,
                          xanchor="left", yanchor="bottom", showarrow=False, font=dict(size=14, color="#555"))]))


# ============================================================================ projections
PROJECTION_COLORS = {"gaussian": PALETTE[0], "sparse": PALETTE[1]}


def projection_distortion_figure(df: pd.DataFrame, delta: float = 0.05, *, bands: pd.DataFrame) -> go.Figure:
    """‖Av‖²/‖v‖² vs m per projection kind: median and central 1 − δ range, with Theorem 1's band.

    ``bands`` is :func:`rkcore.teaching.random_projections.distortion_bands` at the same δ.

    The theorem band is drawn as dashed lines (the lower bound is vacuous, < 0, for small m
    and is then clipped to 0); the exact χ²_m/m interval of the Gaussian case is dotted.

    Parameters
    ----------
    df : pandas.DataFrame
        Distortion ratios (columns kind, m, ratio).
    delta : float, default 0.05
        Failure probability of the theorem band.
    bands : pandas.DataFrame
        Theorem and χ² bands per m.

    Returns
    -------
    plotly.graph_objects.Figure
        The distortion chart.
    """
    if df.empty:
        raise ValueError("No distortions to draw.")
    # the three quantiles of every (kind, m) in one grouping (a boolean mask per kind costs more than the
    # drawing); unsorted, the kinds keep their order in df
    probs = (delta / 2, 0.5, 1 - delta / 2)
    q = df.groupby(["kind", "m"], sort=False)["ratio"].quantile(list(probs)).unstack()  # type: ignore[arg-type]  # pandas-stubs: GroupBy.quantile takes a list at run time
    ms = np.sort(q.index.unique(level="m").to_numpy())
    traces = []
    for kind in q.index.unique(level="kind"):
        qk = q.loc[kind].sort_index()
        traces += band_traces(qk.index.to_numpy(), *(qk[p].to_numpy() for p in probs),
                              name=f"{kind}: median, central {100 * (1 - delta):g}% of vectors × trials",
                              color=PROJECTION_COLORS.get(kind, PALETTE[2]))
    bands = bands.set_index("m").loc[ms]
    lo, hi = bands["theorem_low"].to_numpy(), bands["theorem_high"].to_numpy()
    clo, chi = bands["chi2_low"].to_numpy(), bands["chi2_high"].to_numpy()
    thm, chi2_line = dict(color="#222", dash="dash", width=2), dict(color="#777", dash="dot", width=2)
    traces += [
        dict(type="scatter", x=ms, y=hi, mode="lines", name=f"Theorem 1 band (prob. ≥ {1 - delta:g})", line=thm,
             legendgroup="thm"),
        dict(type="scatter", x=ms, y=np.maximum(lo, 0.0), mode="lines", name="Theorem 1 lower", showlegend=False,
             line=dict(thm), legendgroup="thm"),
        dict(type="scatter", x=ms, y=chi, mode="lines", name="exact χ²ₘ/m interval (Gaussian)", line=chi2_line,
             legendgroup="chi"),
        dict(type="scatter", x=ms, y=clo, mode="lines", showlegend=False, name="χ² lower", line=dict(chi2_line),
             legendgroup="chi"),
    ]
    return figure(traces, dict(
        height=540, legend=LEGEND_BELOW,
        title=dict(text=plotly_text(f"Distortion of squared norms vs target dimension m (δ = {delta:g})")),
        # the line fig.add_hline(y=1) draws: across the plot's width at y = 1
        shapes=[dict(type="line", xref="x domain", x0=0, x1=1, yref="y", y0=1.0, y1=1.0,
                     line=dict(color="#999", width=1))],
        xaxis=dict(type="log", title=dict(text="m (target dimension, log scale)"), tickvals=ms.tolist()),
        yaxis=dict(title=dict(text="‖Av‖² / ‖v‖²  (1 = norm preserved)"), rangemode="tozero")))


def band_violation_figure(summary: pd.DataFrame) -> go.Figure:
    """Fraction of ratios outside the Theorem 1 band vs m per kind, against the promised δ.

    Parameters
    ----------
    summary : pandas.DataFrame
        Distortion summary (columns kind, m, outside, delta).

    Returns
    -------
    plotly.graph_objects.Figure
        Grouped bars with the δ line.
    """
    if summary.empty:
        raise ValueError("No summary to draw.")
    delta = float(summary["delta"].iloc[0])
    traces: list[dict[str, Any]] = [
        dict(type="bar", x=[str(m) for m in sub["m"]], y=sub["outside"].to_numpy(), name=kind,
             marker=dict(color=PROJECTION_COLORS.get(str(kind), PALETTE[2])))  # str: the kinds are names
              for kind, sub in summary.groupby("kind", sort=False)]
    ms = [str(m) for m in np.sort(summary["m"].unique())]
    traces.append(dict(type="scatter", x=ms, y=[delta] * len(ms), mode="lines",
                       name=f"δ = {delta:g}: what the theorem allows", line=dict(color="#222", dash="dash", width=2)))
    return figure(traces, dict(
        height=420, barmode="group", title=dict(text=plotly_text("How often the Theorem 1 band fails")),
        xaxis=dict(title=dict(text="m (target dimension)"), type="category"),
        yaxis=dict(title=dict(text="fraction of vectors outside the band"), rangemode="tozero")))


def kernel_trick_note(summary: pd.DataFrame, slope: float, kind_label: str) -> str:
    """The Kernel trick page's "what to notice" from its summary table (``d``, ``explicit features``,
    ``ratio explicit / kernel``) and the fitted log-log slope of the explicit time it shows.

    Parameters
    ----------
    summary : pandas.DataFrame
        The page's summary table, by increasing d.
    slope : float
        Fitted log-log slope of the explicit time; NaN if unknown.
    kind_label : str
        Name of the explicit map.

    Returns
    -------
    str
        The note, a few sentences.
    """
    last = summary.iloc[-1]
    ratio = float(last["ratio explicit / kernel"])
    slope_text = (f"its log-log slope over the last three d is {slope:.2f}" if np.isfinite(slope)
                  else "too few d values for a slope")
    return (f"Both ways give the same Gram matrix. At d = {int(last['d']):,} the explicit map ({kind_label}) "
            f"builds {int(last['explicit features']):,} features per point and takes {ratio:.3g}× the time of "
            f"the kernel formula; {slope_text}. The feature count predicts 2 for all products of at most two "
            "features (C(d+2, 2) ≈ d²/2) and exponential growth for all subsets, once the fixed overheads of "
            "small d are paid; the formula reads only the d inputs.")


def signed(x: float, digits: int = 2) -> str:
    """A number with a typographic minus (−0.51, not -0.51), as the notes print slopes.

    Parameters
    ----------
    x : float
        Number to format.
    digits : int, default 2
        Decimals.

    Returns
    -------
    str
        The formatted number.
    """
    return f"{x:.{digits}f}".replace("-", "−")


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x (NaN with fewer than two positive points).

    Parameters
    ----------
    x : array-like
        x values.
    y : array-like
        y values.

    Returns
    -------
    float
        The slope, or NaN.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def rff_summary(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The RFF page's table: per D the median error over the trials, its 10% and 90% quantiles, and
    median × √D (constant if the error falls like 1/√D).

    Parameters
    ----------
    df : pandas.DataFrame
        RFF error rows (columns metric, D, value).
    metric : str
        Error metric to tabulate.

    Returns
    -------
    pandas.DataFrame
        Columns D, median error, 10%, 90% and median error × √D.
    """
    sub = df[df.metric == metric].groupby("D")["value"]
    summary = pd.DataFrame({"D": sub.median().index.astype(int), "median error": sub.median().to_numpy(),
                            "10%": sub.quantile(0.1).to_numpy(), "90%": sub.quantile(0.9).to_numpy()})
    summary["median error × √D"] = summary["median error"] * np.sqrt(summary["D"])
    return summary


def rff_note(summary: pd.DataFrame) -> str:
    """The RFF page's "what to notice" from its summary table (:func:`rff_summary`): the error at the
    smallest and largest D, the fitted log-log slope, the range of the last column and the band widths.

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`rff_summary`.

    Returns
    -------
    str
        The note, a few sentences.
    """
    first, last = summary.iloc[0], summary.iloc[-1]
    slope = loglog_slope(summary["D"], summary["median error"])
    scaled = summary["median error × √D"]
    spread = float(scaled.max() / scaled.min()) if scaled.min() > 0 else float("inf")
    width0 = (first["90%"] - first["10%"]) / first["median error"]
    width1 = (last["90%"] - last["10%"]) / last["median error"]
    verdict = ("close to −1/2: the error falls like 1/√D" if abs(slope + 0.5) <= 0.1 else
               "steeper than −1/2" if slope < -0.5 else "flatter than −1/2")
    return (f"The median error falls from {first['median error']:.3g} at D = {int(first.D):,} to "
            f"{last['median error']:.3g} at D = {int(last.D):,}: {last.D / first.D:,.0f}× more features, "
            f"{first['median error'] / last['median error']:.3g}× smaller error. The fitted log-log slope is "
            f"{signed(slope)}, {verdict} (a 1/√D law gives {np.sqrt(last.D / first.D):.3g}× here). The table's last "
            f"column, median × √D, stays between {scaled.min():.3g} and {scaled.max():.3g} "
            f"({spread:.2f}× apart). The 10–90% band spans {width0:.0%} of the median at D = {int(first.D):,} "
            f"and {width1:.0%} at D = {int(last.D):,}. Set γ by hand to see how the bandwidth moves these numbers.")


def projection_note(summary: pd.DataFrame, delta: float, share: float) -> str:
    """The Random projections page's "what to notice" from its summary table (:func:`distortion_summary`
    columns kind, m, q_low, median, q_high, outside) and the median largest-coordinate share it shows.

    Parameters
    ----------
    summary : pandas.DataFrame
        Distortion summary table.
    delta : float
        Failure probability the theorem allows.
    share : float
        Median share of the largest coordinate in ‖v‖².

    Returns
    -------
    str
        The note, a few sentences.
    """
    parts = []
    for kind, sub in summary.groupby("kind", sort=False):
        kind = str(kind)  # pandas-stubs types group keys as any Scalar; here the column holds names
        sub = sub.sort_values("m")
        first, last = sub.iloc[0], sub.iloc[-1]
        w0, w1 = first.q_high - first.q_low, last.q_high - last.q_low
        worst = float(sub["outside"].max())
        label = PROJECTIONS[kind].label if kind in PROJECTIONS else str(kind)
        within = ("within" if worst <= delta else "more than") + f" the δ = {delta:g} the theorem allows"
        theorem = "" if kind == "gaussian" else " (the theorem is about Gaussian A)"
        parts.append(
            f"{label}: the median ratio is {sub['median'].min():.3g}–{sub['median'].max():.3g} over m; the central "
            f"spread shrinks from {w0:.3g} at m = {int(first.m):,} to {w1:.3g} at m = {int(last.m):,} "
            f"({w0 / w1:.3g}× narrower, 1/√m predicts {np.sqrt(last.m / first.m):.3g}×); at most {worst:.1%} "
            f"of the ratios fall outside Theorem 1's band, {within}{theorem}.")
    shape = ("spiky (one coordinate carries most of ‖v‖²), where a sparse A, which sees each vector through "
             "about s·m non-zeros, scatters more (the notes' Theorem 2 pays log(1/δ)/s)" if share > 0.5 else
             "flat (the norm is spread over many coordinates), where a sparse A behaves like a dense one")
    return " ".join(parts) + f" The vectors are {shape}: median largest-coordinate share {share:.2f}."
