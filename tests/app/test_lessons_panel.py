"""The lesson panel (rkapp.lessons) in the running app: add the current view, step through a lesson (page and
settings switch), a bad file refused in place, the question shared while its step is on screen; the story lesson's
steps exist in this app; the export writes every step and names the ones not visited."""
from __future__ import annotations

import re

import pytest

from rkapp.class_contract import LESSON_QUESTION_KEY
from rkapp.lesson_export import lesson_html
from rkapp.lessons import AT_KEY, LESSON_KEY, LOAD_ERROR_KEY, check_lesson, page_entry
from rkapp.navigation import PAGES
from rkapp.state import FIELDS, read_view_settings
from rkcore.views.lessons import Lesson, LessonFileError, LessonStep, Question, lesson_to_json, story_lesson

GRAM = next(e for e in PAGES if e.url_path == "Gram_matrices")
BOUNDS = next(e for e in PAGES if e.url_path == "Error_bounds")
QUESTION = Question("Which is lower?", ("RK", "SCRK"))
LESSON = Lesson("Three views", (
    LessonStep("Gram_matrices", {"n": "30", "D": "64"}, "K and its estimate."),
    LessonStep("Error_bounds", {"n": "30", "eb_D": "128"}, "The tails.", QUESTION),
    LessonStep("Gram_matrices", {"n": "30", "D": "16"}, "Fewer features."),
))


def _page_title(entry) -> str:
    from tests.conftest import REPO
    return re.search(r'^page\(\s*"([^"]+)"', (REPO / "pages" / entry.file).read_text(), re.M).group(1)


def _value(at, name: str):
    """A field's value in the session (its default when reset)."""
    key = "_rk_v_" + name
    return at.session_state[key] if key in at.session_state else FIELDS[name].default


