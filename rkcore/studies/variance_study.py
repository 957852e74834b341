r"""Variance engine of the Distributions and variance page: how the RK estimate's variance depends on
the weight distribution (paper Lemma 4), measured over random maps and computed exactly.

* :func:`select_pairs` picks three fixed pairs (x, y) to follow.
* :func:`empirical_pair_variance` measures, for those pairs, the variance of
  :math:`\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle` over independent RK maps;
  :func:`exact_pair_variance` gives :math:`\mathbb{V} = (\mathbb{E}[f^2] - K^2)/D` from
  :func:`rkcore.theory.variance.rk_variance`.
* :func:`variance_by_distribution` averages the exact per-feature variance over pairs
  (Lemma 4: Rademacher, with the smallest fourth moment, is lowest at every pair).

Outputs are tidy DataFrames for :mod:`rkcore.figures.variance`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import chi2

from ..base.arrays import dense
from ..maps.distributions import DISTRIBUTIONS, get_distribution
from ..registry import KernelSpec, make_map
from ..base.limits import block_bytes
from ..base.validation import check_int
from ..theory.variance import VARIANCE_KERNELS, rk_variance

#: Temporary memory for one chunk of random features in :func:`empirical_pair_variance` (lowered to
#: scikit-learn's working_memory when that is smaller).
CHUNK_BYTES = 32 * 2**20


def select_pairs(K: np.ndarray) -> pd.DataFrame:
    """Three fixed pairs to follow: the off-diagonal pair with the largest |K|, one at the median |K|,
    and the diagonal pair (x, x) with the largest K(x, x). Columns: i, j, kernel_value, label.

    Parameters
    ----------
    K : array-like of shape (n, n)
        The exact Gram matrix, n >= 2.

    Returns
    -------
    pandas.DataFrame
        Three rows, one per pair.
    """
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    if n < 2:
        raise ValueError(f"Following pairs needs at least 2 points; got n = {n}.")
    iu, ju = np.triu_indices(n, k=1)
    off = np.abs(K[iu, ju])
    order = np.argsort(off, kind="stable")
    top, med = order[-1], order[order.size // 2]
    diag = int(np.argmax(np.diag(K)))
    rows = [(int(iu[top]), int(ju[top]), "largest |K|"), (int(iu[med]), int(ju[med]), "median |K|"),
            (diag, diag, "diagonal, largest K(x, x)")]
    return pd.DataFrame([(i, j, float(K[i, j]), f"pair ({i}, {j}): {what}") for i, j, what in rows],
                        columns=["i", "j", "kernel_value", "label"])


def empirical_pair_variance(X, pairs: pd.DataFrame, spec: KernelSpec, distributions, n_components_list,
                            n_trials: int, random_state: int = 0) -> pd.DataFrame:
    r"""Variance of the RK estimate over ``n_trials`` independent maps, for fixed pairs and each D.

    RK features are i.i.d. across the D columns (Algorithm 1), so T maps with D features are
    T disjoint blocks of D columns of one map with T·max(D) features: trial t's estimate is
    :math:`\frac{1}{D}\sum_{s \in \text{block } t} K(\mathbf{x},\boldsymbol\omega_s)K(\mathbf{y},\boldsymbol\omega_s)`.
    The sample variance (ddof = 1) over the T estimates comes with a 95% interval
    :math:`[(T-1)s^2/\chi^2_{0.975,T-1},\ (T-1)s^2/\chi^2_{0.025,T-1}]`, exact for normal
    estimates (a sum of D i.i.d. terms is close to normal once D is in the tens).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The points.
    pairs : pandas.DataFrame
        The pairs followed, with columns i, j, kernel_value and label (see :func:`select_pairs`).
    spec : KernelSpec
        The kernel.
    distributions : sequence of str
        Keys of the weight distributions.
    n_components_list : sequence of int
        Numbers of random features D, each >= 1.
    n_trials : int
        Independent maps, at least 2.
    random_state : int, default 0
        Seed of all maps.

    Returns
    -------
    pandas.DataFrame
        One row per (pair, distribution, D): pair (label), i, j, distribution, D,
        n_trials, kernel_value, mean_estimate, variance, var_low, var_high.
    """
    check_int(n_trials, "n_trials", minimum=2, expected="an integer >= 2 (a variance needs two estimates)")
    D_list = sorted({int(D) for D in n_components_list})
    if not D_list or D_list[0] < 1:
        raise ValueError(f"n_components_list must hold integers >= 1, got {list(n_components_list)!r}.")
    X = dense(X)
    rows = np.unique(np.concatenate([pairs["i"].to_numpy(), pairs["j"].to_numpy()]))
    where = {r: k for k, r in enumerate(rows)}
    a = np.array([where[i] for i in pairs["i"]])
    b = np.array([where[j] for j in pairs["j"]])
    Xp = X[rows]
    D_max = D_list[-1]
    # trials per chunk so that one chunk's features (and the map's temporaries, up to d per
    # feature for the all-subsets kernel) stay within CHUNK_BYTES
    per_trial = 8 * D_max * max(len(rows), 1) * (X.shape[1] + 2)
    chunk = int(max(1, min(n_trials, block_bytes(CHUNK_BYTES) // per_trial)))
    lo_q, hi_q = chi2.ppf(0.975, n_trials - 1), chi2.ppf(0.025, n_trials - 1)
    out = []
    seeds = np.random.SeedSequence(int(random_state))
    for dist, seq in zip(distributions, seeds.spawn(len(distributions))):
        # rows drawn in orthogonal blocks are dependent: one map per trial (its first D columns are
        # distributed as a D-feature map), not disjoint column blocks of one wide map
        step = chunk if get_distribution(dist).iid else 1
        products = []  # per chunk: (pairs, trials_in_chunk, D_max) products K(x, w_s) K(y, w_s)
        for c, chunk_seq in zip(range(0, n_trials, step), seq.spawn((n_trials + step - 1) // step)):
            t = min(step, n_trials - c)
            seed = int(chunk_seq.generate_state(1, dtype=np.uint32)[0])
            Z = make_map("rk", spec, t * D_max, dist, seed).fit(Xp).transform(Xp)
            Z = dense(Z) * np.sqrt(t * D_max)  # undo the 1/sqrt(D) scaling: raw K(x, w_s)
            products.append((Z[a] * Z[b]).reshape(len(a), t, D_max))
        f = np.concatenate(products, axis=1)  # (pairs, trials, D_max)
        for D in D_list:
            est = f[:, :, :D].mean(axis=2)  # trial t's estimate with D features
            var = est.var(axis=1, ddof=1)
            out.append(pd.DataFrame({
                "pair": pairs["label"].to_numpy(), "i": pairs["i"].to_numpy(), "j": pairs["j"].to_numpy(),
                "distribution": dist, "D": D, "n_trials": n_trials,
                "kernel_value": pairs["kernel_value"].to_numpy(), "mean_estimate": est.mean(axis=1),
                "variance": var, "var_low": (n_trials - 1) * var / lo_q, "var_high": (n_trials - 1) * var / hi_q}))
    return pd.concat(out, ignore_index=True)


def iid_only(distributions) -> list[str]:
    """The keys among ``distributions`` whose weights are i.i.d. (the exact formulas cover only those).

    Parameters
    ----------
    distributions : iterable of str
        Keys of weight distributions.

    Returns
    -------
    list[str]
        The i.i.d. ones, in the given order.
    """
    return [dist for dist in distributions if get_distribution(dist).iid]


def exact_pair_variance(X, pairs: pd.DataFrame, spec: KernelSpec, distributions, n_components) -> pd.DataFrame | None:
    """Exact Var<Z(x), Z(y)> = (E[f^2] - K^2) / D for the pairs, per distribution and D
    (:func:`rkcore.theory.variance.rk_variance`). Kernels of :data:`rkcore.theory.variance.VARIANCE_KERNELS` only.

    ``n_components`` is a sequence of D (may be real-valued for smooth lines). Columns: pair,
    i, j, distribution, D, variance. Distributions drawn in orthogonal blocks are left out (no formula:
    their rows are dependent; the empirical variance measures them); None if none is left.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The points.
    pairs : pandas.DataFrame
        The pairs followed, with columns i, j, kernel_value and label (see :func:`select_pairs`).
    spec : KernelSpec
        The kernel.
    distributions : sequence of str
        Keys of the weight distributions.
    n_components : array-like of float
        Values of D.

    Returns
    -------
    pandas.DataFrame or None
        One row per (pair, i.i.d. distribution, D); None when no distribution is i.i.d.
    """
    if spec.name not in VARIANCE_KERNELS:
        raise ValueError(f"The exact variance covers the kernels {', '.join(VARIANCE_KERNELS)}; got {spec.name!r}.")
    X = dense(X)
    Xa, Xb = X[pairs["i"].to_numpy()], X[pairs["j"].to_numpy()]
    D = np.asarray(n_components, dtype=np.float64)
    out = []
    for dist in iid_only(distributions):
        per_feature = rk_variance(Xa, Xb, 1, kernel=spec.name, degree=spec.degree, distribution=dist)
        out.append(pd.DataFrame({
            "pair": np.repeat(pairs["label"].to_numpy(), D.size), "i": np.repeat(pairs["i"].to_numpy(), D.size),
            "j": np.repeat(pairs["j"].to_numpy(), D.size), "distribution": dist, "D": np.tile(D, len(pairs)),
            "variance": np.repeat(per_feature, D.size) / np.tile(D, len(pairs))}))
    return pd.concat(out, ignore_index=True) if out else None


def variance_by_distribution(X, spec: KernelSpec, distributions, *, max_pairs: int = 2000,
                             random_state: int = 0) -> pd.DataFrame:
    """Exact per-feature variance D·Var<Z(x), Z(y)> over pairs i < j (a seeded sample of at most
    ``max_pairs``), per distribution: mean, median, and the fraction of pairs where the
    distribution's variance is at least Rademacher's (Lemma 4 says: all of them).

    Columns: distribution, label, fourth_moment, mean, median, ratio_to_rademacher (of the means),
    at_least_rademacher, n_pairs. Distributions drawn in orthogonal blocks are left out (see
    :func:`exact_pair_variance`).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The points.
    spec : KernelSpec
        The kernel.
    distributions : sequence of str
        Keys of the weight distributions.
    max_pairs : int, default 2000
        Most pairs used.
    random_state : int, default 0
        Seed of the pair sample.

    Returns
    -------
    pandas.DataFrame
        One row per i.i.d. distribution.
    """
    if spec.name not in VARIANCE_KERNELS:
        raise ValueError(f"The exact variance covers the kernels {', '.join(VARIANCE_KERNELS)}; got {spec.name!r}.")
    X = dense(X)
    n = X.shape[0]
    i, j = np.triu_indices(n, k=1)
    if i.size > max_pairs:
        keep = np.sort(np.random.RandomState(random_state).choice(i.size, size=max_pairs, replace=False))
        i, j = i[keep], j[keep]
    per = {dist: rk_variance(X[i], X[j], 1, kernel=spec.name, degree=spec.degree, distribution=dist)
           for dist in dict.fromkeys(["rademacher", *iid_only(distributions)])}
    base = per["rademacher"]
    rows = []
    for dist in iid_only(distributions):
        v = per[dist]
        # Lemma 4 holds pointwise; allow rounding in E[f^2] - K^2 (relative 1e-9 of E[f^2]-sized terms)
        tol = 1e-9 * np.maximum(np.abs(base), np.abs(v)) + 1e-300
        rows.append({"distribution": dist, "label": DISTRIBUTIONS[dist].label,
                     "fourth_moment": DISTRIBUTIONS[dist].fourth_moment, "mean": float(v.mean()),
                     "median": float(np.median(v)), "ratio_to_rademacher": float(v.mean() / base.mean()),
                     "at_least_rademacher": float(np.mean(v >= base - tol)), "n_pairs": int(i.size)})
    return pd.DataFrame(rows)
