"""Figures of the Classifiers page: test accuracy and train / test time against D (paper Figures 2 and 3).

Input is :func:`rkcore.studies.accuracy.accuracy_study` output (one row per fit: method, label, D -
NaN for methods without random features -, trial, accuracy, train_seconds, test_seconds).
Methods with random features are drawn against D (mean over trials, band: mean ± std);
the exact kernel SVMs, factorization machines and the all-subsets model do not depend on
D and are drawn as horizontal reference lines with their ± std band across the D range.

The page rebuilds these figures on every rerun, so they are built from trace dicts with
:func:`rkcore.figures.style.figure` (no per-property validation; nested dicts in plotly's canonical form).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ..registry import get_method
from .style import FONT_SIZE, figure, log_ticks, plotly_text, rgba

REFERENCE_DASH = {"kernel_svm": "dash", "poly_svm": "dashdot", "fm": "dot", "all_subsets_model": "longdash"}
PHASES = {"train_seconds": "training", "test_seconds": "testing"}
#: Legends right of the plot: the charts span the page width, and below they would collide with the D axis title.
LEGEND_RIGHT = dict(x=1.02, xanchor="left", y=1.0, yanchor="top")


def _color(method: str) -> str:
    """The method's colour from the study's method table (maps: their registry colour)."""
    return get_method(method).color


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without its attrs (accuracy_study keeps its validation table there): pandas deep-copies attrs in
    every operation, which cost more than the grouping and the drawing here."""
    if not df.attrs:
        return df
    df = df.copy(deep=False)
    df.attrs = {}
    return df


def summarize_by_D(df: pd.DataFrame, value: str) -> pd.DataFrame:
    """Mean, std (ddof = 0) and trial count of ``value`` per (method, label, D); D stays NaN for the
    methods without random features.

    Parameters
    ----------
    df : pandas.DataFrame
        accuracy_study output (columns method, label, D, trial and ``value``).
    value : str
        Column to summarize, e.g. "accuracy" or "train_seconds".

    Returns
    -------
    pandas.DataFrame
        One row per (method, label, D) with columns mean, n_trials and std.
    """
    need = {"method", "label", "D", "trial", value}
    missing = need - set(df.columns)
    if missing:
        raise ValueError(f"Need accuracy_study output; missing columns: {sorted(missing)}.")
    g = _plain(df).groupby(["method", "label", "D"], dropna=False, sort=False)[value]
    # the frame g.agg(mean="mean", n_trials="count").reset_index() made, at half its cost
    mean = g.mean()
    out = mean.index.to_frame(index=False)
    out["mean"] = mean.to_numpy()
    out["n_trials"] = g.count().to_numpy()
    out["std"] = g.std(ddof=0).fillna(0.0).to_numpy()
    return out


def _x_range(df: pd.DataFrame) -> tuple[float, float]:
    D = df["D"].dropna()
    if D.empty:
        return 1.0, 2.0  # only reference methods: any span draws their horizontal lines
    return float(D.min()), float(D.max())


def _series_traces(s: pd.DataFrame, x_span, *, scale: float = 1.0, showlegend: bool = True, suffix: str = "",
                   log_y: bool = False, unit: str = "", **axes) -> list[dict]:
    """Lines against D for random-feature methods, horizontal reference lines for the others, as scatter
    trace dicts (for :func:`rkcore.figures.style.figure`); ``axes``: e.g. xaxis="x2", yaxis="y2"."""
    # the columns as arrays, split by method in order of appearance (as s.groupby("method", sort=False)):
    # pandas' per-group column access cost more than the drawing
    codes, methods = pd.factorize(s["method"])
    labels, Ds = s["label"].to_numpy(), s["D"].to_numpy(float)
    means: np.ndarray = s["mean"].to_numpy(float) * scale
    stds: np.ndarray = s["std"].to_numpy(float) * scale
    traces = []
    for k, method in enumerate(methods):
        rows = np.flatnonzero(codes == k)
        label = labels[rows[0]]
        color = _color(method)
        mean, std, D = means[rows], stds[rows], Ds[rows]
        if np.isnan(D).all():
            x = np.array(x_span, dtype=float)
            m, sd = float(mean[0]), float(std[0])
            lo = m - sd if not log_y else max(m - sd, m * 0.2)
            if sd > 0:
                traces.append(dict(type="scatter", x=np.r_[x, x[::-1]], y=[m + sd, m + sd, lo, lo], mode="lines",
                                   fill="toself", fillcolor=rgba(color, 0.12), line=dict(width=0), hoverinfo="skip",
                                   legendgroup=method, showlegend=False, name=f"{label} ± std", **axes))
            traces.append(dict(type="scatter", x=x, y=[m, m], mode="lines", name=f"{label}, no D{suffix}",
                               legendgroup=method, showlegend=showlegend,
                               line=dict(color=color, width=2.5, dash=REFERENCE_DASH.get(method, "dash")),
                               hovertemplate=f"{label}: %{{y:.4g}}{unit}<extra></extra>", **axes))
            continue
        # by increasing D, each mean and std with its D
        order = np.argsort(D)
        x, mean, std = D[order], mean[order], std[order]
        lo = mean - std if not log_y else np.maximum(mean - std, mean * 0.2)
        if np.any(std > 0):
            traces.append(dict(type="scatter", x=np.r_[x, x[::-1]], y=np.r_[mean + std, lo[::-1]], mode="lines",
                               fill="toself", fillcolor=rgba(color, 0.15), line=dict(width=0), hoverinfo="skip",
                               legendgroup=method, showlegend=False, name=f"{label} ± std", **axes))
        traces.append(dict(type="scatter", x=x, y=mean, mode="lines+markers", name=f"{label}{suffix}",
                           legendgroup=method, showlegend=showlegend, line=dict(color=color, width=3),
                           marker=dict(size=8), hovertemplate=f"D=%{{x}}<br>%{{y:.4g}}{unit}<extra>{label}</extra>",
                           **axes))
    return traces


