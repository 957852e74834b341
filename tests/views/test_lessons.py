"""The lesson file (rkcore.views.lessons): round trip over random valid lessons with hostile text, a clear message
naming the place for every malformed file, and the shipped story file equal to the generated one."""
from __future__ import annotations

import json
from importlib import resources

import pytest
from hypothesis import given, settings, strategies as st

from rkcore.views.lessons import (MAX_CHOICE_CHARS, MAX_FILE_BYTES, MAX_NOTE_CHARS, MAX_QUESTION_CHARS,
                                  MAX_SETTINGS, MAX_STEPS, Lesson, LessonFileError, LessonStep, Question,
                                  lesson_from_json, lesson_to_json, story_lesson)
from rkcore.views.settings import FIELDS

#: text a lecturer may type: any unicode (no unpaired surrogates), quotes, HTML, "$" math, backslashes
HOSTILE = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40) | st.sampled_from(
    ['"quoted"', "<script>alert(1)</script>", "$x^2$ costs $5", "back\\slash", "é ≠ 😀", "\n\t", "{}", "null"])


def _bounded(text: str, limit: int) -> str:
    return text[:limit]


@st.composite
def setting(draw):
    """A (name, text) the state table accepts: a choice, a number in bounds, or free text."""
    name = draw(st.sampled_from(["D", "seed", "degree", "kernel", "map", "distributions", "itemsets", "story_step",
                                 "gram_view", "eb_eps", "dv_scrk", "gamma", "tm_sweep_n_features"]))
    f = FIELDS[name]
    if f.options is not None:
        opts = list(f.options())
        value = tuple(draw(st.lists(st.sampled_from(opts), min_size=1, max_size=3, unique=True))) if f.multi \
            else draw(st.sampled_from(opts))
    elif isinstance(f.default, bool):
        value = draw(st.booleans())
    elif isinstance(f.default, int):
        value = draw(st.integers(f.min_value, f.max_value))
    elif isinstance(f.default, float):
        value = draw(st.floats(f.min_value, f.max_value, allow_nan=False))
    else:
        value = draw(HOSTILE)
    return name, f.dump(value)


def question():
    nonblank = HOSTILE.filter(lambda s: s.strip())
    return st.builds(Question, nonblank.map(lambda s: _bounded(s, MAX_QUESTION_CHARS)),
                     st.lists(nonblank.map(lambda s: _bounded(s, MAX_CHOICE_CHARS)), min_size=2, max_size=6,
                              unique_by=lambda s: s.strip().casefold()).map(tuple))


steps = st.builds(LessonStep, st.sampled_from(["", "Story", "Gram_matrices", "Error_bounds"]),
                  st.lists(setting(), max_size=6).map(dict),
                  HOSTILE.map(lambda s: _bounded(s, MAX_NOTE_CHARS)), st.none() | question())
lessons = st.builds(Lesson, HOSTILE.filter(lambda s: s.strip()).map(lambda s: s[:120]),
                    st.lists(steps, max_size=8).map(tuple))


@settings(max_examples=150, deadline=None)
@given(lessons)
def test_a_lesson_round_trips_its_file(lesson):
    text = lesson_to_json(lesson)
    assert lesson_from_json(text) == lesson
    assert lesson_from_json(text.encode("utf-8")) == lesson
    assert json.loads(text)["version"] == 1


def _file(**changes) -> str:
    """The story's file with ``changes`` (dotted paths into it; None deletes)."""
    table = json.loads(lesson_to_json(story_lesson()))
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = table
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        if value is None:
            del target[int(last) if last.isdigit() else last]
        else:
            target[int(last) if last.isdigit() else last] = value
    return json.dumps(table)


