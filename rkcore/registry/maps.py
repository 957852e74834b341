"""The random feature maps of the registry: :class:`CostModel` (what a map's fit and transform do, in
units free of the machine), :class:`MapEntry` (one map, keyword-only), the built-in maps' builders, cost
models and entries in :data:`MAPS`, and the functions that look maps up, add them and build them
(:func:`make_map`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np
from sklearn.kernel_approximation import Nystroem, PolynomialCountSketch, RBFSampler

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

from ..base.validation import add_entry, check_int
from ..kernels.itemsets import ITEMSET_KERNELS
from ..maps.circulant import SignedCirculantRandomKernel
from ..maps.distributions import DISTRIBUTIONS, get_distribution
from ..maps.random_kernel import scratch_rows, weight_copies
from ..maps.maclaurin import RandomMaclaurin
from ..maps.random_kernel import RandomKernel
from ..maps.structured import FastFood, OrthogonalRandomFeatures, RandomFourierPairs, StructuredOrthogonalRandomFeatures
from .kernels import KERNELS, POLYNOMIAL_KERNELS, KernelEntry, KernelSpec, get_kernel, polynomial_of, same_kernel

#: A chart colour as the entries give it: "#rrggbb".
HEX_COLOR = re.compile(r"^#[0-9A-Fa-f]{6}$")


def _no_floats(n, d, D, m):
    """No transient floats (the default ``scratch_floats``): 0 for any (n, d, D, m).

    Parameters
    ----------
    n : int
        Rows.
    d : int
        Input features.
    D : int
        Random features.
    m : int
        Degree.

    Returns
    -------
    int
        Always 0.
    """
    return 0


@dataclass(frozen=True, kw_only=True)
class CostModel:  # numpydoc ignore=PR02
    """What fitting a map and transforming n rows with it does, in units free of the machine:
    :mod:`rkcore.studies.costs` prices them with the machine's rates (random numbers per second, GEMM flop/s,
    element-wise passes per second) and its bytes per float. Every callable takes numbers (or numpy
    arrays) and returns a number; m is the degree.

    Parameters
    ----------
    random_numbers : callable
        (d, D, m) -> numbers drawn by fit.
    gemm_flops : callable
        (n, d, D, m) -> flops of transform's matrix products.
    elements : callable
        (n, d, D, m) -> elements of transform's element-wise passes.
    stored_floats : callable
        (d, D, m) -> floats the fitted map keeps.
    scratch_floats : callable, optional
        (n, d, D, m) -> transient floats of transform; default 0.
    fit_seconds : callable or None, optional
        (n, d, D, m) -> rough seconds of a linear classifier fit.
    """

    random_numbers: Callable  # (d, D, m) -> numbers drawn by fit (the weights)
    gemm_flops: Callable  # (n, d, D, m) -> floating-point operations of transform's matrix products
    elements: Callable  # (n, d, D, m) -> elements of transform's element-wise passes
    stored_floats: Callable  # (d, D, m) -> floats the fitted map keeps
    scratch_floats: Callable = _no_floats  # (n, d, D, m) -> transient floats of transform beyond X and Z
    #: (n, d, D, m) -> rough seconds of one fit of a linear classifier on the map's features (the Classifiers
    #: page's estimate before a run); None: not priced, so the map cannot be offered to the accuracy study
    fit_seconds: Callable | None = None


@dataclass(frozen=True, kw_only=True)
class MapEntry:  # numpydoc ignore=PR02
    """One random feature map: what it approximates, what it costs, how to build it, how to draw it.

    Keyword-only: ``MapEntry(key="toy", label=..., ...)``. ``operations(d, D, m)`` is the per-sample
    operation count of ``transform`` without constants (it must match ``time_complexity``; the Timing
    page compares slopes). ``cost`` prices a run before it runs (:mod:`rkcore.studies.costs`).
    ``classifier_kernel`` maps a study kernel to the kernel a linear SVM on this map's features
    approximates in the accuracy study (None: the map is not offered there; otherwise ``cost.fit_seconds``
    is required). ``unbiased``: E[Z Zᵀ] is the kernel for every data set (the maps' unbiasedness tests
    iterate over these; Nystroem is data-dependent and is not).

    Parameters
    ----------
    key : str
        Registry key.
    label : str
        Full name.
    short_label : str
        Name in legends.
    kernels : tuple of str
        Kernel keys it approximates.
    distributions : tuple of str
        Weight distributions it accepts, the default first.
    time_complexity : str
        Per-sample time, LaTeX.
    memory_complexity : str
        Parameters stored, LaTeX.
    build : callable
        (spec, n_components, distribution, random_state) -> unfitted estimator.
    timing_kernel : str
        Kernel it is timed on.
    operations : callable
        (d, D, m) -> operations per sample.
    cost : CostModel
        What fit and transform cost.
    unbiased : bool
        E[Z Zᵀ] is the kernel for every data set.
    color : str
        Chart colour, "#rrggbb".
    classifier_kernel : callable or None, optional
        Study kernel -> kernel a linear SVM on it targets.
    reference : str, default ""
        Literature reference.
    notes : str, default ""
        Notes shown with the map.
    data_dependent : bool, default False
        Fitted on the data rather than drawn independently of it.
    """

    key: str
    label: str
    short_label: str
    kernels: tuple[str, ...]  # kernel keys it approximates
    distributions: tuple[str, ...]  # weight distributions it accepts (first = default)
    time_complexity: str  # LaTeX, per sample
    memory_complexity: str  # LaTeX, parameters stored
    build: Callable  # (spec, n_components, distribution, random_state) -> unfitted estimator
    timing_kernel: str  # the kernel it is timed on (the one the paper pairs it with)
    operations: Callable  # (d, D, m) -> operations per sample (numpy arrays in, array out)
    cost: CostModel
    unbiased: bool
    color: str  # "#rrggbb", the same on every chart
    classifier_kernel: Callable[[KernelSpec], KernelSpec] | None = None  # study KernelSpec -> KernelSpec a linear SVM on it targets
    reference: str = ""
    notes: str = field(default="", compare=False)
    #: fitted on the data (Nystroem samples training points) rather than drawn independently of it
    data_dependent: bool = False

    def __post_init__(self):
        unknown = [k for k in self.kernels if k not in KERNELS]
        if not self.kernels or unknown:
            raise ValueError(f"Map {self.key!r}: kernels must be keys of KERNELS; unknown: {unknown or 'none given'}.")
        if not self.distributions or any(d not in DISTRIBUTIONS for d in self.distributions):
            raise ValueError(f"Map {self.key!r}: distributions must be keys of DISTRIBUTIONS; got {self.distributions}.")
        if self.timing_kernel not in self.kernels:
            raise ValueError(f"Map {self.key!r}: timing_kernel {self.timing_kernel!r} is not one of its kernels.")
        if not HEX_COLOR.match(self.color):
            raise ValueError(f"Map {self.key!r}: color must be '#rrggbb', got {self.color!r}.")
        if not isinstance(self.cost, CostModel):
            raise ValueError(f"Map {self.key!r}: cost must be a CostModel, got {type(self.cost).__name__}.")
        if not isinstance(self.unbiased, bool):
            raise ValueError(f"Map {self.key!r}: unbiased must be True or False, got {self.unbiased!r}.")
        if self.classifier_kernel is not None and self.cost.fit_seconds is None:
            raise ValueError(f"Map {self.key!r} is offered to the accuracy study but its cost model has no "
                             "fit_seconds.")

    @property
    def takes_distribution(self) -> bool:
        """Whether the user picks its weight distribution (RK); the others draw their own.

        Returns
        -------
        bool
            True if the user picks its weight distribution.
        """
        return len(self.distributions) > 1

    def supports(self, spec: KernelSpec) -> bool:
        """Whether the map approximates this kernel.

        Parameters
        ----------
        spec : KernelSpec
            The kernel.

        Returns
        -------
        bool
            True if ``spec.name`` is one of :attr:`kernels`.
        """
        return spec.name in self.kernels


def _build_rk(spec, D, distribution, seed):
    return RandomKernel(n_components=D, kernel=spec.name, degree=spec.degree,
                        itemsets=list(spec.itemsets) if isinstance(spec.itemsets, tuple) else spec.itemsets,
                        distribution=distribution, random_state=seed)


def _build_scrk(spec, D, distribution, seed):
    return SignedCirculantRandomKernel(n_components=D, degree=spec.degree, random_state=seed)


def _build_rm(spec, D, distribution, seed):
    return RandomMaclaurin(n_components=D, degree=spec.degree, c=spec.coef0, random_state=seed)


def _build_ts(spec, D, distribution, seed):
    return PolynomialCountSketch(n_components=D, degree=spec.degree, gamma=1.0, coef0=spec.coef0, random_state=seed)


def _build_rff(spec, D, distribution, seed):
    return RBFSampler(n_components=D, gamma=spec.gamma, random_state=seed)


def _build_nystroem(spec, D, distribution, seed):
    if spec.entry.uses_gamma:
        return Nystroem(kernel="rbf", gamma=spec.gamma, n_components=D, random_state=seed)
    return Nystroem(kernel="polynomial", degree=spec.degree, gamma=1.0, coef0=spec.coef0, n_components=D,
                    random_state=seed)


def _build_rff_pairs(spec, D, distribution, seed):
    return RandomFourierPairs(n_components=D, gamma=spec.gamma, random_state=seed)


def _build_orf(spec, D, distribution, seed):
    return OrthogonalRandomFeatures(n_components=D, gamma=spec.gamma, random_state=seed)


def _build_sorf(spec, D, distribution, seed):
    return StructuredOrthogonalRandomFeatures(n_components=D, gamma=spec.gamma, random_state=seed)


def _build_fastfood(spec, D, distribution, seed):
    return FastFood(n_components=D, gamma=spec.gamma, random_state=seed)


def _log2(v):
    return np.log2(np.maximum(v, 2))


# The cost models' work counts: a map with weights draws d × D numbers (RK and RM one matrix per degree),
# transforms with one n × d × D product per degree and about m² + 2 element-wise passes over n × D; SCRK
# transforms with FFTs instead. The fit_seconds models: rough seconds of one fit (+ prediction) on the
# 2-core machine, one BLAS thread, fitted to runs on the built-in data (n_train = 100 ... 2000, d = 20,
# D = 40 ... 320) with about 2x headroom; only for the estimate shown before a run.
def _per_degree_products(n, d, D, m):
    return m * 2.0 * n * d * D


def _power_passes(n, d, D, m):
    return n * D * (m * m + 2)


def _weights(d, D, m):
    return d * D


def _weights_per_degree(d, D, m):
    return d * D * m


_RK_COST = CostModel(random_numbers=_weights_per_degree, gemm_flops=_per_degree_products, elements=_power_passes,
                     stored_floats=lambda d, D, m: weight_copies(m) * d * D,  # RandomKernel's own transform price
                     scratch_floats=lambda n, d, D, m: scratch_rows(m, n, D) * D,
                     fit_seconds=lambda n, d, D, m: 1e-7 * n * D * max(d / 20, 1) + 0.003)
_SCRK_COST = CostModel(random_numbers=_weights, gemm_flops=lambda n, d, D, m: 0.0,
                       elements=lambda n, d, D, m: n * D * m * (4 + 2 * _log2(d)), stored_floats=_weights,
                       fit_seconds=lambda n, d, D, m: 1.3e-7 * n * D * max(np.log2(d) / np.log2(20), 1) + 0.003)
_TS_COST = CostModel(random_numbers=_weights, gemm_flops=_per_degree_products, elements=_power_passes,
                     stored_floats=_weights, scratch_floats=lambda n, d, D, m: 2 * m * n * D,  # m complex FFTs
                     fit_seconds=lambda n, d, D, m: 1.2e-7 * n * D + 0.003)
_RM_COST = CostModel(random_numbers=_weights_per_degree, gemm_flops=_per_degree_products, elements=_power_passes,
                     stored_floats=_weights_per_degree,
                     fit_seconds=lambda n, d, D, m: 1e-7 * n * D * max(d / 20, 1) + 0.003)
_RFF_COST = CostModel(random_numbers=_weights, gemm_flops=_per_degree_products, elements=_power_passes,
                      stored_floats=_weights)
_NYSTROEM_COST = CostModel(random_numbers=_weights, gemm_flops=_per_degree_products, elements=_power_passes,
                           stored_floats=lambda d, D, m: d * D + D * D)  # the D × D normalization

# The Fourier maps of rkcore.maps.structured: D/2 frequencies (cos/sin pairs); ORF and the i.i.d. pairs one
# (n x d) @ (d x D/2) product; SORF three and FastFood two constant-radix Walsh-Hadamard transforms of the
# (n x p-padded) blocks (about 2 log2 p + 2 element passes each), then cos/sin and a scaling pass over n x D.
_FOURIER_GEMM_COST = CostModel(random_numbers=lambda d, D, m: d * D / 2 + D,
                               gemm_flops=lambda n, d, D, m: n * d * D, elements=lambda n, d, D, m: 4 * n * D,
                               stored_floats=lambda d, D, m: d * D / 2 + D)
_SORF_COST = CostModel(random_numbers=lambda d, D, m: 3 * D / 2 + D, gemm_flops=lambda n, d, D, m: 0.0,
                       elements=lambda n, d, D, m: n * D * (3 * (2 * _log2(d) + 2) / 2 + 4),
                       stored_floats=lambda d, D, m: 3 * D / 2 + D,
                       scratch_floats=lambda n, d, D, m: 2 * n * max(D / 2, 2 ** np.ceil(_log2(d))))
_FASTFOOD_COST = CostModel(random_numbers=lambda d, D, m: 2 * D + D, gemm_flops=lambda n, d, D, m: 0.0,
                           elements=lambda n, d, D, m: n * D * (2 * (2 * _log2(d) + 2) / 2 + 5),
                           stored_floats=lambda d, D, m: 2 * D + D,
                           scratch_floats=lambda n, d, D, m: 2 * n * max(D / 2, 2 ** np.ceil(_log2(d))))

MAPS: dict[str, MapEntry] = {
    e.key: e
    for e in (
        MapEntry(key="rk", label="Random Kernel (RK)", short_label="RK", kernels=ITEMSET_KERNELS,
                 distributions=tuple(DISTRIBUTIONS), time_complexity=r"O(D\,d\,m)", memory_complexity=r"O(D\,d)",
                 build=_build_rk, timing_kernel="anova", operations=lambda d, D, m: D * d * m, cost=_RK_COST,
                 unbiased=True, color="#0072B2", classifier_kernel=same_kernel,
                 reference="Atarashi, Maji & Oyama, AAAI-19, Algorithm 1"),
        MapEntry(key="scrk", label="Signed Circulant RK (SCRK)", short_label="SCRK", kernels=("anova",),
                 distributions=("rademacher",), time_complexity=r"O(m\,D \log d)", memory_complexity=r"O(D)",
                 build=_build_scrk, timing_kernel="anova", operations=lambda d, D, m: m * D * _log2(d),
                 cost=_SCRK_COST, unbiased=True, color="#E69F00", classifier_kernel=same_kernel,
                 reference="Atarashi, Maji & Oyama, AAAI-19, Section 4"),
        MapEntry(key="ts", label="Tensor Sketch (TS)", short_label="TS", kernels=POLYNOMIAL_KERNELS,
                 distributions=("rademacher",), time_complexity=r"O(m(d + D \log D))", memory_complexity=r"O(m\,d)",
                 build=_build_ts, timing_kernel="polynomial", operations=lambda d, D, m: m * (d + D * _log2(D)),
                 cost=_TS_COST, unbiased=True, color="#009E73", classifier_kernel=polynomial_of,
                 reference="Pham & Pagh, KDD 2013 (scikit-learn PolynomialCountSketch)"),
        MapEntry(key="rm", label="Random Maclaurin (RM)", short_label="RM", kernels=POLYNOMIAL_KERNELS,
                 distributions=("rademacher",), time_complexity=r"O(D\,d\,m)", memory_complexity=r"O(D\,d\,m)",
                 build=_build_rm, timing_kernel="polynomial", operations=lambda d, D, m: D * d * m,
                 cost=_RM_COST, unbiased=True, color="#D55E00", classifier_kernel=polynomial_of,
                 reference="Kar & Karnick, AISTATS 2012"),
        MapEntry(key="rff", label="Random Fourier features (RFF)", short_label="RFF", kernels=("rbf",),
                 distributions=("gaussian",), time_complexity=r"O(D\,d)", memory_complexity=r"O(D\,d)",
                 build=_build_rff, timing_kernel="rbf", operations=lambda d, D, m: D * d, cost=_RFF_COST,
                 unbiased=True, color="#CC79A7", reference="Rahimi & Recht, NIPS 2008 (scikit-learn RBFSampler)"),
        MapEntry(key="nystroem", label="Nystroem", short_label="Nystroem", kernels=POLYNOMIAL_KERNELS + ("rbf",),
                 distributions=("uniform",), time_complexity=r"O(D\,d + D^2)", memory_complexity=r"O(D\,d + D^2)",
                 build=_build_nystroem, timing_kernel="polynomial", operations=lambda d, D, m: D * d + D * D,
                 cost=_NYSTROEM_COST, unbiased=False, color="#56B4E9",
                 reference="Williams & Seeger, NIPS 2001 (scikit-learn Nystroem)",
                 notes="data-dependent: samples D training points; not an unbiased estimator", data_dependent=True),
        # Structured and orthogonal random Fourier features (rkcore.maps.structured): D // 2 frequencies give
        # cos/sin pairs, so the work is about half of RFF's D frequencies; Hadamard maps pad d to p = 2^ceil(log2 d)
        MapEntry(key="rff_pairs", label="Random Fourier features, cos/sin pairs", short_label="RFF (cos/sin)",
                 kernels=("rbf",), distributions=("gaussian",), time_complexity=r"O(D\,d)",
                 memory_complexity=r"O(D\,d)", build=_build_rff_pairs, timing_kernel="rbf",
                 operations=lambda d, D, m: D * d / 2, cost=_FOURIER_GEMM_COST, unbiased=True, color="#661100",
                 reference="Rahimi & Recht, NIPS 2007 (the cos/sin form; rkcore.maps.structured)"),
        MapEntry(key="orf", label="Orthogonal random features (ORF)", short_label="ORF", kernels=("rbf",),
                 distributions=("gaussian",), time_complexity=r"O(D\,d)", memory_complexity=r"O(D\,d)",
                 build=_build_orf, timing_kernel="rbf", operations=lambda d, D, m: D * d / 2,
                 cost=_FOURIER_GEMM_COST, unbiased=True, color="#882255",
                 reference="Yu, Suresh, Choromanski, Holtmann-Rice & Kumar, NIPS 2016"),
        MapEntry(key="sorf", label="Structured orthogonal random features (SORF)", short_label="SORF",
                 kernels=("rbf",), distributions=("rademacher",), time_complexity=r"O(D \log d)",
                 memory_complexity=r"O(D)", build=_build_sorf, timing_kernel="rbf",
                 operations=lambda d, D, m: 3 * D / 2 * _log2(d), cost=_SORF_COST, unbiased=False, color="#44AA99",
                 reference="Yu, Suresh, Choromanski, Holtmann-Rice & Kumar, NIPS 2016",
                 notes="biased: rows of norm sqrt(p) with nearly uniform directions; the bias is O(1/sqrt(d))"),
        MapEntry(key="fastfood", label="FastFood", short_label="FastFood", kernels=("rbf",),
                 distributions=("gaussian",), time_complexity=r"O(D \log d)", memory_complexity=r"O(D)",
                 build=_build_fastfood, timing_kernel="rbf", operations=lambda d, D, m: D * _log2(d),
                 cost=_FASTFOOD_COST, unbiased=True, color="#999933", reference="Le, Sarlos & Smola, ICML 2013"),
    )
}


def get_map(key: str) -> MapEntry:
    """The :class:`MapEntry` of a key, or a ValueError listing the keys.

    Parameters
    ----------
    key : str
        A key of :data:`MAPS`.

    Returns
    -------
    MapEntry
        Its entry.
    """
    try:
        return MAPS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown map {key!r}; allowed: {', '.join(map(repr, MAPS))}.") from None


def register_map(entry: MapEntry) -> MapEntry:
    """Add a map to :data:`MAPS` (at the end); every widget, engine and test that lists maps picks it up.

    Parameters
    ----------
    entry : MapEntry
        The new map; its key must not be registered yet.

    Returns
    -------
    MapEntry
        ``entry``.
    """
    return add_entry(MAPS, entry, MapEntry, "map", adder="register_map")


def unregister_map(key: str) -> MapEntry:
    """Remove a map added by :func:`register_map` (returns its entry).

    Parameters
    ----------
    key : str
        A key of :data:`MAPS`.

    Returns
    -------
    MapEntry
        The removed entry.
    """
    entry = get_map(key)
    del MAPS[key]
    return entry


def unregister_kernel(key: str) -> KernelEntry:
    """Remove a kernel added by :func:`register_kernel` (returns its entry); a map that still names it is refused.

    It lives beside the maps (not with :func:`register_kernel`): it reads :data:`MAPS`, and the kernels' module
    cannot import the maps' module, which imports it.

    Parameters
    ----------
    key : str
        A key of :data:`KERNELS`.

    Returns
    -------
    KernelEntry
        The removed entry.
    """
    entry = get_kernel(key)
    naming = maps_for(key)
    if naming:
        raise ValueError(f"Kernel {key!r} is still named by the map(s) {', '.join(map(repr, naming))}: "
                         "unregister them first.")
    del KERNELS[key]
    return entry


def maps_for(spec: KernelSpec | str) -> list[str]:
    """Keys of the maps that approximate this kernel (which maps can estimate a kernel of :data:`KERNELS`).

    Parameters
    ----------
    spec : KernelSpec or str
        The kernel, or its key.

    Returns
    -------
    list of str
        Map keys, in :data:`MAPS` order.
    """
    name = spec if isinstance(spec, str) else spec.name
    return [k for k, e in MAPS.items() if name in e.kernels]


def time_complexity_latex(map_keys=None) -> str:
    """The maps' per-sample time complexities as one formula, from their entries' ``time_complexity`` (the
    Timing page's formula): a map registered with one entry appears with no edit of the page.

    Parameters
    ----------
    map_keys : sequence of str, optional
        Keys of :data:`MAPS` (None: every registered map).

    Returns
    -------
    str
        LaTeX: ``\\text{RK: } O(D\\,d\\,m)\\qquad ...``.
    """
    entries = [get_map(k) for k in (MAPS if map_keys is None else map_keys)]
    return r"\qquad ".join(rf"\text{{{e.short_label}: }} {e.time_complexity}" for e in entries)


def make_map(key: str, spec: KernelSpec, n_components: int, distribution: str | None = None,
             random_state=None) -> BaseEstimator:
    """Build an unfitted map from (kernel spec, D, distribution, seed), checking compatibility.

    Parameters
    ----------
    key : str
        A key of :data:`MAPS`.
    spec : KernelSpec
        The kernel to approximate; the map must support it.
    n_components : int
        D, the number of random features.
    distribution : str, optional
        A weight distribution the map accepts (None: its default).
    random_state : int, optional
        Seed of the map.

    Returns
    -------
    estimator
        The unfitted scikit-learn transformer.
    """
    entry = get_map(key)
    if not entry.supports(spec):
        raise ValueError(
            f"{entry.label} does not approximate the {spec.label()} kernel; it supports: "
            f"{', '.join(KERNELS[k].label for k in entry.kernels)}."
        )
    distribution = distribution or entry.distributions[0]
    if entry.takes_distribution:
        get_distribution(distribution)  # unknown key -> "Unknown distribution ..., allowed: ..."
    if distribution not in entry.distributions:
        raise ValueError(
            f"{entry.label} draws its own randomness ({entry.distributions[0]}); "
            f"distribution={distribution!r} is not allowed for it (allowed: {', '.join(entry.distributions)})."
        )
    n_components = check_int(n_components, "n_components (D)")
    return entry.build(spec, n_components, distribution, random_state)
