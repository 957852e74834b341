"""The Distributions and variance views (rkcore.views.distributions): each compute is pure and picklable, and the
page runs all three through the server's admission (rkapp.views.run_view and computed), never beside it."""
from __future__ import annotations

import contextlib
import pickle

import numpy as np
import pytest

from rkcore.spec import load_view_data
from rkcore.studies import errors
from rkcore.views import ViewSpec, distributions as dv
from rkcore.views.settings import FIELDS
from tests.conftest import error_texts, plotly_figures

PAGE = "pages/4_Distributions_and_variance.py"
VIEWS = {view.key: view for view in dv.VIEWS}


def _defaults(view) -> dict:
    return {name: FIELDS[name].default for name in view.settings}


def _data(spec: ViewSpec):
    return load_view_data(spec.dataset, spec.normalization, spec.n, target=None, movielens_path="",
                          upload_name=None, upload_bytes=None, movielens_roots=None)


@pytest.mark.parametrize("key", sorted(VIEWS))
def test_the_compute_pickles_as_itself(key):
    view = VIEWS[key]
    assert pickle.loads(pickle.dumps(view.compute)) is view.compute


@pytest.mark.parametrize("key", sorted(VIEWS))
def test_the_compute_runs_on_the_defaults_is_pure_and_its_result_pickles(key):
    view = VIEWS[key]
    spec = ViewSpec(n=20, distributions=("rademacher", "gaussian"))
    settings = dict(_defaults(view), **({"dv_trials": 5} if "dv_trials" in view.settings else {}),
                    **({"dv_vtrials": 50} if "dv_vtrials" in view.settings else {}))
    data = _data(spec)
    before = data.X.copy()
    result = view.run(spec, data, **settings)
    again = pickle.loads(pickle.dumps(result))
    assert np.array_equal(data.X, before), "the data is left as it was"
    twice = view.run(spec, data, **settings)
    for name in result.__dataclass_fields__:
        mine, other, same = getattr(result, name), getattr(again, name), getattr(twice, name)
        if hasattr(mine, "equals"):
            assert mine.equals(other) and mine.equals(same), name
        else:
            assert mine == other == same, name


def test_the_exact_variances_do_not_depend_on_the_seed():
    spec = ViewSpec(n=20, distributions=("rademacher", "gaussian"))
    data = _data(spec)
    first, second = (dv.EXACT.run(dv.without_seed(spec.with_(seed=s)), data, dv_mult=("2", "4")) for s in (1, 2))
    assert first.exact.equals(second.exact) and first.summary.equals(second.summary)


def test_no_multiple_of_d_is_refused_in_the_users_words():
    spec = ViewSpec(n=20)
    with pytest.raises(ValueError, match="Choose at least one multiple of d"):
        dv.STUDY.run(spec, _data(spec), dv_mult=(), dv_trials=5, dv_scrk=True)


def test_the_page_computes_inside_the_servers_admission(run_page, monkeypatch):
    """A spy on rkapp.guard.heavy_work: the error study, the measured pair variances and the exact variances each
    run while a run slot is held."""
    from rkapp import guard

    inside, calls = [False], {"study": [], "pairs": [], "exact": []}

    @contextlib.contextmanager
    def spy_heavy_work(cost=None):
        inside[0] = True
        try:
            yield
        finally:
            inside[0] = False

    def spy(name, real):
        def called(*args, **kwargs):
            calls[name].append(inside[0])
            return real(*args, **kwargs)
        return called

    monkeypatch.setattr(guard, "heavy_work", spy_heavy_work)
    monkeypatch.setattr(errors, "error_study", spy("study", errors.error_study))
    monkeypatch.setattr(dv, "empirical_pair_variance", spy("pairs", dv.empirical_pair_variance))
    monkeypatch.setattr(dv, "exact_pair_variance", spy("exact", dv.exact_pair_variance))
    at = run_page(PAGE, n=30, dv_trials=5, dv_vtrials=50, dv_mult="2,4")
    assert not at.exception and not error_texts(at) and len(plotly_figures(at)) >= 2
    for name, seen in calls.items():
        assert seen and all(seen), f"{name}: computed outside the admission: {seen}"
