"""run_view: the one way a page runs a view of :mod:`rkcore.views`.

It loads the view's data, prices the computation with the view's cost model, applies the run protocol
(refuse beyond the limits, a button above AUTO_RUN_SECONDS: :func:`rkapp.guard.run_or_wait`), admits the
computation to the server's run slots (:func:`rkapp.guard.heavy_work`), caches its result per settings,
hands it to the page's ``render``, shows any error in place, and ends with the reproduce box. The
computation itself is the view's pure, picklable ``compute``: :func:`execute` is where it is called.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import streamlit as st

from rkcore.views import View, ViewSpec
from rkcore.views.settings import check_field

from .data import load_data
from .guard import admitted_run, guarded, heavy_work, largest_fitting, run_or_wait
from .layout import progress_bar, reproduce

#: Results kept for the whole server (every view's entries together); a view's result is tables and
#: arrays of at most a few MB (the Gram page's block averages: 2 x 250² floats).
RESULT_CACHE_ENTRIES = 64


@dataclass(frozen=True)
class ViewRun:
    """What a page's ``render`` receives: the view's settings, data and result."""

    spec: ViewSpec
    settings: dict
    data: Any
    result: Any


def execute(view: View, spec: ViewSpec, data, settings: dict) -> Any:
    """The view's computation, in this process (the one place a view's ``compute`` is called); a view
    with ``progress`` gets a progress bar's ``report``."""
    if view.progress:
        with progress_bar(view.progress) as report:
            return view.compute(spec, data, progress=report, **settings)
    return view.compute(spec, data, **settings)


@st.cache_data(show_spinner="Computing…", max_entries=RESULT_CACHE_ENTRIES)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def _computed(key: str, spec: ViewSpec, settings: tuple, _view: View, _data) -> Any:
    """:func:`execute`, cached by the view's key, its settings (the spec carries an upload's per-owner digest,
    so an upload's results are its owner's only) and the page's own settings; the view and the data, which
    those determine, are not hashed."""
    return execute(_view, spec, _data, dict(settings))


@admitted_run  # waits its turn for a server slot, as a cache miss does
def _fresh(view: View, spec: ViewSpec, data, settings: dict) -> Any:
    """:func:`execute` uncached (``view.cached`` False: wall-clock timings, never a time of some other run)."""
    return execute(view, spec, data, settings)


def _fits(view: View, spec: ViewSpec, settings: dict, cost_of: Callable, n: int, d: int) -> str:
    """The sentence a refusal ends with: the view's own (``view.fits``), or the largest n that fits."""
    if view.fits is not None:
        return view.fits(spec, largest_fitting(cost_of, n), d, **settings)
    return f"With these settings (d = {d}), n up to {largest_fitting(cost_of, n):,} fits." if view.needs_data else ""


def run_view(view: View, spec: ViewSpec, render: Callable[[ViewRun], None], *, autorun: bool = False,
             reproduce_box: bool = True, shown: dict | None = None, **settings) -> ViewRun | None:
    """Run ``view`` for ``spec`` and the page's ``settings`` (fields of the state table), then
    ``render`` its result; errors show in place and the page goes on. Returns the run (None when the
    view waits for its button or failed). ``autorun``: run without the button (a preset's click).
    ``reproduce_box``: end with the reproduce box (False on a page of several views, which ends with
    :func:`reproduce_view` once, after its last chart: the box's export holds every chart drawn before it).
    ``shown``: page fields only the figures read, for the reproduce code (:func:`reproduce_view`)."""
    run = None
    with guarded(view.what):
        settings = view.checked(settings)
        data = load_data(spec) if view.needs_data else None
        n, d = data.X.shape if data is not None else (int(settings[view.size]) if view.size else 0, 0)

        def cost_of(size: int):
            return view.cost(spec, size, d, **settings)

        fits = _fits(view, spec, settings, cost_of, n, d)
        run_or_wait(cost_of(n), key=view.key, params=(spec, settings), what=view.what, fits=fits, autorun=autorun)
        result = (_computed(view.key, spec, tuple(sorted(settings.items())), view, data) if view.cached
                  else _fresh(view, spec, data, settings))
        run = ViewRun(spec, settings, data, result)
        render(run)
    if reproduce_box:
        reproduce_view(view, spec, shown=shown, **settings)
    return run


@st.cache_data(show_spinner=False, max_entries=RESULT_CACHE_ENTRIES)
def _priced(key: str, spec: ViewSpec, settings: tuple, _view: View, _data) -> Any:
    """:func:`execute` in a server slot priced by the view's own cost (no run_or_wait announced one), cached as
    :func:`_computed` is."""
    n, d = _data.X.shape if _data is not None else (0, 0)
    with heavy_work(_view.cost(spec, n, d, **dict(settings))):  # a cache miss waits its turn (rkapp.guard)
        return execute(_view, spec, _data, dict(settings))


def view_result(view: View, spec: ViewSpec, **settings) -> Any:
    """A view's result without the page's frame (no run button, render or reproduce box): for a page that draws
    several views' results on its own, such as the story's steps. The settings are checked, the data loaded, the
    result cached per settings like :func:`run_view`'s, and a cache miss waits for a server slot priced by the
    view's ``cost``. Errors propagate: call it inside :func:`rkapp.guard.guarded`."""
    settings = view.checked(settings)
    data = load_data(spec) if view.needs_data else None
    with st.spinner(f"Computing {view.what}…"):
        return _priced(view.key, spec, tuple(sorted(settings.items())), view, data)


def reproduce_view(view: View, spec: ViewSpec, *, shown: dict | None = None, **settings) -> None:
    """The reproduce box of ``view`` (with the page's export, which holds what the page drew before it).
    ``shown``: page fields that only the figures read (an error measure), checked against the state table
    and passed on to ``view.reproduce``, not to the computation (changing them recomputes nothing)."""
    with guarded("the reproduce code"):
        shown = dict(shown or {})
        problems = [problem for name, value in shown.items() if (problem := check_field(name, value))]
        if problems:
            raise ValueError(problems[0])
        reproduce(view.reproduce(spec, **view.checked(settings), **shown))
