"""Compositional kernels: a skeleton of base kernels and dual activations, its Gram matrix, and its random features.

Two views: the skeleton and its Gram matrix beside one estimate (:data:`COMPOSITIONAL_GRAM`), and the error
curves per de-duplication mode (:data:`COMPOSITIONAL_CURVES`), so that moving "D for the Gram view" redraws one
estimate (0.3 s at the defaults) and not the curves too (2.7 s). The page (``pages/10_Compositional_kernels.py``)
draws what they return with the figure builders, formulas and notes re-exported here. The error measure
(``ck_metric``) only changes what the figures show: it is not part of the computation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from rkcore.base.arrays import dense
from rkcore.base.limits import HEATMAP_SIDE
from rkcore.figures.compositional import (
    DEDUP_LABELS, activation_figure, compositional_error_figure, compositional_note, compositional_summary,
    draws_figure, skeleton_figure,
)
from rkcore.figures.foundations import METRIC_LABELS
from rkcore.figures.gram import gram_heatmaps
from rkcore.studies.costs import compositional_cost
from rkcore.studies.costs.rates import RunCost
from rkcore.studies.gram import block_average, gram_long
from rkcore.teaching.compositional import (
    ACTIVATIONS, BASE_KERNELS, DEDUP_MODES, PRESETS, REAL_FEATURE_LATEX, CompositionalFeatures, Skeleton,
    activation_curves, activation_table, compositional_error_curve, describe_features, preset_skeleton,
)

from .base import View
from .settings import ViewSpec, choices

#: The largest D offered for the error curves, and the D offered for the Gram view.
D_MAX_OPTIONS, GRAM_D_OPTIONS = list(choices("ck_Dmax")), list(choices("ck_Dgram"))
#: Sampled features listed under the Gram view.
FEATURES_LISTED = 12
#: The de-duplication of the single estimate drawn beside the exact K.
GRAM_DEDUP = "unbiased"


def curve_D(ck_Dmax: int) -> tuple[int, ...]:
    """The D of the error curves: powers of two from 16 to the largest D.

    Parameters
    ----------
    ck_Dmax : int
        The largest D.

    Returns
    -------
    tuple of int
        The D values.
    """
    return tuple(int(D) for D in 2 ** np.arange(4, int(np.log2(ck_Dmax)) + 1))


@dataclass(frozen=True)
class CompositionalGram:  # numpydoc ignore=PR02
    """The skeleton, its exact Gram matrix and one de-duplicated estimate.

    Parameters
    ----------
    skeleton : Skeleton
        The preset's skeleton for the data's width.
    n, d : int
        Points and columns.
    codes : int or None
        Quantile codes of the last column, for a preset with a categorical node (else None).
    K_small, K_hat_small : ndarray
        The exact K and the de-duplicated estimate at ``ck_Dgram``, block-averaged.
    block : int
        Side of the averaged blocks (1: every entry).
    relative_error : float
        ‖K̂ − K‖_F / ‖K‖_F over every entry.
    features : DataFrame
        The first sampled features of the estimate.
    """

    skeleton: Skeleton
    n: int
    d: int
    codes: int | None
    K_small: np.ndarray
    K_hat_small: np.ndarray
    block: int
    relative_error: float
    features: pd.DataFrame

    def long(self) -> pd.DataFrame:
        """The drawn Gram cells as a tidy table.

        Returns
        -------
        DataFrame
            Columns i, j, exact, approximate, difference.
        """
        return gram_long(self.K_small, self.K_hat_small)


def gram_compute(spec: ViewSpec, data, *, ck_preset: str, ck_Dgram: int) -> CompositionalGram:
    """The preset's skeleton and exact kernel, and one de-duplicated estimate at ``ck_Dgram``.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings (its seed).
    data : Dataset
        The view's data (standardized, and binned for a categorical node, by the preset).
    ck_preset, ck_Dgram
        The page's settings: skeleton, D of the estimate.

    Returns
    -------
    CompositionalGram
        The skeleton and the Gram matrices (block-averaged).
    """
    skeleton, Xp = preset_skeleton(ck_preset, dense(data.X))
    with threadpool_limits(limits=1, user_api="blas"):  # small products: one BLAS thread avoids oversubscription
        K = skeleton.kernel(Xp)
        est = CompositionalFeatures(skeleton, int(ck_Dgram), dedup=GRAM_DEDUP, random_state=spec.seed).fit(Xp)
        K_hat, features = est.kernel_estimate(Xp), describe_features(est, FEATURES_LISTED)
    K_small, block = block_average(K, max_side=HEATMAP_SIDE)
    K_hat_small, _ = block_average(K_hat, max_side=HEATMAP_SIDE)
    codes = int(Xp[:, -1].max()) + 1 if PRESETS[ck_preset].n_categories else None
    return CompositionalGram(skeleton, Xp.shape[0], Xp.shape[1], codes, K_small, K_hat_small, block,
                             float(np.linalg.norm(K_hat - K) / np.linalg.norm(K)), features)


def _check_modes(ck_modes) -> None:
    if not ck_modes:
        raise ValueError("Choose at least one de-duplication mode to draw the error curves.")


def curves_compute(spec: ViewSpec, data, *, ck_preset: str, ck_Dmax: int, ck_trials: int, ck_modes) -> pd.DataFrame:
    """The error of the estimate against D, ``ck_trials`` draws per (mode, D), the same seeds for every mode.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings (its seed).
    data : Dataset
        The view's data.
    ck_preset, ck_Dmax, ck_trials, ck_modes
        The page's settings: skeleton, largest D, trials, de-duplication modes (at least one).

    Returns
    -------
    DataFrame
        compositional_error_curve's tidy table.
    """
    _check_modes(ck_modes)
    skeleton, Xp = preset_skeleton(ck_preset, dense(data.X))
    with threadpool_limits(limits=1, user_api="blas"):
        return compositional_error_curve(Xp, skeleton, list(curve_D(ck_Dmax)), trials=int(ck_trials), seed=spec.seed,
                                         dedup_modes=tuple(ck_modes))


def gram_cost(spec: ViewSpec, n: int, d: int, *, ck_preset: str, ck_Dgram: int) -> RunCost:
    """Seconds and peak bytes of :func:`gram_compute` for n points of d features.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Points and features.
    ck_preset, ck_Dgram
        The page's settings.

    Returns
    -------
    RunCost
        The estimate (the page's cost model with no curve).
    """
    return compositional_cost(n, d, [int(ck_Dgram)], 0, 0, int(ck_Dgram), n_nodes=2 * d + 2)


def curves_cost(spec: ViewSpec, n: int, d: int, *, ck_preset: str, ck_Dmax: int, ck_trials: int,
                ck_modes) -> RunCost:
    """Seconds and peak bytes of :func:`curves_compute` for n points of d features.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Points and features.
    ck_preset, ck_Dmax, ck_trials, ck_modes
        The page's settings.

    Returns
    -------
    RunCost
        The estimate: the page's cost model (the exact kernel and every curve) with the smallest D as its single
        estimate, one D = 16 estimate more than the curves draw.
    """
    _check_modes(ck_modes)
    D_list = curve_D(ck_Dmax)
    return compositional_cost(n, d, D_list, int(ck_trials), len(ck_modes), D_list[0], n_nodes=2 * d + 2)


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
    return f"With these settings n up to {largest:,} fits; or lower the largest D or the trials."


def gram_reproduce(spec: ViewSpec, *, ck_preset: str, ck_Dgram: int) -> str:
    """Python code computing the kernel and the single estimate with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    ck_preset, ck_Dgram
        The page's settings.

    Returns
    -------
    str
        The code.
    """
    return "\n".join([
        *[line for line in spec.code().splitlines() if "KernelSpec" not in line],
        "from rkcore.teaching.compositional import CompositionalFeatures, preset_skeleton",
        "from rkcore.base.arrays import dense",
        "",
        f"skel, Xp = preset_skeleton({ck_preset!r}, dense(X))  # standardizes (and bins the last column if needed)",
        "K = skel.kernel(Xp)",
        f"est = CompositionalFeatures(skel, {int(ck_Dgram)}, dedup={GRAM_DEDUP!r}, random_state={spec.seed}).fit(Xp)",
        "K_hat = est.kernel_estimate(Xp)",
        'print(f"relative Frobenius error {np.linalg.norm(K_hat - K) / np.linalg.norm(K):.3f}")',
    ])


def reproduce(spec: ViewSpec, *, ck_preset: str, ck_Dmax: int, ck_trials: int, ck_modes, ck_Dgram: int = 128,
              ck_metric: str = "rel_fro") -> str:
    """Python code computing the kernel, the estimate and the error curves with rkcore (the page's box).

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    ck_preset, ck_Dmax, ck_trials, ck_modes
        The page's settings.
    ck_Dgram : int, default=128
        D of the single estimate (the Gram view's setting).
    ck_metric : str, default="rel_fro"
        The error measure of the table and the chart (a page field the figures read, not the computation).

    Returns
    -------
    str
        The code.
    """
    return "\n".join([
        *[line for line in spec.code().splitlines() if "KernelSpec" not in line],
        "from rkcore.teaching.compositional import CompositionalFeatures, compositional_error_curve, preset_skeleton",
        "from rkcore.figures.compositional import compositional_error_figure, compositional_summary",
        "from rkcore.base.arrays import dense",
        "",
        f"skel, Xp = preset_skeleton({ck_preset!r}, dense(X))  # standardizes (and bins the last column if needed)",
        "K = skel.kernel(Xp)",
        f"est = CompositionalFeatures(skel, {int(ck_Dgram)}, dedup={GRAM_DEDUP!r}, random_state={spec.seed}).fit(Xp)",
        "K_hat = est.kernel_estimate(Xp)",
        'print(f"relative Frobenius error {np.linalg.norm(K_hat - K) / np.linalg.norm(K):.3f}")',
        f"df = compositional_error_curve(Xp, skel, {list(curve_D(ck_Dmax))}, trials={int(ck_trials)}, seed={spec.seed}, "
        f"dedup_modes={tuple(ck_modes)!r})",
        f"print(compositional_summary(df, {ck_metric!r}).to_string(index=False, float_format='%.4g'))  # the page's table",
        f"compositional_error_figure(df, {ck_metric!r}).show()",
    ])


COMPOSITIONAL_GRAM = View(key="ck", what="the compositional kernel", compute=gram_compute, cost=gram_cost,
                          reproduce=gram_reproduce, settings=("ck_preset", "ck_Dgram"), fits=fits)
COMPOSITIONAL_CURVES = View(key="ck_curves", what="the error curves", compute=curves_compute, cost=curves_cost,
                            reproduce=reproduce, settings=("ck_preset", "ck_Dmax", "ck_trials", "ck_modes"), fits=fits)
VIEWS = (COMPOSITIONAL_GRAM, COMPOSITIONAL_CURVES)

__all__ = ["ACTIVATIONS", "BASE_KERNELS", "COMPOSITIONAL_CURVES", "COMPOSITIONAL_GRAM", "DEDUP_LABELS", "DEDUP_MODES",
           "D_MAX_OPTIONS", "GRAM_D_OPTIONS", "HEATMAP_SIDE", "METRIC_LABELS", "PRESETS", "REAL_FEATURE_LATEX",
           "CompositionalGram", "compositional_summary",
           "activation_curves", "activation_figure", "activation_table", "compositional_error_figure",
           "compositional_note", "draws_figure", "gram_heatmaps", "skeleton_figure"]
