"""Predict, then reveal (issue 39): a lesson step's multiple-choice question, the class's answers and the reveal.

The answers live in one SQLite file next to the upload store (:func:`rkapp.uploads.store_path`'s folder:
``RKCORE_STORE_DIR`` when the app runs as several processes), so every app process of a class counts the
same answers. Transactions are ``BEGIN IMMEDIATE``: the check "not revealed yet" and the answer's write see
one state of the store, whichever process writes at the same time.

Anonymous: a voter is a keyed hash (HMAC with the server's secret, :func:`rkapp.identity.keyed_digest`) of
the session's owner identity *and* the class code (:func:`voter_id`), so the store never holds who answered,
and the same student's answers in two classes cannot be linked. One answer per voter per question: answering
again replaces it, until the lecturer reveals; after the reveal answers are refused. Kept for the class's
lifetime only: :func:`forget_class` (the class's end) deletes its questions and answers, and every row is
forgotten TTL_SECONDS after its question was asked, whatever happens to the class.

Bounded: a question is checked (:func:`check_question`: text lengths, 2-6 distinct choices) before it is
stored; MAX_QUESTIONS_PER_CLASS questions per class, MAX_ANSWERS_PER_QUESTION voters per question,
MAX_QUESTIONS questions in all (the oldest class's questions do not make room: a new one is refused, saying
so).

The session hook (:data:`LIVE_QUESTION_KEY`, :func:`live_question`, :func:`charts_hidden`): while a question
is live and not revealed in this session's class, the page's charts give way to the question box
(``rkapp.layout.chart`` asks :func:`charts_hidden`; :mod:`rkapp.question_box` draws the box).
"""
from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .shared_store import SharedStore
from .class_contract import CLASS_KEY, LESSON_QUESTION_KEY
from .identity import keyed_digest

__all__ = ["HANDS_REVEALED_KEY", "LIVE_QUESTION_KEY", "MAX_CHOICES", "MIN_CHOICES", "QuestionRefused", "Tally", "answer", "ask",
           "chart_reveal_pending", "charts_hidden", "check_question", "forget_class", "hide_for_question",
           "is_revealed", "live_question", "record_live_question", "my_answer", "reveal", "set_placeholder", "showing_box", "slug", "tally",
           "voter_id"]

MIN_CHOICES, MAX_CHOICES = 2, 6
MAX_TEXT_CHARS = 300      # the question, read aloud from the projector
MAX_CHOICE_CHARS = 120    # one choice, a radio button's label
MAX_ID_CHARS = 120
MAX_CODE_CHARS = 64
MAX_QUESTIONS_PER_CLASS = 200
MAX_ANSWERS_PER_QUESTION = 2000
MAX_QUESTIONS = 20_000
TTL_SECONDS = 12 * 3600   # a class is a lecture: nothing is kept beyond half a day after its question
_CODE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

#: this session's live question, set by the class code (rkapp.question_box.show_live_question):
#: {"code": str, "question": {"id", "text", "choices"}, "role": "lecturer" | "student"}
LIVE_QUESTION_KEY = "_rk_live_question"
#: the ids of the questions a lecturer without a class has revealed (asked by hands: nothing is stored)
HANDS_REVEALED_KEY = "_rk_hands_revealed"


class QuestionRefused(ValueError):
    """An answer, a question or a reveal the store refuses; the message says why in the student's words."""


@dataclass(frozen=True)
class Tally:
    """The answers to one question: ``counts[i]`` voters chose choice i; ``answered`` voters in all."""

    counts: tuple[int, ...]
    answered: int
    revealed: bool


def check_question(question) -> str | None:
    """Why ``question`` is not a question the class can answer, or None when it is.

    Parameters
    ----------
    question : object
        A dict ``{"id": str, "text": str, "choices": [str, ...]}`` (other keys are ignored).

    Returns
    -------
    str or None
        A sentence naming what is wrong (the first problem found), or None.
    """
    if not isinstance(question, dict):
        return "A question must be a mapping with an id, a text and choices."
    for key in ("id", "text", "choices"):
        if key not in question:
            return f"The question has no {key!r}."
    ident, text, choices = question["id"], question["text"], question["choices"]
    if not isinstance(ident, str) or not ident.strip() or len(ident) > MAX_ID_CHARS:
        return f"The question's id must be a non-empty text of at most {MAX_ID_CHARS} characters."
    if not isinstance(text, str) or not text.strip():
        return "The question's text is empty."
    if len(text) > MAX_TEXT_CHARS:
        return f"The question's text has {len(text)} characters; at most {MAX_TEXT_CHARS} fit on the screen."
    if not isinstance(choices, (list, tuple)):
        return "The question's choices must be a list of texts."
    if not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
        return f"A question has {MIN_CHOICES} to {MAX_CHOICES} choices; this one has {len(choices)}."
    for number, choice in enumerate(choices, start=1):
        if not isinstance(choice, str):
            return f"Choice {number} must be a text."
        if not choice.strip():
            return f"Choice {number} is empty; every choice needs a text."
        if len(choice) > MAX_CHOICE_CHARS:
            return f"Choice {number} has {len(choice)} characters; at most {MAX_CHOICE_CHARS} fit."
    folded = [choice.strip().casefold() for choice in choices]
    for number, choice in enumerate(folded, start=1):
        if folded.index(choice) != number - 1:
            return f"Choice {number} repeats choice {folded.index(choice) + 1}; the choices must differ."
    return None


