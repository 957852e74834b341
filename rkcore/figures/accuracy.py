"""Figures of the Classifiers page: test accuracy and train / test time against D (paper Figures 2 and 3).

Input is :func:`rkcore.accuracy.accuracy_study` output (one row per fit: method, label, D -
NaN for methods without random features -, trial, accuracy, train_seconds, test_seconds).
Methods with random features are drawn against D (mean over trials, band: mean ± std);
the exact kernel SVMs, factorization machines and the all-subsets model do not depend on
D and are drawn as horizontal reference lines with their ± std band across the D range.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..accuracy import get_method
from .style import FONT_SIZE, TEMPLATE, log_ticks, new_figure, rgba

REFERENCE_DASH = {"kernel_svm": "dash", "poly_svm": "dashdot", "fm": "dot", "all_subsets_model": "longdash"}
PHASES = {"train_seconds": "training", "test_seconds": "testing"}
#: Legends right of the plot: the charts span the page width, and below they would collide with the D axis title.
LEGEND_RIGHT = dict(x=1.02, xanchor="left", y=1.0, yanchor="top")


def _color(method: str) -> str:
    """The method's colour from the study's method table (maps: their registry colour)."""
    return get_method(method).color


def summarize_by_D(df: pd.DataFrame, value: str) -> pd.DataFrame:
    """Mean, std (ddof = 0) and trial count of ``value`` per (method, label, D); D stays NaN for the
    methods without random features."""
    need = {"method", "label", "D", "trial", value}
    missing = need - set(df.columns)
    if missing:
        raise ValueError(f"Need accuracy_study output; missing columns: {sorted(missing)}.")
    g = df.groupby(["method", "label", "D"], dropna=False, sort=False)[value]
    out = g.agg(mean="mean", n_trials="count").reset_index()
    out["std"] = g.std(ddof=0).fillna(0.0).to_numpy()
    return out


def _x_range(df: pd.DataFrame) -> tuple[float, float]:
    D = df["D"].dropna()
    if D.empty:
        return 1.0, 2.0  # only reference methods: any span draws their horizontal lines
    return float(D.min()), float(D.max())


def _add_series(fig: go.Figure, s: pd.DataFrame, x_span, *, scale: float = 1.0, row=None, col=None,
                showlegend: bool = True, suffix: str = "", log_y: bool = False, unit: str = "") -> None:
    """Lines against D for random-feature methods, horizontal reference lines for the others."""
    where = {} if row is None else dict(row=row, col=col)
    for method, g in s.groupby("method", sort=False):
        label = g["label"].iloc[0]
        color = _color(method)
        mean, std = g["mean"].to_numpy(float) * scale, g["std"].to_numpy(float) * scale
        if g["D"].isna().all():
            x = np.array(x_span, dtype=float)
            m, sd = float(mean[0]), float(std[0])
            lo = m - sd if not log_y else max(m - sd, m * 0.2)
            if sd > 0:
                fig.add_trace(go.Scatter(x=np.r_[x, x[::-1]], y=[m + sd, m + sd, lo, lo], mode="lines", fill="toself",
                                         fillcolor=rgba(color, 0.12), line=dict(width=0), hoverinfo="skip",
                                         legendgroup=method, showlegend=False, name=f"{label} ± std"), **where)
            fig.add_trace(go.Scatter(x=x, y=[m, m], mode="lines", name=f"{label}, no D{suffix}", legendgroup=method,
                                     showlegend=showlegend,
                                     line=dict(color=color, width=2.5, dash=REFERENCE_DASH.get(method, "dash")),
                                     hovertemplate=f"{label}: %{{y:.4g}}{unit}<extra></extra>"), **where)
            continue
        g = g.sort_values("D")
        x = g["D"].to_numpy(float)
        lo = mean - std if not log_y else np.maximum(mean - std, mean * 0.2)
        if np.any(std > 0):
            fig.add_trace(go.Scatter(x=np.r_[x, x[::-1]], y=np.r_[mean + std, lo[::-1]], mode="lines", fill="toself",
                                     fillcolor=rgba(color, 0.15), line=dict(width=0), hoverinfo="skip",
                                     legendgroup=method, showlegend=False, name=f"{label} ± std"), **where)
        fig.add_trace(go.Scatter(x=x, y=mean, mode="lines+markers", name=f"{label}{suffix}", legendgroup=method,
                                 showlegend=showlegend, line=dict(color=color, width=3), marker=dict(size=8),
                                 hovertemplate=f"D=%{{x}}<br>%{{y:.4g}}{unit}<extra>{label}</extra>"), **where)


def _x_axis(fig: go.Figure, log2_x: bool, Ds, **where) -> None:
    ticks = sorted({int(v) for v in Ds})
    if log2_x:
        fig.update_xaxes(type="log", title_text="D (random features, log₂ scale)", tickvals=ticks, **where)
    else:
        fig.update_xaxes(title_text="D (random features)", tickvals=ticks if len(ticks) <= 8 else None, **where)


def accuracy_figure(df: pd.DataFrame, *, log2_x: bool = False, title: str | None = None) -> go.Figure:
    """Test accuracy vs D: mean over trials with a ± std band; methods without D as horizontal lines."""
    s = summarize_by_D(df, "accuracy")
    n_test = int(df["n_test"].iloc[0]) if "n_test" in df.columns and len(df) else None
    fig = new_figure(title or "Test accuracy vs D" + (f" ({n_test:,} test points)" if n_test else ""), height=520)
    _add_series(fig, s, _x_range(df), unit="")
    _x_axis(fig, log2_x, df["D"].dropna())
    fig.update_yaxes(title_text="test accuracy (fraction correct)", tickformat=".0%")
    fig.update_layout(legend=LEGEND_RIGHT)
    return fig


def time_figure(df: pd.DataFrame, *, log2_x: bool = False, title: str | None = None) -> go.Figure:
    """Training and testing time vs D side by side (log y): mean over trials, ± std band; methods
    without D as horizontal lines. Times include the feature mapping."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("training time (fit, mapping included)",
                                                        "testing time (predict, mapping included)"),
                        horizontal_spacing=0.2)  # room for the right panel's tick labels and axis title
    span = _x_range(df)
    for col, (column, phase) in enumerate(PHASES.items(), start=1):
        s = summarize_by_D(df, column)
        _add_series(fig, s, span, scale=1.0, row=1, col=col, showlegend=col == 1, log_y=True, unit=" s")
        _x_axis(fig, log2_x, df["D"].dropna(), row=1, col=col)
        fig.update_yaxes(type="log", title_text=f"{phase} time (s, log scale)", row=1, col=col,
                         **log_ticks(np.r_[s["mean"] + s["std"], s["mean"]]))
    fig.update_layout(template=TEMPLATE, height=500, title_text=title or "Training and testing time vs D",
                      legend=LEGEND_RIGHT)
    fig.update_annotations(font_size=FONT_SIZE)
    return fig


