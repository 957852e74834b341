"""The server's admission of heavy runs (rkapp.guard.ADMISSION, rkcore.base.admission.Admission) with real page
runs: two sessions (two AppTests in two threads, one process, as two students on one server), a run
that raises, a run larger than the whole server, and estimates that do not follow a load spike."""
from __future__ import annotations

import threading
import time

import pytest

from rkapp import guard
from rkcore.studies import costs
from rkcore.studies import errors as experiments
from rkcore.base.admission import Admission
from tests.conftest import REPO, APP_TIMEOUT, error_texts, estimate_texts, plotly_figures

DIST = "pages/4_Distributions_and_variance.py"
SMALL = dict(n=60, dv_trials=5, dv_vtrials=50)
METHODS = [("rk", "rademacher"), ("rk", "gaussian"), ("rk", "uniform"), ("rk", "laplace"), ("scrk", None)]  # a few tenths of a second: heavy, never waiting for a button


def _app(seed: int):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / DIST), default_timeout=APP_TIMEOUT)
    for key, value in dict(SMALL, seed=seed).items():
        at.query_params[key] = str(value)
    return at


@pytest.fixture
def one_slot(monkeypatch, clear_streamlit_cache):
    """A server with one run slot, every run heavy (none skips the line)."""
    admission = Admission(slots=1, budget=2**40)
    monkeypatch.setattr(guard, "ADMISSION", admission)
    monkeypatch.setattr(guard, "LIGHT_SECONDS", 0.0)
    return admission


def _requests_while(monkeypatch, admission: Admission) -> list[tuple[float, object]]:
    """(seconds asked for, ticket) of every admission request of a page run (each one a heavy run)."""
    asked, real_request = [], admission.request

    def request(bytes_, seconds=0.0, arrival=None, owner=None):
        ticket = real_request(bytes_, seconds, arrival, owner)
        asked.append((seconds, ticket))
        return ticket

    monkeypatch.setattr(admission, "request", request)
    return asked


def test_a_second_session_waits_for_the_slot_shows_its_place_and_proceeds(one_slot, monkeypatch):
    studies, first_inside, places = [], threading.Event(), []
    real_study, real_place = experiments.error_study, guard._show_place

    def slow_study(*args, **kwargs):  # the first session's study holds the slot for a while
        started = time.monotonic()
        if not first_inside.is_set():
            first_inside.set()
            deadline = time.monotonic() + 30
            while not one_slot.state()["waiting"] and time.monotonic() < deadline:
                time.sleep(0.05)  # until the second session stands in line
            time.sleep(1.5)  # long enough for its notice (after QUEUE_POLL_SECONDS)
        out = real_study(*args, **kwargs)
        studies.append((started, time.monotonic()))
        return out

    def place(slot, ticket, shown=None):
        places.append(one_slot.position(ticket))
        return real_place(slot, ticket, shown)

    monkeypatch.setattr(experiments, "error_study", slow_study)  # the page imports it at each run
    monkeypatch.setattr(guard, "_show_place", place)
    first, second = _app(seed=1), _app(seed=2)  # different seeds: no shared cache entry
    runner = threading.Thread(target=first.run)
    runner.start()
    assert first_inside.wait(30)
    assert one_slot.state()["running"] == 1
    second.run()  # waits in line until the first session's runs are done
    runner.join(60)
    for at in (first, second):
        assert not at.exception and not error_texts(at), error_texts(at)
        assert plotly_figures(at), "both students get their charts"
    assert places and places[0] == 1, "the waiting session was shown its place in line"
    (a_start, a_end), (b_start, b_end) = sorted(studies)
    assert b_start >= a_end, "the second study started only after the first released the slot"
    assert one_slot.state() == {"running": 0, "waiting": 0, "bytes": 0, "slots": 1, "budget": 2**40}


def test_the_place_in_line_is_shown_in_place():
    admission = Admission(slots=2, budget=100)
    holders = [admission.request(10, 3.0), admission.request(10, 3.0)]
    waiting = [admission.request(10, 2.0), admission.request(10, 2.0)]
    shown = []

    class Slot:
        def info(self, text, icon=None):
            shown.append(text)

    original = guard.ADMISSION
    guard.ADMISSION = admission
    try:
        drawn = guard._show_place(Slot(), waiting[1])
        assert guard._show_place(Slot(), waiting[1], drawn) == drawn and len(shown) == 1, "unchanged: not redrawn"
        admission.release(holders.pop())
        guard._show_place(Slot(), waiting[1], drawn)  # one run less ahead: redrawn at once
    finally:
        guard.ADMISSION = original
    assert "1 run(s) of other students ahead of you" in shown[0] and "2 run slots" in shown[0] and "(about 4 s)" in shown[0], shown
    assert len(shown) == 2 and "you are next" in shown[1], shown
    for t in holders + waiting:
        admission.release(t)


