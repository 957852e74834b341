"""Timing: how the mapping time of each random feature map grows with d and with D (the paper's Figure 1)."""
import os

import pandas as pd
import streamlit as st
from threadpoolctl import threadpool_limits

from rkapp import (
    chart, choices, columns, formula, guarded, kept_measurement, largest_fitting, lead, measure_on_press, notice,
    page, persistent_widget, progress_bar, refuse_beyond_limits, reproduce, shared_figure, show_measurement,
    sidebar, table,
)
from rkcore.studies.costs import timing_cost
from rkcore.figures.timing import predicted_figure, slope_spread, timing_figure, timing_note
from rkcore.registry import MAPS
from rkcore.teaching.glossary import defined
from rkcore.studies.timing import growth_exponent, median_table, predicted_operations, time_maps, timing_kernel

D_OPTIONS, d_OPTIONS = choices("tm_sweep_n_components"), choices("tm_sweep_n_features")
N_OPTIONS, REPEATS = choices("tm_n"), choices("tm_rep")
RUN_LABEL = "Run the timings"

page("Timing",
     "How long does mapping take? RK evaluates the kernel against D random vectors: O(D·d·m) per sample. "
     f"SCRK replaces the dense random matrix by {defined('signed circulant blocks')} and FFTs: "
     f"{defined('O(m D log d)')}. Here the maps "
     "of the registry are timed live on N(0, 1) data, against d and against D, as in the paper's Figure 1 "
     "(RK vs SCRK, ANOVA m = 2, D = 8192, d = 512 … 4096).")
view = sidebar(data=False, n=False, kernel=False, distributions=None, D=False, seed=True)

c1, c2, c3 = st.columns([2, 1, 1])
with c1:
    maps = persistent_widget(st.multiselect, "Maps", key="tm_maps", options=list(MAPS),
                             format_func=lambda k: MAPS[k].label,
                             help="Each map is timed on its own kernel: RK and SCRK on ANOVA, TS / RM / Nystroem on "
                                  "the polynomial kernel, RFF on the Gaussian kernel.")
with c2:
    degree = persistent_widget(st.number_input, "Degree m", key="tm_m")
with c3:
    n = persistent_widget(st.select_slider, "n (samples mapped)", key="tm_n", options=N_OPTIONS)
c4, c5, c6, c7 = st.columns([2, 1, 2, 1])
with c4:
    d_values = persistent_widget(st.multiselect, "d values (sweep over d)", key="tm_sweep_n_features",
                                 options=d_OPTIONS)
with c5:
    D_fixed = persistent_widget(st.selectbox, "… at D =", key="tm_at_n_components", options=D_OPTIONS)
with c6:
    D_values = persistent_widget(st.multiselect, "D values (sweep over D)", key="tm_sweep_n_components",
                                 options=D_OPTIONS)
with c7:
    d_fixed = persistent_widget(st.selectbox, "… at d =", key="tm_at_n_features", options=d_OPTIONS)
c8, c9, _ = st.columns([1, 2, 2])
with c8:
    repeats = persistent_widget(st.select_slider, "Repeats", key="tm_rep", options=REPEATS,
                                help="Timed runs per cell after one untimed warm-up run; the median is shown.")
with c9:
    one_thread = persistent_widget(st.checkbox, "Single-threaded BLAS", key="tm_1t",
                                   help="RK's products use BLAS, SCRK's FFTs run on one thread: one BLAS thread "
                                        "compares like with like, and keeps other sessions on the shared machine "
                                        "from distorting the numbers.")

formula(r"\text{RK: } O(D\,d\,m)\qquad \text{SCRK: } O(m\,D\log d)\qquad \text{TS: } O(m(d + D\log D))"
        r"\qquad \text{RM: } O(D\,d\,m)\qquad \text{RFF: } O(D\,d)",
        "Time per sample of each map's transform (paper, Sections 3–4; registry time_complexity).")


def run_timings(maps, d_list, D_at, D_list, d_at, n, m, repeats, seed, single_thread):
    """Both sweeps with one progress bar. Never cached: a cached time would be some other run's time."""
    cells = [len(d_list), len(D_list)]
    offsets = [0.0, cells[0] / sum(cells)]
    limit = threadpool_limits(limits=1, user_api="blas") if single_thread else None
    try:
        with progress_bar("Timing…") as report:
            def part(k):  # the two sweeps share one bar
                return lambda f, msg: report(offsets[k] + f * cells[k] / sum(cells), msg)

            by_d = time_maps(maps, d_list, [D_at], [n], kernel_degree=m, repeats=repeats, warmup=1,
                             random_state=seed, progress=part(0))
            by_D = time_maps(maps, [d_at], D_list, [n], kernel_degree=m, repeats=repeats, warmup=1,
                             random_state=seed, progress=part(1))
    finally:
        if limit is not None:
            limit.restore_original_limits()
    out = pd.concat([by_d.assign(sweep="d"), by_D.assign(sweep="D")], ignore_index=True)
    out.attrs["load"] = (os.getloadavg()[0], os.cpu_count() or 1)  # the note says when the machine was busy
    return out


