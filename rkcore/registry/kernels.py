"""The kernels of the registry: :class:`KernelSpec` (what to approximate), the :data:`KERNELS` table of
:class:`KernelEntry` (names, formula, exact Gram matrix) and the kernel a learner targets given the study
kernel (:func:`same_kernel`, :func:`polynomial_of`, :func:`anova_of`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
from sklearn.metrics.pairwise import rbf_kernel

from ..kernels import exact as K
from ..kernels.itemsets import ITEMSET_KERNELS, ItemsetFamily, check_degree_fits, family_from_spec
from ..base.validation import entry_of


def latex_with_degree(latex: str, degree: int) -> str:
    """The formula with its symbolic degree ``{m}`` replaced by a number, kept in braces so that
    m = 20 renders K^{20}, not K^2 0.

    Parameters
    ----------
    latex : str
        A formula of :data:`KERNELS` (``{m}`` stands for the degree).
    degree : int
        The order m filled in.

    Returns
    -------
    str
        The formula with the number in braces.
    """
    return latex.replace("{m}", "{" + str(int(degree)) + "}")


@dataclass(frozen=True)
class KernelSpec:
    """What to approximate: a kernel key from :data:`KERNELS` plus its parameters.

    ``degree`` is the order m (ANOVA, up-to, polynomial); ``itemsets`` the family for
    ``name="itemset"`` (an ItemsetFamily or a tuple of index tuples); ``c`` the offset
    of the polynomial kernel (c + <x, y>)^m; ``gamma`` the RBF width exp(-gamma ||x-y||^2).

    Parameters
    ----------
    name : str, default="anova"
        A key of :data:`KERNELS`.
    degree : int, default=2
        The order m (ANOVA, up-to, polynomial); at least 1 (0 allowed for up-to).
    itemsets : ItemsetFamily or tuple of tuple of int, optional
        The family S for ``name="itemset"``.
    c : float, default=1.0
        Offset of the polynomial kernel (c + <x, y>)^m.
    gamma : float, default=1.0
        Width of the RBF kernel exp(-gamma ||x - y||^2), finite and > 0.
    """

    name: str = "anova"
    degree: int = 2
    itemsets: object = None
    c: float = 1.0
    gamma: float = 1.0

    def __post_init__(self):
        entry_of(KERNELS, self.name, "kernel")  # unknown or unhashable (a list): the allowed names
        low = 0 if self.name == "up_to" else 1
        if not K.is_integer(self.degree) or self.degree < low:
            raise ValueError(f"degree={self.degree!r} is not allowed: the order must be an integer >= {low}.")
        if self.name in ("polynomial", "homogeneous_polynomial"):
            K.check_polynomial_parameters(self.degree, self.c)
        g = self.gamma
        if isinstance(g, (bool, np.bool_)) or not isinstance(g, (int, float, np.integer, np.floating)) \
                or not np.isfinite(g) or g <= 0:
            raise ValueError(f"gamma={g!r} is not allowed: the RBF width must be a finite number > 0.")
        if isinstance(self.itemsets, (list, tuple)):  # keep the spec hashable (st.cache_data, URLs)
            for v in self.itemsets:  # tuple() of a dict keeps its keys, of a str its characters: refuse both
                if isinstance(v, (Mapping, str, bytes)) or not isinstance(v, Iterable):
                    raise ValueError(f"itemsets must be sequences of feature indices; got {v!r} "
                                     f"({type(v).__name__}).")
            object.__setattr__(self, "itemsets", tuple(tuple(v) for v in self.itemsets))

    @property
    def entry(self) -> "KernelEntry":
        """The kernel's :class:`KernelEntry` in :data:`KERNELS`.
        """
        return KERNELS[self.name]

    @property
    def coef0(self) -> float:
        """The offset c of (c + <x, y>)^m as the maps take it: 0 for the homogeneous polynomial."""
        return 0.0 if self.entry.homogeneous else float(self.c)

    @property
    def is_itemset(self) -> bool:
        """Whether the kernel is an itemset kernel K_S (it has a family S).
        """
        return self.name in ITEMSET_KERNELS

    def family(self, d: int) -> ItemsetFamily | None:
        """The itemset family S over d features, or None for non-itemset kernels.

        Parameters
        ----------
        d : int
            Number of features.

        Returns
        -------
        ItemsetFamily or None
            The family S (None for the polynomial and RBF kernels).
        """
        if not self.is_itemset:
            return None
        return family_from_spec(self.name, d, self.degree, self.itemsets)

    def check_fits(self, d: int, who: str | None = None) -> None:
        """Refuse an ANOVA / up-to kernel of order m > d (see :func:`rkcore.kernels.itemsets.check_degree_fits`).

        Parameters
        ----------
        d : int
            Number of features.
        who : str, optional
            What asks, for the message.
        """
        check_degree_fits(self.name, self.degree, d, who)

    def exact(self, X, Y=None) -> np.ndarray:
        """The exact Gram matrix K(X, Y).

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Left rows.
        Y : array-like of shape (n_samples_Y, n_features), optional
            Right rows (None: X).

        Returns
        -------
        numpy.ndarray of shape (n_samples_X, n_samples_Y)
            The Gram matrix.
        """
        return self.entry.exact(X, Y, self)

    def label(self) -> str:
        """The kernel's name with its degree, e.g. ``"ANOVA (m=2)"``.

        Returns
        -------
        str
            The label.
        """
        e = self.entry
        return f"{e.label} (m={self.degree})" if e.uses_degree else e.label

    def latex(self) -> str:
        """The kernel's formula with its degree filled in.

        Returns
        -------
        str
            LaTeX.
        """
        return latex_with_degree(self.entry.latex, self.degree)

    def with_(self, **changes) -> "KernelSpec":
        """A copy with some fields changed (the spec is frozen).

        Parameters
        ----------
        **changes
            Field names and their new values.

        Returns
        -------
        KernelSpec
            The new spec (validated again).
        """
        return replace(self, **changes)


@dataclass(frozen=True)
class KernelEntry:
    """One kernel of :data:`KERNELS`: its names, its formula and its exact Gram matrix.

    Parameters
    ----------
    key : str
        The kernel's key (URL value, ``KernelSpec.name``).
    label : str
        Its name in the dashboard.
    latex : str
        Its formula; ``{m}`` stands for the degree.
    uses_degree : bool
        Whether the degree m is a parameter of the kernel.
    exact : callable
        ``exact(X, Y, spec)`` -> the exact Gram matrix.
    homogeneous : bool, default=False
        A polynomial without offset: ``c`` is ignored (taken as 0).
    """
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
    """The :class:`KernelEntry` of a key, or a ValueError listing the keys.

    Parameters
    ----------
    key : str
        A key of :data:`KERNELS`.

    Returns
    -------
    KernelEntry
        Its entry.
    """
    try:
        return KERNELS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown kernel {key!r}; allowed: {', '.join(map(repr, KERNELS))}.") from None


# Which kernel a learner on a map (or an exact learner) targets, given the study kernel.
def same_kernel(spec: KernelSpec) -> KernelSpec:
    """The study kernel itself (what RK, SCRK and the exact learners target).

    Parameters
    ----------
    spec : KernelSpec
        The study kernel.

    Returns
    -------
    KernelSpec
        ``spec``.
    """
    return spec


def polynomial_of(spec: KernelSpec) -> KernelSpec:
    """The polynomial kernel (1 + <x, y>)^m of the study kernel's degree (the paper's Figure 3).

    Parameters
    ----------
    spec : KernelSpec
        The study kernel.

    Returns
    -------
    KernelSpec
        The polynomial kernel of order ``spec.degree``.
    """
    return KernelSpec("polynomial", degree=spec.degree)


def anova_of(spec: KernelSpec) -> KernelSpec:
    """The ANOVA kernel of the study kernel's degree (what the FM targets).

    Parameters
    ----------
    spec : KernelSpec
        The study kernel.

    Returns
    -------
    KernelSpec
        ANOVA of order ``spec.degree``.
    """
    return KernelSpec("anova", degree=spec.degree)
