"""Server-wide admission of heavy runs: what a server shared by many sessions adds on top of the
per-computation budget of :mod:`rkcore.base.limits`.

:class:`Admission` admits at most :func:`server_runs` heavy runs at once (``RKCORE_SERVER_RUNS``, default
one per core), the sum of their predicted peak bytes within :func:`server_memory`
(``RKCORE_SERVER_MEMORY``, default a quarter of physical memory), the others waiting in line. The line
serves owners (students), not requests (tabs): round robin across owners, each owner's runs in arrival
order, at most :data:`RUNS_PER_OWNER` runs of one owner at once, so a student with six tabs cannot make
another wait behind all six. Pure threading, no streamlit (rkapp.guard shows the queue).
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

__all__ = ["Admission", "OWNER_RUNS_ENV", "RUNS_PER_OWNER", "SERVER_MEMORY_ENV", "owner_runs", "SERVER_RUNS_ENV", "Ticket", "server_memory", "server_runs", "usable_cores"]

#: Environment variables read once when a server builds its admission control (rkapp.guard).
SERVER_RUNS_ENV = "RKCORE_SERVER_RUNS"
SERVER_MEMORY_ENV = "RKCORE_SERVER_MEMORY"
#: Runs of one owner admitted at once by default: a student's second tab waits for the first one's run,
#: leaving the other slots to other students (``RKCORE_OWNER_RUNS`` sets another number).
RUNS_PER_OWNER = 1
OWNER_RUNS_ENV = "RKCORE_OWNER_RUNS"


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


def owner_runs() -> int:
    """Heavy runs of one owner (a student's browser) at once on a server: ``RKCORE_OWNER_RUNS``, else
    :data:`RUNS_PER_OWNER`.

    Returns
    -------
    int
        At least 1.

    Raises
    ------
    ValueError
        When ``RKCORE_OWNER_RUNS`` is set but is not a finite number >= 1.
    """
    return _positive_env(OWNER_RUNS_ENV, RUNS_PER_OWNER)


@dataclass
class Ticket:  # numpydoc ignore=PR02
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
    owner : str or None, default=None
        Who asked (a student's owner id); None: an owner of its own (no fair share with any other ticket).
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
    owner: str | None = None
    admitted: bool = False
    done: bool = False
    started: float = 0.0


class Admission:
    """Server-wide admission of heavy runs, shared by every session of a process: at most ``slots`` runs
    at once, the sum of their predicted peak bytes at most ``budget``, at most ``per_owner`` runs of one
    owner. The others wait in line, which serves owners, not tickets: round robin, an owner's k-th
    waiting ticket (counting its running ones first) behind every other owner's earlier ones, ties in
    arrival order. Strict: a large run at the head is not overtaken by smaller ones, so it cannot starve;
    only tickets whose owner is at its ``per_owner`` runs are passed over. Nothing is dropped: a ticket
    waits until admitted or released. Pure threading, no streamlit (rkapp.guard shows the queue).

    Parameters
    ----------
    slots : int
        Runs admitted at once, at least 1 (a server uses :func:`server_runs`).
    budget : int
        Bytes the admitted runs may need together, at least 1 (a server uses :func:`server_memory`).
    clock : callable, default=time.monotonic
        Seconds now, for arrivals and the expected wait (tests pass a fake clock).
    per_owner : int, default=RUNS_PER_OWNER
        Runs of one owner admitted at once, at least 1.

    Raises
    ------
    ValueError
        When ``slots``, ``budget`` or ``per_owner`` is below 1.
    """

    def __init__(self, slots: int, budget: int, clock: Callable[[], float] = time.monotonic,
                 per_owner: int = RUNS_PER_OWNER):
        if slots < 1 or budget < 1 or per_owner < 1:
            raise ValueError(f"An admission needs at least one slot, one byte and one run per owner, got {slots}, "
                             f"{budget} and {per_owner}.")
        self.slots, self.budget, self.per_owner, self._clock = int(slots), int(budget), int(per_owner), clock
        self._cond = threading.Condition()
        self._waiting: list[Ticket] = []  # in line: by (round, arrival, serial), see _order
        self._running: list[Ticket] = []
        self._serial = itertools.count()
        self._turns = itertools.count()  # admissions, in order: an owner's last turn decides its place in a round
        self._served: dict = {}  # owner -> its last turn, while it has tickets

    def request(self, bytes_: int, seconds: float = 0.0, arrival: float | None = None,
                owner: str | None = None) -> Ticket:
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
        owner : str, optional
            Who asks (fair shares and the per-owner limit are by owner); None: an owner of its own.

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
                            next(self._serial), owner)
            self._waiting.append(ticket)
            self._admit()
            return ticket

    @staticmethod
    def _owner_of(ticket: Ticket):
        return ("ticket", ticket.serial) if ticket.owner is None else ("owner", ticket.owner)

    def _order(self) -> None:
        """Sort the line round robin across owners (lock held): an owner's k-th waiting ticket, in arrival
        order, after its running ones, is in round (running + k); within a round the owner served longest
        ago (or never) first, then arrival. Forgets the turns of owners with no ticket left."""
        counts: dict = {}
        for t in self._running:
            counts[self._owner_of(t)] = counts.get(self._owner_of(t), 0) + 1
        keys = {}
        for t in sorted(self._waiting, key=lambda t: (t.arrival, t.serial)):
            owner = self._owner_of(t)
            keys[t.serial] = (counts.get(owner, 0), self._served.get(owner, -1), t.arrival, t.serial)
            counts[owner] = keys[t.serial][0] + 1
        self._waiting.sort(key=lambda t: keys[t.serial])
        for owner in set(self._served) - set(counts):
            del self._served[owner]

    def _admit(self) -> None:
        """Admit in line order while a slot is free and the next eligible ticket fits the budget (lock held):
        tickets of an owner at its ``per_owner`` runs are passed over; the first other one that does not
        fit stops the admissions (no overtaking by smaller runs)."""
        self._order()
        used = sum(t.bytes for t in self._running)
        busy: dict = {}
        for t in self._running:
            busy[self._owner_of(t)] = busy.get(self._owner_of(t), 0) + 1
        for ticket in list(self._waiting):
            if len(self._running) >= self.slots:
                break
            owner = self._owner_of(ticket)
            if busy.get(owner, 0) >= self.per_owner:
                continue
            if used + ticket.bytes > self.budget:
                break
            self._waiting.remove(ticket)
            ticket.admitted, ticket.started = True, self._clock()
            self._running.append(ticket)
            used += ticket.bytes
            busy[owner] = busy.get(owner, 0) + 1
            self._served[owner] = next(self._turns)
        self._order()
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

    def ahead(self, ticket: Ticket) -> tuple[int, int]:
        """Who is ahead of the ticket in line: (runs of its own owner, runs of other owners), the own runs
        counting those running (a student's other tab) as well as those waiting ahead.

        Parameters
        ----------
        ticket : Ticket
            A ticket of this admission.

        Returns
        -------
        tuple of int
            (own, others); (0, 0) once admitted or released.
        """
        with self._cond:
            if ticket not in self._waiting:
                return 0, 0
            owner = self._owner_of(ticket)
            before = self._waiting[:self._waiting.index(ticket)]
            own = sum(self._owner_of(t) == owner for t in before + self._running)
            return own, sum(self._owner_of(t) != owner for t in before)

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
    def admitted(self, bytes_: int, seconds: float = 0.0, *, arrival: float | None = None, owner: str | None = None,
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
        owner : str, optional
            Who asks (see :meth:`request`).
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
        ticket = self.request(bytes_, seconds, arrival, owner)
        try:
            while not self.wait(ticket, poll):
                if on_wait is not None:
                    on_wait(ticket)
            yield ticket
        finally:
            self.release(ticket)
