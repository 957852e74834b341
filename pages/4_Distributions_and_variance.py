"""Distributions and variance: which weight distribution gives the most precise RK estimate (Lemma 4, Table 1)."""
import streamlit as st

from rkapp import chart, escape_markdown, formula, guarded, lead, notice, page, persistent_widget, sidebar, table
from rkapp.views import ViewRun, computed, run_view
from rkcore.views import distributions as dv

page("Distributions and variance",
     "Any weight distribution of mean 0 and variance 1 works (Proposition 2); the variance depends on it only "
     "through E[ω⁴], smallest for Rademacher (±1), which Lemma 4 says minimizes the worst-case variance.")
view = sidebar(kernels=dv.ITEMSET_KERNELS, distributions="multi", D=False)

c1, c2, c3, c4 = st.columns([3.6, 2, 2, 2.6])  # room for the four D chips (2d … 16d) at 1280 px
with c1:
    multiples = persistent_widget(st.multiselect, "D as multiples of d", key="dv_mult",
                                  options=[str(m) for m in dv.MULTIPLES], format_func=lambda m: f"{m}d",
                                  help="The paper's Table 1 uses D = 2d, 4d, 8d, 16d.")
with c2:
    trials = persistent_widget(st.select_slider, "Trials (maps per D)", key="dv_trials", options=dv.TRIALS,
                               help="The paper uses 100 trials on 10,000 MovieLens rows.")
with c3:
    var_trials = persistent_widget(st.select_slider, "Maps for the pair variances", key="dv_vtrials",
                                   options=dv.VARIANCE_TRIALS, help="Independent maps behind each empirical variance.")
with c4:
    with_scrk = persistent_widget(st.checkbox, "Include SCRK (ANOVA)", key="dv_scrk",
                                  disabled=not dv.scrk_available(view),
                                  help="The signed circulant map (Rademacher weights, FFT); ANOVA kernels only.")

chosen = dv.chosen_distributions(view)
if len(view.distributions) < 2:
    st.caption(f"Fewer than two distributions chosen in the sidebar: comparing the {len(dv.IID)} i.i.d. ones. Choose "
               "some there to narrow the comparison down, or to add weights drawn orthogonal in blocks.")

formula(r"\mathbb{V}\big[\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle\big] = \frac{\mathbb{E}_{\boldsymbol\omega}\big["
        r"K_{\mathcal{S}}(\mathbf{x},\boldsymbol\omega)^2 K_{\mathcal{S}}(\mathbf{y},\boldsymbol\omega)^2\big] - "
        r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y})^2}{D}",
        "Exact variance of the estimate (rkcore.theory.variance): it falls like 1/D, and E[f²] grows with E[ω⁴].")
formula(r"\sup_{\mathbf{x},\mathbf{y}}\ \mathbb{V}_{\boldsymbol\omega\sim p^*}\big[\langle Z(\mathbf{x}), "
        r"Z(\mathbf{y})\rangle\big] \le \sup_{\mathbf{x},\mathbf{y}}\ \mathbb{V}_{\boldsymbol\omega\sim p}\big["
        r"\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle\big]\quad (11)",
        "Lemma 4: p* = Rademacher; p any distribution with mean 0 and variance 1.")


def study_section(run: ViewRun) -> None:
    r: dv.DistributionStudy = run.result
    st.subheader("Error by distribution (the paper's Table 1 protocol)")
    st.caption(dv.describe(run.spec, r, description=escape_markdown(run.data.description),
                           kernel=escape_markdown(r.kernel_label), dv_mult=multiples, dv_trials=int(trials),
                           dv_scrk=bool(with_scrk)))
    with lead():  # the main chart first, above the settings
        chart(dv.error_vs_D_figure(r.study), r.errors, "Mean absolute error vs D by distribution",
              caption="Each trial is one random map; its error is averaged over all pairs. The dotted guide "
                      "falls like 1/√D, the rate of a mean of D independent terms.")
    st.markdown(f"**Table 1 view: mean absolute error, mean ± std over {trials} trials**")
    table(r.wide, "Table 1 view", download=False)  # the tidy numbers below have the CSV
    st.caption("Lowest mean per D: " + dv.lowest_text(r.lowest) +
               f". Study: {run.seconds:.2f} s this run (cached afterwards).")
    # a toggle, not an expander: the 20-row table cost ~0.1-0.2 s of browser time on every rerun even collapsed
    exact_shown = persistent_widget(st.toggle, "Show the exact numbers (one row per method and D)", key="dv_exact")
    table(r.tidy, "Table 1 numbers", show=exact_shown,
          caption="std with ddof = 0, as in the paper; `lowest` marks the lowest mean at each D.",
          column_config={c: st.column_config.NumberColumn(format="%.4e") for c in ("mean", "std")})


