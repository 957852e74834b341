r"""Figures of the Distributions and variance page: error vs D by weight distribution, exact vs
empirical variance of the RK estimate, and the mean variance by distribution.

Pure drawing: the data come from :func:`rkcore.studies.errors.error_study`
(:func:`error_vs_D_figure`) and :mod:`rkcore.studies.variance_study` (:func:`variance_figure`,
:func:`variance_by_distribution_figure`).
"""
from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..maps.distributions import get_distribution
from ..metrics import SEPARATION_SE, separated  # noqa: F401 (the notes here and in accuracy use them)
from ..registry import get_map
from .style import FONT_SIZE, LEGEND_BELOW, figure, log_ticks, plotly_text, rgba

#: A map that draws its own weights (SCRK) has no distribution to take a colour from: black, dashed,
#: so it stands apart from the distributions' colours on this chart.
OWN_WEIGHTS_COLOR = "#000000"


def method_color(map_key: str, distribution: str | None) -> str:
    """Maps with a choice of distribution (RK) take the distribution's colour (the same on every page);
    maps that draw their own weights are black. Unknown keys raise.

    Parameters
    ----------
    map_key : str
        Registry key of the map.
    distribution : str or None
        Weight distribution key, for maps that take one.

    Returns
    -------
    str
        Colour as "#rrggbb".
    """
    if get_map(map_key).takes_distribution:
        return get_distribution(cast(str, distribution)).color  # a map that takes a distribution is given one
    return OWN_WEIGHTS_COLOR


# ============================================================================ figures
def error_vs_D_figure(study: pd.DataFrame, metric: str = "mean_abs_error", *, title: str | None = None) -> go.Figure:
    """Error vs D per method, log-log: mean over trials (line) and 10-90% of the trials (band),
    with a 1/√D guide through the first point of the first method.

    Parameters
    ----------
    study : pandas.DataFrame
        Error study rows (columns method, map, distribution, D, trial, metric, value).
    metric : str, default "mean_abs_error"
        Error metric to draw.
    title : str or None, optional
        Figure title; None gives a default.

    Returns
    -------
    plotly.graph_objects.Figure
        The log-log error chart.
    """
    sub = study[study["metric"] == metric]
    if sub.empty:
        raise ValueError(f"No rows with metric {metric!r} in the study.")
    n_trials = int(sub["trial"].nunique())
    # per (method, D): mean and 10% / 90% quantiles, vectorized (a figure is rebuilt on every rerun)
    grouped = sub.groupby(["method", "map", "distribution", "D"], sort=False, dropna=False)["value"]
    stats = grouped.mean().rename("mean").to_frame()
    stats["lo"] = grouped.quantile(0.1)
    stats["hi"] = grouped.quantile(0.9)
    stats = stats.reset_index()
    traces: list[dict[str, Any]] = []
    first: tuple[np.ndarray, float] | None = None
    for (method, map_key, dist), q in stats.groupby(["method", "map", "distribution"], sort=False, dropna=False):
        q = q.sort_values("D")
        color = method_color(map_key, None if pd.isna(dist) else dist)
        x = q["D"].to_numpy(float)
        traces.append(dict(type="scatter", x=np.concatenate([x, x[::-1]]),
                           y=np.r_[q["hi"].to_numpy(), q["lo"].to_numpy()[::-1]],
                           mode="lines", fill="toself", fillcolor=rgba(color, 0.15), line=dict(width=0),
                           hoverinfo="skip", name=f"{method}: 10–90% of trials", legendgroup=method,
                           showlegend=False))
        traces.append(dict(type="scatter", x=x, y=q["mean"].to_numpy(), mode="lines+markers", name=method,
                           legendgroup=method, line=dict(color=color, width=3, dash=None if get_map(
                               map_key).takes_distribution else "dash"),
                           marker=dict(size=8),
                           hovertemplate="D=%{x}<br>mean |E|=%{y:.3g}<extra>" + method + "</extra>"))
        if first is None:
            first = (x, float(q["mean"].iloc[0]))
    assert first is not None  # at least one group: the rows are not empty
    x, y0 = first
    traces.append(dict(type="scatter", x=x, y=y0 * np.sqrt(x[0] / x), mode="lines", name="∝ 1/√D (guide)",
                       line=dict(color="#777", width=2, dash="dot")))
    D_values = sorted(sub["D"].unique())
    heading = plotly_text(title or "Mean absolute error vs D, by weight distribution")
    return figure(traces, dict(
        height=540, legend=LEGEND_BELOW,  # below the x-axis title: inside the plot it covered the data
        title=dict(text=heading + f"<br><sup>line: mean of {n_trials} trials · band: 10–90% of the trials</sup>"),
        xaxis=dict(type="log", title=dict(text="D (random features, log scale)"), tickvals=D_values,
                   ticktext=[str(D) for D in D_values]),
        yaxis=dict(type="log", title=dict(text="mean |K̂ − K| (log)"),
                   **log_ticks(np.r_[stats["lo"], stats["hi"]]))))


