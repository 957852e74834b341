"""Classifiers: accuracy and time of linear models on random features against exact kernel methods (the paper's
Figures 2 and 3), and the regression counterparts on a real-valued target.

:data:`CLASSIFIERS` is a measurement (wall-clock training times): the page runs it only on its button, never
cached. :data:`REGRESSION` (a real-valued target, e.g. MovieLens ratings) runs under the usual protocol. The page
(``pages/6_Classifiers.py``) draws what :func:`compute` and :func:`compute_regression` return.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from rkcore.data.ratings import is_regression_target
from rkcore.figures.accuracy import accuracy_figure, classifier_note, estimate_figure, summary_table, time_figure
from rkcore.figures.regression import regression_figure
from rkcore.registry import ITEMSET_KERNELS, KERNELS
from rkcore.studies.accuracy import DEFAULT_C_GRID, METHODS, accuracy_study
from rkcore.studies.costs import classifier_cost, classifier_fit_seconds
from rkcore.studies.costs.rates import RunCost
from rkcore.studies.regression_study import regression_methods, regression_note, regression_study
from rkcore.studies.splits import split_sizes
from rkcore.teaching.glossary import defined

from .base import View
from .settings import ViewSpec

#: Train / validation / test fractions of the n points.
SPLIT = (0.5, 0.1, 0.4)
C_GRID = DEFAULT_C_GRID
#: Ridge penalties validated by exact kernel ridge (regression targets).
REGRESSION_ALPHAS = (0.01, 0.1, 1.0, 10.0)
RUN_LABEL = "Run the study"
#: The kernels the study offers: not the dot product, whose family of single items is linear (nothing to approximate).
KERNEL_CHOICES = tuple(k for k in ITEMSET_KERNELS if not KERNELS[k].is_linear)
#: What a first visit opens on: n = 1,000 points (at the shared default n = 200 the kernel SVM trained in 3 ms,
#: liblinear stopped at its iteration limit 12 times, and the estimate read "about 0 s"), with every default method:
#: the factorization machine converges here within the study's FM_MAX_ITER (451-491 L-BFGS-B iterations; at its
#: own default of 200 it warned once per trial). A link or preset naming n or the methods keeps its own.
OPENING = {"n": 1000}
#: The page's own fields of the state table that the studies read (the D axis only draws).
SETTINGS = ("cl_methods", "cl_mult", "cl_trials")
FM_LEFT_OUT = ("The factorization machine models interactions of two or more features, so at Degree m = 1 it is "
               "left out; choose m = 2 or more to compare it.")
HIDDEN = ("The results of the last run are hidden: they came from earlier inputs, and the current ones failed "
          "(see the message above). Fix the inputs and run the study again.")
BEFORE_THE_RUN = (f"Press **{RUN_LABEL}**: the note then compares the best random-feature model with the kernel SVM "
                  "in accuracy and in measured training time.")


def methods_for(kernel: str) -> list[str]:
    """The methods the study offers for ``kernel`` (those that require a kernel need that one).

    Parameters
    ----------
    kernel : str
        The kernel's key.

    Returns
    -------
    list of str
        Method keys.
    """
    return [k for k, m in METHODS.items() if not m.requires or kernel in m.requires]


def without_fm(methods, degree: int) -> tuple[tuple[str, ...], bool]:
    """The methods to run at this degree: the factorization machine models products of m >= 2 features.

    Parameters
    ----------
    methods : iterable of str
        The chosen methods.
    degree : int
        The kernel's order m.

    Returns
    -------
    tuple
        The methods kept, and whether the FM was left out.
    """
    methods = tuple(methods)
    if "fm" in methods and degree < 2:
        return tuple(k for k in methods if k != "fm"), True
    return methods, False


def _D_list(d: int, cl_mult) -> list[int]:
    return sorted(int(mult) * d for mult in cl_mult)


def _checked(cl_methods, cl_mult) -> None:
    if not cl_methods:
        raise ValueError("Choose at least one method.")
    if not cl_mult:
        raise ValueError("Choose at least one multiple of d for D.")


def check_labels(data) -> None:
    """Refuse data without labels, in the user's words.

    Parameters
    ----------
    data : Dataset
        The view's data.

    Raises
    ------
    ValueError
        When the data have no labels.
    """
    if data.y is None:
        raise ValueError(f"The dataset {data.name!r} has no labels; choose a labelled one (e.g. the synthetic "
                         "interactions, breast cancer or wine) or a CSV with a target column.")


@dataclass(frozen=True)
class ClassifierResult:  # numpydoc ignore=PR02
    """One row per fit, and how many fits stopped at their iteration limit.

    Parameters
    ----------
    table : DataFrame
        :func:`rkcore.studies.accuracy.accuracy_study` rows.
    convergence_warnings : int
        ConvergenceWarnings raised by the fits.
    """

    table: pd.DataFrame
    convergence_warnings: int

    def summary(self) -> pd.DataFrame:
        """Means over trials per method and D.

        Returns
        -------
        DataFrame
            :func:`rkcore.figures.accuracy.summary_table`.
        """
        return summary_table(self.table)

    def note(self) -> str:
        """The note comparing the best random-feature model with the kernel SVM.

        Returns
        -------
        str
            :func:`rkcore.figures.accuracy.classifier_note`.
        """
        return classifier_note(self.summary(), int(self.table["n_train"].iloc[0]))


def compute(spec: ViewSpec, data, *, cl_methods, cl_mult, cl_trials,
            progress: Callable[[float, str], None] | None = None) -> ClassifierResult:
    """The accuracy study on one seeded split, one BLAS thread (a fair, repeatable comparison on a shared machine).

    Parameters
    ----------
    spec : ViewSpec
        The shared settings (kernel, seed).
    data : Dataset
        Labelled data.
    cl_methods, cl_mult, cl_trials
        Methods, D as multiples of d, trials.
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    ClassifierResult
        The fits.
    """
    _checked(cl_methods, cl_mult)
    check_labels(data)
    report = None if progress is None else (
        lambda done, total, msg: progress(done / max(total, 1), f"[{done}/{total}] {msg}"))
    with warnings.catch_warnings(record=True) as caught, threadpool_limits(limits=1, user_api="blas"):
        warnings.simplefilter("always", ConvergenceWarning)
        df = accuracy_study((data.X, data.y), list(cl_methods), _D_list(data.X.shape[1], cl_mult), int(cl_trials),
                            kernel=spec.kernel_spec(data), split=SPLIT, C_grid=C_GRID, random_state=spec.seed,
                            progress=report)
    return ClassifierResult(df, sum(issubclass(w.category, ConvergenceWarning) for w in caught))


def cost(spec: ViewSpec, n: int, d: int, *, cl_methods, cl_mult, cl_trials) -> RunCost:
    """Seconds and peak bytes of :func:`compute` for n points of d features (the split's proportions).

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    n, d : int
        Points and features.
    cl_methods, cl_mult, cl_trials
        The page's settings.

    Returns
    -------
    RunCost
        The estimate.
    """
    _checked(cl_methods, cl_mult)
    s_train, s_test = max(int(n * SPLIT[0]), 1), max(int(n * SPLIT[2]), 1)
    return classifier_cost(cl_methods, s_train, s_test, d, _D_list(d, cl_mult), spec.kernel_spec(d=d),
                           int(cl_trials), len(C_GRID))


def fits(spec: ViewSpec, data, largest: Callable[[Callable[[int], RunCost], int], int], **settings) -> str:
    """The sentence naming the largest n that fits the limits (labels checked first).

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    data : Dataset
        The view's data.
    largest : callable
        ``largest(cost_of, upper)``: the largest size up to ``upper`` whose cost fits.
    **settings
        The page's settings.

    Returns
    -------
    str
        The sentence.
    """
    check_labels(data)
    n, d = data.X.shape
    fitting_n = largest(lambda s: cost(spec, s, d, **settings), n)
    return (f"With these methods, D and trials, n up to {fitting_n:,} fits; or drop the slowest methods (see "
            "the estimate chart)." if fitting_n >= 10 else "Lower the largest D, or drop the slowest methods.")


def estimate(spec: ViewSpec, data, *, cl_methods, cl_mult, cl_trials) -> pd.DataFrame:
    """Rough seconds per fit of each (method, D) cell, from the cost models.

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    data : Dataset
        The view's data.
    cl_methods, cl_mult, cl_trials
        The page's settings.

    Returns
    -------
    DataFrame
        :func:`rkcore.studies.costs.classifier_fit_seconds`.
    """
    n, d = data.X.shape
    n_train, _, n_test = split_sizes(n, SPLIT)
    return classifier_fit_seconds(cl_methods, n_train, n_test, d, _D_list(d, cl_mult), spec.degree)


def measured_what(spec: ViewSpec, data, **settings) -> str:
    """What the estimate names: the (method, D) cells, trials and C validation.

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    data : Dataset
        The view's data.
    **settings
        The page's settings.

    Returns
    -------
    str
        The phrase.
    """
    cells = len(estimate(spec, data, **settings))
    return f"this study ({cells} method/D cells × {settings['cl_trials']} trial(s), plus C validation)"


def describe(spec: ViewSpec, data, *, cl_methods, cl_mult, cl_trials) -> tuple[str, str | None]:
    """The data and split in words, and a note when binary models run one-vs-rest.

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    data : Dataset
        Labelled data.
    cl_methods, cl_mult, cl_trials
        The page's settings.

    Returns
    -------
    tuple of str
        The description (plain text: the caller escapes it), and the one-vs-rest note or None.
    """
    n, d = data.X.shape
    n_train, n_val, n_test = split_sizes(n, SPLIT)
    classes = np.unique(data.y).size
    text = (f"{data.description} n = {n} ({n_train} train / {n_val} validation / {n_test} test, seeded split), "
            f"d = {d}, {classes} classes, {spec.normalization}-normalized; {spec.kernel_spec(data).label()} kernel; "
            f"D ∈ {{{', '.join(map(str, _D_list(d, cl_mult)))}}}; {cl_trials} trial(s).")
    many = (f"{classes} classes: the factorization machine and the all-subsets model are binary by nature and run "
            "one-vs-rest (one model per class); the SVMs handle many classes themselves."
            if classes > 2 and any(k in cl_methods for k in ("fm", "all_subsets_model")) else None)
    return text, many


def reproduce(spec: ViewSpec, *, cl_methods, cl_mult, cl_trials, log2_x: bool = False) -> str:
    """Python code running the study with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    cl_methods, cl_mult, cl_trials
        The page's settings.
    log2_x : bool, default False
        The figures' D axis in log2.

    Returns
    -------
    str
        The code.
    """
    return spec.code(
        "from rkcore.studies.accuracy import accuracy_study, summarize",
        "from rkcore.figures.accuracy import accuracy_figure, time_figure",
        "",
        f"df = accuracy_study((X, y), {list(cl_methods)!r}, [m * d for m in {sorted(int(m) for m in cl_mult)}], "
        f"{int(cl_trials)},",
        f"                    kernel=spec, split={SPLIT}, C_grid={list(C_GRID)}, random_state={spec.seed})",
        "print(summarize(df))",
        f"accuracy_figure(df, log2_x={log2_x}).show()",
        f"time_figure(df, log2_x={log2_x}).show()",
    )


# ---------------------------------------------------------------------------- a real-valued target
def regression_chosen(cl_methods) -> list[str]:
    """The regression learners standing for the chosen methods (exact kernel SVM -> exact kernel ridge, ...).

    Parameters
    ----------
    cl_methods : iterable of str
        The chosen methods.

    Returns
    -------
    list of str
        Keys of :func:`rkcore.studies.regression_study.regression_methods`.
    """
    keys = regression_methods()
    return [k for k in dict.fromkeys({"kernel_svm": "kernel_ridge"}.get(m, m) for m in cl_methods) if k in keys]


def regression_caption(data, cl_methods) -> str:
    """What the regression study runs instead of the classifiers (plain text: the caller escapes it).

    Parameters
    ----------
    data : Dataset
        The view's data.
    cl_methods : iterable of str
        The chosen methods.

    Returns
    -------
    str
        The caption.
    """
    keys = regression_methods()
    return (f"{data.description} A real-valued target: exact kernel SVM → exact kernel ridge, FM → FM regressor, a "
            "linear SVM on random features → ridge on the same features (others are classifiers only). Learners: "
            f"{', '.join(keys[k] for k in regression_chosen(cl_methods)) or 'none'}.")


def _regression_checked(cl_methods) -> list[str]:
    chosen = regression_chosen(cl_methods)
    if not chosen:
        raise ValueError("None of the chosen methods has a regression counterpart; choose the kernel SVM, the FM or "
                         "a map (RK, SCRK, TS, RM).")
    return chosen


@dataclass(frozen=True)
class RegressionResult:  # numpydoc ignore=PR02
    """One row per fit of the regression study.

    Parameters
    ----------
    table : DataFrame
        :func:`rkcore.studies.regression_study.regression_study` rows (its attrs: the split and the mean baseline).
    """

    table: pd.DataFrame

    def summary(self) -> pd.DataFrame:
        """Means over trials per learner and D.

        Returns
        -------
        DataFrame
            Columns label, D, rmse, r2, train_seconds.
        """
        return self.table.groupby(["label", "D"], dropna=False)[["rmse", "r2", "train_seconds"]].mean().reset_index()

    def note(self) -> str:
        """The regression note.

        Returns
        -------
        str
            :func:`rkcore.studies.regression_study.regression_note`.
        """
        return regression_note(self.table)


def compute_regression(spec: ViewSpec, data, *, cl_methods, cl_mult, cl_trials,
                       progress: Callable[[float, str], None] | None = None) -> RegressionResult:
    """Ridge and the FM regressor (and exact kernel ridge) on a real-valued target.

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    data : Dataset
        Data with a real-valued target.
    cl_methods, cl_mult, cl_trials
        The page's settings.
    progress : callable, optional
        ``progress(fraction, message)``.

    Returns
    -------
    RegressionResult
        The fits.
    """
    report = None if progress is None else (lambda done, total, text: progress(done / max(total, 1), text))
    df = regression_study(data, _regression_checked(cl_methods), _D_list(data.X.shape[1], cl_mult), int(cl_trials),
                          kernel=spec.kernel_spec(data), split=SPLIT, alpha_grid=REGRESSION_ALPHAS,
                          random_state=spec.seed, progress=report)
    return RegressionResult(df)


def regression_cost(spec: ViewSpec, n: int, d: int, *, cl_methods, cl_mult, cl_trials) -> RunCost:
    """Seconds and peak bytes of :func:`compute_regression`, priced as the classifier study of its learners.

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    n, d : int
        Points and features.
    cl_methods, cl_mult, cl_trials
        The page's settings.

    Returns
    -------
    RunCost
        The estimate.
    """
    chosen = _regression_checked(cl_methods)
    return classifier_cost(["kernel_svm"] + [m for m in chosen if m in METHODS], int(n * SPLIT[0]),
                           int(n * SPLIT[2]), d, _D_list(d, cl_mult), spec.kernel_spec(d=d), int(cl_trials),
                           len(REGRESSION_ALPHAS))


def reproduce_regression(spec: ViewSpec, *, cl_methods, cl_mult, cl_trials) -> str:
    """Python code running the regression study with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The shared settings.
    cl_methods, cl_mult, cl_trials
        The page's settings.

    Returns
    -------
    str
        The code.
    """
    return spec.code(
        "from rkcore.studies.regression_study import regression_study",
        "",
        f"df = regression_study((X, y), {regression_chosen(cl_methods)!r}, "
        f"[m * d for m in {sorted(int(m) for m in cl_mult)}], {int(cl_trials)},",
        f"                      kernel=spec, split={SPLIT}, alpha_grid={list(REGRESSION_ALPHAS)}, "
        f"random_state={spec.seed})",
        "print(df.groupby(['label', 'D'], dropna=False)[['rmse', 'r2', 'train_seconds']].mean())",
    )


CLASSIFIERS = View(key="cl", what="the classifier study", compute=compute, cost=cost, reproduce=reproduce,
                   settings=SETTINGS, measure=True)
REGRESSION = View(key="cl_reg", what="the regression study", compute=compute_regression, cost=regression_cost,
                  reproduce=reproduce_regression, settings=SETTINGS)
VIEWS = (CLASSIFIERS, REGRESSION)

__all__ = ["BEFORE_THE_RUN", "CLASSIFIERS", "C_GRID", "FM_LEFT_OUT", "HIDDEN", "KERNEL_CHOICES", "METHODS", "OPENING",
           "REGRESSION", "REGRESSION_ALPHAS", "RUN_LABEL", "SETTINGS", "SPLIT", "ClassifierResult", "RegressionResult",
           "accuracy_figure", "check_labels", "defined", "describe", "estimate", "estimate_figure", "fits",
           "is_regression_target", "measured_what", "methods_for", "regression_caption", "regression_chosen",
           "regression_figure", "time_figure", "without_fm"]
