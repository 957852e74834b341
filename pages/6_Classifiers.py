"""Classifiers: accuracy and time of linear models on random features against exact kernel methods
(the paper's Figures 2 and 3)."""
import warnings

import numpy as np
import streamlit as st
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from rkapp import (
    chart, choices, escape_markdown, formula, guarded, kept_measurement, largest_fitting, lead, load_data,
    measure_on_press, notice, page, persistent_widget, progress_bar, reproduce, run_or_wait, run_requested, shared_figure,
    show_measurement, sidebar, table,
)
from rkapp.state import apply_preset, is_stored
from rkcore.studies.accuracy import DEFAULT_C_GRID, METHODS, accuracy_study
from rkcore.studies.splits import split_sizes
from rkcore.studies.costs import classifier_cost, classifier_fit_seconds
from rkcore.figures.regression import regression_figure
from rkcore.data.ratings import is_regression_target
from rkcore.studies.regression_study import regression_methods, regression_note, regression_study
from rkcore.figures.accuracy import accuracy_figure, classifier_note, estimate_figure, summary_table, time_figure
from rkcore.registry import ITEMSET_KERNELS
from rkcore.teaching.glossary import defined

MULTIPLES, TRIALS = choices("cl_mult"), choices("cl_trials")
SPLIT = (0.5, 0.1, 0.4)  # train / validation / test fractions of the n points
C_GRID = DEFAULT_C_GRID
REGRESSION_ALPHAS = (0.01, 0.1, 1.0, 10.0)  # ridge penalties validated by exact kernel ridge (regression targets)
RUN_LABEL = "Run the study"

page("Classifiers",
     "Does a linear model on random features learn as well as the kernel method it approximates, and how much "
     f"faster? Linear SVMs on RK / SCRK features (and {defined('TS / RM features')} of the polynomial kernel, and "
     f"{defined('sparse random features')}) against the exact kernel SVM, the {defined('factorization machine')} "
     "and the all-subsets model, as in the paper's Figures 2 and 3. One seeded train / validation / test split; "
     f"{defined('C is chosen on the validation set')}, as in the paper.")
#: what a first visit opens on: n = 1,000 points (at the shared default n = 200 the kernel SVM trained in 3 ms,
#: liblinear stopped at its iteration limit 12 times, and the estimate read "about 0 s"), with every default method:
#: the factorization machine converges here within the study's FM_MAX_ITER (451-491 L-BFGS-B iterations; at its
#: own default of 200 it warned once per trial). A link or preset naming n or the methods keeps its own.
OPENING = {"n": 1000}
OPENED_KEY = "_rk_classifiers_opened"
if not st.session_state.get(OPENED_KEY) and not any(is_stored(name) for name in OPENING) and not any(
        key != "presenter" for key in st.query_params):  # a bare visit: a link naming any setting keeps the rest
    apply_preset(OPENING, reset=False)
st.session_state[OPENED_KEY] = True
view = sidebar(kernels=[k for k in ITEMSET_KERNELS if k != "dot"], distributions=None, D=False, n_max=20000)

