"""The one table of error metrics: how far an estimate K̂ is from the kernel K, by name.

Every engine that reports an error (the Gram page's statistics, the error study of Table 1, the RFF
and compositional curves) and every figure or table that labels one reads :data:`METRICS`: the key
is the ``metric`` column of the tidy results, ``name`` heads a table row, ``axis_label`` titles a
chart axis, ``definition`` says what is computed. E = K̂ − K; over pairs i, j (all n², or the
pairs an error study sweeps).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Metric", "METRICS", "GRAM_METRICS", "CURVE_METRICS", "metric_labels"]


@dataclass(frozen=True, kw_only=True)
class Metric:
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
