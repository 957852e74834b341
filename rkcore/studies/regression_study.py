"""The accuracy study's regression task (e.g. MovieLens ratings): test RMSE and R^2 of exact kernel ridge, the
factorization machine regressor and ridge regression on each registry map's random features, per D and trial.

Protocol as :func:`rkcore.studies.accuracy.accuracy_study`'s: one seeded train / validation / test split, the ridge penalty
alpha chosen on the validation part by exact kernel ridge on the study kernel and shared by every learner (the FM
takes alpha = beta = that alpha / n_train, its mean-loss scale), trial t seeds the random learners with
random_state + t.
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .method_estimators import FM_RANK
from .splits import split_sizes
from ..registry import MAPS, KernelSpec, anova_of, get_map
from ..learners.regression import ExactKernelRidge, FactorizationMachineRegressor, random_feature_ridge
from ..base.validation import check_int
from ..base.annotations import is_sparse

DEFAULT_ALPHA_GRID = (1e-3, 1e-2, 1e-1, 1.0, 10.0)
COLUMNS = ["method", "label", "kernel", "D", "trial", "seed", "rmse", "r2", "train_seconds", "test_seconds", "alpha",
           "n_train", "n_test"]


def regression_methods() -> dict[str, str]:
    """Keys and labels: exact kernel ridge, the FM regressor, ridge on every map the accuracy study offers.

    Returns
    -------
    dict[str, str]
        Method key -> display label.
    """
    methods = {"kernel_ridge": "Kernel ridge (exact)", "fm": "Factorization machine (regression)"}
    methods.update({k: f"Ridge + {e.short_label}" for k, e in MAPS.items() if e.classifier_kernel is not None})
    return methods


def _build(key: str, kernel: KernelSpec, D, alpha: float, n_train: int, seed: int):
    if key == "kernel_ridge":
        return ExactKernelRidge(kernel, alpha=alpha), kernel
    if key == "fm":
        spec = anova_of(kernel)
        return FactorizationMachineRegressor(spec.degree, n_components=FM_RANK, alpha=alpha / n_train,
                                             beta=alpha / n_train, init_scale="auto", random_state=seed), spec
    entry = get_map(key)
    assert entry.classifier_kernel is not None  # the study offers only maps with a classifier kernel
    spec = entry.classifier_kernel(kernel)
    return random_feature_ridge(key, spec, D, random_state=seed, alpha=alpha), spec


def _scores(y_true, pred) -> dict:
    residual = pred - y_true
    total = float(np.sum((y_true - y_true.mean()) ** 2))
    return {"rmse": float(np.sqrt(np.mean(residual**2))),
            "r2": float(1.0 - np.sum(residual**2) / total) if total > 0 else float("nan")}


def regression_study(dataset_or_XY, methods: Sequence[str], n_components_list: Sequence[int], n_trials: int = 3, *,
                     kernel: KernelSpec | None = None, split=(0.5, 0.1, 0.4), alpha_grid=DEFAULT_ALPHA_GRID,
                     random_state: int = 0, progress: Callable[[int, int, str], None] | None = None) -> pd.DataFrame:
    """One row per fit (columns :data:`COLUMNS`); ``df.attrs["split"]`` the sizes and the test RMSE of predicting
    the training mean, ``df.attrs["validation"]`` the alpha search.

    Parameters
    ----------
    dataset_or_XY : Dataset or tuple
        A dataset with ``X`` and ``y``, or the pair (X, y); y must be finite.
    methods : Sequence[str]
        Keys of :func:`regression_methods`.
    n_components_list : Sequence[int]
        Numbers of random features D of the random-feature ridges.
    n_trials : int, default 3
        Trials (seeds) of each random learner.
    kernel : KernelSpec or None, default None
        The study kernel; None for the ANOVA kernel of degree 2.
    split : tuple, default (0.5, 0.1, 0.4)
        Train, validation and test sizes, fractions or counts.
    alpha_grid : sequence of float, default DEFAULT_ALPHA_GRID
        Ridge penalties tried on the validation part.
    random_state : int, default 0
        Seed of the split; trial t's learners use random_state + t.
    progress : callable or None, default None
        Called as ``progress(done, total, message)`` before each fit.

    Returns
    -------
    pandas.DataFrame
        One row per fit, columns :data:`COLUMNS`.
    """
    X, y = (dataset_or_XY.X, dataset_or_XY.y) if hasattr(dataset_or_XY, "X") else dataset_or_XY
    if y is None:
        raise ValueError("The regression study needs a target: the dataset has y = None.")
    X = sp.csr_matrix(X, dtype=np.float64) if is_sparse(X) else np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if not np.isfinite(y).all():
        raise ValueError("The regression target has NaN or infinite values.")
    known = regression_methods()
    unknown = [m for m in methods if m not in known]
    if not methods or unknown:
        raise ValueError(f"Unknown or no regression methods {unknown}; allowed: {', '.join(known)}.")
    kernel = KernelSpec("anova", 2) if kernel is None else kernel
    n_trials = check_int(n_trials, "n_trials")
    Ds = [check_int(D, "n_components (D)") for D in n_components_list]
    n_train, n_val, n_test = split_sizes(X.shape[0], split)
    order = np.random.RandomState(random_state).permutation(X.shape[0])
    tr, va, te = order[:n_train], order[n_train:n_train + n_val], order[n_train + n_val:n_train + n_val + n_test]
    validation = []
    for alpha in alpha_grid:
        pred = ExactKernelRidge(kernel, alpha=float(alpha)).fit(X[tr], y[tr]).predict(X[va])
        validation.append({"alpha": float(alpha), **_scores(y[va], pred)})
    alpha = min(validation, key=lambda r: r["rmse"])["alpha"]
    jobs = [(m, D, t) for m in methods for D in ([None] if m == "kernel_ridge" or m == "fm" else Ds)
            for t in ([0] if m == "kernel_ridge" else range(n_trials))]
    rows = []
    for done, (key, D, trial) in enumerate(jobs):
        if progress is not None:
            progress(done, len(jobs), f"{known[key]}" + (f" D={D}" if D else "") + f" trial {trial}")
        est, spec = _build(key, kernel, D, alpha, n_train, random_state + trial)
        start = time.perf_counter()
        est.fit(X[tr], y[tr])
        train_seconds = time.perf_counter() - start
        start = time.perf_counter()
        pred = est.predict(X[te])
        rows.append({"method": key, "label": known[key], "kernel": spec.label(), "D": np.nan if D is None else float(D),
                     "trial": trial, "seed": np.nan if key == "kernel_ridge" else random_state + trial,
                     **_scores(y[te], pred), "train_seconds": train_seconds,
                     "test_seconds": time.perf_counter() - start, "alpha": alpha, "n_train": n_train, "n_test": n_test})
    if progress is not None:
        progress(len(jobs), len(jobs), "done")
    df = pd.DataFrame(rows, columns=COLUMNS)
    df.attrs["validation"] = validation
    df.attrs["split"] = {"n_train": n_train, "n_val": n_val, "n_test": n_test,
                         "mean_rmse": float(np.sqrt(np.mean((y[te] - y[tr].mean()) ** 2)))}
    return df


def regression_note(df: pd.DataFrame) -> str:
    """Which learner has the lowest mean test RMSE, against predicting the training mean (from the numbers).

    Parameters
    ----------
    df : pandas.DataFrame
        Result of :func:`regression_study`.

    Returns
    -------
    str
        The conclusion in one sentence.
    """
    if df.empty:
        return "No regression results to report."
    means = df.groupby("label", sort=False)["rmse"].mean().sort_values()
    baseline = df.attrs.get("split", {}).get("mean_rmse")
    text = f"Lowest test RMSE: {means.index[0]} ({means.iloc[0]:.3f})"
    if baseline:
        text += f"; predicting the training mean gives {baseline:.3f}"
        worse = [str(label) for label, v in means.items() if v >= baseline]
        if worse:
            text += f"; no better than that: {', '.join(worse)}"
    return text + "."
