r"""Random Fourier features for the Gaussian kernel (page "Random Fourier features").

Follows D. Hsu, *Features* (COMS 4771 lecture notes, 2015), /work/shared/papers/features-kernel-trick-notes.md,
Section 2: thin wrappers over scikit-learn's ``RBFSampler`` / ``rbf_kernel``, two ways to choose the bandwidth,
the curves' error metrics (:func:`kernel_errors`, also read by the compositional kernels' curves) and the error
study :func:`rff_error_curve`.

Everything returns arrays or tidy DataFrames (one row per observation).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.spatial.distance import pdist
from sklearn.kernel_approximation import RBFSampler
from sklearn.metrics.pairwise import rbf_kernel

from ..base.limits import nbytes, require_memory
from ..kernels.numerics import check_gram_fits
from ..base.validation import check_int
from ..metrics import CURVE_METRICS
from ..studies.gram import gram_errors
from .inputs import check_dense, check_positive, check_positive_ints


def gamma_from_sigma(sigma: float) -> float:
    r"""Bandwidth σ of :math:`\exp(-\|x-y\|^2/(2\sigma^2))` to scikit-learn's γ = 1/(2σ²).

    Parameters
    ----------
    sigma : float
        The bandwidth (> 0).

    Returns
    -------
    float
        gamma = 1 / (2 sigma^2).
    """
    return 1.0 / (2.0 * check_positive(sigma, "sigma") ** 2)


def median_heuristic_gamma(X) -> float:
    """γ = 1 / (2 median²) with the median of the pairwise distances (a common default bandwidth).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.

    Returns
    -------
    float
        gamma.
    """
    X = check_dense(X)
    if X.shape[0] < 2:
        raise ValueError("The median heuristic needs at least 2 points.")
    med = float(np.median(pdist(X)))
    if med <= 0:
        raise ValueError("All points coincide: the median pairwise distance is 0, no bandwidth can be derived.")
    return 1.0 / (2.0 * med**2)


def gaussian_kernel(X, Y=None, gamma: float = 1.0) -> np.ndarray:
    r""":math:`K(\mathbf{x}, \mathbf{y}) = \exp(-\gamma\|\mathbf{x}-\mathbf{y}\|^2)` (scikit-learn ``rbf_kernel``).

    Parameters
    ----------
    X : array-like of shape (n_X, n_features)
        Left rows.
    Y : array-like of shape (n_Y, n_features), optional
        Right rows (None: X).
    gamma : float, default=1.0
        The width.

    Returns
    -------
    numpy.ndarray of shape (n_X, n_Y)
        The Gram matrix.
    """
    X, Y = check_dense(X), None if Y is None else check_dense(Y)
    check_gram_fits(X.shape[0], X.shape[0] if Y is None else Y.shape[0], 2)  # the result and the distances
    return rbf_kernel(X, Y, gamma=check_positive(gamma, "gamma"))


def rff_features(X, gamma: float = 1.0, n_components: int = 100, random_state=None) -> np.ndarray:
    r"""Random Fourier features :math:`z(\mathbf{x}) = \sqrt{2/D}\,\cos(W\mathbf{x} + \mathbf{b})`,
    :math:`W_{ij} \sim \mathcal{N}(0, 2\gamma)`, :math:`b \sim \mathcal{U}[0, 2\pi)` (scikit-learn ``RBFSampler``).

    The notes pair cos and sin of the same ω; the random phase b gives the same expectation
    :math:`\mathbb{E}\langle z(x), z(y)\rangle = e^{-\gamma\|x-y\|^2}` with one column per ω.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    gamma : float, default=1.0
        Kernel width.
    n_components : int, default=100
        D.
    random_state : int, optional
        Seed.

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_components)
        z(X).
    """
    X = check_dense(X)
    D = check_int(n_components, "n_components")
    require_memory({"the random weights": (X.shape[1], D), "the features": (X.shape[0], D)}, what="rff_features",
                   hint="Lower n_components (D) or the number of rows.",
                   largest={"n_components (D)": lambda k: nbytes((X.shape[1], k), (X.shape[0], k))})
    sampler = RBFSampler(gamma=check_positive(gamma, "gamma"), n_components=D, random_state=random_state)
    return sampler.fit_transform(X)


def kernel_errors(K: np.ndarray, K_hat: np.ndarray) -> dict[str, float]:
    """The curves' metrics (:data:`rkcore.metrics.CURVE_METRICS`: rel_fro, max_abs_error, mean_abs_error) out
    of :func:`rkcore.studies.gram.gram_errors` (the one definition).

    Parameters
    ----------
    K : numpy.ndarray
        The exact Gram matrix.
    K_hat : numpy.ndarray
        Its estimate.

    Returns
    -------
    dict of str to float
        rel_fro, max_abs_error and mean_abs_error.
    """
    errors = gram_errors(K, K_hat)
    return {key: errors[key] for key in CURVE_METRICS}


def rff_error_curve(X, gamma: float = 1.0, D_list=(16, 32, 64, 128, 256, 512, 1024), trials: int = 5,
                    seed: int = 0) -> pd.DataFrame:
    """Gaussian-kernel approximation error of random Fourier features vs D.

    Trial t fits one ``RBFSampler`` with D_max = max(D_list) features (random_state = seed + t);
    the D-feature map is its first D columns rescaled by sqrt(D_max / D). The columns are i.i.d.,
    so this has exactly the distribution of a fresh D-feature sampler, and the Gram estimates for
    all D come from one pass of running sums (curves over D are coupled within a trial).

    Tidy: one row per (D, trial, metric) with metric in {rel_fro, max_abs_error, mean_abs_error}
    (see :func:`kernel_errors`).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    gamma : float, default=1.0
        Kernel width.
    D_list : sequence of int
        Numbers of features.
    trials : int, default=5
        Independent draws.
    seed : int, default=0
        Seed of the first trial (trial t uses seed + t).

    Returns
    -------
    pandas.DataFrame
        The tidy table described above.
    """
    X = check_dense(X)
    gamma = check_positive(gamma, "gamma")
    D_list = sorted(set(check_positive_ints(D_list, "D_list")))
    trials = check_int(trials, "trials")
    n = X.shape[0]
    require_memory({"K, its estimate and the error": (3, n, n), "the features Z": (n, D_list[-1])},
                   what="rff_error_curve", hint="Use fewer rows or a smaller largest D.",
                   largest={"largest D": lambda k: nbytes((3, n, n), (n, k)),
                            "number of rows": lambda r: nbytes((3, r, r), (r, D_list[-1]))})
    K = rbf_kernel(X, gamma=gamma)
    D_max = D_list[-1]
    rows = []
    for t in range(trials):
        Z = rff_features(X, gamma, D_max, random_state=seed + t) * np.sqrt(D_max)  # unscaled sqrt(2) cos(...)
        G = np.zeros_like(K)
        start = 0
        for D in D_list:
            block = Z[:, start:D]
            G += block @ block.T
            start = D
            for metric, value in kernel_errors(K, G / D).items():
                rows.append(dict(D=D, trial=t, metric=metric, value=value))
    return pd.DataFrame(rows)
