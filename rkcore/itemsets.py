"""Itemset families: the S of the itemset kernel K_S(x, y) = sum_{V in S} prod_{j in V} x_j y_j.

An :class:`ItemsetFamily` is immutable and knows, without enumerating itself, how
many itemsets of each size it holds. Named families (ANOVA, all-subsets, dot,
up-to-m, cross-field) are described by a handful of numbers; custom families hold
their itemsets explicitly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, combinations, product
from math import comb
from typing import Iterable, Iterator

import numpy as np

from .validation import check_int, is_int

FAMILY_KINDS = ("anova", "all_subsets", "dot", "up_to", "custom", "cross_fields")
#: Kernel keys (rkcore.registry.KERNELS) that are itemset kernels K_S: "itemset" is a custom S.
ITEMSET_KERNELS = ("anova", "all_subsets", "dot", "up_to", "itemset")
#: Itemset kernels whose order m sets the itemset sizes (exactly m, or up to m): they need m <= d.
ORDERED_KERNELS = ("anova", "up_to")

#: Refuse to enumerate or list explicit features for families larger than this.
MAX_ENUMERATION = 200_000


def _check_d(d) -> int:
    return check_int(d, "d (the number of features)")


def _check_order(m, d: int, *, allow_zero: bool = False, name: str = "degree") -> int:
    low = 0 if allow_zero else 1
    if not is_int(m):
        raise ValueError(f"{name} must be an integer in [{low}, d={d}], got {m!r}.")
    if not low <= m <= d:
        raise ValueError(f"{name}={m} is out of range: allowed {name} is between {low} and d={d} (the number of features).")
    return int(m)


def _elementary_symmetric(values: Iterable[int], m: int) -> list[int]:
    """e_0..e_m of the given integers (exact, Python ints)."""
    e = [1] + [0] * m
    for v in values:
        for k in range(m, 0, -1):
            e[k] += e[k - 1] * v
    return e


@dataclass(frozen=True)
class ItemsetFamily:
    """A family S of itemsets over features 0..d-1. Build it with the class methods."""

    kind: str
    d: int
    degree: int | None = None
    itemsets: tuple[tuple[int, ...], ...] | None = field(default=None, repr=False)
    fields: tuple[tuple[int, ...], ...] | None = None

    # ---------------------------------------------------------------- constructors
    @classmethod
    def anova(cls, d: int, m: int) -> "ItemsetFamily":
        """All itemsets of size exactly m: S = binom([d], m) (ANOVA kernel of order m)."""
        d = _check_d(d)
        return cls("anova", d, _check_order(m, d))

    @classmethod
    def all_subsets(cls, d: int) -> "ItemsetFamily":
        """Every subset of [d], the empty set included (all-subsets kernel)."""
        return cls("all_subsets", _check_d(d))

    @classmethod
    def dot(cls, d: int) -> "ItemsetFamily":
        """The singletons {1}, ..., {d} (the standard dot product)."""
        return cls("dot", _check_d(d))

    @classmethod
    def up_to(cls, d: int, m: int) -> "ItemsetFamily":
        """All itemsets of size 0..m (sum of ANOVA kernels of order 0..m)."""
        d = _check_d(d)
        return cls("up_to", d, _check_order(m, d, allow_zero=True))

    @classmethod
    def custom(cls, d: int, itemsets: Iterable[Iterable[int]]) -> "ItemsetFamily":
        """An explicit list of itemsets, each an iterable of feature indices in [0, d)."""
        d = _check_d(d)
        if isinstance(itemsets, (str, bytes)) or not isinstance(itemsets, Iterable):
            raise ValueError("itemsets must be a list of tuples of feature indices, e.g. [(0, 1), (2,)].")
        normalized: list[tuple[int, ...]] = []
        seen: set[tuple[int, ...]] = set()
        for raw in itemsets:
            if isinstance(raw, (int, np.integer)):
                raw = (raw,)
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
        """
        groups = []
        for f in fields:
            f = (f,) if isinstance(f, (int, np.integer)) else tuple(f)
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
        d = max(flat) + 1 if d is None else _check_d(d)
        if max(flat) >= d:
            raise ValueError(f"cross_fields: index {max(flat)} out of range: allowed indices are 0..{d - 1} (d={d}).")
        m = _check_order(m, len(groups), name="m (itemset size, at most the number of fields)")
        return cls("cross_fields", d, m, None, tuple(groups))

    # ---------------------------------------------------------------- counting
    def counts_by_size(self) -> dict[int, int]:
        """Number of itemsets of each size, computed combinatorially (sizes with count 0 omitted)."""
        d, m = self.d, self.degree
        if self.kind == "anova":
            counts = {m: comb(d, m)}
        elif self.kind == "all_subsets":
            counts = {k: comb(d, k) for k in range(d + 1)}
        elif self.kind == "dot":
            counts = {1: d}
        elif self.kind == "up_to":
            counts = {k: comb(d, k) for k in range(m + 1)}
        elif self.kind == "cross_fields":
            counts = {m: _elementary_symmetric((len(f) for f in self.fields), m)[m]}
        else:
            counts: dict[int, int] = {}
            for v in self.itemsets:
                counts[len(v)] = counts.get(len(v), 0) + 1
        return {k: c for k, c in sorted(counts.items()) if c}

    def __len__(self) -> int:
        return self.n_itemsets

    @property
    def n_itemsets(self) -> int:
        return sum(self.counts_by_size().values())

    @property
    def max_size(self) -> int:
        return max(self.counts_by_size(), default=0)

    # ---------------------------------------------------------------- enumeration
    def __iter__(self) -> Iterator[tuple[int, ...]]:
        return iter(self.enumerate())

    def enumerate(self, limit: int = MAX_ENUMERATION) -> list[tuple[int, ...]]:
        """All itemsets as sorted index tuples, ordered by size then lexicographically.

        Raises ValueError when the family holds more than ``limit`` itemsets.
        """
        n = self.n_itemsets
        if n > limit:
            raise ValueError(
                f"The family {self.describe()} holds {n:,} itemsets, more than the limit of {limit:,} "
                "that can be listed; use the kernel functions, which never enumerate."
            )
        if self.kind == "custom":
            return list(self.itemsets)
        if self.kind == "cross_fields":
            out = []
            for chosen in combinations(self.fields, self.degree):
                out.extend(tuple(sorted(v)) for v in product(*chosen))
            return sorted(out, key=lambda v: (len(v), v))
        return [v for k in self.counts_by_size() for v in combinations(range(self.d), k)]

    # ---------------------------------------------------------------- description
    def describe(self) -> str:
        """A short description in words, for the UI."""
        d, m = self.d, self.degree
        n = self.n_itemsets
        text = {
            "anova": f"all {n:,} itemsets of size {m} over d={d} features (ANOVA kernel of order {m})",
            "all_subsets": f"all 2^{d} = {n:,} subsets of the d={d} features, the empty set included (all-subsets kernel)",
            "dot": f"the {d} singletons (standard dot product)",
            "up_to": f"all {n:,} itemsets of size 0 to {m} over d={d} features",
            "custom": f"{n:,} custom itemsets over d={d} features (sizes {sorted(self.counts_by_size())})",
            "cross_fields": f"{n:,} itemsets of size {m} taking each feature from a different one of {len(self.fields or ())} fields",
        }[self.kind]
        return text

    def latex(self) -> str:
        """The family and its kernel in LaTeX, for ``st.latex``."""
        m = self.degree
        if self.kind == "anova":
            return (r"\mathcal{S} = \binom{[d]}{%d},\quad K_A^{%d}(\mathbf{x},\mathbf{y}) = "
                    r"\sum_{j_1<\dots<j_{%d}} \prod_{k=1}^{%d} x_{j_k} y_{j_k}") % (m, m, m, m)
        if self.kind == "all_subsets":
            return r"\mathcal{S} = 2^{[d]},\quad K_{\mathrm{all}}(\mathbf{x},\mathbf{y}) = \prod_{j=1}^{d} (1 + x_j y_j)"
        if self.kind == "dot":
            return r"\mathcal{S} = \{\{1\},\dots,\{d\}\},\quad K(\mathbf{x},\mathbf{y}) = \langle \mathbf{x}, \mathbf{y}\rangle"
        if self.kind == "up_to":
            return (r"\mathcal{S} = \bigcup_{k=0}^{%d} \binom{[d]}{k},\quad K(\mathbf{x},\mathbf{y}) = "
                    r"\sum_{k=0}^{%d} K_A^{k}(\mathbf{x},\mathbf{y})") % (m, m)
        if self.kind == "cross_fields":
            return (r"\mathcal{S} = \{V : |V| = %d,\ \text{each } j \in V \text{ from a different field}\},\quad "
                    r"K(\mathbf{x},\mathbf{y}) = e_{%d}\big(\langle \mathbf{x}_{F_1},\mathbf{y}_{F_1}\rangle, \dots\big)") % (m, m)
        return (r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y}) = \sum_{V \in \mathcal{S}} \prod_{j \in V} x_j y_j,"
                r"\quad |\mathcal{S}| = %d") % self.n_itemsets

    def with_d(self, d: int) -> "ItemsetFamily":
        """The same named family over a different number of features (custom families keep theirs)."""
        if self.kind in ("custom", "cross_fields"):
            if d != self.d:
                raise ValueError(f"This {self.kind} family is defined over d={self.d} features, but the data has {d}.")
            return self
        if self.kind in ORDERED_KERNELS:
            return getattr(ItemsetFamily, self.kind)(d, self.degree)
        return getattr(ItemsetFamily, self.kind)(d)