def variance_figure(empirical: pd.DataFrame, exact: pd.DataFrame | None = None) -> go.Figure:
    """One panel per pair: the exact variance Var/D (lines) and the empirical variance over trials
    (markers with 95% intervals), per distribution, log-log.

    Parameters
    ----------
    empirical : pandas.DataFrame
        Empirical variances (columns pair, distribution, D, variance, var_low, var_high, n_trials).
    exact : pandas.DataFrame or None, optional
        Exact variances (columns pair, distribution, D, variance).

    Returns
    -------
    plotly.graph_objects.Figure
        One panel per pair.
    """
    if empirical.empty:
        raise ValueError("No empirical variances to draw.")
    labels = list(dict.fromkeys(empirical["pair"]))
    # side-by-side panels laid out here (make_subplots and per-panel updates cost 5x more per rerun)
    gap = 0.07
    width = (1.0 - gap * (len(labels) - 1)) / len(labels)
    traces: list[dict[str, Any]] = []
    axes: dict[str, Any] = {}
    titles = []
    # one grouping per frame, sorted by D (boolean masks per pair and distribution cost more than the drawing)
    empirical = empirical.sort_values("D", kind="stable")
    by_pair = dict(tuple(empirical.groupby("pair", sort=False)))
    exact_curves = {} if exact is None else dict(tuple(exact.sort_values("D", kind="stable").groupby(
        ["pair", "distribution"], sort=False)))
    for col, label in enumerate(labels, start=1):
        emp = by_pair[label]
        suffix = "" if col == 1 else str(col)
        left = (col - 1) * (width + gap)
        titles.append(dict(text=plotly_text(label), x=left + width / 2, y=1.0, xref="paper", yref="paper",
                           xanchor="center", yanchor="bottom", showarrow=False, font=dict(size=FONT_SIZE)))
        for dist, g in emp.groupby("distribution", sort=False):
            dist = str(dist)  # pandas-stubs types group keys as any Scalar; here the column holds names
            entry = get_distribution(dist)
            color, name = entry.color, entry.label
            ex = exact_curves.get((label, dist))
            if ex is not None:
                traces.append(dict(type="scatter", x=ex["D"].to_numpy(), y=ex["variance"].to_numpy(), mode="lines",
                                   name=f"{name}: exact Var/D",
                                   legendgroup=f"exact_{dist}", showlegend=col == 1,
                                   line=dict(color=color, width=2.5),
                                   hovertemplate="D=%{x:.0f}<br>exact Var=%{y:.3g}<extra>" + name + "</extra>",
                                   xaxis=f"x{suffix}", yaxis=f"y{suffix}"))
            traces.append(dict(
                type="scatter", x=g["D"].to_numpy(), y=g["variance"].to_numpy(), mode="markers",
                name=f"{name}: empirical ({int(g['n_trials'].iloc[0])} maps)",
                legendgroup=f"emp_{dist}", showlegend=col == 1,
                marker=dict(color=color, size=10, symbol="circle-open", line=dict(width=2.5)),
                error_y=dict(type="data", symmetric=False, array=(g["var_high"] - g["variance"]).to_numpy(),
                             arrayminus=(g["variance"] - g["var_low"]).to_numpy(), color=color, thickness=1.5,
                             width=4),
                hovertemplate="D=%{x}<br>empirical Var=%{y:.3g}<extra>" + name + "</extra>",
                xaxis=f"x{suffix}", yaxis=f"y{suffix}"))
        D_values = sorted(emp["D"].unique())
        axes[f"xaxis{suffix}"] = dict(type="log", title=dict(text="D (log scale)"), tickvals=D_values, anchor=f"y{suffix}",
                                      domain=[left, left + width],
                                      ticktext=[str(int(D)) for D in D_values])
        shown = [emp["var_low"], emp["var_high"]] + [c["variance"] for (p, _), c in exact_curves.items() if p == label]
        axes[f"yaxis{suffix}"] = dict(type="log", **log_ticks(np.concatenate([np.asarray(v) for v in shown])),
                                      anchor=f"x{suffix}",
                                      title=dict(text="Var ⟨Z(x), Z(y)⟩ (log scale)") if col == 1 else None)
    return figure(traces, dict(
        height=600, annotations=titles,
        title_text="Variance of the estimate for three fixed pairs: exact (lines) vs over random maps "
                   "(markers, 95% interval)",
        legend=LEGEND_BELOW, **axes))


