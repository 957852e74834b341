r"""Paper Table 1: mean absolute error of RK / SCRK maps on MovieLens 100K, beside the paper.

``python -m rkcore table1 --data PATH_TO_ml-100k [--n 10000] [--trials 100] [--pairs nonzero_float|nonzero|all]
[--out summary.csv] [--raw trials.csv] [--seed 0] [--n-jobs 1] [--sample first|random]
[--kernels anova2,anova3,all_subsets] [--multiples 2,4,8,16]``

Protocol (Atarashi, Maji & Oyama, AAAI-19, Section 6): each MovieLens rating row is a
d = 78 feature vector (:func:`rkcore.data.datasets.load_movielens`), L1-normalized; n
instances; for every kernel (ANOVA m = 2, m = 3, all-subsets), map (RK with the
Rademacher, Gaussian, uniform and Laplace distributions; SCRK for ANOVA) and
D in {2d, 4d, 8d, 16d}, ``trials`` independent maps; each trial's error is the mean of
|<Z(x_i), Z(x_j)> - K(x_i, x_j)| over the pairs; the table shows mean +- std
(numpy's ``np.std``, ddof = 0) over the trials.

Choices where the paper is silent:

* instances: the paper used "only 10,000 instances" of its training split, which is not
  published; we take the first n rows of u.data (GroupLens ships it in random order),
  or a seeded subsample with ``--sample random``.
* pairs: ``--pairs nonzero_float`` (default) averages over the pairs whose kernel, as
  computed in floating point by the paper's power-sum formula (eq. 12), is not exactly
  0.0. Rounding residues decide that mask (on MovieLens most ANOVA-3 pairs it keeps share
  fewer than 3 features, so their exact kernel is 0), so it is implementation-dependent;
  it matches the paper's numbers within about 1%. ``--pairs nonzero`` keeps the exact
  support (pairs sharing at least m features, decided by counting); ``--pairs all``
  averages over all n^2 pairs (diagonal included) and gives ANOVA errors 5-10% lower,
  because most MovieLens pairs share fewer than m features and have kernel (and error) 0.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from .errors import error_study, summarize_errors
from ..registry import KernelSpec
from .paper import TABLE1_MULTIPLES

MULTIPLES = TABLE1_MULTIPLES  # defined once, in rkcore.studies.paper (the command line reads it there)
DISTRIBUTION_KEYS = ("rademacher", "gaussian", "uniform", "laplace")

#: Table 1's sub-tables: key -> (KernelSpec, title, whether SCRK applies). Not the registry's KERNELS: a sub-table
#: is a kernel with its degree.
TABLE1_KERNELS = {
    "anova2": (KernelSpec("anova", 2), "(a) Second-order ANOVA kernel", True),
    "anova3": (KernelSpec("anova", 3), "(b) Third-order ANOVA kernel", True),
    "all_subsets": (KernelSpec("all_subsets"), "(c) All-subsets kernel", False),
}

#: Table 1 of the paper: kernel -> method -> ((mean, std) for D = 2d, 4d, 8d, 16d).
PAPER_TABLE1: dict[str, dict[str, tuple[tuple[float, float], ...]]] = {
    "anova2": {
        "RK (Rademacher)": ((6.53e-4, 3.86e-5), (4.62e-4, 2.19e-5), (3.29e-4, 1.26e-5), (2.33e-4, 1.02e-5)),
        "RK (Gaussian)": ((7.31e-4, 6.82e-5), (5.22e-4, 3.71e-5), (3.73e-4, 1.83e-5), (2.62e-4, 1.06e-5)),
        "RK (Uniform)": ((6.85e-4, 4.96e-5), (4.92e-4, 2.90e-5), (3.50e-4, 1.68e-5), (2.47e-4, 1.05e-5)),
        "RK (Laplace)": ((8.29e-4, 1.36e-4), (6.16e-4, 8.30e-5), (4.39e-4, 4.03e-5), (3.11e-4, 2.00e-5)),
        "SCRK": ((7.22e-4, 2.13e-4), (5.01e-4, 9.74e-5), (3.60e-4, 8.46e-5), (2.54e-4, 4.34e-5)),
    },
    "anova3": {
        "RK (Rademacher)": ((2.26e-5, 1.74e-6), (1.64e-5, 8.69e-7), (1.17e-5, 4.70e-7), (8.35e-6, 2.29e-7)),
        "RK (Gaussian)": ((2.67e-5, 3.89e-6), (1.97e-5, 2.35e-6), (1.45e-5, 1.17e-6), (1.05e-5, 6.06e-7)),
        "RK (Uniform)": ((2.40e-5, 2.58e-6), (1.77e-5, 1.46e-6), (1.30e-5, 8.25e-7), (9.27e-6, 3.93e-7)),
        "RK (Laplace)": ((3.09e-5, 8.56e-6), (2.44e-5, 5.08e-6), (1.80e-5, 3.01e-6), (1.31e-5, 1.54e-6)),
        "SCRK": ((2.29e-5, 4.93e-6), (1.65e-5, 2.28e-6), (1.19e-5, 1.50e-6), (8.40e-6, 6.73e-7)),
    },
    "all_subsets": {
        "RK (Rademacher)": ((4.24e-2, 1.14e-2), (2.94e-2, 7.07e-3), (2.01e-2, 4.79e-3), (1.49e-2, 4.94e-3)),
        "RK (Gaussian)": ((4.25e-2, 1.23e-2), (3.07e-2, 8.23e-3), (2.12e-2, 5.29e-3), (1.54e-2, 4.79e-3)),
        "RK (Uniform)": ((4.32e-2, 1.11e-2), (2.96e-2, 7.61e-3), (1.99e-2, 5.05e-3), (1.45e-2, 3.93e-3)),
        "RK (Laplace)": ((4.15e-2, 1.04e-2), (2.89e-2, 7.34e-3), (2.00e-2, 5.12e-3), (1.49e-2, 4.17e-3)),
    },
}


def paper_frame() -> pd.DataFrame:
    """The paper's Table 1 as a tidy frame: kernel, method, multiple (D/d), paper_mean, paper_std.

    Returns
    -------
    pandas.DataFrame
        One row per (kernel, method, multiple) of :data:`PAPER_TABLE1`; the kernel column is ``kernel_key``.
    """
    rows = [(k, method, mult, mean, std)
            for k, table in PAPER_TABLE1.items() for method, cells in table.items()
            for mult, (mean, std) in zip(MULTIPLES, cells)]
    return pd.DataFrame(rows, columns=["kernel_key", "method", "multiple", "paper_mean", "paper_std"])


def methods_for(kernel_key: str) -> list[tuple[str, str | None]]:
    """The (map, distribution) pairs of a kernel's sub-table: RK with each distribution, and SCRK where it applies.

    Parameters
    ----------
    kernel_key : str
        A key of :data:`TABLE1_KERNELS`.

    Returns
    -------
    list[tuple[str, str or None]]
        Map key and weight distribution key (None for SCRK).
    """
    methods: list[tuple[str, str | None]] = [("rk", dist) for dist in DISTRIBUTION_KEYS]
    return methods + [("scrk", None)] if TABLE1_KERNELS[kernel_key][2] else methods


def table1_view(study: pd.DataFrame, d: int, metric: str = "mean_abs_error") -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's Table 1 layout: one row per method, one column per D, cells "mean ± std".

    ``study`` is :func:`rkcore.studies.errors.error_study` output; the std is numpy's (ddof = 0),
    as in the paper. Returns (display table of strings, tidy numbers: method, map,
    distribution, D, multiple, mean, std, n_trials, lowest — True for the lowest mean at that D).

    Parameters
    ----------
    study : pandas.DataFrame
        Output of :func:`rkcore.studies.errors.error_study`.
    d : int
        Number of input features, for the D = k d headers and the ``multiple`` column.
    metric : str, default "mean_abs_error"
        The error metric shown.

    Returns
    -------
    display : pandas.DataFrame
        Column Method and one string column per D.
    tidy : pandas.DataFrame
        The numbers, one row per (method, D).
    """
    sub = study[study["metric"] == metric]
    if sub.empty:
        raise ValueError(f"No rows with metric {metric!r} in the study.")
    g = sub.groupby(["method", "map", "distribution", "D"], sort=False)["value"]
    tidy = g.agg(mean="mean", n_trials="count").reset_index()
    tidy["std"] = g.std(ddof=0).to_numpy()
    tidy["multiple"] = tidy["D"] / d
    tidy["lowest"] = tidy["mean"] == tidy.groupby("D")["mean"].transform("min")
    tidy = tidy[["method", "map", "distribution", "D", "multiple", "mean", "std", "n_trials", "lowest"]]

    def header(D: int) -> str:  # numpydoc ignore=GL08
        mult = D / d
        return f"D = {mult:g}d = {D}" if float(mult).is_integer() else f"D = {D}"

    cells = tidy.assign(cell=[f"{m:.2e} ± {s:.2e}" for m, s in zip(tidy["mean"], tidy["std"])],
                        column=[header(D) for D in tidy["D"]])
    order = list(dict.fromkeys(tidy["method"]))
    wide = cells.pivot(index="method", columns="column", values="cell").reindex(order)
    wide = wide[[header(D) for D in sorted(tidy["D"].unique())]]
    wide.columns.name = None
    return wide.reset_index().rename(columns={"method": "Method"}), tidy


