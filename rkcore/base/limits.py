"""Size limits: bytes an allocation needs, a configurable budget, and clear refusals.

Every size a user controls (D, n, d, a file's largest feature index, ...) is checked here
*before* anything proportional to it is allocated, so that an oversized request raises a
ValueError naming the array, its shape and the bytes it would need, instead of numpy's
MemoryError after minutes of swapping. Pure Python: no numpy allocation, exact integer
arithmetic, so a shape like (10**9, 10**9) is priced without overflow.

The budget
----------
:func:`memory_budget` is the number of bytes one allocation (or one computation's set of
arrays) may use. Default: half of the machine's physical memory; override it with the
environment variable ``RKCORE_MEMORY_BUDGET`` (bytes or a size such as ``2GiB``, read at each call), or for a block of
code with ``with memory_budget_set(2 * 2**30): ...``. The dashboard passes its own,
smaller per-view budget explicitly (``budget=``).

What a server shared by many sessions adds on top (at most so many heavy runs at once, a server-wide
memory budget, a queue) is :mod:`rkcore.base.admission`.
"""
from __future__ import annotations

import math
import os
from contextvars import ContextVar
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

import numpy as np

from .validation import parse_byte_size

#: Heatmap cells per side sent to the browser (the engine block-averages larger matrices to it): a 1280-px
#: screen shows a heatmap ~400 px wide, so 120 cells are 3+ px each; three heatmaps of 120² are 43k numbers
#: (at 250² they were 190k and took seconds to draw).
HEATMAP_SIDE = 120

__all__ = [
    "CostEstimate", "block_bytes", "check_allocation", "estimate_cost", "format_bytes", "format_estimate",
    "max_size_within", "largest_fitting", "memory_budget", "memory_budget_set", "nbytes", "physical_memory",
    "require_memory", "working_memory_bytes",
]

#: The budget a ``memory_budget_set`` block set, per thread and context (a server's sessions run their scripts in
#: threads of one process: one session's block must not change another's budget), None outside any block.
_budget_in_block: ContextVar[int | None] = ContextVar("rkcore_memory_budget", default=None)


#: cgroup files holding a container's memory limit (v2, then v1), as distributed.system.memory_limit reads them
CGROUP_MEMORY_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")


def _cgroup_memory_limit() -> int | None:
    """The first readable cgroup memory limit in bytes, None where there is none ("max", absent, unreadable)."""
    for name in CGROUP_MEMORY_FILES:
        try:
            with open(name, encoding="ascii") as handle:
                text = handle.read().strip()
        except OSError:
            continue
        if text.isdigit():
            return int(text)
    return None


def physical_memory() -> int:
    """Bytes of memory this process may use: the machine's physical memory, lowered to the container's
    cgroup limit where one is set. With dask's ``distributed`` already imported, its
    ``system.MEMORY_LIMIT`` (the same cgroup reading, plus RLIMIT_RSS) is used; the library alone needs no dask.

    Returns
    -------
    int
        Bytes (8 GiB where the OS does not say).
    """
    import sys

    if "distributed.system" in sys.modules:
        return int(sys.modules["distributed.system"].MEMORY_LIMIT)
    try:
        total = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        total = 8 * 2**30
    limit = _cgroup_memory_limit()
    return min(total, limit) if limit else total


def memory_budget() -> int:
    """The current budget in bytes (see the module docstring for how it is chosen).

    Returns
    -------
    int
        Bytes one allocation may use.
    """
    in_block = _budget_in_block.get()
    if in_block is not None:
        return in_block
    env = os.environ.get("RKCORE_MEMORY_BUDGET", "").strip()
    if env:
        value = parse_byte_size(env, "RKCORE_MEMORY_BUDGET")
        if value > 0:
            return value
    return physical_memory() // 2


@contextmanager
def memory_budget_set(budget: int) -> Iterator[int]:
    """Use ``budget`` bytes as the default budget inside the ``with`` block.

    Parameters
    ----------
    budget : int
        Bytes, at least 1.

    Yields
    ------
    int
        The budget in force inside the block.
    """
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
        raise ValueError(f"The memory budget must be a positive number of bytes, got {budget!r}.")
    token = _budget_in_block.set(int(budget))
    try:
        yield int(budget)
    finally:
        _budget_in_block.reset(token)


def working_memory_bytes() -> int:
    """scikit-learn's ``working_memory`` (``sklearn.get_config()``, in MiB) in bytes.

    Set with ``sklearn.set_config(working_memory=...)`` or ``with sklearn.config_context(working_memory=...)``;
    scikit-learn's pairwise functions chunk their output rows by it, and rkcore's blocked computations
    (:func:`block_bytes`) do too.

    Returns
    -------
    int
        The working memory in bytes (at least 1).
    """
    import sklearn

    return max(1, int(sklearn.get_config()["working_memory"] * 2**20))


