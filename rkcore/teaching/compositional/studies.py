"""Error of compositional random features against the exact kernel, and a table of the drawn features."""
from __future__ import annotations

from typing import Any

import pandas as pd
from sklearn.utils.validation import check_is_fitted

from ..fourier_features import kernel_errors
from .presets import _check_positive_int
from .sampling import DEDUP_MODES
from .skeleton import _format_cols, Skeleton
from .transformer import CompositionalFeatures


# ============================================================================ studies
def compositional_error_curve(X, skeleton: Skeleton, D_list, trials: int = 5, seed: int = 0,
                              dedup_modes=("none", "unbiased")) -> pd.DataFrame:
    """Gram approximation error of the compositional random features vs D, per de-dup mode.

    Tidy: one row per (dedup, D, trial, metric) with metric in {rel_fro, max_abs_error, mean_abs_error}
    (:func:`rkcore.teaching.fourier_features.kernel_errors`) and draws_per_feature (executions of Algorithm 1
    per stored feature). The same seeds are used for every mode and D.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    skeleton : Skeleton
        The computation skeleton.
    D_list : sequence of int
        Numbers of features.
    trials : int, default=5
        Draws per (dedup, D).
    seed : int, default=0
        Seed of the first trial.
    dedup_modes : sequence of str
        De-duplication modes compared.

    Returns
    -------
    pandas.DataFrame
        The tidy table described above.
    """
    if not isinstance(skeleton, Skeleton):
        raise ValueError(f"skeleton must be a Skeleton (see rkcore.teaching.compositional.PRESETS), got {type(skeleton).__name__}.")
    X = skeleton.check_X(X)
    D_list = [_check_positive_int(D, "each D") for D in D_list]
    trials = _check_positive_int(trials, "trials")
    if isinstance(dedup_modes, str):
        raise ValueError(f"dedup_modes must be a list of modes such as ['none', 'unbiased'], got the string {dedup_modes!r}.")
    for mode in dedup_modes:
        if mode not in DEDUP_MODES:
            raise ValueError(f"Unknown dedup mode {mode!r}; allowed: {', '.join(map(repr, DEDUP_MODES))}.")
    K = skeleton.kernel(X)
    rows: list[dict[str, Any]] = []
    for mode in dedup_modes:
        for D in D_list:
            for t in range(trials):
                est = CompositionalFeatures(skeleton, D, dedup=mode, random_state=seed + 7919 * t + D).fit(X)
                errs = kernel_errors(K, est.kernel_estimate(X))
                errs["draws_per_feature"] = est.n_draws_ / D
                rows.extend(dict(dedup=mode, D=D, trial=t, metric=m, value=v) for m, v in errs.items())
    return pd.DataFrame(rows)


def describe_features(estimator: CompositionalFeatures, n: int = 10) -> pd.DataFrame:
    """The first n features of a fitted estimator as readable products of base features.

    Parameters
    ----------
    estimator : CompositionalFeatures
        A fitted estimator.
    n : int, default=10
        Features listed.

    Returns
    -------
    pandas.DataFrame
        One row per feature.
    """
    check_is_fitted(estimator)
    skel = estimator.skeleton_
    factors: dict[int, list[str]] = {}
    for i, pos, lv in estimator._leaf_plan:
        node = skel.nodes[i]
        cols = node.columns
        for f, idx in zip(lv["feature"], lv["index"]):
            if f >= n:
                continue
            if node.kernel == "sphere":
                s = (f"sign(x{cols[0]})" if len(cols) == 1 else
                     (f"z[{cols[0]},{cols[1]}]" if idx == 0 else f"z̄[{cols[0]},{cols[1]}]") if len(cols) == 2 else
                     f"√{len(cols)}·x̂{cols[idx]}")
            elif node.kernel == "categorical":
                s = f"exp(2πi·{idx}·x{cols[0]}/{node.n_categories})"
            else:
                s = f"exp(i·w·x[{_format_cols(cols)}])"
            factors.setdefault(int(f), []).append(s)
    rows = []
    for f in range(min(n, estimator.weights_.size)):
        mass = None if estimator.feature_mass_ is None else float(estimator.feature_mass_[f])
        expr = " · ".join(factors.get(f, ["1"]))
        if estimator.complex_[f]:
            expr = f"{'−√2·Im' if estimator._use_imag[f] else '√2·Re'}({expr})"
        rows.append(dict(feature=f, weight=float(estimator.weights_[f]), probability=mass,
                         factors=int(estimator.n_factors_[f]), expression=expr))
    return pd.DataFrame(rows)
