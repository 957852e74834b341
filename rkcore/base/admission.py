"""Server-wide admission of heavy runs: what a server shared by many sessions adds on top of the
per-computation budget of :mod:`rkcore.base.limits`.

:class:`Admission` admits at most :func:`server_runs` heavy runs at once (``RKCORE_SERVER_RUNS``, default
one per core), the sum of their predicted peak bytes within :func:`server_memory`
(``RKCORE_SERVER_MEMORY``, default a quarter of physical memory), the others waiting in arrival order.
Pure threading, no streamlit (rkapp.guard shows the queue).
"""
from __future__ import annotations

import itertools
import math
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator

from .limits import format_bytes, physical_memory

__all__ = ["Admission", "SERVER_MEMORY_ENV", "SERVER_RUNS_ENV", "Ticket", "server_memory", "server_runs", "usable_cores"]

#: Environment variables read once when a server builds its admission control (rkapp.guard).
SERVER_RUNS_ENV = "RKCORE_SERVER_RUNS"
SERVER_MEMORY_ENV = "RKCORE_SERVER_MEMORY"


def usable_cores() -> int:
    """Cores this process may run on: ``joblib.cpu_count()``, which takes the affinity mask and a cgroup
    CPU quota (a container's ``--cpus``) into account.

    Returns
    -------
    int
        At least 1.
    """
    from joblib import cpu_count  # scikit-learn's own dependency; imported here to keep rkcore's import cheap

    return max(1, int(cpu_count()))


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