def _check_code(class_code) -> str:
    if not isinstance(class_code, str) or not _CODE.match(class_code):
        raise QuestionRefused("This class code is not one the app issues.")
    return class_code


def voter_id(class_code: str, owner: str) -> str:
    """The anonymous voter of ``owner`` in ``class_code``: a keyed hash of both (unlinkable across classes).

    Parameters
    ----------
    class_code : str
        The class's code.
    owner : str
        The session's owner identity (:func:`rkapp.identity.owner_id`).

    Returns
    -------
    str
        64 hexadecimal digits; the same for the same owner in the same class, in every app process that
        shares the server's secret.
    """
    return keyed_digest(b"voter", f"{_check_code(class_code)}|{owner}")


def slug(class_code: str, question_id: str) -> str:
    """A short name of the question in the class, for widget keys (letters and digits only).

    Parameters
    ----------
    class_code, question_id : str
        The class and the question.

    Returns
    -------
    str
        16 hexadecimal digits.
    """
    return hashlib.sha256(f"{class_code}|{question_id}".encode()).hexdigest()[:16]


# -- the store ---------------------------------------------------------------------------------------------------

_SCHEMA = ("""CREATE TABLE IF NOT EXISTS questions (
    code TEXT NOT NULL, qid TEXT NOT NULL, n_choices INTEGER NOT NULL, revealed INTEGER NOT NULL,
    asked REAL NOT NULL, PRIMARY KEY (code, qid))""",
           """CREATE TABLE IF NOT EXISTS answers (
    code TEXT NOT NULL, qid TEXT NOT NULL, voter TEXT NOT NULL, choice INTEGER NOT NULL,
    PRIMARY KEY (code, qid, voter))""")


def _clock() -> float:
    return time.time()  # wall time: the same in every process that shares the store


def store_path() -> Path:
    """The answers' SQLite file: beside the upload store (shared by the app processes)."""
    from .uploads import store_path as uploads_path

    return uploads_path().with_name("answers.sqlite3")


_STORE = SharedStore(store_path, _SCHEMA)
_db = _STORE.connection
_Transaction = _STORE.transaction


def _expire(conn: sqlite3.Connection) -> None:
    old = [(code, qid) for code, qid in conn.execute("SELECT code, qid FROM questions WHERE asked < ?",
                                                     (_clock() - TTL_SECONDS,))]
    conn.executemany("DELETE FROM answers WHERE code = ? AND qid = ?", old)
    conn.executemany("DELETE FROM questions WHERE code = ? AND qid = ?", old)


def _question_row(conn: sqlite3.Connection, class_code: str, question_id: str):
    return conn.execute("SELECT n_choices, revealed FROM questions WHERE code = ? AND qid = ? AND asked >= ?",
                        (class_code, question_id, _clock() - TTL_SECONDS)).fetchone()


def ask(class_code: str, question: dict) -> None:
    """Open ``question`` for answers in ``class_code`` (asking it again changes nothing).

    Parameters
    ----------
    class_code : str
        The class's code.
    question : dict
        ``{"id", "text", "choices"}``, checked with :func:`check_question`.

    Raises
    ------
    QuestionRefused
        A malformed question, a question id asked before with another number of choices, or a class or
        server that holds its maximum of questions.
    """
    problem = check_question(question)
    if problem:
        raise QuestionRefused(problem)
    code, n_choices = _check_code(class_code), len(question["choices"])
    with _Transaction() as conn:
        _expire(conn)
        row = _question_row(conn, code, question["id"])
        if row is not None:
            if row[0] != n_choices:
                raise QuestionRefused("This question id was asked before with another number of choices: "
                                      "give the changed question an id of its own.")
            return
        in_class = conn.execute("SELECT COUNT(*) FROM questions WHERE code = ?", (code,)).fetchone()[0]
        if in_class >= MAX_QUESTIONS_PER_CLASS:
            raise QuestionRefused(f"A class asks at most {MAX_QUESTIONS_PER_CLASS} questions; start a new class.")
        if conn.execute("SELECT COUNT(*) FROM questions").fetchone()[0] >= MAX_QUESTIONS:
            raise QuestionRefused("The server holds as many questions as it keeps; try again in a while.")
        conn.execute("INSERT INTO questions VALUES (?, ?, ?, 0, ?)", (code, question["id"], n_choices, _clock()))