def test_a_raising_run_releases_its_slot(one_slot, monkeypatch):
    def broken(*args, **kwargs):
        assert one_slot.state()["running"] == 1
        raise RuntimeError("numerics failed")

    monkeypatch.setattr(experiments, "error_study", broken)
    at = _app(seed=3).run()
    assert not at.exception
    assert any("Something went wrong while computing the distribution study" in e for e in error_texts(at))
    assert one_slot.state()["running"] == 0 and one_slot.state()["waiting"] == 0
    monkeypatch.undo()  # the real engine again; the slot is free, so the next run gets it at once
    monkeypatch.setattr(guard, "ADMISSION", one_slot)
    monkeypatch.setattr(guard, "LIGHT_SECONDS", 0.0)
    at = _app(seed=3).run()
    assert not at.exception and plotly_figures(at) and not error_texts(at)


def test_a_run_larger_than_the_whole_server_is_refused_clearly(monkeypatch, clear_streamlit_cache):
    monkeypatch.setattr(guard, "ADMISSION", Admission(slots=2, budget=10 * 2**20))
    at = _app(seed=4).run()
    assert not at.exception and not plotly_figures(at)
    refusals = [e for e in error_texts(at) if "allowed per view" in e]
    assert refusals and "10.0 MB" in refusals[0], error_texts(at)
    with pytest.raises(ValueError, match="this server gives all runs at once"):
        guard.ADMISSION.request(11 * 2**20)


def test_a_load_spike_never_takes_the_charts_away(monkeypatch, clear_streamlit_cache):
    """The speed probe reads 16x (a spike): the estimate, and so the decision to run, stay those of the
    cost models; the same settings give the same estimate on every rerun."""
    monkeypatch.delenv(costs.SPEED_FACTOR_ENV)
    monkeypatch.setattr(costs.speed, "probe_seconds", lambda rounds=20: 100 * costs.PROBE_REFERENCE_SECONDS)
    costs.speed._speed_cache.clear()
    assert costs.speed_factor() == costs.MAX_SPEED_FACTOR
    at = _app(seed=5)
    at.query_params["dv_trials"] = "10"
    at.query_params["n"] = "200"  # the page's defaults: well under the 2 s of an auto-run, but not 16x that
    at.run()
    assert not at.exception and not error_texts(at)
    assert plotly_figures(at) and not [w for w in estimate_texts(at) if "press the button" in w]
    estimate = costs.error_study_cost(200, 20, "anova", 2, [40, 80, 160, 320], METHODS, 10)
    assert estimate == costs.error_study_cost(200, 20, "anova", 2, [40, 80, 160, 320], METHODS, 10)
    monkeypatch.setenv(costs.SPEED_FACTOR_ENV, "2")  # a slower host, set by whoever starts the server
    assert costs.error_study_cost(200, 20, "anova", 2, [40, 80, 160, 320], METHODS, 10).seconds == pytest.approx(
        2 * estimate.seconds)


def test_a_page_run_queues_once_for_all_its_heavy_functions(one_slot, monkeypatch):
    """The Distributions page runs four heavy functions; after the first was admitted, the next ones keep
    the run's place in line (ahead of runs that arrived later), instead of queueing again at the back."""
    tickets = _requests_while(monkeypatch, one_slot)
    at = _app(seed=6).run()
    assert not at.exception and plotly_figures(at) and not error_texts(at)
    arrivals = [ticket.arrival for _, ticket in tickets]
    assert len(arrivals) >= 3 and len(set(arrivals)) == 1, arrivals
    owners = {ticket.owner for _, ticket in tickets}  # fair shares are by student: every ticket names its owner
    assert len(owners) == 1 and next(iter(owners)).startswith("session:"), owners  # AppTest sends no cookie


