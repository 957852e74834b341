"""Where a page's compute runs guarded, where every error message and every echo of user text goes
through, and the per-view memory budget."""
from __future__ import annotations

import logging
import re
from contextlib import ContextDecorator
from typing import Callable

import streamlit as st

from rkcore.limits import estimate_cost, physical_memory
from rkcore.limits import max_size_within as _max_size_within
from rkcore.limits import require_memory as _require_memory

__all__ = ["MEMORY_BUDGET", "estimate_cost", "guarded", "literal", "max_size_within", "require_memory", "show_error"]

logger = logging.getLogger("rkcore.app")


#: Bytes one view may allocate: a quarter of the machine's memory, at most 2 GB
#: (the server is shared by every open session).
MEMORY_BUDGET = int(min(2 * 2**30, physical_memory() // 4))


def literal(text) -> str:
    """Text shown literally by st.markdown / st.caption (no italics from x_j or *): every echo of
    something a user typed or a file named goes through here."""
    return re.sub(r"([\\`*_{}\[\]<>#+!|~$])", r"\\\1", str(text))


def show_error(message: str) -> None:
    """The one place an error reaches the user: in place, as st.error."""
    st.error(message)


def require_memory(parts: dict[str, tuple[int, ...]], *, budget: int | None = None, hint: str = "") -> None:
    """Refuse (ValueError, shown by :class:`guarded`) arrays of these shapes beyond the budget."""
    _require_memory(parts, budget=MEMORY_BUDGET if budget is None else budget, hint=hint)


def max_size_within(bytes_for: Callable[[int], int], *, budget: int | None = None, upper: int = 10**7) -> int:
    """The largest size s (e.g. n) with ``bytes_for(s) <= budget``, for "reduce n to ..." hints."""
    return _max_size_within(bytes_for, budget=MEMORY_BUDGET if budget is None else budget, upper=upper)


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
