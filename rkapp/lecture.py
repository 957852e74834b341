"""Follow the presenter (issue 39): the "Class" control of the lecturer and the students' follow box.

The lecturer (presenter mode: a "Class" popover beside "Pages"; outside it: a "Class" expander in the sidebar)
enters the lecturer key set when the server started (``RKCORE_LECTURER_KEY``, or ``RKCORE_LECTURER_KEY_FILE``
naming a file that holds it), starts a class and gets its code, large, with the join link (and a QR code when
the optional package ``segno`` is installed). From then on every run of the lecturer's session publishes its
page, its settings (:func:`rkapp.state.view_settings`) and the question on screen to the shared class store
(:mod:`rkapp.classroom`); the store bumps the class's version only when something changed.

A student joins with the code (the sidebar's "Class" box, or a link with ``?class=CODE``). A fragment polls
the class's version every POLL_SECONDS; on a new one it sets the class's settings and switches to its page.
A student who changes a setting or the page themselves is "exploring on their own" (the class's state is no
longer applied) until they press "Back to the lecture". A student holds no token: nothing they send can
publish. Wrong keys and wrong codes are counted per browser and per server (:func:`rkapp.classroom.failures`).
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

import streamlit as st

from . import classroom, questions
from .class_contract import CLASS_KEY, LESSON_QUESTION_KEY
from .guard import literal, show_error
from .identity import owner_id
from .navigation import HOME, PAGES, PAGES_DIR, running_page_file
from .state import apply_view_settings, quoted, view_settings
from .widgets import TOUCHES_KEY

LECTURER_KEY_ENV = "RKCORE_LECTURER_KEY"
LECTURER_KEY_FILE_ENV = "RKCORE_LECTURER_KEY_FILE"
#: seconds between two polls of a follower: a change reaches it within this plus one page run (p95 <= 1 s)
POLL_SECONDS = 0.3
#: wrong lecturer keys allowed per browser and per server in classroom.ATTEMPT_WINDOW_S (15 min)
KEY_TRIES_PER_OWNER, KEY_TRIES_PER_SERVER = 5, 30
#: wrong class codes allowed per browser and per server in the same window (a code cannot be enumerated)
JOIN_TRIES_PER_OWNER, JOIN_TRIES_PER_SERVER = 10, 300
#: session key: the page this session shows (its url_path; Home: ""), noted on every full run
CURRENT_PAGE_KEY = "_rk_current_page"
_TOKEN_KEY = "_rk_class_token"      # the lecturer's token: in the lecturer's session only
_FOLLOW_KEY = "_rk_class_follow"    # a student's: version, page and settings last applied; branched or not
_NOTE_KEY = "_rk_class_note"        # a message for the next run of the panel (shown once)
_URL_SEEN_KEY = "_rk_class_url_seen"
#: key of the "Class" expander (class ``st-key-rk-class``)
PANEL_KEY = "rk-class"


def lecturer_key() -> str | None:
    """The lecturer key the server was started with (environment or file), or None when none is set.

    Returns
    -------
    str or None
        The key (surrounding white space dropped), never shown nor logged.
    """
    key = os.environ.get(LECTURER_KEY_ENV, "").strip()
    if not key and os.environ.get(LECTURER_KEY_FILE_ENV):
        try:
            key = Path(os.environ[LECTURER_KEY_FILE_ENV]).read_text(encoding="utf-8")[:1024].strip()
        except (OSError, UnicodeDecodeError):
            key = ""
    return key or None


def _same_key(typed: str, key: str) -> bool:
    digest = lambda text: hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()  # noqa: E731
    return hmac.compare_digest(digest(typed), digest(key))  # equal lengths: no timing by length


def current_page() -> str:
    """The url_path of the page this session shows (Home: ""), as the last full run found it."""
    return st.session_state.get(CURRENT_PAGE_KEY, "")


def _note_current_page() -> None:
    """Note the page running now (its url_path; Home and a page outside the list: "")."""
    name = running_page_file()
    entry = next((e for e in PAGES if e.file == name), None)
    st.session_state[CURRENT_PAGE_KEY] = "" if entry is None else entry.url_path


def _page_path(url_path: str) -> str | None:
    if url_path == "":
        return str(PAGES_DIR / HOME)
    entry = next((e for e in PAGES if e.url_path == url_path), None)
    return None if entry is None else str(PAGES_DIR / entry.file)


def _question():
    question = st.session_state.get(LESSON_QUESTION_KEY)
    return question if isinstance(question, dict) else None


def join_link(code: str) -> str:
    """The app's address with ``?class=CODE`` (the page's own path dropped)."""
    url = ""
    try:
        url = st.context.url or ""
    except Exception:  # noqa: BLE001 - no browser context (AppTest): a relative link
        pass
    parts = urlsplit(url)
    path = parts.path
    page = current_page()
    if page and path.rstrip("/").endswith("/" + page):
        path = path.rstrip("/")[: -len(page)]
    base = f"{parts.scheme}://{parts.netloc}{path or '/'}" if parts.netloc else "/"
    return f"{base}?class={code}"


# ============================================================================ the lecturer
def _start(typed: str, resume: str = "") -> None:
    """Check the key (bounded tries), start a class (or take back the live class ``resume`` names: the
    lecturer's tab was reloaded), keep the token in this session only."""
    key = lecturer_key()
    owner = owner_id()
    if key is None:
        return
    if (classroom.failures("key", owner) >= KEY_TRIES_PER_OWNER
            or classroom.failures("key", "*") >= KEY_TRIES_PER_SERVER):
        st.session_state[_NOTE_KEY] = ("error", "Too many wrong lecturer keys: starting a class is locked for "
                                       f"{classroom.ATTEMPT_WINDOW_S // 60} minutes.")
        return
    if not _same_key(typed or "", key):
        classroom.note_failure("key", owner)
        classroom.note_failure("key", "*")
        st.session_state[_NOTE_KEY] = ("error", "That is not the lecturer key this server was started with.")
        return
    token = secrets.token_urlsafe(32)
    try:
        if (resume or "").strip():
            code = classroom.normal_code(resume)
            if not classroom.take_over_class(code, token):
                st.session_state[_NOTE_KEY] = ("error", f"No class {quoted(resume)} is running: leave the code "
                                               "empty to start a new class.")
                return
        else:
            code = classroom.start_class(token, page=current_page(), settings=view_settings(),
                                         question=_question())
    except classroom.ClassError as error:
        st.session_state[_NOTE_KEY] = ("error", str(error))
        return
    st.session_state[_TOKEN_KEY] = token
    st.session_state[CLASS_KEY] = {"code": code, "role": "lecturer"}


def _end() -> None:
    joined = st.session_state.get(CLASS_KEY) or {}
    if classroom.end_class(joined.get("code", ""), st.session_state.pop(_TOKEN_KEY, "")):
        questions.forget_class(joined.get("code", ""))  # answers live only as long as their class
    st.session_state.pop(CLASS_KEY, None)


def publish_now() -> None:
    """The lecturer's session: publish this run's page, settings and question (the store keeps a version
    only for a change). Nothing for a student or a session outside a class."""
    joined = st.session_state.get(CLASS_KEY)
    token = st.session_state.get(_TOKEN_KEY)
    if not joined or joined.get("role") != "lecturer" or not token:
        return
    try:
        version = classroom.publish(joined["code"], token, current_page(), view_settings(), _question())
    except classroom.ClassError as error:
        show_error(str(error))
        return
    if version is None:  # ended elsewhere or expired
        st.session_state.pop(CLASS_KEY, None)
        st.session_state.pop(_TOKEN_KEY, None)
        st.session_state[_NOTE_KEY] = ("info", "Your class has ended (it was idle too long).")


def _lecturer_running(code: str) -> None:
    link = join_link(code)
    st.markdown(f'<p class="rk-class-code" style="font-size:3rem;font-weight:700;letter-spacing:0.3rem;'
                f'margin:0">{code}</p>', unsafe_allow_html=True)
    st.markdown(f"Join at **{literal(link)}**, or type the code in the sidebar's *Class* box.")
    try:
        import segno  # optional: not a requirement of the app
    except ImportError:
        segno = None
    if segno is not None:
        st.html(segno.make(link, error="m").svg_inline(scale=6, dark="#000", light="#fff",
                                                        title=f"QR code of the join link, class {code}"))
    st.button("End the class", key="rk_class_end", on_click=_end, icon=":material/stop_circle:")


def _lecturer_form() -> None:
    if lecturer_key() is None:
        st.caption(f"To run a class, start the server with a lecturer key: set the environment variable "
                   f"{LECTURER_KEY_ENV} (or {LECTURER_KEY_FILE_ENV}, a file holding the key).")
        return
    with st.form("rk_class_start", border=False):
        typed = st.text_input("Lecturer key", type="password", key="rk_class_key")
        resume = st.text_input("Class code to take back (optional)", max_chars=12, key="rk_class_resume",
                               help="Your class goes on after a reload of this tab: type its code to drive it "
                                    "again. Empty: a new class.")
        if st.form_submit_button("Start a class", icon=":material/cast_for_education:"):
            _start(typed, resume)
            st.session_state.pop("rk_class_key", None)  # the key is not kept in the session
            st.rerun()


# ============================================================================ the students
def _join(code_text: str) -> None:
    owner = owner_id()
    code = classroom.normal_code(code_text)
    if (classroom.failures("join", owner) >= JOIN_TRIES_PER_OWNER
            or classroom.failures("join", "*") >= JOIN_TRIES_PER_SERVER):
        st.session_state[_NOTE_KEY] = ("error", "Too many wrong class codes: joining is locked for "
                                       f"{classroom.ATTEMPT_WINDOW_S // 60} minutes. Ask for the link instead.")
        return
    if classroom.state(code) is None:
        classroom.note_failure("join", owner)
        classroom.note_failure("join", "*")
        st.session_state[_NOTE_KEY] = ("error", f"No class {quoted(str(code_text)[:40])} is running: check the "
                                       "code on the projector.")
        return
    st.session_state[CLASS_KEY] = {"code": code, "role": "student"}
    st.session_state[_FOLLOW_KEY] = {"version": None, "page": None, "touches": None, "branched": False}


def _leave() -> None:
    st.session_state.pop(CLASS_KEY, None)
    st.session_state.pop(_FOLLOW_KEY, None)


def _student_form() -> None:
    with st.form("rk_class_join", border=False):
        typed = st.text_input("Class code", max_chars=12, key="rk_class_code",
                              help="The six characters on the projector.")
        if st.form_submit_button("Join the class", icon=":material/group:"):
            _join(typed)
            st.rerun()


def _join_from_link() -> None:
    if st.session_state.get(_URL_SEEN_KEY) or st.session_state.get(CLASS_KEY):
        return
    st.session_state[_URL_SEEN_KEY] = True
    code = st.query_params.get("class")
    if code:
        _join(code)


def _apply(class_state: dict, follow: dict) -> None:
    """Set the class's settings and question, remember them as applied, and go to its page."""
    for message in apply_view_settings(class_state["settings"]):
        st.session_state[_NOTE_KEY] = ("warning", message)
    if class_state.get("question") is None:
        st.session_state.pop(LESSON_QUESTION_KEY, None)
    else:
        st.session_state[LESSON_QUESTION_KEY] = class_state["question"]
    target = _page_path(class_state["page"])
    landing = class_state["page"] if target is not None else current_page()
    follow.update(version=class_state["version"], page=landing, touches=st.session_state.get(TOUCHES_KEY, 0),
                  branched=False)
    if landing != current_page():
        st.switch_page(target)
    st.rerun(scope="app")


def _branched_now(follow: dict) -> bool:
    """A full run: did the student change a setting (a widget's change, rkapp.widgets) or the page since the
    class's state was applied? (A page's own adjustment of a value it does not offer is no touch.)"""
    if follow.get("branched") or follow.get("version") is None:
        return bool(follow.get("branched"))
    return current_page() != follow["page"] or st.session_state.get(TOUCHES_KEY, 0) != follow["touches"]


@st.fragment(run_every=POLL_SECONDS)
def _follow_box() -> None:
    joined = st.session_state.get(CLASS_KEY)
    follow = st.session_state.get(_FOLLOW_KEY)
    if not joined or joined.get("role") != "student" or follow is None:
        return
    code = joined["code"]
    version = classroom.version(code)
    if version is None:
        _leave()
        st.info(f"The class {code} has ended: your page stays as it is.", icon=":material/info:")
        return
    if follow.get("branched"):
        _question_news(code, version, follow)
        st.warning("You are exploring on your own.", icon=":material/explore:")
        if st.button("Back to the lecture", key="rk_class_back", icon=":material/undo:", type="primary"):
            class_state = classroom.state(code)
            if class_state is not None:
                _apply(class_state, follow)
        return
    st.success(f"Following the lecture · class {code}", icon=":material/cast_for_education:")
    if version != follow.get("version"):
        class_state = classroom.state(code)
        if class_state is not None:
            _apply(class_state, follow)


def _question_news(code: str, version: int, follow: dict) -> None:
    """A student exploring on their own still answers the class's questions: a new version whose question
    differs from the one on their screen brings that question (and its reveal), not the settings."""
    if version == follow.get("seen_version"):
        return
    follow["seen_version"] = version
    class_state = classroom.state(code)
    question = class_state.get("question") if class_state else None
    if question != st.session_state.get(LESSON_QUESTION_KEY):
        if question is None:
            st.session_state.pop(LESSON_QUESTION_KEY, None)
        else:
            st.session_state[LESSON_QUESTION_KEY] = question
        st.rerun(scope="app")


def live_question() -> None:
    """The question on this session's screen (issue 39, predict then reveal), recorded for the page's charts
    (they wait for the reveal; the first of them draws the box): the lecturer's lesson step's question, asked
    in the class; a student's, from the class; a lecturer with no class asks the room by hands."""
    joined = st.session_state.get(CLASS_KEY)
    question = st.session_state.get(LESSON_QUESTION_KEY)
    if not joined:
        questions.record_live_question(None, question, "hands")
        return
    if joined.get("role") == "lecturer" and question is not None:
        try:  # asked before any student can answer it (asking again changes nothing)
            questions.ask(joined["code"], question)
        except questions.QuestionRefused as error:
            show_error(str(error))
            question = None
    questions.record_live_question(joined["code"], question, joined.get("role", ""))


# ============================================================================ the panel
def _note() -> None:
    note = st.session_state.pop(_NOTE_KEY, None)
    if note:
        kind, message = note
        {"error": st.error, "warning": st.warning}.get(kind, st.info)(literal(message))


def _panel_body() -> None:
    _note()
    joined = st.session_state.get(CLASS_KEY)
    if joined and joined.get("role") == "lecturer":
        _lecturer_running(joined["code"])
    elif joined and joined.get("role") == "student":
        st.caption(f"You follow class {joined['code']}.")
        st.button("Leave the class", key="rk_class_leave", on_click=_leave)
    else:
        _student_form()
        st.divider()
        _lecturer_form()


def class_panel(*, in_sidebar: bool) -> None:
    """The live lecture's part of a page (rkapp.layout.page calls it once per run): join from a link,
    publish the lecturer's view, the follow box of a student, and the "Class" control (a sidebar expander,
    or in presenter mode a popover where it is called, beside "Pages"). In the sidebar the control itself is
    :func:`class_expander`, drawn under the page's settings.

    Parameters
    ----------
    in_sidebar : bool
        False in presenter mode (the control is drawn in place, in the header).
    """
    _note_current_page()
    _join_from_link()
    joined = st.session_state.get(CLASS_KEY)
    follow = st.session_state.get(_FOLLOW_KEY)
    if joined and joined.get("role") == "student" and follow is not None and _branched_now(follow):
        follow["branched"] = True
    publish_now()
    live_question()
    joined = st.session_state.get(CLASS_KEY)
    if in_sidebar:
        if joined and joined.get("role") == "student":
            with st.sidebar:
                _follow_box()
        return
    if joined and joined.get("role") == "student":
        _follow_box()
    if joined and joined.get("role") == "lecturer":
        st.markdown(f"**Class {joined['code']}**")


def class_controls() -> None:
    """The class's controls (join, start with the key, the code and link, end), where they are called:
    presenter mode's "Lecture" popover."""
    _panel_body()


def class_expander() -> None:
    """The "Class" control in the sidebar (normal mode), drawn under the page's settings
    (:func:`rkapp.run_context.draw_sidebar_tools`): D and the seed stay in the first screen."""
    joined = st.session_state.get(CLASS_KEY)
    with st.sidebar, st.expander("Class", icon=":material/cast_for_education:", key=PANEL_KEY,
                                 expanded=bool(joined) or _NOTE_KEY in st.session_state):
        _panel_body()