@pytest.mark.parametrize("page, params, heavy", [
    ("pages/7_Kernel_trick.py", dict(kt_kind="polynomial", kt_dmax="16", kt_n="40"), 1),  # the timings
    ("pages/8_Random_Fourier_features.py", dict(n="100", rff_strials="5", rff_struct="true", rff_mult="1,4"), 3),  # curve, structured maps, timings
])
def test_timings_and_studies_outside_the_run_protocol_pages_wait_for_a_slot(one_slot, monkeypatch, page, params,
                                                                             heavy):
    """The Kernel trick's timings and the RFF page's structured maps hold a server slot while they compute
    (issue 26: every heavy run shares the server's slots, not only the study pages')."""
    from streamlit.testing.v1 import AppTest

    asked = _requests_while(monkeypatch, one_slot)
    at = AppTest.from_file(str(REPO / page), default_timeout=APP_TIMEOUT)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception and not error_texts(at) and plotly_figures(at)
    assert len(asked) >= heavy, f"{len(asked)} of the page's {heavy} heavy computations asked for a server slot"
    assert one_slot.state()["running"] == 0 and not one_slot.state()["waiting"]  # every slot given back


def test_the_story_duel_waits_for_a_slot_priced_by_its_cost_model(one_slot, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from rkcore.teaching import story

    real_duel = story.duel
    monkeypatch.setattr(story, "duel", lambda n: real_duel(300))  # the page's 8,000 points take 10-30 s
    asked = _requests_while(monkeypatch, one_slot)
    at = AppTest.from_file(str(REPO / "pages/0_Story.py"), default_timeout=APP_TIMEOUT)
    at.query_params["story_step"] = "5"
    at.run()
    assert not at.exception and not error_texts(at) and plotly_figures(at)
    assert story.duel_cost(8000).seconds in [seconds for seconds, _ in asked], asked  # its own estimate
    assert one_slot.state()["running"] == 0


# ---------------------------------------------------------------------------- fair shares per student (issue 37, 2)
def test_one_student_with_six_tabs_cannot_make_another_wait_behind_all_of_them():
    """Issue 37, finding 2: one browser, 6 tabs each pressing Run (10 s each); another student's run
    waits for at most the run already going, not behind the 6 (round robin across owners, one heavy run
    per owner at a time)."""
    admission = Admission(slots=1, budget=2**40)
    tabs = [admission.request(10, 10.0, owner="alice") for _ in range(6)]
    assert tabs[0].admitted and not any(t.admitted for t in tabs[1:])
    bob = admission.request(10, 0.2, owner="bob")
    assert admission.position(bob) == 1, "bob is next, ahead of alice's five waiting tabs"
    assert admission.ahead(bob) == (0, 0)
    assert admission.expected_wait(bob) == pytest.approx(10.0, abs=0.5), "only alice's running run is ahead"
    assert admission.ahead(tabs[1]) == (1, 1), "alice's second tab: her own first tab, then bob"
    admission.release(tabs[0])
    assert bob.admitted and not tabs[1].admitted
    for t in [bob, *tabs]:
        admission.release(t)
    assert admission.state()["running"] == admission.state()["waiting"] == 0


def test_a_student_holds_one_slot_at_a_time_leaving_the_others_to_the_class():
    admission = Admission(slots=2, budget=2**40)
    tabs = [admission.request(10, 10.0, owner="alice") for _ in range(6)]
    assert sum(t.admitted for t in tabs) == 1, "one heavy run per student at a time"
    bob = admission.request(10, 0.2, owner="bob")
    assert bob.admitted, "the second slot is free for another student at once"
    carol, dave = admission.request(10, 1.0, owner="carol"), admission.request(10, 1.0, owner="dave")
    admission.release(bob)
    assert carol.admitted and not dave.admitted and not any(t.admitted for t in tabs[1:])
    admission.release(next(t for t in tabs if t.admitted))  # alice's run ends: dave (first round) before her second tab
    assert dave.admitted and not any(t.admitted for t in tabs[1:])
    for t in [carol, dave, *tabs]:
        admission.release(t)


def test_the_place_in_line_names_the_students_own_runs(monkeypatch):
    admission = Admission(slots=1, budget=2**40)
    monkeypatch.setattr(guard, "ADMISSION", admission)
    first, second = admission.request(10, 3.0, owner="alice"), admission.request(10, 3.0, owner="alice")
    bob = admission.request(10, 3.0, owner="bob")
    text = guard._place_text(second)
    assert "your other tab's run" in text and "1 run(s) of other students" in text, text
    assert "you are next" in guard._place_text(bob), guard._place_text(bob)
    for t in (first, second, bob):
        admission.release(t)


def test_the_runs_per_student_are_a_setting():
    admission = Admission(slots=3, budget=2**40, per_owner=2)
    tabs = [admission.request(10, 1.0, owner="alice") for _ in range(4)]
    assert [t.admitted for t in tabs] == [True, True, False, False]
    assert admission.request(10, 1.0, owner="bob").admitted
    with pytest.raises(ValueError, match="one run per owner"):
        Admission(slots=1, budget=1, per_owner=0)