def _x_axis(log2_x: bool, Ds) -> dict:
    """The D axis (an axis dict in plotly's canonical form)."""
    ticks = sorted({int(v) for v in Ds})
    if log2_x:
        return dict(type="log", title=dict(text="D (random features, log₂ scale)"), tickvals=ticks)
    # more than 8 ticks crowd a linear axis: plotly picks them
    return dict(title=dict(text="D (random features)"), **(dict(tickvals=ticks) if len(ticks) <= 8 else {}))


def accuracy_figure(df: pd.DataFrame, *, log2_x: bool = False, title: str | None = None) -> go.Figure:
    """Test accuracy vs D: mean over trials with a ± std band; methods without D as horizontal lines.

    Parameters
    ----------
    df : pandas.DataFrame
        accuracy_study output.
    log2_x : bool, default False
        Draw D on a log₂ axis.
    title : str or None, optional
        Figure title; None gives "Test accuracy vs D" with the test size.

    Returns
    -------
    plotly.graph_objects.Figure
        The accuracy chart.
    """
    df = _plain(df)
    s = summarize_by_D(df, "accuracy")
    n_test = int(df["n_test"].iloc[0]) if "n_test" in df.columns and len(df) else None
    title = title or "Test accuracy vs D" + (f" ({n_test:,} test points)" if n_test else "")
    return figure(_series_traces(s, _x_range(df), unit=""), dict(
        height=520, title=dict(text=plotly_text(title)), legend=LEGEND_RIGHT, xaxis=_x_axis(log2_x, df["D"].dropna()),
        yaxis=dict(title=dict(text="test accuracy (fraction correct)"), tickformat=".0%")))


#: Subplot title and x domain of :func:`time_figure`'s panel per :data:`PHASES` entry, as make_subplots(rows=1,
#: cols=2, horizontal_spacing=0.2) lays them out (0.4 + 0.2 is its 0.6000000000000001); laid out here because
#: make_subplots alone cost more than the drawing. The wide gap leaves room for the right panel's tick labels
#: and axis title.
TIME_PANELS = (("training time (fit, mapping included)", (0.0, 0.4)),
               ("testing time (predict, mapping included)", (0.4 + 0.2, 1.0)))


def time_figure(df: pd.DataFrame, *, log2_x: bool = False, title: str | None = None) -> go.Figure:
    """Training and testing time vs D side by side (log y): mean over trials, ± std band; methods
    without D as horizontal lines. Times include the feature mapping.

    Parameters
    ----------
    df : pandas.DataFrame
        accuracy_study output.
    log2_x : bool, default False
        Draw D on a log₂ axis.
    title : str or None, optional
        Figure title; None gives "Training and testing time vs D".

    Returns
    -------
    plotly.graph_objects.Figure
        Two panels: training time and testing time.
    """
    df = _plain(df)
    span = _x_range(df)
    x_axis = _x_axis(log2_x, df["D"].dropna())
    traces, axes, panel_titles = [], {}, []
    for col, ((column, phase), (heading, domain)) in enumerate(zip(PHASES.items(), TIME_PANELS), start=1):
        suffix = "" if col == 1 else str(col)
        s = summarize_by_D(df, column)
        traces += _series_traces(s, span, scale=1.0, showlegend=col == 1, log_y=True, unit=" s",
                                 xaxis=f"x{suffix}", yaxis=f"y{suffix}")
        axes[f"xaxis{suffix}"] = dict(x_axis, anchor=f"y{suffix}", domain=list(domain))
        axes[f"yaxis{suffix}"] = dict(anchor=f"x{suffix}", domain=[0.0, 1.0], type="log",
                                      title=dict(text=f"{phase} time (s, log scale)"),
                                      **log_ticks(np.r_[s["mean"] + s["std"], s["mean"]]))
        # the subplot title make_subplots adds, at the font size the figure gave it
        panel_titles.append(dict(text=heading, x=sum(domain) / 2, xanchor="center", xref="paper", y=1.0,
                                 yanchor="bottom", yref="paper", showarrow=False, font=dict(size=FONT_SIZE)))
    return figure(traces, dict(height=500, title=dict(text=plotly_text(title or "Training and testing time vs D")),
                               legend=LEGEND_RIGHT, annotations=panel_titles, **axes))


