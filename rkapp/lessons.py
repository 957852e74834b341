"""The lesson panel: the lecturer's lesson (rkcore.views.lessons), held in the session, built from the views they
visit, stepped through with Previous / Next and the arrow keys, saved and loaded as a small JSON file, exported.

In normal mode the step buttons sit at the top of the sidebar and the rest in a "Lesson" expander under them; in
presenter mode Previous, the step's position and Next sit in the header row beside the "Pages" menu, the rest in
a "Lesson" popover there (:func:`lesson_panel`, called by ``rkapp.layout.page``).

Keys: while a lesson has steps, Left / Right (and a clicker's Page Up / Page Down) step the lesson, on every page;
the Story page then gives up its own shortcuts (:func:`lesson_active`) and keeps its buttons for the mouse.

Going to a step resets the settings to their defaults, sets the step's (``rkapp.state.apply_view_settings``; a
refused one is shown literally with st.warning) and switches to its page. While the step carries a question,
the session holds it under ``rkapp.class_contract.LESSON_QUESTION_KEY`` for the class and question parts.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitAPIException

from rkcore.views.lessons import (MAX_CHOICES, MAX_CHOICE_CHARS, MAX_FILE_BYTES, MAX_NOTE_CHARS, MAX_QUESTION_CHARS,
                                  MAX_STEPS, MAX_TITLE_CHARS, Lesson, LessonFileError, LessonStep, lesson_from_json,
                                  lesson_to_json, read_question, story_lesson)

from .class_contract import LESSON_QUESTION_KEY
from .guard import literal
from .lesson_export import lesson_export_button, lesson_file_name
from .navigation import HOME, PAGES, PageEntry
from .run_context import current_run
from .state import apply_view_settings, read_view_settings, view_settings

#: session keys: the lesson, the index of the step on screen (None: not started), a go-to request (the page to
#: switch to at the top of the next run), refused settings and a load error to show, the charts of each step's
#: last visit (step index -> (page title, what the run drew)) for the export
LESSON_KEY = "_rk_lesson"
AT_KEY = "_rk_lesson_at"
_SHARED_KEY = "_rk_lesson_shared_question"  # the question under LESSON_QUESTION_KEY is the lesson's
GO_KEY = "_rk_lesson_go"
PROBLEMS_KEY = "_rk_lesson_problems"
LOAD_ERROR_KEY = "_rk_lesson_load_error"
VISITS_KEY = "_rk_lesson_visits"
#: widget keys of the step buttons (the browser test presses their shortcuts)
PREVIOUS_KEY, NEXT_KEY = "lesson_previous", "lesson_next"
#: the clicker's keys besides the arrows, each on a button of its own kept out of sight (a button has one shortcut)
MORE_KEYS = {"lesson_prev_pgup": ("PageUp", -1), "lesson_next_pgdn": ("PageDown", +1)}
HOME_ENTRY = PageEntry(HOME, "Home", "")
NEW_TITLE = "My lesson"


def page_entry(url_path: str) -> PageEntry | None:
    """The page a step names by its url_path ("" is Home), or None."""
    return HOME_ENTRY if url_path == "" else next((e for e in PAGES if e.url_path == url_path), None)


def lesson() -> Lesson | None:
    """The session's lesson, or None."""
    return st.session_state.get(LESSON_KEY)


def lesson_active() -> bool:
    """Whether a lesson with steps is held: its keys step it (the Story page then gives up its own)."""
    held = lesson()
    return held is not None and bool(held.steps)


def check_lesson(loaded: Lesson) -> Lesson:
    """A lesson read from a file, checked against the app: each step's page exists and its settings are
    ones a step may carry (no private field; ``rkapp.state.read_view_settings``).

    Raises LessonFileError naming the step."""
    for k, step in enumerate(loaded.steps, 1):
        if page_entry(step.page) is None:
            raise LessonFileError(f"step {k}: there is no page {step.page!r} in this app.")
        _, problems = read_view_settings(step.settings)
        if problems:
            raise LessonFileError(f"step {k}: {problems[0]}")
    return loaded


