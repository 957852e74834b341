"""The learners of the accuracy study: :class:`MethodEntry` (pure metadata, read by the figures and the CLI
without importing the engine), the exact learners, one linear SVM per registry map offered to the study,
sparse random features, and the live table :data:`METHODS`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable

from .kernels import KernelSpec, anova_of, polynomial_of, same_kernel
from .maps import HEX_COLOR, MAPS, MapEntry


#: How a method is built (rkcore.studies.accuracy turns each kind into an estimator): the names of the learners.
LEARNERS = ("kernel_svm", "factorization_machine", "all_subsets_model", "linear_svm_on_map", "sparse_random_features")


@dataclass(frozen=True, kw_only=True)
class MethodEntry:  # numpydoc ignore=PR02
    """One learner of the accuracy study: the kernel it targets, what it costs, how it is drawn, and the kind
    of estimator it is (``learner``, one of :data:`LEARNERS`; the accuracy engine builds it). Pure metadata:
    the figures and the CLI read it without importing the engine.

    Parameters
    ----------
    key : str
        Method key.
    label : str
        Name in charts and tables.
    uses_D : bool
        Has a number of random features D.
    randomized : bool
        Results depend on the trial's seed.
    kernel_of : callable
        Study kernel -> kernel this method targets.
    learner : str
        Estimator kind, one of LEARNERS.
    fit_seconds : callable
        (n, d, D, m) -> rough seconds of one fit.
    color : str
        Chart colour, "#rrggbb".
    requires : tuple of str, default ()
        Study kernels it needs (empty: any).
    """

    key: str
    label: str
    uses_D: bool  # has a number of random features D
    randomized: bool  # results depend on the trial's seed (else run once)
    kernel_of: Callable[[KernelSpec], KernelSpec]  # study kernel -> the kernel this method targets
    learner: str
    fit_seconds: Callable  # (n, d, D, m) -> rough seconds of one fit (the page's estimate before a run)
    color: str  # "#rrggbb" in the accuracy and time charts
    requires: tuple[str, ...] = ()  # study kernels it needs (empty: any)

    def __post_init__(self):
        if self.learner not in LEARNERS:
            raise ValueError(f"Method {self.key!r}: learner must be one of {', '.join(LEARNERS)}; got {self.learner!r}.")
        if not HEX_COLOR.match(self.color):
            raise ValueError(f"Method {self.key!r}: color must be '#rrggbb', got {self.color!r}.")


def _all_subsets_of(spec: KernelSpec) -> KernelSpec:
    return KernelSpec("all_subsets")


#: L-BFGS-B iterations the classifier study gives the factorization machine (its own default is 200). Its objective is
#: weakly regularized (alpha = beta = 1 / (C n_train), 2e-5 at the Classifiers page's default n = 1,000, C = 100),
#: so reaching tol = 1e-6 takes 451-491 iterations there (measured, 3 seeds): at 200 every trial stopped at the
#: limit with a ConvergenceWarning. Its cost model below counts this many iterations (an upper bound: about 3.5 ms
#: each at n_train = 500, d = 20, measured on the loaded 2-core machine).
FM_MAX_ITER = 1000

# Rough seconds of one fit (+ prediction) on the 2-core machine, one BLAS thread, fitted to runs on the
# built-in data (n_train = 100 ... 2000, d = 20, D = 40 ... 320) with about 2x headroom. The linear
# SVMs on random features take theirs from the map's cost model (CostModel.fit_seconds).
_EXACT_METHODS = (
    MethodEntry(key="kernel_svm", label="Kernel SVM (exact)", uses_D=False, randomized=False, kernel_of=same_kernel,
                learner="kernel_svm", fit_seconds=lambda n, d, D, m: 4e-8 * n * n * max(d / 20, 1) + 0.002,
                color="#000000"),
    MethodEntry(key="poly_svm", label="Kernel SVM (polynomial)", uses_D=False, randomized=False,
                kernel_of=polynomial_of, learner="kernel_svm",
                fit_seconds=lambda n, d, D, m: 2e-7 * n * n * max(d / 20, 1) + 0.002, color="#555555"),
    MethodEntry(key="fm", label="Factorization machine", uses_D=False, randomized=True, kernel_of=anova_of,
                learner="factorization_machine", fit_seconds=lambda n, d, D, m: FM_MAX_ITER * (
                    2e-3 + 2e-6 * n * m * max(d / 20, 1)) + 0.01, color="#CC79A7"),
    MethodEntry(key="all_subsets_model", label="All-subsets model", uses_D=False, randomized=True,
                kernel_of=_all_subsets_of, learner="all_subsets_model",
                fit_seconds=lambda n, d, D, m: 1e-5 * n * d + 0.01, color="#8C564B"),
)
_SPARSE_RF = MethodEntry(key="sparse_rf", label="Sparse RF (l1, RK)", uses_D=True, randomized=True,
                         kernel_of=same_kernel, learner="sparse_random_features",
                         fit_seconds=lambda n, d, D, m: 1e-6 * n * D ** 1.5 / 10 + 0.02, color="#56B4E9")


def _map_method(entry: MapEntry) -> MethodEntry:
    """A linear SVM on the features of a registry map (entries with a classifier_kernel)."""
    # on the study kernel itself, the study kernel must be one the map approximates
    requires = entry.kernels if entry.classifier_kernel is same_kernel else ()
    # only maps offered in the study come here; MapEntry checks that those have a fit_seconds model
    assert entry.classifier_kernel is not None and entry.cost.fit_seconds is not None
    return MethodEntry(key=entry.key, label=f"Linear SVM + {entry.short_label}", uses_D=True, randomized=True,
                       kernel_of=entry.classifier_kernel, learner="linear_svm_on_map",
                       fit_seconds=entry.cost.fit_seconds, color=entry.color, requires=requires)


class MethodTable(Mapping):
    """The learners of the study, keyed as in the paper: the exact learners, one linear SVM per
    registry map that has a ``classifier_kernel`` (so a map registered at run time appears), and
    sparse random features. Read-only; look-ups of unknown keys raise KeyError."""

    def _methods(self) -> dict[str, MethodEntry]:
        maps = [_map_method(e) for e in MAPS.values() if e.classifier_kernel is not None]
        return {m.key: m for m in (*_EXACT_METHODS, *maps, _SPARSE_RF)}

    def __getitem__(self, key: str) -> MethodEntry:
        return self._methods()[key]

    def __iter__(self):
        return iter(self._methods())

    def __len__(self) -> int:
        return len(self._methods())


METHODS = MethodTable()


def get_method(key: str) -> MethodEntry:
    """The accuracy study's method of that key; unknown keys raise ValueError.

    Parameters
    ----------
    key : str
        Method key.

    Returns
    -------
    MethodEntry
        The method.
    """
    try:
        return METHODS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown method {key!r}; allowed: {', '.join(map(repr, METHODS))}.") from None


#: The paper's learners (Figure 3), in its order: the accuracy study's default where they target the study kernel.
PAPER_METHODS = ("kernel_svm", "fm", "rk", "scrk")


def default_methods(kernel: KernelSpec) -> list[str]:
    """The paper's learners that target the study kernel itself (kernel_svm, fm, rk, scrk for ANOVA; kernel_svm
    and rk for the other itemset kernels): the accuracy study's methods when none are named.

    Parameters
    ----------
    kernel : KernelSpec
        The study kernel.

    Returns
    -------
    list of str
        Method keys, in :data:`PAPER_METHODS` order.
    """
    chosen = [get_method(k) for k in PAPER_METHODS]
    return [m.key for m in chosen if (not m.requires or kernel.name in m.requires) and m.kernel_of(kernel) == kernel]
