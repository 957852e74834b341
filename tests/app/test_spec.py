"""rkcore.spec: the pure side of a dashboard view (no streamlit)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from rkcore.base.limits import max_size_within, require_memory
from rkcore.spec import cross_fields, kernel_spec_from_text, reproduce_code
from tests.conftest import REPO


def test_spec_never_imports_streamlit():
    code = "import sys, rkcore.spec; assert 'streamlit' not in sys.modules, 'streamlit imported'"
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


def test_kernel_from_text_matches_the_family_it_names():
    spec = kernel_spec_from_text("itemset", 5, itemsets="0,1; 2,3; 1,2,4")
    assert [tuple(s) for s in spec.family(5).itemsets] == [(0, 1), (2, 3), (1, 2, 4)]
    with pytest.raises(ValueError, match="degree=6"):
        kernel_spec_from_text("anova", 5, degree=6)


def test_cross_fields_fall_back_to_halves_and_refuse_one_feature():
    assert cross_fields("", 5) == ((0, 1), (2, 3, 4))
    assert cross_fields("", 4, data_fields=[[0], [1, 2, 3]]) == ((0,), (1, 2, 3))
    with pytest.raises(ValueError, match="at least 2 features"):
        cross_fields("", 1)


@pytest.mark.parametrize("budget", [0, 7, 8, 1000, 10**6 + 3])
def test_max_size_within_is_the_largest_fitting_size(budget):
    s = max_size_within(lambda k: 8 * k * k, budget=budget, upper=10**4)
    assert 8 * s * s <= budget and (s == 10**4 or 8 * (s + 1) ** 2 > budget)


def test_check_memory_names_the_arrays():
    require_memory({"small": (10, 10)}, budget=800)
    with pytest.raises(ValueError, match="Gram"):
        require_memory({"Gram": (11, 10)}, budget=800, hint="Reduce n.")


def test_reproduce_code_runs():
    code = reproduce_code(dataset="interactions", n=30, normalization="l1", kernel="itemset", family="cross",
                          fields="0-4 | 5-9", degree=2, extra_lines=["K = spec.exact(X)"])
    namespace: dict = {}
    exec(compile(code, "<reproduce>", "exec"), namespace)
    assert namespace["K"].shape == (30, 30) and np.all(np.isfinite(namespace["K"]))