def answer(class_code: str, question_id: str, voter: str, choice_index: int) -> None:
    """Record ``voter``'s answer (replacing the voter's earlier one) until the reveal.

    Parameters
    ----------
    class_code : str
        The class's code.
    question_id : str
        The question's id (asked with :func:`ask`).
    voter : str
        The anonymous voter (:func:`voter_id`).
    choice_index : int
        The chosen choice, from 0.

    Raises
    ------
    QuestionRefused
        An unknown question, a choice out of range, a question already revealed, or one that holds
        MAX_ANSWERS_PER_QUESTION answers.
    """
    code = _check_code(class_code)
    if not isinstance(voter, str) or not voter or len(voter) > 128:
        raise QuestionRefused("Your answer has no voter; reload the page.")
    with _Transaction() as conn:
        row = _question_row(conn, code, question_id)
        if row is None:
            raise QuestionRefused("This question is not open in your class (it ended or was never asked).")
        n_choices, revealed = row
        if isinstance(choice_index, bool) or not isinstance(choice_index, int) or not 0 <= choice_index < n_choices:
            raise QuestionRefused(f"Pick one of the {n_choices} choices.")
        if revealed:
            raise QuestionRefused("The lecturer has revealed the answer: answers are closed.")
        known = conn.execute("SELECT 1 FROM answers WHERE code = ? AND qid = ? AND voter = ?",
                             (code, question_id, voter)).fetchone()
        if known is None and conn.execute("SELECT COUNT(*) FROM answers WHERE code = ? AND qid = ?",
                                          (code, question_id)).fetchone()[0] >= MAX_ANSWERS_PER_QUESTION:
            raise QuestionRefused(f"This question has its {MAX_ANSWERS_PER_QUESTION} answers; yours was not counted.")
        conn.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)", (code, question_id, voter, choice_index))


def my_answer(class_code: str, question_id: str, voter: str) -> int | None:
    """``voter``'s current answer to the question (a choice index), or None.

    Parameters
    ----------
    class_code, question_id, voter : str
        The class, the question and the voter (:func:`voter_id`).

    Returns
    -------
    int or None
        The choice index, or None when the voter has not answered.
    """
    row = _db().execute("SELECT choice FROM answers WHERE code = ? AND qid = ? AND voter = ?",
                        (class_code, question_id, voter)).fetchone()
    return None if row is None else int(row[0])


def tally(class_code: str, question_id: str) -> Tally | None:
    """The answers to a question of a class: each voter counted once (their last answer).

    Parameters
    ----------
    class_code : str
        The class's code: another class's answers are never counted, whatever the question id.
    question_id : str
        The question's id.

    Returns
    -------
    Tally or None
        Counts per choice, the number of voters who answered, whether revealed; None when the class
        has no such question.
    """
    conn = _db()
    conn.execute("BEGIN")  # one snapshot for the question and its answers
    try:
        row = _question_row(conn, class_code, question_id)
        if row is None:
            return None
        counts = [0] * row[0]
        for choice, number in conn.execute("SELECT choice, COUNT(*) FROM answers WHERE code = ? AND qid = ? "
                                           "GROUP BY choice", (class_code, question_id)):
            counts[choice] = number
    finally:
        conn.execute("COMMIT")
    return Tally(counts=tuple(counts), answered=sum(counts), revealed=bool(row[1]))


def reveal(class_code: str, question_id: str) -> None:
    """Close the question: answers are refused from now on and the tally is shown to the class.

    Parameters
    ----------
    class_code, question_id : str
        The class and the question.

    Raises
    ------
    QuestionRefused
        When the class has no such question.
    """
    with _Transaction() as conn:
        if _question_row(conn, class_code, question_id) is None:
            raise QuestionRefused("This question is not open in your class (it ended or was never asked).")
        conn.execute("UPDATE questions SET revealed = 1 WHERE code = ? AND qid = ?", (class_code, question_id))


def is_revealed(class_code: str, question_id: str) -> bool:
    """Whether the lecturer has revealed the question (False for a question the class does not have).

    Parameters
    ----------
    class_code, question_id : str
        The class and the question.

    Returns
    -------
    bool
        True after :func:`reveal`.
    """
    row = _question_row(_db(), class_code, question_id)
    return bool(row and row[1])


def forget_class(class_code: str) -> None:
    """Delete every question and answer of the class (its end: answers live only as long as the class).

    Parameters
    ----------
    class_code : str
        The class's code.
    """
    with _Transaction() as conn:
        conn.execute("DELETE FROM answers WHERE code = ?", (class_code,))
        conn.execute("DELETE FROM questions WHERE code = ?", (class_code,))
        _expire(conn)


