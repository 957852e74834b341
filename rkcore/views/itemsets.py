"""Itemsets: what the family S contains, its explicit feature map φ_S, and K_S = ⟨φ_S, φ_S⟩.

The page (``pages/2_Itemsets.py``) draws what :func:`compute` returns with the figure builder and the
note re-exported here.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from rkcore.figures.itemsets import family_counts_figure
from rkcore.kernels.itemsets import ItemsetFamily
from rkcore.registry import ITEMSET_KERNELS
from rkcore.studies.costs import itemsets_view_cost
from rkcore.studies.costs.rates import RunCost
from rkcore.studies.family_views import (
    explicit_feature_table, explicit_view_family, family_counts, family_listing, kernel_check,
)

from .base import View
from .settings import ViewSpec

LISTING_LIMIT = 200      # list the whole family up to this many itemsets
EXPLICIT_MAX = 4096      # columns of phi_S computed for the check (restrict the features beyond)
SHOWN_COLUMNS = 8        # columns of phi_S shown in the table (more would scroll sideways at 1280 px)
SHOWN_ROWS = 5           # points whose phi_S the table shows
CHECK_PAIRS = 6          # pairs of the kernel-versus-inner-product check

#: What fits when the page's work is beyond the limits (it grows with d and the itemset sizes, not with n).
FITS = "Use fewer features (columns) or a smaller degree."

#: The page's note: what the counts and the check show, whatever the family.
NOTE = ("The number of itemsets explodes with d and the itemset size (the y axis turns logarithmic when it spans "
        "decades): the all-subsets family over d features holds $2^d$ itemsets. Yet the kernel column of the check "
        "costs O(d·m) per pair and agrees with the explicit inner product to rounding error. That is why the "
        "RK map evaluates K_S against random vectors instead of building φ_S.")


@dataclass(frozen=True)
class ItemsetsResult:  # numpydoc ignore=PR02
    """What the Itemsets page shows: the family, its counts and listing, and the explicit map's check.

    Parameters
    ----------
    family : ItemsetFamily
        The family S over the data's d features.
    counts : DataFrame
        Itemsets per size (exact counts, never enumerated).
    listing : DataFrame
        The first LISTING_LIMIT itemsets.
    explicit : ItemsetFamily
        The family restricted to the first d′ features, so that φ_S has at most EXPLICIT_MAX columns.
    features : DataFrame
        φ_S of the first SHOWN_ROWS points, first SHOWN_COLUMNS columns (index: the point).
    check : DataFrame
        Kernel formula against the explicit inner product on CHECK_PAIRS pairs.
    """

    family: ItemsetFamily
    counts: pd.DataFrame
    listing: pd.DataFrame
    explicit: ItemsetFamily
    features: pd.DataFrame
    check: pd.DataFrame


def compute(spec: ViewSpec, data) -> ItemsetsResult:
    """The family of the view's itemset kernel, its counts and listing, φ_S and the kernel check.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings (an itemset kernel).
    data : Dataset
        The view's data.

    Returns
    -------
    ItemsetsResult
        The tables the page shows.
    """
    family = spec.itemset_family(data)  # its counts are exact arithmetic: nothing enumerated yet
    explicit = explicit_view_family(family, max_itemsets=EXPLICIT_MAX)
    X_explicit = data.X[:, :explicit.d]
    return ItemsetsResult(
        family, family_counts(family), family_listing(family, limit=LISTING_LIMIT, feature_names=data.feature_names),
        explicit,
        explicit_feature_table(X_explicit, explicit, rows=SHOWN_ROWS, max_columns=SHOWN_COLUMNS,
                               feature_names=data.feature_names),
        kernel_check(X_explicit, explicit, n_pairs=CHECK_PAIRS, random_state=0))


def cost(spec: ViewSpec, n: int, d: int) -> RunCost:
    """Seconds and peak bytes of :func:`compute`: they grow with d and the itemset sizes, not with n or |S|.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Points and features.

    Returns
    -------
    RunCost
        The estimate.
    """
    return itemsets_view_cost(spec.itemset_family(d=d), LISTING_LIMIT, EXPLICIT_MAX)


def reproduce(spec: ViewSpec) -> str:
    """Python code listing the family, building φ_S and checking the kernel against it with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.

    Returns
    -------
    str
        The code.
    """
    return spec.code(
        "",
        "from rkcore.kernels.exact import explicit_features, itemset_kernel",
        "from rkcore.studies.family_views import family_counts, explicit_view_family",
        "family = spec.family(d)",
        "print(family.describe()); print(family_counts(family))",
        "sub = explicit_view_family(family)            # restrict to the first d' features if phi_S is too big",
        "Xs = X[:, :sub.d]",
        "phi = explicit_features(Xs, sub)",
        "print(abs(itemset_kernel(Xs, family=sub) - phi @ phi.T).max())   # ~1e-16",
    )


ITEMSETS = View(key="is", what="the itemset views", compute=compute, cost=cost, reproduce=reproduce)
VIEWS = (ITEMSETS,)

__all__ = ["CHECK_PAIRS", "EXPLICIT_MAX", "FITS", "ITEMSETS", "ITEMSET_KERNELS", "LISTING_LIMIT", "NOTE",
           "SHOWN_COLUMNS", "SHOWN_ROWS", "ItemsetsResult", "family_counts_figure"]
