"""Accuracy and time of classifiers on random features vs exact kernels (paper Figures 2 and 3).

:func:`accuracy_study` splits a labelled dataset into train / validation / test,
picks the regularization C on the validation set and then, for every method,
number of random features D and trial (random seed), fits on the training set
and records test accuracy, training time and testing time in a tidy DataFrame
(one row per fit). Methods are entries of :data:`METHODS`, keyed as in the paper:

==================  =================================================================
kernel_svm          SVM on the exact study kernel (libsvm, precomputed Gram)
poly_svm            SVM on the exact polynomial kernel (c + <x, y>)^m (Figure 3)
fm                  m-order factorization machine (rank 30, as in the paper)
all_subsets_model   the all-subsets model (rank 30)
rk, scrk            linear SVM on RK / SCRK features of the study kernel
ts, rm              linear SVM on Tensor Sketch / Random Maclaurin features of the
                    polynomial kernel of the same degree (Figure 3)
sparse_rf           Sparse Random Features (Yen et al. 2014) over RK features;
                    D = features drawn in total
==================  =================================================================

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

Times are wall-clock ``time.perf_counter()`` around ``fit(X_train)`` and
``predict(X_test)`` - mapping included - measured fresh for every row, never cached.
"""
from __future__ import annotations

import argparse
import ast
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.metrics import balanced_accuracy_score
from sklearn.svm import SVC
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

from .models import (
    AllSubsetsModelClassifier,
    ExactKernelSVC,
    FactorizationMachineClassifier,
    SparseRandomFeatureClassifier,
    exact_gram,
    random_feature_pipeline,
)
from .registry import KERNELS, KernelSpec

DEFAULT_C_GRID = (0.1, 1.0, 10.0, 100.0, 1000.0)
#: the paper's MovieLens 100K split (Section 6)
PAPER_SPLIT = (21_200, 1_000, 20_202)
FM_RANK = 30
SPARSE_RF_ITERATIONS = 4

COLUMNS = ["method", "label", "kernel", "D", "trial", "seed", "accuracy", "balanced_accuracy", "train_seconds",
           "test_seconds", "C", "model_size", "n_train", "n_test"]


# ----------------------------------------------------------------------------- methods
def _polynomial(spec: KernelSpec) -> KernelSpec:
    return KernelSpec("polynomial", degree=spec.degree)


def _anova(spec: KernelSpec) -> KernelSpec:
    return KernelSpec("anova", degree=spec.degree)


def _same(spec: KernelSpec) -> KernelSpec:
    return spec


def _svm(spec, D, C, n_train, seed, params):
    return ExactKernelSVC(spec, C=C, **params)


def _fm(spec, D, C, n_train, seed, params):
    reg = 1.0 / (C * n_train)
    return FactorizationMachineClassifier(**{"degree": spec.degree, "n_components": FM_RANK, "alpha": reg,
                                             "beta": reg, "init_scale": "auto", "random_state": seed, **params})


def _all_subsets_model(spec, D, C, n_train, seed, params):
    reg = 1.0 / (C * n_train)
    return AllSubsetsModelClassifier(**{"n_components": FM_RANK, "alpha": reg, "beta": reg, "init_scale": "auto",
                                        "random_state": seed, **params})


def _linear_on(map_key):
    def build(spec, D, C, n_train, seed, params):
        pipe = random_feature_pipeline(map_key, spec, D, random_state=seed, C=C)
        return pipe.set_params(**params) if params else pipe
    return build


def _sparse_rf(spec, D, C, n_train, seed, params):
    params = dict(params)
    n_iter = int(params.pop("n_iter", SPARSE_RF_ITERATIONS))
    batch = int(params.pop("batch", math.ceil(D / n_iter)))
    return SparseRandomFeatureClassifier("rk", spec=spec, C=C, n_iter=n_iter, batch=batch,
                                         random_state=seed, **params)


