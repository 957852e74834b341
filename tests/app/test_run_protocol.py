"""The one run protocol (rkapp.guard.run_or_wait): cheap views run at once, long ones wait for their
button with the estimate above it (gone once the results show), runs beyond the ceiling are refused
with the largest settings that fit; the issue's runaway cases never start computing."""
from __future__ import annotations

import re

import numpy as np
import pytest

from rkcore.studies import costs
from tests.conftest import error_texts, estimate_texts, plotly_figures

DIST = "pages/4_Distributions_and_variance.py"


def _estimates(at) -> list[str]:
    return [w for w in estimate_texts(at) if "press the button" in w]


def test_long_run_waits_for_its_button_and_the_estimate_goes_away(run_page):
    at = run_page(DIST, n=300, dv_trials=20, dv_vtrials=1000)  # both sections: about 3 s at speed factor 1
    assert not at.exception
    assert _estimates(at) and not plotly_figures(at)
    assert "pair variances" in _estimates(at)[0], "the estimate covers every section"
    at.button(key="dv_run").click().run()
    assert not at.exception and not error_texts(at), error_texts(at)
    assert plotly_figures(at) and not _estimates(at)
    at.run()  # a rerun with the same settings shows the cached results, no button
    assert plotly_figures(at) and not _estimates(at)


#: An amount of memory as format_bytes writes it.
MEMORY = re.compile(r"\d[\d.,]* (?:B|KB|MB|GB|TB|PB)\b")


def _state_the_cost_once_in_a_neutral_colour(at) -> str:
    """Issue 38, finding 8: the estimate was a yellow warning stating the memory twice ("... and 40 MB of memory
    (error study: about 2 s, 40 MB; ...)"); it is plain text with one amount of memory, the parts on the button's
    hover help."""
    assert not [w for w in (e.value for e in at.warning) if "press the button" in w], "a cost is not a warning"
    (estimate,) = _estimates(at)
    assert len(MEMORY.findall(estimate)) == 1, estimate
    assert len(re.findall(r"about [\d.,]+ s|under 1 s", estimate)) == 1, estimate
    return estimate


def test_the_estimate_states_the_cost_once_in_a_neutral_colour(run_page):
    at = run_page(DIST, n=300, dv_trials=20, dv_vtrials=1000)  # two sections
    estimate = _state_the_cost_once_in_a_neutral_colour(at)
    assert "(error study, pair variances and exact variances)" in estimate, estimate  # what it covers, named once
    button = at.button(key="dv_run")
    assert "error study: about" in button.help and "pair variances: about" in button.help, button.help


@pytest.mark.parametrize("page, key", [(TIMING_PAGE := "pages/5_Timing.py", "tm"),
                                       ("pages/6_Classifiers.py", "cl")])
def test_a_measurement_states_its_cost_once_in_a_neutral_colour(run_page, page, key):
    query = (dict(tm_maps="rk,scrk", tm_d="8,16", tm_Dfix="32", tm_D="16,32", tm_dfix="8", tm_n=10, tm_rep=1)
             if page == TIMING_PAGE else dict(n=80, cl_methods="kernel_svm,rk", cl_mult="1,2", cl_trials=1))
    at = run_page(page, **query)
    _state_the_cost_once_in_a_neutral_colour(at)
    at.button(key=f"{key}_run").click().run()
    at.run()  # at the same settings: the kept result and a short note of the cost
    (again,) = [c.value for c in at.caption if "measuring again" in c.value]
    assert len(MEMORY.findall(again.replace("\\", ""))) == 1, again


