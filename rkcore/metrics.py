"""The one table of error metrics: how far an estimate K̂ is from the kernel K, by name.

Every engine that reports an error (the Gram page's statistics, the error study of Table 1, the RFF
and compositional curves) and every figure or table that labels one reads :data:`METRICS`: the key
is the ``metric`` column of the tidy results, ``name`` heads a table row, ``axis_label`` titles a
chart axis, ``definition`` says what is computed. E = K̂ − K; over pairs i, j (all n², or the
pairs an error study sweeps).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Metric", "METRICS", "GRAM_METRICS", "CURVE_METRICS", "SEPARATION_SE", "metric_labels", "separated"]


@dataclass(frozen=True, kw_only=True)
class Metric:  # numpydoc ignore=PR02
    """An error measure: its key and the labels tables and charts show it with.

    Parameters
    ----------
    key : str
        Short key, e.g. "rel_fro".
    name : str
        Table row label.
    axis_label : str
        Chart axis label.
    definition : str
        What is computed, in symbols.
    """
    key: str
    name: str  # "mean absolute error": a table row
    axis_label: str  # "mean entry error mean |K̂ − K|": a chart axis
    definition: str  # what is computed, in symbols


METRICS: dict[str, Metric] = {
    m.key: m
    for m in (
        Metric(key="mean_abs_error", name="mean absolute error", axis_label="mean entry error mean |K̂ − K|",
               definition="mean_ij |K̂_ij − K_ij|"),
        Metric(key="max_abs_error", name="max absolute error", axis_label="max entry error max |K̂ − K|",
               definition="max_ij |K̂_ij − K_ij|"),
        Metric(key="rms_error", name="RMS error", axis_label="RMS entry error",
               definition="sqrt(mean_ij (K̂_ij − K_ij)²)"),
        # no "_F" in the axis label: it reads as raw markup
        Metric(key="rel_fro", name="relative Frobenius error",
               axis_label="relative error ‖K̂ − K‖ / ‖K‖ (Frobenius)", definition="‖K̂ − K‖_F / ‖K‖_F"),
        Metric(key="mean_error", name="mean signed error", axis_label="mean signed error mean (K̂ − K)",
               definition="mean_ij (K̂_ij − K_ij)"),
        Metric(key="tail_prob", name="tail probability", axis_label="P(|K̂ − K| ≥ ε)",
               definition="fraction of pairs with |K̂_ij − K_ij| ≥ ε"),
    )
}
#: The Gram page's statistics (all n² entries), in the order its table shows them.
GRAM_METRICS = ("mean_abs_error", "max_abs_error", "rms_error", "rel_fro")
#: The error measures the RFF and compositional curves offer.
CURVE_METRICS = ("rel_fro", "max_abs_error", "mean_abs_error")


def metric_labels(keys=CURVE_METRICS) -> dict[str, str]:
    """key -> axis label of the given metrics (a widget's format_func, an axis title).

    Parameters
    ----------
    keys : iterable of str, default CURVE_METRICS
        Metric keys.

    Returns
    -------
    dict of str to str
        Key to axis label.
    """
    return {key: METRICS[key].axis_label for key in keys}


#: A difference of two means counts as real only beyond this many standard errors of the difference
#: (about 95% two-sided for normal errors); below it the note calls the methods tied.
SEPARATION_SE = 2.0


def separated(mean_a: float, std_a: float, n_a: int, mean_b: float, std_b: float, n_b: int,
              k: float = SEPARATION_SE) -> bool:
    """Whether two means of trials differ by more than ``k`` standard errors of their difference
    (``std``: the trials' spread, ddof = 0 as in the Table 1 view, turned into ddof = 1; one trial: no
    spread is known, nothing counts as separated).

    Parameters
    ----------
    mean_a : float
        Mean of the first trials.
    std_a : float
        Their standard deviation (ddof = 0).
    n_a : int
        Their number.
    mean_b : float
        Mean of the second trials.
    std_b : float
        Their standard deviation (ddof = 0).
    n_b : int
        Their number.
    k : float, default SEPARATION_SE
        Standard errors required.

    Returns
    -------
    bool
        Whether the means are separated.
    """
    if n_a < 2 or n_b < 2:
        return False
    var_a = std_a ** 2 * n_a / (n_a - 1) / n_a
    var_b = std_b ** 2 * n_b / (n_b - 1) / n_b
    return abs(mean_a - mean_b) > k * float(np.sqrt(var_a + var_b))
