"""The one run protocol (rkapp.guard.run_or_wait): cheap views run at once, long ones wait for their
button with the estimate above it (gone once the results show), runs beyond the ceiling are refused
with the largest settings that fit; the issue's runaway cases never start computing."""
from __future__ import annotations

import pytest

from rkcore import costs
from tests.conftest import error_texts, plotly_figures, warning_texts

DIST = "pages/4_Distributions_and_variance.py"


def _estimates(at) -> list[str]:
    return [w for w in warning_texts(at) if "press the button" in w]


def test_long_run_waits_for_its_button_and_the_estimate_goes_away(run_page):
    at = run_page(DIST, n=200)  # both sections: several seconds
    assert not at.exception
    assert _estimates(at) and not plotly_figures(at)
    assert "pair variances" in _estimates(at)[0], "the estimate covers every section"
    at.button(key="dv_run").click().run()
    assert not at.exception and not error_texts(at), error_texts(at)
    assert plotly_figures(at) and not _estimates(at)
    at.run()  # a rerun with the same settings shows the cached results, no button
    assert plotly_figures(at) and not _estimates(at)


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
