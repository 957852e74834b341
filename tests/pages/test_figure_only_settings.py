"""A figure-only setting (``shown=`` of rkapp.views.run_view: what the charts pick from a result) recomputes
nothing on a page: the view's computation is not called again, and the chart it picks for does change."""
from __future__ import annotations

from rkcore.views import error_bounds as eb
from tests.conftest import error_texts, plotly_figures

PAGE = "pages/3_Error_bounds.py"


def test_error_bounds_eps_and_D_shown_redraw_without_computing(run_page, monkeypatch):
    from rkapp import views

    calls = []
    real_execute = views.execute

    def spy_execute(view, *args, **kwargs):
        calls.append(view.key)
        return real_execute(view, *args, **kwargs)

    monkeypatch.setattr(views, "execute", spy_execute)
    at = run_page(PAGE, n=20, eb_trials=eb.TRIALS[0])
    assert not at.exception and not error_texts(at)
    assert calls == [eb.BOUNDS.key], calls  # the first run computes once
    before = plotly_figures(at)
    eps = next(w for w in at.select_slider if w.label.startswith("ε"))
    eps.set_value(eb.EPS_GRID[-1] if eps.value != eb.EPS_GRID[-1] else eb.EPS_GRID[0]).run()
    D_shown = next(w for w in at.select_slider if w.label.startswith("D for the ε chart"))
    D_shown.set_value(eb.D_GRID[0] if D_shown.value != eb.D_GRID[0] else eb.D_GRID[-1]).run()
    assert not at.exception and not error_texts(at)
    assert calls == [eb.BOUNDS.key], f"a figure-only change recomputed: {calls}"
    after = plotly_figures(at)
    assert [f["layout"]["title"]["text"] for f in after] != [f["layout"]["title"]["text"] for f in before]
