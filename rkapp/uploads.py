"""Uploaded files kept on the server for a while, private to the browser that uploaded them.

Each upload gets a random token (``secrets.token_urlsafe``: 128 bits, never derived from the file's
content, so a token tells nothing about the file and cannot be guessed or checked against a candidate
file). The URL carries it (``upload=<token>``) so that a reload (F5: a new Streamlit session) finds
the file again. The token alone gives nothing: the file, its name and its columns are handed out
only to their **owner**, unless the uploader ticks "share this file with the link" (:func:`set_shared`).

The owner is the uploading browser, recognised by the app's own signed, HttpOnly cookie
(:mod:`rkapp.identity`); only an HMAC of its id is kept. Without a valid cookie, the owner is the
session itself: a reload then asks to upload again.

Where: one SQLite file (Python's own ``sqlite3``: nothing to install, transactions and locking that
hold across processes, a single file to put on a local disk) in the folder ``RKCORE_STORE_DIR``, which
``rkcore-app --processes N`` creates for all its app processes, so that a link works whichever process
the browser lands on. Without it, the store is a private folder of this process (as one process needs).
The files live on disk, not in the server's memory.

Bounded: MAX_ENTRY_BYTES per file (larger files work for their session but are not kept),
MAX_OWNER_BYTES per owner (a new file of that owner pushes out only that owner's least recently used
ones: nobody can evict another student's file), MAX_TOTAL_BYTES in all (when the other owners' files
leave no room, the new one is refused with :class:`StoreFull`, saying so: it still works in its
session), each file forgotten TTL_SECONDS after its last use.
"""
from __future__ import annotations

import hmac
import os
import re
import secrets
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

from rkcore.base.limits import format_bytes

from .shared_store import SharedStore

MAX_ENTRY_BYTES = 32 * 2**20
MAX_TOTAL_BYTES = 1024 * 2**20  # on disk
TTL_SECONDS = 2 * 3600
TOKEN_BYTES = 16  # 128 bits
MAX_NAME_CHARS = 255  # a file name longer than a file system allows is cut
_ENTRY_OVERHEAD = 1024  # bytes counted per entry besides the content, so tiny files cannot be unbounded in number
MAX_OWNER_BYTES = 2 * (MAX_ENTRY_BYTES + _ENTRY_OVERHEAD)  # two files of the largest kept size per owner
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{22}$")  # token_urlsafe(16): 22 URL-safe base64 characters
STORE_DIR_ENV = "RKCORE_STORE_DIR"


def _clock() -> float:
    return time.time()  # wall time: the same in every process that shares the store


def _size(content: bytes) -> int:
    return len(content) + _ENTRY_OVERHEAD


_SCHEMA = """CREATE TABLE IF NOT EXISTS uploads (
    token TEXT PRIMARY KEY, owner TEXT NOT NULL, name TEXT NOT NULL, content BLOB NOT NULL,
    shared INTEGER NOT NULL, size INTEGER NOT NULL, last_used REAL NOT NULL)"""
_private_dir: str | None = None
_dir_lock = threading.Lock()


def store_path() -> Path:
    """The SQLite file: under RKCORE_STORE_DIR when set (shared by the app processes), else in a
    folder private to this process (created on first use, mode 0700)."""
    global _private_dir
    folder = os.environ.get(STORE_DIR_ENV)
    if not folder:
        with _dir_lock:
            if _private_dir is None:
                _private_dir = tempfile.mkdtemp(prefix="rkcore-uploads-")
            folder = _private_dir
    return Path(folder) / "uploads.sqlite3"


_STORE = SharedStore(store_path, (_SCHEMA, "CREATE INDEX IF NOT EXISTS by_owner ON uploads (owner, last_used)"))
_db = _STORE.connection
_Transaction = _STORE.transaction


