"""The Compositional kernels view (rkcore.views.compositional): picklable, pure, admitted."""
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


def test_view_functions_pickle():
    assert_functions_pickle(ck.COMPOSITIONAL)


@pytest.mark.parametrize("preset", list(ck.PRESETS))
def test_compositional_runs_on_the_defaults_and_pickles(preset):
    r = run_and_pickle(ck.COMPOSITIONAL, SPEC, ck_preset=preset, ck_Dmax=64, ck_trials=2, ck_Dgram=32)
    assert r.K_small.shape == (40, 40) and r.block == 1 and (r.n, r.d) == (40, 64)
    assert np.allclose(np.diag(r.K_small), 1.0, rtol=1e-9)  # normalized kernels: k(x, x) = 1
    assert 0 < r.relative_error < 10 and (r.codes is not None) == bool(ck.PRESETS[preset].n_categories)
    assert set(r.curves["D"]) == {16, 32, 64} and set(r.curves["dedup"]) == {"none", "unbiased"}


def test_no_mode_draws_the_gram_view_and_refuses_the_curves():
    r = run_and_pickle(ck.COMPOSITIONAL, SPEC, ck_Dmax=64, ck_trials=2, ck_Dgram=32, ck_modes=())
    assert r.curves is None and r.features is not None
    with pytest.raises(ValueError, match="de-duplication mode"):
        r.summary("rel_fro")


def test_the_page_computes_through_admission(run_page, monkeypatch):
    with admission_spy(monkeypatch, [(ck.COMPOSITIONAL, ck)]) as calls:
        at = run_page(PAGE, n=40, ck_Dmax=64, ck_trials=2, ck_Dgram=32)
    assert not at.exception and not error_texts(at) and len(plotly_figures(at)) == 5
    assert_computes_admitted(calls, [ck.COMPOSITIONAL.key])
