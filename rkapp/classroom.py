"""The shared class store of a live lecture (issue 39): what the lecturer shows, read by every follower,
whichever app process they landed on.

Where: its own SQLite file, ``classes.sqlite3``, in the upload store's folder (:func:`rkapp.uploads.store_path`:
``RKCORE_STORE_DIR``, which ``rkcore-app --processes N`` creates for all its processes, else a folder private to
this process). Its own file, not tables in ``uploads.sqlite3``: thirty followers read it several times a second
and the lecturer writes it on every change, while an upload writes up to 32 MB in one transaction; separate
files keep the write lock and the WAL of one from holding up the other (and each schema evolves alone).

A class: a code (6 characters of an alphabet without look-alikes, from ``secrets``: 25**6, about 2.4e8 codes),
the SHA-256 of the lecturer's token (``secrets.token_urlsafe(32)``, held only by the lecturer's session;
compared with ``hmac.compare_digest``), and what is published: the page (``url_path``), the settings (as
:func:`rkapp.state.view_settings` writes them), the question on screen (or none), and a version that grows
by one on each publish that changed something. Followers poll :func:`version` (one indexed read, cached
in this process for VERSION_CACHE_S) and read :func:`state` only when it moved.

Bounded: MAX_CLASSES live classes (a new one is refused while that many run), MAX_SETTINGS_BYTES of settings,
MAX_QUESTION_BYTES of question, MAX_PAGE_CHARS of page; a class is forgotten IDLE_SECONDS (6 h) after its last
publish or start (a lecture's length with room, so a forgotten class does not hold a slot overnight).
Failed attempts (a wrong lecturer key, a wrong class code) are counted here too, per owner and per server,
so that every app process sees the same count (:func:`note_failure`, :func:`failures`).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
import time

from .shared_store import SharedStore
from .uploads import store_path

#: no 0/O, 1/I/L, 5/S, 2/Z, 8/B: a code read off a projector from the back row is typed right
CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679"
CODE_LENGTH = 6
MAX_CLASSES = 200
MAX_SETTINGS_BYTES = 4096
MAX_QUESTION_BYTES = 4096
MAX_PAGE_CHARS = 100
IDLE_SECONDS = 6 * 3600
#: a follower's poll reads the version at most this often per class and process (30 followers, one read)
VERSION_CACHE_S = 0.1
#: failed attempts are counted over this window
ATTEMPT_WINDOW_S = 15 * 60

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS classes (
        code TEXT PRIMARY KEY, token_hash TEXT NOT NULL, created REAL NOT NULL, updated REAL NOT NULL,
        page TEXT NOT NULL, settings TEXT NOT NULL, question TEXT, version INTEGER NOT NULL)""",
    "CREATE TABLE IF NOT EXISTS failures (kind TEXT NOT NULL, who TEXT NOT NULL, at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS failures_by_who ON failures (kind, who, at)",
)
_cache_lock = threading.Lock()
_version_cache: dict[str, tuple[float, int | None]] = {}


class ClassError(ValueError):
    """A class could not be started or published; the message says why, in the lecturer's words."""


def _clock() -> float:
    return time.time()  # wall time: the same in every process sharing the store


def class_store_path():
    """The class store's SQLite file: ``classes.sqlite3`` beside the upload store.

    Returns
    -------
    pathlib.Path
        The file (its folder is created on first use).
    """
    return store_path().with_name("classes.sqlite3")


_STORE = SharedStore(class_store_path, _SCHEMA)
_db = _STORE.connection
_Transaction = _STORE.transaction


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _expire(conn: sqlite3.Connection) -> None:
    now = _clock()
    conn.execute("DELETE FROM classes WHERE updated < ?", (now - IDLE_SECONDS,))
    conn.execute("DELETE FROM failures WHERE at < ?", (now - ATTEMPT_WINDOW_S,))


def is_code(text) -> bool:
    """Whether ``text`` has the form of a class code (length and alphabet; upper case).

    Parameters
    ----------
    text : object
        What was typed or sent.

    Returns
    -------
    bool
        True for 6 characters of :data:`CODE_ALPHABET`.
    """
    return isinstance(text, str) and len(text) == CODE_LENGTH and all(c in CODE_ALPHABET for c in text)


def normal_code(text) -> str:
    """A typed code as stored: spaces and dashes dropped, upper case (students type "ab-c d3k").

    Parameters
    ----------
    text : object
        What was typed.

    Returns
    -------
    str
        The code to look up (possibly not a code at all: check with :func:`is_code`).
    """
    if not isinstance(text, str):
        return ""
    return "".join(c for c in text[:40] if c not in " -\t").upper()


