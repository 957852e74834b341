"""The one table of names: kernels and random feature maps.

The dashboard's widgets list these entries, URLs store their keys, the engines
build from them and the tests iterate over them. Adding a map is one entry in
:data:`MAPS`. Distributions live in :mod:`rkcore.distributions` and itemset
families in :mod:`rkcore.itemsets`; both are re-exported here.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from importlib import import_module
from typing import Callable

import numpy as np
from sklearn.kernel_approximation import Nystroem, PolynomialCountSketch, RBFSampler
from sklearn.metrics.pairwise import rbf_kernel

from . import kernels as K
from .distributions import DISTRIBUTIONS, get_distribution  # noqa: F401  (re-export)
from .itemsets import ItemsetFamily, family_from_spec

ITEMSET_KERNELS = ("anova", "all_subsets", "dot", "up_to", "itemset")


# ---------------------------------------------------------------------------- kernels
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

    def family(self, d: int) -> ItemsetFamily | None:
        """The itemset family S over d features, or None for non-itemset kernels."""
        if self.name not in ITEMSET_KERNELS:
            return None
        return family_from_spec(self.name, d, self.degree, self.itemsets)

    def exact(self, X, Y=None) -> np.ndarray:
        """The exact Gram matrix K(X, Y)."""
        return self.entry.exact(X, Y, self)

    def label(self) -> str:
        e = self.entry
        return f"{e.label} (m={self.degree})" if e.uses_degree else e.label

    def latex(self) -> str:
        return self.entry.latex.replace("{m}", str(self.degree))

    def with_(self, **changes) -> "KernelSpec":
        return replace(self, **changes)


@dataclass(frozen=True)
class KernelEntry:
    key: str
    label: str
    latex: str
    uses_degree: bool
    exact: Callable  # (X, Y, spec) -> Gram


def _family_exact(X, Y, spec: KernelSpec) -> np.ndarray:
    X = K.check_array(X)
    return K.itemset_kernel(X, Y, family=spec.family(X.shape[1]))


def _rbf_exact(X, Y, spec: KernelSpec) -> np.ndarray:
    X = K.check_array(X)
    return rbf_kernel(X, None if Y is None else K.check_array(Y, "Y"), gamma=spec.gamma)


KERNELS: dict[str, KernelEntry] = {
    e.key: e
    for e in (
        KernelEntry("anova", "ANOVA", r"K_A^{m}(\mathbf{x},\mathbf{y}) = \sum_{j_1<\dots<j_{m}} \prod_{k=1}^{m} x_{j_k} y_{j_k}", True, _family_exact),
        KernelEntry("all_subsets", "All-subsets", r"K_{\mathrm{all}}(\mathbf{x},\mathbf{y}) = \prod_{j=1}^{d}(1 + x_j y_j)", False, _family_exact),
        KernelEntry("dot", "Dot product", r"K(\mathbf{x},\mathbf{y}) = \langle\mathbf{x},\mathbf{y}\rangle", False, _family_exact),
        KernelEntry("up_to", "Itemsets up to size m", r"K(\mathbf{x},\mathbf{y}) = \sum_{k=0}^{m} K_A^{k}(\mathbf{x},\mathbf{y})", True, _family_exact),
        KernelEntry("itemset", "Custom itemset family", r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y}) = \sum_{V\in\mathcal{S}}\prod_{j\in V} x_j y_j", False, _family_exact),
        KernelEntry("polynomial", "Polynomial", r"K_P^{m}(\mathbf{x},\mathbf{y}; c) = (c + \langle\mathbf{x},\mathbf{y}\rangle)^{m}", True,
                    lambda X, Y, s: K.polynomial_kernel(X, Y, s.degree, s.c)),
        KernelEntry("homogeneous_polynomial", "Homogeneous polynomial", r"K_{HP}^{m}(\mathbf{x},\mathbf{y}) = \langle\mathbf{x},\mathbf{y}\rangle^{m}", True,
                    lambda X, Y, s: K.polynomial_kernel(X, Y, s.degree, 0.0)),
        KernelEntry("rbf", "Gaussian (RBF)", r"K(\mathbf{x},\mathbf{y}) = \exp(-\gamma\|\mathbf{x}-\mathbf{y}\|^2)", False, _rbf_exact),
    )
}


# ---------------------------------------------------------------------------- maps
@dataclass(frozen=True)
class MapEntry:
    """One random feature map: what it approximates, what it costs, how to build it."""

    key: str
    label: str
    kernels: tuple[str, ...]  # kernel keys it approximates without bias
    distributions: tuple[str, ...]  # weight distributions it accepts (first = default)
    time_complexity: str  # LaTeX, per sample
    memory_complexity: str  # LaTeX, parameters stored
    build: Callable  # (spec, n_components, distribution, random_state) -> unfitted estimator
    reference: str = ""
    notes: str = field(default="", compare=False)

    def supports(self, spec: KernelSpec) -> bool:
        if spec.name not in self.kernels:
            return False
        if self.key == "scrk":  # signed circulant trick exists for the ANOVA kernel only
            return spec.name == "anova"
        return True


def _lazy(module: str, name: str):
    """Import a class on first use, so optional modules do not slow `import rkcore`."""
    return getattr(import_module(module, __package__), name)


def _build_rk(spec, D, distribution, seed):
    return _lazy(".maps", "RandomKernel")(
        n_components=D, kernel=spec.name, degree=spec.degree,
        itemsets=list(spec.itemsets) if isinstance(spec.itemsets, tuple) else spec.itemsets,
        distribution=distribution, random_state=seed)


def _build_scrk(spec, D, distribution, seed):
    return _lazy(".circulant", "SignedCirculantRandomKernel")(n_components=D, degree=spec.degree, random_state=seed)


def _build_rm(spec, D, distribution, seed):
    c = 0.0 if spec.name == "homogeneous_polynomial" else spec.c
    return _lazy(".maclaurin", "RandomMaclaurin")(n_components=D, degree=spec.degree, c=c, random_state=seed)


def _build_ts(spec, D, distribution, seed):
    c = 0.0 if spec.name == "homogeneous_polynomial" else spec.c
    return PolynomialCountSketch(n_components=D, degree=spec.degree, gamma=1.0, coef0=c, random_state=seed)


def _build_rff(spec, D, distribution, seed):
    return RBFSampler(n_components=D, gamma=spec.gamma, random_state=seed)


def _build_nystroem(spec, D, distribution, seed):
    if spec.name == "rbf":
        return Nystroem(kernel="rbf", gamma=spec.gamma, n_components=D, random_state=seed)
    c = 0.0 if spec.name == "homogeneous_polynomial" else spec.c
    return Nystroem(kernel="polynomial", degree=spec.degree, gamma=1.0, coef0=c, n_components=D, random_state=seed)


_ALL_DISTRIBUTIONS = tuple(DISTRIBUTIONS)
_POLY = ("polynomial", "homogeneous_polynomial")

MAPS: dict[str, MapEntry] = {
    e.key: e
    for e in (
        MapEntry("rk", "Random Kernel (RK)", ITEMSET_KERNELS, _ALL_DISTRIBUTIONS,
                 r"O(D\,d\,m)", r"O(D\,d)", _build_rk, "Atarashi, Maji & Oyama, AAAI-19, Algorithm 1"),
        MapEntry("scrk", "Signed Circulant RK (SCRK)", ("anova",), ("rademacher",),
                 r"O(m\,D \log d)", r"O(D)", _build_scrk, "Atarashi, Maji & Oyama, AAAI-19, Section 4"),
        MapEntry("ts", "Tensor Sketch (TS)", _POLY, ("rademacher",),
                 r"O(m(d + D \log D))", r"O(m\,d)", _build_ts, "Pham & Pagh, KDD 2013 (scikit-learn PolynomialCountSketch)"),
        MapEntry("rm", "Random Maclaurin (RM)", _POLY, ("rademacher",),
                 r"O(D\,d\,m)", r"O(D\,d\,m)", _build_rm, "Kar & Karnick, AISTATS 2012"),
        MapEntry("rff", "Random Fourier features (RFF)", ("rbf",), ("gaussian",),
                 r"O(D\,d)", r"O(D\,d)", _build_rff, "Rahimi & Recht, NIPS 2008 (scikit-learn RBFSampler)"),
        MapEntry("nystroem", "Nystroem", _POLY + ("rbf",), ("uniform",),
                 r"O(D\,d + D^2)", r"O(D\,d + D^2)", _build_nystroem,
                 "Williams & Seeger, NIPS 2001 (scikit-learn Nystroem)",
                 "data-dependent: samples D training points; not an unbiased estimator"),
    )
}


def get_map(key: str) -> MapEntry:
    try:
        return MAPS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown map {key!r}; allowed: {', '.join(map(repr, MAPS))}.") from None


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
    if key == "rk":
        get_distribution(distribution)
    elif distribution not in entry.distributions:
        raise ValueError(
            f"{entry.label} draws its own randomness ({entry.distributions[0]}); "
            f"distribution={distribution!r} is not allowed for it (allowed: {', '.join(entry.distributions)})."
        )
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
        raise ValueError(f"n_components (D) must be an integer >= 1, got {n_components!r}.")
    return entry.build(spec, int(n_components), distribution, random_state)
