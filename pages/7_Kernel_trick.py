"""Kernel trick: the Gram matrix from explicit feature expansions vs from the kernel formula, as d grows."""
import numpy as np
import pandas as pd
import streamlit as st
from threadpoolctl import threadpool_limits

from rkapp import (
    chart, formula, guarded, largest_fitting, lead, notice, page, persistent_widget, reproduce, run_or_wait,
    sidebar, table,
)
from rkapp.guard import heavy_work
from rkcore.studies.costs import kernel_trick_cost
from rkcore.figures.foundations import feature_count_figure, kernel_trick_figure, kernel_trick_note
from rkcore.teaching.kernel_trick import EXPANSIONS, MAX_SUBSETS_D, feature_count_table, kernel_trick_timing
from rkcore.registry import latex_with_degree

D_OPTIONS = {  # largest d to time, per expansion (explicit features must fit in memory and time)
    "polynomial": [8, 16, 32, 64, 128, 256],
    "interactions": [8, 16, 32, 64, 128, 256],
    "all_subsets": [4, 6, 8, 10, 12, 14, 16],
}
assert max(D_OPTIONS["all_subsets"]) <= MAX_SUBSETS_D

page("Kernel trick",
     "A linear method on expanded features φ(x) needs only inner products ⟨φ(x), φ(y)⟩. For the expansions "
     "below the inner product has a closed form that costs O(d), while listing φ(x) costs one number per "
     "feature: $\\binom{d+2}{2}$ for all products of at most two features, $2^d$ for all subsets "
     "(Hsu, *Features*, Section 1.1). Here both ways compute the same n × n Gram matrix and are timed.")
view = sidebar(data=False, n=False, kernel=False, distributions=None, D=False, seed=True)

c1, c2, c3, c4 = st.columns(4)
with c1:
    kind = persistent_widget(st.selectbox, "Expansion", key="kt_kind", options=list(EXPANSIONS),
                             format_func=lambda k: EXPANSIONS[k].label)
with c2:
    degree = persistent_widget(st.number_input, "Degree m", key="kt_m",
                               disabled=kind == "all_subsets", help="Polynomial (1 + ⟨x, y⟩)^m / interactions of size m.")
with c3:
    d_max = persistent_widget(st.select_slider, "Largest d timed", key="kt_dmax",
                              fallback=12 if kind == "all_subsets" else None, options=D_OPTIONS[kind])
with c4:
    n = persistent_widget(st.number_input, "Points n", key="kt_n", step=10)
repeats = 3
exp = EXPANSIONS[kind]
m = 2 if kind == "all_subsets" else int(degree)
formula(latex_with_degree(exp.feature_latex, m), "The explicit feature map φ.")
formula(latex_with_degree(exp.kernel_latex, m) + r"\qquad \text{cost per pair: } O(\#\phi) \text{ explicit vs } O(d) \text{ by the formula}",
        "The kernel trick: the same inner product from the closed form.")

with guarded("the timings"):
    d_list = [d for d in (2, 4, 6, 8, 10, 12, 14, 16) if d <= d_max] if kind == "all_subsets" else \
        [int(d) for d in 2 ** np.arange(1, int(np.log2(d_max)) + 1)]
    d_list = [d for d in d_list if d >= m or kind != "interactions"]

    def cost_at(s: int):
        return kernel_trick_cost([exp.n_features(d, m) for d in d_list], d_list, s, m, repeats)

    run_or_wait(cost_at(int(n)), key="kt", params=(kind, m, tuple(d_list), int(n), int(view.seed)),
                what="the timings", fits=f"n up to {largest_fitting(cost_at, int(n)):,} fits; or lower the largest d.")
    # timings are never cached: a cached time would be a time of some other run
    # one BLAS thread: on a shared server, thread hand-offs would dominate these small products
    # a server slot first (rkapp.guard): the timing starts once admitted, so the line is no part of it
    with heavy_work(), threadpool_limits(limits=1, user_api="blas"):
        df = kernel_trick_timing(kind, d_list, n=int(n), degree=m, repeats=repeats, seed=int(view.seed))
    with lead():  # the main chart first, above the settings
        chart(kernel_trick_figure(df), df, "Kernel trick timings",
              caption=f"Median of {repeats} runs after a warm-up run (band: fastest to slowest), one BLAS thread; N(0, 1/d) data, seed "
                      f"{view.seed}. Wall-clock times on a shared machine: read the slopes, not single numbers.")
    med = df.groupby(["d", "method"])["seconds"].median().unstack("method")
    summary = pd.DataFrame({
        "d": med.index,
        "explicit features": df[df.method == "explicit features"].groupby("d")["n_features"].first().to_numpy(),
        "explicit (ms)": 1e3 * med["explicit features"].to_numpy(),
        "kernel trick (ms)": 1e3 * med["kernel trick"].to_numpy(),
        "ratio explicit / kernel": (med["explicit features"] / med["kernel trick"]).to_numpy(),
    })
    slope = np.polyfit(np.log(summary["d"].iloc[-3:]), np.log(summary["explicit (ms)"].iloc[-3:]), 1)[0] \
        if len(summary) >= 3 else float("nan")
    a, b, c = st.columns(3)
    a.metric(f"explicit features at d = {d_list[-1]}", f"{int(summary['explicit features'].iloc[-1]):,}")
    b.metric("explicit / kernel time at the largest d", f"{summary['ratio explicit / kernel'].iloc[-1]:.3g}×")
    c.metric("log-log slope of the explicit time (last 3 d)", f"{slope:.2f}")
    notice(kernel_trick_note(summary, slope, exp.label))
    table(summary, "Kernel trick timing summary", caption="Medians per d.",
          column_config={k: st.column_config.NumberColumn(format="%.3g") for k in summary.columns
                         if k not in ("d", "explicit features")})

with guarded("the feature counts"):
    counts = feature_count_table((2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), degree=m)
    chart(feature_count_figure(counts), counts, "Explicit feature counts",
          caption="Exact counts (not timed). The all-subsets line stops at d = 64, where it already needs "
                  "2^64 ≈ 1.8·10^19 numbers per point.")

reproduce("\n".join([
    "from rkcore.teaching.kernel_trick import feature_count_table, kernel_trick_timing, polynomial_features",
    "from rkcore.figures.foundations import kernel_trick_figure",
    "",
    f"df = kernel_trick_timing({kind!r}, {d_list}, n={int(n)}, degree={m}, repeats={repeats}, seed={int(view.seed)})",
    "print(df.groupby(['d', 'method'])['seconds'].median().unstack())",
    "kernel_trick_figure(df).show()",
    "",
    "# the identity behind it: <phi(x), phi(y)> = (1 + <x, y>)^2",
    "import numpy as np",
    "X = np.random.RandomState(0).randn(5, 3)",
    "P = polynomial_features(X, degree=2, c=1.0)",
    "print(np.abs(P @ P.T - (1 + X @ X.T) ** 2).max())",
]))