def block_bytes(default: int) -> int:
    """Bytes one block of a blocked computation may use: the module's ``default``, lowered to scikit-learn's
    ``working_memory`` when that is smaller.

    ``working_memory`` is scikit-learn's cap on temporary arrays (1024 MiB unless set); rkcore's defaults
    (a few MiB to 64 MiB) are below it, so the cost models that price one block at ``default`` bytes stay
    upper bounds, and ``sklearn.config_context(working_memory=...)`` shrinks rkcore's blocks as it shrinks
    scikit-learn's.

    Parameters
    ----------
    default : int
        The module's block size in bytes.

    Returns
    -------
    int
        ``min(default, working_memory_bytes())``, at least 1.
    """
    return max(1, min(int(default), working_memory_bytes()))


def nbytes(*shapes: tuple[int, ...], itemsize: int = 8) -> int:
    """Bytes of arrays with these shapes and ``itemsize`` bytes per entry (float64 by default).

    Exact (Python integers): never overflows, whatever the shape.

    Parameters
    ----------
    *shapes : tuple of int
        Array shapes.
    itemsize : int, default=8
        Bytes per element.

    Returns
    -------
    int
        Total bytes of arrays of these shapes (exact integer arithmetic).
    """
    return int(sum(math.prod(int(s) for s in shape) for shape in shapes) * int(itemsize))


def format_estimate(seconds: float) -> str:
    """An estimated time as honestly as an estimate allows: "under 1 s" below a second, else one
    significant digit ("about 3 s", "about 40 s", "about 2 minutes", "about 3 hours"). Estimates are good
    to a factor of a few, and "about 0 s" for a 0.3 s run was not true.

    Parameters
    ----------
    seconds : float
        The estimate in seconds.

    Returns
    -------
    str
        The phrase, e.g. "under 1 s" or "about 40 s" ("an unknown time" for a negative or non-finite value).
    """
    seconds = float(seconds)
    if not math.isfinite(seconds) or seconds < 0:
        return "an unknown time"
    if seconds < 1:
        return "under 1 s"
    for unit, size, up_to in (("s", 1, 90), ("minute", 60, 90 * 60), ("hour", 3600, math.inf)):
        if seconds < up_to:
            value = float(f"{seconds / size:.1g}")  # one significant digit (0.95 min rounds up to 1)
            shown = f"{value:,.0f}"
            plural = "" if unit == "s" or value == 1 else "s"
            return f"about {shown} {unit}{plural}"
    raise AssertionError("unreachable: the last unit has no upper bound")


def format_bytes(n: float) -> str:
    """1536 -> "1.5 KB" (binary units, up to PB; larger values stay in PB).

    Parameters
    ----------
    n : float
        A number of bytes.

    Returns
    -------
    str
        The size in B, KB, MB, GB, TB or PB (powers of 1024).
    """
    n = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1024 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


def _shape_text(shape: tuple[int, ...]) -> str:
    return " x ".join(f"{int(s):,}" for s in shape)


@dataclass(frozen=True)
class CostEstimate:  # numpydoc ignore=PR02
    """What a computation would need: bytes of memory, and the named arrays behind them.

    Parameters
    ----------
    bytes : int
        Total bytes of all the parts.
    parts : tuple of (str, int)
        Each named array and its bytes, in the order given.
    """

    bytes: int
    parts: tuple[tuple[str, int], ...]

    def describe(self) -> str:
        """One line: the total and each part in readable units.

        Returns
        -------
        str
            E.g. ``"7.8 KB (a 7.8 KB)"``.
        """
        return ", ".join(f"{name} {format_bytes(b)}" for name, b in self.parts)


def estimate_cost(parts: Mapping[str, tuple[int, ...]], itemsize: int = 8) -> CostEstimate:
    """Bytes of the arrays named by ``parts`` (name -> shape), ``itemsize`` bytes per entry.

    Parameters
    ----------
    parts : mapping of str to tuple of int
        Each array's name and shape.
    itemsize : int, default=8
        Bytes per element.

    Returns
    -------
    CostEstimate
        The total bytes and the bytes of each part.
    """
    sizes = tuple((name, nbytes(shape, itemsize=itemsize)) for name, shape in parts.items())
    return CostEstimate(sum(b for _, b in sizes), sizes)


def require_memory(parts: Mapping[str, tuple[int, ...]], *, budget: int | None = None, hint: str = "",
                   itemsize: int = 8, what: str = "This view",
                   largest: Mapping[str, Callable[[int], int]] | None = None) -> CostEstimate:
    """Refuse (ValueError) a computation whose arrays would need more than ``budget`` bytes.

    Returns the estimate when it fits. The message names each array and its size, the
    total and the budget, then ``hint`` (what the user can change).

    Parameters
    ----------
    parts : mapping of str to tuple of int
        Each array's name and shape.
    budget : int, optional
        Bytes allowed; None takes :func:`memory_budget`.
    hint : str, default=""
        What the user can change, appended to the message.
    itemsize : int, default=8
        Bytes per element.
    what : str, default="This view"
        The subject of the message.
    largest : mapping of str to callable, optional
        For each setting the user controls (e.g. ``"n_components (D)"``), the bytes the computation needs
        at a value of it, the others as given: the message names the largest value that fits
        (:func:`largest_fitting`).

    Returns
    -------
    CostEstimate
        The estimate, when it fits the budget.
    """
    budget = memory_budget() if budget is None else int(budget)
    cost = estimate_cost(parts, itemsize)
    if cost.bytes > budget:
        raise ValueError(f"{what} would need about {format_bytes(cost.bytes)} of memory ({cost.describe()}), "
                         f"more than the {format_bytes(budget)} allowed. {largest_fitting(largest, budget)}"
                         f"{hint}".strip())
    return cost


