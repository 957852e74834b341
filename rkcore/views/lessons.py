"""Lessons a lecturer builds: an ordered list of dashboard views (page, settings, a note, an optional question),
and their file, a small human-readable JSON document with a format name and a version.

Pure (no streamlit). The settings of a step are the text the URL writes (field name -> text, as
``rkapp.state.view_settings`` gives them), checked against the state table (:mod:`rkcore.views.settings`): an
unknown setting or a value outside the table's choices or bounds is refused with the step named. The page is
checked by the app (rkcore does not know the pages); here only its shape. The module sits with the views, not
with :mod:`rkcore.teaching`, because the check reads the state table, and teaching is the layer below it.

JSON, not TOML: the install is fixed (no new dependency) and Python's standard library reads TOML but writes none.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from rkcore.teaching.story import STEP_TITLES, STORY_D_GRID, STORY_GRAM_D, STORY_N

from .settings import ALIASES, FIELDS, check_field, quoted

#: the file's format name and the version this code writes and reads
FORMAT = "rkcore-lesson"
VERSION = 1
#: bounds, checked before anything proportional to the file is built
MAX_FILE_BYTES = 256 * 1024
MAX_STEPS = 100
MAX_TITLE_CHARS = 120
MAX_NOTE_CHARS = 400
MAX_QUESTION_CHARS = 200
MIN_CHOICES, MAX_CHOICES = 2, 6
MAX_CHOICE_CHARS = 80
MAX_SETTINGS = 80
MAX_SETTING_NAME_CHARS = 40
MAX_SETTING_VALUE_CHARS = 500
MAX_PAGE_CHARS = 80
#: a page as the app names it (its url_path: "Gram_matrices"; Home is "")
_PAGE = re.compile(r"[A-Za-z0-9_]*")


class LessonFileError(ValueError):
    """A lesson file (or a lesson) that cannot be read: the message names the place and says what is wrong."""


@dataclass(frozen=True)
class Question:  # numpydoc ignore=PR02
    """A multiple-choice question a step asks before its chart is revealed.

    Parameters
    ----------
    text : str
        The question, at most :data:`MAX_QUESTION_CHARS` characters.
    choices : tuple of str
        2 to 6 distinct, non-empty choices of at most :data:`MAX_CHOICE_CHARS` characters.
    """

    text: str
    choices: tuple[str, ...]


@dataclass(frozen=True)
class LessonStep:  # numpydoc ignore=PR02
    """One view of a lesson.

    Parameters
    ----------
    page : str
        The page's ``url_path`` ("Gram_matrices"; "" is Home).
    settings : dict
        Field name -> text, as the URL writes them (the settings that differ from their defaults).
    note : str, default=""
        What the lecturer says here, at most :data:`MAX_NOTE_CHARS` characters.
    question : Question or None, optional
        A question asked at this step.
    """

    page: str
    settings: dict = field(default_factory=dict)
    note: str = ""
    question: Question | None = None


@dataclass(frozen=True)
class Lesson:  # numpydoc ignore=PR02
    """An ordered list of steps under a title.

    Parameters
    ----------
    title : str
        The lesson's title (1 to :data:`MAX_TITLE_CHARS` characters).
    steps : tuple of LessonStep
        At most :data:`MAX_STEPS` steps, in order.
    """

    title: str
    steps: tuple[LessonStep, ...] = ()


# ============================================================================ checks (place-named messages)
def _text(value, what: str, place: str, limit: int, *, required: bool = False) -> str:
    if not isinstance(value, str):
        raise LessonFileError(f"{place}{what} must be text, not {quoted(value)}.")
    if len(value) > limit:
        raise LessonFileError(f"{place}{what} is longer than {limit} characters ({len(value):,}).")
    if required and not value.strip():
        raise LessonFileError(f"{place}{what} is empty.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise LessonFileError(f"{place}{what} holds a character that is not text (an unpaired surrogate).") from None
    return value


def _entries(obj, allowed: tuple[str, ...], required: tuple[str, ...], place: str, what: str) -> None:
    if not isinstance(obj, dict):
        raise LessonFileError(f"{place}{what} must be a table of named entries, not {quoted(obj)}.")
    unknown = [k for k in obj if k not in allowed]
    if unknown:
        raise LessonFileError(f"{place}unknown entry {quoted(unknown[0])} (allowed: {', '.join(allowed)}).")
    missing = [k for k in required if k not in obj]
    if missing:
        raise LessonFileError(f"{place}the entry {quoted(missing[0])} is missing.")


def read_question(obj, place: str = "") -> Question:
    """A question from its table ({"text": ..., "choices": [...]}), checked.

    Parameters
    ----------
    obj : dict
        The question's table.
    place : str, default=""
        Prefix of the messages ("step 3: ").

    Returns
    -------
    Question
        The checked question.

    Raises
    ------
    LessonFileError
        Empty or too long text, not 2 to 6 choices, an empty, too long or repeated choice.
    """
    _entries(obj, ("text", "choices"), ("text", "choices"), place, "the question")
    text = _text(obj["text"], "the question", place, MAX_QUESTION_CHARS, required=True)
    choices = obj["choices"]
    if not isinstance(choices, list) or not MIN_CHOICES <= len(choices) <= MAX_CHOICES:
        count = f"{len(choices)}" if isinstance(choices, list) else quoted(choices)
        raise LessonFileError(f"{place}the question needs {MIN_CHOICES} to {MAX_CHOICES} choices (a list), "
                              f"not {count}.")
    seen = set()
    for k, choice in enumerate(choices, 1):
        _text(choice, f"choice {k}", place, MAX_CHOICE_CHARS, required=True)
        key = choice.strip().casefold()
        if key in seen:
            raise LessonFileError(f"{place}choice {k} ({quoted(choice)}) repeats an earlier choice.")
        seen.add(key)
    return Question(text, tuple(choices))


def check_settings(settings, place: str = "") -> dict:
    """A step's settings (field name -> text), checked against the state table: known fields only, each text
    readable and inside the field's choices or bounds.

    Parameters
    ----------
    settings : dict
        Field name -> text.
    place : str, default=""
        Prefix of the messages ("step 3: ").

    Returns
    -------
    dict
        The same settings (a new dict).

    Raises
    ------
    LessonFileError
        Too many settings, an unknown one (an old alias names its field), a value not text, unreadable or refused.
    """
    if not isinstance(settings, dict):
        raise LessonFileError(f"{place}the settings must be a table of names and values, not {quoted(settings)}.")
    if len(settings) > MAX_SETTINGS:
        raise LessonFileError(f"{place}{len(settings):,} settings; a step holds at most {MAX_SETTINGS}.")
    for name, text in settings.items():
        _text(name, "a setting's name", place, MAX_SETTING_NAME_CHARS)
        if name not in FIELDS:
            hint = f" (write {quoted(ALIASES[name])})" if name in ALIASES else ""
            raise LessonFileError(f"{place}unknown setting {quoted(name)}{hint}.")
        _text(text, f"the setting {quoted(name)}", place, MAX_SETTING_VALUE_CHARS)
        f = FIELDS[name]
        try:
            value = f.parse(text)
        except (ValueError, KeyError, TypeError, OverflowError):
            raise LessonFileError(f"{place}{f.label or name}: could not read {quoted(text)}.") from None
        problem = check_field(name, value)
        if problem:
            raise LessonFileError(f"{place}{problem}")
    return dict(settings)


def _read_step(obj, number: int) -> LessonStep:
    place = f"step {number}: "
    _entries(obj, ("page", "settings", "note", "question"), ("page",), place, "a step")
    page = _text(obj["page"], "the page", place, MAX_PAGE_CHARS)
    if not _PAGE.fullmatch(page):
        raise LessonFileError(f"{place}{quoted(page)} is not a page name (letters, digits and _).")
    settings = check_settings(obj.get("settings", {}), place)
    note = _text(obj.get("note", ""), "the note", place, MAX_NOTE_CHARS)
    question = obj.get("question")
    return LessonStep(page, settings, note, None if question is None else read_question(question, place))


def _read_lesson(obj) -> Lesson:
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        found = obj.get("format") if isinstance(obj, dict) else obj
        raise LessonFileError(f"not a lesson file: its \"format\" must be {FORMAT!r}, found {quoted(found)}.")
    version = obj.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise LessonFileError(f"the file's \"version\" must be a whole number, found {quoted(version)}.")
    if version > VERSION:
        raise LessonFileError(f"version {version} is newer than this app reads ({VERSION}): update rkcore.")
    if version < 1:
        raise LessonFileError(f"version {version} is not a lesson file version (this app reads {VERSION}).")
    _entries(obj, ("format", "version", "title", "steps"), ("title", "steps"), "", "the file")
    title = _text(obj["title"], "the title", "", MAX_TITLE_CHARS, required=True)
    steps = obj["steps"]
    if not isinstance(steps, list):
        raise LessonFileError(f"the steps must be a list, not {quoted(steps)}.")
    if len(steps) > MAX_STEPS:
        raise LessonFileError(f"{len(steps):,} steps; a lesson holds at most {MAX_STEPS}.")
    return Lesson(title, tuple(_read_step(s, k) for k, s in enumerate(steps, 1)))


# ============================================================================ the file
def _no_repeats(pairs: list) -> dict:
    names = [name for name, _ in pairs]
    for name in names:
        if names.count(name) > 1:
            raise LessonFileError(f"the entry {quoted(name)} appears twice in one table.")
    return dict(pairs)


def lesson_to_dict(lesson: Lesson) -> dict:
    """The lesson as the file's table (checked: what is written reads back).

    Parameters
    ----------
    lesson : Lesson
        The lesson.

    Returns
    -------
    dict
        {"format", "version", "title", "steps": [...]}.

    Raises
    ------
    LessonFileError
        When the lesson breaks a bound (the message names the step).
    """
    steps = []
    for step in lesson.steps:
        out = {"page": step.page, "settings": dict(step.settings), "note": step.note}
        if step.question is not None:
            out["question"] = {"text": step.question.text, "choices": list(step.question.choices)}
        steps.append(out)
    table = {"format": FORMAT, "version": VERSION, "title": lesson.title, "steps": steps}
    _read_lesson(table)
    return table


def lesson_to_json(lesson: Lesson) -> str:
    """The lesson's file: indented JSON, non-ASCII text kept as written (UTF-8), ending in a newline.

    Parameters
    ----------
    lesson : Lesson
        The lesson.

    Returns
    -------
    str
        The file's text.

    Raises
    ------
    LessonFileError
        When the lesson breaks a bound.
    """
    return json.dumps(lesson_to_dict(lesson), indent=2, ensure_ascii=False) + "\n"


def lesson_from_json(text: str | bytes) -> Lesson:
    """A lesson from its file, every bound checked (the size before the file is parsed).

    Parameters
    ----------
    text : str or bytes
        The file's text (bytes: UTF-8).

    Returns
    -------
    Lesson
        The lesson.

    Raises
    ------
    LessonFileError
        For any malformed file; the message names the place ("step 3: the note is longer than 400 characters").
    """
    size = len(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    if size > MAX_FILE_BYTES:
        raise LessonFileError(f"the file is {size:,} bytes; a lesson file holds at most {MAX_FILE_BYTES:,}.")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise LessonFileError(f"not a lesson file: byte {e.start:,} is not UTF-8 text.") from None
    try:
        obj = json.loads(text, object_pairs_hook=_no_repeats)
    except json.JSONDecodeError as e:
        raise LessonFileError(f"not valid JSON: {e.msg} at line {e.lineno}, column {e.colno}.") from None
    except RecursionError:
        raise LessonFileError("not a lesson file: its lists or tables are nested too deep.") from None
    return _read_lesson(obj)


# ============================================================================ the built-in story as a lesson
def story_lesson() -> Lesson:
    """The five-minute story (the Story page, ``story_step`` 1 to 5) as a lesson: each step's note is its title
    and what its screen shows (the numbers are the page's, computed there); step 4 asks which weights give the
    lower error at D = 64 before the chart answers.

    Returns
    -------
    Lesson
        Five steps on the Story page.
    """
    notes = {
        1: f"The exact ANOVA (m = 2) kernel on {STORY_N} handwritten digits, sorted by digit: images of the "
           "same digit are more alike, hence the blocks. A kernel SVM needs all n² entries.",
        2: f"The same matrix estimated from just D = {STORY_GRAM_D:,} random features (RK) beside the exact one: "
           "the estimate keeps the blocks.",
        3: f"The error of the estimate as D grows from {STORY_D_GRID[0]:,} to {STORY_D_GRID[-1]:,} (digits), on "
           "log-log axes: compare its slope with 1/√D's −0.5.",
        4: "Rademacher against Gaussian weights on the synthetic interaction data, over D (median of the trials); "
           "Lemma 4 says Rademacher weights give the smaller variance.",
        5: "The exact kernel SVM against a linear model on RK features: accuracy over seeds, and time against n "
           "with the crossover, measured on this server.",
    }
    question = Question(f"Which weights give the lower error at D = {STORY_D_GRID[1]}?",
                        ("Rademacher", "Gaussian", "They tie (within the trials' spread)"))
    return Lesson("The story in five screens", tuple(
        LessonStep("Story", {"story_step": str(number)}, f"{STEP_TITLES[number]}. {notes[number]}",
                   question if number == 4 else None) for number in STEP_TITLES))


__all__ = ["FORMAT", "Lesson", "LessonFileError", "LessonStep", "Question", "VERSION", "check_settings",
           "lesson_from_json", "lesson_to_dict", "lesson_to_json", "read_question", "story_lesson"]
