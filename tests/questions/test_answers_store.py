"""The answers store of "predict, then reveal" (issue 39, rkapp.questions): one answer per voter, counted once,
closed by the reveal, private to its class, shared by the app processes, forgotten with the class; and the
question check's messages."""
from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rkapp import questions
from rkapp.uploads import STORE_DIR_ENV
from tests.conftest import REPO

QUESTION = {"id": "lesson/3", "text": "Which weights give the lower error at D = 64?",
            "choices": ["Rademacher", "Gaussian", "About the same"]}
SECRET = "00112233445566778899aabbccddeeff"


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A store of the test's own (RKCORE_STORE_DIR), the server secret fixed."""
    monkeypatch.setenv(STORE_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("RKCORE_COOKIE_SECRET", SECRET)
    return tmp_path


def test_answering_again_replaces_the_answer(store):
    questions.ask("A", QUESTION)
    voter = questions.voter_id("A", "browser:one")
    questions.answer("A", QUESTION["id"], voter, 0)
    questions.answer("A", QUESTION["id"], voter, 2)
    questions.answer("A", QUESTION["id"], voter, 2)
    assert questions.tally("A", QUESTION["id"]) == questions.Tally(counts=(0, 0, 1), answered=1, revealed=False)
    assert questions.my_answer("A", QUESTION["id"], voter) == 2


def test_each_voter_counted_once(store):
    questions.ask("A", QUESTION)
    for owner, choices in {"browser:1": [0, 1], "browser:2": [1], "session:3": [2, 2, 1]}.items():
        for choice in choices:
            questions.answer("A", QUESTION["id"], questions.voter_id("A", owner), choice)
    assert questions.tally("A", QUESTION["id"]).counts == (0, 3, 0)


def test_answers_are_refused_after_the_reveal(store):
    questions.ask("A", QUESTION)
    voter = questions.voter_id("A", "browser:one")
    questions.answer("A", QUESTION["id"], voter, 1)
    assert not questions.is_revealed("A", QUESTION["id"])
    questions.reveal("A", QUESTION["id"])
    assert questions.is_revealed("A", QUESTION["id"])
    with pytest.raises(questions.QuestionRefused, match="revealed the answer: answers are closed"):
        questions.answer("A", QUESTION["id"], voter, 0)
    with pytest.raises(questions.QuestionRefused, match="revealed"):
        questions.answer("A", QUESTION["id"], questions.voter_id("A", "browser:late"), 0)
    assert questions.tally("A", QUESTION["id"]) == questions.Tally(counts=(0, 1, 0), answered=1, revealed=True)


def test_classes_never_mix(store):
    """Class A's tally never counts class B's answers under the same question id; without B's code, a voter
    of A gets nothing of B (the API asks for the code), and the same owner is two unlinkable voters."""
    questions.ask("A", QUESTION)
    questions.ask("B", QUESTION)
    questions.answer("A", QUESTION["id"], questions.voter_id("A", "browser:x"), 0)
    for owner in ("browser:x", "browser:y"):
        questions.answer("B", QUESTION["id"], questions.voter_id("B", owner), 1)
    assert questions.tally("A", QUESTION["id"]).counts == (1, 0, 0)
    assert questions.tally("B", QUESTION["id"]).counts == (0, 2, 0)
    assert questions.tally("C", QUESTION["id"]) is None  # a code that is not B's reads nothing
    assert questions.voter_id("A", "browser:x") != questions.voter_id("B", "browser:x")
    with pytest.raises(questions.QuestionRefused, match="not open in your class"):
        questions.answer("C", QUESTION["id"], questions.voter_id("C", "browser:x"), 0)


def test_out_of_range_choices_and_bad_codes_are_refused(store):
    questions.ask("A", QUESTION)
    voter = questions.voter_id("A", "browser:x")
    for bad in (3, -1, True, 1.0, "1"):
        with pytest.raises(questions.QuestionRefused, match="Pick one of the 3 choices"):
            questions.answer("A", QUESTION["id"], voter, bad)
    with pytest.raises(questions.QuestionRefused, match="not one the app issues"):
        questions.ask("no spaces allowed", QUESTION)
    with pytest.raises(questions.QuestionRefused, match="another number of choices"):
        questions.ask("A", dict(QUESTION, choices=["yes", "no"]))


def test_forget_class_deletes_its_answers_only(store):
    for code in ("A", "B"):
        questions.ask(code, QUESTION)
        questions.answer(code, QUESTION["id"], questions.voter_id(code, "browser:x"), 0)
    questions.forget_class("A")
    assert questions.tally("A", QUESTION["id"]) is None
    assert questions.tally("B", QUESTION["id"]).counts == (1, 0, 0)
    import sqlite3

    with sqlite3.connect(questions.store_path()) as conn:  # gone from the file, not only from the API
        assert conn.execute("SELECT COUNT(*) FROM answers WHERE code = 'A'").fetchone()[0] == 0


def test_old_questions_expire(store, monkeypatch):
    questions.ask("A", QUESTION)
    questions.answer("A", QUESTION["id"], questions.voter_id("A", "browser:x"), 0)
    now = questions._clock()
    monkeypatch.setattr(questions, "_clock", lambda: now + questions.TTL_SECONDS + 1)
    assert questions.tally("A", QUESTION["id"]) is None
    questions.forget_class("other")  # any write expires the old rows
    import sqlite3

    with sqlite3.connect(questions.store_path()) as conn:
        assert conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 0


def test_a_class_holds_a_bounded_number_of_questions(store, monkeypatch):
    monkeypatch.setattr(questions, "MAX_QUESTIONS_PER_CLASS", 3)
    for number in range(3):
        questions.ask("A", dict(QUESTION, id=f"q{number}"))
    with pytest.raises(questions.QuestionRefused, match="at most 3 questions"):
        questions.ask("A", dict(QUESTION, id="q3"))
    questions.ask("A", dict(QUESTION, id="q0"))  # asking one again is no new question


_CHILD = """
import sys
from rkapp import questions
question = {"id": "lesson/3", "text": "Which?", "choices": ["a", "b", "c"]}
questions.ask("A", question)
questions.answer("A", "lesson/3", questions.voter_id("A", sys.argv[1]), int(sys.argv[2]))
print(questions.tally("A", "lesson/3").counts)
"""


@pytest.mark.slow  # 5 s: real subprocesses; CI's long job runs it (the README suite keeps under 8 minutes)
def test_two_processes_see_the_same_tally(store):
    """Each answer is written by a process of its own; each process and this one count all of them, and the
    same owner in two processes is the same voter (the shared secret): its second answer replaces its first."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    seen = []
    for owner, choice in (("browser:1", 0), ("browser:2", 2), ("browser:1", 1)):
        done = subprocess.run([sys.executable, "-c", _CHILD, owner, str(choice)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        seen.append(done.stdout.strip().splitlines()[-1])
    assert seen == ["(1, 0, 0)", "(1, 0, 1)", "(0, 1, 1)"]
    assert questions.tally("A", "lesson/3").counts == (0, 1, 1)


@settings(max_examples=60, deadline=None)
@given(n_choices=st.integers(2, 6), voters=st.integers(1, 5),
       moves=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 5)), max_size=40),
       reveal_at=st.one_of(st.none(), st.integers(0, 40)))
def test_tally_is_the_count_of_last_answers(tmp_path_factory, n_choices, voters, moves, reveal_at):
    """Random answers of k voters (some out of range, a reveal somewhere): the tally is the brute-force count
    of each voter's last accepted answer."""
    folder = tmp_path_factory.mktemp("answers")
    os.environ[STORE_DIR_ENV] = str(folder)
    try:
        question = dict(QUESTION, choices=[f"choice {i}" for i in range(n_choices)])
        questions.ask("H", question)
        last: dict[int, int] = {}
        for step, (who, choice) in enumerate(moves):
            if step == reveal_at:
                questions.reveal("H", question["id"])
            voter = questions.voter_id("H", f"browser:{who % voters}")
            accepted = choice < n_choices and (reveal_at is None or step < reveal_at)
            if accepted:
                questions.answer("H", question["id"], voter, choice)
                last[who % voters] = choice
            else:
                with pytest.raises(questions.QuestionRefused):
                    questions.answer("H", question["id"], voter, choice)
        expected = Counter(last.values())
        result = questions.tally("H", question["id"])
        assert result.counts == tuple(expected[i] for i in range(n_choices))
        assert result.answered == len(last)
    finally:
        os.environ.pop(STORE_DIR_ENV, None)


GOOD = {"id": "q", "text": "Which?", "choices": ["a", "b"]}


@pytest.mark.parametrize("question, message", [
    ("Which?", "A question must be a mapping with an id, a text and choices."),
    ({"text": "Which?", "choices": ["a", "b"]}, "The question has no 'id'."),
    (dict(GOOD, id=""), "The question's id must be a non-empty text of at most 120 characters."),
    (dict(GOOD, text="  "), "The question's text is empty."),
    (dict(GOOD, text="x" * 301), "The question's text has 301 characters; at most 300 fit on the screen."),
    (dict(GOOD, choices="a, b"), "The question's choices must be a list of texts."),
    (dict(GOOD, choices=["a"]), "A question has 2 to 6 choices; this one has 1."),
    (dict(GOOD, choices=list("abcdefg")), "A question has 2 to 6 choices; this one has 7."),
    (dict(GOOD, choices=["a", " "]), "Choice 2 is empty; every choice needs a text."),
    (dict(GOOD, choices=["a", 3]), "Choice 2 must be a text."),
    (dict(GOOD, choices=["a", "y" * 121]), "Choice 2 has 121 characters; at most 120 fit."),
    (dict(GOOD, choices=["Yes", "no", " yes "]), "Choice 3 repeats choice 1; the choices must differ."),
])
def test_malformed_questions_are_refused_with_a_clear_message(question, message):
    assert questions.check_question(question) == message


def test_a_good_question_passes_and_ask_refuses_a_bad_one(store):
    assert questions.check_question(GOOD) is None
    assert questions.check_question(dict(GOOD, choices=tuple("abcdef"), extra="ignored")) is None
    with pytest.raises(questions.QuestionRefused, match="this one has 1"):
        questions.ask("A", dict(GOOD, choices=["a"]))
