"""Compositional kernels: a skeleton of base kernels and dual activations, its Gram matrix, and its random features."""
import numpy as np
import pandas as pd
import streamlit as st
from threadpoolctl import threadpool_limits

from rkapp import (
    ViewSpec, chart, choices, escape_markdown, formula, guarded, largest_fitting, lead, load_data, notice, page,
    persistent_widget, reproduce, run_or_wait, sidebar, table,
)
from rkapp.guard import admitted_run
from rkapp.layout import fit_formula
from rkcore.studies.costs import compositional_cost
from rkcore.teaching.compositional import (
    ACTIVATIONS, BASE_KERNELS, DEDUP_MODES, PRESETS, REAL_FEATURE_LATEX, CompositionalFeatures, activation_curves,
    activation_table, compositional_error_curve, describe_features, preset_skeleton,
)
from rkcore.figures.compositional import (
    DEDUP_LABELS, activation_figure, compositional_error_figure, compositional_note, compositional_summary,
    draws_figure, skeleton_figure,
)
from rkcore.figures.foundations import METRIC_LABELS
from rkcore.figures.gram import gram_heatmaps
from rkcore.base.arrays import dense
from rkcore.base.limits import HEATMAP_SIDE
from rkcore.studies.gram import block_average, gram_long

D_MAX_OPTIONS, GRAM_D_OPTIONS = list(choices("ck_Dmax")), list(choices("ck_Dgram"))

page("Compositional kernels",
     "A computation skeleton builds a kernel like a network builds a function (base kernels at the inputs, dual "
     "activations σ̂ inside); its random features follow the same graph (Daniely et al. 2017, Algorithm 1).")
view = sidebar(kernel=False, distributions=None, D=False, seed=True)

c1, c2, c3, c4 = st.columns(4)
with c1:
    preset = persistent_widget(st.selectbox, "Skeleton", key="ck_preset", options=list(PRESETS),
                               format_func=lambda k: PRESETS[k].label)
with c2:
    D_max = persistent_widget(st.select_slider, "Largest D", key="ck_Dmax", options=D_MAX_OPTIONS)
with c3:
    trials = persistent_widget(st.number_input, "Trials per D", key="ck_trials")
with c4:
    D_gram = persistent_widget(st.select_slider, "D for the Gram view", key="ck_Dgram", options=GRAM_D_OPTIONS)
c5, c6 = st.columns([2, 1])
with c5:
    modes = persistent_widget(st.multiselect, "De-duplication", key="ck_modes",
                              options=list(DEDUP_MODES), format_func=DEDUP_LABELS.get)
with c6:
    metric = persistent_widget(st.selectbox, "Error measure", key="ck_metric",
                               options=list(METRIC_LABELS), format_func=METRIC_LABELS.get)
st.caption(PRESETS[preset].description)

formula(r"k_v(\mathbf{x},\mathbf{y}) = \hat\sigma_v\Big(\frac{1}{|\mathrm{in}(v)|}\sum_{u\in \mathrm{in}(v)} "
        r"k_u(\mathbf{x},\mathbf{y})\Big),\qquad \hat\sigma_v(\rho) = \sum_{n\ge 0} a_n \rho^n,\ a_n \ge 0,\ \sum_n a_n = 1",
        "The recurrence over the skeleton (paper, Section 5).")
formula(r"\psi_v = \prod_{j=1}^{n} \psi_{u_j},\quad n \sim (a_n),\ u_j \sim \mathcal{U}(\mathrm{in}(v))"
        r"\qquad(\psi_v = \text{a base feature at an input node})")
formula(r"\hat k = \sum_{j=1}^{D} w_j\,\phi_j(\mathbf{x})\phi_j(\mathbf{y}),\qquad "
        r"w_j = \tfrac1D \text{ (i.i.d.)},\qquad w_j = \frac{(1 - \sum_{i<j} p_i) + (D - j)\,p_j}{D} \text{ (de-duplicated)}",
        "Algorithm 1, and the two weightings: plain i.i.d. draws, or distinct features in order of first appearance "
        "with p_j the exact probability of feature j (Des Raj's estimator: unbiased with exactly D features). "
        "The paper's literal merge, weight = multiplicity / draws, is slightly biased because the number of draws "
        "depends on when the D-th new feature shows up.")
formula(REAL_FEATURE_LATEX, "Complex base features of modulus 1 keep products bounded; the stored features are real.")


@st.cache_data(show_spinner="Preparing the skeleton…", max_entries=16)
def prepared(view: ViewSpec, preset: str):
    X = dense(load_data(view).X)
    skel, Xp = preset_skeleton(preset, X)
    with threadpool_limits(limits=1, user_api="blas"):  # small products: one BLAS thread avoids oversubscription
        K = skel.kernel(Xp)
    return skel, Xp, K


@st.cache_data(show_spinner="Drawing random features…", max_entries=16)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def gram_estimate(view: ViewSpec, preset: str, D: int) -> tuple[np.ndarray, pd.DataFrame]:
    skel, Xp, _ = prepared(view, preset)
    with threadpool_limits(limits=1, user_api="blas"):
        est = CompositionalFeatures(skel, D, dedup="unbiased", random_state=view.seed).fit(Xp)
        return est.kernel_estimate(Xp), describe_features(est, 12)


@st.cache_data(show_spinner="Computing the error curves…", max_entries=16)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def error_curves(view: ViewSpec, preset: str, D_list: tuple[int, ...], trials: int, modes: tuple[str, ...]) -> pd.DataFrame:
    skel, Xp, _ = prepared(view, preset)
    with threadpool_limits(limits=1, user_api="blas"):
        return compositional_error_curve(Xp, skel, list(D_list), trials=trials, seed=view.seed, dedup_modes=modes)


