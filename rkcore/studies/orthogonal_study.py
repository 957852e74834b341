r"""How much RK weights drawn orthogonal in blocks change the estimate: its mean (unchanged) and its variance.

The RK estimate with D features is the mean of f(w_s) = K_S(x, w_s) K_S(y, w_s) over the rows w_s. The
block distributions of :mod:`rkcore.maps.orthogonal` keep each row's law (i.i.d. entries of mean 0 and
variance 1), so E f(w_s) = K_S(x, y) and the estimate stays unbiased; what changes is

.. math:: \mathbb{V}\Big[\frac{1}{D}\sum_s f(\mathbf{w}_s)\Big] = \frac{\mathbb{V}f}{D}
          + \frac{1}{D^2}\sum_{s \ne t\ \text{in a block}} \mathrm{Cov}\big(f(\mathbf{w}_s), f(\mathbf{w}_t)\big),

the first term being the i.i.d. variance (:func:`rkcore.theory.variance.rk_variance`). Two measurements:

* :func:`hadamard_block_moments`: for Hadamard rows the only randomness of a full block is the sign vector s,
  so its mean and variance are exact sums over all 2^d sign vectors (small d);
* :func:`orthogonal_variance_study`: Monte Carlo over independent maps for both block distributions, with
  the exact i.i.d. variance of the same row law beside it, their ratio with a 95% interval, and a z-score
  of the mean against the kernel (unbiasedness).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..base.arrays import dense
from ..maps.distributions import DISTRIBUTIONS, get_distribution
from ..kernels.itemsets import ItemsetFamily
from ..kernels.exact import itemset_kernel
from ..maps.orthogonal import next_power_of_two, sylvester_entries
from ..registry import KernelSpec
from ..theory.variance import rk_variance
from .variance_study import empirical_pair_variance

#: Largest d for the exact enumeration of the 2^d sign vectors.
MAX_ENUMERATION_D = 16
BLOCK_DISTRIBUTIONS = tuple(k for k, e in DISTRIBUTIONS.items() if not e.iid)


def hadamard_block_moments(X, Y, family: ItemsetFamily) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean and variance of the mean of f over one full Hadamard block (all p rows of H_p diag(s), first
    d columns), for each pair (X[i], Y[i]), by enumerating the 2^d sign vectors s (equally likely).

    A D-feature map with D = k p draws k independent blocks: its variance is the returned variance / k.

    Parameters
    ----------
    X, Y : array-like of shape (n_pairs, d)
        The pairs' first and second points, d <= MAX_ENUMERATION_D.
    family : ItemsetFamily
        The itemset family of the kernel f is built from.

    Returns
    -------
    mean : numpy.ndarray of shape (n_pairs,)
        Exact mean of the block mean of f.
    variance : numpy.ndarray of shape (n_pairs,)
        Its exact variance over the sign vectors.
    """
    X, Y = dense(X), dense(Y)
    d = X.shape[1]
    if d > MAX_ENUMERATION_D:
        raise ValueError(f"Enumerating 2^d sign vectors is limited to d <= {MAX_ENUMERATION_D}; got d = {d}.")
    p = next_power_of_two(d)
    H = sylvester_entries(np.arange(p), d)  # (p, d)
    codes = np.arange(2**d)[:, None] >> np.arange(d) & 1
    signs = 1.0 - 2.0 * codes  # (2^d, d)
    W = (signs[:, None, :] * H[None]).reshape(-1, d)  # every block's rows, block by block
    f = itemset_kernel(X, W, family) * itemset_kernel(Y, W, family)  # (pairs, 2^d p)
    block_means = f.reshape(X.shape[0], 2**d, p).mean(axis=2)
    return block_means.mean(axis=1), block_means.var(axis=1)


def orthogonal_variance_study(X, pairs: pd.DataFrame, spec: KernelSpec, D_list, n_trials: int,
                              distributions=BLOCK_DISTRIBUTIONS, random_state: int = 0) -> pd.DataFrame:
    """Measured variance of the RK estimate with block-orthogonal weights against the exact i.i.d. variance of
    the same row law, for the pairs and each D.

    Columns: pair, i, j, distribution, marginal, D, n_trials, kernel_value, mean_estimate, bias_z (mean
    minus kernel over its standard error: |bias_z| > 4 would say biased), variance, var_low, var_high
    (95%), iid_variance (exact), ratio, ratio_low, ratio_high (variance / iid_variance and its interval).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The points.
    pairs : pandas.DataFrame
        The pairs followed, with columns i, j, kernel_value and label (see :func:`select_pairs`).
    spec : KernelSpec
        The kernel.
    D_list : sequence of int
        Numbers of random features.
    n_trials : int
        Independent maps, at least 2.
    distributions : sequence of str, default BLOCK_DISTRIBUTIONS
        Keys of block (not i.i.d.) weight distributions.
    random_state : int, default 0
        Seed of all maps.

    Returns
    -------
    pandas.DataFrame
        One row per (pair, distribution, D).
    """
    for dist in distributions:
        if get_distribution(dist).iid:
            raise ValueError(f"{dist!r} draws i.i.d. weights; this study compares the block distributions "
                             f"({', '.join(BLOCK_DISTRIBUTIONS)}) with their i.i.d. marginals.")
    measured = empirical_pair_variance(dense(X), pairs, spec, list(distributions), D_list, n_trials, random_state)
    return against_iid(measured, X, spec)