allowed = [k for k, m in METHODS.items() if not m.requires or view.kernel in m.requires]
c1, c2, c3, c4 = st.columns([3, 2, 1, 1])
with c1:
    methods = persistent_widget(st.multiselect, "Methods", key="cl_methods", options=allowed,
                                format_func=lambda k: METHODS[k].label,
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
if "fm" in methods and view.degree < 2:  # the FM models products of m >= 2 features; at m = 1 it is not defined
    methods = tuple(k for k in methods if k != "fm")
    st.caption("The factorization machine models interactions of two or more features, so at Degree m = 1 it is "
               "left out; choose m = 2 or more to compare it.")

formula(r"f(\mathbf{x}) = \langle \mathbf{w}, Z(\mathbf{x})\rangle\ \ \text{(linear SVM on } D \text{ random features)}"
        r"\quad\text{vs}\quad f(\mathbf{x}) = \sum_i \alpha_i y_i K(\mathbf{x}_i, \mathbf{x}) + b\ \ "
        r"\text{(kernel SVM)}",
        "A linear model on Z trains in O(n·D) per pass and predicts in O(D·d·m); the kernel SVM needs the n × n "
        "Gram matrix.")


def run_study(data, view, method_keys, D_list, n_trials):
    """The accuracy study with a progress bar. Never cached: its rows hold wall-clock times."""
    with progress_bar("Starting…") as report, warnings.catch_warnings(record=True) as caught, \
            threadpool_limits(limits=1, user_api="blas"):
        # one BLAS thread: a fair, repeatable comparison on a shared 2-core machine
        warnings.simplefilter("always", ConvergenceWarning)
        df = accuracy_study((data.X, data.y), list(method_keys), list(D_list), n_trials,
                            kernel=view.kernel_spec(data), split=SPLIT, C_grid=C_GRID, random_state=view.seed,
                            progress=lambda done, total, msg: report(done / max(total, 1), f"[{done}/{total}] {msg}"))
    n_warn = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return df, n_warn


def regression_task(data, view, methods, multiples, trials) -> None:
    """A real-valued target (e.g. MovieLens ratings): ridge and the FM regressor instead of the classifiers."""
    keys = regression_methods()
    chosen = [k for k in dict.fromkeys({"kernel_svm": "kernel_ridge"}.get(m, m) for m in methods) if k in keys]
    st.caption(f"{escape_markdown(data.description)} A real-valued target: exact kernel SVM → exact kernel ridge, "
               "FM → FM regressor, a linear SVM on random features → ridge on the same features (others are "
               f"classifiers only). Learners: {', '.join(keys[k] for k in chosen) or 'none'}.")
    if not chosen:
        raise ValueError("None of the chosen methods has a regression counterpart; choose the kernel SVM, the FM or "
                         "a map (RK, SCRK, TS, RM).")
    n, d = data.X.shape
    D_list = sorted(int(mult) * d for mult in multiples)
    s_train = int(n * SPLIT[0])
    cost = classifier_cost(["kernel_svm"] + [m for m in chosen if m in METHODS], s_train, int(n * SPLIT[2]), d,
                           D_list, view.kernel_spec(data), trials, len(REGRESSION_ALPHAS))
    run_or_wait(cost, key="cl_reg", params=(view, tuple(chosen), tuple(D_list), trials), what="the regression study")
    with progress_bar("Fitting the regressors…") as report:
        df = regression_study(data, chosen, D_list, trials, kernel=view.kernel_spec(data), split=SPLIT,
                              alpha_grid=REGRESSION_ALPHAS, random_state=view.seed,
                              progress=lambda done, total, text: report(done / max(total, 1), text))
    chart(regression_figure(df), df, "Regression: test RMSE vs D",
          caption="Dashed: learners without random features; dotted: predicting the training mean.")
    table(df.groupby(["label", "D"], dropna=False)[["rmse", "r2", "train_seconds"]].mean().reset_index(),
          "Regression summary", caption="Means over trials; alpha chosen on the validation part by exact kernel ridge.")
    notice(regression_note(df))


with guarded("the regression study"):
    if is_regression_target(load_data(view).y):
        regression_task(load_data(view), view, methods, multiples, int(trials))
        st.stop()  # the classification sections below do not apply to a real-valued target

measured = kept_measurement("cl")
params = None
stale = False
autorun = run_requested(__file__)  # a landing-page preset is a click on "Run the study" (consumed here, once)
with guarded("the classifier study"):
    if not methods:
        raise ValueError("Choose at least one method.")
    if not multiples:
        raise ValueError("Choose at least one multiple of d for D.")
    data = load_data(view)
    if data.y is None:
        raise ValueError(f"The dataset {data.name!r} has no labels; choose a labelled one (e.g. the synthetic "
                         "interactions, breast cancer or wine) or a CSV with a target column.")
    n, d = data.X.shape
    spec = view.kernel_spec(data)
    D_list = sorted(int(mult) * d for mult in multiples)
    n_train, n_val, n_test = split_sizes(n, SPLIT)
    classes = np.unique(data.y).size
    if classes > 2 and any(k in methods for k in ("fm", "all_subsets_model")):
        st.caption(f"{classes} classes: the factorization machine and the all-subsets model are binary by nature and "
                   "run one-vs-rest (one model per class); the SVMs handle many classes themselves.")

    def cost_at(s: int):  # the split's proportions at s points (split_sizes checks s against the data)
        s_train, s_test = max(int(s * SPLIT[0]), 1), max(int(s * SPLIT[2]), 1)
        return classifier_cost(methods, s_train, s_test, d, D_list, spec, int(trials), len(C_GRID))

    fitting_n = largest_fitting(cost_at, n)
    params = (view, tuple(methods), tuple(D_list), int(trials))
    st.caption(f"{escape_markdown(data.description)} n = {n} ({n_train} train / {n_val} validation / {n_test} test, "
               f"seeded split), d = {d}, {classes} classes, {view.normalization}-normalized; "
               f"{escape_markdown(spec.label())} kernel; D ∈ {{{', '.join(map(str, D_list))}}}; {trials} trial(s).")
    est = classifier_fit_seconds(methods, n_train, n_test, d, D_list, spec.degree)

    def estimate_chart():
        chart(shared_figure(estimate_figure, est, log2_x=log2_x), est, "Estimated cost per fit",
              caption="Rough per-fit estimates from timings of these methods on the built-in data (machine "
                      "shared, so expect ±3×); run the study for real numbers.")

    with lead():  # the run button (then the results) first, above the settings
        measured = measure_on_press(
            cost_at(n), lambda: run_study(data, view, methods, D_list, int(trials)), key="cl", params=params,
            what=f"this study ({len(est)} method/D cells × {trials} trial(s), plus C validation)", label=RUN_LABEL,
            fits=(f"With these methods, D and trials, n up to {fitting_n:,} fits; or drop the slowest methods (see "
                  "the estimate chart)." if fitting_n >= 10 else "Lower the largest D, or drop the slowest methods."),
            autorun=autorun)
    if measured is None or measured.params != params:  # below the button: the estimate of what it would run
        estimate_chart()

if measured is not None and params is None:  # the current inputs failed: the kept results are of other inputs
    st.warning("The results of the last run are hidden: they came from earlier inputs, and the current ones failed "
               "(see the message above). Fix the inputs and run the study again.", icon=":material/history:")
    measured = None
    stale = True
if measured is not None:
    with guarded("the classifier results"):
        df, n_warn = measured.value
        show_measurement(measured, params, title="Results", label=RUN_LABEL,
                         caption="Times are wall-clock on a shared machine with one BLAS thread and include the "
                                 "feature mapping." + (f" {n_warn} fit(s) stopped at their iteration limit "
                                                       "(ConvergenceWarning)." if n_warn else ""))
        summary = summary_table(df)
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
            chart(shared_figure(accuracy_figure, df, log2_x=log2_x), df, "Test accuracy vs D",
                  caption="Lines against D: mean over trials, band ± std. Horizontal lines: methods without random "
                          "features (they do not depend on D), band ± std over their trials.")
        chart(shared_figure(time_figure, df, log2_x=log2_x), df, "Training and testing time vs D",
              caption="Wall-clock seconds of fit (training, mapping included) and predict (testing) per fit, mean over "
                      "trials.")
        table(summary, "Classifier summary", caption="Means over trials per method and D.",
              column_config={"accuracy": st.column_config.NumberColumn(format="%.4f"),
                             "accuracy std": st.column_config.NumberColumn(format="%.4f"),
                             "train s": st.column_config.NumberColumn(format="%.3g"),
                             "test s": st.column_config.NumberColumn(format="%.3g")})
        notice(classifier_note(summary, int(df["n_train"].iloc[0])))

if measured is None and not stale:
    notice(f"Press **{RUN_LABEL}**: the note then compares the best random-feature model with the kernel SVM in "
           "accuracy and in measured training time.")

reproduce(view.code(
    "from rkcore.studies.accuracy import accuracy_study, summarize",
    "from rkcore.figures.accuracy import accuracy_figure, time_figure",
    "",
    f"df = accuracy_study((X, y), {list(methods)!r}, [m * d for m in {sorted(int(m) for m in multiples)}], "
    f"{int(trials)},",
    f"                    kernel=spec, split={SPLIT}, C_grid={list(C_GRID)}, random_state={view.seed})",
    "print(summarize(df))",
    f"accuracy_figure(df, log2_x={log2_x}).show()",
    f"time_figure(df, log2_x={log2_x}).show()",
))
