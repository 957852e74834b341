"""Classifiers: accuracy and time of linear models on random features against exact kernel methods
(the paper's Figures 2 and 3)."""
import streamlit as st

from rkapp import (
    chart, choices, escape_markdown, formula, guarded, kept_measurement, lead, load_data, notice, page,
    persistent_widget, run_requested, shared_figure, show_measurement, sidebar, table,
)
from rkapp.state import apply_preset, is_stored
from rkapp.views import OnPress, ViewRun, run_view
from rkcore.views import classifiers

MULTIPLES, TRIALS = choices("cl_mult"), choices("cl_trials")

page("Classifiers",
     "Does a linear model on random features learn as well as the kernel method it approximates, and how much "
     f"faster? Linear SVMs on RK / SCRK features (and {classifiers.defined('TS / RM features')} of the polynomial "
     f"kernel, and {classifiers.defined('sparse random features')}) against the exact kernel SVM, the "
     f"{classifiers.defined('factorization machine')} and the all-subsets model, as in the paper's Figures 2 and 3. "
     f"One seeded train / validation / test split; {classifiers.defined('C is chosen on the validation set')}, as "
     "in the paper.")
OPENED_KEY = "_rk_classifiers_opened"
if not st.session_state.get(OPENED_KEY) and not any(is_stored(name) for name in classifiers.OPENING) and not any(
        key != "presenter" for key in st.query_params):  # a bare visit: a link naming any setting keeps the rest
    apply_preset(classifiers.OPENING, reset=False)
st.session_state[OPENED_KEY] = True
spec = sidebar(kernels=list(classifiers.KERNEL_CHOICES), distributions=None, D=False, n_max=20000)

c1, c2, c3, c4 = st.columns([3, 2, 1, 1])
with c1:
    methods = persistent_widget(st.multiselect, "Methods", key="cl_methods",
                                options=classifiers.methods_for(spec.kernel),
                                format_func=lambda k: classifiers.METHODS[k].label,
                                help="TS, RM and the polynomial SVM work on the polynomial kernel of the same degree "
                                     "(Figure 3); the FM on the ANOVA kernel; SCRK needs the ANOVA kernel.")
with c2:
    multiples = persistent_widget(st.multiselect, "D as multiples of d", key="cl_mult",
                                  options=list(MULTIPLES), format_func=lambda m: f"{m}d",
                                  help="The paper uses D = 2d … 16d (16d = 1,248 on MovieLens).")
with c3:
    trials = persistent_widget(st.select_slider, "Trials", key="cl_trials", options=TRIALS,
                               help="Seeds per (method, D); the paper averages 10.")
with c4:
    log2_x = persistent_widget(st.radio, "D axis", key="cl_xaxis",
                               horizontal=True) == "log2"
methods, fm_left_out = classifiers.without_fm(methods, spec.degree)
if fm_left_out:
    st.caption(classifiers.FM_LEFT_OUT)
settings = dict(cl_methods=tuple(methods), cl_mult=tuple(multiples), cl_trials=int(trials))

formula(r"f(\mathbf{x}) = \langle \mathbf{w}, Z(\mathbf{x})\rangle\ \ \text{(linear SVM on } D \text{ random features)}"
        r"\quad\text{vs}\quad f(\mathbf{x}) = \sum_i \alpha_i y_i K(\mathbf{x}_i, \mathbf{x}) + b\ \ "
        r"\text{(kernel SVM)}",
        "A linear model on Z trains in O(n·D) per pass and predicts in O(D·d·m); the kernel SVM needs the n × n "
        "Gram matrix.")


def render_regression(run: ViewRun) -> None:
    r: classifiers.RegressionResult = run.result
    chart(classifiers.regression_figure(r.table), r.table, "Regression: test RMSE vs D",
          caption="Dashed: learners without random features; dotted: predicting the training mean.")
    table(r.summary(), "Regression summary",
          caption="Means over trials; alpha chosen on the validation part by exact kernel ridge.")
    notice(r.note())