def question_id(title: str, index: int, text: str, choices) -> str:
    """A short id of a step's question, unique per lesson, step and wording."""
    key = json.dumps([title, index, text, list(choices)], ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _set(new: Lesson | None, at: int | None = None) -> None:
    st.session_state[LESSON_KEY] = new
    st.session_state[AT_KEY] = at
    st.session_state[VISITS_KEY] = {}


def go_to(index: int) -> None:
    """Callback: apply step ``index``'s settings and ask the next run to switch to its page."""
    held = lesson()
    if held is None or not held.steps:
        return
    index = min(max(index, 0), len(held.steps) - 1)
    step = held.steps[index]
    st.session_state[AT_KEY] = index
    st.session_state[PROBLEMS_KEY] = apply_view_settings(step.settings)
    entry = page_entry(step.page)
    if entry is not None:
        st.session_state[GO_KEY] = entry.path


def step_by(move: int) -> None:
    """Callback: the next (+1) or previous (-1) step; Next from a lesson not started goes to its first step."""
    at = st.session_state.get(AT_KEY)
    go_to(0 if at is None else at + move)


def _share_question() -> None:
    """The current step's question under LESSON_QUESTION_KEY, or none."""
    held, at = lesson(), st.session_state.get(AT_KEY)
    step = held.steps[at] if held is not None and at is not None and at < len(held.steps) else None
    if step is not None and step.question is not None:
        q = step.question
        st.session_state[LESSON_QUESTION_KEY] = {"id": question_id(held.title, at, q.text, q.choices),
                                                 "text": q.text, "choices": list(q.choices)}
        st.session_state[_SHARED_KEY] = True
    elif st.session_state.pop(_SHARED_KEY, False):
        # only a question the lesson put there: a student's comes from the class (rkapp.lecture)
        st.session_state.pop(LESSON_QUESTION_KEY, None)


def _record_visit(page_file: str) -> None:
    """On the current step's page, keep this run's figure list (it fills as the page draws): the export's charts."""
    held, at = lesson(), st.session_state.get(AT_KEY)
    if held is None or at is None or at >= len(held.steps) or current_run().figures is None:
        return
    entry = page_entry(held.steps[at].page)
    if entry is not None and entry.file == page_file:
        st.session_state.setdefault(VISITS_KEY, {})[at] = (entry.title, current_run().figures)


# ============================================================================ editing the lesson
def _replace(steps: list[LessonStep], title: str | None = None) -> None:
    held = lesson()
    st.session_state[LESSON_KEY] = Lesson(title if title is not None else held.title if held else NEW_TITLE,
                                          tuple(steps))


def add_view(page_url_path: str, note: str, question_text: str, choices_text: str) -> str | None:
    """Append the current view (its page and ``view_settings()``) as a step; the refusal's message, or None."""
    held = lesson()
    steps = list(held.steps) if held else []
    if len(steps) >= MAX_STEPS:
        return f"A lesson holds at most {MAX_STEPS} steps."
    choices = [c.strip() for c in choices_text.splitlines() if c.strip()]
    try:
        question = read_question({"text": question_text.strip(), "choices": choices}) \
            if question_text.strip() or choices else None
        step = LessonStep(page_url_path, view_settings(), note.strip(), question)
        lesson_to_json(Lesson(held.title if held else NEW_TITLE, (step,)))  # every bound checked, as a file
    except LessonFileError as e:
        return str(e)[0].upper() + str(e)[1:]
    _replace([*steps, step])
    st.session_state[AT_KEY] = len(steps)
    return None


def _move(index: int, move: int) -> None:
    steps = list(lesson().steps)
    other = index + move
    if 0 <= other < len(steps):
        steps[index], steps[other] = steps[other], steps[index]
        _replace(steps)
        at = st.session_state.get(AT_KEY)
        st.session_state[AT_KEY] = other if at == index else index if at == other else at
        st.session_state[VISITS_KEY] = {}  # the charts were recorded by position


def _remove(index: int) -> None:
    steps = list(lesson().steps)
    del steps[index]
    _replace(steps)
    at = st.session_state.get(AT_KEY)
    st.session_state[AT_KEY] = None if at is None or not steps else max(0, at - (at >= index))
    st.session_state[VISITS_KEY] = {}


def _retitle() -> None:
    title = (st.session_state.get("lesson_title") or "").strip()[:MAX_TITLE_CHARS] or NEW_TITLE
    _replace(list(lesson().steps) if lesson() else [], title)


def _load() -> None:
    """Callback of the file uploader: read the file (its size first), check it, hold it; or keep the message."""
    upload = st.session_state.get("lesson_file")
    st.session_state.pop(LOAD_ERROR_KEY, None)
    if upload is None:
        return
    try:
        if upload.size > MAX_FILE_BYTES:
            raise LessonFileError(f"the file is {upload.size:,} bytes; a lesson file holds at most "
                                  f"{MAX_FILE_BYTES:,}.")
        _set(check_lesson(lesson_from_json(upload.getvalue())))
    except LessonFileError as e:
        st.session_state[LOAD_ERROR_KEY] = f"{upload.name}: {e}"


def _start_story() -> None:
    _set(story_lesson())
    go_to(0)


# ============================================================================ drawing
def lesson_panel(page_file: str, *, presenter: bool) -> None:
    """The lesson's controls for the page ``page_file`` ("1_Gram_matrices.py"): switches to a step asked for by
    the last click, records the step's charts, shares its question, and draws the controls (see the module)."""
    target = st.session_state.pop(GO_KEY, None)
    if target is not None and Path(target).name != page_file:
        try:
            st.switch_page(target)
        except StreamlitAPIException:  # a page script run alone (no navigation): it stays on its page
            pass
    _record_visit(page_file)
    _share_question()
    if presenter:  # the manager is in the header's "Lecture" popover (rkapp.layout.page)
        _step_buttons(compact=True)
    else:
        with st.sidebar:
            _step_buttons(compact=False)
            _note()


def lesson_manager(page_file: str) -> None:
    """The lesson's manager (the step's note, add this view, the steps, save, load, the story, export), where
    it is called: presenter mode's "Lecture" popover."""
    _note()
    _manager(next((e for e in [HOME_ENTRY, *PAGES] if e.file == page_file), None))


def lesson_expander(page_file: str) -> None:
    """The "Lesson" manager in the sidebar (normal mode), drawn under the page's settings
    (:func:`rkapp.run_context.draw_sidebar_tools`): D and the seed stay in the first screen."""
    entry = next((e for e in [HOME_ENTRY, *PAGES] if e.file == page_file), None)
    with st.sidebar, st.expander("Lesson", icon=":material/school:", expanded=False):
        _manager(entry)


def _note() -> None:
    """The current step's note, for the lecturer."""
    held, at = lesson(), st.session_state.get(AT_KEY)
    if held is not None and at is not None and at < len(held.steps) and held.steps[at].note:
        st.markdown(f"Note: {literal(held.steps[at].note)}")


def lesson_messages() -> None:
    """Under the title: the settings of the step just gone to that were refused, each shown literally."""
    for message in st.session_state.pop(PROBLEMS_KEY, None) or ():
        st.warning(literal(f"This step's setting was not applied: {message}"), icon=":material/warning:")


def _step_buttons(*, compact: bool) -> None:
    """Previous, "Step k of N" and Next with their keys, while a lesson has steps."""
    held = lesson()
    if held is None or not held.steps:
        return
    at = st.session_state.get(AT_KEY)
    position = f"Step {at + 1} of {len(held.steps)}" if at is not None else f"{len(held.steps)} steps"
    if not compact:
        st.markdown(f"**Lesson:** {literal(held.title)}")
    with st.container(horizontal=True, vertical_alignment="center", gap="small", key="rk-lesson-steps",
                      wrap=not compact, width="content" if compact else "stretch"):
        st.button("Previous", key=PREVIOUS_KEY, on_click=step_by, args=(-1,), disabled=at is None or at == 0,
                  shortcut="Left", help="Previous step of the lesson (Left arrow or Page Up)")
        st.markdown(f"**{position}**", width="content")
        st.button("Next", key=NEXT_KEY, on_click=step_by, args=(+1,), type="primary",
                  disabled=at is not None and at == len(held.steps) - 1, shortcut="Right",
                  help="Next step of the lesson (Right arrow or Page Down)")
    st.html("<style>" + "".join(f".st-key-{key} {{ display: none; }}" for key in MORE_KEYS) + "</style>")
    for key, (shortcut, move) in MORE_KEYS.items():
        st.button(shortcut, key=key, on_click=step_by, args=(move,), shortcut=shortcut)


def _manager(entry: PageEntry | None) -> None:
    """Add this view, the steps (go to, up, down, remove), title, save, load, start from the story, export."""
    held = lesson()
    if entry is not None:
        _add_form(entry)
    if held is not None and held.steps:
        st.text_input("Lesson title", value=held.title, max_chars=MAX_TITLE_CHARS, key="lesson_title",
                      on_change=_retitle)
        _step_list(held)
        try:
            text = lesson_to_json(held)
        except LessonFileError as e:  # a lesson held in the session always reads; should one not, say why
            st.error(literal(f"The lesson cannot be saved: {e}"), icon=":material/error:")
        else:
            st.download_button("Save lesson (JSON file)", data=text, mime="application/json",
                               file_name=lesson_file_name(held.title) + ".json", on_click="ignore",
                               icon=":material/download:", key="lesson_save")
        lesson_export_button(held, st.session_state.get(VISITS_KEY, {}))
    # no type= for Streamlit to enforce (a client bypassing the file picker got its exception): the file's
    # content is what lesson_from_json checks, whatever its name
    st.file_uploader("Load lesson (JSON file)", key="lesson_file", on_change=_load,
                     help=f"A lesson file saved here, at most {MAX_FILE_BYTES // 1024} KB.")
    if st.session_state.get(LOAD_ERROR_KEY):
        st.error(literal(st.session_state[LOAD_ERROR_KEY]), icon=":material/error:")
    st.button("Start from the story", key="lesson_story", on_click=_start_story, icon=":material/auto_stories:",
              help="The built-in five-minute story as a lesson (replaces the lesson held now)")


def _add_form(entry: PageEntry) -> None:
    with st.form("lesson_add", clear_on_submit=True, border=True):
        st.markdown(f"**Add this view to the lesson** ({literal(entry.title)}, its settings)")
        note = st.text_area("Note (what to say here)", max_chars=MAX_NOTE_CHARS, height=80,
                            key="lesson_note")
        question = st.text_input("Question (optional)", max_chars=MAX_QUESTION_CHARS, key="lesson_question")
        choices = st.text_area(f"Choices, one per line (2 to {MAX_CHOICES}, at most {MAX_CHOICE_CHARS} "
                               "characters each)", height=90, max_chars=MAX_CHOICES * (MAX_CHOICE_CHARS + 1),
                               key="lesson_choices")
        if st.form_submit_button("Add this view to the lesson", icon=":material/add:", key="lesson_add_submit"):
            problem = add_view(entry.url_path, note, question, choices)
            if problem:
                st.error(literal(problem), icon=":material/error:")
            else:
                st.success(f"Added as step {len(lesson().steps)}.", icon=":material/check:")


def _step_list(held: Lesson) -> None:
    at = st.session_state.get(AT_KEY)
    for k, step in enumerate(held.steps):
        entry = page_entry(step.page)
        name = entry.title if entry else step.page
        with st.container(horizontal=True, vertical_alignment="center", gap="small"):
            st.button(f"{k + 1}. {name}" + (" (on screen)" if k == at else ""), key=f"lesson_go_{k}",
                      on_click=go_to, args=(k,), help=step.note[:200] or None)
            st.button("Up", key=f"lesson_up_{k}", on_click=_move, args=(k, -1), disabled=k == 0,
                      help=f"Move step {k + 1} up")
            st.button("Down", key=f"lesson_down_{k}", on_click=_move, args=(k, +1),
                      disabled=k == len(held.steps) - 1, help=f"Move step {k + 1} down")
            st.button("Remove", key=f"lesson_remove_{k}", on_click=_remove, args=(k,), help=f"Remove step {k + 1}")
