"""Predict, then reveal with three sessions (issue 39): a lecturer and two students of one class, each an AppTest
session of the test page tests/questions/reveal_page.py (set up through rkapp.question_box.show_live_question,
as the class code does), sharing the answers store. The students answer; the lecturer's tally counts each
once; the page's charts stay hidden on every screen until the lecturer reveals, and appear after."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from rkapp.uploads import STORE_DIR_ENV
from tests.conftest import APP_TIMEOUT, REPO, plotly_figures

PAGE = str(REPO / "tests" / "questions" / "reveal_page.py")
WAITING = "The chart appears when the lecturer reveals it."


def session(role: str, code: str = "CLASS1") -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=APP_TIMEOUT)
    at.query_params["role"] = role
    at.query_params["code"] = code
    return at.run()


def titles(at) -> list[str]:
    return [f["layout"].get("title", {}).get("text", "") for f in plotly_figures(at)]


def tally_counts(at) -> list[int]:
    tallies = [f for f in plotly_figures(at) if f["data"][0].get("orientation") == "h"]
    assert len(tallies) == 1, titles(at)
    return list(tallies[0]["data"][0]["x"])


def texts(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [m.value for m in at.info] + [m.value for m in at.success])


@pytest.fixture
def store(tmp_path, monkeypatch, clear_streamlit_cache):
    monkeypatch.setenv(STORE_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("RKCORE_COOKIE_SECRET", "00112233445566778899aabbccddeeff")


def test_three_sessions_answer_then_reveal(store):
    lecturer = session("lecturer")
    assert not lecturer.exception and not lecturer.error
    assert tally_counts(lecturer) == [0, 0, 0]
    assert titles(lecturer) == [titles(lecturer)[0]]  # the tally only: the page's charts wait for the reveal
    assert "0 answered so far" in texts(lecturer)
    students = [session("student"), session("student")]
    for student in students:
        assert not student.exception and not student.error
        assert plotly_figures(student) == []  # no chart before the reveal
        assert WAITING in texts(student)
        assert [b.label for b in student.main.button] == []  # a student has no Reveal
        assert student.radio[0].options == ["Rademacher", "Gaussian", "About the same"]

    students[0].radio[0].set_value("Gaussian").run()
    lecturer.run()
    assert tally_counts(lecturer) == [0, 1, 0]
    assert "1 answered so far" in texts(lecturer)

    students[1].radio[0].set_value("Gaussian").run()
    students[0].radio[0].set_value("Rademacher").run()  # a change replaces the first answer
    students[0].radio[0].set_value("About the same").run()
    lecturer.run()
    assert tally_counts(lecturer) == [0, 1, 1]
    assert "2 answered so far" in texts(lecturer)
    for student in students:
        student.run()
        assert plotly_figures(student) == []

    lecturer.main.button[0].click().run()
    assert not lecturer.exception
    assert "Revealed" in texts(lecturer)
    assert len(plotly_figures(lecturer)) == 3  # the tally and the page's two charts
    for student, mine in zip(students, ["About the same", "Gaussian"]):
        student.run()
        assert not student.exception and not student.error
        assert len(plotly_figures(student)) == 3 and WAITING not in texts(student)
        assert tally_counts(student) == [0, 1, 1]
        assert list(student.radio) == [] and f"Your answer: **{mine}**." in texts(student)  # frozen


def test_another_session_has_no_answer_and_another_class_sees_none(store):
    session("lecturer")
    student = session("student")
    student.radio[0].set_value("Gaussian").run()
    again = session("student")  # a new session of another owner: no answer of its own
    assert again.radio[0].value is None
    other_class = session("lecturer", code="CLASS2")
    assert tally_counts(other_class) == [0, 0, 0]  # class 2's tally holds none of class 1's answers


def test_a_lecturer_without_a_class_asks_by_hands(store):
    """No class: the question and Reveal, no tally and nothing stored; the page's charts wait for the Reveal."""
    lecturer = session("hands")
    assert not lecturer.exception and not lecturer.error
    assert plotly_figures(lecturer) == [] and "raise hands" in texts(lecturer)
    assert "1. Rademacher\n2. Gaussian\n3. About the same" in texts(lecturer)
    lecturer.main.button[0].click().run()
    assert len(plotly_figures(lecturer)) == 2 and "Revealed." in texts(lecturer)
    assert [b.label for b in lecturer.main.button] == []
