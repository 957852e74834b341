"""The Timing view (rkcore/views/timing.py): its compute is pure and picklable, runs on the default settings, and
the page's timings pass through the server's admission; the complexity formula comes from the registry."""
from __future__ import annotations

import pickle
from dataclasses import replace

import pytest

from rkapp import guard
from rkcore.base.admission import Admission
from rkcore.registry import MAPS
from rkcore.views import FIELDS, ViewSpec, all_views, timing

PAGE = "pages/5_Timing.py"
#: The defaults with n = 10 samples and one repeat: the same maps and sweeps in well under a second.
SMALL = {**{name: FIELDS[name].default for name in timing.SETTINGS}, "tm_n": 10, "tm_rep": 1}
TINY_QUERY = dict(tm_maps="rk,scrk", tm_d="8,16", tm_Dfix="32", tm_D="16,32", tm_dfix="8", tm_n=10, tm_rep=1)


def test_the_view_is_registered_and_its_functions_pickle():
    assert all_views()["tm"] is timing.TIMING and timing.TIMING.measure and not timing.TIMING.needs_data
    for function in (timing.TIMING.compute, timing.TIMING.cost, timing.TIMING.reproduce):
        assert pickle.loads(pickle.dumps(function)) is function


def test_compute_on_the_defaults_returns_a_picklable_tidy_result():
    result = timing.TIMING.run(ViewSpec(), None, **SMALL)
    back = pickle.loads(pickle.dumps(result))
    assert back.times.equals(result.times) and back.load == result.load
    assert set(result.times["map"]) == set(SMALL["tm_maps"]) and set(result.times["sweep"]) == {"d", "D"}
    assert sorted(result.along("d")["d"].unique()) == [int(v) for v in SMALL["tm_sweep_n_features"]]
    assert (result.times["seconds"] > 0).all()
    assert set(result.slopes()["along"]) == {"d", "D"} and "Measured on this run" in result.note()


def test_bad_settings_are_refused_in_the_users_words():
    with pytest.raises(ValueError, match="at least one map"):
        timing.cost(ViewSpec(), 0, 0, **{**SMALL, "tm_maps": ()})
    with pytest.raises(ValueError, match="two values of d"):
        timing.cost(ViewSpec(), 0, 0, **{**SMALL, "tm_sweep_n_features": ("128",)})
    with pytest.raises(ValueError, match="not an allowed choice"):
        timing.TIMING.checked({**SMALL, "tm_rep": 4})


def test_the_complexity_formula_comes_from_the_registry(monkeypatch):
    """A map added to the registry shows its own complexity, with no edit of the page or the view."""
    toy = replace(MAPS["rk"], key="toy_complexity", short_label="Toy", time_complexity=r"O(D^3)")
    monkeypatch.setitem(MAPS, "toy_complexity", toy)
    latex = timing.complexity_latex(["rk", "toy_complexity"])
    assert latex == r"\text{RK: } O(D\,d\,m)\qquad \text{Toy: } O(D^3)"
    assert r"\text{Toy: } O(D^3)" in timing.complexity_latex([])  # no map chosen: every registered map


def test_the_page_shows_the_chosen_maps_complexity(run_page):
    at = run_page(PAGE, tm_maps="rk,rff")
    shown = " ".join(str(f.value) for f in at.get("latex"))
    assert r"\text{RK: } " + MAPS["rk"].time_complexity in shown, shown
    assert r"\text{RFF: } " + MAPS["rff"].time_complexity in shown and "SCRK" not in shown, shown


def test_the_page_timings_pass_through_admission(run_page, monkeypatch):
    """The timings run only inside a server slot: a page calling compute directly, bypassing run_view, fails this."""
    admission = Admission(slots=1, budget=2**40)
    monkeypatch.setattr(guard, "ADMISSION", admission)
    monkeypatch.setattr(guard, "LIGHT_SECONDS", 0.0)
    running, real = [], timing.time_maps

    def spy(*args, **kwargs):
        running.append(admission.state()["running"])
        return real(*args, **kwargs)

    monkeypatch.setattr(timing, "time_maps", spy)
    at = run_page(PAGE, **TINY_QUERY)
    assert not running, "a measurement runs only on its button"
    at.button(key="tm_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert running == [1, 1], running  # both sweeps, each while the page's run held the slot
    assert admission.state()["running"] == 0  # the slot given back
