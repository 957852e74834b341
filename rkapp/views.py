"""run_view: the one way a page runs a view of :mod:`rkcore.views`.

It loads the view's data, prices the computation with the view's cost model, applies the run protocol
(refuse beyond the limits, a button above AUTO_RUN_SECONDS: :func:`rkapp.guard.run_or_wait`), admits the
computation to the server's run slots (:func:`rkapp.guard.heavy_work`), caches its result per settings,
hands it to the page's ``render``, shows any error in place, and ends with the reproduce box. The
computation itself is the view's pure, picklable ``compute``: :func:`execute` is where it is called.

A measurement view (``View.measure``: wall-clock times, Timing and Classifiers) runs only on its button
(:func:`rkapp.guard.measure_on_press`, in the page's lead), never cached; its last result is kept across
setting changes and rendered with a note when the settings changed since (:class:`OnPress` says how).
A ``compute`` that takes a ``progress`` keyword gets a progress bar's ``report(fraction, message)``.
A page with several computations runs its main view with ``along=`` the others, and its ``render`` gets their
results with :func:`computed`: one estimate, one button and one place in line for the whole run.
"""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass
from typing import Any, Callable

import streamlit as st

from rkcore.views import View, ViewSpec
from rkcore.views.settings import check_field

from .data import load_data
from .guard import (
    Measurement, admitted_run, guarded, heavy_work, kept_measurement, largest_fitting, measure_on_press,
    refuse_beyond_limits, run_or_wait, show_warning,
)
from .layout import lead, progress_bar, reproduce
from .run_context import current_run
from .workers import computed_here, run_in_worker

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
    #: A measurement view's kept run (its ``value`` is ``result``), and the current settings' identity to
    #: compare it with (:func:`rkapp.guard.show_measurement`); None for other views.
    measurement: Measurement | None = None
    params: Any = None
    #: how long this run took to get its result (about 0 when cached)
    seconds: float = 0.0


@dataclass(frozen=True)
class OnPress:
    """How a page shows a measurement view (``View.measure``).

    ``label``: the run button. ``details(run)``: drawn in the page's body (the button is in its lead), e.g. the
    predicted cost, with ``run.result`` None and ``run.measurement`` the kept run after this press, if any.
    ``what(spec, data, **settings)``: what the estimate names (default: the view's ``what``).
    ``fits(spec, data, largest, **settings)``: the sentence naming the largest settings that fit, given
    ``largest(cost_of, upper)`` (:func:`rkapp.guard.largest_fitting`).
    ``hidden``: the warning when the current settings fail and the kept run, of other settings, is hidden.
    """

    label: str
    details: Callable[[ViewRun], None] | None = None
    what: Callable[..., str] | None = None
    fits: Callable[..., str] | None = None
    hidden: str = ("The results of the last run are hidden: they came from earlier settings, and the current ones "
                   "failed (see the message above).")


def execute(view: View, spec: ViewSpec, data, settings: dict) -> Any:
    """The view's computation (the one place a view's ``compute`` is called): in a worker process of the
    server's Dask cluster when it has one (:func:`rkapp.workers.run_in_worker`), else in this process; a light
    run (priced under :data:`rkapp.workers.HERE_SECONDS` and ``HERE_BYTES``) in this process either way
    (:func:`rkapp.workers.computed_here`: the trip to a worker cost more than the run). The
    caller holds the run's admission slot meanwhile; a worker that stops mid-run raises a ValueError saying
    so (shown in place by :class:`rkapp.guard.guarded`). A view with ``progress`` (its bar's text), or whose
    ``compute`` takes a ``progress`` keyword, reports to a progress bar in this process; in a worker, whose
    reports cannot reach the page, it gets ``progress=None`` and the page a spinner."""
    reports = bool(view.progress) or "progress" in inspect.signature(view.compute).parameters
    label = view.progress or f"Computing {view.what}…"
    # the price of a light run (rkapp.guard.heavy_work), None for a heavy one; a timing is taken where heavy work
    # runs (a worker: one thread, no other session's script beside it), whatever its size
    light = None if view.measure else current_run().light
    seconds, memory = (light.seconds, light.bytes) if light is not None else (float("inf"), 0)
    with computed_here(seconds, memory) as here:
        if here and not reports:
            return view.compute(spec, data, **settings)
        if here:
            with progress_bar(label) as report:
                return view.compute(spec, data, progress=report, **settings)
    if not reports:
        return run_in_worker(view.compute, (spec, data), settings, what=view.what)
    with st.spinner(label):
        return run_in_worker(view.compute, (spec, data), {**settings, "progress": None}, what=view.what)


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


def _own_settings(view: View, settings: dict) -> dict:
    """The view's own settings out of a run's (every view of the run's), checked against the state table."""
    return view.checked({name: settings[name] for name in view.settings if name in settings})


