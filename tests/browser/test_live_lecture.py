"""The live lecture end to end (issue 39) in real browsers: a lecturer holds the built-in story as a lesson,
starts a class and steps to the lesson's question; two students join with the class's link, follow, and
answer on their own screens while every chart waits; the lecturer's tally counts each student once (a changed
answer replaces the first); Reveal brings the charts back on the students' screens. Three browser contexts
(their own cookies), one app server."""
from __future__ import annotations

import secrets

import pytest

from tests.browser.test_accessibility import audit
from tests.browser.test_browser import CHROMIUM, assert_no_exception, wait_until_idle
from tests.browser.test_lecture_browser import _class_box

pytestmark = pytest.mark.browser
KEY = secrets.token_urlsafe(16)
CHOICES = ("Rademacher", "Gaussian")


@pytest.fixture(scope="module")
def lecture_server(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip("browser test needs Debian's Chromium at /usr/bin/chromium and playwright")
    from benchmarks.app.streamlit_server import StreamlitServer

    store = tmp_path_factory.mktemp("lecture-store")
    with StreamlitServer(env={"RKCORE_STORE_DIR": str(store), "RKCORE_LECTURER_KEY": KEY},
                         health_timeout=180) as running:
        yield running.url, store


def _sidebar_button(page, key: str):
    return page.locator(f'[data-testid="stSidebar"] .st-key-{key} button').first


def _answer(page, choice: str) -> None:
    page.locator('[data-testid="stRadio"]').filter(has_text="Which weights").get_by_text(choice, exact=True).click()
    page.get_by_text("Your answer is saved").first.wait_for(timeout=30_000)
    wait_until_idle(page)


def test_a_class_answers_the_lessons_question_before_the_reveal(lecture_server, monkeypatch):
    from playwright.sync_api import sync_playwright

    from rkapp import questions
    from rkapp.lessons import question_id
    from rkcore.views.lessons import story_lesson

    url, store = lecture_server
    monkeypatch.setenv("RKCORE_STORE_DIR", str(store))  # this process reads the answers the server writes
    with sync_playwright() as p:
        from tests.browser.test_browser import CHROMIUM_ARGS

        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        lecturer, alice, bob = (browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
                                for _ in range(3))
        lecturer.goto(url, wait_until="domcontentloaded")
        wait_until_idle(lecturer)
        lesson = lecturer.locator('[data-testid="stSidebar"] [data-testid="stExpander"]').filter(has_text="Lesson")
        lesson.locator("summary").first.click()
        lecturer.get_by_role("button", name="Start from the story").click()
        lecturer.locator("h1").filter(has_text="The story").wait_for(timeout=90_000)
        wait_until_idle(lecturer)
        box = _class_box(lecturer)
        box.locator('input[type="password"]').fill(KEY)
        box.get_by_role("button", name="Start a class").click()
        lecturer.locator(".rk-class-code").wait_for(timeout=30_000)
        code = lecturer.locator(".rk-class-code").inner_text().strip()

        for student in (alice, bob):
            student.goto(f"{url}/?class={code}", wait_until="domcontentloaded")
            student.get_by_text("Following the lecture").first.wait_for(timeout=90_000)
            student.locator("h1").filter(has_text="The story").wait_for(timeout=90_000)
            wait_until_idle(student)

        for _ in range(3):  # the lesson's step 4 carries the question
            wait_until_idle(lecturer)
            _sidebar_button(lecturer, "lesson_next").click()
        lecturer.get_by_text("answered so far").first.wait_for(timeout=120_000)
        wait_until_idle(lecturer)
        assert lecturer.locator('[data-testid="stPlotlyChart"]').count() == 1  # the tally alone: the step's chart waits

        for student in (alice, bob):
            student.locator('[data-testid="stRadio"]').filter(has_text="Which weights").wait_for(timeout=60_000)
            wait_until_idle(student)
            assert student.locator('[data-testid="stPlotlyChart"]').count() == 0  # no chart before the reveal
        assert not (violations := audit(alice, "student answering")), violations
        _answer(alice, CHOICES[0])
        _answer(bob, CHOICES[1])
        _answer(bob, CHOICES[0])  # changed: replaces, never adds

        lecturer.get_by_text("2 answered so far").first.wait_for(timeout=30_000)  # the live tally, every second
        story = story_lesson()
        step = next(k for k, s in enumerate(story.steps) if s.question is not None)
        qid = question_id(story.title, step, story.steps[step].question.text, story.steps[step].question.choices)
        assert list(questions.tally(code, qid).counts) == [2, 0, 0]  # each student once, Bob's last answer

        lecturer.get_by_role("button", name="Reveal the answers and the chart").click()
        for student in (alice, bob):
            student.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=120_000)
            assert_no_exception(student, "a student after the reveal")
        assert_no_exception(lecturer, "the lecturer after the reveal")
        browser.close()
