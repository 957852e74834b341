"""The Error bounds view (rkcore.views.error_bounds): its compute is pure and picklable, the charts' ε, δ and D
are picked from its result without recomputing, and the page runs it through the server's admission."""
from __future__ import annotations

import contextlib
import pickle

import numpy as np

from rkcore.spec import load_view_data
from rkcore.studies import errors
from rkcore.views import ViewSpec, error_bounds
from rkcore.views.settings import FIELDS
from tests.conftest import error_texts, plotly_figures

PAGE = "pages/3_Error_bounds.py"
DEFAULTS = {name: FIELDS[name].default for name in ("eb_trials", *error_bounds.SHOWN)}


def _data(spec: ViewSpec):
    return load_view_data(spec.dataset, spec.normalization, spec.n, target=None, movielens_path="",
                          upload_name=None, upload_bytes=None, movielens_roots=None)


def test_the_compute_pickles_as_itself():
    assert pickle.loads(pickle.dumps(error_bounds.BOUNDS.compute)) is error_bounds.compute


def test_the_compute_runs_on_the_defaults_and_its_result_pickles():
    spec = ViewSpec(n=20)
    result = error_bounds.BOUNDS.run(spec, _data(spec), eb_trials=DEFAULTS["eb_trials"])
    again = pickle.loads(pickle.dumps(result))
    assert again.study.equals(result.study) and again.measured.equals(result.measured)
    assert (again.n, again.d, again.R, again.degree) == (result.n, result.d, result.R, result.degree)
    # the tail probabilities are probabilities, one row per (D, ε) of the study's grids
    assert set(again.measured["D"]) == set(error_bounds.D_GRID)
    assert np.all((again.measured["prob"] >= 0) & (again.measured["prob"] <= 1))


def test_the_compute_is_pure_and_the_shown_settings_recompute_nothing():
    """Same settings, same study (the seed is the spec's); the charts' ε, δ and D only pick from it."""
    spec = ViewSpec(n=20)
    data = _data(spec)
    before = data.X.copy()
    first, second = error_bounds.compute(spec, data, eb_trials=5), error_bounds.compute(spec, data, eb_trials=5)
    assert np.array_equal(data.X, before) and first.study.equals(second.study)
    shown = [error_bounds.bounds_at(first, eps=e, delta=0.05, D=64) for e in (1e-3, 1e-2)]
    assert not shown[0].bounds_D.equals(shown[1].bounds_D) and shown[0].max_error == shown[1].max_error


def test_the_page_computes_inside_the_servers_admission(run_page, monkeypatch):
    """A spy on rkapp.guard.heavy_work: the page's error study runs while a run slot is held."""
    from rkapp import guard

    inside, calls = [False], []
    real_study = errors.error_study

    @contextlib.contextmanager
    def spy_heavy_work(cost=None):
        inside[0] = True
        try:
            yield
        finally:
            inside[0] = False

    def spy_study(*args, **kwargs):
        calls.append(inside[0])
        return real_study(*args, **kwargs)

    monkeypatch.setattr(guard, "heavy_work", spy_heavy_work)
    monkeypatch.setattr(errors, "error_study", spy_study)
    at = run_page(PAGE, n=20, eb_trials=5)
    assert not at.exception and not error_texts(at) and plotly_figures(at)
    assert calls and all(calls), f"the error study ran outside the admission: {calls}"
