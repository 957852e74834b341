"""Uploaded files kept on the server for a while, private to the browser that uploaded them.

Each upload gets a random token (``secrets.token_urlsafe``: 128 bits, never derived from the file's
content, so a token tells nothing about the file and cannot be guessed or checked against a candidate
file). The URL carries it (``upload=<token>``) so that a reload (F5: a new Streamlit session) finds
the file again. The token alone gives nothing: the file, its name and its columns are handed out
only to their **owner**, unless the uploader ticks "share this file with the link" (:func:`set_shared`).

The owner is the uploading browser, recognised by the app's own signed, HttpOnly cookie
(:mod:`rkapp.identity`); only an HMAC of its id is kept. Without a valid cookie, the owner is the
session itself: a reload then asks to upload again.

Bounded per owner and in all: MAX_ENTRY_BYTES per file (larger files work for their session but are
not kept), MAX_OWNER_BYTES per owner (a new upload evicts that owner's least recently used files, never
another's), MAX_TOTAL_BYTES in all (when the others' files leave no room, the new one is refused with
:class:`StoreFull`, saying so: it still works in its session); each file forgotten TTL_SECONDS after
its last use (a :class:`cachetools.TTLCache` sized in bytes, which the checks before each insertion keep
from evicting by size); one lock guards it (sessions run in threads).
One store per server process: a link opened after a restart, or after the TTL, finds nothing.
"""
from __future__ import annotations

import hmac
import re
import secrets
import threading
import time
from dataclasses import dataclass

from cachetools import TTLCache

from rkcore.base.limits import format_bytes

MAX_ENTRY_BYTES = 32 * 2**20
MAX_TOTAL_BYTES = 128 * 2**20
#: One owner's kept files together: one file of the largest kept size (a student's second upload replaces
#: the first when both are large), so 4 students' largest files fit the store at once.
MAX_OWNER_BYTES = MAX_ENTRY_BYTES + 1024
TTL_SECONDS = 2 * 3600
TOKEN_BYTES = 16  # 128 bits
MAX_NAME_CHARS = 255  # a file name longer than a file system allows is cut
_ENTRY_OVERHEAD = 1024  # bytes counted per entry besides the content, so tiny files cannot be unbounded in number
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{22}$")  # token_urlsafe(16): 22 URL-safe base64 characters


@dataclass
class Upload:
    name: str
    content: bytes
    owner: str
    shared: bool = False
    used: float = 0.0  # the store's clock at its last use (the owner's least recently used go first)


class StoreFull(ValueError):
    """The store holds other owners' files up to MAX_TOTAL_BYTES: a new file is refused, not kept by evicting
    someone else's (it still works in its session)."""


def _clock() -> float:
    return time.monotonic()


def _size(entry: Upload) -> int:
    return len(entry.content) + _ENTRY_OVERHEAD


_lock = threading.Lock()
_store: TTLCache = TTLCache(maxsize=MAX_TOTAL_BYTES, ttl=TTL_SECONDS, timer=lambda: _clock(), getsizeof=_size)


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def is_token(text) -> bool:
    return isinstance(text, str) and bool(_TOKEN.match(text))


def keep(name: str, content: bytes, owner: str, *, token: str | None = None, shared: bool = False) -> str | None:
    """Keep the file for ``owner`` under ``token`` (a new random one by default); returns the token,
    or None when the file is too large to keep (it still works in the session). The owner's own least
    recently used files make room for it (MAX_OWNER_BYTES); another owner's never do.

    Raises
    ------
    StoreFull
        When the other owners' files leave no room for it (MAX_TOTAL_BYTES); the message says so.
    """
    if len(content) > MAX_ENTRY_BYTES:
        return None
    new = Upload(str(name)[:MAX_NAME_CHARS], content, owner, shared, _clock())
    with _lock:
        _store.expire()
        current = _entry(token) if token else None
        if not is_token(token) or (current is not None and not hmac.compare_digest(current.owner, owner)):
            token = new_token()  # never take over another owner's token
        mine = sorted(((t, e) for t, e in _store.items() if t != token and hmac.compare_digest(e.owner, owner)),
                      key=lambda item: item[1].used)
        replaced = _size(_store[token]) if token in _store else 0
        own_bytes = sum(_size(e) for _, e in mine)
        while mine and own_bytes + _size(new) > MAX_OWNER_BYTES:  # the owner's oldest files make room
            old_token, old = mine.pop(0)
            del _store[old_token]
            own_bytes -= _size(old)
        if _store.currsize - replaced + _size(new) > MAX_TOTAL_BYTES:
            raise StoreFull(f"The server keeps {format_bytes(MAX_TOTAL_BYTES)} of uploads for everyone, and other "
                            "students' files fill it now: your file works on this page, but it is not kept for a "
                            "reload or a link. Try again later (files are forgotten "
                            f"{TTL_SECONDS // 3600} h after their last use).")
        _store[token] = new
    return token


def _entry(token: str) -> Upload | None:
    return _store.get(token) if is_token(token) else None


def find(token: str, requester: str | None) -> tuple[str, bytes] | None:
    """(file name, bytes) kept under ``token`` if ``requester`` owns it or the owner shared it; None
    otherwise (unknown, expired, not a token, or not theirs: one answer for all, so a link tells nothing)."""
    with _lock:
        entry = _entry(token)
        if entry is None:
            return None
        if not entry.shared and not (requester and hmac.compare_digest(entry.owner, requester)):
            return None
        entry.used = _clock()
        _store[token] = entry  # a use renews it: the TTL counts from the last set
        return entry.name, entry.content


def readable(token: str, requester: str | None) -> bool:
    """Whether ``requester`` may still use the file (its owner, or it is shared), without renewing it: a
    session using another browser's shared file checks this on every rerun, so unsharing revokes it."""
    with _lock:
        entry = _entry(token)
        return bool(entry is not None and (entry.shared or (requester and hmac.compare_digest(entry.owner, requester))))


def owns(token: str, requester: str | None) -> bool:
    with _lock:
        entry = _entry(token)
        return bool(entry is not None and requester and hmac.compare_digest(entry.owner, requester))


def is_shared(token: str) -> bool:
    with _lock:
        entry = _entry(token)
        return bool(entry is not None and entry.shared)


def set_shared(token: str, owner: str, shared: bool) -> bool:
    """Share (or stop sharing) the file with anyone holding its link; only its owner can. Returns
    whether the file is now shared."""
    with _lock:
        entry = _entry(token)
        if entry is None or not hmac.compare_digest(entry.owner, owner):
            return False
        entry.shared = bool(shared)
        return entry.shared


def forget(token: str, owner: str) -> None:
    """Drop the owner's file (a new upload replaces it: one kept file per upload box)."""
    with _lock:
        entry = _entry(token)
        if entry is not None and hmac.compare_digest(entry.owner, owner):
            del _store[token]


def total_bytes() -> int:
    with _lock:
        _store.expire()
        return int(_store.currsize)


def clear() -> None:
    with _lock:
        _store.clear()
