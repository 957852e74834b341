"""Predict, then reveal in a real browser (issue 39): one server (``streamlit run`` on the test page
tests/questions/reveal_page.py, which sets the class up through rkapp.question_box.show_live_question as the
class code does), three browser contexts: the lecturer's projector and two students. The students answer by
clicking; the projector's live tally follows without a reload; the page's chart stays hidden on every screen
until the lecturer clicks Reveal, and then appears on the students' screens without a reload. axe-core finds
no serious or critical violation in either box, before or after the reveal."""
from __future__ import annotations

import tempfile

import pytest

from tests.browser.test_accessibility import audit
from tests.browser.test_browser import CHROMIUM, CHROMIUM_ARGS, PROJECTOR, sync_playwright, wait_until_idle

pytestmark = pytest.mark.browser

PAGE_SCRIPT = "tests/questions/reveal_page.py"
#: the live tally polls every second; a loaded machine (2 cores, the suite beside) gets this long to show it
FOLLOW_MS = 15_000


@pytest.fixture(scope="module")
def server():
    if not CHROMIUM.exists():
        pytest.skip("browser test needs Debian's Chromium at /usr/bin/chromium (not downloaded on purpose)")
    if sync_playwright is None:
        pytest.skip("browser test needs the playwright Python package")
    from benchmarks.app.streamlit_server import StreamlitServer

    with tempfile.TemporaryDirectory(prefix="rkcore-reveal-") as store:
        try:
            running = StreamlitServer(PAGE_SCRIPT, health_timeout=60, env={
                "RKCORE_STORE_DIR": store, "RKCORE_COOKIE_SECRET": "00112233445566778899aabbccddeeff"})
        except RuntimeError as exc:
            pytest.fail(str(exc))
        with running:
            yield running.url


def open_screen(browser, url: str):
    context = browser.new_context(viewport=PROJECTOR, device_scale_factor=1)
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded")
    wait_until_idle(page, timeout_ms=120_000)
    return page


def main_charts(page) -> int:
    """The page's own charts on the screen (found by their title; the tally is not one of them)."""
    return page.locator(".js-plotly-plot").filter(has_text="Error against D").count()


def test_three_screens_answer_follow_and_reveal(server):
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        try:
            lecturer = open_screen(browser, f"{server}/?role=lecturer&code=ROOM7")
            lecturer.get_by_text("0 answered so far").wait_for(timeout=FOLLOW_MS)
            students = [open_screen(browser, f"{server}/?role=student&code=ROOM7") for _ in range(2)]
            violations = audit(lecturer, "lecturer, live") + audit(students[0], "student, before answering")
            for screen in (lecturer, *students):
                assert main_charts(screen) == 0  # hidden until the reveal
            for student in students:
                student.get_by_text("The chart appears when the lecturer reveals it.").first.wait_for()

            students[0].get_by_text("Gaussian", exact=True).click()
            lecturer.get_by_text("1 answered so far").wait_for(timeout=FOLLOW_MS)  # no reload: the live tally
            students[1].get_by_text("About the same", exact=True).click()
            students[0].get_by_text("About the same", exact=True).click()  # a change, not a second answer
            lecturer.get_by_text("2 answered so far").wait_for(timeout=FOLLOW_MS)
            lecturer.get_by_text("About the same: 2").wait_for(timeout=FOLLOW_MS)
            violations += audit(students[0], "student, answered")

            lecturer.get_by_role("button", name="Reveal the answers and the chart").click()
            lecturer.get_by_text("Revealed").first.wait_for(timeout=FOLLOW_MS)
            for student in students:  # the students' screens follow the reveal without a reload
                student.locator(".js-plotly-plot").filter(has_text="Error against D").first.wait_for(
                    timeout=FOLLOW_MS)
                student.get_by_text("Answers are closed").wait_for(timeout=FOLLOW_MS)
                assert student.get_by_role("radio").count() == 0  # frozen: the answer as text
            assert main_charts(lecturer) >= 1
            violations += audit(lecturer, "lecturer, revealed") + audit(students[1], "student, revealed")
            assert violations == [], "\n".join(map(str, violations))
        finally:
            browser.close()