def _expire(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM uploads WHERE last_used < ?", (_clock() - TTL_SECONDS,))


def _row(conn: sqlite3.Connection, token: str | None):
    if not is_token(token):
        return None
    return conn.execute("SELECT owner, name, shared, last_used FROM uploads WHERE token = ?", (token,)).fetchone()


def _alive(row) -> bool:
    return row is not None and row[3] >= _clock() - TTL_SECONDS


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def is_token(text) -> bool:
    return isinstance(text, str) and bool(_TOKEN.match(text))


class StoreFull(ValueError):
    """The store holds other owners' files up to MAX_TOTAL_BYTES: a new file is refused, not kept by evicting
    someone else's (it still works in its session)."""


def keep(name: str, content: bytes, owner: str, *, token: str | None = None, shared: bool = False) -> str | None:
    """Keep the file for ``owner`` under ``token`` (a new random one by default); returns the token, or None
    when the file is too large to keep (it still works in the session). The owner's own least recently used
    files make room for it (MAX_OWNER_BYTES); another owner's never do.

    Raises
    ------
    StoreFull
        When the other owners' files leave no room for it (MAX_TOTAL_BYTES); the message says so.
    """
    size = _size(content)
    if len(content) > MAX_ENTRY_BYTES:
        return None
    with _Transaction() as conn:
        _expire(conn)
        current = _row(conn, token)
        if not is_token(token) or (current is not None and not hmac.compare_digest(current[0], owner)):
            token = new_token()  # never take over another owner's token
        conn.execute("DELETE FROM uploads WHERE token = ?", (token,))
        _make_room(conn, owner, size)
        total = conn.execute("SELECT COALESCE(SUM(size), 0) FROM uploads").fetchone()[0]
        if total + size > MAX_TOTAL_BYTES:
            raise StoreFull(f"The server keeps {format_bytes(MAX_TOTAL_BYTES)} of uploads for everyone, and other "
                            "students' files fill it now: your file works on this page, but it is not kept for a "
                            "reload or a link. Try again later (files are forgotten "
                            f"{TTL_SECONDS // 3600} h after their last use).")
        conn.execute("INSERT INTO uploads VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (token, owner, str(name)[:MAX_NAME_CHARS], sqlite3.Binary(content), int(bool(shared)), size,
                      _clock()))
    return token


def _make_room(conn: sqlite3.Connection, owner: str, size: int) -> None:
    """Drop the owner's least recently used files until ``size`` more bytes fit in MAX_OWNER_BYTES."""
    rows = conn.execute("SELECT token, size FROM uploads WHERE owner = ? ORDER BY last_used DESC", (owner,)).fetchall()
    used = 0
    for token, entry_size in rows:
        used += entry_size
        if used + size > MAX_OWNER_BYTES:
            conn.execute("DELETE FROM uploads WHERE token = ?", (token,))
            used -= entry_size


def find(token: str, requester: str | None) -> tuple[str, bytes] | None:
    """(file name, bytes) kept under ``token`` if ``requester`` owns it or the owner shared it; None
    otherwise (unknown, expired, not a token, or not theirs: one answer for all, so a link tells nothing)."""
    if not is_token(token):
        return None
    with _Transaction() as conn:
        row = _row(conn, token)
        if not _alive(row):
            return None
        owner, name, shared, _ = row
        if not shared and not (requester and hmac.compare_digest(owner, requester)):
            return None
        conn.execute("UPDATE uploads SET last_used = ? WHERE token = ?", (_clock(), token))  # a use renews it
        content = conn.execute("SELECT content FROM uploads WHERE token = ?", (token,)).fetchone()[0]
        return name, bytes(content)


def readable(token: str, requester: str | None) -> bool:
    """Whether ``requester`` may still use the file (its owner, or it is shared), without renewing it: a
    session using another browser's shared file checks this on every rerun, so unsharing revokes it."""
    row = _row(_db(), token)
    return bool(_alive(row) and (row[2] or (requester and hmac.compare_digest(row[0], requester))))


def owns(token: str, requester: str | None) -> bool:
    row = _row(_db(), token)
    return bool(_alive(row) and requester and hmac.compare_digest(row[0], requester))


def is_shared(token: str) -> bool:
    row = _row(_db(), token)
    return bool(_alive(row) and row[2])


def set_shared(token: str, owner: str, shared: bool) -> bool:
    """Share (or stop sharing) the file with anyone holding its link; only its owner can. Returns
    whether the file is now shared."""
    if not is_token(token):
        return False
    with _Transaction() as conn:
        row = _row(conn, token)
        if not _alive(row) or not hmac.compare_digest(row[0], owner):
            return False
        conn.execute("UPDATE uploads SET shared = ? WHERE token = ?", (int(bool(shared)), token))
        return bool(shared)


def forget(token: str, owner: str) -> None:
    """Drop the owner's file (a new upload replaces it: one kept file per upload box)."""
    if not is_token(token):
        return
    with _Transaction() as conn:
        row = _row(conn, token)
        if row is not None and hmac.compare_digest(row[0], owner):
            conn.execute("DELETE FROM uploads WHERE token = ?", (token,))


def total_bytes() -> int:
    with _Transaction() as conn:
        _expire(conn)
        return int(conn.execute("SELECT COALESCE(SUM(size), 0) FROM uploads").fetchone()[0])


def owner_bytes(owner: str) -> int:
    conn = _db()
    return int(conn.execute("SELECT COALESCE(SUM(size), 0) FROM uploads WHERE owner = ? AND last_used >= ?",
                            (owner, _clock() - TTL_SECONDS)).fetchone()[0])


def clear() -> None:
    with _Transaction() as conn:
        conn.execute("DELETE FROM uploads")