def test_a_busy_server_shows_in_the_estimate(run_page, monkeypatch):
    """Other sessions' runs waiting for the server's slots show in the estimate (its numbers stay those of the
    cost models: the same settings, the same estimate and decision); RKCORE_SPEED_FACTOR = 3 (a slower
    host) triples the estimate."""
    from rkapp import guard
    from rkcore.base.admission import Admission

    quiet = _estimates(run_page(DIST, n=300, dv_trials=20, dv_vtrials=1000))[0]
    assert "server is busy" not in quiet
    admission = Admission(slots=1, budget=2**40)
    holder, waiter = admission.request(1), admission.request(1)
    monkeypatch.setattr(guard, "ADMISSION", admission)
    at = run_page(DIST, n=300, dv_trials=20, dv_vtrials=1000)
    assert not at.exception and not plotly_figures(at)
    busy = _estimates(at)[0]
    assert "server is busy: 1 run(s) of other sessions wait for one of its 1 run slots" in busy, busy
    assert busy.split(" It runs")[0] == quiet.split(" It runs")[0], "the estimate itself does not follow the load"
    admission.release(waiter)
    admission.release(holder)
    monkeypatch.setenv(costs.SPEED_FACTOR_ENV, "3")
    slow = _estimates(run_page(DIST, n=300, dv_trials=20, dv_vtrials=1000))[0]
    def study_seconds(text: str) -> tuple[float, float]:
        """(the estimate, half its last digit): shown to one significant digit (format_estimate)."""
        value = float(re.search(r"takes about ([\d.,]+) s", text).group(1).replace(",", ""))
        return value, 0.5 * 10 ** np.floor(np.log10(value))

    (q, q_half), (s, s_half) = study_seconds(quiet), study_seconds(slow)
    assert abs(s - 3 * q) <= s_half + 3 * q_half, (quiet, slow)


@pytest.mark.parametrize("page, query", [
    ("pages/1_Gram_matrices.py", dict(n=5000, D=65536)),
    ("pages/8_Random_Fourier_features.py", dict(n=5000, rff_Dmax=16384, rff_trials=50)),
    ("pages/9_Random_projections.py", dict(n=5000, rp_trials=100, rp_mmax=4096)),
    ("pages/10_Compositional_kernels.py", dict(n=5000, ck_trials=40, ck_Dmax=4096)),
    (DIST, dict(n=5000, dv_trials=100, dv_vtrials=1000)),
])
def test_runaway_settings_are_refused_with_what_fits(run_page, page, query):
    at = run_page(page, timeout=60, **query)
    assert not at.exception
    refusals = [e for e in error_texts(at) if "allowed per view" in e]
    assert refusals and "fits" in refusals[0], error_texts(at)
    assert not plotly_figures(at) or page.endswith("Compositional_kernels.py")  # its activation chart is static


def test_issue_cases_wait_or_are_refused(run_page):
    # Gram at n = 5,000 and RFF at n = 5,000, D = 16,384, 2 trials: never computed without a click
    for page, query in (("pages/1_Gram_matrices.py", dict(n=5000)),
                        ("pages/8_Random_Fourier_features.py", dict(n=5000, rff_Dmax=16384, rff_trials=2))):
        at = run_page(page, **query)
        assert not at.exception
        assert _estimates(at) or any("allowed per view" in e for e in error_texts(at)), (page, error_texts(at))
        assert not plotly_figures(at)


def test_costs_add_sections_and_grow_with_size():
    a = costs.gram_view_cost(100, 10, 64, "anova", 2, "rk")
    b = costs.rff_curve_cost(100, 10, [16, 32], 2)
    total = a + b
    assert total.seconds == pytest.approx(a.seconds + b.seconds) and total.bytes == max(a.bytes, b.bytes)
    assert len(total.sections) == 2
    assert costs.gram_view_cost(2000, 10, 64, "anova", 2, "rk").seconds > a.seconds


def test_all_subsets_cost_counts_the_extended_precision_path():
    """Past ~1,500 shared columns the exact all-subsets Gram multiplies in long double (about 4x per
    entry and column, fastpaths._extended_products): the estimate must say so, or the guard lets a
    run through that takes minutes."""
    per_column = [costs.exact_kernel_seconds(200, 200, d, 2, "all_subsets") / d for d in (1000, 1500, 1600, 4000)]
    assert per_column[1] == pytest.approx(per_column[0], rel=0.01)
    assert per_column[2] > 3.5 * per_column[1]
    assert per_column[3] == pytest.approx(per_column[2], rel=0.01)


