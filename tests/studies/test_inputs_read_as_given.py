"""Inputs read as given or refused, never silently changed (issue 27 item 10, the parts outside the datasets):
a dict or a string as an itemset, an L1 radius past the largest float, a choice repeated in the URL."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from rkapp.state import FIELDS
from rkcore.theory.bounds import l1_radius
from rkcore.registry import KernelSpec
from tests.conftest import error_texts, plotly_figures


@pytest.mark.parametrize("itemsets", [[{0: 1}], [{0: 1, 2: 3}], ["01"], [b"01"], [3], ({0: 1},)])
def test_kernel_spec_refuses_itemsets_that_are_not_index_sequences(itemsets):
    # tuple({0: 1}) == (0,) and tuple("01") == ("0", "1"): read that way, the family silently changes
    with pytest.raises(ValueError, match="itemsets must be sequences of feature indices"):
        KernelSpec("itemset", itemsets=itemsets)


def test_kernel_spec_keeps_index_sequences():
    assert KernelSpec("itemset", itemsets=[[0, 1], (2,), range(3, 5)]).itemsets == ((0, 1), (2,), (3, 4))
    assert KernelSpec("itemset", itemsets=((0, 1),)).itemsets == ((0, 1),)


@pytest.mark.parametrize("to_matrix", [np.asarray, sp.csr_matrix])
def test_l1_radius_refuses_an_overflowing_radius_instead_of_inf(to_matrix):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "overflow encountered" warning with an inf behind it
        with pytest.raises(ValueError, match="exceeds the largest float64"):
            l1_radius(to_matrix([[1.0, 2.0], [1e308, 1e308]]))
        # the largest finite radius is still an answer, exact here
        assert l1_radius(to_matrix([[1e308, -7e307], [1.0, 0.0]])) == 1.7e308


def test_a_choice_repeated_in_the_url_is_read_once():
    assert FIELDS["distributions"].parse("rademacher,rademacher, gaussian,rademacher") == ("rademacher", "gaussian")


def test_distributions_page_draws_each_line_once(run_page):
    """?distributions=rademacher,rademacher drew Rademacher three times, then refused the study: now the
    page draws what ?distributions=rademacher draws."""
    def traces(at):
        assert not at.exception and error_texts(at) == []
        return [[trace.get("name") for trace in figure["data"]] for figure in plotly_figures(at)]

    once = traces(run_page("pages/4_Distributions_and_variance.py", n=30, distributions="rademacher"))
    twice = traces(run_page("pages/4_Distributions_and_variance.py", n=30, distributions="rademacher,rademacher"))
    assert twice == once and once
