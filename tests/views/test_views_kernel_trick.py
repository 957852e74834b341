"""The Kernel trick view (rkcore.views.kernel_trick): picklable, pure, admitted, never cached."""
from __future__ import annotations

import pytest

from rkcore.views import ViewSpec, kernel_trick as kt
from tests.conftest import error_texts, plotly_figures
from tests.views.view_contract import (
    admission_spy, assert_computes_admitted, assert_functions_pickle, run_and_pickle,
)

PAGE = "pages/7_Kernel_trick.py"


def test_view_functions_pickle():
    assert_functions_pickle(kt.KERNEL_TRICK)


def test_timings_run_on_the_defaults_and_pickle():
    r = run_and_pickle(kt.KERNEL_TRICK, ViewSpec(), kt_dmax=16, kt_n=20)  # defaults: polynomial, m = 2
    assert r.d_list == [2, 4, 8, 16] and list(r.summary["d"]) == r.d_list
    assert list(r.summary["explicit features"]) == [6, 15, 45, 153]  # C(d + 2, 2)
    assert set(r.timings["method"]) == {"explicit features", "kernel trick"}


def test_d_values_follow_the_expansion_and_refuse_a_d_not_offered():
    assert kt.d_values("all_subsets", 3, 8) == [2, 4, 6, 8] and kt.order("all_subsets", 3) == 2
    assert kt.d_values("interactions", 4, 16) == [4, 8, 16]  # m > d has no interaction
    with pytest.raises(ValueError, match="not offered"):
        kt.d_values("all_subsets", 2, 256)


def test_the_page_times_through_admission_and_never_from_a_cache(run_page, monkeypatch):
    with admission_spy(monkeypatch, [(kt.KERNEL_TRICK, kt)]) as calls:
        at = run_page(PAGE, kt_n=20, kt_dmax=8)
        assert not at.exception and not error_texts(at) and len(plotly_figures(at)) == 2
        at.run()  # a rerun measures again: a cached time would be a time of some other run
    assert_computes_admitted(calls, [kt.KERNEL_TRICK.key])
    assert len(calls) == 2, calls
