"""Exact kernels: itemset families, the exact itemset / ANOVA / all-subsets / polynomial kernels under the
accuracy contract, and the fast Gram paths behind them.

``from rkcore.kernels import anova_kernel`` is the public door; the modules are
:mod:`rkcore.kernels.itemsets`, :mod:`rkcore.kernels.exact` and :mod:`rkcore.kernels.fastpaths`.
"""
from .exact import (  # noqa: F401
    all_subsets_kernel, anova_kernel, cross_fields_kernel, dot_kernel, explicit_features, itemset_kernel,
    polynomial_kernel, up_to_kernel,
)
from .itemsets import ItemsetFamily  # noqa: F401

__all__ = ["ItemsetFamily", "all_subsets_kernel", "anova_kernel", "cross_fields_kernel", "dot_kernel",
           "explicit_features", "itemset_kernel", "polynomial_kernel", "up_to_kernel"]
