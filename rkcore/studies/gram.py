"""Gram matrices of a view: the exact kernel next to its random-feature estimate, their error
metrics, and the tidy / block-averaged forms the figures draw (no streamlit here)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..base.arrays import dense
from ..base.limits import HEATMAP_SIDE, nbytes, require_memory
from ..metrics import GRAM_METRICS, METRICS
from ..registry import make_map


def gram_view_bytes(n: int, D: int, d: int) -> int:
    """Peak memory of :func:`gram_pair` plus the view: X, Z, and ~4 n x n matrices
    (exact, approximate, difference, and one temporary of the power-sum recursion).

    Parameters
    ----------
    n : int
        Number of points.
    D : int
        Number of random features.
    d : int
        Number of input features.

    Returns
    -------
    int
        Bytes of float64 arrays needed.
    """
    return nbytes((n, d), (n, D), *[(n, n)] * 4)


def gram_pair(X, spec, map_key: str = "rk", n_components: int = 256, distribution: str | None = None,
              random_state: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(K, K_hat): the exact Gram matrix of ``spec`` and its random-feature estimate Z Z^T.

    ``spec`` is a :class:`rkcore.registry.KernelSpec`; the map is built by
    :func:`rkcore.registry.make_map` from (map_key, spec, D, distribution, seed).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The points.
    spec : KernelSpec
        The kernel.
    map_key : str, default "rk"
        Registry key of the random feature map.
    n_components : int, default 256
        Number of random features D.
    distribution : str or None, default None
        Distribution of the random weights; None for the map's default.
    random_state : int, default 0
        Seed of the map.

    Returns
    -------
    K : numpy.ndarray of shape (n, n)
        The exact Gram matrix.
    K_hat : numpy.ndarray of shape (n, n)
        The estimate Z Z^T.
    """
    n, d = X.shape
    require_memory({"X": (n, d), "Z": (n, n_components), "K, K_hat and temporaries": (4, n, n)}, what="gram_pair",
                   hint=f"Use fewer points (n = {n:,}) or a smaller D.",
                   largest={"D": lambda k: nbytes((n, d), (n, k), (4, n, n)),
                            "number of points": lambda r: nbytes((r, d), (r, n_components), (4, r, r))})
    K = spec.exact(X)
    Z = make_map(map_key, spec, n_components, distribution=distribution, random_state=random_state).fit_transform(X)
    Z = dense(Z)
    return K, Z @ Z.T




def gram_errors(K: np.ndarray, K_hat: np.ndarray) -> dict[str, float]:
    """The :data:`rkcore.metrics.GRAM_METRICS` of K_hat against K (rel_fro is NaN when K = 0).

    The one definition used by the Gram page, the foundations curves (RFF, compositional)
    and anything else that compares two Gram matrices; :mod:`rkcore.studies.errors` streams the
    same mean / max / RMS over pairs without materializing n x n matrices.

    Parameters
    ----------
    K : numpy.ndarray
        The exact Gram matrix.
    K_hat : numpy.ndarray
        Its estimate, of the same shape.

    Returns
    -------
    dict[str, float]
        Metric key (mean_abs_error, max_abs_error, rms_error, rel_fro) -> value.
    """
    K = np.asarray(K, dtype=np.float64)
    E = np.asarray(K_hat, dtype=np.float64) - K
    # element-wise sums, not np.linalg.norm: a BLAS dot on a shared, oversubscribed machine can
    # cost more in thread hand-offs than the whole sum
    sum_sq_E, sum_sq_K = float((E * E).sum()), float((K * K).sum())
    np.abs(E, out=E)
    return {"mean_abs_error": float(E.mean()), "max_abs_error": float(E.max()),
            "rms_error": float(np.sqrt(sum_sq_E / E.size)),
            "rel_fro": float(np.sqrt(sum_sq_E / sum_sq_K)) if sum_sq_K > 0 else float("nan")}