measured = kept_measurement("tm")
params = None
with guarded("the timings"):
    if not maps:
        raise ValueError("Choose at least one map to time.")
    d_list = sorted(int(v) for v in d_values)
    D_list = sorted(int(v) for v in D_values)
    if len(d_list) < 2 or len(D_list) < 2:
        raise ValueError("Choose at least two values of d and two values of D: a growth rate needs two points.")
    D_at, d_at, m = int(D_fixed), int(d_fixed), int(degree)
    for key in maps:
        if timing_kernel(key, m).name == "anova" and m > min(d_list + [d_at]):
            raise ValueError(f"Degree m = {m} exceeds the smallest d = {min(d_list + [d_at])}: the ANOVA kernel of "
                             f"{MAPS[key].label} needs m ≤ d. Lower m or drop the small d values.")
    params = (tuple(maps), tuple(d_list), D_at, tuple(D_list), d_at, int(n), m, int(repeats), int(view.seed),
              bool(one_thread))

    def cost_at(s: int):
        return timing_cost(maps, d_list, D_at, D_list, d_at, s, m, int(repeats))

    fitting_n = largest_fitting(cost_at, int(n))
    fits = (f"With these maps, d and D, n up to {fitting_n:,} fits; or lower the repeats." if fitting_n
            else "Lower the largest d or D, or time fewer maps.")
    refuse_beyond_limits(cost_at(int(n)), "these timings", fits)  # before the predictions are drawn

    left, right = st.columns(2)
    pred_d = predicted_operations(maps, "d", d_list, D=D_at, degree=m)
    pred_D = predicted_operations(maps, "D", D_list, d=d_at, degree=m)
    with left:
        chart(shared_figure(predicted_figure, pred_d, "d", title=f"Predicted cost vs d (D = {D_at:,}, m = {m})"),
              pred_d,
              "Predicted cost vs d")
    with right:
        chart(shared_figure(predicted_figure, pred_D, "D", title=f"Predicted cost vs D (d = {d_at:,}, m = {m})"),
              pred_D,
              "Predicted cost vs D")
    st.caption("What the formulas predict, constants dropped: compare the slopes with the measurement, not the heights. "
               "A slope that drops towards 0 (SCRK in d) is logarithmic growth.")

    cells = len(maps) * (len(d_list) + len(D_list))
    st.markdown(f"**Measure:** {len(maps)} map(s) × {len(d_list) + len(D_list)} settings = {cells} cells, "
                f"each {repeats} timed runs after a warm-up, n = {n} "
                f"({'one BLAS thread' if one_thread else 'all BLAS threads'}).")
    with lead():  # the run button (then the measured charts) first, above the settings
        measured = measure_on_press(
            cost_at(int(n)), lambda: run_timings(list(maps), d_list, D_at, D_list, d_at, int(n), m, int(repeats),
                                                 int(view.seed), bool(one_thread)),
            key="tm", params=params, what="these timings", label=RUN_LABEL, fits=fits)

if measured is not None and params is None:  # the current settings failed: the kept timings are of others
    st.warning("The timings of the last run are hidden: they came from earlier settings, and the current ones "
               "failed (see the message above).", icon=":material/history:")
    measured = None
if measured is not None:
    with guarded("the timing results"):
        df = measured.value
        show_measurement(measured, params, title="Measured", label=RUN_LABEL,
                         caption="Wall-clock times on a shared machine: read the slopes and the ordering, not single "
                                 "milliseconds.")
        by_d, by_D = df[df["sweep"] == "d"], df[df["sweep"] == "D"]
        with lead():
            left, right = columns(2)
        with left:
            chart(shared_figure(timing_figure, by_d, "d", slopes=growth_exponent(by_d, "d")), by_d,
                  "Timings vs input dimension d", main=True)
        with right:
            chart(shared_figure(timing_figure, by_D, "D", slopes=growth_exponent(by_D, "D")), by_D,
                  "Timings vs feature count D", main=True)
        slopes = pd.concat([growth_exponent(by_d, "d").assign(along="d"), growth_exponent(by_D, "D").assign(along="D")],
                           ignore_index=True)
        spread = pd.concat([slope_spread(by_d, "d"), slope_spread(by_D, "D")], ignore_index=True)
        slopes = slopes.merge(spread, on=["map", "along"], how="left")
        slopes["map"] = [MAPS[k].short_label for k in slopes["map"]]
        medians = median_table(df.drop(columns="sweep"))
        a, b = st.columns([3, 2])
        with a:
            table(medians, "Median transform times",
                  caption="Median transform time per setting (milliseconds).",
                  column_config={c: st.column_config.NumberColumn(format="%.3g") for c in medians.columns
                                 if c.endswith("(ms)")})
        with b:
            table(slopes[["map", "along", "exponent", "low", "high"]], "Growth exponents",
                  caption="Slope of log(median time) against log d or log D (np.polyfit): time ∝ d^slope; low / "
                          "high: the slopes of single repeats (their spread).",
                  column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("exponent", "low", "high")})
        notice(timing_note(slopes, df.attrs.get("load")))

if measured is None:
    notice(f"Press **{RUN_LABEL}**: the note then reports the growth exponents this run measured next to "
           "what the operation counts predict (slope 1 for RK in d and D; below 1 in d for SCRK).")

reproduce("\n".join([
    "from rkcore.studies.timing import time_maps, growth_exponent, summarize",
    "from rkcore.figures.timing import timing_figure",
    "from threadpoolctl import threadpool_limits",
    "",
    f"with threadpool_limits(limits={1 if one_thread else None}, user_api='blas'):",
    f"    by_d = time_maps({list(maps)!r}, {sorted(int(v) for v in d_values)}, [{int(D_fixed)}], [{int(n)}], "
    f"kernel_degree={int(degree)}, repeats={int(repeats)}, random_state={view.seed})",
    f"    by_D = time_maps({list(maps)!r}, [{int(d_fixed)}], {sorted(int(v) for v in D_values)}, [{int(n)}], "
    f"kernel_degree={int(degree)}, repeats={int(repeats)}, random_state={view.seed})",
    "print(growth_exponent(by_d, 'd'), growth_exponent(by_D, 'D'))",
    "timing_figure(by_d, 'd', slopes=growth_exponent(by_d, 'd')).show()",
    "# paper Figure 1 from the command line: python -m rkcore timing --figure1",
]))
