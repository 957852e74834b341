"""Distributions and variance: which weight distribution gives the most precise RK estimate (Lemma 4, Table 1)."""
import dataclasses
import time

import numpy as np
import pandas as pd
import streamlit as st
from threadpoolctl import threadpool_limits

from rkapp import (
    ViewSpec, chart, choices, escape_markdown, formula, guarded, largest_fitting, lead, load_data, notice, page,
    persistent_widget, progress_bar, reproduce, run_or_wait, sidebar, table,
)
from rkapp.guard import admitted_run
from rkcore.base.limits import format_estimate
from rkcore.studies.costs import error_study_cost, pair_variance_cost
from rkcore.maps.distributions import DISTRIBUTIONS
from rkcore.studies.errors import error_study
from rkcore.figures.variance import (
    distribution_note, error_vs_D_figure, lowest_by_D, variance_by_distribution_figure, variance_figure,
)
from rkcore.registry import ITEMSET_KERNELS
from rkcore.studies.table1 import table1_view
from rkcore.theory.variance import VARIANCE_KERNELS
from rkcore.studies.orthogonal_study import against_iid, orthogonal_note, variance_ratio_summary
from rkcore.studies.variance_study import (
    empirical_pair_variance, exact_pair_variance, iid_only, select_pairs, variance_by_distribution,
)
from rkcore.base.arrays import dense

MULTIPLES, TRIALS, VARIANCE_TRIALS = choices("dv_mult"), choices("dv_trials"), choices("dv_vtrials")

page("Distributions and variance",
     "Any weight distribution of mean 0 and variance 1 works (Proposition 2); the variance depends on it only "
     "through E[ω⁴], smallest for Rademacher (±1), which Lemma 4 says minimizes the worst-case variance.")
view = sidebar(kernels=ITEMSET_KERNELS, distributions="multi", D=False)

c1, c2, c3, c4 = st.columns([3.6, 2, 2, 2.6])  # room for the four D chips (2d … 16d) at 1280 px
with c1:
    multiples = persistent_widget(st.multiselect, "D as multiples of d", key="dv_mult",
                                  options=[str(m) for m in MULTIPLES], format_func=lambda m: f"{m}d",
                                  help="The paper's Table 1 uses D = 2d, 4d, 8d, 16d.")
with c2:
    trials = persistent_widget(st.select_slider, "Trials (maps per D)", key="dv_trials", options=TRIALS,
                               help="The paper uses 100 trials on 10,000 MovieLens rows.")
with c3:
    var_trials = persistent_widget(st.select_slider, "Maps for the pair variances", key="dv_vtrials",
                                   options=VARIANCE_TRIALS, help="Independent maps behind each empirical variance.")
with c4:
    with_scrk = persistent_widget(st.checkbox, "Include SCRK (ANOVA)", key="dv_scrk",
                                  disabled=view.kernel != "anova",
                                  help="The signed circulant map (Rademacher weights, FFT); ANOVA kernels only.")

IID = tuple(k for k, e in DISTRIBUTIONS.items() if e.iid)  # the paper's comparison; orthogonal rows on request
chosen = tuple(view.distributions) if len(view.distributions) >= 2 else IID
if len(view.distributions) < 2:
    st.caption(f"Fewer than two distributions chosen in the sidebar: comparing the {len(IID)} i.i.d. ones. Choose "
               "some there to narrow the comparison down, or to add weights drawn orthogonal in blocks.")

formula(r"\mathbb{V}\big[\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle\big] = \frac{\mathbb{E}_{\boldsymbol\omega}\big["
        r"K_{\mathcal{S}}(\mathbf{x},\boldsymbol\omega)^2 K_{\mathcal{S}}(\mathbf{y},\boldsymbol\omega)^2\big] - "
        r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y})^2}{D}",
        "Exact variance of the estimate (rkcore.theory.variance): it falls like 1/D, and E[f²] grows with E[ω⁴].")
formula(r"\sup_{\mathbf{x},\mathbf{y}}\ \mathbb{V}_{\boldsymbol\omega\sim p^*}\big[\langle Z(\mathbf{x}), "
        r"Z(\mathbf{y})\rangle\big] \le \sup_{\mathbf{x},\mathbf{y}}\ \mathbb{V}_{\boldsymbol\omega\sim p}\big["
        r"\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle\big]\quad (11)",
        "Lemma 4: p* = Rademacher; p any distribution with mean 0 and variance 1.")


def methods_for(view: ViewSpec, distributions: tuple[str, ...], scrk: bool) -> list[tuple[str, str | None]]:
    methods = [("rk", dist) for dist in distributions]
    return methods + [("scrk", None)] if scrk and view.kernel == "anova" else methods


