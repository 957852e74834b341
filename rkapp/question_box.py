"""The question box of "predict, then reveal" (issue 39): what a student answers with, what the projector shows.

- :func:`question_for_student`: the question, its choices as radio buttons (the student's current answer
  selected; answering again replaces it), and after the reveal the choices frozen with the class's tally.
- :func:`question_for_lecturer`: the live tally (a bar chart redrawn every second, "k answered so far"),
  and the Reveal button; after the reveal "Revealed" and the final tally.
- :func:`show_live_question`: the class code's one call: it records the live question in the session
  (:data:`rkapp.questions.LIVE_QUESTION_KEY`, so ``rkapp.layout.chart`` hides the page's charts until the
  reveal) and draws the box for the session's role.

The answers are kept by :mod:`rkapp.questions` (anonymous, one per student, forgotten with the class).
"""
from __future__ import annotations

import threading
from datetime import timedelta

import pandas as pd
import streamlit as st

from rkcore.figures.questions import tally_figure

from . import questions
from .guard import literal, show_error
from .identity import owner_id
from .layout import chart
from .run_context import current_run

__all__ = ["draw_chart_placeholder", "question_by_hands", "question_for_lecturer", "question_for_student", "show_live_question"]

#: the live tally on the projector and the student's wait for the reveal: redrawn this often
POLL = timedelta(seconds=1)
WAITING = "The chart appears when the lecturer reveals it."
HIDDEN_FROM_CLASS = "This chart is hidden from the class until you reveal the answers."
BY_HANDS = "This chart appears when you reveal it."
_box = threading.local()  # which run drew the box already (once per run, however many charts give way)


def _tally_chart(class_code: str, question: dict, tally: questions.Tally, *, key: str) -> None:
    frame = pd.DataFrame({"choice": question["choices"], "students": list(tally.counts)})
    with questions.showing_box():  # the tally is a chart too, never hidden
        chart(tally_figure(question["choices"], list(tally.counts), question["text"]), frame,
              "answers to the question", key=key, narrow=True, main=False)
    st.markdown(" · ".join(f"{literal(choice)}: **{count}**" for choice, count in zip(question["choices"], tally.counts)))


def _answered_line(tally: questions.Tally, followers: int | None) -> str:
    if followers is not None and followers >= tally.answered:
        return f"{tally.answered} of {followers} answered"
    return f"{tally.answered} answered so far (the app counts answers, not the students in the room)"


def question_for_lecturer(class_code: str, question: dict, *, followers: int | None = None) -> None:
    """The projector's box: the question, the live tally (every second) and Reveal; after it, "Revealed".

    Parameters
    ----------
    class_code : str
        The lecturer's class.
    question : dict
        ``{"id", "text", "choices"}`` (checked: a malformed one is an error in place).
    followers : int or None, optional
        How many students follow the class, when the class code counts them: "k of n answered".
    """
    problem = questions.check_question(question)
    if problem:
        show_error(problem)
        return
    try:
        questions.ask(class_code, question)
    except questions.QuestionRefused as exc:
        show_error(str(exc))
        return
    slug = f"rk-tally-{questions.slug(class_code, question['id'])}"
    with st.container(border=True, key=f"{slug}-box"):
        st.markdown(f"**Question:** {literal(question['text'])}")

        revealed = questions.is_revealed(class_code, question["id"])

        @st.fragment(run_every=None if revealed else POLL)  # a revealed tally is final: no more polling
        def live_tally() -> None:
            tally = questions.tally(class_code, question["id"])
            if tally is None:
                st.info("This question has ended.")
                return
            _tally_chart(class_code, question, tally, key=slug)
            st.markdown(_answered_line(tally, followers))
            if tally.revealed:
                st.success("Revealed: the class sees the charts and this tally.")
            _rerun_on_reveal(f"{slug}-revealed", tally.revealed)

        live_tally()
        error = st.session_state.pop("_rk_question_error", None)
        if error:
            show_error(error)
        if not revealed:
            st.button("Reveal the answers and the chart", key=f"{slug}-reveal", type="primary",
                      on_click=_reveal, args=(class_code, question["id"]))


def _rerun_on_reveal(key: str, revealed: bool) -> None:
    """A fragment saw the reveal (from another screen, or this one): the whole page reruns, its charts back."""
    seen = st.session_state.get(key, revealed)
    st.session_state[key] = revealed  # before the rerun: the next run sees the change once
    if revealed != seen:
        st.rerun(scope="app")


def _reveal(class_code: str, question_id: str) -> None:
    try:
        questions.reveal(class_code, question_id)
    except questions.QuestionRefused as exc:
        st.session_state["_rk_question_error"] = str(exc)


def _answer(class_code: str, question: dict, voter: str, key: str) -> None:
    picked = st.session_state.get(key)
    if picked is None:
        return
    try:
        questions.answer(class_code, question["id"], voter, question["choices"].index(picked))
    except questions.QuestionRefused as exc:
        st.session_state["_rk_question_error"] = str(exc)


