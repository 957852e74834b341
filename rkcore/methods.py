"""The learners of the accuracy study as data: key, label, colour, the kernel each targets and its cost model.

This table is what figures, pages, cost estimates and the study share; how each learner is built and fitted
is the study engine's business (:mod:`rkcore.accuracy`), so importing this module fits nothing and pulls in
no learner. Keys follow the paper:

==================  =================================================================
kernel_svm          SVM on the exact study kernel (libsvm, precomputed Gram)
poly_svm            SVM on the exact polynomial kernel (c + <x, y>)^m (Figure 3)
fm                  m-order factorization machine (rank 30, as in the paper)
all_subsets_model   the all-subsets model (rank 30)
rk, scrk, ...       linear SVM on the features of a registry map with a ``classifier_kernel``
sparse_rf           Sparse Random Features (Yen et al. 2014) over RK features;
                    D = features drawn in total
==================  =================================================================
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from .registry import MAPS, KernelSpec, MapEntry, anova_of, polynomial_of, same_kernel

DEFAULT_C_GRID = (0.1, 1.0, 10.0, 100.0, 1000.0)
SELECTION_METRICS = ("accuracy", "balanced_accuracy")


def all_subsets_of(spec: KernelSpec) -> KernelSpec:
    """The all-subsets kernel, whatever the study kernel (the all-subsets model's target)."""
    return KernelSpec("all_subsets")


@dataclass(frozen=True)
class Method:
    """One learner of the study: the kernel it targets, what it costs, how it is drawn."""

    key: str
    label: str
    uses_D: bool  # has a number of random features D
    randomized: bool  # results depend on the trial's seed (else run once)
    kernel_of: Callable[[KernelSpec], KernelSpec]  # study kernel -> the kernel this method targets
    fit_seconds: Callable  # (n, d, D, m) -> rough seconds of one fit (the page's estimate before a run)
    color: str  # "#rrggbb" in the accuracy and time charts
    requires: tuple[str, ...] = ()  # study kernels it needs (empty: any)
    map_key: str | None = None  # the registry map whose features a linear SVM learns on


# Rough seconds of one fit (+ prediction) on the 2-core machine, one BLAS thread, fitted to runs on the
# built-in data (n_train = 100 ... 2000, d = 20, D = 40 ... 320) with about 2x headroom. The linear
# SVMs on random features take theirs from the map's registry entry (MapEntry.fit_seconds).
_EXACT_METHODS = (
    Method("kernel_svm", "Kernel SVM (exact)", False, False, same_kernel,
           lambda n, d, D, m: 4e-8 * n * n * max(d / 20, 1) + 0.002, "#000000"),
    Method("poly_svm", "Kernel SVM (polynomial)", False, False, polynomial_of,
           lambda n, d, D, m: 2e-7 * n * n * max(d / 20, 1) + 0.002, "#555555"),
    Method("fm", "Factorization machine", False, True, anova_of,
           lambda n, d, D, m: 2e-6 * n * d * m + 0.01, "#CC79A7"),
    Method("all_subsets_model", "All-subsets model", False, True, all_subsets_of,
           lambda n, d, D, m: 1e-5 * n * d + 0.01, "#8C564B"),
)
_SPARSE_RF = Method("sparse_rf", "Sparse RF (l1, RK)", True, True, same_kernel,
                    lambda n, d, D, m: 1e-6 * n * D ** 1.5 / 10 + 0.02, "#56B4E9")


def _map_method(entry: MapEntry) -> Method:
    """A linear SVM on the features of a registry map (entries with a classifier_kernel)."""
    # on the study kernel itself, the study kernel must be one the map approximates
    requires = entry.kernels if entry.classifier_kernel is same_kernel else ()
    return Method(entry.key, f"Linear SVM + {entry.short_label}", True, True, entry.classifier_kernel,
                  entry.fit_seconds, entry.color, requires=requires, map_key=entry.key)


class MethodTable(Mapping):
    """The learners of the study, keyed as in the paper: the exact learners, one linear SVM per
    registry map that has a ``classifier_kernel`` (so a map registered at run time appears), and
    sparse random features. Read-only; look-ups of unknown keys raise KeyError."""

    def _methods(self) -> dict[str, Method]:
        maps = [_map_method(e) for e in MAPS.values() if e.classifier_kernel is not None]
        return {m.key: m for m in (*_EXACT_METHODS, *maps, _SPARSE_RF)}

    def __getitem__(self, key: str) -> Method:
        return self._methods()[key]

    def __iter__(self):
        return iter(self._methods())

    def __len__(self) -> int:
        return len(self._methods())


METHODS = MethodTable()


def get_method(key: str) -> Method:
    """The :class:`Method` of ``key``; ValueError naming the allowed keys otherwise."""
    try:
        return METHODS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown method {key!r}; allowed: {', '.join(map(repr, METHODS))}.") from None


def estimate_seconds(method_keys: Sequence[str], n_train: int, n_test: int, d: int, D_list,
                     degree: int) -> pd.DataFrame:
    """Rough seconds of one fit + prediction per (method, D) from the methods' cost models
    (predicting is taken as a tenth of fitting on as many points). Columns: method, label, D, seconds."""
    rows = []
    for key in method_keys:
        method = get_method(key)
        for D in (D_list if method.uses_D else [np.nan]):
            Dv = 0 if np.isnan(D) else D
            seconds = method.fit_seconds(n_train, d, Dv, degree) + method.fit_seconds(n_test, d, Dv, degree) * 0.1
            rows.append({"method": key, "label": method.label, "D": D, "seconds": seconds})
    return pd.DataFrame(rows, columns=["method", "label", "D", "seconds"])


def total_seconds(estimates: pd.DataFrame, n_trials: int, n_train: int, d: int, spec: KernelSpec,
                  n_C: int = len(DEFAULT_C_GRID)) -> float:
    """Rough seconds of a whole study: :func:`estimate_seconds` rows times the trials of randomized
    methods, plus C validation: one exact SVM per distinct kernel the methods target (as
    :func:`rkcore.accuracy.accuracy_study` does with ``shared_C``), for each of ``n_C`` values of C."""
    fits = sum(row.seconds * (n_trials if get_method(row.method).randomized else 1)
               for row in estimates.itertuples())
    targets = {get_method(k).kernel_of(spec) for k in estimates["method"].unique()}
    svm = {t: METHODS["poly_svm" if t.name == "polynomial" else "kernel_svm"] for t in targets}
    return fits + sum(n_C * svm[t].fit_seconds(n_train, d, 0, 2) for t in targets)
