r"""Figures of the Distributions and variance page: error vs D by weight distribution, exact vs
empirical variance of the RK estimate, and the paper's Table 1 view.

Data behind the figures
-----------------------
* :func:`rkcore.experiments.error_study` output (one row per method, D, trial, metric) feeds
  :func:`error_vs_D_figure` and :func:`table1_view`.
* :func:`empirical_pair_variance` measures, for a few fixed pairs (x, y), the variance of
  :math:`\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle` over independent RK maps;
  :func:`exact_pair_variance` gives :math:`\mathbb{V} = (\mathbb{E}[f^2] - K^2)/D` from
  :func:`rkcore.variance.rk_variance`, and :func:`variance_figure` draws both.
* :func:`variance_by_distribution` averages the exact per-feature variance over pairs
  (Lemma 4: Rademacher, with the smallest fourth moment, is lowest at every pair).
"""
from __future__ import annotations

from numbers import Integral

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy.stats import chi2

from ..distributions import DISTRIBUTIONS, get_distribution
from ..registry import KernelSpec, make_map
from ..variance import VARIANCE_KERNELS, rk_variance
from ..views import dense
from .style import DISTRIBUTION_COLORS, FONT_SIZE, PALETTE, TEMPLATE, log_ticks, new_figure

#: SCRK has no distribution of its own to take a color from: black, dashed.
SCRK_COLOR = "#000000"
#: Temporary memory for one chunk of random features in :func:`empirical_pair_variance`.
CHUNK_BYTES = 32 * 2**20


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"


def method_color(map_key: str, distribution: str | None) -> str:
    """RK methods take their distribution's color (same on every page); SCRK is black."""
    if map_key == "rk" and distribution in DISTRIBUTION_COLORS:
        return DISTRIBUTION_COLORS[distribution]
    return SCRK_COLOR if map_key == "scrk" else PALETTE[5]