def estimate_figure(estimates: pd.DataFrame, *, log2_x: bool = False) -> go.Figure:
    """Estimated training time per method vs D before a run (columns method, label, D, seconds;
    D NaN for methods without random features), log y.

    Parameters
    ----------
    estimates : pandas.DataFrame
        Estimates with columns method, label, D and seconds.
    log2_x : bool, default False
        Draw D on a log₂ axis.

    Returns
    -------
    plotly.graph_objects.Figure
        The estimated training time chart.
    """
    if estimates.empty:
        raise ValueError("No estimates to draw.")
    s = estimates.assign(mean=estimates["seconds"], std=0.0)
    return figure(_series_traces(s, _x_range(estimates), log_y=True, unit=" s"), dict(
        height=460, title=dict(text=plotly_text("Estimated training time per fit (before running; rough)")),
        legend=LEGEND_RIGHT, xaxis=_x_axis(log2_x, estimates["D"].dropna()),
        yaxis=dict(type="log", title=dict(text="estimated seconds per fit (log scale)"),
                   **log_ticks(estimates["seconds"]))))


def summary_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (method, D): accuracy mean / std, mean train and test seconds, C, trials.

    Parameters
    ----------
    df : pandas.DataFrame
        accuracy_study output.

    Returns
    -------
    pandas.DataFrame
        The summary table, one row per (method, D).
    """
    df = _plain(df)
    acc = summarize_by_D(df, "accuracy")
    tr = summarize_by_D(df, "train_seconds")
    te = summarize_by_D(df, "test_seconds")
    out = acc.rename(columns={"mean": "accuracy", "std": "accuracy std", "n_trials": "trials"})
    out["train s"] = tr["mean"].to_numpy()
    out["train s std"] = tr["std"].to_numpy()  # the trials' spread: a "faster" claim must exceed it
    out["test s"] = te["mean"].to_numpy()
    if "C" in df.columns:
        out["C"] = df.groupby(["method", "label", "D"], dropna=False, sort=False)["C"].first().to_numpy()
    return out[["label", "method", "D", "accuracy", "accuracy std", "train s", "train s std", "test s",
                *(["C"] if "C" in out else []), "trials"]]


def _speed_words(svm: pd.Series, best: pd.Series) -> str:
    """"trains 4× faster" only when the two mean training times differ beyond the trials' spread (2 standard
    errors of the difference, rkcore.figures.variance.separated); else they tie. One trial has no spread: the
    ratio is given as a single measurement."""
    from .variance import separated

    speed = svm["train s"] / best["train s"]
    words = (f"trains {speed:.2g}× faster" if speed >= 1 else f"trains {1 / speed:.2g}× slower")
    trials = int(min(svm.get("trials", 1), best.get("trials", 1)))
    if trials < 2 or "train s std" not in svm:
        return words + " in a single trial (no spread to weigh it against)"
    if separated(svm["train s"], svm["train s std"], trials, best["train s"], best["train s std"], trials):
        return words
    return f"trains about as fast (the {speed:.2g}× ratio is within the spread of {trials} trials)"


def classifier_note(summary: pd.DataFrame, n_train: int) -> str:
    """The Classifiers page's "what to notice" from its summary table (:func:`summary_table`): the best
    random-feature model against the exact kernel SVM, in accuracy and in measured training time, and the
    best model overall; the paper's claim is stated as the paper's.

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`summary_table`.
    n_train : int
        Number of training points, quoted in the note.

    Returns
    -------
    str
        The note, a few sentences.
    """
    exact = summary[summary["method"] == "kernel_svm"]
    rf = summary[summary["D"].notna()]
    best_all = summary.loc[summary["accuracy"].idxmax()]  # type: ignore[call-overload]  # pandas-stubs: idxmax's Hashable label, which .loc takes at run time
    parts = []
    if len(exact) and len(rf):
        svm = exact.iloc[0]
        best = rf.loc[rf["accuracy"].idxmax()]
        gap = (best["accuracy"] - svm["accuracy"]) * 100
        when = _speed_words(svm, best)
        parts.append(f"On {n_train:,} training points the best random-feature model ({best['label']}, "
                     f"D = {int(best['D']):,}) scores {best['accuracy']:.1%}, {gap:+.1f} points against the kernel "
                     f"SVM's {svm['accuracy']:.1%}, and {when}, measured this run.")
    parts.append(f"Most accurate here: {best_all['label']}"
                 + (f" at D = {int(best_all['D']):,}" if pd.notna(best_all["D"]) else "")
                 + f" ({best_all['accuracy']:.1%}).")
    parts.append("The paper finds the linear model on par with the kernel SVM at D = 16d and faster at large n: the "
                 "kernel SVM pays for an n × n Gram matrix, the linear model for n × D features, so the time ratio "
                 "moves in the linear model's favour as n grows. Small n gives noisy accuracies.")
    return " ".join(parts)
