"""KernelEntry holds each kernel's parameters and answers the questions code used to ask with key comparisons;
the answers for the built-in kernels are the ones those comparisons gave (spec.py, the sidebar, the accuracy
study, the cost models and the error study compared keys before issue 36)."""
from __future__ import annotations

import pytest

from rkcore.registry import KERNELS, KernelEntry, KernelParameter, KernelSpec, maps_for
from rkcore.registry.kernels import DEGREE


def test_the_entries_answer_what_the_key_comparisons_answered():
    for key, e in KERNELS.items():
        assert e.takes_family == (key == "itemset"), key  # spec.py: kernel == "itemset"
        assert e.is_polynomial == (key in ("polynomial", "homogeneous_polynomial")), key
        assert e.uses_offset == (key == "polynomial"), key  # reproduce code: c= only for "polynomial"
        assert e.uses_gamma == (key == "rbf"), key
        assert e.uses_degree == (key in ("anova", "up_to", "polynomial", "homogeneous_polynomial")), key
        assert e.min_degree == (0 if key == "up_to" else 1), key
        assert e.ordered == (key in ("anova", "up_to")), key  # accuracy: m > d refused; stable-path check
        assert e.sums_orders == (key == "up_to") and e.single_order == (key == "anova"), key
        assert e.is_itemset == (key in ("anova", "all_subsets", "dot", "up_to", "itemset")), key
        assert e.gram_work == ("elementary" if key in ("anova", "itemset", "up_to") else
                               "product" if key == "all_subsets" else "gemm"), key


def test_the_sidebar_widgets_of_each_kernel():
    assert {k: e.widgets for k, e in KERNELS.items()} == {
        "anova": ("degree",), "all_subsets": (), "dot": (), "up_to": ("degree",),
        "itemset": ("family", "itemsets", "fields"), "polynomial": ("degree", "c"),
        "homogeneous_polynomial": ("degree",), "rbf": ("gamma",)}


def test_which_maps_estimate_each_kernel():
    assert maps_for("anova") == ["rk", "scrk"] and maps_for(KernelSpec("anova")) == ["rk", "scrk"]
    assert maps_for("polynomial") == ["ts", "rm", "nystroem"] and "rff" in maps_for("rbf")


def test_entries_are_keyword_only_and_checked():
    with pytest.raises(TypeError):
        KernelEntry("toy", "Toy", "K", lambda X, Y, spec: X)  # positional: refused, as MapEntry
    with pytest.raises(ValueError, match="gram_work"):
        KernelEntry(key="toy", label="Toy", latex="K", exact=print, gram_work="fast")
    with pytest.raises(ValueError, match="listed twice"):
        KernelEntry(key="toy", label="Toy", latex="K", exact=print, parameters=(DEGREE, DEGREE))
    with pytest.raises(ValueError, match="Unknown kernel parameter"):
        KernelParameter(name="sigma")
    with pytest.raises(ValueError, match="family must be one of"):
        KernelEntry(key="toy", label="Toy", latex="K", exact=print, family="pairs")


def test_the_spec_checks_the_degree_against_the_entry():
    assert KernelSpec("up_to", degree=0).degree == 0
    with pytest.raises(ValueError, match="integer >= 1"):
        KernelSpec("anova", degree=0)
    with pytest.raises(ValueError, match="offset"):
        KernelSpec("polynomial", degree=2, c=-1.0)
