"""scikit-learn's working_memory bounds rkcore's blocks as it bounds scikit-learn's pairwise chunks (issue 40):
``with sklearn.config_context(working_memory=...)`` makes the blocked computations use smaller row blocks
(counted by a spy on the row slices, and seen in tracemalloc's peak), with results equal within the accuracy
contract; the module defaults stay the cap, so the cost models that price one default block stay upper bounds."""
from __future__ import annotations

import sys
import tracemalloc

import numpy as np
import pytest
import sklearn
from sklearn.utils import gen_batches

import rkcore.kernels.numerics as numerics
from rkcore.base.limits import block_bytes, working_memory_bytes
from rkcore.kernels.numerics import CONTRACT_RTOL, row_batches, row_blocks

SMALL_MIB = 0.25  # 256 KiB: below every block default of rkcore (4 MiB to 64 MiB)


def test_block_bytes_is_the_default_lowered_to_working_memory():
    assert working_memory_bytes() == sklearn.get_config()["working_memory"] * 2**20
    assert block_bytes(64 * 2**20) == 64 * 2**20  # scikit-learn's default, 1024 MiB, is above every default
    with sklearn.config_context(working_memory=SMALL_MIB):
        assert block_bytes(64 * 2**20) == 2**18
        assert block_bytes(1000) == 1000  # a default below working_memory stays
    with sklearn.config_context(working_memory=4096):
        assert block_bytes(64 * 2**20) == 64 * 2**20  # a larger working_memory never enlarges a block
    with sklearn.config_context(working_memory=1e-9):
        assert block_bytes(64 * 2**20) == 1  # a block is at least one byte (then one row)


@pytest.mark.parametrize("n_rows, bytes_per_row, budget", [(1, 8, 100), (10, 8, 16), (1000, 24, 2400), (7, 1, 3),
                                                          (1000, 10**9, 64)])
def test_row_blocks_are_gen_batches_of_the_budget(n_rows, bytes_per_row, budget):
    step = max(1, budget // bytes_per_row)
    assert list(row_blocks(n_rows, bytes_per_row, budget)) == list(gen_batches(n_rows, step))
    with sklearn.config_context(working_memory=budget / 2 / 2**20):
        smaller = list(row_blocks(n_rows, bytes_per_row, budget))
    assert smaller == list(gen_batches(n_rows, max(1, int(budget / 2) // bytes_per_row)))
    assert list(row_blocks(0, bytes_per_row, budget)) == [] == list(row_batches(0, 5))


@pytest.fixture
def slices(monkeypatch):
    """Every row slice rkcore's blocked loops produce (row_batches, wherever imported), counted."""
    produced: list[slice] = []
    original = numerics.row_batches

    def spy(n_rows, rows_per_batch):
        batch = list(original(n_rows, rows_per_batch))
        produced.extend(batch)
        return iter(batch)

    for name, module in list(sys.modules.items()):
        if name.startswith("rkcore") and getattr(module, "row_batches", None) is original:
            monkeypatch.setattr(module, "row_batches", spy)
    return produced


def _data(n, d, seed=0):
    return np.random.RandomState(seed).rand(n, d)  # non-negative: the contract's scale is the kernel itself


def _random_kernel(X):
    from rkcore import RandomKernel

    rk = RandomKernel(n_components=512, kernel="anova", degree=3, random_state=0).fit(X)
    # each feature is e_3(x * w) / sqrt(D), whose contract scale is e_3(|x| |w|) / sqrt(D); Rademacher |w| = 1
    return rk.transform(X), _anova(X, np.ones((1, X.shape[1])), 3) / np.sqrt(512)


def _anova(X, Y, degree):
    from rkcore import anova_kernel

    return anova_kernel(X, Y, degree)


def _anova_gram(X):
    K = _anova(X, X[:300], 3)
    return K, K


def _all_subsets_gram(X):
    from rkcore.kernels.exact import all_subsets_kernel

    K = all_subsets_kernel(X[:, :6], X[:300, :6])
    return K, K


CASES = {"RandomKernel.transform": _random_kernel, "anova_kernel": _anova_gram, "all_subsets_kernel": _all_subsets_gram}


@pytest.mark.parametrize("case", sorted(CASES))
def test_working_memory_makes_the_blocks_smaller_and_the_results_agree(case, slices):
    X = _data(3000, 12)
    full, scale = CASES[case](X)
    default_slices = len(slices)
    slices.clear()
    with sklearn.config_context(working_memory=SMALL_MIB):
        small, _ = CASES[case](X)
    assert len(slices) > max(default_slices, 1), (default_slices, len(slices))
    # both runs are within the contract of the exact values: their difference within twice of it
    assert np.all(np.abs(small - full) <= 2 * CONTRACT_RTOL * np.abs(scale) + 1e-300)


@pytest.mark.parametrize("case", ["RandomKernel.transform", "anova_kernel"])
def test_working_memory_lowers_the_peak(case):
    X = _data(3000, 12)
    CASES[case](X[:50])  # imports and one-time caches outside the measurement

    def peak():
        tracemalloc.start()
        try:
            CASES[case](X)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    default = peak()
    with sklearn.config_context(working_memory=SMALL_MIB):
        small = peak()
    assert small < default - 2 * 2**20, (default, small)  # the default blocks are 8-16 MiB, the small 256 KiB


def test_error_study_rows_follow_working_memory():
    from rkcore.studies.errors import _block_rows

    assert _block_rows(2000, None, 2) == 64 * 2**20 // (8 * 2000 * 10)  # 64 MiB over rows of 2m + 6 temporaries
    with sklearn.config_context(working_memory=SMALL_MIB):
        assert _block_rows(2000, None, 2) == 1
        assert _block_rows(2000, 50, 2) == 50  # a block size the user gives is kept