def question_for_student(class_code: str, question: dict) -> None:
    """A student's box: the question and its choices (the student's answer selected, changeable until the
    reveal); after the reveal the choices frozen and the class's tally. Waits for the reveal by checking the
    store every second; when it comes, the page reruns and its charts appear.

    Parameters
    ----------
    class_code : str
        The class the student follows.
    question : dict
        ``{"id", "text", "choices"}`` as the lecturer published it (checked).
    """
    problem = questions.check_question(question)
    if problem:
        show_error(problem)
        return
    slug = f"rk-answer-{questions.slug(class_code, question['id'])}"
    voter = questions.voter_id(class_code, owner_id())

    @st.fragment(run_every=None if questions.is_revealed(class_code, question["id"]) else POLL)
    def box() -> None:  # polls for the lecturer's reveal; after it nothing changes
        tally = questions.tally(class_code, question["id"])
        with st.container(border=True, key=f"{slug}-box"):
            if tally is None:
                st.markdown(f"**Question:** {literal(question['text'])}")
                st.info("The question opens when the lecturer's screen shows it.")
                return
            mine = questions.my_answer(class_code, question["id"], voter)
            if tally.revealed:  # frozen as text (a disabled radio's grey fails the 4.5:1 contrast)
                st.markdown(f"**Question:** {literal(question['text'])}")
                st.markdown("Answers are closed: the lecturer revealed them. " + (
                    "You did not answer." if mine is None else f"Your answer: **{literal(question['choices'][mine])}**."))
                _tally_chart(class_code, question, tally, key=slug + "-tally")
            else:
                _choices(class_code, question, voter, slug, mine)
        _rerun_on_reveal(f"{slug}-revealed", tally.revealed)

    box()


def _choices(class_code: str, question: dict, voter: str, slug: str, mine: int | None) -> None:
    st.radio(f"**Question:** {literal(question['text'])}", question["choices"], key=slug,
             index=mine, on_change=_answer, args=(class_code, question, voter, slug))
    error = st.session_state.pop("_rk_question_error", None)
    if error:
        show_error(error)
    st.markdown("Your answer is saved; you may change it until the lecturer reveals."
                if mine is not None else "Pick an answer: nobody sees who chose what.")


def _mark_drawn() -> bool:
    """Whether this run drew the box already; marks it drawn."""
    run = current_run()
    drawn = getattr(_box, "run", None) is run
    _box.run = run
    return drawn


def draw_chart_placeholder() -> None:
    """What stands in for a chart while the session's live question is not revealed: the question box the
    first time in a run, then a sentence (rkapp.layout.chart calls it)."""
    live = questions.live_question()
    if live is None:
        st.info(WAITING)
        return
    if _mark_drawn():
        st.info({"lecturer": HIDDEN_FROM_CLASS, "hands": BY_HANDS}.get(live["role"], WAITING))
        return
    _draw(live)


def question_by_hands(question: dict) -> None:
    """A lecturer without a class asks the room by hands: the question, its numbered choices and Reveal (no
    tally: nobody answers on a device). The page's charts wait for the Reveal in this session only.

    Parameters
    ----------
    question : dict
        ``{"id", "text", "choices"}`` (checked).
    """
    problem = questions.check_question(question)
    if problem:
        show_error(problem)
        return
    slug = f"rk-hands-{questions.slug('hands', question['id'])}"
    with st.container(border=True, key=f"{slug}-box"):
        st.markdown(f"**Question:** {literal(question['text'])}")
        st.markdown("\n".join(f"{number}. {literal(choice)}" for number, choice in
                              enumerate(question["choices"], start=1)))
        if question["id"] in st.session_state.get(questions.HANDS_REVEALED_KEY, ()):
            st.success("Revealed.")
        else:
            st.markdown("Ask the room to raise hands for each answer, then reveal the chart.")
            st.button("Reveal the chart", key=f"{slug}-reveal", type="primary", on_click=_reveal_by_hands,
                      args=(question["id"],))


def _reveal_by_hands(question_id: str) -> None:
    revealed = list(st.session_state.get(questions.HANDS_REVEALED_KEY, ()))[-questions.MAX_QUESTIONS_PER_CLASS:]
    st.session_state[questions.HANDS_REVEALED_KEY] = [*revealed, question_id]


def _draw(live: dict) -> None:
    if live["role"] == "hands":
        question_by_hands(live["question"])
    elif live["role"] == "lecturer":
        question_for_lecturer(live["code"], live["question"], followers=live.get("followers"))
    else:
        question_for_student(live["code"], live["question"])


questions.set_placeholder(draw_chart_placeholder)


def show_live_question(code: str, question: dict | None, role: str, *, draw: bool = True,
                       followers: int | None = None) -> None:
    """The class code's call, on every run: record this session's live question (None: there is none now),
    so that the page's charts wait for the reveal, and draw the box for ``role`` here.

    Parameters
    ----------
    code : str or None
        The session's class (as in :data:`rkapp.class_contract.CLASS_KEY`); None for role "hands".
    question : dict or None
        The question on screen (the lecturer: :data:`~rkapp.class_contract.LESSON_QUESTION_KEY`; a student:
        the class's published question); None clears it.
    role : {"lecturer", "student", "hands"}
        The session's role in the class; "hands": a lecturer without a class asks the room by hands.
    draw : bool, default True
        Draw the box here; False: only record it (the first hidden chart draws it).
    followers : int or None, optional
        The lecturer's count of followers, if known ("k of n answered").
    """
    questions.record_live_question(code, question, role, followers=followers)
    if question is None or role not in ("lecturer", "student", "hands"):
        return
    if draw and not _mark_drawn():
        _draw({"code": code, "question": question, "role": role, "followers": followers})