@st.cache_data(show_spinner=False, max_entries=16)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def distribution_study(view: ViewSpec, distributions: tuple[str, ...], D_list: tuple[int, ...], trials: int,
                       scrk: bool) -> pd.DataFrame:
    """Table 1 protocol on the view's data: error_study over the methods, D and trials."""
    data = load_data(view)
    spec = view.kernel_spec(data)
    # one BLAS thread: small products, and a shared 2-core machine (threads fighting cost 100x)
    with progress_bar("Measuring the errors…") as report, threadpool_limits(limits=1, user_api="blas"):
        return error_study(data.X, spec, methods_for(view, distributions, scrk), list(D_list), trials,
                           pairs="nonzero", random_state=view.seed, progress=report)


def without_seed(view: ViewSpec) -> ViewSpec:
    """The cache key of what no random map enters (the pairs, the exact variances): the same for every seed, so
    a seed change neither recomputes nor redraws it."""
    return dataclasses.replace(view, seed=0)


@st.cache_data(show_spinner=False, max_entries=16)
def chosen_pairs(exact_view: ViewSpec):
    data = load_data(exact_view)
    return select_pairs(exact_view.kernel_spec(data).exact(dense(data.X)[:400]))  # 400 points: plenty for three pairs


@st.cache_data(show_spinner="Measuring the variance of three pairs…", max_entries=16)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def empirical_variances(view: ViewSpec, distributions: tuple[str, ...], D_list: tuple[int, ...], var_trials: int):
    data = load_data(view)
    pairs = chosen_pairs(without_seed(view))
    with threadpool_limits(limits=1, user_api="blas"):
        return empirical_pair_variance(dense(data.X), pairs, view.kernel_spec(data), distributions, D_list,
                                       var_trials, random_state=view.seed)


@st.cache_data(show_spinner=False, max_entries=16)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def exact_variances(exact_view: ViewSpec, distributions: tuple[str, ...], D_list: tuple[int, ...]):
    data = load_data(exact_view)
    spec = exact_view.kernel_spec(data)
    if spec.name not in VARIANCE_KERNELS:
        return None
    D_line = np.logspace(np.log10(D_list[0]), np.log10(D_list[-1]), 40)
    return exact_pair_variance(dense(data.X), chosen_pairs(exact_view), spec, distributions, D_line)


@st.cache_data(show_spinner=False, max_entries=16)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def variance_summary(exact_view: ViewSpec, distributions: tuple[str, ...]) -> pd.DataFrame:
    """Exact, over a fixed sample of pairs: the same numbers whatever the seed of the maps."""
    data = load_data(exact_view)
    return variance_by_distribution(data.X, exact_view.kernel_spec(data), distributions, random_state=0)


def orthogonal_rows_section(empirical: pd.DataFrame, data, spec) -> None:
    """Weights drawn orthogonal in blocks (no exact formula): their measured variance against the exact i.i.d.
    variance of the same row law, from the empirical variances above (no new maps)."""
    st.markdown("**Orthogonal rows against i.i.d. weights of the same law**")
    ratios = against_iid(empirical, dense(data.X), spec)
    summary = variance_ratio_summary(ratios)
    table(summary.rename(columns={"median_ratio": "median Var / i.i.d. Var", "min_ratio": "lowest pair",
                                  "max_ratio": "highest pair", "max_abs_bias_z": "largest |bias| / SE"}),
          "Orthogonal rows vs i.i.d.",
          caption="Each row of a block keeps the i.i.d. law (so the mean is the kernel: the last column stays "
                  "within a few standard errors); rows of a block are dependent, which changes the variance. "
                  "Ratio: measured variance over the exact i.i.d. variance (E[f²] − K²)/D of the same law.",
          column_config={c: st.column_config.NumberColumn(format="%.3f") for c in
                         ("median Var / i.i.d. Var", "lowest pair", "highest pair", "largest |bias| / SE")})
    notice(orthogonal_note(summary))


spec = None
best = summary = None  # what the note reports: filled by the sections that ran
ready = False
with guarded("the data"):  # a data or kernel problem is said once, not once per section
    data = load_data(view)
    spec = view.kernel_spec(data)
    n, d = data.X.shape
    D_list = tuple(sorted(int(m) * d for m in multiples)) or (2 * d,)
    methods = methods_for(view, chosen, bool(with_scrk))

    def cost_at(s: int):  # both sections: the Table 1 study and the pair variances
        study = error_study_cost(s, d, spec.name, spec.degree, D_list, methods, int(trials))
        return study + pair_variance_cost(d, spec.name, spec.degree, D_list, len(chosen), int(var_trials),
                                          spec.name in VARIANCE_KERNELS)

    cost = cost_at(n)
    ready = run_or_wait(cost, key="dv", params=(view, chosen, D_list, int(trials), int(var_trials),
                                                            bool(with_scrk)), what="the two studies",
                        fits=f"n up to {largest_fitting(cost_at, n):,} fits with these settings; fewer trials, "
                             "maps or multiples of d also help.")

