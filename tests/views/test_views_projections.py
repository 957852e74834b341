"""The Random projections view (rkcore.views.projections): picklable, pure, admitted; δ recomputes nothing."""
from __future__ import annotations

import pytest

from rkcore.views import ViewSpec, projections as rp
from tests.conftest import error_texts, plotly_figures
from tests.views.view_contract import (
    admission_spy, assert_computes_admitted, assert_functions_pickle, run_and_pickle,
)

PAGE = "pages/9_Random_projections.py"
SPEC = ViewSpec(dataset="digits", n=40)


def test_view_functions_pickle():
    assert_functions_pickle(rp.PROJECTION)


def test_projections_run_on_the_defaults_and_pickle():
    r = run_and_pickle(rp.PROJECTION, SPEC, rp_mmax=64, rp_trials=3)
    assert r.m_list == (4, 8, 16, 32, 64) and r.dim == 1 + 2 * 64 + 64 * 63 // 2 and r.n_vectors + r.dropped == 40
    assert set(r.distortions["kind"]) == set(rp.PROJECTIONS) and 0 < r.share <= 1
    assert len(r.distortions) == len(rp.PROJECTIONS) * 5 * 3 * r.n_vectors  # kind x m x draw x vector
    # the band's δ is the figures' own: one result serves every δ
    assert not r.summary(0.01).equals(r.summary(0.2))


def test_no_projection_is_refused_in_the_users_words():
    with pytest.raises(ValueError, match="at least one projection"):
        rp.PROJECTION.cost(SPEC, 40, 64, rp_vec="raw", rp_mmax=64, rp_trials=2, rp_kinds=())


def test_the_page_computes_through_admission_once_for_any_delta(run_page, monkeypatch):
    with admission_spy(monkeypatch, [(rp.PROJECTION, rp)]) as calls:
        at = run_page(PAGE, n=40, rp_mmax=64, rp_trials=2)
        assert not at.exception and not error_texts(at) and len(plotly_figures(at)) == 2
        at.number_input(key="rp_delta").set_value(0.2).run()
        assert not at.exception and not error_texts(at)
    assert_computes_admitted(calls, [rp.PROJECTION.key])
    assert len(calls) == 1, calls  # δ changes the figures, not the computation (cached)
