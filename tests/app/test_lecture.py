"""Follow the presenter (rkapp.lecture) with two AppTest sessions sharing the class store: the lecturer's
page and settings reach the student; a student's own change branches off and "Back to the lecture" returns;
the lecturer key is required and its wrong tries are bounded; wrong codes are bounded; a student never publishes."""
from __future__ import annotations

import pytest

from rkapp import classroom, lecture
from rkapp.class_contract import CLASS_KEY, LESSON_QUESTION_KEY

from tests.conftest import REPO

APP = str(REPO / "app.py")
KEY = "a lecturer key for the tests"


@pytest.fixture(autouse=True)
def store(tmp_path, monkeypatch, clear_streamlit_cache):
    monkeypatch.setenv("RKCORE_STORE_DIR", str(tmp_path))
    monkeypatch.setenv(lecture.LECTURER_KEY_ENV, KEY)
    monkeypatch.delenv(lecture.LECTURER_KEY_FILE_ENV, raising=False)
    monkeypatch.setattr(classroom, "VERSION_CACHE_S", 0.0)
    classroom.clear()
    yield
    classroom.clear()


def _session(**query):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=60)
    for name, value in query.items():
        at.query_params[name] = value
    return at.run()


def _button(at, label):
    return next(b for b in at.button if b.label == label)


def _start(at, key=KEY):
    at.text_input(key="rk_class_key").input(key)
    _button(at, "Start a class").click()
    return at.run()


def _texts(at, kind):
    return [e.value for e in getattr(at, kind)]


def _d(at):
    return next(n for n in at.sidebar.number_input if n.key == "D")


def _lecturer_on_gram():
    lecturer = _start(_session())
    code = lecturer.session_state[CLASS_KEY]["code"]
    lecturer.switch_page("pages/1_Gram_matrices.py").run()
    return lecturer, code


def test_the_student_follows_the_lecturers_page_and_settings():
    lecturer, code = _lecturer_on_gram()
    assert lecturer.session_state[CLASS_KEY] == {"code": code, "role": "lecturer"}
    assert any(code in m for m in _texts(lecturer, "markdown"))  # the code on screen
    student = _session(**{"class": code})
    assert student.title[0].value == "Gram matrices"
    assert any("Following the lecture" in s for s in _texts(student, "success"))
    _d(lecturer).set_value(320).run()
    assert classroom.state(code)["settings"]["D"] == "320"
    student.run()  # what the fragment's next poll does: a new version, applied
    assert _d(student).value == 320
    assert not student.exception and not lecturer.exception


def test_a_students_own_change_branches_off_and_back_returns():
    lecturer, code = _lecturer_on_gram()
    student = _session(**{"class": code})
    _d(student).set_value(640).run()
    assert any("exploring on your own" in w for w in _texts(student, "warning"))
    assert classroom.state(code)["settings"].get("D") is None  # the student's change is not published
    _d(lecturer).set_value(320).run()
    student.run()
    assert _d(student).value == 640  # branched: the class's change is not applied
    _button(student, "Back to the lecture").click().run()
    assert _d(student).value == 320
    assert any("Following the lecture" in s for s in _texts(student, "success"))
    assert not any("exploring" in w for w in _texts(student, "warning"))


def test_a_student_changing_page_branches_off():
    lecturer, code = _lecturer_on_gram()
    student = _session(**{"class": code})
    student.switch_page("pages/3_Error_bounds.py").run()
    assert any("exploring on your own" in w for w in _texts(student, "warning"))
    assert classroom.state(code)["page"] == "Gram_matrices"


def test_the_question_reaches_the_student():
    lecturer, code = _lecturer_on_gram()
    question = {"id": "l1-s2", "text": "Which weights give the lower error?", "choices": ["Rademacher", "Gaussian"]}
    lecturer.session_state[LESSON_QUESTION_KEY] = question
    lecturer.run()
    student = _session(**{"class": code})
    assert student.session_state[LESSON_QUESTION_KEY] == question


def test_without_a_key_the_panel_says_how_to_enable_it(monkeypatch):
    monkeypatch.delenv(lecture.LECTURER_KEY_ENV)
    at = _session()
    assert not any(t.key == "rk_class_key" for t in at.text_input)
    assert any(lecture.LECTURER_KEY_ENV in c for c in _texts(at, "caption"))


def test_the_key_from_a_file(monkeypatch, tmp_path):
    monkeypatch.delenv(lecture.LECTURER_KEY_ENV)
    (tmp_path / "key").write_text(KEY + "\n")
    monkeypatch.setenv(lecture.LECTURER_KEY_FILE_ENV, str(tmp_path / "key"))
    assert _start(_session()).session_state[CLASS_KEY]["role"] == "lecturer"


def test_wrong_keys_are_bounded_and_never_shown():
    at = _session()
    for _ in range(lecture.KEY_TRIES_PER_OWNER):
        _start(at, "not the key")
        assert any("not the lecturer key" in e for e in _texts(at, "error"))
    _start(at, KEY)  # the right key, too late
    assert CLASS_KEY not in at.session_state
    assert any("Too many wrong lecturer keys" in e for e in _texts(at, "error"))
    shown = " ".join(_texts(at, "markdown") + _texts(at, "caption") + _texts(at, "error"))
    assert KEY not in shown and "not the key" not in shown


def test_wrong_codes_are_shown_literally_and_bounded():
    student = _session(**{"class": "**ZZZZZZ**"})
    assert any("'**ZZZZZZ**'" in e.replace("\\", "") for e in _texts(student, "error"))
    for _ in range(lecture.JOIN_TRIES_PER_OWNER):
        student.text_input(key="rk_class_code").input("AAAAAA")
        _button(student, "Join the class").click().run()
    code = classroom.start_class("t" * 43)
    student.text_input(key="rk_class_code").input(code)
    _button(student, "Join the class").click().run()
    assert CLASS_KEY not in student.session_state
    assert any("Too many wrong class codes" in e for e in _texts(student, "error"))