def gram_error_stats(K: np.ndarray, K_hat: np.ndarray) -> pd.DataFrame:
    """:func:`gram_errors` as a tidy table: one row per metric, columns ``metric`` (display name),
    ``value``, ``definition``.

    Parameters
    ----------
    K : numpy.ndarray
        The exact Gram matrix.
    K_hat : numpy.ndarray
        Its estimate, of the same shape.

    Returns
    -------
    pandas.DataFrame
        One row per metric of ``GRAM_METRICS``.
    """
    values = gram_errors(K, K_hat)
    rows = [(METRICS[key].name, values[key], METRICS[key].definition) for key in GRAM_METRICS]
    return pd.DataFrame(rows, columns=["metric", "value", "definition"])


def gram_pairs(K: np.ndarray, K_hat: np.ndarray, max_points: int = 5000, random_state: int = 0) -> pd.DataFrame:
    """Entries (i <= j) of both matrices as a tidy table: i, j, exact, approx, error.

    Gram matrices are symmetric, so the upper triangle (diagonal included) carries
    everything; beyond ``max_points`` entries a seeded uniform subsample is returned.

    Parameters
    ----------
    K : numpy.ndarray
        The exact Gram matrix.
    K_hat : numpy.ndarray
        Its estimate, of the same shape.
    max_points : int, default 5000
        Most entries returned.
    random_state : int, default 0
        Seed of the subsample.

    Returns
    -------
    pandas.DataFrame
        Columns i, j, exact, approx, error (approx - exact).
    """
    n = K.shape[0]
    i, j = np.triu_indices(n)
    if i.size > max_points:
        keep = np.sort(np.random.RandomState(random_state).choice(i.size, size=max_points, replace=False))
        i, j = i[keep], j[keep]
    exact, approx = K[i, j], K_hat[i, j]
    return pd.DataFrame({"i": i, "j": j, "exact": exact, "approx": approx, "error": approx - exact})


def block_average(M: np.ndarray, max_side: int = HEATMAP_SIDE) -> tuple[np.ndarray, int]:
    """Average M over b x b blocks so that neither side exceeds ``max_side``; returns (M_small, b).

    b = ceil(max(n_rows, n_cols) / max_side); the last block of a side may be smaller
    (it is averaged over the cells it has). b = 1 returns M itself.

    Parameters
    ----------
    M : array-like of shape (n_rows, n_cols)
        The matrix to shrink.
    max_side : int, default HEATMAP_SIDE
        Largest side of the result.

    Returns
    -------
    M_small : numpy.ndarray
        The block means.
    b : int
        The block side.
    """
    M = np.asarray(M, dtype=np.float64)
    b = max(1, math.ceil(max(M.shape) / max_side))
    if b == 1:
        return M, 1
    r_edges, c_edges = np.arange(0, M.shape[0], b), np.arange(0, M.shape[1], b)
    sums = np.add.reduceat(np.add.reduceat(M, r_edges, axis=0), c_edges, axis=1)
    r_sizes = np.diff(np.append(r_edges, M.shape[0]))
    c_sizes = np.diff(np.append(c_edges, M.shape[1]))
    return sums / np.outer(r_sizes, c_sizes), b


def gram_long(K: np.ndarray, K_hat: np.ndarray) -> pd.DataFrame:
    """Both matrices as one tidy table (i, j, exact, approx, difference), one row per entry.

    Parameters
    ----------
    K : numpy.ndarray
        The exact Gram matrix.
    K_hat : numpy.ndarray
        Its estimate, of the same shape.

    Returns
    -------
    pandas.DataFrame
        Columns i, j, exact, approx, difference (approx - exact), in row-major order.
    """
    n, m = K.shape
    i, j = np.divmod(np.arange(n * m), m)
    return pd.DataFrame({"i": i, "j": j, "exact": K.ravel(), "approx": K_hat.ravel(),
                         "difference": (K_hat - K).ravel()})
