"""The one table of names: kernels, random feature maps and the accuracy study's learners.

The dashboard's widgets list these entries, URLs store their keys, the engines build
from them and the tests iterate over them. A map is one keyword-only :class:`MapEntry`
carrying everything the app and the engines need: labels, the kernels and distributions it
accepts, its complexity, the kernel it is timed on and its operation count (timing
engine), its :class:`CostModel` (the run estimates of :mod:`rkcore.studies.costs` and the
classifier's fit time), whether it is unbiased, whether and how a linear classifier uses
it (accuracy engine), and its colour. A missing field is an error when the entry is made,
never a silent fallback to another map's numbers. :data:`METHODS` lists the learners of
the accuracy study (the exact ones and one per map offered to it). :func:`register_map` adds an entry at run
time (tests do this with a toy map), as :func:`register_kernel` adds a kernel.

This package is the face of three modules, imported from here:

- :mod:`rkcore.registry.kernels`: :class:`KernelSpec`, :data:`KERNELS` and the kernel a learner targets;
- :mod:`rkcore.registry.maps`: :class:`CostModel`, :class:`MapEntry`, :data:`MAPS` and :func:`make_map`;
- :mod:`rkcore.registry.methods`: :class:`MethodEntry` and :data:`METHODS`, the accuracy study's learners.

Distributions live in :mod:`rkcore.maps.distributions` and the itemset-kernel vocabulary
(which kernel keys are itemset kernels, which need m <= d) in :mod:`rkcore.kernels.itemsets`;
both are re-exported here.
"""
from __future__ import annotations

from ..kernels.itemsets import ITEMSET_KERNELS, ORDERED_KERNELS, ItemsetFamily, check_degree_fits, family_from_spec
from ..maps.distributions import DISTRIBUTIONS, get_distribution
from .kernels import (
    KERNELS, POLYNOMIAL_KERNELS, KernelEntry, KernelParameter, KernelSpec, anova_of, get_kernel, latex_with_degree,
    polynomial_of, register_kernel, same_kernel,
)
from .maps import (
    MAPS, CostModel, MapEntry, get_map, make_map, maps_for, register_map, time_complexity_latex, unregister_kernel, unregister_map,
)
from .methods import FM_MAX_ITER, LEARNERS, METHODS, MethodEntry, MethodTable, get_method

__all__ = [
    "DISTRIBUTIONS", "ITEMSET_KERNELS", "ORDERED_KERNELS", "KERNELS", "MAPS", "KernelEntry", "KernelParameter",
    "KernelSpec", "register_kernel", "unregister_kernel",
    "MapEntry", "CostModel", "MethodEntry", "METHODS", "LEARNERS", "get_method", "check_degree_fits", "get_distribution", "get_kernel", "get_map", "make_map", "maps_for",
    "register_map", "unregister_map", "time_complexity_latex", "same_kernel", "polynomial_of", "anova_of",
]
# Also public here as before the split, outside __all__: latex_with_degree (the pages' formulas),
# POLYNOMIAL_KERNELS, MethodTable, and the itemset vocabulary's ItemsetFamily and family_from_spec.