D_list = tuple(int(D) for D in 2 ** np.arange(4, int(np.log2(D_max)) + 1))

with guarded("the compositional kernel"):
    data = load_data(view)
    n, d = data.X.shape

    def cost_at(s: int):
        return compositional_cost(s, d, D_list, int(trials), len(modes), int(D_gram), n_nodes=2 * d + 2)

    run_or_wait(cost_at(n), key="ck", params=(view, preset, D_list, int(trials), tuple(modes), int(D_gram)),
                what="the compositional kernel and its error curves",
                fits=f"With these settings n up to {largest_fitting(cost_at, n):,} fits; or lower the largest D "
                     "or the trials.")
    skel, Xp, K = prepared(view, preset)
    with lead():  # the main chart first, above the settings
        chart(skeleton_figure(skel), skel.describe(), "Skeleton nodes",
              caption="Squares: input nodes (base kernels); circles: dual activations. Hover a node for its "
                      "formula. Complexity: expected calls of Algorithm 1 per feature (paper, eq. 11).")
    st.caption(f"{escape_markdown(data.description)} n = {n} points, d = {d} columns ({view.normalization}-normalized rows, then "
               "standardized columns" + (f"; the last column binned into {int(Xp[:, -1].max()) + 1} quantile codes "
                                         "for the categorical node" if PRESETS[preset].n_categories else "") + ").")
    if len(skel.nodes) <= 12:
        st.latex(r"\begin{aligned}" + skel.latex().replace(" = ", " &= ") + r"\end{aligned}")
    for key in sorted({nd.kernel for nd in skel.input_nodes}):
        formula(BASE_KERNELS[key].latex, f"Base kernel: {BASE_KERNELS[key].label}.")
        formula(BASE_KERNELS[key].feature_latex, "Its random features (paper, Section 4).")

    K_hat, features = gram_estimate(view, preset, int(D_gram))
    K_small, b = block_average(K, max_side=HEATMAP_SIDE)
    K_hat_small, _ = block_average(K_hat, max_side=HEATMAP_SIDE)
    chart(gram_heatmaps(K_small, K_hat_small, block=b, n=K.shape[0], titles=("Exact compositional K", f"Random features K̂, D = {D_gram} (de-duplicated)")),
          gram_long(K_small, K_hat_small), "Compositional Gram matrices",
          caption=f"One shared color scale. Relative Frobenius error {np.linalg.norm(K_hat - K) / np.linalg.norm(K):.3f}; "
                  f"seed {view.seed}." + (f" Drawn averaged over {b}×{b} blocks (at most {HEATMAP_SIDE} "
                                          "cells per side); the error uses every entry." if b > 1 else ""))
    with st.expander("The first sampled features"):
        table(features, "Sampled compositional features",
              caption="Each feature is a product of base features along random paths; probability = its exact "
                      "chance under Algorithm 1, weight = its Des Raj weight.")

    if not modes:
        raise ValueError("Choose at least one de-duplication mode to draw the error curves.")
    df = error_curves(view, preset, D_list, int(trials), tuple(modes))
    chart(compositional_error_figure(df, metric), df, "Compositional error vs D",
          caption="Line: median over trials; band: 10–90%; dashed: 1/√D through the first point. "
                  "Same seeds for every mode.")
    summary = compositional_summary(df, metric)
    notice(compositional_note(summary, df), here=True)  # under the chart it describes, not under the skeleton
    table(summary, "Compositional error summary", caption="Median error per D and mode.",
          column_config={k: st.column_config.NumberColumn(format="%.4g") for k in summary.columns if k != "D"})
    chart(draws_figure(df), df[df.metric == "draws_per_feature"], "Draws per stored feature",
          caption="De-duplication runs Algorithm 1 more often than D: every repeat is merged, not stored.")

with st.expander("The dual activations"):
    with guarded("the activations"):
        chart(activation_figure(activation_curves()), activation_table(), "Dual activations",
              caption="All satisfy σ̂(1) = 1 (normalized kernels) and σ̂'(1) = 1; the CSV lists the first coefficients a_n.")
        st.latex(fit_formula(r",\quad ".join(f"\\text{{{a.label.split(' (')[0]}}}: {a.latex}"
                                              for a in ACTIVATIONS.values())))

reproduce("\n".join([
    *[line for line in view.code().splitlines() if "KernelSpec" not in line],
    "from rkcore.teaching.compositional import CompositionalFeatures, compositional_error_curve, preset_skeleton",
    "from rkcore.figures.compositional import compositional_error_figure, compositional_summary",
    "from rkcore.base.arrays import dense",
    "",
    f"skel, Xp = preset_skeleton({preset!r}, dense(X))  # standardizes (and bins the last column if needed)",
    "K = skel.kernel(Xp)",
    f"est = CompositionalFeatures(skel, {int(D_gram)}, dedup='unbiased', random_state={view.seed}).fit(Xp)",
    "K_hat = est.kernel_estimate(Xp)",
    'print(f"relative Frobenius error {np.linalg.norm(K_hat - K) / np.linalg.norm(K):.3f}")',
    f"df = compositional_error_curve(Xp, skel, {list(D_list)}, trials={int(trials)}, seed={view.seed}, "
    f"dedup_modes={tuple(modes)!r})",
    f"print(compositional_summary(df, {metric!r}).to_string(index=False, float_format='%.4g'))  # the page's table",
    f"compositional_error_figure(df, {metric!r}).show()",
]))