@dataclass(frozen=True)
class Method:
    """One learner of the study: what kernel it targets and how to build it."""

    key: str
    label: str
    uses_D: bool  # has a number of random features D
    randomized: bool  # results depend on the trial's seed (else run once)
    kernel_of: Callable[[KernelSpec], KernelSpec]  # study kernel -> the kernel this method targets
    build: Callable  # (spec, D, C, n_train, seed, params) -> unfitted estimator
    requires: tuple[str, ...] = ()  # study kernels it needs (empty: any)

    def model_size(self, est, D):
        if self.key in ("kernel_svm", "poly_svm"):
            return int(est.support_.size)
        if self.key == "sparse_rf":
            return int(est.n_nonzero_)
        if self.key in ("fm", "all_subsets_model"):
            return int(est.n_components)
        return int(D)


METHODS: dict[str, Method] = {
    m.key: m
    for m in (
        Method("kernel_svm", "Kernel SVM (exact)", False, False, _same, _svm),
        Method("poly_svm", "Kernel SVM (polynomial)", False, False, _polynomial, _svm),
        Method("fm", "Factorization machine", False, True, _anova, _fm),
        Method("all_subsets_model", "All-subsets model", False, True,
               lambda spec: KernelSpec("all_subsets"), _all_subsets_model),
        Method("rk", "Linear SVM + RK", True, True, _same, _linear_on("rk")),
        Method("scrk", "Linear SVM + SCRK", True, True, _same, _linear_on("scrk"), requires=("anova",)),
        Method("ts", "Linear SVM + TS", True, True, _polynomial, _linear_on("ts")),
        Method("rm", "Linear SVM + RM", True, True, _polynomial, _linear_on("rm")),
        Method("sparse_rf", "Sparse RF (l1, RK)", True, True, _same, _sparse_rf),
    )
}


def get_method(key: str) -> Method:
    try:
        return METHODS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown method {key!r}; allowed: {', '.join(map(repr, METHODS))}.") from None


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
    X = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise ValueError(f"X must be (n, d) and y (n,) with the same n; got X {X.shape} and y {y.shape}.")
    if np.unique(y).size < 2:
        raise ValueError("y has a single class; the accuracy study needs at least two.")
    return X, y


def split_sizes(n: int, split) -> tuple[int, int, int]:
    """Train / validation / test sizes from counts or fractions of n (their sum must be <= n)."""
    if len(split) != 3:
        raise ValueError(f"split must be (train, validation, test); got {split!r}.")
    sizes = []
    for part in split:
        if isinstance(part, (bool, np.bool_)) or not isinstance(part, (int, float, np.integer, np.floating)) \
                or not np.isfinite(part) or part <= 0 or (part >= 1 and float(part) != int(part)):
            raise ValueError(f"split entries must be positive counts or fractions in (0, 1), counts whole numbers; got {split!r}.")
        sizes.append(int(part) if float(part) >= 1 else int(round(float(part) * n)))
    if sum(sizes) > n:
        raise ValueError(f"split {split!r} asks for {sum(sizes)} samples but the dataset has only {n}.")
    if min(sizes) < 2:
        raise ValueError(f"split {split!r} gives a part with fewer than 2 samples (sizes {sizes}).")
    return tuple(sizes)


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


# ----------------------------------------------------------------------------- validation of C
def validate_C_kernel_svm(spec: KernelSpec, X_train, y_train, X_val, y_val, C_grid) -> pd.DataFrame:
    """Validation accuracy of the exact kernel SVM for every C (Grams computed once)."""
    G_train = exact_gram(spec, X_train)
    G_val = exact_gram(spec, X_val, X_train)
    rows = []
    for C in C_grid:
        pred = SVC(kernel="precomputed", C=float(C)).fit(G_train, y_train).predict(G_val)
        rows.append({"kernel": spec.label(), "C": float(C), **_scores(y_val, pred)})
    return pd.DataFrame(rows)