def orthogonal_rows_section(summary) -> None:
    """Weights drawn orthogonal in blocks (no exact formula): their measured variance against the exact i.i.d.
    variance of the same row law, from the empirical variances above (no new maps)."""
    st.markdown("**Orthogonal rows against i.i.d. weights of the same law**")
    table(summary.rename(columns={"median_ratio": "median Var / i.i.d. Var", "min_ratio": "lowest pair",
                                  "max_ratio": "highest pair", "max_abs_bias_z": "largest |bias| / SE"}),
          "Orthogonal rows vs i.i.d.",
          caption="Each row of a block keeps the i.i.d. law (so the mean is the kernel: the last column stays "
                  "within a few standard errors); rows of a block are dependent, which changes the variance. "
                  "Ratio: measured variance over the exact i.i.d. variance (E[f²] − K²)/D of the same law.",
          column_config={c: st.column_config.NumberColumn(format="%.3f") for c in
                         ("median Var / i.i.d. Var", "lowest pair", "highest pair", "largest |bias| / SE")})
    notice(dv.orthogonal_note(summary))


def summary_section(summary, kernel_label: str) -> None:
    # stacked: the table has eight columns, too many for half the width at 1280 px
    chart(dv.variance_by_distribution_figure(summary, kernel_label), summary, "Exact variance bars")
    shown_summary = summary.rename(columns={
        "label": "distribution", "distribution": "key", "fourth_moment": "E[ω⁴]", "mean": "mean D·Var",
        "median": "median D·Var", "ratio_to_rademacher": "ratio to Rademacher",
        "at_least_rademacher": "fraction of pairs ≥ Rademacher", "n_pairs": "pairs"}).drop(columns="key")
    table(shown_summary, "Exact variance by distribution",
          caption="Exact per-feature variance D·Var⟨Z(x), Z(y)⟩ over a fixed sample of pairs i < j (no "
                  "random map enters it: the same for every seed); the last column: the fraction of pairs "
                  "where it is at least Rademacher's.",
          column_config={"mean D·Var": st.column_config.NumberColumn(format="%.3e"),
                         "median D·Var": st.column_config.NumberColumn(format="%.3e"),
                         "ratio to Rademacher": st.column_config.NumberColumn(format="%.3f")})


def variance_section(run: ViewRun) -> "dv.ExactVariances":
    st.subheader("Variance of the estimate: exact vs measured")
    variances: dv.PairVariances = computed(dv.VARIANCES, run)
    exact: dv.ExactVariances = computed(dv.EXACT, run, spec=dv.without_seed(run.spec))
    if variances.orthogonal is not None:
        orthogonal_rows_section(variances.orthogonal)
    chart(dv.variance_figure(variances.empirical, exact.exact), dv.variance_rows(variances, exact),
          "Variance exact vs empirical",
          caption=f"Markers: sample variance of the estimate over {var_trials} independent RK maps (95% interval); "
                  "lines: the exact variance (E[f²] − K²)/D. The markers sit on their lines, and the lines of a "
                  "pair are ordered by E[ω⁴]." if exact.exact is not None else
                  "The exact variance covers ANOVA, all-subsets, dot and up-to-m kernels; for a custom family only "
                  "the measured variance is shown.")
    if exact.summary is not None:
        summary_section(exact.summary, run.result.kernel_label)
    return exact


def render(run: ViewRun) -> None:
    study_section(run)
    exact = None
    with guarded("the variances"):
        exact = variance_section(run)
    notice(dv.distribution_note(run.result.lowest, exact.summary if exact is not None else None, int(trials)))


run_view(dv.STUDY, view, render, along=(dv.VARIANCES, dv.EXACT), what="the two studies",
         fits="n up to {n} fits with these settings; fewer trials, maps or multiples of d also help.",
         dv_mult=multiples, dv_trials=trials, dv_scrk=with_scrk, dv_vtrials=var_trials)
