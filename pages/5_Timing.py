"""Timing: how the mapping time of each random feature map grows with d and with D (the paper's Figure 1)."""
import streamlit as st

from rkapp import (
    chart, choices, columns, formula, lead, notice, page, persistent_widget, shared_figure, show_measurement, sidebar,
    table,
)
from rkapp.views import OnPress, ViewRun, run_view
from rkcore.views import timing

D_OPTIONS, d_OPTIONS = choices("tm_sweep_n_components"), choices("tm_sweep_n_features")
N_OPTIONS, REPEATS = choices("tm_n"), choices("tm_rep")

page("Timing",
     "How long does mapping take? RK evaluates the kernel against D random vectors: O(D·d·m) per sample. "
     f"SCRK replaces the dense random matrix by {timing.defined('signed circulant blocks')} and FFTs: "
     f"{timing.defined('O(m D log d)')}. Here the maps "
     "of the registry are timed live on N(0, 1) data, against d and against D, as in the paper's Figure 1 "
     "(RK vs SCRK, ANOVA m = 2, D = 8192, d = 512 … 4096).")
spec = sidebar(data=False, n=False, kernel=False, distributions=None, D=False, seed=True)

c1, c2, c3 = st.columns([2, 1, 1])
with c1:
    maps = persistent_widget(st.multiselect, "Maps", key="tm_maps", options=list(timing.MAPS),
                             format_func=lambda k: timing.MAPS[k].label,
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

formula(timing.complexity_latex(maps),
        "Time per sample of each map's transform (paper, Sections 3–4; registry time_complexity).")


def predicted(run: ViewRun) -> None:
    """What the formulas predict, drawn before the run."""
    s = timing.sweep(**run.settings)
    pred_d, pred_D = timing.predictions(**run.settings)
    left, right = st.columns(2)
    with left:
        chart(shared_figure(timing.predicted_figure, pred_d, "d",
                            title=f"Predicted cost vs d (D = {s.D_at:,}, m = {s.degree})"),
              pred_d, "Predicted cost vs d")
    with right:
        chart(shared_figure(timing.predicted_figure, pred_D, "D",
                            title=f"Predicted cost vs D (d = {s.d_at:,}, m = {s.degree})"),
              pred_D, "Predicted cost vs D")
    st.caption("What the formulas predict, constants dropped: compare the slopes with the measurement, not the "
               "heights. A slope that drops towards 0 (SCRK in d) is logarithmic growth.")
    st.markdown(timing.measure_text(**run.settings))


def render(run: ViewRun) -> None:
    r: timing.TimingResult = run.result
    show_measurement(run.measurement, run.params, title="Measured", label=timing.RUN_LABEL,
                     caption="Wall-clock times on a shared machine: read the slopes and the ordering, not single "
                             "milliseconds.")
    by_d, by_D = r.along("d"), r.along("D")
    with lead():
        left, right = columns(2)
    with left:
        chart(shared_figure(timing.timing_figure, by_d, "d", slopes=timing.growth_exponent(by_d, "d")), by_d,
              "Timings vs input dimension d", main=True)
    with right:
        chart(shared_figure(timing.timing_figure, by_D, "D", slopes=timing.growth_exponent(by_D, "D")), by_D,
              "Timings vs feature count D", main=True)
    slopes, medians = r.slopes(), r.medians()
    a, b = st.columns([3, 2])
    with a:
        table(medians, "Median transform times", caption="Median transform time per setting (milliseconds).",
              column_config={c: st.column_config.NumberColumn(format="%.3g") for c in medians.columns
                             if c.endswith("(ms)")})
    with b:
        table(slopes[["map", "along", "exponent", "low", "high"]], "Growth exponents",
              caption="Slope of log(median time) against log d or log D (np.polyfit): time ∝ d^slope; low / "
                      "high: the slopes of single repeats (their spread).",
              column_config={c: st.column_config.NumberColumn(format="%.2f") for c in ("exponent", "low", "high")})
    notice(r.note())


measured = run_view(
    timing.TIMING, spec, render,
    on_press=OnPress(label=timing.RUN_LABEL, details=predicted, what=timing.measured_what, fits=timing.fits,
                     hidden=timing.HIDDEN),
    tm_maps=tuple(maps), tm_m=int(degree), tm_n=int(n), tm_sweep_n_features=tuple(d_values),
    tm_at_n_components=D_fixed, tm_sweep_n_components=tuple(D_values), tm_at_n_features=d_fixed, tm_rep=int(repeats),
    tm_1t=bool(one_thread))
if measured is None:
    notice(timing.BEFORE_THE_RUN)
