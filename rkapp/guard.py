"""Where a page's compute runs guarded, where every error message and every echo of user text goes
through, the per-view memory budget, the run protocol: :func:`run_or_wait` for views (auto-run when
cheap) and :func:`measure_on_press` for measurement pages (never auto-run, the last result kept), and
the server's admission of heavy runs (:func:`admitted_run`, :data:`ADMISSION`): every session's heavy
work waits its turn for one of a few slots, its place in line shown where its charts will be."""
from __future__ import annotations

import functools
import logging
import re
import time
from contextlib import ContextDecorator, contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterator

import streamlit as st

from rkcore.base.admission import Admission, owner_runs, server_memory, server_runs
from rkcore.base.limits import estimate_cost, format_bytes, format_estimate, physical_memory
from rkcore.base.limits import max_size_within as _max_size_within
from rkcore.base.limits import require_memory as _require_memory
from rkcore.studies.costs import RunCost

from .identity import owner_id
from .run_context import current_run
from .workers import HERE_BYTES, HERE_SECONDS

__all__ = ["ADMISSION", "AUTO_RUN_SECONDS", "MAX_RUN_SECONDS", "MEMORY_BUDGET", "Measurement", "Waiting",
           "admitted_run", "cost_phrase", "estimate_cost", "guarded", "heavy_work", "kept_measurement", "largest_fitting", "literal", "max_size_within", "measure_on_press",
           "refuse_beyond_limits", "require_memory", "run_or_wait", "sections_help", "show_cost", "show_error", "show_measurement", "show_warning"]

logger = logging.getLogger("rkapp")