def against_iid(measured: pd.DataFrame, X, spec: KernelSpec) -> pd.DataFrame:
    """Add to :func:`rkcore.studies.variance_study.empirical_pair_variance`'s rows of block distributions (others are
    dropped) the exact i.i.d. variance of their row law and the ratio, and the bias z-score (columns of
    :func:`orthogonal_variance_study`).

    Parameters
    ----------
    measured : pandas.DataFrame
        Rows of :func:`rkcore.studies.variance_study.empirical_pair_variance`.
    X : array-like or sparse matrix of shape (n, d)
        The points the pairs index.
    spec : KernelSpec
        The kernel.

    Returns
    -------
    pandas.DataFrame
        The block distributions' rows with the added columns.
    """
    X = dense(X)
    measured = measured[measured["distribution"].map(lambda k: not get_distribution(k).iid)].copy()
    measured["marginal"] = measured["distribution"].map(lambda k: DISTRIBUTIONS[k].marginal)
    Xa, Xb = X[measured["i"].to_numpy()], X[measured["j"].to_numpy()]
    per_feature = np.empty(len(measured))
    for marginal in measured["marginal"].unique():
        rows = (measured["marginal"] == marginal).to_numpy()
        per_feature[rows] = rk_variance(Xa[rows], Xb[rows], 1, kernel=spec.name, degree=spec.degree,
                                        distribution=marginal)
    measured["iid_variance"] = per_feature / measured["D"].to_numpy()
    # the standard error of the mean, floored by rounding (1e-12 relative): a block that is exact (Hadamard rows
    # on the dot kernel) has variance ~0, and its last-bit differences must not read as bias
    rounding = 1e-12 * np.maximum(np.abs(measured["kernel_value"]), np.abs(measured["mean_estimate"]))
    standard_error = np.sqrt(measured["variance"] / measured["n_trials"] + rounding**2)
    bias = measured["mean_estimate"] - measured["kernel_value"]
    measured["bias_z"] = np.where(standard_error > 0, bias / np.where(standard_error > 0, standard_error, 1.0), 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        for col, src in (("ratio", "variance"), ("ratio_low", "var_low"), ("ratio_high", "var_high")):
            measured[col] = measured[src] / measured["iid_variance"]
    return measured.reset_index(drop=True)


def variance_ratio_summary(study: pd.DataFrame) -> pd.DataFrame:
    """Per distribution and D: the median over pairs of variance / i.i.d. variance, the range of the pairs'
    ratios, and the largest |bias_z|.

    Parameters
    ----------
    study : pandas.DataFrame
        Result of :func:`orthogonal_variance_study`.

    Returns
    -------
    pandas.DataFrame
        Columns distribution, D, median_ratio, min_ratio, max_ratio, max_abs_bias_z.
    """
    grouped = study.groupby(["distribution", "D"], sort=False)
    return grouped.agg(median_ratio=("ratio", "median"), min_ratio=("ratio", "min"), max_ratio=("ratio", "max"),
                       max_abs_bias_z=("bias_z", lambda z: float(np.abs(z).max()))).reset_index()


def orthogonal_note(summary: pd.DataFrame) -> str:
    """The conclusion, computed from :func:`variance_ratio_summary`'s numbers.

    Parameters
    ----------
    summary : pandas.DataFrame
        Result of :func:`variance_ratio_summary`.

    Returns
    -------
    str
        One sentence per distribution.
    """
    if summary.empty:
        return "No orthogonal-weight measurement to report."
    parts = []
    for dist, rows in summary.groupby("distribution", sort=False):
        label = DISTRIBUTIONS[str(dist)].label
        lo, hi = rows["median_ratio"].min(), rows["median_ratio"].max()
        verdict = ("lower than" if hi < 0.95 else "higher than" if lo > 1.05 else "about the same as")
        worst_z = rows["max_abs_bias_z"].max()
        unbiased = "no bias detected" if worst_z <= 4 else f"a mean off by {worst_z:.1f} standard errors"
        parts.append(f"{label}: variance {verdict} i.i.d. {DISTRIBUTIONS[DISTRIBUTIONS[str(dist)].marginal].label} "
                     f"weights (median ratio {lo:.2f}-{hi:.2f} over D = "
                     f"{', '.join(str(int(D)) for D in rows['D'])}); {unbiased}.")
    return " ".join(parts)