def check_allocation(name: str, shape: tuple[int, ...], dtype=np.float64, *, budget: int | None = None,
                     hint: str = "", largest: Mapping[str, Callable[[int], int]] | None = None) -> int:
    """Refuse (ValueError) one array ``name`` of ``shape`` and ``dtype`` above the budget; return its bytes.

    The message names the array, its shape and the bytes it needs, e.g. "random weights
    (1,000,000,000 x 10 float64) would need 74.5 GB of memory, more than the 12.0 GB allowed".

    Parameters
    ----------
    name : str
        The array's name, for the message.
    shape : tuple of int
        Its shape.
    dtype : numpy dtype, default=numpy.float64
        Its element type.
    budget : int, optional
        Bytes allowed; None takes :func:`memory_budget`.
    hint : str, default=""
        What the user can change, appended to the message.
    largest : mapping of str to callable, optional
        As in :func:`require_memory`: setting -> bytes at a value of it; the message names the largest
        value that fits. None: the largest first dimension of the array that fits, the others as given.

    Returns
    -------
    int
        The bytes the array needs (at most ``budget``).
    """
    budget = memory_budget() if budget is None else int(budget)
    dtype = np.dtype(dtype)
    size = nbytes(tuple(shape), itemsize=dtype.itemsize)
    if size > budget:
        raise ValueError(f"{name} ({_shape_text(shape)} {dtype.name}) would need {format_bytes(size)} "
                         f"({size:,} bytes) of memory, more than the {format_bytes(budget)} allowed. "
                         f"{largest_fitting(largest or _first_dimension(shape, dtype.itemsize), budget)}{hint}".strip())
    return size


def _first_dimension(shape: tuple[int, ...], itemsize: int) -> dict[str, Callable[[int], int]]:
    """The ``largest`` of an array whose first dimension is the setting: "number of rows (of a ... x 10 array)"."""
    rest = tuple(int(s) for s in shape[1:])
    what = f"first dimension (of a ... x {_shape_text(rest)} array)" if rest else "number of entries"
    return {what: lambda k: nbytes((k, *rest), itemsize=itemsize)}


def max_size_within(bytes_for: Callable[[int], int], *, budget: int | None = None, upper: int = 10**7) -> int:
    """The largest s in [0, upper] with ``bytes_for(s) <= budget`` (``bytes_for`` must be increasing).

    Parameters
    ----------
    bytes_for : callable
        ``bytes_for(size)``: the bytes a computation of that size needs (non-decreasing in size).
    budget : int, optional
        Bytes allowed; None takes :func:`memory_budget`.
    upper : int, default=10_000_000
        The largest size searched.

    Returns
    -------
    int
        The largest size in [0, upper] whose bytes fit the budget (0 if none does).
    """
    budget = memory_budget() if budget is None else int(budget)
    lo, hi = 0, int(upper)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if bytes_for(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


#: The largest setting :func:`largest_fitting` searches (bytes_for must be priced exactly up to it).
LARGEST_SEARCHED = 10**15


def largest_fitting(largest: Mapping[str, Callable[[int], int]] | None, budget: int | None = None) -> str:
    """Sentences naming, for each setting, the largest value whose computation fits ``budget`` bytes.

    "The largest n_components (D) that fits is 1,342,177 (the other settings as given). " - the refusal
    says what the user can run, not only what was too much. Settings no value of which fits (the
    other settings alone are too large) are left out, or, when none fits, said so.

    Parameters
    ----------
    largest : mapping of str to callable, or None
        Each setting's name (as the user writes it) and ``bytes_for(value)``, the bytes needed at that
        value with the other settings as given (non-decreasing in value). None gives "".
    budget : int, optional
        Bytes allowed; None takes :func:`memory_budget`.

    Returns
    -------
    str
        One sentence per setting, each ending with a space ("" when ``largest`` is empty or None).
    """
    budget = memory_budget() if budget is None else int(budget)
    sentences, hopeless = [], []
    for setting, bytes_for in (largest or {}).items():
        value = max_size_within(bytes_for, budget=budget, upper=LARGEST_SEARCHED)
        if value >= 1:
            sentences.append(f"The largest {setting} that fits is {value:,} (the other settings as given). ")
        else:
            hopeless.append(setting)
    if hopeless and not sentences:
        return f"No value of {' or '.join(hopeless)} alone makes it fit. "
    return "".join(sentences)