def estimate_figure(estimates: pd.DataFrame, *, log2_x: bool = False) -> go.Figure:
    """Estimated training time per method vs D before a run (columns method, label, D, seconds;
    D NaN for methods without random features), log y."""
    if estimates.empty:
        raise ValueError("No estimates to draw.")
    s = estimates.assign(mean=estimates["seconds"], std=0.0)
    fig = new_figure("Estimated training time per fit (before running; rough)", height=460)
    _add_series(fig, s, _x_range(estimates), log_y=True, unit=" s")
    _x_axis(fig, log2_x, estimates["D"].dropna())
    fig.update_yaxes(type="log", title_text="estimated seconds per fit (log scale)", **log_ticks(estimates["seconds"]))
    fig.update_layout(legend=LEGEND_RIGHT)
    return fig


def summary_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (method, D): accuracy mean / std, mean train and test seconds, C, trials."""
    acc = summarize_by_D(df, "accuracy")
    tr = summarize_by_D(df, "train_seconds")
    te = summarize_by_D(df, "test_seconds")
    out = acc.rename(columns={"mean": "accuracy", "std": "accuracy std", "n_trials": "trials"})
    out["train s"] = tr["mean"].to_numpy()
    out["test s"] = te["mean"].to_numpy()
    if "C" in df.columns:
        out["C"] = df.groupby(["method", "label", "D"], dropna=False, sort=False)["C"].first().to_numpy()
    return out[["label", "method", "D", "accuracy", "accuracy std", "train s", "test s", *(["C"] if "C" in out else []),
                "trials"]]


def classifier_note(summary: pd.DataFrame, n_train: int) -> str:
    """The Classifiers page's "what to notice" from its summary table (:func:`summary_table`): the best
    random-feature model against the exact kernel SVM, in accuracy and in measured training time, and the
    best model overall; the paper's claim is stated as the paper's."""
    exact = summary[summary["method"] == "kernel_svm"]
    rf = summary[summary["D"].notna()]
    best_all = summary.loc[summary["accuracy"].idxmax()]
    parts = []
    if len(exact) and len(rf):
        svm = exact.iloc[0]
        best = rf.loc[rf["accuracy"].idxmax()]
        gap = (best["accuracy"] - svm["accuracy"]) * 100
        speed = svm["train s"] / best["train s"]
        when = (f"trains {speed:.2g}× faster" if speed >= 1.05 else f"trains {1 / speed:.2g}× slower"
                if speed <= 1 / 1.05 else "trains about as fast")
        parts.append(f"On {n_train:,} training points the best random-feature model ({best['label']}, "
                     f"D = {int(best['D']):,}) scores {best['accuracy']:.1%}, {gap:+.1f} points against the kernel "
                     f"SVM's {svm['accuracy']:.1%}, and {when} (measured this run).")
    parts.append(f"Most accurate here: {best_all['label']}"
                 + (f" at D = {int(best_all['D']):,}" if pd.notna(best_all["D"]) else "")
                 + f" ({best_all['accuracy']:.1%}).")
    parts.append("The paper finds the linear model on par with the kernel SVM at D = 16d and faster at large n: the "
                 "kernel SVM pays for an n × n Gram matrix, the linear model for n × D features, so the time ratio "
                 "moves in the linear model's favour as n grows. Small n gives noisy accuracies.")
    return " ".join(parts)