#: Bytes one view may allocate: a quarter of the machine's memory, at most 2 GB
#: (the server is shared by every open session).
MEMORY_BUDGET = int(min(2 * 2**30, physical_memory() // 4))
#: The server's admission of heavy runs, shared by every session of this process: RKCORE_SERVER_RUNS
#: slots (default one per core) and RKCORE_SERVER_MEMORY bytes for all admitted runs together (default a
#: quarter of the machine's memory), RKCORE_OWNER_RUNS runs per student (default one), read when the server starts.
ADMISSION = Admission(server_runs(), server_memory(), per_owner=owner_runs())


#: Every ASCII punctuation character: CommonMark lets each be backslash-escaped, and escaping them all
#: also defeats what plain escaping of []()*_ misses: GFM autolinks ("https://", "www.", "a@b.c"),
#: Streamlit's directives (":red[...]", ":material/x:") and LaTeX ("$...$").
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_LINE_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")


def literal(text) -> str:
    """Text shown literally by st.markdown / st.caption / st.error (no link, image, heading or italics
    from what a user typed): every echo of user text (URL values, file names, paths, itemsets, column
    names, messages quoting them) goes through here, once. Line breaks become spaces (a blank line
    would start a new Markdown block)."""
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", _LINE_BREAKS.sub(" ", str(text)))


def show_error(message: str) -> None:
    """The one place an error reaches the user: in place, as st.error. ``message`` is plain text (it
    may quote what the user typed): it is shown literally."""
    st.error(literal(message))


def show_warning(message: str, *, icon: str | None = None) -> None:
    """A warning in place, as st.warning; ``message`` is plain text, shown literally."""
    st.warning(literal(message), icon=icon)


def require_memory(parts: dict[str, tuple[int, ...]], *, budget: int | None = None, hint: str = "") -> None:
    """Refuse (ValueError, shown by :class:`guarded`) arrays of these shapes beyond the budget."""
    _require_memory(parts, budget=MEMORY_BUDGET if budget is None else budget, hint=hint)


def max_size_within(bytes_for: Callable[[int], int], *, budget: int | None = None, upper: int = 10**7) -> int:
    """The largest size s (e.g. n) with ``bytes_for(s) <= budget``, for "reduce n to ..." hints."""
    return _max_size_within(bytes_for, budget=MEMORY_BUDGET if budget is None else budget, upper=upper)


# ============================================================================ the run protocol
#: Runs estimated below this start at once; longer ones wait for their button.
AUTO_RUN_SECONDS = 2.0
#: Runs estimated above this are refused (the server is shared by a whole class).
MAX_RUN_SECONDS = 300.0


class Waiting(Exception):
    """Raised by :func:`run_or_wait` while a long run waits for its button: :class:`guarded` ends the
    block quietly (the estimate and the button are on the page)."""


def _view_budget() -> int:
    """Bytes one run may need: the per-view budget, or less when the whole server has less."""
    return min(MEMORY_BUDGET, ADMISSION.budget)


def within_limits(cost: RunCost) -> bool:
    return cost.seconds <= MAX_RUN_SECONDS and cost.bytes <= _view_budget()


def largest_fitting(cost_of: Callable[[int], RunCost], upper: int) -> int:
    """The largest size s <= upper (e.g. n) whose run fits the time ceiling and the memory budget, for
    "n up to ... fits" (cost_of must grow with s)."""
    return _max_size_within(lambda s: 0 if s == 0 or within_limits(cost_of(s)) else 1, budget=0, upper=int(upper))


def _limit(seconds: float) -> str:
    """A limit (exact, not an estimate): "300 s" reads as "5 minutes"."""
    return f"{seconds:g} s" if seconds < 120 else f"{seconds / 60:g} minutes"


def _busy_note() -> str:
    """A sentence when other sessions' runs wait for the server's slots (the estimate itself never follows
    the load: the same settings get the same estimate and the same decision on every rerun)."""
    state = ADMISSION.state()
    if not state["waiting"]:
        return ""
    return (f" The server is busy: {state['waiting']} run(s) of other sessions wait for one of its "
            f"{state['slots']} run slots; yours will queue behind them, its place in line shown here.")


def refuse_beyond_limits(cost: RunCost, what: str, fits: str = "") -> None:
    """ValueError (shown by :class:`guarded`) naming the estimate and ``fits`` (the largest settings that
    fit) when a run exceeds the time ceiling or the memory budget."""
    if not within_limits(cost):
        raise ValueError(
            f"Computing {what} would take {format_estimate(cost.seconds)} and {format_bytes(cost.bytes)} of memory "
            f"({cost.describe()}), more than the {_limit(MAX_RUN_SECONDS)} and {format_bytes(_view_budget())} "
            f"allowed per view.{_busy_note()} {fits}".strip())


def cost_phrase(cost: RunCost) -> str:
    """The cost of a run, stated once: "about 3 s and 40 MB of memory on this server", naming what it covers
    when it has several sections ("(the error study and the pair variances)"); each section's own numbers are
    in :func:`sections_help`. (It read "about 3 s and 40 MB of memory on this server (error study: about 3 s,
    40 MB)": the memory twice for one section, and a list of numbers for several.)"""
    names = [name for name, _, _ in cost.sections]
    covers = f" ({', '.join(names[:-1])} and {names[-1]})" if len(names) > 1 else ""
    return f"{format_estimate(cost.seconds)} and {format_bytes(cost.bytes)} of memory on this server{covers}"


def sections_help(cost: RunCost) -> str | None:
    """Each section's seconds and peak memory, for the run button's hover help (None for one section)."""
    return f"Estimated by part: {cost.describe()}." if len(cost.sections) > 1 else None


def show_cost(text: str) -> None:
    """An estimate before a run, in the text's own colour with a timer icon: a cost is information, not a warning
    (it was a yellow warning box). ``text`` is plain text, shown literally."""
    st.markdown(f":material/timer: {literal(text)}")


def run_or_wait(cost: RunCost, *, key: str, params, what: str, fits: str = "", autorun: bool = False) -> bool:
    """The one run protocol of every page, called before computing with the cost of everything the page
    will compute (:mod:`rkcore.studies.costs`). Beyond the time ceiling or the memory budget: ValueError naming
    the estimate and ``fits`` (the largest settings that fit). Below AUTO_RUN_SECONDS, or once its button
    was pressed for these ``params`` (the result is cached), or with ``autorun`` (a preset's click):
    True. Otherwise the estimate and a button are shown and :class:`Waiting` ends the guarded block;
    the estimate goes away as soon as the run starts."""
    refuse_beyond_limits(cost, what, fits)
    st.session_state[_ANNOUNCED] = cost  # what the page's @admitted_run functions will ask the server for
    st.session_state[_RUN_PLACE] = None  # a new run: its first heavy function takes its place in line
    ran_key = f"_rk_ran_{key}"
    if cost.seconds <= AUTO_RUN_SECONDS or autorun or st.session_state.get(ran_key) == params:
        st.session_state[ran_key] = params
        return True
    slot = st.empty()
    with slot.container():
        show_cost(f"Computing {what} takes {cost_phrase(cost)}. It runs when you press the button.{_busy_note()}")
        pressed = st.button(f"Run ({format_estimate(cost.seconds)})", key=f"{key}_run", type="primary",
                            icon=":material/play_arrow:", help=sections_help(cost))
    if not pressed:
        raise Waiting(what)
    st.session_state[ran_key] = params
    slot.empty()  # the results replace the estimate
    return True


# ---------------------------------------------------------------------------- the server's admission
#: Runs the cost models price below both of these are light: they skip the line (a queue in front of a
#: 20 ms view would only add waiting), and are computed in the app process (rkapp.workers.computed_here, where the
#: bounds are defined once).
LIGHT_SECONDS = HERE_SECONDS
LIGHT_BYTES = HERE_BYTES
#: What a heavy function asks for when no estimate was announced (run_or_wait was not called first).
UNANNOUNCED = RunCost(1.0, 256 * 2**20)
#: Seconds between two looks at the line: the notice shows after the first, and changes when the place does.
QUEUE_POLL_SECONDS = 0.5
#: The notice is redrawn at least this often (each redraw lets a stop or rerun through; fewer redraws keep
#: the messages a cached function records for its replay few).
QUEUE_REFRESH_SECONDS = 2.0
#: A rerun within this many seconds of leaving the line (a widget changed while waiting) keeps its place.
KEEP_PLACE_SECONDS = 120.0
_ANNOUNCED = "_rk_run_cost"  # session key: the cost of the page's run, set by run_or_wait
_QUEUED_SINCE = "_rk_queued_since"  # session key: (arrival, left at) of a wait a rerun interrupted
_RUN_PLACE = "_rk_run_place"  # session key: the arrival of this run's first heavy function


def _is_light(cost: RunCost) -> bool:
    return cost.seconds < LIGHT_SECONDS and cost.bytes < LIGHT_BYTES


def _earlier_place() -> float | None:
    """The place in line this request keeps: that of the run's first heavy function (a page's run queues
    once, not once per function), or of the wait a rerun interrupted a moment ago."""
    now = time.monotonic()
    kept = st.session_state.pop(_QUEUED_SINCE, None)
    run_place = st.session_state.get(_RUN_PLACE)  # reset by each run's run_or_wait / measure_on_press
    places = [run_place[0]] if run_place and now - run_place[1] <= KEEP_PLACE_SECONDS else []
    if kept and now - kept[1] <= KEEP_PLACE_SECONDS:
        places.append(kept[0])
    return min(places, default=None)


def _place_text(ticket) -> str:
    (own, others), wait = ADMISSION.ahead(ticket), ADMISSION.expected_wait(ticket)
    parts = ([f"{others} run(s) of other students"] if others else []) + (
        ["your other tab's run" if own == 1 else f"{own} runs of your other tabs"] if own else [])
    ahead = f"{' and '.join(parts)} ahead of you" if parts else "you are next"
    mine = (" Each student runs one heavy computation at a time: this tab waits for your other tab's run, while "
            "other students' runs take their turns.") if own else ""
    return (f"Waiting for one of the server's {ADMISSION.slots} run slots, shared by everyone on it in turn: {ahead} "
            f"({format_estimate(wait)}). Your results follow by themselves; there is nothing to press.{mine}")


def _show_place(slot, ticket, shown: tuple[str, float] | None = None) -> tuple[str, float]:
    """Draw the place in line when it changed or QUEUE_REFRESH_SECONDS passed; (text, when) drawn."""
    text, now = _place_text(ticket), time.monotonic()
    if shown is not None and shown[0] == text and now - shown[1] < QUEUE_REFRESH_SECONDS:
        return shown
    slot.info(text, icon=":material/hourglass_top:")
    return text, now


@contextmanager
def heavy_work(cost: RunCost | None = None) -> Iterator[None]:
    """Hold one of the server's run slots (:data:`ADMISSION`) for the ``with`` block, priced by ``cost``
    (default: the one run_or_wait announced for this session's page). While the run waits, its place
    in line and the expected wait show in place (QUEUE_POLL_SECONDS, QUEUE_REFRESH_SECONDS); light runs skip the
    line. The slot or the place in line is released whatever ends the block (an error, a rerun, the
    session's end); a rerun that interrupts the wait keeps its place for the next request."""
    cost = cost or st.session_state.get(_ANNOUNCED) or UNANNOUNCED
    if current_run().holding_slot:  # nested heavy work runs in its caller's slot
        yield
        return
    if _is_light(cost):  # no line; its price goes with it (rkapp.views.execute computes light runs in place)
        run = current_run()
        outer, run.light = run.light, cost
        try:
            yield
        finally:
            run.light = outer
        return
    ticket = ADMISSION.request(cost.bytes, cost.seconds, arrival=_earlier_place(), owner=owner_id())
    slot = shown = None
    try:
        while not ADMISSION.wait(ticket, QUEUE_POLL_SECONDS):
            slot = slot or st.empty()
            shown = _show_place(slot, ticket, shown)  # a Streamlit call: a stop or rerun request ends the wait here
    except BaseException:
        if not ticket.admitted:
            st.session_state[_QUEUED_SINCE] = (ticket.arrival, time.monotonic())
        ADMISSION.release(ticket)
        raise
    try:
        if st.session_state.get(_RUN_PLACE) is None:
            st.session_state[_RUN_PLACE] = (ticket.arrival, time.monotonic())
        if slot is not None:
            slot.empty()  # the results replace the place in line
        current_run().holding_slot, current_run().memory = True, int(cost.bytes)  # its workers' MEMORY price
        yield
    finally:
        current_run().holding_slot, current_run().memory = False, 0
        ADMISSION.release(ticket)


def admitted_run(func: Callable | None = None, *, cost: Callable[..., RunCost] | None = None) -> Callable:
    """A page's heavy function, run in one of the server's slots (:func:`heavy_work`). Put it under
    ``@st.cache_data``: only a cache miss computes, so only a miss waits in line. ``cost`` (called with the
    function's arguments) prices it where no run_or_wait announced the page's run (the story)."""
    def admit(function: Callable) -> Callable:
        @functools.wraps(function)
        def run_admitted(*args, **kwargs):
            with heavy_work(cost(*args, **kwargs) if cost is not None else None):
                return function(*args, **kwargs)
        return run_admitted
    return admit(func) if func is not None else admit


# ---------------------------------------------------------------------------- measurement pages
@dataclass(frozen=True)
class Measurement:
    """The last run of a measurement page, kept in the session across setting changes."""

    params: Any
    value: Any
    when: str
    elapsed: float


def _kept_key(key: str) -> str:
    return f"_rk_kept_{key}"


def kept_measurement(key: str) -> Measurement | None:
    """The session's last measurement under ``key`` (whatever its settings), or None."""
    return st.session_state.get(_kept_key(key))


def measure_on_press(cost: RunCost, run: Callable[[], Any], *, key: str, params, what: str, label: str,
                     fits: str = "", autorun: bool = False, details: Callable[[], None] | None = None,
                     ) -> Measurement | None:
    """The run protocol of the measurement pages (Timing, Classifiers), whose results are wall-clock times:
    never cached, never taken without the user's go, so this variant never auto-runs. Beyond the time
    ceiling or the memory budget: ValueError naming the estimate and ``fits``, as :func:`run_or_wait`.
    Otherwise ``details`` (e.g. a chart of the estimate), then the estimate and the ``label`` button (key
    ``{key}_run``); on its press, or with ``autorun`` (a preset's click), the estimate goes
    away, ``run()`` is timed and its value kept until the next press. Returns the kept measurement, which
    may be of other settings (:func:`show_measurement` says so)."""
    refuse_beyond_limits(cost, what, fits)
    st.session_state[_RUN_PLACE] = None  # a new run (its heavy work takes a new place in line)
    kept = kept_measurement(key)
    current = kept is not None and kept.params == params
    slot = st.empty()
    with slot.container():
        if current:
            st.caption(literal(f"Measured at these settings; measuring again takes {cost_phrase(cost)}."))
        else:
            if details is not None:
                details()  # first: the page's chart starts in the first screen of a projector
            show_cost(f"Measuring {what} takes {cost_phrase(cost)}. It runs when you press the button.{_busy_note()}")
        pressed = st.button(f"{label} ({format_estimate(cost.seconds)})", key=f"{key}_run", type="primary",
                            icon=":material/play_arrow:", help=sections_help(cost))
    if pressed or autorun:
        slot.empty()  # the results replace the estimate
        with heavy_work(cost):
            started = time.perf_counter()  # the time in line is no part of the measurement
            value = run()
        kept = Measurement(params, value, datetime.now().strftime("%H:%M:%S"), time.perf_counter() - started)
        st.session_state[_kept_key(key)] = kept
    return kept


def show_measurement(kept: Measurement, params, *, title: str, label: str, caption: str = "") -> None:
    """The head of a kept measurement: a note when the settings changed since (``params`` None: unknown,
    e.g. the settings are invalid now), its title, and when it ran and for how long."""
    if params is not None and kept.params != params:
        st.info(f"The settings changed since this run; the charts show the last run. Press **{label}** to measure "
                "the new settings.", icon=":material/info:")
    st.subheader(title)
    took = f"{kept.elapsed:.2g} s" if kept.elapsed < 10 else f"{kept.elapsed:,.0f} s"  # measured: never "0.0 s"
    st.caption(f"Run at {kept.when}, {took} in all. {caption}".strip())


class guarded(ContextDecorator):
    """Run a page's compute: ValueError -> its message, MemoryError -> "reduce n or D", anything else ->
    logged with its traceback and a short message; the page goes on. ``g.failed`` tells after the block."""

    def __init__(self, what: str = "this view"):
        self.what = what
        self.failed = False

    def __enter__(self):
        self.failed = False
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None or not issubclass(exc_type, Exception):
            return False  # st.stop / st.rerun / st.switch_page are BaseExceptions: let them through
        self.failed = True
        if issubclass(exc_type, Waiting):
            return True  # the estimate and the run button are shown
        if issubclass(exc_type, MemoryError):
            show_error(f"Out of memory while computing {self.what}: reduce n or D.")
        elif issubclass(exc_type, ValueError):
            show_error(str(exc) or f"Invalid input for {self.what}.")
        else:
            logger.error("Error while computing %s", self.what, exc_info=(exc_type, exc, tb))
            show_error(f"Something went wrong while computing {self.what} ({exc_type.__name__}: {exc}). "
                       "The details are in the server log.")
        return True
