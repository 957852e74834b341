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

The server
----------
:class:`Admission` is what a server shared by many sessions adds on top: at most
:func:`server_runs` heavy runs at once (``RKCORE_SERVER_RUNS``, default one per core), the sum of
their predicted peak bytes within :func:`server_memory` (``RKCORE_SERVER_MEMORY``, default a
quarter of physical memory), the others waiting in arrival order.
"""
from __future__ import annotations

import itertools
import math
import os
import threading
import time
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
    "Admission", "CostEstimate", "Ticket", "check_allocation", "estimate_cost", "format_bytes", "max_size_within",
    "memory_budget", "memory_budget_set", "nbytes", "physical_memory", "require_memory", "server_memory",
    "server_runs", "usable_cores",
]

_override: list[int] = []  # stack of budgets set by memory_budget_set


def physical_memory() -> int:
    """Bytes of physical memory (8 GiB where the OS does not say).

    Returns
    -------
    int
        Bytes of physical memory.
    """
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 * 2**30


def memory_budget() -> int:
    """The current budget in bytes (see the module docstring for how it is chosen).

    Returns
    -------
    int
        Bytes one allocation may use.
    """
    if _override:
        return _override[-1]
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
    _override.append(int(budget))
    try:
        yield int(budget)
    finally:
        _override.pop()


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
class CostEstimate:
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
                   itemsize: int = 8, what: str = "This view") -> CostEstimate:
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

    Returns
    -------
    CostEstimate
        The estimate, when it fits the budget.
    """
    budget = memory_budget() if budget is None else int(budget)
    cost = estimate_cost(parts, itemsize)
    if cost.bytes > budget:
        raise ValueError(f"{what} would need about {format_bytes(cost.bytes)} of memory ({cost.describe()}), "
                         f"more than the {format_bytes(budget)} allowed. {hint}".strip())
    return cost


def check_allocation(name: str, shape: tuple[int, ...], dtype=np.float64, *, budget: int | None = None,
                     hint: str = "") -> int:
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
                         f"({size:,} bytes) of memory, more than the {format_bytes(budget)} allowed. {hint}".strip())
    return size


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


# ============================================================================ server-wide admission
#: Environment variables read once when a server builds its admission control (rkapp.guard).
SERVER_RUNS_ENV = "RKCORE_SERVER_RUNS"
SERVER_MEMORY_ENV = "RKCORE_SERVER_MEMORY"


