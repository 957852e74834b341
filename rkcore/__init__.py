"""rkcore: random feature maps for the itemset kernel (Atarashi, Maji & Oyama, AAAI-19)."""
from .maps.distributions import DISTRIBUTIONS, get_distribution
from .kernels.itemsets import ItemsetFamily
from .kernels.exact import (
    all_subsets_kernel,
    anova_kernel,
    dot_kernel,
    explicit_features,
    itemset_kernel,
    polynomial_kernel,
    up_to_kernel,
)
from .maps.random_kernel import RandomKernel

__version__ = "0.1.0"