# -- the session hook ---------------------------------------------------------------------------------------------

def live_question() -> dict | None:
    """This session's live question (:data:`LIVE_QUESTION_KEY`), when it still belongs to this session's class.

    Returns
    -------
    dict or None
        ``{"code", "question", "role"}``; None when none is set, for a question asked by hands (role
        "hands") when the session has a class or the lesson step's question is another, when the session's class
        (:data:`~rkapp.class_contract.CLASS_KEY`) is another or none, or, for the lecturer, when the lesson
        step's question (:data:`~rkapp.class_contract.LESSON_QUESTION_KEY`) is no longer this one.
    """
    import streamlit as st

    live = st.session_state.get(LIVE_QUESTION_KEY)
    if not isinstance(live, dict) or check_question(live.get("question")) is not None:
        return None
    joined = st.session_state.get(CLASS_KEY)
    if live.get("role") == "hands":  # a lecturer without a class asks the room by hands
        current = st.session_state.get(LESSON_QUESTION_KEY)
        fresh = isinstance(current, dict) and current.get("id") == live["question"]["id"]
        return live if joined is None and fresh else None
    if not isinstance(joined, dict) or joined.get("code") != live.get("code") or joined.get("role") != live.get("role"):
        return None
    if live["role"] == "lecturer":
        current = st.session_state.get(LESSON_QUESTION_KEY)
        if not isinstance(current, dict) or current.get("id") != live["question"]["id"]:
            return None
    return live


def chart_reveal_pending(live: dict | None) -> bool:
    """Whether ``live`` (see :func:`live_question`) is a question not revealed yet.

    Parameters
    ----------
    live : dict or None
        A live question, or None.

    Returns
    -------
    bool
        True while the class has the question and it is not revealed.
    """
    if live is None:
        return False
    if live["role"] == "hands":
        import streamlit as st

        return live["question"]["id"] not in st.session_state.get(HANDS_REVEALED_KEY, ())
    try:
        return not is_revealed(live["code"], live["question"]["id"])
    except (sqlite3.Error, QuestionRefused):
        return True  # the store cannot say: the chart waits rather than spoil the prediction


def charts_hidden() -> bool:
    """Whether this session's charts give way to the question box now (a live question, not revealed).

    Returns
    -------
    bool
        True while the session's class has a live question the lecturer has not revealed.
    """
    return chart_reveal_pending(live_question())


_hook = threading.local()  # the box drawing its own tally (a chart that is never hidden)
_placeholder: list = []   # the drawer rkapp.question_box sets (it stands above rkapp.layout, which calls this)


@contextmanager
def showing_box():
    """While the question box draws its tally chart: that chart is not hidden.

    Yields
    ------
    None
        Inside the block, :func:`charts_hidden` is False in this thread.
    """
    before = getattr(_hook, "box", False)
    _hook.box = True
    try:
        yield
    finally:
        _hook.box = before


def record_live_question(code: str | None, question: dict | None, role: str, *, followers: int | None = None) -> None:
    """Record this session's live question (None: there is none now): the page's charts wait for its reveal
    and the first of them draws the box (:mod:`rkapp.question_box`). Drawing nothing, so that the class panel
    (:mod:`rkapp.lecture`, imported by the layout) can call it without importing the box, which draws with the
    layout.

    Parameters
    ----------
    code : str or None
        The session's class; None for role "hands".
    question : dict or None
        The question on screen; None clears it.
    role : {"lecturer", "student", "hands"}
        The session's role; "hands": no class, the room answers by hands.
    followers : int or None, optional
        The lecturer's count of followers, if known.
    """
    import streamlit as st

    if question is None or role not in ("lecturer", "student", "hands"):
        st.session_state.pop(LIVE_QUESTION_KEY, None)
        return
    st.session_state[LIVE_QUESTION_KEY] = {"code": code, "question": question, "role": role, "followers": followers}


def set_placeholder(draw) -> None:
    """What :func:`hide_for_question` draws in place of a hidden chart (rkapp.question_box's box, set on import).

    Parameters
    ----------
    draw : callable
        Called with no arguments, once per hidden chart.
    """
    _placeholder[:] = [draw]


def hide_for_question() -> bool:
    """``rkapp.layout.chart``'s hook: while the session's live question is not revealed, draw the placeholder
    (the question box once per run, then a sentence) instead of the chart.

    Returns
    -------
    bool
        True when the chart was hidden (the caller draws nothing more).
    """
    if getattr(_hook, "box", False) or not charts_hidden():
        return False
    if _placeholder:
        _placeholder[0]()
    else:  # the box's module is not loaded: say why the chart is missing
        import streamlit as st

        st.info("The chart appears when the lecturer reveals it.")
    return True