BAD = {
    "empty file": ("", "not valid JSON: Expecting value at line 1, column 1"),
    "broken JSON": ('{"format": "rkcore-lesson",\n "version": 1 "title": 1}', "Expecting ',' delimiter at line 2, column 15"),
    "not a table": ("[1, 2]", "not a lesson file"),
    "other format": (_file(format="rkcore-preset"), "not a lesson file: its \"format\" must be 'rkcore-lesson'"),
    "no version": (_file(version=None), "\"version\" must be a whole number"),
    "version as text": (_file(version="1"), "\"version\" must be a whole number"),
    "newer version": (_file(version=2), "version 2 is newer than this app reads (1)"),
    "version 0": (_file(version=0), "version 0 is not a lesson file version"),
    "unknown top entry": (_file(author="me"), "unknown entry 'author'"),
    "no title": (_file(title=None), "the entry 'title' is missing"),
    "blank title": (_file(title="  "), "the title is empty"),
    "steps not a list": (_file(steps={"a": 1}), "the steps must be a list"),
    "too many steps": (_file(steps=[{"page": "Story"}] * (MAX_STEPS + 1)), f"a lesson holds at most {MAX_STEPS}"),
    "step not a table": (_file(steps__2="Story"), "step 3: a step must be a table"),
    "step without page": (_file(steps__2__page=None), "step 3: the entry 'page' is missing"),
    "page not a name": (_file(steps__2__page="../etc"), "step 3: '../etc' is not a page name"),
    "long note": (_file(steps__2__note="x" * 401), "step 3: the note is longer than 400 characters"),
    "note a number": (_file(steps__2__note=3), "step 3: the note must be text"),
    "unknown step entry": (_file(steps__0__chart=1), "step 1: unknown entry 'chart'"),
    "unknown setting": (_file(steps__1__settings={"Dee": "5"}), "step 2: unknown setting 'Dee'"),
    "alias setting": (_file(steps__1__settings={"m": "2"}), "step 2: unknown setting 'm' (write 'degree')"),
    "unreadable setting": (_file(steps__1__settings={"D": "many"}), "step 2: D (random features): could not read"),
    "setting out of bounds": (_file(steps__1__settings={"D": "70000"}), "step 2: D (random features) = 70000 is out"),
    "setting not a choice": (_file(steps__1__settings={"story_step": "6"}), "step 2: Story step: 6 is not an allowed"),
    "setting value a number": (_file(steps__1__settings={"D": 64}), "step 2: the setting 'D' must be text"),
    "too many settings": (_file(steps__1__settings={f"s{k}": "1" for k in range(MAX_SETTINGS + 1)}),
                          f"step 2: {MAX_SETTINGS + 1} settings; a step holds at most {MAX_SETTINGS}"),
    "settings a list": (_file(steps__1__settings=["D"]), "step 2: the settings must be a table"),
    "question blank": (_file(steps__3__question__text=" "), "step 4: the question is empty"),
    "question long": (_file(steps__3__question__text="q" * 201), "step 4: the question is longer than 200"),
    "one choice": (_file(steps__3__question__choices=["a"]), "step 4: the question needs 2 to 6 choices"),
    "seven choices": (_file(steps__3__question__choices=list("abcdefg")), "needs 2 to 6 choices (a list), not 7"),
    "empty choice": (_file(steps__3__question__choices=["a", " "]), "step 4: choice 2 is empty"),
    "long choice": (_file(steps__3__question__choices=["a", "b" * 81]), "step 4: choice 2 is longer than 80"),
    "repeated choice": (_file(steps__3__question__choices=["Yes", "yes "]), "step 4: choice 2 ('yes ') repeats"),
    "question extra": (_file(steps__3__question__answer="a"), "step 4: unknown entry 'answer'"),
    "repeated key": ('{"format": "rkcore-lesson", "format": "x"}', "the entry 'format' appears twice"),
    "unpaired surrogate": (_file(steps__0__note="\ud800"), "step 1: the note holds a character that is not text"),
    "too large": (" " * (MAX_FILE_BYTES + 1), "a lesson file holds at most 262,144"),
    "deep nesting": ("[" * 100_000 + "]" * 100_000, "nested too deep"),
    "not UTF-8": (b"\xff\xfe{}", "not a lesson file: byte 0 is not UTF-8 text"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_every_malformed_file_gets_a_clear_message(case):
    text, message = BAD[case]
    with pytest.raises(LessonFileError) as caught:
        lesson_from_json(text)
    assert message in str(caught.value)
    assert "Traceback" not in str(caught.value) and "json." not in str(caught.value)


def test_writing_an_invalid_lesson_is_refused_with_its_place():
    long_note = LessonStep("Story", {}, "n" * (MAX_NOTE_CHARS + 1))
    with pytest.raises(LessonFileError, match="step 2: the note is longer than 400"):
        lesson_to_json(Lesson("t", (LessonStep("Story"), long_note)))


def test_the_shipped_story_file_is_the_generated_one():
    shipped = resources.files("rkcore.data").joinpath("lessons/story.json").read_text(encoding="utf-8")
    assert shipped == lesson_to_json(story_lesson())
    assert lesson_from_json(shipped) == story_lesson()


def test_the_story_lesson_walks_the_five_steps_and_asks_at_the_weights():
    lesson = story_lesson()
    assert [s.settings for s in lesson.steps] == [{"story_step": str(k)} for k in range(1, 6)]
    assert {s.page for s in lesson.steps} == {"Story"}
    asked = [k for k, s in enumerate(lesson.steps, 1) if s.question]
    assert asked == [4] and "D = 64" in lesson.steps[3].question.text
    # the question asks about a D the step's chart draws
    from rkcore.teaching.story import STORY_D_GRID
    assert 64 in STORY_D_GRID