def run_view(view: View, spec: ViewSpec, render: Callable[[ViewRun], None], *, autorun: bool = False,
             reproduce_box: bool = True, along: tuple[View, ...] = (), shown: dict | None = None,
             what: str | None = None, fits: str | None = None, on_press: OnPress | None = None,
             **settings) -> ViewRun | None:
    """Run ``view`` for ``spec`` and the page's ``settings`` (fields of the state table), then
    ``render`` its result; errors show in place and the page goes on. Returns the run (None when the
    view waits for its button or failed). ``autorun``: run without the button (a preset's click).
    ``reproduce_box``: end with the reproduce box (False on a page of several views, which ends with
    :func:`reproduce_view` once, after its last chart: the box's export holds every chart drawn before it).
    ``along``: the page's other views, computed in ``render`` with :func:`computed`; their costs join the
    run's estimate (one button, one place in line), ``settings`` holds theirs too. ``shown``: page settings
    that only pick what ``render`` shows of the result (and the reproduce code takes): checked, but out of the
    cache key and the run's button, so changing one recomputes nothing. ``what``: the run in its estimate
    (default: the view's ``what``); ``fits``: what fits beyond the limits, ``{n}`` in it the largest n that
    does (default: the view's ``fits``, else that n).
    A measurement view (``view.measure``) runs as ``on_press`` says (:func:`measure_view`)."""
    if view.measure:
        return measure_view(view, spec, render, on_press or OnPress(label="Run"), autorun=autorun, **settings)
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
        n, d = data.X.shape if data is not None else (int(settings[view.size]) if view.size else 0, 0)

        def cost_of(size: int):
            parts = [v.cost(spec, size, d, **checked) for v, checked in own]
            return sum(parts[1:], parts[0])

        if fits is None:
            fits = _fits(view, spec, own[0][1], cost_of, n, d)
        elif "{n}" in fits:  # only computed when said: a bisection over n of the cost models
            fits = fits.replace("{n}", f"{largest_fitting(cost_of, n):,}")
        with lead():  # the estimate and its button where the main chart will be: in the first screen
            run_or_wait(cost_of(n), key=view.key, params=(spec, settings), what=what or view.what, fits=fits,
                        autorun=autorun)
        started = time.perf_counter()
        mine = own[0][1]
        result = (_computed(view.key, spec, tuple(sorted(mine.items())), view, data) if view.cached
                  else _fresh(view, spec, data, mine))
        run = ViewRun(spec, {**settings, **shown}, data, result, seconds=time.perf_counter() - started)
        render(run)
    if reproduce_box:
        reproduce_view(view, spec, shown=shown, **{name: settings[name] for name in view.settings if name in settings})
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


def measure_view(view: View, spec: ViewSpec, render: Callable[[ViewRun], None], on_press: OnPress, *,
                 autorun: bool = False, **settings) -> ViewRun | None:
    """A measurement view: refused beyond the limits, then the button in the page's
    lead (:func:`rkapp.guard.measure_on_press`: never cached, its place in the server's line, the last run
    kept), ``on_press.details`` in the body; ``render`` draws the kept run (of these or earlier settings).
    Returns the rendered run, or None."""
    kept, params = kept_measurement(view.key), None
    with guarded(view.what):
        settings = view.checked(settings)
        data = load_data(spec) if view.needs_data else None
        n, d = data.X.shape if data is not None else (0, 0)
        cost = view.cost(spec, n, d, **settings)
        if on_press.fits is not None:
            fits = on_press.fits(spec, data, largest_fitting, **settings)
        else:  # the view's own sentence, or the largest n that fits (as run_view says it)
            fits = _fits(view, spec, settings, lambda s: view.cost(spec, s, d, **settings), n, d)
        what = on_press.what(spec, data, **settings) if on_press.what is not None else view.what
        params = (spec, tuple(sorted(settings.items())))  # valid settings: a refusal keeps the last run shown
        refuse_beyond_limits(cost, what, fits)  # before the details are drawn
        with lead():  # the run button (then the results) first, above the settings
            kept = measure_on_press(cost, lambda: execute(view, spec, data, settings), key=view.key, params=params,
                                    what=what, label=on_press.label, fits=fits, autorun=autorun)
        if on_press.details is not None:  # in the page's body, under the settings (the button is in the lead)
            on_press.details(ViewRun(spec, settings, data, None, kept, params))
    run = None
    if kept is not None and params is None:  # the current settings failed: the kept run is of others
        show_warning(on_press.hidden, icon=":material/history:")
    elif kept is not None:
        with guarded(view.what):
            run = ViewRun(spec, settings, data, kept.value, kept, params)
            render(run)
    with guarded("the reproduce code"):
        reproduce(view.reproduce(spec, **view.checked(settings)))
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
