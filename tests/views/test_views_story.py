"""The story's views (issue 36): each step's computation is a pure, picklable View whose result pickles, and the
Story page reaches it only through rkapp.views.view_result (cached, admitted to a server slot priced by its cost)."""
from __future__ import annotations

import pickle

import pytest

from rkapp import guard
from rkcore.base.admission import Admission
from rkcore.teaching import story as teaching_story
from rkcore.views import all_views, story
from tests.conftest import APP_TIMEOUT, REPO, error_texts, plotly_figures


@pytest.mark.parametrize("view", story.VIEWS, ids=lambda v: v.key)
def test_compute_pickles_as_itself_and_is_registered(view):
    assert pickle.loads(pickle.dumps(view.compute)) is view.compute
    assert all_views()[view.key] is view
    assert view.cost(story.SPEC, 0, 0).seconds > 0


def test_gram_steps_run_and_pickle():
    steps = pickle.loads(pickle.dumps(story.GRAMS.run(story.SPEC)))
    assert [s.number for s in steps] == [1, 2]
    assert story.shown_step(2, steps).kind == "pair"


def test_the_duel_runs_small_and_pickles(monkeypatch):
    real = teaching_story.duel
    monkeypatch.setattr(teaching_story, "duel", lambda n: real(300))
    result = pickle.loads(pickle.dumps(story.DUEL.run(story.SPEC)))
    step = story.shown_step(5, result)
    assert step.kind == "speed" and "over 3 seeds" in step.sentence and "measured just now" in step.sentence
    assert story.step_data(step) is not None


def _spied(monkeypatch) -> tuple[Admission, list]:
    admission = Admission(slots=1, budget=2**40)
    monkeypatch.setattr(guard, "ADMISSION", admission)
    monkeypatch.setattr(guard, "LIGHT_SECONDS", 0.0)
    asked, real_request = [], admission.request

    def request(bytes_, seconds=0.0, arrival=None, owner=None):
        asked.append(seconds)
        return real_request(bytes_, seconds, arrival, owner)

    monkeypatch.setattr(admission, "request", request)
    return admission, asked


@pytest.mark.parametrize("step", [1, 3])
def test_story_steps_pass_through_admission(monkeypatch, clear_streamlit_cache, step):
    from streamlit.testing.v1 import AppTest

    admission, asked = _spied(monkeypatch)
    at = AppTest.from_file(str(REPO / "pages/0_Story.py"), default_timeout=APP_TIMEOUT * 2)
    at.query_params["story_step"] = str(step)
    at.run()
    assert not at.exception and not error_texts(at) and plotly_figures(at)
    assert story.step_view(step).cost(story.SPEC, 0, 0).seconds in asked, asked  # priced by its own view
    assert admission.state()["running"] == 0
