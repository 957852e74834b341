"""Uploaded files kept on the server for a while, so that a browser reload (F5: a new Streamlit session)
finds the file again: the URL carries ``upload=<first 16 hex digits of its SHA-256>``, not the file.

Bounded: at most MAX_ENTRIES files, MAX_TOTAL_BYTES in all, MAX_ENTRY_BYTES each (larger uploads work
for the session but are not kept), each for TTL_SECONDS after its last use; the least recently used
go first. One store per server process: a link opened on another server (or after a restart, or
after the TTL) does not find the file, and the page says to upload it again.
"""
from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import OrderedDict

MAX_ENTRIES = 16
MAX_ENTRY_BYTES = 32 * 2**20
MAX_TOTAL_BYTES = 128 * 2**20
TTL_SECONDS = 2 * 3600
KEY_CHARS = 16
_KEY = re.compile(rf"^[0-9a-f]{{{KEY_CHARS}}}$")

_lock = threading.Lock()
_store: OrderedDict[str, tuple[str, bytes, float]] = OrderedDict()  # key -> (file name, bytes, last use)


def upload_key(content: bytes) -> str:
    """The URL key of a file's content: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(content).hexdigest()[:KEY_CHARS]


def is_key(text: str) -> bool:
    return bool(_KEY.match(text or ""))


def _expire(now: float) -> None:
    for key in [k for k, (_, _, used) in _store.items() if now - used > TTL_SECONDS]:
        del _store[key]


def keep(name: str, content: bytes, *, now: float | None = None) -> str | None:
    """Keep the file; returns its key, or None when it is too large to keep (it still works in the session)."""
    if len(content) > MAX_ENTRY_BYTES:
        return None
    key = upload_key(content)
    now = time.monotonic() if now is None else now
    with _lock:
        _expire(now)
        _store.pop(key, None)
        _store[key] = (name, content, now)
        while len(_store) > MAX_ENTRIES or sum(len(c) for _, c, _ in _store.values()) > MAX_TOTAL_BYTES:
            _store.popitem(last=False)  # least recently used first
    return key


def find(key: str, *, now: float | None = None) -> tuple[str, bytes] | None:
    """(file name, bytes) kept under ``key``, or None (unknown, expired, or not a key at all)."""
    if not is_key(key):
        return None
    now = time.monotonic() if now is None else now
    with _lock:
        _expire(now)
        entry = _store.pop(key, None)
        if entry is None:
            return None
        _store[key] = (entry[0], entry[1], now)  # a use renews it
        return entry[0], entry[1]


def clear() -> None:
    with _lock:
        _store.clear()
