"""run_view: the one way a page runs a view of :mod:`rkcore.views`.

It loads the view's data, prices the computation with the view's cost model, applies the run protocol
(refuse beyond the limits, a button above AUTO_RUN_SECONDS: :func:`rkapp.guard.run_or_wait`), admits the
computation to the server's run slots (:func:`rkapp.guard.heavy_work`), caches its result per settings,
hands it to the page's ``render``, shows any error in place, and ends with the reproduce box. The
computation itself is the view's pure, picklable ``compute``: :func:`execute` is where it is called.
A page with several computations runs its main view with ``along=`` the others, and its ``render`` gets their
results with :func:`computed`: one estimate, one button and one place in line for the whole run.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import streamlit as st

from rkcore.views import View, ViewSpec
from rkcore.views.settings import check_field

from .data import load_data
from .guard import admitted_run, guarded, largest_fitting, run_or_wait
from .layout import progress_bar, reproduce

#: Results kept for the whole server (every view's entries together); a view's result is tables and
#: arrays of at most a few MB (the Gram page's block averages: 2 x 250² floats).
RESULT_CACHE_ENTRIES = 64


@dataclass(frozen=True)
class ViewRun:
    """What a page's ``render`` receives: the view's settings (the page's own ones of every view of the run),
    data and result, and the seconds this run took to get the result (about 0 when it was cached)."""

    spec: ViewSpec
    settings: dict
    data: Any
    result: Any
    seconds: float = 0.0


def execute(view: View, spec: ViewSpec, data, settings: dict) -> Any:
    """The view's computation, in this process (the one place a view's ``compute`` is called), under its
    progress bar when it declares one."""
    if not view.progress:
        return view.compute(spec, data, **settings)
    with progress_bar(view.progress) as report:
        return view.compute(spec, data, progress=report, **settings)


@st.cache_data(show_spinner="Computing…", max_entries=RESULT_CACHE_ENTRIES)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def _computed(key: str, spec: ViewSpec, settings: tuple, _view: View, _data) -> Any:
    """:func:`execute`, cached by the view's key, its settings (the spec carries an upload's per-owner digest,
    so an upload's results are its owner's only) and the page's own settings; the view and the data, which
    those determine, are not hashed."""
    return execute(_view, spec, _data, dict(settings))


def _own_settings(view: View, settings: dict) -> dict:
    """The view's own settings out of a run's (every view of the run's), checked against the state table."""
    return view.checked({name: settings[name] for name in view.settings if name in settings})


def run_view(view: View, spec: ViewSpec, render: Callable[[ViewRun], None], *, autorun: bool = False,
             along: tuple[View, ...] = (), shown: dict | None = None, what: str | None = None,
             fits: str | None = None, **settings) -> ViewRun | None:
    """Run ``view`` for ``spec`` and the page's ``settings`` (fields of the state table), then
    ``render`` its result; errors show in place and the page goes on. Returns the run (None when the
    view waits for its button or failed). ``autorun``: run without the button (a preset's click).
    ``along``: the page's other views, computed in ``render`` with :func:`computed`; their costs join the
    run's estimate (one button, one place in line), ``settings`` holds theirs too. ``shown``: page settings
    that only pick what ``render`` shows of the result (and the reproduce code takes): checked, but out of the
    cache key and the run's button, so changing one recomputes nothing. ``what``: the run in its estimate
    (default: the view's ``what``); ``fits``: what fits beyond the limits, ``{n}`` in it the largest n that
    does (default: that n)."""
    run = None
    with guarded(view.what):
        known = {name for v in (view, *along) for name in v.settings}
        if unknown := [name for name in settings if name not in known]:
            raise ValueError(f"View {view.key!r} reads the settings {sorted(known)}; unknown {unknown}.")
        own = [(v, _own_settings(v, settings)) for v in (view, *along)]
        settings = {name: value for _, checked in own for name, value in checked.items()}
        shown = dict(shown or {})
        if problems := [problem for name, value in shown.items() if (problem := check_field(name, value))]:
            raise ValueError(" ".join(problems))
        data = load_data(spec) if view.needs_data else None
        n, d = data.X.shape if data is not None else (0, 0)

        def cost_of(size: int):
            parts = [v.cost(spec, size, d, **checked) for v, checked in own]
            return sum(parts[1:], parts[0])

        if fits is None:
            fits = f"With these settings (d = {d}), n up to {{n}} fits." if view.needs_data else ""
        if "{n}" in fits:  # only computed when said: a bisection over n of the cost models
            fits = fits.replace("{n}", f"{largest_fitting(cost_of, n):,}")
        run_or_wait(cost_of(n), key=view.key, params=(spec, settings), what=what or view.what, fits=fits,
                    autorun=autorun)
        started = time.perf_counter()
        result = _computed(view.key, spec, tuple(sorted(own[0][1].items())), view, data)
        run = ViewRun(spec, {**settings, **shown}, data, result, time.perf_counter() - started)
        render(run)
    with guarded("the reproduce code"):
        reproduce(view.reproduce(spec, **_own_settings(view, settings), **(shown or {})))
    return run


def computed(view: View, run: ViewRun, *, spec: ViewSpec | None = None) -> Any:
    """The result of ``view``, one of the ``along`` views of ``run``, cached and admitted in the run's place
    in line. ``spec``: other shared settings than the run's (e.g. the run's without its seed, for what no
    random draw enters: a seed change then recomputes nothing of it).

    Parameters
    ----------
    view : View
        The view to compute.
    run : ViewRun
        The page's run (its settings hold the view's own ones).
    spec : ViewSpec, optional
        The shared settings; default the run's.

    Returns
    -------
    object
        The view's result.
    """
    own = _own_settings(view, run.settings)
    return _computed(view.key, spec or run.spec, tuple(sorted(own.items())), view, run.data)
