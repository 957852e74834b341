r"""Random projections and Theorem 1 of the notes (page "Random projections").

Follows D. Hsu, *Features* (COMS 4771 lecture notes, 2015), /work/shared/papers/features-kernel-trick-notes.md,
Section 3 (dimensionality reduction): Gaussian and sparse random projections from ``sklearn.random_projection``
(:data:`PROJECTIONS`), the Theorem 1 band (:func:`theorem1_band`) beside the exact chi-square interval
(:func:`chi2_band`), and the distortion study :func:`projection_distortion` with its summary.

Everything returns arrays or tidy DataFrames (one row per observation).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd
from scipy.stats import chi2
from sklearn.exceptions import DataDimensionalityWarning
from sklearn.random_projection import GaussianRandomProjection, SparseRandomProjection

from ..base.limits import require_memory
from ..base.validation import check_int, entry_of
from ..kernels.exact import check_array
from .inputs import check_positive_ints
from ..base.annotations import is_sparse


def theorem1_band(m, delta: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    r"""Notes, Theorem 1: with :math:`A = Z/\sqrt m`, Z i.i.d. N(0, 1), for a fixed v, with probability >= 1 - δ

    .. math::
        1 - 2\sqrt{\tfrac{\ln(2/\delta)}{m}} \;\le\; \frac{\|A\mathbf{v}\|^2}{\|\mathbf{v}\|^2}
        \;\le\; 1 + 2\sqrt{\tfrac{\ln(2/\delta)}{m}} + \tfrac{2\ln(2/\delta)}{m}.

    Returns (lower, upper) as arrays shaped like m (the lower bound may be negative: vacuous).

    Parameters
    ----------
    m : int or array-like of int
        Target dimensions.
    delta : float, default=0.05
        Failure probability of the band.

    Returns
    -------
    lower, upper : numpy.ndarray
        The band's ends, shaped like m.
    """
    m = np.asarray(m, dtype=np.float64)
    if np.any(~np.isfinite(m)) or np.any(m < 1):
        raise ValueError(f"m (the target dimension) must be >= 1, got {m!r}.")
    delta = float(delta)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    t = np.log(2.0 / delta)
    return 1.0 - 2.0 * np.sqrt(t / m), 1.0 + 2.0 * np.sqrt(t / m) + 2.0 * t / m


def chi2_band(m, delta: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    r"""The exact central 1 - δ interval of :math:`\|A v\|^2/\|v\|^2 \sim \chi^2_m / m` (Gaussian A).

    Parameters
    ----------
    m : int or array-like of int
        Target dimensions.
    delta : float, default=0.05
        Failure probability of the band.

    Returns
    -------
    lower, upper : numpy.ndarray
        The interval's ends, shaped like m.
    """
    m = np.asarray(m, dtype=np.float64)
    if m.size == 0 or not np.all(np.isfinite(m)) or np.any(m < 1):
        raise ValueError(f"m (the number of projected dimensions) must be >= 1, got {m.tolist()!r}.")
    if not 0 < float(delta) < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    return chi2.ppf(delta / 2, m) / m, chi2.ppf(1 - delta / 2, m) / m


@dataclass(frozen=True)
class Projection:  # numpydoc ignore=PR02
    """A random projection of the notes (Theorem 1) and how to build it.

    Parameters
    ----------
    key : str
        Its key (see :data:`PROJECTIONS`).
    label : str
        Its name on the page.
    latex : str
        Its definition.
    build : callable
        ``build(n_components, random_state)`` -> an unfitted scikit-learn projector.
    """
    key: str
    label: str
    latex: str
    build: Callable[[int, object], Any]  # (n_components, random_state) -> unfitted sklearn projector (untyped)


PROJECTIONS: dict[str, Projection] = {
    p.key: p
    for p in (
        Projection("gaussian", "Gaussian", r"A_{ij} \sim \mathcal{N}(0, 1/m)",
                   lambda m, rs: GaussianRandomProjection(n_components=m, random_state=rs)),
        Projection("sparse", "Sparse (Li et al.)",
                   r"A_{ij} = \pm\sqrt{\tfrac{1}{s\,m}} \text{ w.p. } \tfrac{s}{2},\ 0 \text{ w.p. } 1 - s,\ s = 1/\sqrt{d}",
                   lambda m, rs: SparseRandomProjection(n_components=m, density="auto", dense_output=True,
                                                        random_state=rs)),
    )
}


def distortion_bands(m_values, delta: float = 0.05) -> pd.DataFrame:
    """Per target dimension m: Theorem 1's band (:func:`theorem1_band`, the lower end may be < 0) and
    the exact chi^2_m / m interval of Gaussian A (:func:`chi2_band`). Columns: m, theorem_low,
    theorem_high, chi2_low, chi2_high.

    Parameters
    ----------
    m_values : sequence of int
        Target dimensions.
    delta : float, default=0.05
        Failure probability of the band.

    Returns
    -------
    pandas.DataFrame
        The tidy table described above.
    """
    ms = np.unique(np.asarray(m_values, dtype=np.int64))
    lo, hi = theorem1_band(ms, delta)
    clo, chi = chi2_band(ms, delta)
    return pd.DataFrame({"m": ms, "theorem_low": lo, "theorem_high": hi, "chi2_low": clo, "chi2_high": chi})


def get_projection(key: str) -> Projection:
    """The :class:`Projection` of a key, or a ValueError listing the keys.

    Parameters
    ----------
    key : str
        A key of :data:`PROJECTIONS`.

    Returns
    -------
    Projection
        Its entry.
    """
    return entry_of(PROJECTIONS, key, "projection kind")


def projection_distortion(X, m_list=(8, 16, 32, 64, 128, 256, 512), kind: str = "gaussian", trials: int = 5,
                          seed: int = 0) -> pd.DataFrame:
    r"""Distortion :math:`\|A\mathbf{v}\|^2 / \|\mathbf{v}\|^2` of every row v of X under random projections.

    For each trial one scikit-learn projector with :math:`m_{\max}` = max(m_list) rows is fitted
    (``GaussianRandomProjection`` or ``SparseRandomProjection``); the m-dimensional projection is
    its first m rows rescaled by :math:`\sqrt{m_{\max}/m}`. The rows are i.i.d., so this has exactly
    the distribution of a fresh m-row projector, and one product serves every m (curves over m are
    coupled within a trial, which only smooths them).

    Tidy: one row per (kind, m, trial, vector) with columns kind, m, trial, vector, ratio.
    Zero rows of X are refused (the ratio is undefined).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    m_list : sequence of int
        Target dimensions.
    kind : str, default="gaussian"
        A key of :data:`PROJECTIONS`.
    trials : int, default=5
        Independent draws.
    seed : int, default=0
        Seed of the first trial (trial t uses seed + t).

    Returns
    -------
    pandas.DataFrame
        The tidy table described above.
    """
    proj = get_projection(kind)
    X = check_array(X)
    m_list = sorted(set(check_positive_ints(m_list, "m_list")))
    trials = check_int(trials, "trials")
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if is_sparse(X) else np.einsum("ij,ij->i", X, X)
    if np.any(sq <= 0):
        raise ValueError(f"X has {int(np.sum(sq <= 0))} zero row(s); the distortion ||Av||^2/||v||^2 needs v != 0.")
    m_max = m_list[-1]
    n = X.shape[0]
    require_memory({"the projection matrix": (m_max, X.shape[1]), "the projections and their sums": (2, n, m_max)},
                   what="projection_distortion", hint="Use a smaller largest m or fewer rows.")
    ms = np.asarray(m_list)
    parts = []
    for t in range(trials):
        with warnings.catch_warnings():
            # m > d is allowed on purpose here (the band is about m, not about reducing d)
            warnings.simplefilter("ignore", DataDimensionalityWarning)
            P = proj.build(m_max, seed + t).fit_transform(X)
        P = P.toarray() if is_sparse(P) else np.asarray(P)
        cum = np.cumsum(P**2, axis=1)[:, ms - 1] * (m_max / ms)  # (n, len(m_list))
        ratio = cum / sq[:, None]
        parts.append(pd.DataFrame(dict(kind=kind, m=np.tile(ms, n), trial=t, vector=np.repeat(np.arange(n), ms.size),
                                       ratio=ratio.ravel())))
    return pd.concat(parts, ignore_index=True)


def distortion_summary(df: pd.DataFrame, delta: float = 0.05) -> pd.DataFrame:
    """Per (kind, m): quantiles of the ratio, the Theorem 1 band and the fraction of ratios outside it.

    Theorem 1 promises ``outside <= delta`` for Gaussian projections (per vector, so also on average).

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`projection_distortion` output.
    delta : float, default=0.05
        Failure probability of the band.

    Returns
    -------
    pandas.DataFrame
        One row per (kind, m).
    """
    need = {"kind", "m", "ratio"}
    if not need.issubset(df.columns):
        raise ValueError(f"distortion_summary needs columns {sorted(need)}; got {list(df.columns)}.")
    lo, hi = theorem1_band(np.sort(df["m"].unique()), delta)
    band = pd.DataFrame(dict(m=np.sort(df["m"].unique()), band_low=lo, band_high=hi))
    g = df.groupby(["kind", "m"])["ratio"]
    out = pd.DataFrame({
        "q_low": g.quantile(delta / 2), "median": g.median(), "q_high": g.quantile(1 - delta / 2),
        "mean": g.mean(), "count": g.size(),
    }).reset_index().merge(band, on="m")
    inside = df.merge(band, on="m")
    inside["outside"] = (inside["ratio"] < inside["band_low"]) | (inside["ratio"] > inside["band_high"])
    out = out.merge(inside.groupby(["kind", "m"])["outside"].mean().rename("outside").reset_index(), on=["kind", "m"])
    out["delta"] = delta
    return out