def run_table1(X, *, kernels=tuple(TABLE1_KERNELS), multiples=MULTIPLES, n_trials: int = 100, pairs: str = "nonzero_float",
               random_state: int = 0, n_jobs: int = 1, progress=None, log=None,
               client=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run the study on (already normalized) X; returns (summary with paper columns, per-trial tidy frame).

    ``client`` (a dask.distributed.Client) runs the trials on a Dask cluster (see error_study).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        The points, already normalized.
    kernels : sequence of str, default all of TABLE1_KERNELS
        Keys of :data:`TABLE1_KERNELS` to run.
    multiples : sequence of int, default MULTIPLES
        Values of D / d.
    n_trials : int, default 100
        Independent maps per (method, D).
    pairs : {"nonzero_float", "nonzero", "all"}, default "nonzero_float"
        Pairs averaged over (see the module docstring).
    random_state : int, default 0
        Seed of the maps.
    n_jobs : int, default 1
        joblib workers (ignored with ``client``).
    progress : callable or None, default None
        Called as ``progress(fraction, message)`` by each kernel's study.
    log : callable or None, default None
        Called with one line per kernel giving its run time.
    client : dask.distributed.Client or None, default None
        Dask cluster to run on; None runs locally.

    Returns
    -------
    summary : pandas.DataFrame
        One row per (kernel, method, D) with the paper's mean and std and the ratio ours / paper.
    raw : pandas.DataFrame
        Every trial's errors, with a ``kernel_key`` column.
    """
    d = X.shape[1]
    summaries, raws = [], []
    for kernel_key in kernels:
        spec = TABLE1_KERNELS[kernel_key][0]
        start = time.perf_counter()
        raw = error_study(X, spec, methods_for(kernel_key), [m * d for m in multiples], n_trials,
                          pairs=pairs, random_state=random_state, n_jobs=n_jobs, progress=progress,
                          client=client)
        raw.insert(0, "kernel_key", kernel_key)
        summary = summarize_errors(raw[raw["metric"] == "mean_abs_error"])
        summary.insert(0, "kernel_key", kernel_key)
        summaries.append(summary)
        raws.append(raw)
        if log:
            log(f"{TABLE1_KERNELS[kernel_key][1]}: {time.perf_counter() - start:.1f} s")
    summary = pd.concat(summaries, ignore_index=True)
    summary["multiple"] = summary["D"] // d
    summary = summary.merge(paper_frame(), on=["kernel_key", "method", "multiple"], how="left")
    summary["ratio"] = summary["mean"] / summary["paper_mean"]
    columns = ["kernel_key", "kernel", "method", "map", "distribution", "multiple", "D", "n_trials",
               "mean", "std", "paper_mean", "paper_std", "ratio"]
    return summary[columns], pd.concat(raws, ignore_index=True)


def format_tables(summary: pd.DataFrame) -> str:
    """Markdown tables: per kernel, one row per method, cells 'ours +- std / paper +- std (ratio)'.

    Parameters
    ----------
    summary : pandas.DataFrame
        The summary of :func:`run_table1`.

    Returns
    -------
    str
        The tables and a line on the ratios ours / paper.
    """
    lines = []
    for kernel_key, part in summary.groupby("kernel_key", sort=False):
        multiples = sorted(part["multiple"].unique())
        lines.append(f"\n{TABLE1_KERNELS[str(kernel_key)][1]} - mean absolute error, ours / paper (ratio ours/paper)\n")
        lines.append("| Method | " + " | ".join(f"D = {m}d" for m in multiples) + " |")
        lines.append("|---" * (len(multiples) + 1) + "|")
        for method, rows in part.groupby("method", sort=False):
            cells = []
            for m in multiples:
                r = rows[rows["multiple"] == m].iloc[0]
                paper = "n/a" if np.isnan(r.paper_mean) else f"{r.paper_mean:.2e} ± {r.paper_std:.2e}"
                ratio = "" if np.isnan(r.ratio) else f" ({r.ratio:.3f})"
                cells.append(f"{r['mean']:.2e} ± {r['std']:.2e} / {paper}{ratio}")
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
    ratios = summary["ratio"].dropna()
    if len(ratios):
        lines.append(f"\nratio ours/paper over {len(ratios)} cells: median {ratios.median():.3f}, "
                     f"min {ratios.min():.3f}, max {ratios.max():.3f}")
    return "\n".join(lines)
