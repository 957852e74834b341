"""rkcore: random feature maps for the itemset kernel (Atarashi, Maji & Oyama, AAAI-19).

The public names below load on first use (PEP 562), so that ``import rkcore`` - and with it the
``rkcore --version`` / ``--help`` command - does not pay for numpy, SciPy and scikit-learn.
"""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the checker sees the real names and their types; at run time __getattr__ loads them
    from .kernels.exact import (all_subsets_kernel, anova_kernel, dot_kernel, explicit_features,
                                itemset_kernel, polynomial_kernel, up_to_kernel)
    from .kernels.itemsets import ItemsetFamily
    from .maps.distributions import DISTRIBUTIONS, get_distribution
    from .maps.random_kernel import RandomKernel

__version__ = "0.1.0"

#: public name -> the module that defines it
_EXPORTS = {
    "DISTRIBUTIONS": ".maps.distributions", "get_distribution": ".maps.distributions",
    "ItemsetFamily": ".kernels.itemsets",
    "all_subsets_kernel": ".kernels.exact", "anova_kernel": ".kernels.exact", "dot_kernel": ".kernels.exact",
    "explicit_features": ".kernels.exact", "itemset_kernel": ".kernels.exact", "polynomial_kernel": ".kernels.exact",
    "up_to_kernel": ".kernels.exact",
    "RandomKernel": ".maps", "SignedCirculantRandomKernel": ".maps", "RandomMaclaurin": ".maps",
    "OrthogonalRandomFeatures": ".maps", "StructuredOrthogonalRandomFeatures": ".maps", "FastFood": ".maps",
    "RandomFourierPairs": ".maps",
    "ExactKernelSVC": ".learners", "FactorizationMachineClassifier": ".learners",
    "AllSubsetsModelClassifier": ".learners", "SparseRandomFeatureClassifier": ".learners",
    "RandomFeatureSGDClassifier": ".learners", "FactorizationMachineRegressor": ".learners",
    "ExactKernelRidge": ".learners", "random_feature_pipeline": ".learners", "random_feature_ridge": ".learners",
    "KernelSpec": ".registry", "make_map": ".registry",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name], __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
