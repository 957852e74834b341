"""A lesson in a real browser (issue 39): in presenter mode a loaded lesson steps with the arrow keys, the page and
its settings change; the lesson's export holds every step's note and requests nothing from the network; axe finds
no serious or critical violation with the lesson panel showing, in both modes.

Light on purpose: Gram matrices at n = 40 and the Itemsets page, no studies. Shares the server and browser of
tests/browser/test_browser.py."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from rkcore.views.lessons import Lesson, LessonStep, Question, lesson_to_json
from tests.browser.test_accessibility import audit
from tests.browser.test_browser import (  # noqa: F401  (fixtures used by name)
    PROJECTOR, SHOTS, assert_no_exception, browser_page, server, wait_until_idle,
)

pytestmark = pytest.mark.browser

NOTES = ("Blocks at D = 64 <b>not bold</b>", "The family's itemsets, $5 & more", "Fewer features: D = 16")
LESSON = Lesson("Browser lesson", (
    LessonStep("Gram_matrices", {"n": "40", "D": "64"}, NOTES[0]),
    LessonStep("Itemsets", {"n": "40", "degree": "3"}, NOTES[1], Question("How many?", ("Few", "Many"))),
    LessonStep("Gram_matrices", {"n": "40", "D": "16"}, NOTES[2]),
))
STEP_JS = """() => [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
  .map(e => e.innerText).find(t => /Step \\d+ of \\d+/.test(t)) || null"""


def _load(page, server, presenter: bool) -> None:
    """Open Home, open the lesson's controls, load LESSON's file into the uploader."""
    page.goto(f"{server}/?presenter={'true' if presenter else 'false'}", wait_until="domcontentloaded")
    wait_until_idle(page)
    _open_panel(page, presenter)
    page.locator('input[type="file"]').first.set_input_files(
        {"name": "lesson.json", "mimeType": "application/json", "buffer": lesson_to_json(LESSON).encode()})
    page.get_by_role("button", name="Next").first.wait_for(timeout=30_000)
    wait_until_idle(page)


def _open_panel(page, presenter: bool) -> None:
    """The lesson's popover (presenter mode) or the sidebar's "Lesson" expander, opened."""
    if presenter:
        page.get_by_role("button", name="Lecture").click()
        return
    panel = page.locator('[data-testid="stSidebar"] [data-testid="stExpander"]').filter(has_text="Lesson").first
    if panel.locator('input[type="file"]').count() == 0 or panel.get_by_text("Start from the story").first.is_hidden():
        panel.locator("summary").click()


def _press(page, key: str, url_glob: str) -> None:
    page.keyboard.press("Escape")  # the popover closed, the focus on the page (no text field takes the key)
    page.locator("h1").first.click()
    page.keyboard.press(key)
    page.wait_for_url(url_glob, timeout=60_000)
    wait_until_idle(page, timeout_ms=120_000)


def test_the_arrow_keys_step_a_loaded_lesson_in_presenter_mode(server, browser_page):
    page = browser_page
    page.set_viewport_size(PROJECTOR)
    _load(page, server, presenter=True)
    _press(page, "ArrowRight", "**/Gram_matrices**")
    assert "D=64" in page.url and "n=40" in page.url, page.url
    assert page.evaluate(STEP_JS) == "Step 1 of 3"
    _press(page, "ArrowRight", "**/Itemsets**")
    assert "degree=3" in page.url and "D=64" not in page.url, page.url  # the step's settings, the rest reset
    assert page.evaluate(STEP_JS) == "Step 2 of 3"
    _press(page, "ArrowRight", "**/Gram_matrices**")
    assert "D=16" in page.url and page.evaluate(STEP_JS) == "Step 3 of 3"
    _press(page, "ArrowLeft", "**/Itemsets**")
    assert page.evaluate(STEP_JS) == "Step 2 of 3"
    page.screenshot(path=str(SHOTS / "lesson_presenter_step2.png"))
    assert_no_exception(page, "lesson in presenter mode")


def test_the_lesson_export_holds_every_note_and_requests_nothing(server, browser_page, tmp_path):
    """Steps 1 and 2 were visited by the test before (module order); the export names step 3 too."""
    page = browser_page
    page.set_viewport_size(PROJECTOR)
    if "Step" not in (page.evaluate(STEP_JS) or ""):
        test_the_arrow_keys_step_a_loaded_lesson_in_presenter_mode(server, browser_page)
    page.get_by_role("button", name="Lecture").click()
    with page.expect_download(timeout=120_000) as info:
        page.get_by_role("button", name="Export the lesson (one HTML file, works offline)").click()
    text = Path(info.value.path()).read_text(encoding="utf-8")
    page.keyboard.press("Escape")
    assert "Blocks at D = 64 &lt;b&gt;not bold&lt;/b&gt;" in text and "$5 &amp; more" in text
    assert NOTES[2] in text and "How many?" in text
    assert text.count('id="rk-chart-') >= 2 and "<script src=" not in text
    exported = tmp_path / "lesson.html"
    exported.write_text(text, encoding="utf-8")
    outside = []
    viewer = page.context.new_page()
    viewer.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("file:", "data:", "blob:",
                                                                                    "about:")) else None)
    viewer.goto(exported.as_uri(), wait_until="load")
    viewer.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
    viewer.wait_for_timeout(800)
    viewer.close()
    assert not outside, outside


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
def test_axe_finds_no_serious_violation_with_the_lesson_panel_showing(server, browser_page, presenter):
    page = browser_page
    page.set_viewport_size(PROJECTOR)
    _load(page, server, presenter)
    if presenter:
        page.keyboard.press("Escape")
    _open_panel(page, presenter)  # open (popover or expander) with the lesson's steps listed
    page.get_by_role("button", name=re.compile(r"^1\. Gram matrices")).first.wait_for(timeout=30_000)
    violations = audit(page, f"lesson panel ({'presenter' if presenter else 'normal'})")
    page.screenshot(path=str(SHOTS / f"lesson_panel_{'presenter' if presenter else 'normal'}.png"))
    assert not violations, violations