def _encoded(settings: dict, question) -> tuple[str, str | None]:
    if not isinstance(settings, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in settings.items()):
        raise ClassError("The settings to share must be a table of names and texts.")
    settings_json = json.dumps(settings, sort_keys=True, ensure_ascii=False)
    if len(settings_json.encode()) > MAX_SETTINGS_BYTES:
        raise ClassError(f"These settings are too long to share with the class (more than {MAX_SETTINGS_BYTES} "
                         "bytes): shorten the longest entry (a custom itemset family?).")
    question_json = None if question is None else json.dumps(question, sort_keys=True, ensure_ascii=False)
    if question_json is not None and len(question_json.encode()) > MAX_QUESTION_BYTES:
        raise ClassError(f"The question is too long to share with the class (more than {MAX_QUESTION_BYTES} bytes).")
    return settings_json, question_json


def start_class(token: str, *, page: str = "", settings: dict | None = None, question=None) -> str:
    """Start a class driven by the holder of ``token``; returns its new code.

    Parameters
    ----------
    token : str
        The lecturer's token (``secrets.token_urlsafe(32)``); only its hash is kept.
    page : str
        The page shown first (its ``url_path``; Home is "").
    settings : dict, optional
        The settings shown first (name -> text).
    question : dict, optional
        The question on screen, if any.

    Returns
    -------
    str
        The class code.

    Raises
    ------
    ClassError
        When MAX_CLASSES classes run already, or the first state is out of bounds.
    """
    if not isinstance(token, str) or len(token) < 32:
        raise ClassError("A class needs the lecturer's token.")
    settings_json, question_json = _encoded(settings or {}, question)
    with _Transaction() as conn:
        _expire(conn)
        if conn.execute("SELECT COUNT(*) FROM classes").fetchone()[0] >= MAX_CLASSES:
            raise ClassError(f"The server runs {MAX_CLASSES} classes already, its limit: end one, or try again "
                             f"later (a class is forgotten {IDLE_SECONDS // 3600} h after its last change).")
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if conn.execute("SELECT 1 FROM classes WHERE code = ?", (code,)).fetchone() is None:
                break
        now = _clock()
        conn.execute("INSERT INTO classes VALUES (?, ?, ?, ?, ?, ?, ?, 1)",
                     (code, _hash(token), now, now, str(page)[:MAX_PAGE_CHARS], settings_json, question_json))
    return code


def _owned(conn: sqlite3.Connection, code: str, token) -> tuple | None:
    """The class's row if it is alive and ``token`` is its lecturer's, else None (one answer for both)."""
    if not is_code(code) or not isinstance(token, str):
        return None
    row = conn.execute("SELECT token_hash, page, settings, question, version, updated FROM classes WHERE code = ?",
                       (code,)).fetchone()
    if row is None or row[5] < _clock() - IDLE_SECONDS or not hmac.compare_digest(row[0], _hash(token)):
        return None
    return row


def publish(code: str, token: str, page: str, settings: dict, question=None) -> int | None:
    """Show ``page`` with ``settings`` (and ``question``) to the class; the version grows only when one of
    them changed (a publish of the same state only renews the class's idle clock, at most once a minute).

    Parameters
    ----------
    code : str
        The class code.
    token : str
        The lecturer's token; any other is refused.
    page : str
        The page's ``url_path`` (Home: "").
    settings : dict
        Name -> text, as :func:`rkapp.state.view_settings` writes them.
    question : dict, optional
        The question on screen, or None.

    Returns
    -------
    int or None
        The class's version after the publish, or None when the class is gone or the token is not its
        lecturer's.

    Raises
    ------
    ClassError
        When the settings or the question exceed their bounds.
    """
    settings_json, question_json = _encoded(settings, question)
    page = str(page)[:MAX_PAGE_CHARS]
    row = _owned(_db(), code, token)  # a cheap read first: most runs publish nothing new
    if row is None:
        return None
    if (row[1], row[2], row[3]) == (page, settings_json, question_json) and row[5] > _clock() - 60:
        return row[4]
    with _Transaction() as conn:
        row = _owned(conn, code, token)
        if row is None:
            return None
        changed = (row[1], row[2], row[3]) != (page, settings_json, question_json)
        version = row[4] + 1 if changed else row[4]
        conn.execute("UPDATE classes SET page = ?, settings = ?, question = ?, version = ?, updated = ? "
                     "WHERE code = ?", (page, settings_json, question_json, version, _clock(), code))
    _forget_cached(code)
    return version


