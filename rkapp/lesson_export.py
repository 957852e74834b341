"""A lesson as one offline HTML file (rkcore.figures.export): every step with its note, its question and its settings,
and the charts its page drew on the step's last visit in this session.

Charts are drawn by the pages, not by the lesson, so the export writes what the lecturer saw: when the lecturer is on
a step's page, the page's run records its charts (``rkapp.run_context.ScriptRun.figures``, what ``rkapp.layout.chart``
appends to; ``rkapp.lessons`` keeps the list per step). A step not visited yet is written with its note, question and
settings and the sentence "Visit step k once to include its charts", never left out in silence.
"""
from __future__ import annotations

import re

import streamlit as st

from rkcore.views.lessons import Lesson as LessonFile

from .navigation import PAGES

#: the sentence written for a step whose page was not visited in this session
NOT_VISITED = "Visit step {} once to include its charts."


def export_items(lesson: LessonFile, visits: dict, page_titles: dict) -> tuple[list, list[int]]:
    """The export's blocks for ``lesson`` and the numbers of the steps written without charts. ``visits``: step
    index -> (page title, the entries a run of its page drew: ("chart", figure, caption) or ("note", text));
    ``page_titles``: url_path -> the page's title."""
    from rkcore.figures.export import Item

    items, missing = [], []
    for k, step in enumerate(lesson.steps):
        items.append(Item("heading", _plain(f"Step {k + 1} · {page_titles.get(step.page, step.page)}")))
        if step.note:
            items.append(Item("text", _plain(step.note)))
        if step.question is not None:
            choices = "; ".join(f"({chr(97 + j)}) {c}" for j, c in enumerate(step.question.choices))
            items.append(Item("text", _plain(f"Question: {step.question.text} Choices: {choices}")))
        shown = ", ".join(f"{name} = {value}" for name, value in step.settings.items()) or "the defaults"
        items.append(Item("text", _plain(f"Settings: {shown}.")))
        drawn = visits.get(k, (None, None))[1]
        if not drawn:
            missing.append(k + 1)
            items.append(Item("text", NOT_VISITED.format(k + 1)))
            continue
        for entry in list(drawn):
            items.append(Item("chart", entry[2], entry[1]) if entry[0] == "chart" else Item("note", entry[1]))
    return items, missing


def lesson_file_name(title: str) -> str:
    """A file name from the lesson's title (no extension)."""
    return re.sub(r"[^A-Za-z0-9_+.-]+", "-", title).strip("-")[:80] or "lesson"


def _plain(text: str) -> str:
    """The lecturer's words as written: the export reads "$" as the start of a formula (its own notes' markup)."""
    return str(text).replace("$", "\\$")


def lesson_html(lesson: LessonFile, visits: dict, page_titles: dict) -> str:
    """The lesson's offline HTML document (``rkcore.figures.export.view_html``); see :func:`export_items`."""
    from rkcore.figures.export import Item, Lesson, view_html

    items, missing = export_items(lesson, visits, page_titles)
    if missing:
        steps = ", ".join(map(str, missing))
        items.insert(0, Item("text", f"Steps without charts (not visited in this session): {steps}."))
    return view_html(Lesson(lesson.title, items, {"steps": len(lesson.steps), "lesson file format": "rkcore-lesson 1"}))


def lesson_export_button(lesson: LessonFile, visits: dict) -> None:
    """The download button of the lesson's HTML file (built when clicked), naming the steps not visited yet."""
    titles = {"": "Home", **{e.url_path: e.title for e in PAGES}}
    missing = [k + 1 for k in range(len(lesson.steps)) if not visits.get(k, (None, None))[1]]
    if missing:
        st.caption(f"Not visited yet, exported without charts: step{'s' if len(missing) > 1 else ''} "
                   f"{', '.join(map(str, missing[:20]))}{' …' if len(missing) > 20 else ''}. "
                   f"Visit step {missing[0]} once to include its charts.")
    st.download_button("Export the lesson (one HTML file, works offline)", icon=":material/school:",
                       data=lambda: lesson_html(lesson, dict(visits), titles).encode(), mime="text/html",
                       file_name=lesson_file_name(lesson.title) + ".html", on_click="ignore", key="lesson_export")
