r"""I.i.d., orthogonal and structured random Fourier features for the Gaussian kernel, side by side (the Random
Fourier features page and the README table): mean squared error of the Gram estimate against D, split into
variance and squared bias, and the ratio to i.i.d. features with the same cos/sin layout.

For one map and D, T independent maps give estimates K̂_t of the Gram matrix. Over the pairs i < j:

* ``mse``  = mean over pairs and trials of (K̂_t - K)^2 (each pair's MSE = variance + bias^2);
* ``variance`` = mean over pairs of the sample variance over trials (ddof = 1);
* ``bias2`` = mean over pairs of (mean_t K̂_t - K)^2 - variance / T (unbiased for the squared bias; it can
  be slightly negative by chance when the map is unbiased).

The literature (Yu et al., NIPS 2016, Figure 2 and Theorem 1) reports ORF's MSE below i.i.d. RFF's at equal D,
most at D = d; :func:`fourier_note` says whether these numbers reproduce that.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..base.arrays import dense
from ..base.limits import nbytes
from .costs import CALL_SECONDS, RunCost, exact_kernel_seconds, map_transform_seconds, section
from ..registry import MAPS, KernelSpec, get_map, make_map, maps_for
from ..base.validation import check_int

#: The i.i.d. reference with the cos/sin layout of the orthogonal and structured maps.
IID_REFERENCE = "rff_pairs"


def fourier_maps() -> list[str]:
    """The random (not data-dependent) maps of the Gaussian kernel in the registry, in registry order.

    Returns
    -------
    list[str]
        Registry keys of the maps.
    """
    return [k for k in maps_for(KernelSpec("rbf")) if not MAPS[k].data_dependent]


def fourier_map_study(X, gamma: float, map_keys, D_list, trials: int, seed: int = 0,
                      progress=None) -> pd.DataFrame:
    """MSE, variance and squared bias of the Gram estimate per (map, D), over ``trials`` maps with seeds
    seed, seed + 1, ... (the same seeds for every map). X: at most a few hundred rows (T Gram matrices are
    kept per cell). Columns: map, label, D, n_trials, mse, variance, bias2, mean_abs_error.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The points.
    gamma : float
        Width parameter of the Gaussian kernel exp(-gamma ||x - y||^2).
    map_keys : sequence of str
        Registry keys of the maps compared (at least one).
    D_list : sequence of int
        Numbers of random features.
    trials : int
        Independent maps per (map, D), at least 2.
    seed : int, default 0
        Seed of the first trial.
    progress : callable or None, default None
        Called as ``progress(fraction, message)`` after each (map, D).

    Returns
    -------
    pandas.DataFrame
        One row per (map, D).
    """
    X = dense(X)
    trials = check_int(trials, "trials", minimum=2, expected="an integer >= 2 (a variance needs two maps)")
    if not map_keys:
        raise ValueError(f"Choose at least one map; allowed: {', '.join(fourier_maps())}.")
    spec = KernelSpec("rbf", gamma=float(gamma))
    K = spec.exact(X)
    iu = np.triu_indices(X.shape[0], k=1)
    exact = K[iu]
    rows = []
    cells = [(key, int(D)) for key in map_keys for D in D_list]
    for done, (key, D) in enumerate(cells):
        estimates = np.empty((trials, exact.size))
        for t in range(trials):
            Z = make_map(key, spec, D, random_state=seed + t).fit(X).transform(X)
            estimates[t] = (Z @ Z.T)[iu]
        error = estimates - exact
        variance = estimates.var(axis=0, ddof=1)
        rows.append({"map": key, "label": get_map(key).short_label, "D": D, "n_trials": trials,
                     "mse": float((error**2).mean()), "variance": float(variance.mean()),
                     "bias2": float((error.mean(axis=0) ** 2 - variance / trials).mean()),
                     "mean_abs_error": float(np.abs(error).mean())})
        if progress is not None:
            progress((done + 1) / len(cells), f"{get_map(key).short_label}, D = {D}")
    return pd.DataFrame(rows)


def fourier_study_cost(n: int, d: int, map_keys, D_list, trials: int) -> RunCost:
    """:func:`fourier_map_study`: the exact K once, then per (map, D, trial) a map over n rows and Z Z^T (costed
    as the GEMM model of :func:`rkcore.studies.costs.rates.map_transform_seconds` and one n x D x n product).

    Parameters
    ----------
    n : int
        Number of points.
    d : int
        Number of input features.
    map_keys : sequence of str
        Registry keys of the maps.
    D_list : sequence of int
        Numbers of random features.
    trials : int
        Maps per (map, D).

    Returns
    -------
    RunCost
        Estimated seconds and peak bytes of the study.
    """
    cells = [(key, int(D)) for key in map_keys for D in D_list]
    per_trial = sum(map_transform_seconds(n, d, D, 1, key) + exact_kernel_seconds(n, n, D, 1, "rbf") / 2
                    + 4 * CALL_SECONDS for key, D in cells)
    pairs = n * (n - 1) // 2
    D_max = max((D for _, D in cells), default=1)
    return section("orthogonal and structured maps", exact_kernel_seconds(n, n, d, 1, "rbf") + trials * per_trial,
                   nbytes((n, d), (n, D_max), (n, n), (n, n), (trials + 2, pairs)))


def fourier_summary(study: pd.DataFrame, reference: str = IID_REFERENCE) -> pd.DataFrame:
    """One row per D: each map's MSE, and its ratio to the reference map's MSE at that D (when present).

    Parameters
    ----------
    study : pandas.DataFrame
        Result of :func:`fourier_map_study`.
    reference : str, default IID_REFERENCE
        Registry key of the i.i.d. map compared against.

    Returns
    -------
    pandas.DataFrame
        Column D, ``MSE <label>`` per map and ``<label> / <reference label>`` ratios.
    """
    wide = study.pivot(index="D", columns="label", values="mse")
    order = list(dict.fromkeys(study["label"]))
    wide = wide[order]
    out = wide.add_prefix("MSE ")
    ref_rows = study[study["map"] == reference]
    if not ref_rows.empty:
        ref = ref_rows.set_index("D")["mse"]
        ref_label = ref_rows["label"].iloc[0]
        for label in order:
            if label != ref_label:
                out[f"{label} / {ref_label}"] = wide[label] / ref
    return out.reset_index()


def fourier_note(study: pd.DataFrame, reference: str = IID_REFERENCE) -> str:
    """What the numbers say about orthogonal and structured maps against the i.i.d. reference, per map: the
    range of MSE ratios over D and whether the squared bias is a visible part of the MSE.

    Parameters
    ----------
    study : pandas.DataFrame
        Result of :func:`fourier_map_study`.
    reference : str, default IID_REFERENCE
        Registry key of the i.i.d. map compared against.

    Returns
    -------
    str
        One sentence per map (or a hint to add the reference when it is missing).
    """
    ref = study[study["map"] == reference].set_index("D")
    if ref.empty:
        return "Add the i.i.d. reference (RFF, cos/sin pairs) to compare the maps with it."
    parts = []
    for key, rows in study[study["map"] != reference].groupby("map", sort=False):
        rows = rows.set_index("D")
        common = rows.index.intersection(ref.index)
        if common.empty:
            continue
        ratio = rows.loc[common, "mse"] / ref.loc[common, "mse"]
        lo, hi = float(ratio.min()), float(ratio.max())
        verdict = "below" if hi < 0.95 else "above" if lo > 1.05 else "about equal to" if hi <= 1.05 and lo >= 0.95 \
            else "mixed against"
        at_min = int(ratio.idxmin())
        bias_share = float((rows.loc[common, "bias2"].clip(lower=0) / rows.loc[common, "mse"]).max())
        bias = f"; squared bias up to {bias_share:.0%} of its MSE" if bias_share > 0.1 else ""
        parts.append(f"{rows['label'].iloc[0]}: MSE {verdict} i.i.d. (ratio {lo:.2f}-{hi:.2f}, lowest at "
                     f"D = {at_min}){bias}.")
    return " ".join(parts)