def state(code: str) -> dict | None:
    """What the class shows now.

    Parameters
    ----------
    code : str
        The class code.

    Returns
    -------
    dict or None
        ``{"page", "settings", "question", "version"}``, or None when there is no such live class.
    """
    if not is_code(code):
        return None
    row = _db().execute("SELECT page, settings, question, version, updated FROM classes WHERE code = ?",
                        (code,)).fetchone()
    if row is None or row[4] < _clock() - IDLE_SECONDS:
        return None
    return {"page": row[0], "settings": json.loads(row[1]),
            "question": None if row[2] is None else json.loads(row[2]), "version": row[3]}


def version(code: str) -> int | None:
    """The class's version (None: no such live class): one indexed read, shared by this process's
    followers of the class for VERSION_CACHE_S.

    Parameters
    ----------
    code : str
        The class code.

    Returns
    -------
    int or None
        The version, or None when the class ended or expired.
    """
    now = time.monotonic()
    with _cache_lock:
        cached = _version_cache.get(code)
    if cached is not None and now - cached[0] < VERSION_CACHE_S:
        return cached[1]
    if not is_code(code):
        return None
    row = _db().execute("SELECT version, updated FROM classes WHERE code = ?", (code,)).fetchone()
    value = None if row is None or row[1] < _clock() - IDLE_SECONDS else int(row[0])
    with _cache_lock:
        if len(_version_cache) > 4 * MAX_CLASSES:
            _version_cache.clear()
        _version_cache[code] = (now, value)
    return value


def _forget_cached(code: str) -> None:
    with _cache_lock:
        _version_cache.pop(code, None)


def take_over_class(code: str, token: str) -> bool:
    """Give a live class a new lecturer token (the lecturer's tab was reloaded and lost its token): the old
    token stops driving it. The caller has checked the lecturer key, which is what a lecturer holds across
    tabs; a student holds neither.

    Parameters
    ----------
    code : str
        The class's code (as typed: :func:`normal_code` is applied).
    token : str
        The new token (``secrets.token_urlsafe(32)``); only its hash is kept.

    Returns
    -------
    bool
        False when no live class has that code.
    """
    if not isinstance(token, str) or len(token) < 32:
        raise ClassError("A class needs the lecturer's token.")
    code = normal_code(code)
    with _Transaction() as conn:
        _expire(conn)
        changed = conn.execute("UPDATE classes SET token_hash = ? WHERE code = ?", (_hash(token), code)).rowcount
    return bool(changed)


def end_class(code: str, token: str) -> bool:
    """End the class (its lecturer only); followers are told on their next poll.

    Parameters
    ----------
    code : str
        The class code.
    token : str
        The lecturer's token.

    Returns
    -------
    bool
        Whether a class was ended.
    """
    with _Transaction() as conn:
        if _owned(conn, code, token) is None:
            return False
        conn.execute("DELETE FROM classes WHERE code = ?", (code,))
    _forget_cached(code)
    return True


def live_classes() -> int:
    """How many classes run now.

    Returns
    -------
    int
        The number of live classes (expired ones are dropped first).
    """
    with _Transaction() as conn:
        _expire(conn)
        return int(conn.execute("SELECT COUNT(*) FROM classes").fetchone()[0])


def note_failure(kind: str, who: str) -> None:
    """Count one failed attempt of ``kind`` ("key", "join") by ``who`` (an owner id, or "*" for the server).

    Parameters
    ----------
    kind : str
        What failed.
    who : str
        Whose attempt it was.
    """
    with _Transaction() as conn:
        _expire(conn)
        conn.execute("INSERT INTO failures VALUES (?, ?, ?)", (kind, who, _clock()))


def failures(kind: str, who: str) -> int:
    """Failed attempts of ``kind`` by ``who`` in the last ATTEMPT_WINDOW_S.

    Parameters
    ----------
    kind : str
        What failed.
    who : str
        Whose attempts.

    Returns
    -------
    int
        Their number.
    """
    return int(_db().execute("SELECT COUNT(*) FROM failures WHERE kind = ? AND who = ? AND at >= ?",
                             (kind, who, _clock() - ATTEMPT_WINDOW_S)).fetchone()[0])


def clear() -> None:
    """Forget every class and every counted attempt (tests)."""
    with _Transaction() as conn:
        conn.execute("DELETE FROM classes")
        conn.execute("DELETE FROM failures")
    with _cache_lock:
        _version_cache.clear()
