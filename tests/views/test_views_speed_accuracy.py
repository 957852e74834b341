"""The Speed and accuracy view (issue 36's protocol, issue 38 finding 7): its compute is a pure, picklable module-level
function whose result pickles, its cost bounds what it runs, and the page's run goes through the server's admission."""
from __future__ import annotations

import pickle

import pytest

from rkapp import guard
from rkcore.base.admission import Admission
from rkcore.spec import load_view_data
from rkcore.views import all_views, speed_accuracy as sa
from rkcore.views.settings import ViewSpec
from tests.conftest import APP_TIMEOUT, REPO, error_texts, plotly_figures

PAGE = "pages/11_Speed_and_accuracy.py"
SMALL = {"n": 200, "sa_Dmax": 160, "sa_seeds": 3}


def test_compute_pickles_as_itself_and_is_registered():
    assert pickle.loads(pickle.dumps(sa.SPEED.compute)) is sa.compute
    assert all_views()["speed_accuracy"] is sa.SPEED


def test_compute_runs_on_a_small_builtin_dataset_and_its_result_pickles():
    spec = ViewSpec(dataset="breast_cancer", n=120)
    result = sa.SPEED.run(spec, load_view_data("breast_cancer", "l1", 120), sa_seeds=3, sa_Dmax=160)
    again = pickle.loads(pickle.dumps(result))
    assert set(again.runs["contender"]) == set(sa.CONTENDERS)
    assert (again.runs.groupby("contender")["seed"].nunique() == 3).all()  # every method, the exact SVMs too
    assert set(again.timing.times["source"]) == {"measured", "extrapolated"}
    words = sa.sentences(again)
    assert words and all(isinstance(w, str) and w for w in words)


def test_cost_grows_with_n_seeds_and_D():
    spec = ViewSpec()
    small = sa.cost(spec, 200, 20, sa_seeds=3, sa_Dmax=160)
    assert sa.cost(spec, 2000, 20, sa_seeds=3, sa_Dmax=160).seconds > small.seconds
    assert sa.cost(spec, 200, 20, sa_seeds=10, sa_Dmax=160).seconds > small.seconds
    assert sa.cost(spec, 200, 20, sa_seeds=3, sa_Dmax=2560).bytes > small.bytes


def test_regression_targets_are_refused_in_the_users_words():
    with pytest.raises(ValueError, match="needs class labels"):
        sa.SPEED.run(ViewSpec(dataset="movielens_ratings", n=100), load_view_data("movielens_ratings", "l1", 100),
                     sa_seeds=3, sa_Dmax=160)


def test_the_pages_computation_passes_through_admission(monkeypatch, clear_streamlit_cache):
    from streamlit.testing.v1 import AppTest

    admission = Admission(slots=1, budget=2**40)
    monkeypatch.setattr(guard, "ADMISSION", admission)
    monkeypatch.setattr(guard, "LIGHT_SECONDS", 0.0)
    asked, real_request = [], admission.request

    def request(bytes_, seconds=0.0, arrival=None, owner=None):
        asked.append(seconds)
        return real_request(bytes_, seconds, arrival, owner)

    monkeypatch.setattr(admission, "request", request)
    at = AppTest.from_file(str(REPO / PAGE), default_timeout=APP_TIMEOUT * 2)
    for key, value in SMALL.items():
        at.query_params[key] = str(value)
    at.run()
    run = [b for b in at.button if b.key == "speed_accuracy_run"]
    if run:
        run[0].click().run()
    assert not at.exception and not error_texts(at), error_texts(at)
    assert len(plotly_figures(at)) == 2
    assert asked, "the comparison ran without asking the server for a slot"
    assert admission.state()["running"] == 0
