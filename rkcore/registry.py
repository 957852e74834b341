"""The one table of names: kernels and random feature maps.

The dashboard's widgets list these entries, URLs store their keys, the engines build
from them and the tests iterate over them. A map is one :class:`MapEntry` carrying
everything the app and the engines need: labels, the kernels and distributions it
accepts, its complexity, the kernel it is timed on and its operation count (timing
engine), whether and how a linear classifier uses it with its cost model (accuracy
engine), and its colour. A missing field is an error when the entry is made, never a
silent fallback to another map's numbers. :func:`register_map` adds an entry at run
time (tests do this with a toy map).

Distributions live in :mod:`rkcore.maps.distributions` and the itemset-kernel vocabulary
(which kernel keys are itemset kernels, which need m <= d) in :mod:`rkcore.kernels.itemsets`;
both are re-exported here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
from sklearn.kernel_approximation import Nystroem, PolynomialCountSketch, RBFSampler
from sklearn.metrics.pairwise import rbf_kernel

from .kernels import exact as K
from .maps.circulant import SignedCirculantRandomKernel
from .maps.distributions import DISTRIBUTIONS, get_distribution
from .kernels.itemsets import ITEMSET_KERNELS, ORDERED_KERNELS, ItemsetFamily, check_degree_fits, family_from_spec
from .maps.maclaurin import RandomMaclaurin
from .maps.random_kernel import RandomKernel
from .base.validation import check_int

__all__ = [
    "DISTRIBUTIONS", "ITEMSET_KERNELS", "ORDERED_KERNELS", "KERNELS", "MAPS", "KernelEntry", "KernelSpec",
    "MapEntry", "check_degree_fits", "get_distribution", "get_kernel", "get_map", "make_map", "maps_for",
    "register_map", "unregister_map", "same_kernel", "polynomial_of", "anova_of",
]

_HEX_COLOR = re.compile(r"^#[0-9A-Fa-f]{6}$")


# ---------------------------------------------------------------------------- kernels
def latex_with_degree(latex: str, degree: int) -> str:
    """The formula with its symbolic degree ``{m}`` replaced by a number, kept in braces so that
    m = 20 renders K^{20}, not K^2 0."""
    return latex.replace("{m}", "{" + str(int(degree)) + "}")


@dataclass(frozen=True)
class KernelSpec:
    """What to approximate: a kernel key from :data:`KERNELS` plus its parameters.

    ``degree`` is the order m (ANOVA, up-to, polynomial); ``itemsets`` the family for
    ``name="itemset"`` (an ItemsetFamily or a tuple of index tuples); ``c`` the offset
    of the polynomial kernel (c + <x, y>)^m; ``gamma`` the RBF width exp(-gamma ||x-y||^2).
    """

    name: str = "anova"
    degree: int = 2
    itemsets: object = None
    c: float = 1.0
    gamma: float = 1.0

    def __post_init__(self):
        if self.name not in KERNELS:
            raise ValueError(f"Unknown kernel {self.name!r}; allowed: {', '.join(map(repr, KERNELS))}.")
        low = 0 if self.name == "up_to" else 1
        if not K.is_integer(self.degree) or self.degree < low:
            raise ValueError(f"degree={self.degree!r} is not allowed: the order must be an integer >= {low}.")
        if self.name in ("polynomial", "homogeneous_polynomial"):
            K.check_polynomial_parameters(self.degree, self.c)
        g = self.gamma
        if isinstance(g, (bool, np.bool_)) or not isinstance(g, (int, float, np.integer, np.floating)) \
                or not np.isfinite(g) or g <= 0:
            raise ValueError(f"gamma={g!r} is not allowed: the RBF width must be a finite number > 0.")
        if isinstance(self.itemsets, list):  # keep the spec hashable (st.cache_data, URLs)
            object.__setattr__(self, "itemsets", tuple(tuple(v) for v in self.itemsets))

    @property
    def entry(self) -> "KernelEntry":
        return KERNELS[self.name]

    @property
    def coef0(self) -> float:
        """The offset c of (c + <x, y>)^m as the maps take it: 0 for the homogeneous polynomial."""
        return 0.0 if self.entry.homogeneous else float(self.c)

    @property
    def is_itemset(self) -> bool:
        return self.name in ITEMSET_KERNELS

    def family(self, d: int) -> ItemsetFamily | None:
        """The itemset family S over d features, or None for non-itemset kernels."""
        if not self.is_itemset:
            return None
        return family_from_spec(self.name, d, self.degree, self.itemsets)

    def check_fits(self, d: int, who: str | None = None) -> None:
        """Refuse an ANOVA / up-to kernel of order m > d (see :func:`rkcore.kernels.itemsets.check_degree_fits`)."""
        check_degree_fits(self.name, self.degree, d, who)

    def exact(self, X, Y=None) -> np.ndarray:
        """The exact Gram matrix K(X, Y)."""
        return self.entry.exact(X, Y, self)

    def label(self) -> str:
        e = self.entry
        return f"{e.label} (m={self.degree})" if e.uses_degree else e.label

    def latex(self) -> str:
        return latex_with_degree(self.entry.latex, self.degree)

    def with_(self, **changes) -> "KernelSpec":
        return replace(self, **changes)


@dataclass(frozen=True)
class KernelEntry:
    key: str
    label: str
    latex: str
    uses_degree: bool
    exact: Callable  # (X, Y, spec) -> Gram
    homogeneous: bool = False  # polynomial without offset: c is ignored (taken as 0)


def _family_exact(X, Y, spec: KernelSpec) -> np.ndarray:
    X = K.check_array(X)
    return K.itemset_kernel(X, Y, family=spec.family(X.shape[1]))


def _rbf_exact(X, Y, spec: KernelSpec) -> np.ndarray:
    X = K.check_array(X)
    return rbf_kernel(X, None if Y is None else K.check_array(Y, "Y"), gamma=spec.gamma)


def _polynomial_exact(X, Y, spec: KernelSpec) -> np.ndarray:
    return K.polynomial_kernel(X, Y, spec.degree, spec.coef0)


KERNELS: dict[str, KernelEntry] = {
    e.key: e
    for e in (
        KernelEntry("anova", "ANOVA", r"K_A^{m}(\mathbf{x},\mathbf{y}) = \sum_{j_1<\dots<j_{m}} \prod_{k=1}^{m} x_{j_k} y_{j_k}", True, _family_exact),
        KernelEntry("all_subsets", "All-subsets", r"K_{\mathrm{all}}(\mathbf{x},\mathbf{y}) = \prod_{j=1}^{d}(1 + x_j y_j)", False, _family_exact),
        KernelEntry("dot", "Dot product", r"K(\mathbf{x},\mathbf{y}) = \langle\mathbf{x},\mathbf{y}\rangle", False, _family_exact),
        KernelEntry("up_to", "Itemsets up to size m", r"K(\mathbf{x},\mathbf{y}) = \sum_{k=0}^{m} K_A^{k}(\mathbf{x},\mathbf{y})", True, _family_exact),
        KernelEntry("itemset", "Custom itemset family", r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y}) = \sum_{V\in\mathcal{S}}\prod_{j\in V} x_j y_j", False, _family_exact),
        KernelEntry("polynomial", "Polynomial", r"K_P^{m}(\mathbf{x},\mathbf{y}; c) = (c + \langle\mathbf{x},\mathbf{y}\rangle)^{m}", True,
                    _polynomial_exact),
        KernelEntry("homogeneous_polynomial", "Homogeneous polynomial", r"K_{HP}^{m}(\mathbf{x},\mathbf{y}) = \langle\mathbf{x},\mathbf{y}\rangle^{m}", True,
                    _polynomial_exact, homogeneous=True),
        KernelEntry("rbf", "Gaussian (RBF)", r"K(\mathbf{x},\mathbf{y}) = \exp(-\gamma\|\mathbf{x}-\mathbf{y}\|^2)", False, _rbf_exact),
    )
}
POLYNOMIAL_KERNELS = ("polynomial", "homogeneous_polynomial")


def get_kernel(key: str) -> KernelEntry:
    try:
        return KERNELS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown kernel {key!r}; allowed: {', '.join(map(repr, KERNELS))}.") from None


# Which kernel a learner on a map (or an exact learner) targets, given the study kernel.
def same_kernel(spec: KernelSpec) -> KernelSpec:
    return spec


def polynomial_of(spec: KernelSpec) -> KernelSpec:
    """The polynomial kernel (1 + <x, y>)^m of the study kernel's degree (the paper's Figure 3)."""
    return KernelSpec("polynomial", degree=spec.degree)


def anova_of(spec: KernelSpec) -> KernelSpec:
    return KernelSpec("anova", degree=spec.degree)


# ---------------------------------------------------------------------------- maps
@dataclass(frozen=True)
class MapEntry:
    """One random feature map: what it approximates, what it costs, how to build it, how to draw it.

    ``operations(d, D, m)`` is the per-sample operation count of ``transform`` without
    constants (it must match ``time_complexity``; the Timing page compares slopes).
    ``classifier_kernel`` maps a study kernel to the kernel a linear SVM on this map's
    features approximates in the accuracy study (None: the map is not offered there);
    ``fit_seconds(n, d, D, m)`` then estimates one fit + predict in seconds (the
    Classifiers page's estimate before a run).
    """

    key: str
    label: str
    short_label: str
    kernels: tuple[str, ...]  # kernel keys it approximates without bias
    distributions: tuple[str, ...]  # weight distributions it accepts (first = default)
    time_complexity: str  # LaTeX, per sample
    memory_complexity: str  # LaTeX, parameters stored
    build: Callable  # (spec, n_components, distribution, random_state) -> unfitted estimator
    timing_kernel: str  # the kernel it is timed on (the one the paper pairs it with)
    operations: Callable  # (d, D, m) -> operations per sample (numpy arrays in, array out)
    color: str  # "#rrggbb", the same on every chart
    classifier_kernel: Callable | None = None  # study KernelSpec -> KernelSpec a linear SVM on it targets
    fit_seconds: Callable | None = None  # (n, d, D, m) -> rough seconds of one classifier fit
    reference: str = ""
    notes: str = field(default="", compare=False)

    def __post_init__(self):
        unknown = [k for k in self.kernels if k not in KERNELS]
        if not self.kernels or unknown:
            raise ValueError(f"Map {self.key!r}: kernels must be keys of KERNELS; unknown: {unknown or 'none given'}.")
        if not self.distributions or any(d not in DISTRIBUTIONS for d in self.distributions):
            raise ValueError(f"Map {self.key!r}: distributions must be keys of DISTRIBUTIONS; got {self.distributions}.")
        if self.timing_kernel not in self.kernels:
            raise ValueError(f"Map {self.key!r}: timing_kernel {self.timing_kernel!r} is not one of its kernels.")
        if not _HEX_COLOR.match(self.color):
            raise ValueError(f"Map {self.key!r}: color must be '#rrggbb', got {self.color!r}.")
        if self.classifier_kernel is not None and self.fit_seconds is None:
            raise ValueError(f"Map {self.key!r} is offered to the accuracy study but has no fit_seconds cost model.")

    @property
    def takes_distribution(self) -> bool:
        """Whether the user picks its weight distribution (RK); the others draw their own."""
        return len(self.distributions) > 1

    def supports(self, spec: KernelSpec) -> bool:
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
    if spec.name == "rbf":
        return Nystroem(kernel="rbf", gamma=spec.gamma, n_components=D, random_state=seed)
    return Nystroem(kernel="polynomial", degree=spec.degree, gamma=1.0, coef0=spec.coef0, n_components=D,
                    random_state=seed)


def _log2(v):
    return np.log2(np.maximum(v, 2))


# The fit_seconds models: rough seconds of one fit (+ prediction) on the 2-core machine, one BLAS
# thread, fitted to runs on the built-in data (n_train = 100 ... 2000, d = 20, D = 40 ... 320) with
# about 2x headroom; only for the estimate shown before a run.
MAPS: dict[str, MapEntry] = {
    e.key: e
    for e in (
        MapEntry("rk", "Random Kernel (RK)", "RK", ITEMSET_KERNELS, tuple(DISTRIBUTIONS),
                 r"O(D\,d\,m)", r"O(D\,d)", _build_rk, "anova", lambda d, D, m: D * d * m, "#0072B2",
                 same_kernel, lambda n, d, D, m: 1e-7 * n * D * max(d / 20, 1) + 0.003,
                 "Atarashi, Maji & Oyama, AAAI-19, Algorithm 1"),
        MapEntry("scrk", "Signed Circulant RK (SCRK)", "SCRK", ("anova",), ("rademacher",),
                 r"O(m\,D \log d)", r"O(D)", _build_scrk, "anova", lambda d, D, m: m * D * _log2(d), "#E69F00",
                 same_kernel, lambda n, d, D, m: 1.3e-7 * n * D * max(np.log2(d) / np.log2(20), 1) + 0.003,  # FFTs
                 "Atarashi, Maji & Oyama, AAAI-19, Section 4"),
        MapEntry("ts", "Tensor Sketch (TS)", "TS", POLYNOMIAL_KERNELS, ("rademacher",),
                 r"O(m(d + D \log D))", r"O(m\,d)", _build_ts, "polynomial",
                 lambda d, D, m: m * (d + D * _log2(D)), "#009E73",
                 polynomial_of, lambda n, d, D, m: 1.2e-7 * n * D + 0.003,
                 "Pham & Pagh, KDD 2013 (scikit-learn PolynomialCountSketch)"),
        MapEntry("rm", "Random Maclaurin (RM)", "RM", POLYNOMIAL_KERNELS, ("rademacher",),
                 r"O(D\,d\,m)", r"O(D\,d\,m)", _build_rm, "polynomial", lambda d, D, m: D * d * m, "#D55E00",
                 polynomial_of, lambda n, d, D, m: 1e-7 * n * D * max(d / 20, 1) + 0.003,
                 "Kar & Karnick, AISTATS 2012"),
        MapEntry("rff", "Random Fourier features (RFF)", "RFF", ("rbf",), ("gaussian",),
                 r"O(D\,d)", r"O(D\,d)", _build_rff, "rbf", lambda d, D, m: D * d, "#CC79A7",
                 reference="Rahimi & Recht, NIPS 2008 (scikit-learn RBFSampler)"),
        MapEntry("nystroem", "Nystroem", "Nystroem", POLYNOMIAL_KERNELS + ("rbf",), ("uniform",),
                 r"O(D\,d + D^2)", r"O(D\,d + D^2)", _build_nystroem, "polynomial",
                 lambda d, D, m: D * d + D * D, "#56B4E9",
                 reference="Williams & Seeger, NIPS 2001 (scikit-learn Nystroem)",
                 notes="data-dependent: samples D training points; not an unbiased estimator"),
    )
}


def get_map(key: str) -> MapEntry:
    try:
        return MAPS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown map {key!r}; allowed: {', '.join(map(repr, MAPS))}.") from None


def register_map(entry: MapEntry) -> MapEntry:
    """Add a map to :data:`MAPS` (at the end); every widget, engine and test that lists maps picks it up."""
    if not isinstance(entry, MapEntry):
        raise ValueError(f"register_map takes a MapEntry, got {type(entry).__name__}.")
    if entry.key in MAPS:
        raise ValueError(f"A map with key {entry.key!r} is already registered.")
    MAPS[entry.key] = entry
    return entry


def unregister_map(key: str) -> MapEntry:
    """Remove a map added by :func:`register_map` (returns its entry)."""
    entry = get_map(key)
    del MAPS[key]
    return entry


def maps_for(spec: KernelSpec) -> list[str]:
    """Keys of the maps that approximate this kernel."""
    return [k for k, e in MAPS.items() if e.supports(spec)]


def make_map(key: str, spec: KernelSpec, n_components: int, distribution: str | None = None,
             random_state=None):
    """Build an unfitted map from (kernel spec, D, distribution, seed), checking compatibility."""
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
