"""Accuracy and time of classifiers on random features vs exact kernels (paper Figures 2 and 3).

:func:`accuracy_study` splits a labelled dataset into train / validation / test,
picks the regularization C on the validation set and then, for every method,
number of random features D and trial (random seed), fits on the training set
and records test accuracy, training time and testing time in a tidy DataFrame
(one row per fit). The methods (keys, labels, colours, targets, cost models) are the
table :data:`rkcore.registry.METHODS`; this module builds and fits them.

Regularization follows the paper: "All the methods have a regularization
hyperparameter, which we set on the basis of the validation accuracy of the
non-linear SVMs." With ``shared_C=True`` one C per kernel is chosen from the exact
kernel SVM's validation accuracy over ``C_grid`` (the study kernel for kernel_svm,
fm, rk, scrk, sparse_rf; the polynomial kernel for poly_svm, ts, rm, as the paper
ran polynomial SVMs for Figure 3; the all-subsets kernel for the all-subsets model)
and reused. For the factorized models the SVM's ``C sum_i loss_i + ||.||^2 / 2``
becomes the penalty ``alpha = beta = 1 / (C n_train)`` of their mean-loss objective;
they start from ``init_scale="auto"`` (data-scaled factors: with the fixed 0.01 a
third-order FM on L1-normalised MovieLens rows stops at its flat start as a constant).
With ``shared_C=False`` every (method, D) picks its own C on the validation set
(trial 0's seed).

The validation score that picks C (``select_by``) is accuracy in the paper; on unbalanced labels
(MovieLens: 21% positives) every C that predicts the majority class ties with the best, and the most
regularized of them - a constant classifier - wins; ``"balanced_accuracy"`` avoids that.

The result has one row per fit with columns ``method, label, kernel, D`` (NaN for methods without random
features), ``trial, seed, accuracy, balanced_accuracy`` (mean per-class recall: 0.5 for a constant
prediction on two classes), ``train_seconds, test_seconds, C, model_size`` (support vectors / rank / D /
non-zero features), ``n_train, n_test``. ``df.attrs["validation"]`` holds the validation records
(selection, kernel, D, C, val_accuracy, val_balanced_accuracy); ``df.attrs["split"]`` the sizes and the
test accuracy of always predicting the majority training class.

Times: wall-clock ``perf_counter()`` around ``fit(X_train)``, ``predict(X_test)`` (mapping in), never cached.
More than two classes: the binary-by-nature FM and all-subsets model run one-vs-rest (``for_many_classes``).

With a Dask ``client`` the fits run on the cluster (C is validated locally first); the split data are
scattered once. Same seeds, same accuracies as a local run (times differ), on workers with one thread
each (or process workers): liblinear, used by ``sparse_rf``, draws from libc's process-global
``rand()``, so fits running in threads of one process interleave their draws and the number of kept
features can change from run to run.
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.metrics import balanced_accuracy_score
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC

from ..base.validation import check_int, is_int
from ..learners import exact_gram, for_many_classes
from ..registry import METHODS, KernelSpec, get_method
from ..registry import MethodEntry as Method  # the old name, still importable
from .method_estimators import build_estimator, model_size
from .splits import split_indices, split_sizes
from ..base.annotations import is_sparse

__all__ = ["DEFAULT_C_GRID", "METHODS", "SELECTION_METRICS", "Method", "PAPER_SPLIT", "accuracy_study",
           "check_study", "estimate_seconds", "format_table", "get_method", "speedups", "summarize",
           "total_seconds", "validate_C_kernel_svm"]

DEFAULT_C_GRID = (0.1, 1.0, 10.0, 100.0, 1000.0)
SELECTION_METRICS = ("accuracy", "balanced_accuracy")
#: the paper's MovieLens 100K split (Section 6)
PAPER_SPLIT = (21_200, 1_000, 20_202)
#: the split of any smaller dataset
DEFAULT_SPLIT = (0.5, 0.1, 0.4)
#: seeds reach scikit-learn and numpy, which take 32-bit seeds
MAX_SEED = 2**32 - 1

COLUMNS = ["method", "label", "kernel", "D", "trial", "seed", "accuracy", "balanced_accuracy", "train_seconds",
           "test_seconds", "C", "model_size", "n_train", "n_test"]


# ----------------------------------------------------------------------------- cost estimates
def estimate_seconds(method_keys: Sequence[str], n_train: int, n_test: int, d: int, D_list,
                     degree: int) -> pd.DataFrame:
    """Rough seconds of one fit + prediction per (method, D), from the methods' cost models.

    The cost models are the registry's ``fit_seconds`` (:data:`METHODS`); predicting is taken as a
    tenth of fitting on as many points. A guide for sizing a study before it runs, not a measurement.

    Parameters
    ----------
    method_keys : sequence of str
        Keys of :data:`METHODS`.
    n_train, n_test : int
        Numbers of training and test rows.
    d : int
        Number of features.
    D_list : sequence of int
        The numbers of random features (for the methods with random features only).
    degree : int
        Order m of the study kernel.

    Returns
    -------
    pandas.DataFrame
        One row per method and D: columns method, label, D (float64; NaN for methods without random
        features) and seconds (float64).

    Raises
    ------
    ValueError
        If a key is not in :data:`METHODS`.

    Examples
    --------
    >>> from rkcore.studies.accuracy import estimate_seconds
    >>> est = estimate_seconds(["kernel_svm", "rk"], 500, 200, 20, [64, 128], 2)
    >>> est[["method", "D"]].to_numpy().tolist()
    [['kernel_svm', nan], ['rk', 64.0], ['rk', 128.0]]
    """
    rows = []
    for key in method_keys:
        method = get_method(key)
        for D in (D_list if method.uses_D else [np.nan]):
            Dv = 0 if np.isnan(D) else D
            seconds = method.fit_seconds(n_train, d, Dv, degree) + method.fit_seconds(n_test, d, Dv, degree) * 0.1
            rows.append({"method": key, "label": method.label, "D": D, "seconds": seconds})
    return pd.DataFrame(rows, columns=["method", "label", "D", "seconds"])


def total_seconds(estimates: pd.DataFrame, n_trials: int, n_train: int, d: int, spec: KernelSpec,
                  n_C: int = len(DEFAULT_C_GRID)) -> float:
    """Rough seconds of a whole study, from :func:`estimate_seconds`.

    The rows of ``estimates`` times the trials of randomized methods, plus C validation: one exact
    SVM per distinct kernel the methods target (as :func:`accuracy_study` does with ``shared_C``),
    for each of ``n_C`` values of C.

    Parameters
    ----------
    estimates : pandas.DataFrame
        The output of :func:`estimate_seconds` (columns method and seconds are read).
    n_trials : int
        Trials per (method, D) of the randomized methods.
    n_train : int
        Number of training rows (the validation SVMs' cost).
    d : int
        Number of features.
    spec : KernelSpec
        The study kernel (each method's target kernel is derived from it).
    n_C : int, default=len(DEFAULT_C_GRID)
        Number of C values validated.

    Returns
    -------
    float
        Estimated seconds of the study.

    Examples
    --------
    >>> from rkcore.registry import KernelSpec
    >>> from rkcore.studies.accuracy import estimate_seconds, total_seconds
    >>> est = estimate_seconds(["kernel_svm", "rk"], 500, 200, 20, [64], 2)
    >>> bool(total_seconds(est, 3, 500, 20, KernelSpec("anova", 2)) > est["seconds"].sum())
    True
    """
    fits = sum(seconds * (n_trials if get_method(method).randomized else 1)
               for method, seconds in zip(estimates["method"], estimates["seconds"]))
    targets = {get_method(k).kernel_of(spec) for k in estimates["method"].unique()}
    svm = {t: METHODS["poly_svm" if t.entry.is_polynomial and not t.entry.homogeneous else "kernel_svm"]
           for t in targets}
    return fits + sum(n_C * svm[t].fit_seconds(n_train, d, 0, 2) for t in targets)


# ----------------------------------------------------------------------------- data handling
def _as_xy(data):
    """(X, y) from a Dataset (anything with .X and .y) or an (X, y) pair."""
    if hasattr(data, "X") and hasattr(data, "y"):
        X, y = data.X, data.y
    elif isinstance(data, (tuple, list)) and len(data) == 2:
        X, y = data
    else:
        raise ValueError("dataset_or_XY must be a rkcore Dataset or an (X, y) pair.")
    if y is None:
        raise ValueError("The accuracy study needs labels: the dataset has y = None.")
    X = sp.csr_matrix(X, dtype=np.float64) if is_sparse(X) else np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"X must be (n, d) and y (n,) with the same n; got X {X.shape} and y {y.shape}.")
    if np.unique(y).size < 2:
        raise ValueError("y has a single class; the accuracy study needs at least two.")
    return X, y


def _check_methods(methods: Sequence[str], kernel: KernelSpec) -> list[Method]:
    if isinstance(methods, str):
        methods = [methods]
    chosen = [get_method(k) for k in methods]
    if not chosen:
        raise ValueError(f"methods is empty; choose from {', '.join(map(repr, METHODS))}.")
    for m in chosen:
        if m.requires and kernel.name not in m.requires:
            allowed = [k for k, e in METHODS.items() if not e.requires or kernel.name in e.requires]
            raise ValueError(f"Method {m.key!r} needs the {' or '.join(m.requires)} kernel, not {kernel.name!r}; "
                             f"with {kernel.name!r} the allowed methods are: {', '.join(allowed)}.")
    return chosen


def check_study(methods: Sequence[str], kernel: KernelSpec, n_features: int, n_components_list: Sequence[int],
                method_params: Mapping[str, dict] | None = None) -> None:
    """Raise ValueError for any study that would fail after work has started.

    Checks the methods against the kernel, the degrees against the number of features,
    D values, and builds every method's estimator once with its parameter overrides
    (unknown parameter names and invalid values are caught here, not in the first fit).

    Parameters
    ----------
    methods : sequence of str
        Keys of :data:`METHODS`.
    kernel : KernelSpec
        The study kernel.
    n_features : int
        Number of features d of the data.
    n_components_list : sequence of int
        The D values.
    method_params : mapping or None, default=None
        Estimator overrides per method key, as for :func:`accuracy_study`.
    """
    chosen = _check_methods(methods, kernel)
    Ds = [int(D) for D in n_components_list]
    if any(D < 1 for D in Ds) or (not Ds and any(m.uses_D for m in chosen)):
        raise ValueError(f"numbers of random features D must be integers >= 1; got {list(n_components_list)!r}.")
    params = {k: dict(v) for k, v in (method_params or {}).items()}
    for key in params:
        get_method(key)
        if key not in [m.key for m in chosen]:
            raise ValueError(f"parameters given for method {key!r}, which is not in the study ({', '.join(methods)}).")
    for method in chosen:
        spec = method.kernel_of(kernel)
        if spec.entry.ordered and spec.degree > n_features:
            raise ValueError(f"{method.key}: degree {spec.degree} exceeds the number of features d = {n_features}.")
        try:
            est = build_estimator(method, spec, max(Ds) if method.uses_D else None, 1.0, 100, 0,
                                  params.get(method.key, {}))
            for step in ([s for _, s in est.steps] if isinstance(est, Pipeline) else [est]):
                step._validate_params()
        except (TypeError, ValueError) as exc:
            raise ValueError(f"method {method.key!r}: {exc}") from None


# ----------------------------------------------------------------------------- validation of C
def validate_C_kernel_svm(spec: KernelSpec, X_train, y_train, X_val, y_val, C_grid) -> pd.DataFrame:
    """Validation scores of the exact kernel SVM for every C (the Gram matrices computed once).

    Parameters
    ----------
    spec : KernelSpec
        The kernel of the SVM.
    X_train : {ndarray, sparse matrix} of shape (n_train, n_features)
        Training rows.
    y_train : ndarray of shape (n_train,)
        Their labels.
    X_val : {ndarray, sparse matrix} of shape (n_val, n_features)
        Validation rows.
    y_val : ndarray of shape (n_val,)
        Their labels.
    C_grid : sequence of float
        The values of C (> 0).

    Returns
    -------
    pandas.DataFrame
        One row per C, in the grid's order: columns kernel (label), C, val_accuracy and
        val_balanced_accuracy (mean per-class recall).
    """
    G_train = exact_gram(spec, X_train)
    G_val = exact_gram(spec, X_val, X_train)
    rows = []
    for C in C_grid:
        pred = SVC(kernel="precomputed", C=float(C)).fit(G_train, y_train).predict(G_val)
        rows.append({"kernel": spec.label(), "C": float(C), **_scores(y_val, pred)})
    return pd.DataFrame(rows)


def _scores(y_true, pred) -> dict:
    return {"val_accuracy": float(np.mean(pred == y_true)),
            "val_balanced_accuracy": float(balanced_accuracy_score(y_true, pred))}


def _best_C(table: pd.DataFrame, select_by: str = "accuracy") -> float:
    # ties go to the smallest C (the most regularized model)
    column = f"val_{select_by}"
    best = table[column].max()
    return float(table.loc[table[column] == best, "C"].min())


# ----------------------------------------------------------------------------- the study
def accuracy_study(dataset_or_XY, methods: Sequence[str], n_components_list: Sequence[int], n_trials: int = 3, *,
                   kernel: KernelSpec | None = None, split=DEFAULT_SPLIT, C_grid=DEFAULT_C_GRID,
                   shared_C: bool = True, select_by: str = "accuracy",
                   method_params: Mapping[str, dict] | None = None, random_state=0,
                   progress: Callable[[int, int, str], None] | None = None, stratify: bool = True,
                   client=None) -> pd.DataFrame:
    """Test accuracy and train / test time of each method, D and trial (paper Figures 2 and 3).

    Parameters
    ----------
    dataset_or_XY : Dataset or (X, y)
        Labelled data (normalize it beforehand if wanted; the paper L1-normalizes).
    methods : sequence of str
        Keys of :data:`METHODS`, e.g. ``["kernel_svm", "fm", "rk", "scrk"]``.
    n_components_list : sequence of int
        The numbers of random features D (used by the random-feature methods only).
    n_trials : int
        Seeds per (method, D). Deterministic methods (the exact SVMs) run once.
    kernel : KernelSpec, default KernelSpec("anova", 2)
        The study kernel (the paper: ANOVA m = 2, 3 and all-subsets).
    split : (train, validation, test)
        Counts, or fractions of n; one seeded random split shared by all fits.
    C_grid : sequence of float
        Candidate C values, chosen by validation accuracy (see the module docstring).
    shared_C : bool
        One C per kernel from the exact kernel SVM (the paper) or one per (method, D).
    select_by : {"accuracy", "balanced_accuracy"}
        Validation score that picks C (the paper: accuracy; see the module docstring).
    method_params : mapping method key -> dict of estimator parameters
        Overrides, e.g. ``{"fm": {"max_iter": 100, "init_scale": 1.0},
        "rk": {"clf__max_iter": 2000}, "sparse_rf": {"n_iter": 8}}``.
    random_state : int
        Seeds the split; trial t of a randomized method uses seed ``random_state + t``.
    progress : callable (done, total, message) or None
        Called before every fit and once at the end (done == total).
    stratify : bool, default=True
        Keep the class proportions in all three parts; False draws a plain permutation.
    client : dask.distributed.Client or None
        Run the fits on this Dask cluster (see the module docstring).

    Returns
    -------
    DataFrame
        One row per fit, columns :data:`COLUMNS` (see the module docstring); ``attrs["validation"]``
        the validation records, ``attrs["split"]`` the sizes and the majority-class test accuracy.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.studies.accuracy import accuracy_study
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(200, 6); y = (X[:, 0] * X[:, 1] > 0.25).astype(int)
    >>> df = accuracy_study((X, y), ["kernel_svm", "rk"], [32], n_trials=2, C_grid=[1.0, 10.0])
    >>> df[["method", "D", "trial"]].to_numpy().tolist()
    [['kernel_svm', nan, 0], ['rk', 32.0, 0], ['rk', 32.0, 1]]
    """
    X, y = _as_xy(dataset_or_XY)
    args = _checked_arguments(methods, n_components_list, n_trials, kernel, C_grid, select_by, method_params,
                              random_state)
    n_train, n_val, n_test = split_sizes(X.shape[0], split)
    tr, va, te = split_indices(y, (n_train, n_val, n_test), random_state, stratify)
    seed0 = 0 if random_state is None else int(random_state)
    jobs = [(m, D, t) for m in args.methods for D in (args.Ds if m.uses_D else [None])
            for t in (range(args.n_trials) if m.randomized else [0])]

    def notify(done, text):  # numpydoc ignore=GL08
        if progress is not None:
            progress(done, len(jobs), text)

    choose_C = _CSelector(args, (X[tr], y[tr]), (X[va], y[va]), select_by, shared_C, n_train, seed0, notify)
    # C first (validation fits run here), then the fits: independent tasks with their own seeds
    fits = [(method.key, args.kernel, D, choose_C(method, D), n_train, seed0 + trial, trial,
             args.params.get(method.key, {})) for method, D, trial in jobs]
    rows = _run_fits(fits, {"X_train": X[tr], "y_train": y[tr], "X_test": X[te], "y_test": y[te]}, client, notify)
    df = pd.DataFrame(rows, columns=COLUMNS)
    df.attrs["validation"] = choose_C.validation
    labels, counts = np.unique(y[tr], return_counts=True)
    df.attrs["split"] = {"n_train": n_train, "n_val": n_val, "n_test": n_test, "stratified": bool(stratify),
                         "majority_accuracy": float(np.mean(y[te] == labels[np.argmax(counts)]))}
    return df


def _run_fits(fits: list[tuple], shared: dict, client, notify) -> list[dict]:
    """The rows of the fits, run here or on a Dask cluster (the data in ``shared`` scattered once)."""
    if client is not None:
        from .distributed import run_tasks  # dask only when a cluster is asked for

        results = run_tasks(client, _fit_and_score, fits, shared)
    else:
        results = (_fit_and_score(*fit, **shared) for fit in fits)
    rows = list(_announce(results, fits, notify))
    notify(len(rows), "done")
    return rows


@dataclass(frozen=True)
class _StudyArguments:
    kernel: KernelSpec
    methods: list[Method]
    Ds: list[int]
    n_trials: int
    C_grid: list[float]
    params: dict


def _checked_arguments(methods, n_components_list, n_trials, kernel, C_grid, select_by, method_params,
                       random_state) -> _StudyArguments:
    """Every argument of :func:`accuracy_study` but the data, checked before any work (ValueError)."""
    kernel = KernelSpec("anova", 2) if kernel is None else kernel
    if not isinstance(kernel, KernelSpec):
        raise ValueError(f"kernel must be a KernelSpec, got {type(kernel).__name__}.")
    chosen = _check_methods(methods, kernel)
    Ds = list(n_components_list)
    if any(not is_int(D) for D in Ds):
        raise ValueError(f"n_components_list must hold integers >= 1; got {n_components_list!r}.")
    Ds = [int(D) for D in Ds]
    if any(D < 1 for D in Ds) or (not Ds and any(m.uses_D for m in chosen)):
        raise ValueError("n_components_list must hold integers >= 1 for the random-feature methods; "
                         f"got {n_components_list!r}.")
    n_trials = check_int(n_trials, "n_trials")
    if random_state is not None:  # trial t uses random_state + t: every one a 32-bit seed
        check_int(random_state, "random_state", 0, MAX_SEED - (n_trials - 1))
    C_grid = [float(c) for c in np.atleast_1d(C_grid)]
    if not C_grid or min(C_grid) <= 0 or not all(math.isfinite(c) for c in C_grid):
        raise ValueError(f"C_grid must hold positive finite numbers; got {C_grid!r}.")
    if select_by not in SELECTION_METRICS:
        raise ValueError(f"select_by must be one of {', '.join(map(repr, SELECTION_METRICS))}; got {select_by!r}.")
    params = {k: dict(v) for k, v in (method_params or {}).items()}
    for key in params:
        get_method(key)
    return _StudyArguments(kernel, chosen, Ds, n_trials, C_grid, params)


class _CSelector:
    """C for a (method, D), chosen on the validation set and remembered: with ``shared`` one C per target
    kernel from its exact SVM (the paper), else one per (method, D) from the method itself (trial 0's seed).
    ``validation`` collects every validation record."""

    def __init__(self, args: _StudyArguments, train: tuple[Any, Any], val: tuple[Any, Any], select_by: str,
                 shared: bool, n_train: int, seed: int,
                 notify: Callable[[int, str], None]):
        self.args, self.train, self.val, self.select_by = args, train, val, select_by
        self.shared, self.n_train, self.seed, self.notify = shared, n_train, seed, notify
        self.validation: list[dict] = []
        self._chosen: dict = {}

    def __call__(self, method: Method, D) -> float:
        key = method.kernel_of(self.args.kernel) if self.shared else (method.key, D)
        if key not in self._chosen:
            table = self._by_kernel_svm(key) if isinstance(key, KernelSpec) else self._by_method(method, D)
            self._chosen[key] = _best_C(table, self.select_by)
        return self._chosen[key]

    def _by_kernel_svm(self, spec: KernelSpec) -> pd.DataFrame:
        self.notify(0, f"validating C on the exact {spec.label()} kernel SVM")
        table = validate_C_kernel_svm(spec, *self.train, *self.val, self.args.C_grid)
        self.validation.extend({"selection": "kernel_svm", "D": np.nan, **r} for r in table.to_dict("records"))
        return table

    def _by_method(self, method: Method, D) -> pd.DataFrame:
        self.notify(0, f"validating C for {method.label}" + (f" D={D}" if D else ""))
        spec = method.kernel_of(self.args.kernel)
        records, params = [], self.args.params.get(method.key, {})
        for C in self.args.C_grid:
            est = for_many_classes(build_estimator(method, spec, D, C, self.n_train, self.seed, params), self.train[1])
            pred = est.fit(*self.train).predict(self.val[0])
            records.append({"selection": method.key, "kernel": spec.label(), "D": np.nan if D is None else D,
                            "C": C, **_scores(self.val[1], pred)})
        self.validation.extend(records)
        return pd.DataFrame(records)


def _announce(results, fits, notify):
    """Report each fit as it starts (local run) or is collected (Dask)."""
    for done, fit in enumerate(fits):
        key, _, D, _, _, _, trial, _ = fit
        notify(done, f"{get_method(key).label}" + (f" D={D}" if D else "") + f" trial {trial}")
        yield next(results)


def _fit_and_score(method_key: str, kernel: KernelSpec, D, C: float, n_train: int, seed: int, trial: int,
                   params: dict, *, X_train, y_train, X_test, y_test) -> dict:
    """Build, fit and test one (method, D, trial); times measured here, where it runs."""
    method = get_method(method_key)
    spec = method.kernel_of(kernel)
    # binary-by-nature models (FM, all-subsets) on more than two classes: one-vs-rest (rkcore.learners.regression)
    est = for_many_classes(build_estimator(method, spec, D, C, n_train, seed, params), y_train)
    start = time.perf_counter()
    est.fit(X_train, y_train)
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    pred = est.predict(X_test)
    test_seconds = time.perf_counter() - start
    return {
        "method": method.key, "label": method.label, "kernel": spec.label(),
        "D": np.nan if D is None else float(D), "trial": trial, "seed": seed if method.randomized else np.nan,
        "accuracy": float(np.mean(pred == y_test)),
        "balanced_accuracy": float(balanced_accuracy_score(y_test, pred)),
        "train_seconds": train_seconds, "test_seconds": test_seconds,
        "C": C, "model_size": model_size(method, est, D), "n_train": n_train, "n_test": len(y_test),
    }


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation of accuracy, and mean times, per (method, D).

    Parameters
    ----------
    df : pandas.DataFrame
        The output of :func:`accuracy_study`.

    Returns
    -------
    pandas.DataFrame
        One row per (method, D) in the order of ``df``: columns method, label, D, accuracy_mean,
        accuracy_std (sample standard deviation over trials, 0.0 for a single trial), balanced_accuracy,
        train_seconds and test_seconds (means), C, model_size (mean) and trials (their number).
    """
    keys = ["method", "label", "D"]
    g = df.groupby(keys, dropna=False, sort=False)
    out = g.agg(accuracy_mean=("accuracy", "mean"), accuracy_std=("accuracy", "std"),
                balanced_accuracy=("balanced_accuracy", "mean"),
                train_seconds=("train_seconds", "mean"), test_seconds=("test_seconds", "mean"),
                C=("C", "first"), model_size=("model_size", "mean"), trials=("trial", "count")).reset_index()
    out["accuracy_std"] = out["accuracy_std"].fillna(0.0)
    return out


def speedups(df: pd.DataFrame, reference: str = "kernel_svm") -> pd.DataFrame:
    """:func:`summarize` plus how many times faster than ``reference`` each method trains and tests.

    Ratios of mean times measured in the same run (the machine's load cancels out as
    far as it can).

    Parameters
    ----------
    df : pandas.DataFrame
        The output of :func:`accuracy_study`.
    reference : str, default="kernel_svm"
        Key of the method the others are compared with.

    Returns
    -------
    pandas.DataFrame
        :func:`summarize`'s table with train_speedup and test_speedup (reference mean seconds / the
        method's; > 1 is faster), NaN when the reference method is not in ``df``.
    """
    s = summarize(df)
    ref = s[s["method"] == reference]
    if ref.empty:
        s["train_speedup"] = s["test_speedup"] = np.nan
        return s
    s["train_speedup"] = float(ref["train_seconds"].iloc[0]) / s["train_seconds"]
    s["test_speedup"] = float(ref["test_seconds"].iloc[0]) / s["test_seconds"]
    return s


def format_table(df: pd.DataFrame) -> str:
    """Text table of a study: accuracy mean +- std, mean train and test seconds per method and D.

    Parameters
    ----------
    df : pandas.DataFrame
        The output of :func:`accuracy_study`.

    Returns
    -------
    str
        One line per (method, D) under a header: method, D ("-" without random features), accuracy,
        balanced accuracy, train and test seconds, C, model size and number of trials.
    """
    s = summarize(df)
    lines = pd.DataFrame({
        "method": s["method"],
        "D": s["D"].map(lambda v: "-" if pd.isna(v) else str(int(v))),
        "accuracy": [f"{m:.4f} +- {sd:.4f}" for m, sd in zip(s["accuracy_mean"], s["accuracy_std"])],
        "balanced": s["balanced_accuracy"].map(lambda v: f"{v:.4f}"),
        "train s": s["train_seconds"].map(lambda v: f"{v:.3f}"),
        "test s": s["test_seconds"].map(lambda v: f"{v:.3f}"),
        "C": s["C"].map(lambda v: f"{v:g}"),
        "size": s["model_size"].map(lambda v: f"{v:.0f}"),
        "trials": s["trials"],
    })
    return lines.to_string(index=False)