def test_speed_factor_is_pinned_clamped_and_cached(monkeypatch):
    """Every estimate is the quiet-machine model times costs.estimate_factor(): RKCORE_SPEED_FACTOR (a slower
    or faster host; conftest pins 1), else 1, never the probe (issue 26: a spike of the probe took students'
    charts away). costs.speed_factor() (the probe over its quiet-machine time, clamped, reused for
    SPEED_CACHE_SECONDS) is what the estimates benchmark compares with the load."""
    assert costs.speed_factor() == 1.0 and costs.estimate_factor() == 1.0  # pinned by conftest

    def gram() -> float:
        return costs.gram_view_cost(2000, 78, 1024, "anova", 2, "rk").seconds

    quiet = gram()
    monkeypatch.setenv(costs.SPEED_FACTOR_ENV, "3")
    assert gram() == pytest.approx(3 * quiet)
    for pinned, factor in (("100", costs.MAX_SPEED_FACTOR), ("0.01", costs.MIN_SPEED_FACTOR)):
        monkeypatch.setenv(costs.SPEED_FACTOR_ENV, pinned)
        assert costs.speed_factor() == factor == costs.estimate_factor()

    probes, now = [], [1000.0]
    monkeypatch.setattr(costs.speed, "probe_seconds", lambda: probes.append(now[0]) or probes_seconds[0])
    monkeypatch.setattr(costs.speed, "_clock", lambda: now[0])
    monkeypatch.setattr(costs.speed, "_speed_cache", {})
    probes_seconds = [2.5 * costs.PROBE_REFERENCE_SECONDS]
    for junk in ("nan", "-2", "fast", "inf"):  # not a positive number: ignored, the probe decides
        monkeypatch.setenv(costs.SPEED_FACTOR_ENV, junk)
        assert costs.speed_factor() == pytest.approx(2.5) and costs.estimate_factor() == 1.0
    monkeypatch.delenv(costs.SPEED_FACTOR_ENV)
    assert gram() == pytest.approx(quiet), "the estimate never follows the probe"
    assert len(probes) == 1, "one probe, reused within SPEED_CACHE_SECONDS"
    probes_seconds[0] = 100 * costs.PROBE_REFERENCE_SECONDS
    now[0] += costs.SPEED_CACHE_SECONDS / 2
    assert costs.speed_factor() == pytest.approx(2.5) and len(probes) == 1
    now[0] += costs.SPEED_CACHE_SECONDS
    assert costs.speed_factor() == costs.MAX_SPEED_FACTOR and len(probes) == 2, "probed again, clamped"
    assert gram() == pytest.approx(quiet)
    probes_seconds[0] = costs.PROBE_REFERENCE_SECONDS / 100
    now[0] += 2 * costs.SPEED_CACHE_SECONDS
    assert costs.speed_factor() == costs.MIN_SPEED_FACTOR and len(probes) == 3


def test_speed_probe_runs_a_fixed_workload():
    """The real probe (no timing asserted: the machine is shared): a positive duration per call."""
    assert all(costs.probe_seconds(rounds=2) > 0 for _ in range(3))


# ---------------------------------------------------------------------------- measurement pages
TIMING = "pages/5_Timing.py"
CLASSIFIERS = "pages/6_Classifiers.py"
TINY = {TIMING: dict(tm_maps="rk,scrk", tm_d="8,16", tm_Dfix="32", tm_D="16,32", tm_dfix="8", tm_n=10, tm_rep=1),
        CLASSIFIERS: dict(n=80, cl_methods="kernel_svm,rk", cl_mult="1,2", cl_trials=1)}


