"""Kernel trick: the Gram matrix from explicit feature expansions vs from the kernel formula, as d grows."""
import streamlit as st

from rkapp import chart, formula, guarded, lead, notice, page, persistent_widget, sidebar, table
from rkapp.views import ViewRun, reproduce_view, run_view
from rkcore.views import kernel_trick as kt

page("Kernel trick",
     "A linear method on expanded features φ(x) needs only inner products ⟨φ(x), φ(y)⟩. For the expansions "
     "below the inner product has a closed form that costs O(d), while listing φ(x) costs one number per "
     "feature: $\\binom{d+2}{2}$ for all products of at most two features, $2^d$ for all subsets "
     "(Hsu, *Features*, Section 1.1). Here both ways compute the same n × n Gram matrix and are timed.")
spec = sidebar(data=False, n=False, kernel=False, distributions=None, D=False, seed=True)

c1, c2, c3, c4 = st.columns(4)
with c1:
    kind = persistent_widget(st.selectbox, "Expansion", key="kt_kind", options=list(kt.EXPANSIONS),
                             format_func=lambda k: kt.EXPANSIONS[k].label)
with c2:
    degree = persistent_widget(st.number_input, "Degree m", key="kt_m",
                               disabled=kind == "all_subsets", help="Polynomial (1 + ⟨x, y⟩)^m / interactions of size m.")
with c3:
    d_max = persistent_widget(st.select_slider, "Largest d timed", key="kt_dmax",
                              fallback=kt.SUBSETS_FALLBACK_D if kind == "all_subsets" else None,
                              options=kt.D_OPTIONS[kind])
with c4:
    n = persistent_widget(st.number_input, "Points n", key="kt_n", step=10)
exp, m = kt.EXPANSIONS[kind], kt.order(kind, degree)
formula(kt.latex_with_degree(exp.feature_latex, m), "The explicit feature map φ.")
formula(kt.latex_with_degree(exp.kernel_latex, m) + r"\qquad \text{cost per pair: } O(\#\phi) \text{ explicit vs } O(d) \text{ by the formula}",
        "The kernel trick: the same inner product from the closed form.")


def render(run: ViewRun) -> None:
    r: kt.KernelTrickResult = run.result
    with lead():  # the main chart first, above the settings
        chart(kt.kernel_trick_figure(r.timings), r.timings, "Kernel trick timings",
              caption=f"Median of {kt.REPEATS} runs after a warm-up run (band: fastest to slowest), one BLAS thread; N(0, 1/d) data, seed "
                      f"{spec.seed}. Wall-clock times on a shared machine: read the slopes, not single numbers.")
    summary = r.summary
    a, b, c = st.columns(3)
    a.metric(f"explicit features at d = {r.d_list[-1]}", f"{int(summary['explicit features'].iloc[-1]):,}")
    b.metric("explicit / kernel time at the largest d", f"{summary['ratio explicit / kernel'].iloc[-1]:.3g}×")
    c.metric("log-log slope of the explicit time (last 3 d)", f"{r.slope:.2f}")
    notice(r.note(kind))
    table(summary, "Kernel trick timing summary", caption="Medians per d.",
          column_config={k: st.column_config.NumberColumn(format="%.3g") for k in summary.columns
                         if k not in ("d", "explicit features")})


def feature_count_chart() -> None:
    with guarded("the feature counts"):
        counts = kt.feature_counts(kind, degree)
        chart(kt.feature_count_figure(counts), counts, "Explicit feature counts",
              caption="Exact counts (not timed). The all-subsets line stops at d = 64, where it already needs "
                      "2^64 ≈ 1.8·10^19 numbers per point.")


settings = dict(kt_kind=kind, kt_m=degree, kt_dmax=d_max, kt_n=n)
run_view(kt.KERNEL_TRICK, spec, render, reproduce_box=False, **settings)
feature_count_chart()  # exact counts, not timed: drawn even while the timings wait for their button
reproduce_view(kt.KERNEL_TRICK, spec, **settings)  # last: its export holds both charts