def usable_cores() -> int:
    """Cores this process may run on (the affinity mask where the OS has one).

    Returns
    -------
    int
        At least 1: the CPUs of the process's affinity mask, else ``os.cpu_count()``.
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


def _positive_env(name: str, default: int) -> int:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name} must be a positive number, got {text!r}.") from None
    if not math.isfinite(value) or value < 1:
        raise ValueError(f"{name} must be a positive number, got {text!r}.")
    return int(value)


def server_runs() -> int:
    """Heavy runs at once on a server: ``RKCORE_SERVER_RUNS``, else one per usable core (the pages limit
    BLAS to one thread, so each run keeps one core busy).

    Returns
    -------
    int
        The number of run slots, at least 1.

    Raises
    ------
    ValueError
        When ``RKCORE_SERVER_RUNS`` is set but is not a finite number >= 1.
    """
    return _positive_env(SERVER_RUNS_ENV, usable_cores())


def server_memory() -> int:
    """Bytes all admitted runs of a server may need together: ``RKCORE_SERVER_MEMORY``, else a quarter of
    the machine's physical memory.

    Returns
    -------
    int
        The server's memory budget in bytes, at least 1.

    Raises
    ------
    ValueError
        When ``RKCORE_SERVER_MEMORY`` is set but is not a finite number >= 1.
    """
    return _positive_env(SERVER_MEMORY_ENV, physical_memory() // 4)


@dataclass
class Ticket:
    """One run's place at the server: its predicted peak bytes and seconds, and when it arrived.

    Made by :meth:`Admission.request`, not by hand.

    Parameters
    ----------
    bytes : int
        The run's predicted peak memory in bytes (from its cost model).
    seconds : float
        The run's predicted duration in seconds (0.0 when unknown).
    arrival : float
        When it joined the line, on the admission's clock; the line is ordered by it.
    serial : int
        Tie-breaker between equal arrivals (increasing per admission).
    admitted : bool, default=False
        Whether it holds a slot.
    done : bool, default=False
        Whether it was released (finished, or left the line).
    started : float, default=0.0
        When it was admitted, on the admission's clock.
    """

    bytes: int
    seconds: float
    arrival: float
    serial: int
    admitted: bool = False
    done: bool = False
    started: float = 0.0


class Admission:
    """Server-wide admission of heavy runs, shared by every session of a process: at most ``slots`` runs
    at once, the sum of their predicted peak bytes at most ``budget``; the others wait in arrival order
    (strictly: a large run at the head is not overtaken by smaller ones, so it cannot starve). Nothing is
    dropped: a ticket waits until admitted or released. Pure threading, no streamlit (rkapp.guard shows
    the queue).

    Parameters
    ----------
    slots : int
        Runs admitted at once, at least 1 (a server uses :func:`server_runs`).
    budget : int
        Bytes the admitted runs may need together, at least 1 (a server uses :func:`server_memory`).
    clock : callable, default=time.monotonic
        Seconds now, for arrivals and the expected wait (tests pass a fake clock).

    Raises
    ------
    ValueError
        When ``slots`` or ``budget`` is below 1.
    """

    def __init__(self, slots: int, budget: int, clock: Callable[[], float] = time.monotonic):
        if slots < 1 or budget < 1:
            raise ValueError(f"An admission needs at least one slot and one byte, got {slots} and {budget}.")
        self.slots, self.budget, self._clock = int(slots), int(budget), clock
        self._cond = threading.Condition()
        self._waiting: list[Ticket] = []  # by (arrival, serial)
        self._running: list[Ticket] = []
        self._serial = itertools.count()

    def request(self, bytes_: int, seconds: float = 0.0, arrival: float | None = None) -> Ticket:
        """A ticket for a run, admitted at once when it is first in line and fits.

        Parameters
        ----------
        bytes_ : int
            The run's predicted peak memory in bytes.
        seconds : float, default=0.0
            The run's predicted duration in seconds, for :meth:`expected_wait`.
        arrival : float, optional
            Its place in line, on the admission's clock; an earlier value keeps an earlier place (a rerun
            of a session that was already waiting). None: now.

        Returns
        -------
        Ticket
            The run's ticket, admitted or waiting; pass it to :meth:`release` when done.

        Raises
        ------
        ValueError
            When the run alone needs more than the whole budget: it could never be admitted.
        """
        if bytes_ > self.budget:
            raise ValueError(f"This run would need about {format_bytes(bytes_)} of memory, more than the "
                             f"{format_bytes(self.budget)} this server gives all runs at once.")
        with self._cond:
            ticket = Ticket(int(bytes_), float(seconds), self._clock() if arrival is None else float(arrival),
                            next(self._serial))
            self._waiting.append(ticket)
            self._waiting.sort(key=lambda t: (t.arrival, t.serial))
            self._admit()
            return ticket

    def _admit(self) -> None:
        """Admit from the head of the line while a slot is free and the head fits the budget (lock held)."""
        used = sum(t.bytes for t in self._running)
        while self._waiting and len(self._running) < self.slots and used + self._waiting[0].bytes <= self.budget:
            ticket = self._waiting.pop(0)
            ticket.admitted, ticket.started = True, self._clock()
            self._running.append(ticket)
            used += ticket.bytes
        self._cond.notify_all()

    def wait(self, ticket: Ticket, timeout: float | None = None) -> bool:
        """Block until the ticket is admitted or ``timeout`` seconds passed.

        Parameters
        ----------
        ticket : Ticket
            A ticket of this admission.
        timeout : float, optional
            Seconds to wait at most; None waits until it is admitted or released.

        Returns
        -------
        bool
            Whether the ticket is admitted (False when the time ran out or it was released).
        """
        with self._cond:
            self._cond.wait_for(lambda: ticket.admitted or ticket.done, timeout)
            return ticket.admitted and not ticket.done

    def release(self, ticket: Ticket) -> None:
        """The run ended (or its session went away): free its slot and bytes, or leave the line.

        Idempotent; the runs waiting next are admitted where they now fit.

        Parameters
        ----------
        ticket : Ticket
            A ticket of this admission.
        """
        with self._cond:
            if ticket.done:
                return
            ticket.done = True
            if ticket in self._running:
                self._running.remove(ticket)
            elif ticket in self._waiting:
                self._waiting.remove(ticket)
            self._admit()

    def position(self, ticket: Ticket) -> int:
        """The ticket's place in line.

        Parameters
        ----------
        ticket : Ticket
            A ticket of this admission.

        Returns
        -------
        int
            0 once admitted (or released), else 1 + the number of runs waiting ahead of it.
        """
        with self._cond:
            if ticket in self._waiting:
                return 1 + self._waiting.index(ticket)
            return 0

    def expected_wait(self, ticket: Ticket) -> float:
        """Seconds until the ticket's turn, from the cost models.

        Parameters
        ----------
        ticket : Ticket
            A ticket of this admission.

        Returns
        -------
        float
            The predicted seconds left of the running runs plus those of the runs waiting ahead of it,
            divided by the number of slots (0.0 when nothing runs or waits ahead).
        """
        with self._cond:
            now = self._clock()
            ahead = self._waiting[:self._waiting.index(ticket)] if ticket in self._waiting else []
            left = sum(max(0.0, t.seconds - (now - t.started)) for t in self._running)
            return (left + sum(t.seconds for t in ahead)) / self.slots

    def state(self) -> dict:
        """Running and waiting runs and the bytes admitted, for a status line and the tests.

        Returns
        -------
        dict
            ``running`` and ``waiting`` (numbers of tickets), ``bytes`` (the sum of the running runs'
            bytes), ``slots`` and ``budget`` (the admission's limits).
        """
        with self._cond:
            return {"running": len(self._running), "waiting": len(self._waiting),
                    "bytes": sum(t.bytes for t in self._running), "slots": self.slots, "budget": self.budget}

    @contextmanager
    def admitted(self, bytes_: int, seconds: float = 0.0, *, arrival: float | None = None,
                 on_wait: Callable[[Ticket], None] | None = None, poll: float = 0.5) -> Iterator[Ticket]:
        """Hold a slot for the ``with`` block; the slot or the place in line is released whatever ends it.

        Parameters
        ----------
        bytes_ : int
            The run's predicted peak memory in bytes.
        seconds : float, default=0.0
            The run's predicted duration in seconds.
        arrival : float, optional
            Its place in line (see :meth:`request`); None: now.
        on_wait : callable, optional
            Called as ``on_wait(ticket)`` every ``poll`` seconds while the ticket waits; it may raise to
            abandon the wait (e.g. a session's stop).
        poll : float, default=0.5
            Seconds between calls of ``on_wait``.

        Yields
        ------
        Ticket
            The admitted ticket.

        Raises
        ------
        ValueError
            When the run alone needs more than the whole budget (see :meth:`request`).
        """
        ticket = self.request(bytes_, seconds, arrival)
        try:
            while not self.wait(ticket, poll):
                if on_wait is not None:
                    on_wait(ticket)
            yield ticket
        finally:
            self.release(ticket)