def _shown(markdown: str) -> str:
    """The text a reader sees of literal() markdown (backslash escapes removed)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def _ok(at):
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_every_story_step_exists_here_and_its_settings_apply():
    for step in story_lesson().steps:
        assert page_entry(step.page) is not None, step.page
        assert read_view_settings(step.settings) == ({"story_step": int(step.settings["story_step"])}, [])
    assert check_lesson(story_lesson()) == story_lesson()


@pytest.mark.parametrize("step, message", [
    (LessonStep("No_such_page"), "step 1: there is no page 'No_such_page' in this app."),
    (LessonStep("Gram_matrices", {"upload": "abc"}), "step 1: Unknown setting 'upload'."),
    (LessonStep("Gram_matrices", {"presenter": "true"}), "step 1: Unknown setting 'presenter'."),
])
def test_a_file_naming_a_missing_page_or_a_private_setting_is_refused(step, message):
    with pytest.raises(LessonFileError, match=re.escape(message)):
        check_lesson(Lesson("t", (step,)))


def test_add_the_current_view(run_page):
    at = _ok(run_page("app.py", n=30, D=24))
    _ok(at.switch_page(GRAM.path).run())
    at.text_area(key="lesson_note").input("Look at the blocks.")
    at.text_input(key="lesson_question").input("More blocks at D = 24?")
    at.text_area(key="lesson_choices").input("Yes\nNo\n")
    _ok(at.button(key="lesson_add_submit").click().run())
    lesson = at.session_state[LESSON_KEY]
    assert [(s.page, s.note, s.question) for s in lesson.steps] == [
        ("Gram_matrices", "Look at the blocks.", Question("More blocks at D = 24?", ("Yes", "No")))]
    assert lesson.steps[0].settings["D"] == "24" and lesson.steps[0].settings["n"] == "30"
    assert "presenter" not in lesson.steps[0].settings
    # a question with one choice is refused in place, the lesson unchanged
    at.text_input(key="lesson_question").input("Only one?")
    at.text_area(key="lesson_choices").input("Yes")
    _ok(at.button(key="lesson_add_submit").click().run())
    assert any("needs 2 to 6 choices" in _shown(e.value) for e in at.error), [e.value for e in at.error]
    assert len(at.session_state[LESSON_KEY].steps) == 1


def test_next_and_previous_switch_page_and_settings_and_share_the_question(run_page):
    at = _ok(run_page("app.py", session={LESSON_KEY: LESSON, AT_KEY: None}))
    assert LESSON_QUESTION_KEY not in at.session_state
    _ok(at.button(key="lesson_next").click().run())
    assert at.title[0].value == _page_title(GRAM)
    assert _value(at, "D") == 64 and _value(at, "n") == 30
    assert LESSON_QUESTION_KEY not in at.session_state
    _ok(at.button(key="lesson_next").click().run())
    assert at.title[0].value == _page_title(BOUNDS)
    assert _value(at, "eb_D") == 128 and _value(at, "D") == 256  # reset to default
    shared = at.session_state[LESSON_QUESTION_KEY]
    assert shared["text"] == QUESTION.text and shared["choices"] == list(QUESTION.choices) and shared["id"]
    assert any("Step 2 of 3" in m.value for m in at.markdown)
    _ok(at.button(key="lesson_next").click().run())
    assert at.title[0].value == _page_title(GRAM) and _value(at, "D") == 16
    assert LESSON_QUESTION_KEY not in at.session_state  # removed on a step without one
    _ok(at.button(key="lesson_previous").click().run())
    assert at.title[0].value == _page_title(BOUNDS) and LESSON_QUESTION_KEY in at.session_state


def test_a_refused_setting_is_shown_literally_and_the_rest_applies(run_page):
    # the state table reads a private field (a server path), a lesson held in the session never applies it
    odd = Lesson("Odd", (LessonStep("Gram_matrices", {"n": "30", "movielens_path": "<b>$x$</b>"}),))
    at = _ok(run_page("app.py", session={LESSON_KEY: odd, AT_KEY: None}))
    _ok(at.button(key="lesson_next").click().run())
    assert at.title[0].value == _page_title(GRAM) and _value(at, "n") == 30
    assert _value(at, "movielens_path") == ""
    warnings = [_shown(w.value) for w in at.warning]
    assert "This step's setting was not applied: Unknown setting 'movielens_path'." in warnings, warnings
    assert any("\\'movielens" in w.value for w in at.warning)  # shown literally (escaped markdown)


@pytest.mark.parametrize("content, message", [
    (b"{not json", "broken.json: not valid JSON"),
    (lesson_to_json(Lesson("x", (LessonStep("Nowhere"),))).encode(), "step 1: there is no page 'Nowhere'"),
    (b'{"format": "rkcore-lesson", "version": 9}', "version 9 is newer than this app reads (1)"),
])
def test_a_bad_file_is_refused_in_place_and_the_page_runs_on(run_page, content, message):
    at = _ok(run_page("app.py"))
    _ok(at.file_uploader(key="lesson_file").set_value(("broken.json", content, "application/json")).run())
    assert any(message in _shown(e.value) for e in at.error), [e.value for e in at.error]
    assert at.session_state[LOAD_ERROR_KEY] and LESSON_KEY not in at.session_state
    assert at.title[0].value == "Random Kernel Explorer"
    _ok(at.button(key="lesson_story").click().run())  # the app keeps running: the story lesson starts
    assert at.session_state[AT_KEY] == 0 and at.title[0].value == "The story in five screens"


def test_a_good_file_loads(run_page):
    at = _ok(run_page("app.py"))
    text = lesson_to_json(LESSON).encode()
    _ok(at.file_uploader(key="lesson_file").set_value(("three.json", text, "application/json")).run())
    assert at.session_state[LESSON_KEY] == LESSON and not at.error


def test_the_story_page_gives_its_keys_to_a_held_lesson(run_page):
    at = _ok(run_page("app.py"))
    _ok(at.button(key="lesson_story").click().run())
    shortcuts = {b.key: b.proto.shortcut.lower() for b in at.button if b.proto.shortcut}
    assert shortcuts.get("lesson_next") == "right" and shortcuts.get("lesson_previous") == "left"
    assert "story_next" not in shortcuts and "story_next_space" not in shortcuts
    alone = _ok(run_page("pages/0_Story.py"))
    assert {b.key: b.proto.shortcut.lower() for b in alone.button if b.proto.shortcut}.get("story_next") == "right"


def test_the_export_writes_every_step_and_names_the_ones_not_visited():
    import plotly.graph_objects as go

    figure = go.Figure(go.Scatter(x=[1, 2], y=[3, 4]), layout={"title": {"text": "seen"}})
    hostile = Lesson("<b>Lesson</b> $5", (LessonStep("Gram_matrices", {"D": "64"}, "Costs $5 & <i>more</i>"),
                                          LessonStep("Error_bounds", {}, "Second note.", QUESTION)))
    out = lesson_html(hostile, {0: ("Gram matrices", [("chart", figure, "the caption")])},
                      {"Gram_matrices": "Gram matrices", "Error_bounds": "Error bounds"})
    assert "Costs $5 &amp; &lt;i&gt;more&lt;/i&gt;" in out and "<i>more" not in out
    assert "Second note." in out and "Which is lower?" in out and "(a) RK; (b) SCRK" in out
    assert "Settings: D = 64." in out and "Visit step 2 once to include its charts." in out
    assert "not visited in this session): 2." in out and out.count('class="plotly-graph-div"') == 1