with guarded("the regression study"):
    if classifiers.is_regression_target(load_data(spec).y):
        st.caption(escape_markdown(classifiers.regression_caption(load_data(spec), methods)))
        run_view(classifiers.REGRESSION, spec, render_regression, **settings)
        st.stop()  # the classification sections below do not apply to a real-valued target


def described(run: ViewRun) -> None:
    """The data and split in words; below the button, the estimate of what it would run."""
    text, many_classes = classifiers.describe(run.spec, run.data, **run.settings)
    st.caption(escape_markdown(text))
    if many_classes:
        st.caption(many_classes)
    if run.measurement is None or run.measurement.params != run.params:
        est = classifiers.estimate(run.spec, run.data, **run.settings)
        chart(shared_figure(classifiers.estimate_figure, est, log2_x=log2_x), est, "Estimated cost per fit",
              caption="Rough per-fit estimates from timings of these methods on the built-in data (machine "
                      "shared, so expect ±3×); run the study for real numbers.")


def render(run: ViewRun) -> None:
    r: classifiers.ClassifierResult = run.result
    df, n_warn = r.table, r.convergence_warnings
    show_measurement(run.measurement, run.params, title="Results", label=classifiers.RUN_LABEL,
                     caption="Times are wall-clock on a shared machine with one BLAS thread and include the "
                             "feature mapping." + (f" {n_warn} fit(s) stopped at their iteration limit "
                                                   "(ConvergenceWarning)." if n_warn else ""))
    summary = r.summary()
    exact = summary[summary["method"] == "kernel_svm"]
    rf = summary[summary["D"].notna()]
    if len(exact) and len(rf):
        best = rf.loc[rf["accuracy"].idxmax()]
        a, b, c = st.columns(3)
        a.metric("Kernel SVM (exact) accuracy", f"{exact['accuracy'].iloc[0]:.1%}")
        # the model's name goes in a caption: in the delta it was cut with an ellipsis at 1280 px
        b.metric("Best on random features", f"{best['accuracy']:.1%}",
                 delta=f"{(best['accuracy'] - exact['accuracy'].iloc[0]) * 100:+.1f} points vs exact",
                 delta_color="off", delta_arrow="off")
        c.metric("Its training time / the kernel SVM's", f"{best['train s'] / exact['train s'].iloc[0]:.2g}×")
        st.caption(f"Best random-feature model: {escape_markdown(best['label'])} at D = {int(best['D']):,}.")
    with lead():
        chart(shared_figure(classifiers.accuracy_figure, df, log2_x=log2_x), df, "Test accuracy vs D",
              caption="Lines against D: mean over trials, band ± std. Horizontal lines: methods without random "
                      "features (they do not depend on D), band ± std over their trials.")
    chart(shared_figure(classifiers.time_figure, df, log2_x=log2_x), df, "Training and testing time vs D",
          caption="Wall-clock seconds of fit (training, mapping included) and predict (testing) per fit, mean over "
                  "trials.")
    table(summary, "Classifier summary", caption="Means over trials per method and D.",
          column_config={"accuracy": st.column_config.NumberColumn(format="%.4f"),
                         "accuracy std": st.column_config.NumberColumn(format="%.4f"),
                         "train s": st.column_config.NumberColumn(format="%.3g"),
                         "test s": st.column_config.NumberColumn(format="%.3g")})
    notice(r.note())


measured = run_view(classifiers.CLASSIFIERS, spec, render, autorun=run_requested(__file__),
                    on_press=OnPress(label=classifiers.RUN_LABEL, details=described, what=classifiers.measured_what,
                                     fits=classifiers.fits, hidden=classifiers.HIDDEN), **settings)
if measured is None and kept_measurement(classifiers.CLASSIFIERS.key) is None:
    notice(classifiers.BEFORE_THE_RUN)
