"""The Random Fourier features views (rkcore.views.fourier): picklable, pure, admitted; and the page's
export holds the view on screen (issue 38, finding 6)."""
from __future__ import annotations

import pytest

from rkcore.views import FIELDS, ViewSpec, fourier
from tests.conftest import error_texts, plotly_figures
from tests.views.view_contract import (
    admission_spy, assert_computes_admitted, assert_functions_pickle, run_and_pickle,
)

PAGE = "pages/8_Random_Fourier_features.py"
SPEC = ViewSpec(dataset="digits", n=40)
SMALL = dict(n=40, rff_Dmax=256, rff_trials=2, rff_mult="1", rff_strials=5)


@pytest.mark.parametrize("view", fourier.VIEWS, ids=lambda v: v.key)
def test_view_functions_pickle(view):
    assert_functions_pickle(view)


def test_error_curve_runs_on_the_defaults_and_pickles():
    r = run_and_pickle(fourier.RFF_CURVE, SPEC, rff_Dmax=256)
    assert r.D_list == (16, 32, 64, 128, 256) and (r.n, r.d) == (40, 64) and r.gamma > 0
    assert set(r.curve["D"]) == set(r.D_list)


def test_map_comparison_and_timing_run_on_the_defaults_and_pickle():
    r = run_and_pickle(fourier.STRUCTURED, SPEC, rff_mult=("1",), rff_strials=5)
    assert set(r.study["D"]) == {64} and set(r.study["map"]) == set(FIELDS["rff_maps"].default)
    t = run_and_pickle(fourier.STRUCTURED_TIMING, SPEC, rff_maps=("rff", "sorf"))
    assert set(t.timing["d"]) == set(fourier.TIMING_D) and len(t.slopes) == 2


def test_an_empty_choice_is_refused_in_the_users_words():
    with pytest.raises(ValueError, match="at least one map"):
        fourier.STRUCTURED.cost(SPEC, 40, 64, rff_maps=(), rff_mult=("1",), rff_strials=5)


def test_every_computation_of_the_page_passes_through_admission(run_page, monkeypatch):
    with admission_spy(monkeypatch, [(view, fourier) for view in fourier.VIEWS]) as calls:
        at = run_page(PAGE, rff_struct="true", timeout=300, **SMALL)
    assert not at.exception and not error_texts(at), error_texts(at)
    assert_computes_admitted(calls, [view.key for view in fourier.VIEWS])


# ---------------------------------------------------------------------------- the export equals the screen
def exported_and_shown(at, exports) -> tuple[list, list]:
    """(the exported file's charts, the charts on screen) as (title, y-axis title) pairs, in order."""
    builds, lessons = exports
    builds[-1]()  # the last run's export button: build its file as a click would
    lesson = lessons[-1]
    exported = [item.figure.to_plotly_json()["layout"] for item in lesson.items if item.kind == "chart"]
    shown = [fig["layout"] for fig in plotly_figures(at)]

    def key(layout):
        return layout["title"]["text"], layout.get("yaxis", {}).get("title", {}).get("text")

    return [key(layout) for layout in exported], [key(layout) for layout in shown]


@pytest.fixture
def exports(monkeypatch):
    """The page's export: (its builds, one per run, as a click calls them; the Lessons they wrote)."""
    import streamlit
    from rkcore.figures import export

    builds, lessons, real_download = [], [], streamlit.download_button
    monkeypatch.setattr(export, "view_html", lambda lesson, **kwargs: lessons.append(lesson) or "")  # what it writes

    def download_button(label, data=None, *args, key=None, **kwargs):
        if key == "export_view":
            builds.append(data)
        return real_download(label, data, *args, key=key, **kwargs)

    monkeypatch.setattr(streamlit, "download_button", download_button)
    return builds, lessons


def test_the_export_holds_the_charts_on_screen_after_the_toggle_and_the_measure_change(run_page, exports):
    """Issue 38, finding 6: switch the comparison on, export: the file has the comparison's charts; change
    the error measure, export: the file's curve is the measure shown."""
    at = run_page(PAGE, timeout=300, **SMALL)
    exported, shown = exported_and_shown(at, exports)
    assert exported == shown and len(shown) == 1, (exported, shown)
    at.toggle(key="rff_struct").set_value(True).run()
    assert not at.exception and not error_texts(at), error_texts(at)
    exported, shown = exported_and_shown(at, exports)
    assert len(shown) == 3 and exported == shown, (exported, shown)  # the curve, the comparison, the timings
    at.radio(key="rff_metric").set_value("max_abs_error").run()
    exported, shown = exported_and_shown(at, exports)
    assert exported == shown and "max" in shown[0][1], (exported, shown)