SELECTION_METRICS = ("accuracy", "balanced_accuracy")


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
                   kernel: KernelSpec | None = None, split=(0.5, 0.1, 0.4), C_grid=DEFAULT_C_GRID,
                   shared_C: bool = True, select_by: str = "accuracy",
                   method_params: Mapping[str, dict] | None = None, random_state=0,
                   progress: Callable[[int, int, str], None] | None = None) -> pd.DataFrame:
    """Test accuracy and train / test time of each method, D and trial (paper Figures 2 and 3).

    Parameters
    ----------
    dataset_or_XY : Dataset or (X, y)
        Labelled data (normalize it beforehand if wanted; the paper L1-normalizes).
    methods : sequence of keys of :data:`METHODS`
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
        Validation score that picks C. The paper uses accuracy; on unbalanced labels
        (MovieLens: 21% positives) every C that predicts the majority class ties with
        the best, and the most regularized of them - a constant classifier - wins.
    method_params : mapping method key -> dict of estimator parameters
        Overrides, e.g. ``{"fm": {"max_iter": 100, "init_scale": 1.0},
        "rk": {"clf__max_iter": 2000}, "sparse_rf": {"n_iter": 8}}``.
    random_state : int
        Seeds the split; trial t of a randomized method uses seed ``random_state + t``.
    progress : callable (done, total, message) or None

    Returns
    -------
    DataFrame with one row per fit and columns ``method, label, kernel, D`` (NaN for
    methods without random features), ``trial, seed, accuracy, balanced_accuracy``
    (mean per-class recall: 0.5 for a constant prediction on two classes),
    ``train_seconds, test_seconds, C, model_size`` (support vectors / rank / D /
    non-zero features), ``n_train, n_test``. ``df.attrs["validation"]`` holds the
    validation records (selection, kernel, D, C, val_accuracy, val_balanced_accuracy);
    ``df.attrs["split"]``
    the sizes and the test accuracy of always predicting the majority training class.
    """
    X, y = _as_xy(dataset_or_XY)
    kernel = KernelSpec("anova", 2) if kernel is None else kernel
    if not isinstance(kernel, KernelSpec):
        raise ValueError(f"kernel must be a KernelSpec, got {type(kernel).__name__}.")
    chosen = _check_methods(methods, kernel)
    from .kernels import is_integer
    Ds = list(n_components_list)
    if any(not is_integer(D) for D in Ds):
        raise ValueError(f"n_components_list must hold integers >= 1; got {n_components_list!r}.")
    Ds = [int(D) for D in Ds]
    if any(D < 1 for D in Ds) or (not Ds and any(m.uses_D for m in chosen)):
        raise ValueError("n_components_list must hold integers >= 1 for the random-feature methods; "
                         f"got {n_components_list!r}.")
    if isinstance(n_trials, bool) or not isinstance(n_trials, (int, np.integer)) or n_trials < 1:
        raise ValueError(f"n_trials must be an integer >= 1, got {n_trials!r}.")
    C_grid = [float(c) for c in np.atleast_1d(C_grid)]
    if not C_grid or min(C_grid) <= 0:
        raise ValueError(f"C_grid must hold positive numbers; got {C_grid!r}.")
    if select_by not in SELECTION_METRICS:
        raise ValueError(f"select_by must be one of {', '.join(map(repr, SELECTION_METRICS))}; got {select_by!r}.")
    params = {k: dict(v) for k, v in (method_params or {}).items()}
    for key in params:
        get_method(key)

    n_train, n_val, n_test = split_sizes(X.shape[0], split)
    order = check_random_state(random_state).permutation(X.shape[0])
    tr, va, te = order[:n_train], order[n_train:n_train + n_val], order[n_train + n_val:n_train + n_val + n_test]
    X_tr, y_tr, X_va, y_va, X_te, y_te = X[tr], y[tr], X[va], y[va], X[te], y[te]
    seed0 = 0 if random_state is None else int(random_state)

    jobs = [(m, D, t) for m in chosen for D in (Ds if m.uses_D else [None])
            for t in (range(n_trials) if m.randomized else [0])]
    validation: list[dict] = []
    C_of: dict = {}

    def notify(done, text):
        if progress is not None:
            progress(done, len(jobs), text)

    def C_for(method: Method, D) -> float:
        if shared_C:
            spec = method.kernel_of(kernel)
            if spec not in C_of:
                notify(len(rows), f"validating C on the exact {spec.label()} kernel SVM")
                table = validate_C_kernel_svm(spec, X_tr, y_tr, X_va, y_va, C_grid)
                validation.extend({"selection": "kernel_svm", "D": np.nan, **r} for r in table.to_dict("records"))
                C_of[spec] = _best_C(table, select_by)
            return C_of[spec]
        key = (method.key, D)
        if key not in C_of:
            notify(len(rows), f"validating C for {method.label}" + (f" D={D}" if D else ""))
            records = []
            for C in C_grid:
                est = method.build(method.kernel_of(kernel), D, C, n_train, seed0, params.get(method.key, {}))
                pred = est.fit(X_tr, y_tr).predict(X_va)
                records.append({"selection": method.key, "kernel": method.kernel_of(kernel).label(),
                                "D": np.nan if D is None else D, "C": C, **_scores(y_va, pred)})
            validation.extend(records)
            C_of[key] = _best_C(pd.DataFrame(records), select_by)
        return C_of[key]

    rows: list[dict] = []
    for method, D, trial in jobs:
        C = C_for(method, D)
        seed = seed0 + trial
        spec = method.kernel_of(kernel)
        est = method.build(spec, D, C, n_train, seed, params.get(method.key, {}))
        notify(len(rows), f"{method.label}" + (f" D={D}" if D else "") + f" trial {trial}")
        start = time.perf_counter()
        est.fit(X_tr, y_tr)
        train_seconds = time.perf_counter() - start
        start = time.perf_counter()
        pred = est.predict(X_te)
        test_seconds = time.perf_counter() - start
        rows.append({
            "method": method.key, "label": method.label, "kernel": spec.label(),
            "D": np.nan if D is None else float(D), "trial": trial, "seed": seed if method.randomized else np.nan,
            "accuracy": float(np.mean(pred == y_te)),
            "balanced_accuracy": float(balanced_accuracy_score(y_te, pred)),
            "train_seconds": train_seconds, "test_seconds": test_seconds,
            "C": C, "model_size": method.model_size(est, D), "n_train": n_train, "n_test": n_test,
        })
    notify(len(rows), "done")
    df = pd.DataFrame(rows, columns=COLUMNS)
    df.attrs["validation"] = validation
    labels, counts = np.unique(y_tr, return_counts=True)
    df.attrs["split"] = {"n_train": n_train, "n_val": n_val, "n_test": n_test,
                         "majority_accuracy": float(np.mean(y_te == labels[np.argmax(counts)]))}
    return df


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Mean and std of accuracy and times per (method, D): one row per group."""
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
    far as it can); NaN when the reference method is not in ``df``.
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
    """Text table: accuracy mean +- std, mean train and test seconds per method and D."""
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


# ----------------------------------------------------------------------------- command line
def _load(data: str, target: str | None, n_samples: int | None, seed: int):
    from . import datasets

    if data.startswith("builtin:"):
        return datasets.load_builtin(data.split(":", 1)[1], n_samples=n_samples, random_state=seed)
    path = Path(data)
    if path.is_dir():
        return datasets.load_movielens(path, n_samples=n_samples, random_state=seed if n_samples else None)
    if not path.is_file():
        raise ValueError(f"--data {data!r} is neither builtin:KEY, a MovieLens folder nor a file.")
    if path.suffix.lower() == ".csv":
        return datasets.load_csv(path, target=target)
    return datasets.load_libsvm(path)


def _parse_Ds(text: str, d: int) -> list[int]:
    """'156,312' or multiples of d: '2d,4d,8d,16d'."""
    out = []
    for part in text.split(","):
        part = part.strip().lower()
        if not part:
            continue
        try:
            out.append(int(float(part[:-1]) * d) if part.endswith("d") else int(part))
        except ValueError:
            raise ValueError(f"--D entries must be integers or multiples of d such as '16d'; got {part!r}.") from None
    return out


def _parse_params(items: Sequence[str]) -> dict:
    """['fm.max_iter=100', 'rk.clf__max_iter=2000'] -> {'fm': {'max_iter': 100}, ...}."""
    out: dict = {}
    for item in items or []:
        try:
            key, value = item.split("=", 1)
            method, name = key.split(".", 1)
        except ValueError:
            raise ValueError(f"--param must look like METHOD.PARAM=VALUE; got {item!r}.") from None
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            parsed = value
        out.setdefault(method, {})[name] = parsed
    return out


def _parse_split(n: int, n_train, n_val, n_test):
    if n_train is None and n_val is None and n_test is None:
        return PAPER_SPLIT if n >= sum(PAPER_SPLIT) else (0.5, 0.1, 0.4)
    parts = [n_train or 0.5, n_val or 0.1, n_test or 0.4]
    return tuple(float(p) if p < 1 else int(p) for p in parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m rkcore accuracy",
        description="Accuracy and train/test time of kernel SVMs, FMs and linear models on random features "
                    "(Atarashi et al., AAAI-19, Figures 2 and 3).")
    parser.add_argument("--data", required=True, help="builtin:KEY, a MovieLens 100K folder, a .csv or a LIBSVM file")
    parser.add_argument("--target", default=None, help="label column of a CSV file")
    parser.add_argument("--n-samples", type=int, default=None, help="load only this many rows (seeded subsample)")
    parser.add_argument("--normalize", default="l1", choices=["l1", "l2", "none"], help="row normalization (paper: l1)")
    parser.add_argument("--kernel", default="anova", choices=sorted(KERNELS), help="study kernel")
    parser.add_argument("--degree", type=int, default=2)
    parser.add_argument("--D", default="2d,4d,8d,16d", help="numbers of random features, e.g. 156,312 or 2d,16d")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--methods", default=None, help=f"comma-separated keys of {', '.join(METHODS)}")
    parser.add_argument("--n-train", type=float, default=None)
    parser.add_argument("--n-val", type=float, default=None)
    parser.add_argument("--n-test", type=float, default=None)
    parser.add_argument("--C-grid", default=",".join(f"{c:g}" for c in DEFAULT_C_GRID))
    parser.add_argument("--per-method-C", action="store_true", help="validate C per method instead of sharing the SVM's")
    parser.add_argument("--select-by", default="accuracy", choices=SELECTION_METRICS,
                        help="validation score that picks C (paper: accuracy)")
    parser.add_argument("--param", action="append", default=[], help="METHOD.PARAM=VALUE estimator override (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the tidy per-fit rows to this CSV file")
    parser.add_argument("--blas-threads", type=int, default=None,
                        help="limit BLAS threads for every method (steadier timings on a shared machine)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)

    try:
        from .datasets import normalize

        data = _load(args.data, args.target, args.n_samples, args.seed)
        X = normalize(data.X, args.normalize)
        kernel = KernelSpec(args.kernel, degree=args.degree)
        if args.methods:
            methods = [m.strip() for m in args.methods.split(",") if m.strip()]
        elif args.kernel == "anova":
            methods = ["kernel_svm", "fm", "rk", "scrk"]
        else:
            methods = ["kernel_svm", "rk"]
        Ds = _parse_Ds(args.D, X.shape[1])
        split = _parse_split(X.shape[0], args.n_train, args.n_val, args.n_test)
        C_grid = [float(c) for c in args.C_grid.split(",") if c.strip()]
        params = _parse_params(args.param)

        def progress(done, total, text):
            if not args.quiet:
                print(f"[{done}/{total}] {text}", file=sys.stderr, flush=True)

        with threadpool_limits(args.blas_threads):
            df = accuracy_study((X, data.y), methods, Ds, args.trials, kernel=kernel, split=split, C_grid=C_grid,
                                shared_C=not args.per_method_C, select_by=args.select_by,
                                method_params=params, random_state=args.seed,
                                progress=progress)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    sizes = df.attrs["split"]
    print(f"{data.name}: d = {X.shape[1]}, train/val/test = {sizes['n_train']}/{sizes['n_val']}/{sizes['n_test']}, "
          f"kernel = {kernel.label()}, normalization = {args.normalize}; "
          f"majority-class test accuracy = {sizes['majority_accuracy']:.4f}")
    chosen = pd.DataFrame(df.attrs["validation"])
    if not chosen.empty:
        print(f"validation {args.select_by.replace('_', ' ')} by C:")
        print(chosen.pivot_table(index=["selection", "kernel", "D"], columns="C", values=f"val_{args.select_by}",
                                 dropna=False).to_string())
    print(format_table(df))
    if args.out:
        df.to_csv(args.out, index=False)
        print(f"wrote {len(df)} rows to {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