# ============================================================================ data behind the charts
def select_pairs(K: np.ndarray) -> pd.DataFrame:
    """Three fixed pairs to follow: the off-diagonal pair with the largest |K|, one at the median |K|,
    and the diagonal pair (x, x) with the largest K(x, x). Columns: i, j, kernel_value, label."""
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    if n < 2:
        raise ValueError(f"Following pairs needs at least 2 points; got n = {n}.")
    iu, ju = np.triu_indices(n, k=1)
    off = np.abs(K[iu, ju])
    order = np.argsort(off, kind="stable")
    top, med = order[-1], order[order.size // 2]
    diag = int(np.argmax(np.diag(K)))
    rows = [(int(iu[top]), int(ju[top]), "largest |K|"), (int(iu[med]), int(ju[med]), "median |K|"),
            (diag, diag, "diagonal, largest K(x, x)")]
    return pd.DataFrame([(i, j, float(K[i, j]), f"pair ({i}, {j}): {what}") for i, j, what in rows],
                        columns=["i", "j", "kernel_value", "label"])


def empirical_pair_variance(X, pairs: pd.DataFrame, spec: KernelSpec, distributions, n_components_list,
                            n_trials: int, random_state: int = 0) -> pd.DataFrame:
    r"""Variance of the RK estimate over ``n_trials`` independent maps, for fixed pairs and each D.

    RK features are i.i.d. across the D columns (Algorithm 1), so T maps with D features are
    T disjoint blocks of D columns of one map with T·max(D) features: trial t's estimate is
    :math:`\frac{1}{D}\sum_{s \in \text{block } t} K(\mathbf{x},\boldsymbol\omega_s)K(\mathbf{y},\boldsymbol\omega_s)`.
    The sample variance (ddof = 1) over the T estimates comes with a 95% interval
    :math:`[(T-1)s^2/\chi^2_{0.975,T-1},\ (T-1)s^2/\chi^2_{0.025,T-1}]`, exact for normal
    estimates (a sum of D i.i.d. terms is close to normal once D is in the tens).

    Returns one row per (pair, distribution, D): pair (label), i, j, distribution, D,
    n_trials, kernel_value, mean_estimate, variance, var_low, var_high.
    """
    if not isinstance(n_trials, Integral) or isinstance(n_trials, bool) or n_trials < 2:
        raise ValueError(f"n_trials must be an integer >= 2 (a variance needs two estimates), got {n_trials!r}.")
    D_list = sorted({int(D) for D in n_components_list})
    if not D_list or D_list[0] < 1:
        raise ValueError(f"n_components_list must hold integers >= 1, got {list(n_components_list)!r}.")
    X = dense(X)
    rows = np.unique(np.concatenate([pairs["i"].to_numpy(), pairs["j"].to_numpy()]))
    where = {r: k for k, r in enumerate(rows)}
    a = np.array([where[i] for i in pairs["i"]])
    b = np.array([where[j] for j in pairs["j"]])
    Xp = X[rows]
    D_max = D_list[-1]
    # trials per chunk so that one chunk's features (and the map's temporaries, up to d per
    # feature for the all-subsets kernel) stay within CHUNK_BYTES
    per_trial = 8 * D_max * max(len(rows), 1) * (X.shape[1] + 2)
    chunk = int(max(1, min(n_trials, CHUNK_BYTES // per_trial)))
    lo_q, hi_q = chi2.ppf(0.975, n_trials - 1), chi2.ppf(0.025, n_trials - 1)
    out = []
    seeds = np.random.SeedSequence(int(random_state))
    for dist, seq in zip(distributions, seeds.spawn(len(distributions))):
        get_distribution(dist)
        products = []  # per chunk: (pairs, trials_in_chunk, D_max) products K(x, w_s) K(y, w_s)
        for c, chunk_seq in zip(range(0, n_trials, chunk), seq.spawn((n_trials + chunk - 1) // chunk)):
            t = min(chunk, n_trials - c)
            seed = int(chunk_seq.generate_state(1, dtype=np.uint32)[0])
            Z = make_map("rk", spec, t * D_max, dist, seed).fit(Xp).transform(Xp)
            Z = dense(Z) * np.sqrt(t * D_max)  # undo the 1/sqrt(D) scaling: raw K(x, w_s)
            products.append((Z[a] * Z[b]).reshape(len(a), t, D_max))
        f = np.concatenate(products, axis=1)  # (pairs, trials, D_max)
        for D in D_list:
            est = f[:, :, :D].mean(axis=2)  # trial t's estimate with D features
            var = est.var(axis=1, ddof=1)
            out.append(pd.DataFrame({
                "pair": pairs["label"].to_numpy(), "i": pairs["i"].to_numpy(), "j": pairs["j"].to_numpy(),
                "distribution": dist, "D": D, "n_trials": n_trials,
                "kernel_value": pairs["kernel_value"].to_numpy(), "mean_estimate": est.mean(axis=1),
                "variance": var, "var_low": (n_trials - 1) * var / lo_q, "var_high": (n_trials - 1) * var / hi_q}))
    return pd.concat(out, ignore_index=True)


def exact_pair_variance(X, pairs: pd.DataFrame, spec: KernelSpec, distributions, n_components) -> pd.DataFrame:
    """Exact Var<Z(x), Z(y)> = (E[f^2] - K^2) / D for the pairs, per distribution and D
    (:func:`rkcore.variance.rk_variance`). Kernels of :data:`rkcore.variance.VARIANCE_KERNELS` only.

    ``n_components`` is a sequence of D (may be real-valued for smooth lines). Columns: pair,
    i, j, distribution, D, variance.
    """
    if spec.name not in VARIANCE_KERNELS:
        raise ValueError(f"The exact variance covers the kernels {', '.join(VARIANCE_KERNELS)}; got {spec.name!r}.")
    X = dense(X)
    Xa, Xb = X[pairs["i"].to_numpy()], X[pairs["j"].to_numpy()]
    D = np.asarray(n_components, dtype=np.float64)
    out = []
    for dist in distributions:
        per_feature = rk_variance(Xa, Xb, 1, kernel=spec.name, degree=spec.degree, distribution=dist)
        out.append(pd.DataFrame({
            "pair": np.repeat(pairs["label"].to_numpy(), D.size), "i": np.repeat(pairs["i"].to_numpy(), D.size),
            "j": np.repeat(pairs["j"].to_numpy(), D.size), "distribution": dist, "D": np.tile(D, len(pairs)),
            "variance": np.repeat(per_feature, D.size) / np.tile(D, len(pairs))}))
    return pd.concat(out, ignore_index=True)


def variance_by_distribution(X, spec: KernelSpec, distributions, *, max_pairs: int = 2000,
                             random_state: int = 0) -> pd.DataFrame:
    """Exact per-feature variance D·Var<Z(x), Z(y)> over pairs i < j (a seeded sample of at most
    ``max_pairs``), per distribution: mean, median, and the fraction of pairs where the
    distribution's variance is at least Rademacher's (Lemma 4 says: all of them).

    Columns: distribution, label, fourth_moment, mean, median, ratio_to_rademacher (of the means),
    at_least_rademacher, n_pairs.
    """
    if spec.name not in VARIANCE_KERNELS:
        raise ValueError(f"The exact variance covers the kernels {', '.join(VARIANCE_KERNELS)}; got {spec.name!r}.")
    X = dense(X)
    n = X.shape[0]
    i, j = np.triu_indices(n, k=1)
    if i.size > max_pairs:
        keep = np.sort(np.random.RandomState(random_state).choice(i.size, size=max_pairs, replace=False))
        i, j = i[keep], j[keep]
    per = {dist: rk_variance(X[i], X[j], 1, kernel=spec.name, degree=spec.degree, distribution=dist)
           for dist in dict.fromkeys(["rademacher", *distributions])}
    base = per["rademacher"]
    rows = []
    for dist in distributions:
        v = per[dist]
        # Lemma 4 holds pointwise; allow rounding in E[f^2] - K^2 (relative 1e-9 of E[f^2]-sized terms)
        tol = 1e-9 * np.maximum(np.abs(base), np.abs(v)) + 1e-300
        rows.append({"distribution": dist, "label": DISTRIBUTIONS[dist].label,
                     "fourth_moment": DISTRIBUTIONS[dist].fourth_moment, "mean": float(v.mean()),
                     "median": float(np.median(v)), "ratio_to_rademacher": float(v.mean() / base.mean()),
                     "at_least_rademacher": float(np.mean(v >= base - tol)), "n_pairs": int(i.size)})
    return pd.DataFrame(rows)


def table1_view(study: pd.DataFrame, d: int, metric: str = "mean_abs_error") -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's Table 1 layout: one row per method, one column per D, cells "mean ± std".

    ``study`` is :func:`rkcore.experiments.error_study` output; the std is numpy's (ddof = 0),
    as in the paper. Returns (display table of strings, tidy numbers: method, map,
    distribution, D, multiple, mean, std, n_trials, lowest — True for the lowest mean at that D).
    """
    sub = study[study["metric"] == metric]
    if sub.empty:
        raise ValueError(f"No rows with metric {metric!r} in the study.")
    g = sub.groupby(["method", "map", "distribution", "D"], sort=False)["value"]
    tidy = g.agg(mean="mean", n_trials="count").reset_index()
    tidy["std"] = g.std(ddof=0).to_numpy()
    tidy["multiple"] = tidy["D"] / d
    tidy["lowest"] = tidy["mean"] == tidy.groupby("D")["mean"].transform("min")
    tidy = tidy[["method", "map", "distribution", "D", "multiple", "mean", "std", "n_trials", "lowest"]]

    def header(D: int) -> str:
        mult = D / d
        return f"D = {mult:g}d = {D}" if float(mult).is_integer() else f"D = {D}"

    cells = tidy.assign(cell=[f"{m:.2e} ± {s:.2e}" for m, s in zip(tidy["mean"], tidy["std"])],
                        column=[header(D) for D in tidy["D"]])
    order = list(dict.fromkeys(tidy["method"]))
    wide = cells.pivot(index="method", columns="column", values="cell").reindex(order)
    wide = wide[[header(D) for D in sorted(tidy["D"].unique())]]
    wide.columns.name = None
    return wide.reset_index().rename(columns={"method": "Method"}), tidy


# ============================================================================ figures
def error_vs_D_figure(study: pd.DataFrame, metric: str = "mean_abs_error", *, title: str | None = None) -> go.Figure:
    """Error vs D per method, log-log: mean over trials (line) and 10-90% of the trials (band),
    with a 1/√D guide through the first point of the first method."""
    sub = study[study["metric"] == metric]
    if sub.empty:
        raise ValueError(f"No rows with metric {metric!r} in the study.")
    n_trials = int(sub["trial"].nunique())
    fig = new_figure(title or "Mean absolute error vs D, by weight distribution", height=540)
    first = None
    for (method, map_key, dist), g in sub.groupby(["method", "map", "distribution"], sort=False):
        q = g.groupby("D")["value"].agg(mean="mean", lo=lambda v: v.quantile(0.1), hi=lambda v: v.quantile(0.9))
        q = q.reset_index()
        color = method_color(map_key, dist)
        x = q["D"].to_numpy(float)
        fig.add_trace(go.Scatter(x=np.concatenate([x, x[::-1]]), y=np.concatenate([q["hi"], q["lo"][::-1]]),
                                 mode="lines", fill="toself", fillcolor=_rgba(color, 0.15), line=dict(width=0),
                                 hoverinfo="skip", name=f"{method}: 10–90% of trials", legendgroup=method,
                                 showlegend=False))
        fig.add_trace(go.Scatter(x=x, y=q["mean"], mode="lines+markers", name=method, legendgroup=method,
                                 line=dict(color=color, width=3, dash="dash" if map_key == "scrk" else None),
                                 marker=dict(size=8),
                                 hovertemplate="D=%{x}<br>mean |E|=%{y:.3g}<extra>" + method + "</extra>"))
        if first is None:
            first = (x, float(q["mean"].iloc[0]))
    x, y0 = first
    fig.add_trace(go.Scatter(x=x, y=y0 * np.sqrt(x[0] / x), mode="lines", name="∝ 1/√D (guide)",
                             line=dict(color="#777", width=2, dash="dot")))
    D_values = sorted(sub["D"].unique())
    fig.update_xaxes(type="log", title_text="D (random features, log scale)", tickvals=D_values,
                     ticktext=[str(D) for D in D_values])
    g = sub.groupby(["method", "D"])["value"]
    fig.update_yaxes(type="log", title_text="mean |K̂ − K| over pairs (log scale)",
                     **log_ticks(np.r_[g.quantile(0.1), g.quantile(0.9)]))
    fig.update_layout(legend=dict(x=0.99, xanchor="right", y=0.99),
                      title_text=(title or "Mean absolute error vs D, by weight distribution")
                      + f"<br><sup>line: mean of {n_trials} trials · band: 10–90% of the trials</sup>")
    return fig


def variance_figure(empirical: pd.DataFrame, exact: pd.DataFrame | None = None) -> go.Figure:
    """One panel per pair: the exact variance Var/D (lines) and the empirical variance over trials
    (markers with 95% intervals), per distribution, log-log."""
    if empirical.empty:
        raise ValueError("No empirical variances to draw.")
    labels = list(dict.fromkeys(empirical["pair"]))
    fig = make_subplots(rows=1, cols=len(labels), subplot_titles=labels, horizontal_spacing=0.07)
    for col, label in enumerate(labels, start=1):
        emp = empirical[empirical["pair"] == label]
        for dist, g in emp.groupby("distribution", sort=False):
            color = DISTRIBUTION_COLORS.get(dist, PALETTE[5])
            name = DISTRIBUTIONS[dist].label if dist in DISTRIBUTIONS else dist
            if exact is not None:
                ex = exact[(exact["pair"] == label) & (exact["distribution"] == dist)].sort_values("D")
                fig.add_trace(go.Scatter(x=ex["D"], y=ex["variance"], mode="lines", name=f"{name}: exact Var/D",
                                         legendgroup=f"exact_{dist}", showlegend=col == 1,
                                         line=dict(color=color, width=2.5),
                                         hovertemplate="D=%{x:.0f}<br>exact Var=%{y:.3g}<extra>" + name + "</extra>"),
                              row=1, col=col)
            g = g.sort_values("D")
            fig.add_trace(go.Scatter(
                x=g["D"], y=g["variance"], mode="markers", name=f"{name}: empirical ({int(g['n_trials'].iloc[0])} maps)",
                legendgroup=f"emp_{dist}", showlegend=col == 1,
                marker=dict(color=color, size=10, symbol="circle-open", line=dict(width=2.5)),
                error_y=dict(type="data", symmetric=False, array=g["var_high"] - g["variance"],
                             arrayminus=g["variance"] - g["var_low"], color=color, thickness=1.5, width=4),
                hovertemplate="D=%{x}<br>empirical Var=%{y:.3g}<extra>" + name + "</extra>"), row=1, col=col)
        D_values = sorted(emp["D"].unique())
        fig.update_xaxes(type="log", title_text="D (log scale)", tickvals=D_values,
                         ticktext=[str(int(D)) for D in D_values], row=1, col=col)
        shown = [emp["var_low"], emp["var_high"]] + ([] if exact is None else
                                                     [exact.loc[exact["pair"] == label, "variance"]])
        fig.update_yaxes(type="log", row=1, col=col, **log_ticks(np.concatenate([np.asarray(v) for v in shown])),
                         title_text="Var ⟨Z(x), Z(y)⟩ (log scale)" if col == 1 else None)
    fig.update_layout(template=TEMPLATE, height=520,
                      title_text="Variance of the estimate for three fixed pairs: exact (lines) vs over random maps "
                                 "(markers, 95% interval)",
                      legend=dict(orientation="h", yanchor="top", y=-0.22, x=0))
    fig.update_annotations(font_size=FONT_SIZE)
    return fig


def variance_by_distribution_figure(summary: pd.DataFrame, kernel_label: str = "") -> go.Figure:
    """Bar per distribution: mean exact per-feature variance D·Var over pairs, labeled with
    the ratio to Rademacher and the fourth moment E[ω⁴]."""
    if summary.empty:
        raise ValueError("No variances to draw.")
    s = summary.sort_values("fourth_moment")
    colors = [DISTRIBUTION_COLORS.get(k, PALETTE[5]) for k in s["distribution"]]
    text = [f"×{r:.2f}" for r in s["ratio_to_rademacher"]]
    fig = go.Figure(go.Bar(
        x=[f"{lab}<br>E[ω⁴] = {m:g}" for lab, m in zip(s["label"], s["fourth_moment"])], y=s["mean"],
        marker_color=colors, text=text, textposition="outside", cliponaxis=False, name="D · Var",
        hovertemplate="%{x}<br>mean D·Var=%{y:.3g}<extra></extra>"))
    n_pairs = int(s["n_pairs"].iloc[0])
    suffix = f", {kernel_label}" if kernel_label else ""
    fig.update_layout(template=TEMPLATE, height=480, showlegend=False,
                      title_text=f"Exact variance by distribution<br><sup>mean over {n_pairs:,} pairs{suffix}; "
                                 "labels: ratio to Rademacher</sup>",
                      yaxis_title="D · Var⟨Z(x), Z(y)⟩", xaxis_title="weight distribution", bargap=0.35)
    fig.update_xaxes(tickangle=0)
    top = float(s["mean"].max())
    fig.update_yaxes(range=[0, top * 1.18], exponentformat="power")
    return fig