def variance_by_distribution_figure(summary: pd.DataFrame, kernel_label: str = "") -> go.Figure:
    """Bar per distribution: mean exact per-feature variance D·Var over pairs, labeled with
    the ratio to Rademacher and the fourth moment E[ω⁴].

    Parameters
    ----------
    summary : pandas.DataFrame
        Exact variance per distribution.
    kernel_label : str, default ""
        Kernel name for the subtitle.

    Returns
    -------
    plotly.graph_objects.Figure
        The bar chart.
    """
    if summary.empty:
        raise ValueError("No variances to draw.")
    s = summary.sort_values("fourth_moment")
    colors = [get_distribution(k).color for k in s["distribution"]]
    text = [f"×{r:.2f}" for r in s["ratio_to_rademacher"]]
    n_pairs = int(s["n_pairs"].iloc[0])
    suffix = f", {plotly_text(kernel_label)}" if kernel_label else ""
    bars = dict(type="bar", x=[f"{lab}<br>E[ω⁴] = {m:g}" for lab, m in zip(s["label"], s["fourth_moment"])],
                y=s["mean"].to_numpy(), marker=dict(color=colors), text=text, textposition="outside",
                cliponaxis=False, name="D · Var", hovertemplate="%{x}<br>mean D·Var=%{y:.3g}<extra></extra>")
    top = float(s["mean"].max())
    return figure([bars], dict(
        height=480, showlegend=False, bargap=0.35,
        title_text=f"Exact variance by distribution<br><sup>mean over {n_pairs:,} pairs{suffix}; "
                   "labels: ratio to Rademacher</sup>",
        yaxis=dict(title=dict(text="D · Var⟨Z(x), Z(y)⟩"), range=[0, top * 1.18], exponentformat="power"),
        xaxis=dict(title=dict(text="weight distribution"), tickangle=0)))


def lowest_by_D(tidy: pd.DataFrame) -> pd.DataFrame:
    """Per D of the Table 1 view's tidy numbers (method, D, mean, std, n_trials): the method with the lowest
    mean, ``tied``, the methods whose mean cannot be told apart from it (:func:`separated` fails),
    the lowest included, and ``higher``, the others (above the lowest beyond SEPARATION_SE standard errors
    of the difference). A clear winner has ``tied == (winner,)``.

    Parameters
    ----------
    tidy : pandas.DataFrame
        Tidy numbers (columns method, D, mean, std, n_trials).

    Returns
    -------
    pandas.DataFrame
        Columns D, lowest, tied, higher.
    """
    rows = []
    for D, group in tidy.groupby("D", sort=True):
        group = group.sort_values("mean")
        best = group.iloc[0]
        tied = tuple(r.method for r in group.itertuples() if r.method == best.method or not separated(
            best["mean"], best["std"], int(best["n_trials"]), r.mean, r.std, int(r.n_trials)))
        higher = tuple(r.method for r in group.itertuples() if r.method not in tied)
        rows.append({"D": int(best["D"]), "lowest": best["method"], "tied": tied, "higher": higher})
    return pd.DataFrame(rows, columns=["D", "lowest", "tied", "higher"])


def _higher_sentence(lowest: pd.DataFrame) -> str:
    """Which methods are above the lowest beyond the spread, and at how many D ("" if none anywhere)."""
    if "higher" not in lowest:
        return ""
    counts: dict[str, int] = {}
    for higher in lowest["higher"]:
        for method in higher:
            counts[method] = counts.get(method, 0) + 1
    if not counts:
        return ""
    named = ", ".join(f"{m} at {c} of {len(lowest)}" for m, c in counts.items())
    return f" Clearly higher than the lowest (beyond {SEPARATION_SE:g} standard errors): {named} values of D."


