"""Compositional kernels: a skeleton of base kernels and dual activations, its Gram matrix, and its random features."""
import streamlit as st

from rkapp import chart, escape_markdown, formula, guarded, lead, notice, page, persistent_widget, sidebar, table
from rkapp.layout import fit_formula
from rkapp.views import ViewRun, reproduce_view, run_view
from rkcore.views import compositional as ck

page("Compositional kernels",
     "A computation skeleton builds a kernel like a network builds a function (base kernels at the inputs, dual "
     "activations σ̂ inside); its random features follow the same graph (Daniely et al. 2017, Algorithm 1).")
spec = sidebar(kernel=False, distributions=None, D=False, seed=True)

c1, c2, c3, c4 = st.columns(4)
with c1:
    preset = persistent_widget(st.selectbox, "Skeleton", key="ck_preset", options=list(ck.PRESETS),
                               format_func=lambda k: ck.PRESETS[k].label)
with c2:
    D_max = persistent_widget(st.select_slider, "Largest D", key="ck_Dmax", options=ck.D_MAX_OPTIONS)
with c3:
    trials = persistent_widget(st.number_input, "Trials per D", key="ck_trials")
with c4:
    D_gram = persistent_widget(st.select_slider, "D for the Gram view", key="ck_Dgram", options=ck.GRAM_D_OPTIONS)
c5, c6 = st.columns([2, 1])
with c5:
    modes = persistent_widget(st.multiselect, "De-duplication", key="ck_modes",
                              options=list(ck.DEDUP_MODES), format_func=ck.DEDUP_LABELS.get)
with c6:
    metric = persistent_widget(st.selectbox, "Error measure", key="ck_metric",
                               options=list(ck.METRIC_LABELS), format_func=ck.METRIC_LABELS.get)
st.caption(ck.PRESETS[preset].description)

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
formula(ck.REAL_FEATURE_LATEX, "Complex base features of modulus 1 keep products bounded; the stored features are real.")


def render_gram(run: ViewRun) -> None:
    r: ck.CompositionalGram = run.result
    skel = r.skeleton
    chart(ck.skeleton_figure(skel), skel.describe(), "Skeleton nodes",
          caption="Squares: input nodes (base kernels); circles: dual activations. Hover a node for its "
                  "formula. Complexity: expected calls of Algorithm 1 per feature (paper, eq. 11).")
    st.caption(f"{escape_markdown(run.data.description)} n = {r.n} points, d = {r.d} columns ({spec.normalization}-normalized rows, then "
               "standardized columns" + (f"; the last column binned into {r.codes} quantile codes "
                                         "for the categorical node" if r.codes is not None else "") + ").")
    if len(skel.nodes) <= 12:
        st.latex(r"\begin{aligned}" + skel.latex().replace(" = ", " &= ") + r"\end{aligned}")
    for key in sorted({nd.kernel for nd in skel.input_nodes}):
        formula(ck.BASE_KERNELS[key].latex, f"Base kernel: {ck.BASE_KERNELS[key].label}.")
        formula(ck.BASE_KERNELS[key].feature_latex, "Its random features (paper, Section 4).")

    b = r.block
    chart(ck.gram_heatmaps(r.K_small, r.K_hat_small, block=b, n=r.n, titles=("Exact compositional K", f"Random features K̂, D = {D_gram} (de-duplicated)")),
          r.long(), "Compositional Gram matrices",
          caption=f"One shared color scale. Relative Frobenius error {r.relative_error:.3f}; "
                  f"seed {spec.seed}." + (f" Drawn averaged over {b}×{b} blocks (at most {ck.HEATMAP_SIDE} "
                                          "cells per side); the error uses every entry." if b > 1 else ""))
    with st.expander("The first sampled features"):
        table(r.features, "Sampled compositional features",
              caption="Each feature is a product of base features along random paths; probability = its exact "
                      "chance under Algorithm 1, weight = its Des Raj weight.")


def render_curves(run: ViewRun) -> None:
    df = run.result
    with lead():  # the chart the note describes is the main one: both in the first screen, above the skeleton
        chart(ck.compositional_error_figure(df, metric), df, "Compositional error vs D",
              caption="Line: median over trials; band: 10–90%; dashed: 1/√D through the first point. "
                      "Same seeds for every mode.")
    summary = ck.compositional_summary(df, metric)
    notice(ck.compositional_note(summary, df))  # its lead right above the chart it describes
    table(summary, "Compositional error summary", caption="Median error per D and mode.",
          column_config={k: st.column_config.NumberColumn(format="%.4g") for k in summary.columns if k != "D"})
    chart(ck.draws_figure(df), df[df.metric == "draws_per_feature"], "Draws per stored feature",
          caption="De-duplication runs Algorithm 1 more often than D: every repeat is merged, not stored.")


# the Gram view and the curves apart: "D for the Gram view" redraws one estimate, not the curves too
curve_settings = dict(ck_preset=preset, ck_Dmax=D_max, ck_trials=trials, ck_modes=tuple(modes))
run_view(ck.COMPOSITIONAL_GRAM, spec, render_gram, reproduce_box=False, ck_preset=preset, ck_Dgram=D_gram)
run_view(ck.COMPOSITIONAL_CURVES, spec, render_curves, reproduce_box=False, **curve_settings)

with st.expander("The dual activations"):
    with guarded("the activations"):
        chart(ck.activation_figure(ck.activation_curves()), ck.activation_table(), "Dual activations",
              caption="All satisfy σ̂(1) = 1 (normalized kernels) and σ̂'(1) = 1; the CSV lists the first coefficients a_n.")
        st.latex(fit_formula(r",\quad ".join(f"\\text{{{a.label.split(' (')[0]}}}: {a.latex}"
                                              for a in ck.ACTIVATIONS.values())))

reproduce_view(ck.COMPOSITIONAL_CURVES, spec, shown=dict(ck_Dgram=D_gram, ck_metric=metric),
               **curve_settings)  # last: its export holds every chart
