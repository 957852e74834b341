"""The script run in progress: one record per run, where the frame keeps what it drew.

Streamlit runs each session's script in a thread of its own, and an ``st.fragment`` rerun in a new
thread without the page's run. The frame's modules (layout, state, guard) keep what one run drew (its
title, presenter mode, the figures the offline export writes, the kept slots, the settings the sidebar
drew, whether the run holds a server slot) in one :class:`ScriptRun` per thread: :func:`begin_run` at
the top of a page (``rkapp.layout.page``), :func:`current_run` everywhere else. A thread that never
began a run (a fragment's rerun) gets an empty record, whose fields say "not drawn in this run".
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

DEFAULT_TITLE = "Random Kernel Explorer"


@dataclass
class ScriptRun:
    """What one script run drew (defaults: nothing, as in a fragment's rerun)."""

    title: str = DEFAULT_TITLE
    intro: str | None = None
    presenter: bool | None = None     # None: page() did not run in this thread (read the field instead)
    figures: list | None = None       # what the run shows, in order (the offline export); None: not recorded
    formulas: Any = None              # the "Formulas" expander, once drawn
    conclusion: Any = None            # the slot kept for the note's lead (rkapp.layout.notice)
    lead: Any = None                  # the slot kept for the main chart (rkapp.layout.lead)
    in_lead: bool = False             # drawing inside lead() now
    settings: dict | None = None      # the settings the sidebar drew; None: not drawn in this run
    holding_slot: bool = False        # the run holds one of the server's run slots (rkapp.guard.heavy_work)
    sidebar_tools: Any = None         # draws the lecture's sidebar controls once, under the settings
    memory: int = 0                   # the price in bytes of the admitted run it holds (rkapp.workers' resources)
    light: Any = None                 # the RunCost of the light run under way (rkapp.guard), None: none or heavy


_local = threading.local()


def current_run() -> ScriptRun:
    """The record of this thread's script run (an empty one if none began in this thread)."""
    run = getattr(_local, "run", None)
    if run is None:
        run = _local.run = ScriptRun()
    return run


def begin_run(**fields: Any) -> ScriptRun:
    """A page's run begins: a new record with ``fields`` set."""
    _local.run = ScriptRun(**fields)
    return _local.run


def draw_sidebar_tools() -> None:
    """The lecture's sidebar controls (the lesson and class expanders), once per run, where this is called: at
    the end of the settings (:func:`rkapp.widgets.sidebar`), or at the end of a page without settings."""
    run = current_run()
    draw, run.sidebar_tools = run.sidebar_tools, None
    if draw is not None:
        draw()