def test_the_student_is_told_once_when_the_class_ends_and_keeps_the_page():
    lecturer, code = _lecturer_on_gram()
    student = _session(**{"class": code})
    _button(lecturer, "End the class").click().run()
    student.run()
    assert any("has ended" in i for i in _texts(student, "info"))
    assert student.title[0].value == "Gram matrices" and CLASS_KEY not in student.session_state
    student.run()
    assert not any("has ended" in i for i in _texts(student, "info"))


def test_presenter_mode_runs_the_class_from_the_header():
    lecturer = _start(_session(presenter="true"))
    code = lecturer.session_state[CLASS_KEY]["code"]
    assert any(f"Class {code}" in m for m in _texts(lecturer, "markdown"))  # beside "Pages", on the projector
    assert not lecturer.sidebar.children or not any(e.key == lecture.PANEL_KEY for e in lecturer.sidebar.expander)
    student = _session(**{"class": code})
    assert any("Following the lecture" in s for s in _texts(student, "success"))
    assert student.session_state[CLASS_KEY]["role"] == "student"


def test_a_qr_code_only_when_segno_is_installed():
    """segno is optional (not a requirement): without it the code and the link; with it, an SVG of the link."""
    import importlib.util

    lecturer = _start(_session())
    html = [e.proto.body for e in lecturer.get("html")]
    assert any("<svg" in h for h in html) == (importlib.util.find_spec("segno") is not None)


QUESTION = {"id": "test-lesson/2", "text": "Which weights give the lower error at D = 64?",
            "choices": ["Rademacher", "Gaussian", "About the same"]}


def _answer_box(at):
    return next(r for r in at.main.radio if list(r.options) == QUESTION["choices"])


def _charts(at):
    return [e for e in at.main.get("plotly_chart")]


def test_the_lecturers_question_reaches_followers_and_hides_every_chart_until_the_reveal():
    """The wiring of the class panel and the question box on a real page: the lecturer's lesson question is
    asked in the class and published; the followers' Gram page waits for the reveal with the question, the
    lecturer's shows the tally; an answer is counted once; Reveal brings every chart back on every screen."""
    from rkapp import questions

    lecturer, code = _lecturer_on_gram()
    student = _session(**{"class": code})
    assert _charts(student)  # no question yet: the charts are there
    lecturer.session_state[LESSON_QUESTION_KEY] = QUESTION  # what the lesson panel sets on a question step
    lecturer.run()
    assert classroom.state(code)["question"] == QUESTION
    student.run()  # the follower's next poll
    assert not student.exception and not lecturer.exception
    assert not _charts(student)  # the page's charts wait for the reveal
    _answer_box(student).set_value("Gaussian").run()
    tally = questions.tally(code, QUESTION["id"])
    assert list(tally.counts) == [0, 1, 0]
    lecturer.run()
    reveal = next(b for b in lecturer.main.button if b.label.startswith("Reveal"))
    reveal.click().run()
    assert questions.is_revealed(code, QUESTION["id"])
    student.run()
    assert len(_charts(student)) >= 1 and len(_charts(lecturer)) >= 1  # the page's charts are back
    assert not student.exception and not lecturer.exception


def test_ending_a_class_forgets_its_answers():
    from rkapp import questions

    lecturer, code = _lecturer_on_gram()
    lecturer.session_state[LESSON_QUESTION_KEY] = QUESTION
    lecturer.run()
    student = _session(**{"class": code})
    _answer_box(student).set_value("Rademacher").run()
    assert questions.tally(code, QUESTION["id"]).answered == 1
    _button(lecturer, "End the class").click()
    lecturer.run()
    assert questions.tally(code, QUESTION["id"]) is None


def test_a_reloaded_lecturer_takes_the_class_back_with_the_key_and_the_old_tab_stops_driving():
    lecturer, code = _lecturer_on_gram()
    student = _session(**{"class": code})
    reloaded = _session()  # the projector's tab reloaded: a new session, no token
    reloaded.text_input(key="rk_class_key").input(KEY)
    reloaded.text_input(key="rk_class_resume").input(code.lower())
    _button(reloaded, "Start a class").click()
    reloaded.run()
    assert reloaded.session_state[CLASS_KEY] == {"code": code, "role": "lecturer"}
    reloaded.switch_page("pages/1_Gram_matrices.py").run()
    _d(reloaded).set_value(768).run()
    assert classroom.state(code)["settings"]["D"] == "768"
    student.run()
    assert _d(student).value == 768
    _d(lecturer).set_value(320).run()  # the old tab's token no longer publishes
    assert classroom.state(code)["settings"]["D"] == "768"


def test_taking_back_needs_the_key_and_a_live_code():
    lecturer, code = _lecturer_on_gram()
    stranger = _session()
    stranger.text_input(key="rk_class_key").input("not the key")
    stranger.text_input(key="rk_class_resume").input(code)
    _button(stranger, "Start a class").click()
    stranger.run()
    assert CLASS_KEY not in stranger.session_state
    wrong = _session()
    wrong.text_input(key="rk_class_key").input(KEY)
    wrong.text_input(key="rk_class_resume").input("<b>ZZZ</b>")
    _button(wrong, "Start a class").click()
    wrong.run()
    assert CLASS_KEY not in wrong.session_state
    assert any("No class" in e and "ZZZ" in e for e in _texts(wrong, "error"))