@pytest.mark.parametrize("page, key", [(TIMING, "tm"), (CLASSIFIERS, "cl")])
def test_measurement_pages_never_autorun_and_keep_their_result(run_page, page, key):
    at = run_page(page, **TINY[page])  # a run of well under a second: still waits for the button
    assert not at.exception and not error_texts(at), error_texts(at)
    assert len(_estimates(at)) == 1 and not at.subheader
    assert at.button(key=f"{key}_run").label.endswith("s)")  # the estimate is on the button too
    at.button(key=f"{key}_run").click().run()
    assert not at.exception and not error_texts(at), error_texts(at)
    assert not _estimates(at), "the estimate goes away once the run starts"
    assert [s.value for s in at.subheader][-1] in ("Measured", "Results")
    n_figures = len(plotly_figures(at))
    at.run()  # a rerun at the same settings: the kept result, a short note and the button, no warning
    assert not _estimates(at) and len(plotly_figures(at)) == n_figures
    assert any("measuring again" in c.value for c in at.caption)
    assert not [i for i in at.info if "settings changed" in i.value]


@pytest.mark.parametrize("page, query", [
    (TIMING, dict(tm_maps="rk", tm_d="4096,8192", tm_Dfix="16384", tm_n=2000, tm_rep=9)),
    (TIMING, dict(tm_maps="rk,rm,nystroem", tm_d="4096,8192", tm_Dfix="16384", tm_n=2000, tm_rep=9)),
])  # Classifiers' refusal: tests/pages/test_pages_studies.py::test_classifiers_bad_inputs
def test_measurement_refusals_name_what_fits(run_page, page, query):
    at = run_page(page, **query)
    assert not at.exception
    refusals = [e for e in error_texts(at) if "allowed per view" in e]
    assert refusals and ("fits" in refusals[0] or "Lower the largest" in refusals[0]), error_texts(at)
    assert not [b for b in at.button if b.key.endswith("_run")]


def test_measurement_costs_grow_with_size_and_work():
    from rkcore.registry import KernelSpec

    small = costs.timing_cost(["rk"], [8, 16], 64, [16, 32], 8, 100, 2, 3)
    assert costs.timing_cost(["rk"], [8, 16], 64, [16, 32], 8, 1000, 2, 3).seconds > small.seconds
    assert costs.timing_cost(["rk", "scrk"], [8, 16], 64, [16, 32], 8, 100, 2, 3).seconds > small.seconds
    assert costs.timing_cost(["rk"], [8, 16], 64, [16, 32], 8, 100, 2, 9).seconds > small.seconds
    spec = KernelSpec("anova", 2)
    one = costs.classifier_cost(["rk"], 500, 400, 10, [20, 40], spec, 1, 5)
    assert costs.classifier_cost(["rk"], 500, 400, 10, [20, 40], spec, 5, 5).seconds > one.seconds
    assert costs.classifier_cost(["rk", "kernel_svm"], 500, 400, 10, [20, 40], spec, 1, 5).bytes > one.bytes


# ---------------------------------------------------------------------------- Itemsets
def test_itemsets_page_runs_under_the_protocol(run_page):
    at = run_page("pages/2_Itemsets.py", n=50)
    assert not at.exception and not error_texts(at) and not _estimates(at)
    assert plotly_figures(at)


@pytest.mark.parametrize("d, kernel, degree", [(1500, "all_subsets", 2), (10000, "up_to", 20), (10000, "anova", 2),
                                               (60, "anova", 3)])
def test_itemsets_cost_stays_small_for_any_family(d, kernel, degree):
    """The page's work grows with d and the number of sizes, never with |S| (2^10000 itemsets here)."""
    from rkcore.kernels.itemsets import family_from_spec

    cost = costs.itemsets_view_cost(family_from_spec(kernel, d, degree), 200, 4096)
    assert 0 < cost.seconds < 5 and cost.bytes < 100 * 2**20
