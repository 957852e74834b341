"""Where a page's compute runs guarded, where every error message and every echo of user text goes
through, and the per-view memory budget."""
from __future__ import annotations

import logging
import os
import re
from contextlib import ContextDecorator
from typing import Callable

import streamlit as st

from rkcore.spec import check_memory, estimate_cost, max_size_within as _max_size_within

__all__ = ["MEMORY_BUDGET", "estimate_cost", "guarded", "literal", "max_size_within", "require_memory", "show_error",
           "show_warning"]

logger = logging.getLogger("rkcore.app")


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 * 2**30


#: Bytes one view may allocate: a quarter of the machine's memory, at most 2 GB
#: (the server is shared by every open session).
MEMORY_BUDGET = int(min(2 * 2**30, _physical_memory() // 4))


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
    check_memory(parts, MEMORY_BUDGET if budget is None else budget, hint)


def max_size_within(bytes_for: Callable[[int], int], *, budget: int | None = None, upper: int = 10**7) -> int:
    """The largest size s (e.g. n) with ``bytes_for(s) <= budget``, for "reduce n to ..." hints."""
    return _max_size_within(bytes_for, MEMORY_BUDGET if budget is None else budget, upper)


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
        if issubclass(exc_type, MemoryError):
            show_error(f"Out of memory while computing {self.what}: reduce n or D.")
        elif issubclass(exc_type, ValueError):
            show_error(str(exc) or f"Invalid input for {self.what}.")
        else:
            logger.error("Error while computing %s", self.what, exc_info=(exc_type, exc, tb))
            show_error(f"Something went wrong while computing {self.what} ({exc_type.__name__}: {exc}). "
                       "The details are in the server log.")
        return True
