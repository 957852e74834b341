"""What the command line offers, as plain names and numbers.

``rkcore --help`` must answer at once, so building the parser imports no numpy, scikit-learn or
engine. The choices below are therefore written out here; tests/ecosystem/test_cli.py checks each
one against its source (the registry, the method table, the datasets, the engines' presets), so
they cannot drift apart unnoticed.
"""
from __future__ import annotations

from typing import TypedDict


class TimingGrid(TypedDict, total=False):
    """A timing grid of ``rkcore timing``: map keys and the values of d, D and n to time (and the degree)."""

    maps: list[str]
    d: list[int]
    D: list[int]
    n: list[int]
    degree: int


#: rkcore.registry.MAPS
MAP_KEYS = ("rk", "scrk", "ts", "rm", "rff", "nystroem", "rff_pairs", "orf", "sorf", "fastfood")
#: study kernels of ``rkcore accuracy``: rkcore.registry.KERNELS that RK features approximate without an
#: extra parameter (the itemset kernel needs a family)
ACCURACY_KERNELS = ("anova", "all_subsets", "dot", "up_to")
#: rkcore.registry.METHODS
METHOD_KEYS = ("kernel_svm", "poly_svm", "fm", "all_subsets_model", "rk", "scrk", "ts", "rm", "sparse_rf")
#: rkcore.studies.accuracy.DEFAULT_C_GRID and SELECTION_METRICS
DEFAULT_C_GRID = (0.1, 1.0, 10.0, 100.0, 1000.0)
SELECTION_METRICS = ("accuracy", "balanced_accuracy")
#: rkcore.data.datasets.BUILTIN: key -> what it is (for the help text)
BUILTIN_DATASETS = {
    "interactions": "synthetic pairwise interactions, binary labels",
    "gaussian": "i.i.d. N(0, 1) features, no labels (timing only)",
    "breast_cancer": "Breast cancer Wisconsin, 569 x 30, binary",
    "wine": "Wine, 178 x 13, 3 classes",
    "digits": "Digits 8x8, 1797 x 64, 10 classes",
    "movielens_ratings": "MovieLens-shaped ratings 1-5 (a generated stand-in, 78 features), regression",
}
#: rkcore.studies.table1.KERNELS and MULTIPLES
TABLE1_KERNELS = ("anova2", "anova3", "all_subsets")
TABLE1_MULTIPLES = (2, 4, 8, 16)
#: rkcore.studies.timing.FIGURE1 (paper Figure 1) and the default timing grid
FIGURE1: TimingGrid = {"maps": ["rk", "scrk", "ts", "rm"], "d": [512, 1024, 2048, 4096], "D": [8192], "n": [1000], "degree": 2}
TIMING_DEFAULTS: TimingGrid = {"maps": ["rk", "scrk"], "d": [128, 256, 512], "D": [2048], "n": [500]}
#: rkcore.data.datasets.NORMALIZATIONS offered by the command line
NORMALIZATIONS = ("l1", "l2", "none")
