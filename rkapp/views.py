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

from .data import load_data
from .guard import admitted_run, guarded, largest_fitting, run_or_wait
from .layout import reproduce
from .workers import run_in_worker

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
    """The view's computation (the one place a view's ``compute`` is called): in a worker process of the
    server's Dask cluster when it has one, else in this process (:func:`rkapp.workers.run_in_worker`). The
    caller holds the run's admission slot meanwhile. A worker that stops mid-run raises a ValueError saying so
    (shown in place by :class:`rkapp.guard.guarded`)."""
    return run_in_worker(view.compute, (spec, data), settings, what=view.what)


@st.cache_data(show_spinner="Computing…", max_entries=RESULT_CACHE_ENTRIES)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def _computed(key: str, spec: ViewSpec, settings: tuple, _view: View, _data) -> Any:
    """:func:`execute`, cached by the view's key, its settings (the spec carries an upload's per-owner digest,
    so an upload's results are its owner's only) and the page's own settings; the view and the data, which
    those determine, are not hashed."""
    return execute(_view, spec, _data, dict(settings))


def run_view(view: View, spec: ViewSpec, render: Callable[[ViewRun], None], *, autorun: bool = False,
             **settings) -> ViewRun | None:
    """Run ``view`` for ``spec`` and the page's ``settings`` (fields of the state table), then
    ``render`` its result; errors show in place and the page goes on. Returns the run (None when the
    view waits for its button or failed). ``autorun``: run without the button (a preset's click)."""
    run = None
    with guarded(view.what):
        settings = view.checked(settings)
        data = load_data(spec) if view.needs_data else None
        n, d = data.X.shape if data is not None else (0, 0)

        def cost_of(size: int):
            return view.cost(spec, size, d, **settings)

        fits = (f"With these settings (d = {d}), n up to {largest_fitting(cost_of, n):,} fits."
                if view.needs_data else "")
        run_or_wait(cost_of(n), key=view.key, params=(spec, settings), what=view.what, fits=fits, autorun=autorun)
        result = _computed(view.key, spec, tuple(sorted(settings.items())), view, data)
        run = ViewRun(spec, settings, data, result)
        render(run)
    with guarded("the reproduce code"):
        reproduce(view.reproduce(spec, **view.checked(settings)))
    return run
