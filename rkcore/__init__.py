"""rkcore: random feature maps for the itemset kernel (Atarashi, Maji & Oyama, AAAI-19)."""
from .distributions import DISTRIBUTIONS, get_distribution
from .itemsets import ItemsetFamily
from .kernels import (
    all_subsets_kernel,
    anova_kernel,
    dot_kernel,
    explicit_features,
    itemset_kernel,
    polynomial_kernel,
    up_to_kernel,
)
from .maps import RandomKernel

__version__ = "0.1.0"
