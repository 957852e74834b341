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
from ..kernels.itemsets import FAMILY_KINDS, ORDERED_KERNELS, ItemsetFamily, check_degree_fits, family_from_spec
from ..base.validation import add_entry, entry_of, is_int


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
class KernelSpec:  # numpydoc ignore=PR02
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
        entry = entry_of(KERNELS, self.name, "kernel")  # unknown or unhashable (a list): the allowed names
        low = entry.min_degree
        if not is_int(self.degree) or self.degree < low:
            raise ValueError(f"degree={self.degree!r} is not allowed: the order must be an integer >= {low}.")
        if entry.is_polynomial:
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

        Returns
        -------
        KernelEntry
            The registry's entry for ``name``.
        """
        return KERNELS[self.name]

    @property
    def coef0(self) -> float:
        """The offset c of (c + <x, y>)^m as the maps take it: 0 for the homogeneous polynomial.

        Returns
        -------
        float
            c for the non-homogeneous polynomial kernel, 0.0 otherwise.
        """
        return 0.0 if self.entry.homogeneous else float(self.c)

    @property
    def is_itemset(self) -> bool:
        """Whether the kernel is an itemset kernel K_S (it has a family S).

        Returns
        -------
        bool
            True if the kernel is an itemset kernel K_S.
        """
        return self.entry.is_itemset

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


#: The sidebar's widgets (fields of the state table, rkcore.views.settings) that set each kernel parameter.
PARAMETER_WIDGETS = {"degree": ("degree",), "c": ("c",), "gamma": ("gamma",), "itemsets": ("family", "itemsets", "fields")}


@dataclass(frozen=True, kw_only=True)
class KernelParameter:  # numpydoc ignore=PR02
    """One parameter a kernel takes, with the values it allows.

    Parameters
    ----------
    name : {"degree", "c", "gamma", "itemsets"}
        The :class:`KernelSpec` field it sets.
    low : float, optional
        Least value allowed (None: no bound, or not a number).
    high : float, optional
        Largest value allowed (None: no bound).
    low_open : bool, default=False
        ``low`` itself is refused (gamma > 0).
    integer : bool, default=False
        Only integers are allowed.
    """

    name: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    integer: bool = False

    def __post_init__(self):
        if self.name not in PARAMETER_WIDGETS:
            raise ValueError(f"Unknown kernel parameter {self.name!r}; allowed: {', '.join(PARAMETER_WIDGETS)}.")


DEGREE = KernelParameter(name="degree", low=1, integer=True)
DEGREE_FROM_ZERO = KernelParameter(name="degree", low=0, integer=True)  # K_A^0 = 1: "up to m" starts at 0
OFFSET = KernelParameter(name="c", low=0.0)
WIDTH = KernelParameter(name="gamma", low=0.0, low_open=True)
FAMILY = KernelParameter(name="itemsets")


@dataclass(frozen=True, kw_only=True)
class KernelEntry:  # numpydoc ignore=PR02
    """One kernel of :data:`KERNELS`: its names, parameters, formula, exact Gram matrix and the structure
    the engines and the sidebar ask about.

    Keyword-only, like :class:`rkcore.registry.maps.MapEntry`. Code outside the registry and the kernels room
    asks the entry (``takes_family``, ``is_polynomial``, ``uses_gamma``, ...), never compares kernel keys.

    Parameters
    ----------
    key : str
        The kernel's key (URL value, ``KernelSpec.name``).
    label : str
        Its name in the dashboard.
    latex : str
        Its formula; ``{m}`` stands for the degree.
    exact : callable
        ``exact(X, Y, spec)`` -> the exact Gram matrix.
    parameters : tuple of KernelParameter, default=()
        The parameters it takes, with their bounds (the sidebar draws a widget for each).
    family : str, optional
        The :class:`rkcore.kernels.itemsets.ItemsetFamily` kind it sums over (an itemset kernel); None
        for the polynomial and RBF kernels.
    polynomial : bool, default=False
        A polynomial kernel (c + <x, y>)^m (the maps of polynomial kernels estimate it).
    homogeneous : bool, default=False
        A polynomial without offset: ``c`` is ignored (taken as 0).
    gram_work : {"elementary", "product", "gemm"}, default="gemm"
        How its exact Gram matrix is computed: elementary symmetric polynomials (Newton identities with a
        stable fallback), a product over features, or one matrix product and element-wise passes
        (:func:`rkcore.studies.costs.rates.exact_kernel_seconds` prices each).
    """

    key: str
    label: str
    latex: str
    exact: Callable  # (X, Y, spec) -> Gram
    parameters: tuple[KernelParameter, ...] = ()
    family: str | None = None
    polynomial: bool = False
    homogeneous: bool = False  # polynomial without offset: c is ignored (taken as 0)
    gram_work: str = "gemm"

    def __post_init__(self):
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            raise ValueError(f"Kernel {self.key!r}: a parameter is listed twice ({', '.join(names)}).")
        if self.gram_work not in ("elementary", "product", "gemm"):
            raise ValueError(f"Kernel {self.key!r}: gram_work must be 'elementary', 'product' or 'gemm', "
                             f"got {self.gram_work!r}.")
        if self.family is not None and self.family not in FAMILY_KINDS:
            raise ValueError(f"Kernel {self.key!r}: family must be one of {', '.join(FAMILY_KINDS)}, "
                             f"got {self.family!r}.")

    def parameter(self, name: str) -> KernelParameter | None:
        """The parameter of that name, or None if the kernel does not take it.

        Parameters
        ----------
        name : str
            "degree", "c", "gamma" or "itemsets".

        Returns
        -------
        KernelParameter or None
            The parameter and its bounds.
        """
        return next((p for p in self.parameters if p.name == name), None)

    @property
    def uses_degree(self) -> bool:
        """Whether the degree m is a parameter of the kernel.

        Returns
        -------
        bool
            True if the degree m is a parameter of the kernel.
        """
        return self.parameter("degree") is not None

    @property
    def min_degree(self) -> int:
        """The least order m allowed (0 for "itemsets up to size m", else 1).

        Returns
        -------
        int
            0 or 1.
        """
        p = self.parameter("degree")
        return int(p.low) if p is not None and p.low is not None else 1

    @property
    def uses_offset(self) -> bool:
        """Whether the offset c is a parameter (the non-homogeneous polynomial kernel).

        Returns
        -------
        bool
            True if the offset c is a parameter.
        """
        return self.parameter("c") is not None

    @property
    def uses_gamma(self) -> bool:
        """Whether the width gamma is a parameter (the Gaussian kernel).

        Returns
        -------
        bool
            True if the width gamma is a parameter.
        """
        return self.parameter("gamma") is not None

    @property
    def takes_family(self) -> bool:
        """Whether the user gives the itemset family S (typed itemsets or fields).

        Returns
        -------
        bool
            True if the user gives the itemset family S.
        """
        return self.parameter("itemsets") is not None

    custom_family = takes_family

    @property
    def is_itemset(self) -> bool:
        """Whether it is an itemset kernel K_S (a sum over a family S).

        Returns
        -------
        bool
            True if it is an itemset kernel K_S.
        """
        return self.family is not None

    @property
    def is_polynomial(self) -> bool:
        """Whether it is a polynomial kernel (c + <x, y>)^m, homogeneous or not.

        Returns
        -------
        bool
            True if it is a polynomial kernel.
        """
        return self.polynomial

    @property
    def ordered(self) -> bool:
        """Whether its order m must not exceed d (ANOVA, up-to: :data:`rkcore.kernels.itemsets.ORDERED_KERNELS`).

        Returns
        -------
        bool
            True if its order m must not exceed d.
        """
        return self.key in ORDERED_KERNELS

    @property
    def sums_orders(self) -> bool:
        """Whether it sums the ANOVA kernels of every order 0..m (not only order m).

        Returns
        -------
        bool
            True if it sums the ANOVA kernels of every order 0..m.
        """
        return self.family == "up_to"

    @property
    def is_linear(self) -> bool:
        """Whether the kernel is the dot product itself (the family of single items): nothing to approximate.

        Returns
        -------
        bool
            True for the dot kernel.
        """
        return self.family == "dot"

    @property
    def single_order(self) -> bool:
        """Whether it is the ANOVA kernel of order m alone (the paper's eq. 12 computes it in floats).

        Returns
        -------
        bool
            True if it is the ANOVA kernel of order m alone.
        """
        return self.family == "anova"

    @property
    def widgets(self) -> tuple[str, ...]:
        """The sidebar's widgets for it: fields of the state table (:mod:`rkcore.views.settings`), in order.

        Returns
        -------
        tuple[str, ...]
            Field names, e.g. ``("kernel", "degree")``.
        """
        return tuple(w for p in sorted(self.parameters, key=lambda p: p.name != "itemsets")
                     for w in PARAMETER_WIDGETS[p.name])


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
        KernelEntry(key="anova", label="ANOVA", latex=r"K_A^{m}(\mathbf{x},\mathbf{y}) = \sum_{j_1<\dots<j_{m}} \prod_{k=1}^{m} x_{j_k} y_{j_k}",
                    exact=_family_exact, parameters=(DEGREE,), family="anova", gram_work="elementary"),
        KernelEntry(key="all_subsets", label="All-subsets", latex=r"K_{\mathrm{all}}(\mathbf{x},\mathbf{y}) = \prod_{j=1}^{d}(1 + x_j y_j)",
                    exact=_family_exact, family="all_subsets", gram_work="product"),
        KernelEntry(key="dot", label="Dot product", latex=r"K(\mathbf{x},\mathbf{y}) = \langle\mathbf{x},\mathbf{y}\rangle",
                    exact=_family_exact, family="dot"),
        KernelEntry(key="up_to", label="Itemsets up to size m", latex=r"K(\mathbf{x},\mathbf{y}) = \sum_{k=0}^{m} K_A^{k}(\mathbf{x},\mathbf{y})",
                    exact=_family_exact, parameters=(DEGREE_FROM_ZERO,), family="up_to", gram_work="elementary"),
        KernelEntry(key="itemset", label="Custom itemset family", latex=r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y}) = \sum_{V\in\mathcal{S}}\prod_{j\in V} x_j y_j",
                    exact=_family_exact, parameters=(FAMILY,), family="custom", gram_work="elementary"),
        KernelEntry(key="polynomial", label="Polynomial", latex=r"K_P^{m}(\mathbf{x},\mathbf{y}; c) = (c + \langle\mathbf{x},\mathbf{y}\rangle)^{m}",
                    exact=_polynomial_exact, parameters=(DEGREE, OFFSET), polynomial=True),
        KernelEntry(key="homogeneous_polynomial", label="Homogeneous polynomial", latex=r"K_{HP}^{m}(\mathbf{x},\mathbf{y}) = \langle\mathbf{x},\mathbf{y}\rangle^{m}",
                    exact=_polynomial_exact, parameters=(DEGREE,), polynomial=True, homogeneous=True),
        KernelEntry(key="rbf", label="Gaussian (RBF)", latex=r"K(\mathbf{x},\mathbf{y}) = \exp(-\gamma\|\mathbf{x}-\mathbf{y}\|^2)",
                    exact=_rbf_exact, parameters=(WIDTH,)),
    )
}
#: The polynomial kernels (what Tensor Sketch, Random Maclaurin and Nystroem estimate), from their entries.
POLYNOMIAL_KERNELS = tuple(k for k, e in KERNELS.items() if e.polynomial)


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
    return entry_of(KERNELS, key, "kernel")


def register_kernel(entry: KernelEntry) -> KernelEntry:
    """Add a kernel to :data:`KERNELS` (at the end): the state table's choices, the sidebar, the command line's
    names and every engine that lists kernels pick it up. Explicit: nothing registers on import.

    Parameters
    ----------
    entry : KernelEntry
        The new kernel; its key must not be registered yet.

    Returns
    -------
    KernelEntry
        ``entry``.
    """
    return add_entry(KERNELS, entry, KernelEntry, "kernel", adder="register_kernel")


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
