"""Bounds on the bytes browsers make the server hold before any page sees them (issue 37, finding 1).

Streamlit keeps every file PUT to ``/_stcore/upload_file/<session>/<file id>`` in the server's memory until
the file is deleted or its session ends, and accepts ids it never issued (it answers 204 to made-up ids):
ten 15 MB uploads to made-up ids held 150 MB. Its only public bound is ``server.maxUploadSize``, per file
(this app: 64 MB, .streamlit/config.toml). :class:`UploadLimits`, ASGI middleware of the server entry
(serve.py, Streamlit's public ``st.App``), refuses an upload, before Streamlit reads its body, when it would
take a session past MAX_SESSION_FILES files or MAX_SESSION_BYTES bytes held at once, a browser (its owner
cookie, :mod:`rkapp.identity`) past MAX_OWNER_BYTES over all its sessions, or the server past
:func:`server_upload_bytes` (``RKCORE_UPLOAD_MEMORY``, default a quarter of the server's memory budget);
the answer is 413 with a sentence saying which bound. Ids the page never issued count like any other.

Memory, not bytes, for the server's bound: an upload costs the app process :data:`UPLOAD_MEMORY_FACTOR` times
its size for as long as it is held (measured with ``benchmarks/app/bench_uploads.py``: 0.13-0.16 GB held by the
app process for one 59 MB file, 0.54 GB for four: Streamlit's copy read from its temporary file, the bytes of
the request in flight, what the rerun and the copies sent to the workers leave), so the bound is checked at that
price before Streamlit reads the body (its Content-Length).

One bound for all app processes: with ``rkcore-app --processes N`` the processes share the folder
``RKCORE_STORE_DIR`` (:mod:`rkapp.uploads`), and there each one writes the bytes its sessions hold into one
SQLite ledger (:class:`HeldLedger`; the standard library's ``sqlite3``: its ``BEGIN IMMEDIATE`` transactions hold
across processes): an upload is admitted in a transaction that reads the other processes' totals and writes its
own, so the sum over every process stays within :func:`server_upload_bytes` (an even split, budget / N, would
refuse a 59 MB file in each process of two under a 1 GB budget). A process recounts (ended sessions dropped) at
every upload and at most every :data:`RECOUNT_SECONDS` while it serves requests; the rows of a process that
ended are dropped. The per-page and per-browser bounds stay per process (nginx's cookie affinity keeps a
browser's tabs on one process). The parsing of uploads and every heavy run share the server's budget through
the Dask workers' ``MEMORY`` resource (:mod:`rkapp.workers`).
"""
from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from pathlib import Path
from typing import Callable

from rkcore.base.admission import SERVER_MEMORY_ENV, server_memory

from .identity import OWNER_COOKIE, owner_from_cookie

__all__ = ["HeldLedger", "MAX_OWNER_BYTES", "MAX_SESSION_BYTES", "MAX_SESSION_FILES", "UPLOAD_MEMORY_FACTOR",
           "UploadLimits", "server_upload_bytes"]

MB = 2**20
#: Files one session may hold at once (the page has one uploader: a new file replaces the last one).
MAX_SESSION_FILES = 4
#: Bytes one session may hold at once: two files of the largest size the uploader takes (64 MB).
MAX_SESSION_BYTES = 2 * 64 * MB + MB
#: Bytes one browser (owner cookie) may hold over all its sessions (tabs) at once.
MAX_OWNER_BYTES = 3 * 64 * MB + MB
UPLOAD_MEMORY_ENV = "RKCORE_UPLOAD_MEMORY"
#: The ledger's file in the store folder the app processes share (RKCORE_STORE_DIR).
LEDGER_FILE = "uploads_held.sqlite3"
#: Seconds between two recounts of this process's held uploads while it serves requests.
RECOUNT_SECONDS = 5.0
#: What an upload held costs the app process's memory, as a multiple of its size (module docstring: measured
#: 2.2-2.7x for 59 MB files, one to four at once).
UPLOAD_MEMORY_FACTOR = 2.5
_UPLOAD_PATH = re.compile(r"^/_stcore/upload_file/([^/]+)/([^/]+)$")