def _summary_sentence(lowest: pd.DataFrame) -> str:
    """The lead: who is lowest (or ties for it) and who is clearly higher, over all D, in one short sentence."""
    clear = lowest[lowest["tied"].map(len) == 1]
    counts: dict[str, int] = {}
    for h in lowest.get("higher", []):
        for m in h:
            counts[m] = counts.get(m, 0) + 1
    higher = [m if c == len(lowest) else f"{m} (at {c} of {len(lowest)} D)" for m, c in counts.items()]
    if clear.empty:
        tied = list(dict.fromkeys(m for t in lowest["tied"] for m in t))
        text = f"{', '.join(tied[:-1])} and {tied[-1]} tie for the lowest error"
    else:
        top = clear["lowest"].value_counts().index[0]
        text = f"{top} has the lowest error at {int((clear['lowest'] == top).sum())} of {len(lowest)} values of D"
    return text + (f"; clearly higher: {', '.join(higher)}." if higher else ".")


def _lowest_sentence(lowest: pd.DataFrame, trials: int | None) -> str:
    clear = lowest[lowest["tied"].map(len) == 1]
    within = f"within {SEPARATION_SE:g} standard errors of {trials} trials" if trials else "within the trials' spread"
    higher = _higher_sentence(lowest)
    if clear.empty:
        ties = "; ".join(f"D = {r.D}: {' and '.join(cast(tuple, r.tied))}" for r in lowest.itertuples())
        return f"No single distribution is lowest beyond the trials' spread: they tie for lowest ({ties}; {within})." + higher
    winners = clear["lowest"].value_counts()
    top, count = winners.index[0], int(winners.iloc[0])
    text = f"Lowest mean error beyond the trials' spread: {top} at {count} of {len(lowest)} values of D"
    others = [f"D = {r.D}: {r.lowest}" for r in clear.itertuples() if r.lowest != top]
    tied = [f"D = {r.D}: {' and '.join(cast(tuple, r.tied))} tie" for r in lowest.itertuples()
            if len(cast(tuple, r.tied)) > 1]  # cast: pandas-stubs types the cells as any Scalar; these hold tuples
    if others or tied:
        text += " (" + "; ".join(others + tied) + (f", {within}" if tied else "") + ")"
    return text + "." + higher


def distribution_note(lowest: pd.DataFrame | None, summary: pd.DataFrame | None, trials: int | None = None) -> str:
    """The Distributions page's "what to notice" from what it shows: ``lowest`` (:func:`lowest_by_D` of the
    Table 1 view: a winner is named only where it beats the others beyond the trials' spread, else they
    tie) and ``summary`` (exact variance per distribution: ``label``, ``ratio_to_rademacher``,
    ``at_least_rademacher``); either may be None (not run / not exact).

    Parameters
    ----------
    lowest : pandas.DataFrame or None
        Output of :func:`lowest_by_D`.
    summary : pandas.DataFrame or None
        Exact variance per distribution.
    trials : int or None, optional
        Number of trials, quoted in the note.

    Returns
    -------
    str
        The note, a few sentences.
    """
    parts = []
    if lowest is not None and len(lowest):
        parts += [_summary_sentence(lowest), _lowest_sentence(lowest, trials)]
    else:
        parts.append("Run the error study to see which distribution has the lowest error at each D.")
    if summary is not None and len(summary):
        others = summary[summary["label"] != "Rademacher"]
        if len(others):
            ratios = ", ".join(f"{r.label} {r.ratio_to_rademacher:.2f}×" for r in others.itertuples())
            fraction = float(others["at_least_rademacher"].min())
            where = ("at every sampled pair, for every distribution (Lemma 4 holds pair by pair here)."
                     if fraction == 1.0 else
                     f"at {fraction:.0%} of the sampled pairs or more, for every distribution (Lemma 4 bounds the "
                     "worst pair, not every pair).")
            parts.append(f"Exact variance relative to Rademacher: {ratios}; at least Rademacher's {where}")
    parts.append("Lemma 4 predicts the order by the fourth moment E[ω⁴] (Rademacher 1, uniform 1.8, Gaussian 3, "
                 "Laplace 6); every curve should fall like 1/√D.")
    return " ".join(parts)
