"""The Compositional kernels views (rkcore.views.compositional): picklable, pure, admitted; the Gram view's D
recomputes the one estimate, not the curves."""
from __future__ import annotations

import numpy as np
import pytest

from rkcore.views import ViewSpec, compositional as ck
from tests.conftest import error_texts, plotly_figures
from tests.views.view_contract import (
    admission_spy, assert_computes_admitted, assert_functions_pickle, run_and_pickle,
)

PAGE = "pages/10_Compositional_kernels.py"
SPEC = ViewSpec(dataset="digits", n=40)


@pytest.mark.parametrize("view", ck.VIEWS, ids=lambda v: v.key)
def test_view_functions_pickle(view):
    assert_functions_pickle(view)


@pytest.mark.parametrize("preset", list(ck.PRESETS))
def test_compositional_runs_on_the_defaults_and_pickles(preset):
    r = run_and_pickle(ck.COMPOSITIONAL_GRAM, SPEC, ck_preset=preset, ck_Dgram=32)
    assert r.K_small.shape == (40, 40) and r.block == 1 and (r.n, r.d) == (40, 64)
    assert np.allclose(np.diag(r.K_small), 1.0, rtol=1e-9)  # normalized kernels: k(x, x) = 1
    assert 0 < r.relative_error < 10 and (r.codes is not None) == bool(ck.PRESETS[preset].n_categories)
    curves = run_and_pickle(ck.COMPOSITIONAL_CURVES, SPEC, ck_preset=preset, ck_Dmax=64, ck_trials=2)
    assert set(curves["D"]) == {16, 32, 64} and set(curves["dedup"]) == {"none", "unbiased"}


def test_no_mode_is_refused_in_the_users_words():
    with pytest.raises(ValueError, match="de-duplication mode"):
        ck.COMPOSITIONAL_CURVES.cost(SPEC, 40, 64, ck_preset="shallow", ck_Dmax=64, ck_trials=2, ck_modes=())


def test_the_page_reproduce_code_is_the_gram_estimate_then_the_curves():
    code = ck.reproduce(SPEC, ck_preset="deep", ck_Dmax=64, ck_trials=2, ck_modes=("none",), ck_Dgram=32,
                        ck_metric="max_abs_error")
    gram = ck.gram_reproduce(SPEC, ck_preset="deep", ck_Dgram=32)
    assert "CompositionalFeatures(skel, 32, dedup='unbiased', random_state=0)" in code and "[16, 32, 64]" in code
    assert "'max_abs_error'" in code and "CompositionalFeatures(skel, 32," in gram and "error_curve" not in gram


def test_the_page_computes_through_admission_and_d_gram_redraws_only_the_estimate(run_page, monkeypatch):
    with admission_spy(monkeypatch, [(view, ck) for view in ck.VIEWS]) as calls:
        at = run_page(PAGE, n=40, ck_Dmax=64, ck_trials=2, ck_Dgram=32)
        assert not at.exception and not error_texts(at) and len(plotly_figures(at)) == 5
        at.select_slider(key="ck_Dgram").set_value(64).run()
        assert not at.exception and not error_texts(at)
    assert_computes_admitted(calls, [view.key for view in ck.VIEWS])
    assert [key for key, _ in calls] == ["ck", "ck_curves", "ck"], calls
