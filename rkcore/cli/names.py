"""What the command line offers, as plain names and numbers.

``rkcore --help`` must answer at once, so building the parser imports no numpy, scikit-learn or
engine. The registry's names (maps, study kernels, methods) are therefore functions that import the
registry when they are asked, that is when an option is parsed or a subcommand's help is printed:
a map or kernel registered with one entry is offered here with no edit of this file. The paper's grids
come from :mod:`rkcore.studies.paper` (standard library only); the other choices are written out and
tests/ecosystem/test_cli_safety.py checks each against its source, so they cannot drift apart unnoticed.
"""
from __future__ import annotations

from typing import TypedDict, cast

from ..studies.paper import FIGURE1 as PAPER_FIGURE1, TABLE1_MULTIPLES as PAPER_TABLE1_MULTIPLES


class TimingGrid(TypedDict, total=False):
    """A timing grid of ``rkcore timing``: map keys and the values of d, D and n to time (and the degree)."""

    maps: list[str]
    d: list[int]
    D: list[int]
    n: list[int]
    degree: int


def map_keys() -> tuple[str, ...]:
    """The keys of the registry's maps (``rkcore.registry.MAPS``), registered ones included.

    Returns
    -------
    tuple of str
        Map keys, in registry order.
    """
    from ..registry import MAPS

    return tuple(MAPS)


def accuracy_kernels() -> tuple[str, ...]:
    """The study kernels of ``rkcore accuracy``: kernels of ``rkcore.registry.KERNELS`` that need no itemset
    family typed by the user and that a map offered to the study estimates on the study kernel itself.

    Returns
    -------
    tuple of str
        Kernel keys, in registry order.
    """
    from ..registry import KERNELS, METHODS

    estimated = {k for m in METHODS.values() for k in m.requires}
    return tuple(k for k, e in KERNELS.items() if k in estimated and not e.takes_family)


def method_keys() -> tuple[str, ...]:
    """The keys of the accuracy study's learners (``rkcore.registry.METHODS``), registered maps' included.

    Returns
    -------
    tuple of str
        Method keys, in table order.
    """
    from ..registry import METHODS

    return tuple(METHODS)

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
#: rkcore.studies.table1.TABLE1_KERNELS (the paper's sub-tables) and MULTIPLES
TABLE1_KERNELS = ("anova2", "anova3", "all_subsets")
TABLE1_MULTIPLES = PAPER_TABLE1_MULTIPLES
#: rkcore.studies.paper.FIGURE1 (paper Figure 1) and the default timing grid
FIGURE1 = cast(TimingGrid, PAPER_FIGURE1)  # paper.py is standard library only: a plain dict of this shape
TIMING_DEFAULTS: TimingGrid = {"maps": ["rk", "scrk"], "d": [128, 256, 512], "D": [2048], "n": [500]}
#: rkcore.data.datasets.NORMALIZATIONS offered by the command line
NORMALIZATIONS = ("l1", "l2", "none")
