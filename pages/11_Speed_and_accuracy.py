"""Speed and accuracy: linear models on random features against the exact kernel SVM, over D, seeds and n."""
import streamlit as st

from rkapp import chart, lead, notice, page, persistent_widget, sidebar, table
from rkapp.state import apply_preset, is_stored
from rkapp.views import ViewRun, run_view
from rkcore.views import speed_accuracy as sa

page("Speed and accuracy",
     "Accuracy, training time and prediction time of linear SVMs on RK, SCRK, random Fourier and Nystroem features "
     "against the exact kernel SVMs they approximate, over seeds; and time against n up to where the exact kernel "
     "no longer fits in memory.")
OPENED_KEY = "_rk_speed_opened"
if not st.session_state.get(OPENED_KEY) and not any(is_stored(name) for name in sa.OPENING) and not any(
        key != "presenter" for key in st.query_params):  # a bare visit: a link naming any setting keeps the rest
    apply_preset(sa.OPENING, reset=False)
st.session_state[OPENED_KEY] = True
spec = sidebar(kernel=False, distributions=None, D=False)
c1, c2 = st.columns(2)
with c1:
    seeds = persistent_widget(st.segmented_control, "Seeds per method", key="sa_seeds",
                              help="Each seed draws a new train / validation / test split and new random features, "
                                   "for every method, the exact SVMs included.")
with c2:
    D_max = persistent_widget(st.segmented_control, "Largest D", key="sa_Dmax", format_func=lambda v: f"{v:,}")


def render(run: ViewRun) -> None:
    r: sa.SpeedResult = run.result
    words = sa.sentences(r)
    with lead():
        chart(sa.speed_accuracy_figure(r.summary, sa.COLORS, f"Accuracy and time against D ({r.n_train:,} training "
                                       f"points, {int(r.summary['seeds'].max())} seeds)"),
              r.runs, "Speed and accuracy against D", main=True,
              caption="Accuracy: mean over seeds, bars ± 2 standard errors. Times: median over seeds, bars the "
                      "seeds' range, log scale. Dashed: the exact kernel SVMs (no D); RK and SCRK approximate the "
                      "ANOVA kernel (m = 2), RFF and Nystroem the RBF kernel (γ = 1 / (d·Var X)).")
    notice(" ".join(words))
    t = r.timing
    chart(sa.time_vs_n_figure(t.times, t.crossovers, t.n_memory, t.D), t.times, "Time against n",
          caption=f"Synthetic interaction data (d = 20, L1 rows), 4,000 test rows, one BLAS thread, fastest of 3 fits. "
                  f"Solid: measured at n = {', '.join(f'{n:,}' for n in sa.MEASURED_N)}; dotted: the power law "
                  f"fitted to the three largest, extrapolated up to n = {t.n_memory:,}, where the exact kernel's n × n Gram "
                  "matrix no longer fits the memory budget.")
    table(r.summary, "Speed and accuracy summary", caption="Per method and D: seeds, accuracy mean, standard "
          "deviation and standard error, training and prediction seconds (median, min, max).")


run_view(sa.SPEED, spec, render, sa_seeds=seeds, sa_Dmax=D_max)