def check_degree_fits(kernel: str, degree: int, d: int, who: str | None = None) -> None:
    """Refuse an ordered itemset kernel (:data:`ORDERED_KERNELS`) of order m on fewer than m features:
    no itemset of size m exists then. ``who`` prefixes the message (an estimator's name)."""
    if kernel in ORDERED_KERNELS and degree > d:
        raise ValueError(
            f"{who + ': ' if who else ''}degree={degree} exceeds the number of features: X has {d} feature(s), and "
            f"the {kernel} kernel needs itemsets of size at most d (allowed: 1 <= degree <= {d})."
        )


def family_from_spec(kernel: str, d: int, degree: int | None = None, itemsets=None) -> ItemsetFamily:
    """Build a family from the kernel names used across rkcore and the dashboard.

    ``kernel`` is one of "anova", "all_subsets", "dot", "up_to", "itemset"; for
    "itemset" the family comes from ``itemsets`` (an ItemsetFamily or a list of index tuples).
    """
    if kernel == "anova":
        return ItemsetFamily.anova(d, degree)
    if kernel == "all_subsets":
        return ItemsetFamily.all_subsets(d)
    if kernel == "dot":
        return ItemsetFamily.dot(d)
    if kernel == "up_to":
        return ItemsetFamily.up_to(d, degree)
    if kernel == "itemset":
        if itemsets is None:
            raise ValueError('kernel="itemset" needs itemsets=: a list of index tuples or an ItemsetFamily.')
        if isinstance(itemsets, ItemsetFamily):
            return itemsets.with_d(d)
        return ItemsetFamily.custom(d, itemsets)
    raise ValueError(f"Unknown kernel {kernel!r}; allowed: {', '.join(map(repr, ITEMSET_KERNELS))}.")