def server_upload_bytes() -> int:
    """Bytes of memory all sessions' uploads may take together, over every app process: ``RKCORE_UPLOAD_MEMORY``,
    else a quarter of the server's memory budget (``RKCORE_SERVER_MEMORY``).

    Returns
    -------
    int
        The bound in bytes, at least 1.
    """
    import os

    text = os.environ.get(UPLOAD_MEMORY_ENV, "").strip()
    if text:
        try:
            value = float(text)
        except ValueError:
            value = 0.0
        if not value >= 1 or value == float("inf"):
            raise ValueError(f"{UPLOAD_MEMORY_ENV} must be a positive number of bytes, got {text!r}.")
        return int(value)
    try:
        return max(1, server_memory() // 4)
    except ValueError as exc:
        raise ValueError(f"{exc} ({SERVER_MEMORY_ENV} also bounds uploads)") from None


def _streamlit_session_is_active(session_id: str) -> bool:
    """Whether Streamlit still runs the session (its files are dropped when it ends)."""
    try:
        from streamlit import runtime

        return runtime.get_instance().is_active_session(session_id)
    except Exception:  # noqa: BLE001 - no runtime (tests): count the session as active
        return True


def _header(scope, name: bytes) -> bytes | None:
    return next((v for k, v in scope.get("headers", []) if k == name), None)


def _owner(scope) -> str | None:
    cookies = _header(scope, b"cookie")
    for part in (cookies or b"").decode("latin-1").split(";"):
        key, _, value = part.strip().partition("=")
        if key == OWNER_COOKIE:
            return owner_from_cookie(value)
    return None


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


class HeldLedger:
    """The upload bytes each app process holds, in one SQLite file the server's processes share (module docstring).

    Parameters
    ----------
    folder : str or Path
        The folder every app process shares (``RKCORE_STORE_DIR``).
    pid : int, optional
        This process's row (default its process id).
    alive : callable, optional
        ``alive(pid)``: whether a process still runs (its row counts); default: the operating system's answer.
    """

    def __init__(self, folder, pid: int | None = None, alive: Callable[[int], bool] | None = None):
        self.path = Path(folder) / LEDGER_FILE
        self.pid = os.getpid() if pid is None else int(pid)
        self._alive = alive or _process_alive

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        conn.execute("CREATE TABLE IF NOT EXISTS held (pid INTEGER PRIMARY KEY, bytes INTEGER NOT NULL)")
        return conn

    def others(self, conn: sqlite3.Connection) -> int:
        """Bytes the other running processes hold (rows of ended processes removed)."""
        rows = conn.execute("SELECT pid, bytes FROM held WHERE pid != ?", (self.pid,)).fetchall()
        gone = [(pid,) for pid, _ in rows if not self._alive(pid)]
        conn.executemany("DELETE FROM held WHERE pid = ?", gone)
        return sum(b for pid, b in rows if (pid,) not in gone)

    def settle(self, own: int, fits: Callable[[int], bool] | None = None) -> bool:
        """In one transaction: when ``fits(others' bytes)`` (default: always), write this process's total ``own``.

        Returns
        -------
        bool
            Whether it was written.
        """
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            ok = fits is None or fits(self.others(conn))
            if ok:
                conn.execute("INSERT OR REPLACE INTO held (pid, bytes) VALUES (?, ?)", (self.pid, int(own)))
            conn.execute("COMMIT")
            return ok
        finally:
            conn.close()


def _default_ledger() -> HeldLedger | None:
    from .uploads import STORE_DIR_ENV

    folder = os.environ.get(STORE_DIR_ENV, "").strip()
    return HeldLedger(folder) if folder else None


class UploadLimits:
    """ASGI middleware bounding the uploads held per session, per browser and for the server (module docstring).

    Parameters
    ----------
    app : ASGI application
        The application it wraps (Streamlit's).
    server_bytes : int, optional
        Memory the server's uploads may take, each priced :data:`UPLOAD_MEMORY_FACTOR` times its size (default
        :func:`server_upload_bytes`, read when the server starts).
    is_active : callable, optional
        ``is_active(session_id)``: whether the session still holds its files (default: Streamlit's runtime).
    ledger : HeldLedger or False, optional
        Where the server's other app processes' uploads are counted (default: in ``RKCORE_STORE_DIR`` when set;
        False or none: this process is the server).
    """

    def __init__(self, app, server_bytes: int | None = None, is_active: Callable[[str], bool] | None = None,
                 ledger: HeldLedger | None | bool = None):
        self.app = app
        self.server_bytes = server_upload_bytes() if server_bytes is None else int(server_bytes)
        self._is_active = is_active or _streamlit_session_is_active
        self._ledger = _default_ledger() if ledger is None else (ledger or None)
        self._lock = threading.Lock()
        self._held: dict[str, dict[str, tuple[int, str | None]]] = {}  # session -> file id -> (bytes, owner)
        self._recounted = time.monotonic()

    async def __call__(self, scope, receive, send):
        match = _UPLOAD_PATH.match(scope.get("path", "")) if scope.get("type") == "http" else None
        if match is None or scope.get("method") not in ("PUT", "DELETE"):
            if scope.get("type") == "http" and time.monotonic() - self._recounted > RECOUNT_SECONDS:
                self._recount()  # ended sessions' files leave the server-wide count
            return await self.app(scope, receive, send)
        session, file_id = match.groups()
        if scope["method"] == "DELETE":
            with self._lock:
                self._held.get(session, {}).pop(file_id, None)
            self._recount()
            return await self.app(scope, receive, send)
        refusal = self._admit(session, file_id, scope)
        if refusal is not None:
            return await _refuse(send, refusal)

        async def record(message):
            if message.get("type") == "http.response.start" and message.get("status", 500) >= 300:
                with self._lock:  # not kept by Streamlit: not held
                    self._held.get(session, {}).pop(file_id, None)
                self._recount()
            await send(message)

        return await self.app(scope, receive, record)

    def _admit(self, session: str, file_id: str, scope) -> str | None:
        """Hold the upload's bytes (its Content-Length) when every bound allows; else the refusal's sentence."""
        length = _header(scope, b"content-length")
        if length is None or not length.isdigit():
            return "An upload must state its size (Content-Length)."
        size, owner = int(length), _owner(scope)
        with self._lock:
            for gone in [s for s in self._held if not self._is_active(s)]:
                del self._held[gone]
            files = {f: v for f, v in self._held.get(session, {}).items() if f != file_id}
            if len(files) >= MAX_SESSION_FILES:
                return f"This page holds {len(files)} uploaded files, the most one page may hold; reload it first."
            if sum(b for b, _ in files.values()) + size > MAX_SESSION_BYTES:
                return "This page's uploads would take more memory than one page may hold; reload it first."
            others = [(s, f, b, o) for s, held in self._held.items() for f, (b, o) in held.items()
                      if (s, f) != (session, file_id)]
            if owner is not None and sum(b for *_, b, o in others if o == owner) + size > MAX_OWNER_BYTES:
                return "Your open tabs hold as many uploads as one browser may; close some tabs or reload them."
            mine = sum(b for *_, b, _ in others) + size
            if not self._settle(mine, lambda elsewhere: UPLOAD_MEMORY_FACTOR * (elsewhere + mine) <= self.server_bytes):
                return ("The server holds as many uploads as its memory allows for now; try again in a few minutes "
                        "(uploads are freed when their pages are closed).")
            self._held.setdefault(session, {})[file_id] = (size, owner)
        return None

    def _settle(self, mine: int, fits: Callable[[int], bool] | None = None) -> bool:
        """Whether ``fits(the other processes' bytes)`` (0 without a ledger), this process's total ``mine`` written
        to the ledger when it does."""
        if self._ledger is None:
            return fits is None or fits(0)
        return self._ledger.settle(mine, fits)

    def _recount(self) -> None:
        """Drop ended sessions' uploads and write this process's total to the ledger."""
        with self._lock:
            for gone in [s for s in self._held if not self._is_active(s)]:
                del self._held[gone]
            self._recounted = time.monotonic()
            self._settle(sum(b for held in self._held.values() for b, _ in held.values()))

    def held_memory(self) -> float:
        """Memory the uploads held now cost, over all sessions: :data:`UPLOAD_MEMORY_FACTOR` times their bytes.

        Returns
        -------
        float
            Bytes, at most ``server_bytes``.
        """
        return UPLOAD_MEMORY_FACTOR * self.held_bytes()

    def held_bytes(self) -> int:
        """Bytes of uploads held now, over all sessions (for tests and the benchmark).

        Returns
        -------
        int
            The sum of the admitted uploads' sizes.
        """
        with self._lock:
            return sum(b for held in self._held.values() for b, _ in held.values())


async def _refuse(send, sentence: str) -> None:
    body = sentence.encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
