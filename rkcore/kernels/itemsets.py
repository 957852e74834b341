"""Itemset families: the S of the itemset kernel K_S(x, y) = sum_{V in S} prod_{j in V} x_j y_j.

An :class:`ItemsetFamily` is immutable and knows, without enumerating itself, how
many itemsets of each size it holds. Named families (ANOVA, all-subsets, dot,
up-to-m, cross-field) are described by a handful of numbers; custom families hold
their itemsets explicitly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import math
import sys
from itertools import chain, combinations, product
from math import comb
from typing import Any, Iterable, Iterator, cast

import numpy as np

from ..base.validation import check_n_features, check_order
from .counts import _log2_comb, _log2_elementary, _log2_sum, format_count  # noqa: F401  (format_count: re-exported)

FAMILY_KINDS = ("anova", "all_subsets", "dot", "up_to", "custom", "cross_fields")
#: Kernel keys (rkcore.registry.KERNELS) that are itemset kernels K_S: "itemset" is a custom S.
ITEMSET_KERNELS = ("anova", "all_subsets", "dot", "up_to", "itemset")
#: Itemset kernels whose order m sets the itemset sizes (exactly m, or up to m): they need m <= d.
ORDERED_KERNELS = ("anova", "up_to")

#: Refuse to enumerate or list explicit features for families larger than this.
MAX_ENUMERATION = 200_000
#: Itemset counts above 2^EXACT_COUNT_BITS (about 10^1233) are not computed exactly: the big-integer
#: work grows with their size (``all_subsets(200000)`` has 200,001 sizes, ``up_to(10**6, 10**5)``
#: sums 100,001 binomials of ~470,000 bits). Such counts are ``math.inf`` in :meth:`counts_by_size`
#: and :attr:`n_itemsets` (meaning "more than 2^EXACT_COUNT_BITS"); their logarithms are always available.
EXACT_COUNT_BITS = 4096
#: ...and the exact cross-field count (e_m of the field sizes) is computed only below this many big-int steps.
EXACT_CROSS_STEPS = 2_000_000


def _elementary_symmetric(values: Iterable[int], m: int) -> list[int]:
    """e_0..e_m of the given integers (exact, Python ints)."""
    e = [1] + [0] * m
    for v in values:
        for k in range(m, 0, -1):
            e[k] += e[k - 1] * v
    return e


@dataclass(frozen=True)
class ItemsetFamily:  # numpydoc ignore=PR02
    """A family S of itemsets over features 0..d-1. Build it with the class methods.

    Immutable (a frozen dataclass): :meth:`anova`, :meth:`all_subsets`, :meth:`dot`, :meth:`up_to`,
    :meth:`custom` and :meth:`cross_fields` validate their arguments; the fields below are what
    they store.

    Parameters
    ----------
    kind : {"anova", "all_subsets", "dot", "up_to", "custom", "cross_fields"}
        Which family.
    d : int
        The number of features (indices 0..d-1).
    degree : int, optional
        The order m of "anova", "up_to" and "cross_fields"; None for the others.
    itemsets : tuple of tuple of int, optional
        The itemsets of a "custom" family, each sorted, ordered by size then lexicographically.
    fields : tuple of tuple of int, optional
        The disjoint feature groups of a "cross_fields" family.
    """

    kind: str
    d: int
    degree: int | None = None
    itemsets: tuple[tuple[int, ...], ...] | None = field(default=None, repr=False)
    fields: tuple[tuple[int, ...], ...] | None = None

    # ---------------------------------------------------------------- constructors
    @classmethod
    def anova(cls, d: int, m: int) -> "ItemsetFamily":
        """All itemsets of size exactly m: S = binom([d], m) (ANOVA kernel of order m).

        Parameters
        ----------
        d : int
            Number of features (d >= 1).
        m : int
            Itemset size, 1 <= m <= d.

        Returns
        -------
        ItemsetFamily
            The family.
        """
        d = check_n_features(d)
        return cls("anova", d, check_order(m, d))

    @classmethod
    def all_subsets(cls, d: int) -> "ItemsetFamily":
        """Every subset of [d], the empty set included (all-subsets kernel).

        Parameters
        ----------
        d : int
            Number of features (d >= 1).

        Returns
        -------
        ItemsetFamily
            The family.
        """
        return cls("all_subsets", check_n_features(d))

    @classmethod
    def dot(cls, d: int) -> "ItemsetFamily":
        """The singletons {1}, ..., {d} (the standard dot product).

        Parameters
        ----------
        d : int
            Number of features (d >= 1).

        Returns
        -------
        ItemsetFamily
            The family.
        """
        return cls("dot", check_n_features(d))

    @classmethod
    def up_to(cls, d: int, m: int) -> "ItemsetFamily":
        """All itemsets of size 0..m (sum of ANOVA kernels of order 0..m).

        Parameters
        ----------
        d : int
            Number of features (d >= 1).
        m : int
            Largest itemset size, 0 <= m <= d.

        Returns
        -------
        ItemsetFamily
            The family.
        """
        d = check_n_features(d)
        return cls("up_to", d, check_order(m, d, allow_zero=True))

    @classmethod
    def custom(cls, d: int, itemsets: Iterable[Iterable[int]]) -> "ItemsetFamily":
        """An explicit list of itemsets, each an iterable of feature indices in [0, d).

        Parameters
        ----------
        d : int
            Number of features (d >= 1).
        itemsets : iterable of iterable of int
            The itemsets: distinct feature indices each, no itemset twice, at least one.

        Returns
        -------
        ItemsetFamily
            The family.
        """
        d = check_n_features(d)
        if isinstance(itemsets, (str, bytes)) or not isinstance(itemsets, Iterable):
            raise ValueError("itemsets must be a list of tuples of feature indices, e.g. [(0, 1), (2,)].")
        normalized: list[tuple[int, ...]] = []
        seen: set[tuple[int, ...]] = set()
        for given in itemsets:
            raw: Iterable[Any] = (given,) if isinstance(given, (int, np.integer)) else given
            try:
                items = tuple(int(i) for i in raw)
                if any(int(i) != i for i in raw):
                    raise TypeError
            except (TypeError, ValueError):
                raise ValueError(f"Itemset {raw!r} is not a tuple of integer feature indices.") from None
            if len(set(items)) != len(items):
                raise ValueError(f"Itemset {raw!r} repeats a feature; an itemset is a set of distinct indices.")
            bad = [i for i in items if not 0 <= i < d]
            if bad:
                raise ValueError(f"Itemset {raw!r} has indices {bad} out of range: allowed indices are 0..{d - 1} (d={d}).")
            key = tuple(sorted(items))
            if key in seen:
                raise ValueError(f"Itemset {key} appears more than once; each itemset may be listed only once.")
            seen.add(key)
            normalized.append(key)
        if not normalized:
            raise ValueError("The itemset family is empty: give at least one itemset.")
        normalized.sort(key=lambda v: (len(v), v))
        return cls("custom", d, None, tuple(normalized))

    @classmethod
    def cross_fields(cls, fields: Iterable[Iterable[int]], m: int = 2, d: int | None = None) -> "ItemsetFamily":
        """Itemsets of size m whose features come from m different fields.

        ``fields`` are disjoint groups of feature indices (e.g. user features and item
        features); ``d`` defaults to one more than the largest index.

        Parameters
        ----------
        fields : iterable of iterable of int
            Disjoint groups of feature indices.
        m : int, default=2
            Itemset size: one feature from each of m different fields.
        d : int or None, default=None
            Number of features; None means one more than the largest index in ``fields``.

        Returns
        -------
        ItemsetFamily
            The family.
        """
        groups: list[tuple[int, ...]] = []
        for given in fields:
            f: tuple[Any, ...] = (given,) if isinstance(given, (int, np.integer)) else tuple(given)
            if not all(isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in f):
                raise ValueError(f"cross_fields: field {f!r} must hold integer feature indices.")
            groups.append(tuple(sorted(int(i) for i in f)))
        groups = [g for g in groups if g]
        if len(groups) < 2:
            raise ValueError("cross_fields needs at least two non-empty fields (groups of feature indices).")
        flat = list(chain.from_iterable(groups))
        if len(set(flat)) != len(flat):
            raise ValueError("cross_fields: the fields overlap; each feature may belong to one field only.")
        if min(flat) < 0:
            raise ValueError("cross_fields: feature indices must be >= 0.")
        d = max(flat) + 1 if d is None else check_n_features(d)
        if max(flat) >= d:
            raise ValueError(f"cross_fields: index {max(flat)} out of range: allowed indices are 0..{d - 1} (d={d}).")
        m = check_order(m, len(groups), name="m (the itemset size)",
                         bound=f"{len(groups)}, the number of fields (m is at most the number of fields: each "
                               "feature of an itemset comes from a different field)")
        return cls("cross_fields", d, m, None, tuple(groups))

    # ---------------------------------------------------------------- the fields a kind guarantees
    @property
    def order(self) -> int:
        """The order m of an "anova", "up_to" or "cross_fields" family: ``degree``, which these kinds always set.

        Returns
        -------
        int
            The order m.
        """
        if self.degree is None:
            raise ValueError(f"A {self.kind} family has no order m; only anova, up_to and cross_fields families have one.")
        return self.degree

    @property
    def custom_itemsets(self) -> tuple[tuple[int, ...], ...]:
        """The itemsets of a "custom" family: ``itemsets``, which that kind always sets.

        Returns
        -------
        tuple of tuple of int
            The itemsets, each a sorted tuple of feature indices.
        """
        if self.itemsets is None:
            raise ValueError(f"A {self.kind} family stores no itemset list; only a custom family does.")
        return self.itemsets

    @property
    def field_groups(self) -> tuple[tuple[int, ...], ...]:
        """The feature groups of a "cross_fields" family: ``fields``, which that kind always sets.

        Returns
        -------
        tuple of tuple of int
            The feature indices of each field.
        """
        if self.fields is None:
            raise ValueError(f"A {self.kind} family has no fields; only a cross_fields family does.")
        return self.fields

    # ---------------------------------------------------------------- counting
    def log2_counts_by_size(self) -> dict[int, float]:
        """log2 of the number of itemsets of each size; never big integers.

        Returns
        -------
        dict of int to float
            Size -> log2 of its count (sizes with count 0 omitted).
        """
        d = self.d
        if self.kind in ("anova", "all_subsets", "up_to"):
            sizes = (np.array([self.order]) if self.kind == "anova"
                     else np.arange(d + 1) if self.kind == "all_subsets" else np.arange(self.order + 1))
            return dict(zip(sizes.tolist(), _log2_comb(d, sizes).tolist()))
        if self.kind == "dot":
            return {1: math.log2(d)}
        if self.kind == "cross_fields":
            return {self.order: _log2_elementary([len(f) for f in self.field_groups], self.order)}
        return {k: math.log2(c) for k, c in self.counts_by_size().items()}

    @property
    def log2_n_itemsets(self) -> float:
        """log2 |S|, cheap for every family (all-subsets: exactly d).

        Returns
        -------
        float
            The base-2 logarithm of the number of itemsets |S|.
        """
        if self.kind == "all_subsets":
            return float(self.d)
        if self.kind in ("anova", "up_to"):  # straight from the array, no per-size dict
            sizes = np.array([self.order]) if self.kind == "anova" else np.arange(self.order + 1)
            return _log2_sum(_log2_comb(self.d, sizes))
        return _log2_sum(self.log2_counts_by_size().values())

    def counts_by_size(self) -> dict[int, int | float]:
        """Number of itemsets of each size, computed combinatorially (sizes with count 0 omitted).

        Returns
        -------
        dict of int to int or float
            Size -> count: exact integers up to 2^EXACT_COUNT_BITS, larger counts ``math.inf``
            (see :data:`EXACT_COUNT_BITS` and :meth:`log2_counts_by_size`).
        """
        d = self.d
        if self.kind == "custom":
            counts: dict[int, int] = {}
            for v in self.custom_itemsets:
                counts[len(v)] = counts.get(len(v), 0) + 1
            return dict(sorted(counts.items()))
        if self.kind == "dot":
            return {1: d}
        if self.kind == "cross_fields":
            return {self.order: self._cross_count()}
        return {k: (comb(d, k) if log2 <= EXACT_COUNT_BITS else math.inf)
                for k, log2 in self.log2_counts_by_size().items()}

    def _cross_count(self) -> int | float:
        sizes = [len(f) for f in self.field_groups]
        m = self.order
        if len(sizes) * m > EXACT_CROSS_STEPS or _log2_elementary(sizes, m) > EXACT_COUNT_BITS:
            return math.inf
        return _elementary_symmetric(sizes, m)[m]

    def __len__(self) -> int:
        n = self.n_itemsets
        if n == math.inf or n > sys.maxsize:
            raise OverflowError(f"The family has {format_count(n, self.log2_n_itemsets)} itemsets, too many for len(); "
                                "use n_itemsets or log2_n_itemsets.")
        return int(n)  # finite here, so an exact int already

    @property
    def n_itemsets(self) -> int | float:
        """|S|: an exact int up to 2^EXACT_COUNT_BITS (all-subsets: always, 2^d), else ``math.inf``.

        Returns
        -------
        int or float
            The exact count |S|, or ``math.inf`` when it exceeds 2^EXACT_COUNT_BITS.
        """
        if self.kind == "all_subsets":
            return 1 << self.d
        if self.kind in ("anova", "up_to") and self.log2_n_itemsets > EXACT_COUNT_BITS:
            return math.inf
        total = sum(self.counts_by_size().values())
        return total if total != math.inf else math.inf

    @property
    def n_itemsets_text(self) -> str:
        """|S| for people (exact below 10^15, else "≈ 1.23 × 10^456").

        Returns
        -------
        str
            The count |S| written for a reader.
        """
        return format_count(self.n_itemsets, self.log2_n_itemsets)

    @property
    def max_size(self) -> int:
        """The size of the largest itemset (0 for a custom family holding only the empty set).

        Returns
        -------
        int
            The largest itemset size.
        """
        if self.kind in ("anova", "up_to", "cross_fields"):
            return self.order
        if self.kind == "all_subsets":
            return self.d
        if self.kind == "dot":
            return 1
        return max((len(v) for v in self.custom_itemsets), default=0)

    # ---------------------------------------------------------------- enumeration
    def __iter__(self) -> Iterator[tuple[int, ...]]:
        return iter(self.enumerate())

    def enumerate(self, limit: int = MAX_ENUMERATION) -> list[tuple[int, ...]]:
        """All itemsets as sorted index tuples, ordered by size then lexicographically.

        Parameters
        ----------
        limit : int, default=MAX_ENUMERATION
            The most itemsets listed.

        Returns
        -------
        list of tuple of int
            The itemsets (the order of the columns of :func:`rkcore.kernels.explicit_features`).

        Raises
        ------
        ValueError
            When the family holds more than ``limit`` itemsets.
        """
        n = self.n_itemsets
        if n > limit:
            raise ValueError(
                f"The family {self.describe()} holds {self.n_itemsets_text} itemsets, more than the limit of {limit:,} "
                "that can be listed; use the kernel functions, which never enumerate."
            )
        if self.kind == "custom":
            return list(self.custom_itemsets)
        if self.kind == "cross_fields":
            out: list[tuple[int, ...]] = []
            for chosen in combinations(self.field_groups, self.order):
                out.extend(tuple(sorted(v)) for v in product(*chosen))
            return sorted(out, key=lambda v: (len(v), v))
        return [v for k in self.counts_by_size() for v in combinations(range(self.d), k)]

    # ---------------------------------------------------------------- description
    def describe(self) -> str:
        """A short description in words, for the UI.

        Returns
        -------
        str
            E.g. "all 10 itemsets of size 2 over d=5 features (ANOVA kernel of order 2)".
        """
        d, m = self.d, self.degree
        n = self.n_itemsets_text
        text = {  # lambdas: only the chosen kind is described (the others may not apply)
            "anova": lambda: f"all {n} itemsets of size {m} over d={d} features (ANOVA kernel of order {m})",
            "all_subsets": lambda: f"all 2^{d} = {n} subsets of the d={d} features, the empty set included (all-subsets kernel)",
            "dot": lambda: f"the {d} singletons (standard dot product)",
            "up_to": lambda: f"all {n} itemsets of size 0 to {m} over d={d} features",
            "custom": lambda: f"{n} custom itemsets over d={d} features (sizes {sorted(self.counts_by_size())})",
            "cross_fields": lambda: f"{n} itemsets of size {m} taking each feature from a different one of {len(self.fields or ())} fields",
        }[self.kind]()
        return text

    def latex(self) -> str:
        """The family and its kernel in LaTeX, for ``st.latex``.

        Returns
        -------
        str
            A LaTeX formula (no surrounding ``$``).
        """
        if self.kind == "anova":
            return (r"\mathcal{S} = \binom{[d]}{%d},\quad K_A^{%d}(\mathbf{x},\mathbf{y}) = "
                    r"\sum_{j_1<\dots<j_{%d}} \prod_{k=1}^{%d} x_{j_k} y_{j_k}") % ((self.order,) * 4)
        if self.kind == "all_subsets":
            return r"\mathcal{S} = 2^{[d]},\quad K_{\mathrm{all}}(\mathbf{x},\mathbf{y}) = \prod_{j=1}^{d} (1 + x_j y_j)"
        if self.kind == "dot":
            return r"\mathcal{S} = \{\{1\},\dots,\{d\}\},\quad K(\mathbf{x},\mathbf{y}) = \langle \mathbf{x}, \mathbf{y}\rangle"
        if self.kind == "up_to":
            return (r"\mathcal{S} = \bigcup_{k=0}^{%d} \binom{[d]}{k},\quad K(\mathbf{x},\mathbf{y}) = "
                    r"\sum_{k=0}^{%d} K_A^{k}(\mathbf{x},\mathbf{y})") % (self.order, self.order)
        if self.kind == "cross_fields":
            return (r"\mathcal{S} = \{V : |V| = %d,\ \text{each } j \in V \text{ from a different field}\},\quad "
                    r"K(\mathbf{x},\mathbf{y}) = e_{%d}\big(\langle \mathbf{x}_{F_1},\mathbf{y}_{F_1}\rangle, \dots\big)") % (self.order, self.order)
        return (r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y}) = \sum_{V \in \mathcal{S}} \prod_{j \in V} x_j y_j,"
                r"\quad |\mathcal{S}| = %d") % len(self.custom_itemsets)

    def with_d(self, d: int) -> "ItemsetFamily":
        """The same named family over a different number of features.

        Parameters
        ----------
        d : int
            The number of features of the data.

        Returns
        -------
        ItemsetFamily
            A named family rebuilt over d features (validated as by its constructor); a custom or
            cross-field family itself.

        Raises
        ------
        ValueError
            When a custom or cross-field family is defined over another d, or m > d.
        """
        if self.kind in ("custom", "cross_fields"):
            if d != self.d:
                raise ValueError(f"This {self.kind} family is defined over d={self.d} features, but the data has {d}.")
            return self
        if self.kind in ORDERED_KERNELS:
            return getattr(ItemsetFamily, self.kind)(d, self.order)
        return getattr(ItemsetFamily, self.kind)(d)


def check_degree_fits(kernel: str, degree: int, d: int, who: str | None = None) -> None:
    """Refuse an ordered itemset kernel (:data:`ORDERED_KERNELS`) of order m on fewer than m features.

    No itemset of size m exists then. Other kernels pass whatever the order.

    Parameters
    ----------
    kernel : str
        The kernel key (e.g. "anova", "up_to", "all_subsets").
    degree : int
        The order m.
    d : int
        The number of features of the data.
    who : str, optional
        Prefix of the message (an estimator's name).

    Raises
    ------
    ValueError
        When ``kernel`` is ordered and ``degree`` > d.
    """
    if kernel in ORDERED_KERNELS and degree > d:
        raise ValueError(
            f"{who + ': ' if who else ''}degree={degree} exceeds the number of features: X has {d} feature(s), and "
            f"the {kernel} kernel needs itemsets of size at most d (allowed: 1 <= degree <= {d})."
        )


def family_from_spec(kernel: str, d: int, degree: int | None = None, itemsets=None) -> ItemsetFamily:
    """Build a family from the kernel names used across rkcore and the dashboard.

    Parameters
    ----------
    kernel : {"anova", "all_subsets", "dot", "up_to", "itemset"}
        The kernel key; "itemset" is a custom family given by ``itemsets``.
    d : int
        The number of features.
    degree : int, optional
        The order m of "anova" and "up_to" (ignored by the others).
    itemsets : ItemsetFamily or list of tuple of int, optional
        The family of "itemset": an ItemsetFamily (rebuilt over d by :meth:`ItemsetFamily.with_d`)
        or a list of index tuples (:meth:`ItemsetFamily.custom`).

    Returns
    -------
    ItemsetFamily
        The validated family.

    Raises
    ------
    ValueError
        For an unknown kernel, a missing or invalid ``itemsets``, or an order out of range.
    """
    if kernel == "anova":
        return ItemsetFamily.anova(d, cast(int, degree))  # validated there: None is refused in the user's words
    if kernel == "all_subsets":
        return ItemsetFamily.all_subsets(d)
    if kernel == "dot":
        return ItemsetFamily.dot(d)
    if kernel == "up_to":
        return ItemsetFamily.up_to(d, cast(int, degree))  # validated there: None is refused in the user's words
    if kernel == "itemset":
        if itemsets is None:
            raise ValueError('kernel="itemset" needs itemsets=: a list of index tuples or an ItemsetFamily.')
        if isinstance(itemsets, ItemsetFamily):
            return itemsets.with_d(d)
        return ItemsetFamily.custom(d, itemsets)
    raise ValueError(f"Unknown kernel {kernel!r}; allowed: {', '.join(map(repr, ITEMSET_KERNELS))}.")
