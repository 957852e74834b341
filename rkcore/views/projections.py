"""Random projections: how well a random m × D matrix preserves squared norms, against Theorem 1's band.

The page (``pages/9_Random_projections.py``) draws what :func:`compute` returns with the figure builders,
the band and the note re-exported here. δ (``rp_delta``) only changes the summary and the bands drawn:
it is not part of the computation, so changing it recomputes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from rkcore.base.arrays import dense
from rkcore.figures.foundations import band_violation_figure, projection_distortion_figure, projection_note
from rkcore.studies.costs import projection_cost
from rkcore.studies.costs.rates import RunCost
from rkcore.teaching.kernel_trick import polynomial_features
from rkcore.teaching.random_projections import PROJECTIONS, distortion_bands, distortion_summary, projection_distortion

from .base import View
from .settings import ViewSpec, choices

#: The largest m offered.
M_MAX_OPTIONS = list(choices("rp_mmax"))
#: The vectors projected.
VECTORS = {"phi": "explicit degree-2 features φ(x)", "raw": "the data rows x"}
#: the summary's columns as the table shows them (q_low / q_high are the δ/2 and 1 − δ/2 quantiles)
SUMMARY_LABELS = {"kind": "kind", "m": "m", "q_low": "q {lo:g}%", "median": "median", "q_high": "q {hi:g}%",
                  "band_low": "band low", "band_high": "band high", "outside": "outside band"}


def summary_labels(delta: float) -> dict[str, str]:
    """The summary's column names as the table shows them, for δ.

    Parameters
    ----------
    delta : float
        The failure probability.

    Returns
    -------
    dict
        Column -> label.
    """
    return {k: v.format(lo=100 * delta / 2, hi=100 - 100 * delta / 2) for k, v in SUMMARY_LABELS.items()}


def m_values(rp_mmax: int) -> tuple[int, ...]:
    """The m projected to: powers of two from 4 to the largest m.

    Parameters
    ----------
    rp_mmax : int
        The largest m.

    Returns
    -------
    tuple of int
        The m values.
    """
    return tuple(int(m) for m in 2 ** np.arange(2, int(np.log2(rp_mmax)) + 1))


def vector_dimension(rp_vec: str, d: int) -> int:
    """Dimension of the projected vectors: 1 + 2d + C(d, 2) for φ(x), d for the rows.

    Parameters
    ----------
    rp_vec : {"phi", "raw"}
        The vectors.
    d : int
        Features.

    Returns
    -------
    int
        The dimension.
    """
    return 1 + 2 * d + d * (d - 1) // 2 if rp_vec == "phi" else d


def vectors_of(X, rp_vec: str) -> tuple[np.ndarray, int]:
    """The vectors to project (zero rows dropped: they have no distortion ratio) and how many were dropped.

    Parameters
    ----------
    X : array-like
        The rows.
    rp_vec : {"phi", "raw"}
        The vectors.

    Returns
    -------
    V : ndarray
        The vectors.
    dropped : int
        Zero rows dropped.
    """
    X = dense(X)
    V = polynomial_features(X, 2, 1.0) if rp_vec == "phi" else X
    keep = np.einsum("ij,ij->i", V, V) > 0
    return V[keep], int((~keep).sum())


def _check_kinds(rp_kinds) -> None:
    if not rp_kinds:
        raise ValueError("Choose at least one projection (Gaussian or sparse).")


@dataclass(frozen=True)
class ProjectionResult:  # numpydoc ignore=PR02
    """Every distortion ratio, and what the page says about the vectors.

    Parameters
    ----------
    distortions : DataFrame
        projection_distortion's tidy table, every kind.
    n_vectors, dim : int
        The vectors projected and their dimension.
    dropped : int
        Zero rows dropped.
    share : float
        Median share of ‖v‖² in its largest coordinate (near 1: spiky vectors; near 1/D: flat ones).
    m_list : tuple of int
        The m.
    """

    distortions: pd.DataFrame
    n_vectors: int
    dim: int
    dropped: int
    share: float
    m_list: tuple

    def summary(self, delta: float) -> pd.DataFrame:
        """Quantiles, Theorem 1's band and the fraction outside it per (kind, m), for δ.

        Parameters
        ----------
        delta : float
            The failure probability.

        Returns
        -------
        DataFrame
            distortion_summary's table.
        """
        return distortion_summary(self.distortions, float(delta))

    def bands(self, delta: float) -> pd.DataFrame:
        """Theorem 1's band and the exact χ² interval at every m, for δ.

        Parameters
        ----------
        delta : float
            The failure probability.

        Returns
        -------
        DataFrame
            distortion_bands' table.
        """
        return distortion_bands(self.distortions["m"], float(delta))

    def note(self, delta: float) -> str:
        """The "what to notice", for δ.

        Parameters
        ----------
        delta : float
            The failure probability.

        Returns
        -------
        str
            The note.
        """
        return projection_note(self.summary(delta), float(delta), self.share)


def compute(spec: ViewSpec, data, *, rp_vec: str, rp_mmax: int, rp_trials: int, rp_kinds) -> ProjectionResult:
    """‖Av‖²/‖v‖² for every vector, m and draw of A of each kind.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings (its seed: draw t uses seed + t).
    data : Dataset
        The view's data.
    rp_vec, rp_mmax, rp_trials, rp_kinds
        The page's settings: vectors, largest m, draws, projection kinds.

    Returns
    -------
    ProjectionResult
        The ratios and the vectors' description.
    """
    _check_kinds(rp_kinds)
    V, dropped = vectors_of(data.X, rp_vec)
    m_list = m_values(rp_mmax)
    with threadpool_limits(limits=1, user_api="blas"):  # small products: one BLAS thread avoids oversubscription
        df = pd.concat([projection_distortion(V, list(m_list), kind=k, trials=int(rp_trials), seed=spec.seed)
                        for k in rp_kinds], ignore_index=True)
    share = float(np.median((V**2).max(axis=1) / (V**2).sum(axis=1)))
    return ProjectionResult(df, V.shape[0], V.shape[1], dropped, share, m_list)


def cost(spec: ViewSpec, n: int, d: int, *, rp_vec: str, rp_mmax: int, rp_trials: int, rp_kinds) -> RunCost:
    """Seconds and peak bytes of :func:`compute` for n points of d features.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Points and features.
    rp_vec, rp_mmax, rp_trials, rp_kinds
        The page's settings.

    Returns
    -------
    RunCost
        The estimate.
    """
    _check_kinds(rp_kinds)
    return projection_cost(n, vector_dimension(rp_vec, d), m_values(rp_mmax), int(rp_trials), rp_kinds)


def fits(spec: ViewSpec, largest: int, d: int, **settings) -> str:
    """The end of a refusal: the largest n that fits, and what else helps.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    largest : int
        The largest n that fits.
    d : int
        Features.
    **settings
        The page's settings.

    Returns
    -------
    str
        The sentence.
    """
    return f"With these settings n up to {largest:,} fits; or lower the largest m or the draws, or project the raw rows."


def reproduce(spec: ViewSpec, *, rp_vec: str, rp_mmax: int, rp_trials: int, rp_kinds, rp_delta: float = 0.05) -> str:
    """Python code computing the distortions and the page's table with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    rp_vec, rp_mmax, rp_trials, rp_kinds
        The page's settings.
    rp_delta : float, default=0.05
        δ of the table and the bands (a page field the figures read, not the computation).

    Returns
    -------
    str
        The code.
    """
    delta = float(rp_delta)
    return "\n".join([
        *[line for line in spec.code().splitlines() if "KernelSpec" not in line],
        "from rkcore.teaching.kernel_trick import polynomial_features",
        "from rkcore.teaching.random_projections import distortion_bands, distortion_summary, projection_distortion",
        "from rkcore.figures.foundations import projection_distortion_figure",
        "import pandas as pd",
        "from rkcore.base.arrays import dense",
        "",
        "V = polynomial_features(dense(X), 2, 1.0)" if rp_vec == "phi" else "V = dense(X)",
        "V = V[np.einsum('ij,ij->i', V, V) > 0]  # zero rows have no distortion ratio",
        f"df = pd.concat([projection_distortion(V, {list(m_values(rp_mmax))}, kind=k, trials={int(rp_trials)}, "
        f"seed={spec.seed})",
        f"                for k in {list(rp_kinds)}], ignore_index=True)",
        f"summary = distortion_summary(df, delta={delta})",
        f"labels = {summary_labels(delta)!r}",
        "print(summary[list(labels)].rename(columns=labels).to_string(index=False, float_format='%.4g'))  # the page's table",
        f"projection_distortion_figure(df, delta={delta}, bands=distortion_bands(df['m'], {delta})).show()",
    ])


PROJECTION = View(key="rp", what="the projections", compute=compute, cost=cost, reproduce=reproduce,
                  settings=("rp_vec", "rp_mmax", "rp_trials", "rp_kinds"), fits=fits)
VIEWS = (PROJECTION,)

__all__ = ["M_MAX_OPTIONS", "PROJECTION", "PROJECTIONS", "SUMMARY_LABELS", "VECTORS", "ProjectionResult",
           "band_violation_figure", "projection_distortion_figure", "summary_labels"]