if ready:  # else the error or the run button above says why
    with guarded("the distribution study"):
        if not multiples:
            raise ValueError("Choose at least one multiple of d for D (the paper uses 2d, 4d, 8d and 16d).")
        seconds = cost.sections[0][1]
        st.subheader("Error by distribution (the paper's Table 1 protocol)")
        st.caption(f"{escape_markdown(data.description)} n = {n} points, d = {d}, {view.normalization}-normalized; "
                   f"{escape_markdown(spec.label())} kernel; D ∈ {{{', '.join(map(str, D_list))}}}; {trials} trials per "
                   f"cell; error = mean of |⟨Z(xᵢ), Z(xⱼ)⟩ − K(xᵢ, xⱼ)| over the pairs with K ≠ 0 (diagonal included), "
                   f"as in the paper. Estimated cost {format_estimate(seconds)}.")
        started = time.perf_counter()
        study = distribution_study(view, chosen, D_list, int(trials), bool(with_scrk))
        elapsed = time.perf_counter() - started
        wide, tidy = table1_view(study, d)
        errors = study[study["metric"] == "mean_abs_error"]
        with lead():  # the main chart first, above the settings
            chart(error_vs_D_figure(study), errors, "Mean absolute error vs D by distribution",
                  caption="Each trial is one random map; its error is averaged over all pairs. The dotted guide "
                          "falls like 1/√D, the rate of a mean of D independent terms.")
        st.markdown(f"**Table 1 view: mean absolute error, mean ± std over {trials} trials**")
        table(wide, "Table 1 view", download=False)  # the tidy numbers below have the CSV
        best = lowest_by_D(tidy)
        st.caption("Lowest mean per D: " + "; ".join(
            f"D = {r.D}: {r.lowest}" + (f" (ties with {', '.join(t for t in r.tied if t != r.lowest)})"
                                        if len(r.tied) > 1 else "") for r in best.itertuples()) +
                   f". Study: {elapsed:.2f} s this run (cached afterwards).")
        # a toggle, not an expander: the 20-row table cost ~0.1-0.2 s of browser time on every rerun even collapsed
        exact_shown = persistent_widget(st.toggle, "Show the exact numbers (one row per method and D)",
                                        key="dv_exact")
        table(tidy, "Table 1 numbers", show=exact_shown,
              caption="std with ddof = 0, as in the paper; `lowest` marks the lowest mean at each D.",
              column_config={c: st.column_config.NumberColumn(format="%.4e") for c in ("mean", "std")})

    with guarded("the variances"):
        st.subheader("Variance of the estimate: exact vs measured")
        empirical = empirical_variances(view, chosen, D_list, int(var_trials))
        exact = exact_variances(without_seed(view), chosen, D_list)
        if any(not DISTRIBUTIONS[dist].iid for dist in chosen):
            orthogonal_rows_section(empirical, data, spec)
        chart(variance_figure(empirical, exact), empirical if exact is None else pd.concat(
            [empirical.assign(kind="empirical"), exact.assign(kind="exact")], ignore_index=True),
              "Variance exact vs empirical",
              caption=f"Markers: sample variance of the estimate over {var_trials} independent RK maps (95% interval); "
                      "lines: the exact variance (E[f²] − K²)/D. The markers sit on their lines, and the lines of a "
                      "pair are ordered by E[ω⁴]." if exact is not None else
                      "The exact variance covers ANOVA, all-subsets, dot and up-to-m kernels; for a custom family only "
                      "the measured variance is shown.")
        if spec.name in VARIANCE_KERNELS and iid_only(chosen):
            summary = variance_summary(without_seed(view), chosen)
            # stacked: the table has eight columns, too many for half the width at 1280 px
            left = right = st.container()
            with left:
                chart(variance_by_distribution_figure(summary, spec.label()), summary, "Exact variance bars")
            with right:
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

notice(distribution_note(best, summary, int(trials)))

reproduce(view.code(
    "from rkcore.studies.errors import error_study, summarize_errors",
    "from rkcore.theory.variance import rk_variance, variance_table",
    "from rkcore.studies.table1 import table1_view",
    "from rkcore.figures.variance import error_vs_D_figure",
    "",
    f"D_list = [m * d for m in {[int(m) for m in sorted(multiples, key=int)]}]",
    f"methods = {methods_for(view, chosen, bool(with_scrk))!r}",
    f"study = error_study(X, spec, methods, D_list, {int(trials)}, pairs='nonzero', random_state={view.seed})",
    "wide, tidy = table1_view(study, d)",
    "print(wide.to_string(index=False))",
    "error_vs_D_figure(study).show()",
    "# exact variance of <Z(x), Z(y)> for the pairs (X[i], X[j]) at D features:",
    f"# rk_variance(X[i], X[j], D, kernel={view.kernel!r}, degree={view.degree}, distribution='rademacher')",
))
