"""The Timing view (rkcore/views/timing.py): its compute is pure and picklable, runs on the default settings, and
the page's timings pass through the server's admission; the complexity formula comes from the registry."""
from __future__ import annotations

import pickle
from dataclasses import replace

import numpy as np
import pandas as pd
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
    assert len(running) >= 2 and set(running) == {1}, running  # both sweeps (and any repeats) inside the slot
    assert admission.state()["running"] == 0  # the slot given back


# ---------------------------------------------------------------------------- repeat until stable (issue 38, 8)
def _fake_time_maps(first: list[float], later: list[float], calls: list):
    """A time_maps whose single repeats have the given slopes: ``first`` for the requested repeats, then one
    slope of ``later`` per extra call (time = 1e-6 * x^slope: exact power laws, no machine involved)."""
    def fake(maps, d_values, D_values, n_values, *, kernel_degree, repeats, warmup, random_state, progress=None):
        along, values = ("d", d_values) if len(d_values) > 1 else ("D", D_values)
        calls.append((tuple(maps), along, repeats, warmup))
        slopes = first if repeats > 1 else [later[min(sum(c[1] == along and c[2] == 1 for c in calls) - 1,
                                                      len(later) - 1)]]
        rows = []
        for key in maps:
            for r, slope in enumerate(slopes[:repeats]):
                for x in values:
                    d, D = (x, D_values[0]) if along == "d" else (d_values[0], x)
                    for phase, seconds in (("fit", 1e-4), ("transform", 1e-6 * x ** slope)):
                        rows.append({"map": key, "d": d, "D": D, "n": n_values[0], "repeat": r, "phase": phase,
                                     "seconds": seconds})
        return pd.DataFrame(rows)
    return fake


SWEEP = {**SMALL, "tm_maps": ("rk",), "tm_rep": 5}


def test_slopes_that_disagree_are_repeated_until_stable(monkeypatch):
    """On a busy machine the first repeats disagree: the timings repeat that slope (one repeat per cell at a time)
    until its standard error is small, instead of telling the reader to come back when the machine is quieter."""
    calls = []
    monkeypatch.setattr(timing, "time_maps", _fake_time_maps([0.8, 1.2, 1.0, 1.0, 1.0], [1.0], calls))
    monkeypatch.setattr(timing.os, "getloadavg", lambda: (6.3, 0, 0))  # busy, yet the slopes agree once repeated
    result = timing.compute(ViewSpec(), None, **SWEEP)
    extra = [c for c in calls if c[2] == 1]
    # slopes 0.8, 1.2, 1, 1, 1: standard error 0.063; with a 6th at 1: 0.052; a 7th: 0.044 <= 0.05, stable
    assert [(c[1], c[3]) for c in extra] == [("d", 0), ("D", 0), ("d", 0), ("D", 0)], calls
    errors = timing.slope_errors(result.times)
    assert errors["stable"].tolist() == [True, True] and errors["repeats"].tolist() == [7, 7]
    assert errors["standard_error"].max() == pytest.approx(np.std([0.8, 1.2, 1, 1, 1, 1, 1], ddof=1) / np.sqrt(7))
    note = result.note()
    assert "rough" not in note and "quieter" not in note and "Unreliable" not in note, note


def test_slopes_that_keep_disagreeing_are_said_rough_in_plain_words(monkeypatch):
    calls = []
    monkeypatch.setattr(timing, "time_maps", _fake_time_maps([0.5, 1.5, 0.5, 1.5, 1.0], [0.5, 1.5] * 3, calls))
    monkeypatch.setattr(timing.os, "getloadavg", lambda: (6.3, 0, 0))
    monkeypatch.setattr(timing.os, "cpu_count", lambda: 2)
    result = timing.compute(ViewSpec(), None, **SWEEP)
    assert len([c for c in calls if c[2] == 1]) == 2 * SWEEP["tm_rep"], "at most tm_rep extra repeats, as priced"
    note = result.note()
    assert ("Read these slopes as rough: the single repeats still disagree for RK in d, RK in D after 10 repeats and "
            "the machine was busy (load 6.3 on 2 cores), so other work took a different share of the processor in "
            "each repeat.") in note, note
    assert "more repeats narrow" not in note and "quieter" not in note, note  # no advice the page did not follow


def test_the_cost_prices_the_extra_repeats():
    plain = timing.checked_sweep(**SWEEP).cost()
    priced = timing.cost(ViewSpec(), 0, 0, **SWEEP)
    assert priced.bytes == plain.bytes
    assert priced.seconds == pytest.approx(plain.seconds * (1 + SWEEP["tm_rep"] / (1 + SWEEP["tm_rep"])))
    assert "at most as many repeats again where they disagree" in [name for name, _, _ in priced.sections]
