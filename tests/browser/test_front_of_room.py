"""In front of the room (issue 38), in a real browser: a preset clicked at the bottom of Home opens its page at the
top, and the note's lead sits in the first screen beside the chart, at both screen sizes and in both modes.

Fast on purpose: two pages, no studies run. Shares the server and browser of tests/browser/test_browser.py."""
from __future__ import annotations

import pytest

from tests.browser.test_browser import (  # noqa: F401  (fixtures used by name)
    LAPTOP, PROJECTOR, SHOTS, DRAWN_JS, assert_no_exception, browser_page, check_layout, server, settle,
    wait_until_idle,
)

pytestmark = pytest.mark.browser

SCROLL_TOP_JS = "() => document.querySelector('[data-testid=\"stMain\"]').scrollTop"
NOTE_BOX_JS = """
() => {
  const box = [...document.querySelectorAll('[data-testid="stAlert"]')]
    .find(e => e.innerText.includes('What to notice'));
  if (!box) return null;
  const r = box.getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, text: box.innerText};
}
"""


@pytest.mark.parametrize("size", [PROJECTOR, LAPTOP], ids=["1280x720", "1440x900"])
@pytest.mark.parametrize("mode", ["normal", "presenter"])
def test_preset_clicked_at_the_bottom_of_home_opens_the_page_at_its_top(server, browser_page, size, mode):
    """Seen: 6 of 12 preset clicks (the custom-itemset preset 3 of 3) showed the bottom of the target page."""
    page = browser_page
    page.set_viewport_size(size)
    page.goto(f"{server}/?presenter={'true' if mode == 'presenter' else 'false'}", wait_until="domcontentloaded")
    wait_until_idle(page)
    page.mouse.move(640, 400)
    page.mouse.wheel(0, 5000)  # the reader scrolls down to the presets (a wheel: the page's own scroll-up stops)
    page.wait_for_timeout(500)
    assert page.evaluate(SCROLL_TOP_JS) > 200  # the reader scrolled down to the presets
    page.get_by_role("button", name="A custom itemset family").click()
    page.wait_for_url("**/Itemsets**", timeout=30_000)
    wait_until_idle(page)
    page.wait_for_timeout(1800)  # past the page's own settling, as a reader would look
    assert page.evaluate(SCROLL_TOP_JS) < 5
    title = page.locator("h1").first.bounding_box()
    assert title is not None and 0 <= title["y"] < size["height"] / 3, title
    page.screenshot(path=str(SHOTS / f"front_preset_itemsets_{mode}_{size['width']}x{size['height']}.png"))
    assert_no_exception(page, "custom itemset preset")


@pytest.mark.parametrize("size", [PROJECTOR, LAPTOP], ids=["1280x720", "1440x900"])
@pytest.mark.parametrize("mode", ["normal", "presenter"])
def test_gram_note_lead_is_one_breath_in_the_first_screen(server, browser_page, size, mode):
    """Seen: notes of 410-800 characters, below the fold at 1280x720 on 9 of 11 study pages."""
    page = browser_page
    page.set_viewport_size(size)
    page.goto(f"{server}/Gram_matrices?presenter={'true' if mode == 'presenter' else 'false'}",
              wait_until="domcontentloaded")
    wait_until_idle(page, timeout_ms=120_000)
    page.wait_for_function(DRAWN_JS, timeout=120_000)
    page.wait_for_timeout(600)
    box = page.evaluate(NOTE_BOX_JS)
    assert box is not None
    lead = box["text"].split("What to notice.", 1)[1].strip()
    assert len(lead) <= 160, lead
    assert box["bottom"] <= size["height"], (mode, size, box)
    page.screenshot(path=str(SHOTS / f"front_gram_{mode}_{size['width']}x{size['height']}.png"))
    assert_no_exception(page, f"Gram {mode}")


def test_a_page_requests_nothing_beyond_the_server(server, browser_page):
    """Seen: the tab icon (a material icon) was fetched from a font server, which fails offline."""
    page = browser_page
    page.set_viewport_size(PROJECTOR)
    outside = []

    def record(request):
        if not request.url.startswith((server, "data:", "blob:", "about:")):
            outside.append(request.url)

    page.on("request", record)
    try:
        page.goto(f"{server}/Itemsets", wait_until="domcontentloaded")
        wait_until_idle(page)
        page.wait_for_timeout(1500)
    finally:
        page.remove_listener("request", record)
    assert not outside, outside


def test_export_holds_the_view_on_screen(server, browser_page):
    """Seen: exported while "Difference" showed, the file had the side-by-side pair (the view was a fragment,
    whose reruns never reached the page's export)."""
    from tests.browser.test_browser import _downloaded_html

    page = browser_page
    page.set_viewport_size(LAPTOP)
    page.goto(f"{server}/Gram_matrices?D=64&n=40", wait_until="domcontentloaded")
    wait_until_idle(page, timeout_ms=120_000)
    page.get_by_text("Difference K̂ − K", exact=True).click()
    wait_until_idle(page, timeout_ms=120_000)
    page.wait_for_function(DRAWN_JS, timeout=120_000)
    text = _downloaded_html(page, "Export this view (one HTML file, works offline)")
    assert text.count('id="rk-chart-') == 1
    # the difference chart's title, not the pair's ("Gram matrices, n = 40 ...")
    assert "Difference K" in text and "Gram matrices, n =" not in text, "the export is not the view on screen"


def test_timing_results_fit_the_projector_in_presenter_mode(server, browser_page):
    """Seen after Run on Timing in presenter mode: the y-axis title over the plot title, legends under the fold.
    Every result chart at both sizes: nothing overlapping (titles, axis titles, tick labels, legends), each
    legend inside its chart, each chart no taller than the screen."""
    page = browser_page
    page.set_viewport_size(PROJECTOR)
    page.goto(f"{server}/Timing?presenter=true", wait_until="domcontentloaded")
    wait_until_idle(page)
    page.get_by_role("button", name="Run the timings").click()
    page.get_by_text("Growth exponent").first.wait_for(timeout=120_000)
    wait_until_idle(page, timeout_ms=120_000)
    page.wait_for_function(DRAWN_JS, timeout=60_000)
    try:
        for size in (PROJECTOR, LAPTOP):
            page.set_viewport_size(size)
            page.wait_for_timeout(700)
            settle(page)
            check_layout(page, f"Timing after the run, presenter mode, {size['width']}x{size['height']}")
            heights = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot:not(.st-key-chart-preload *)"
                                    " .main-svg')].map(s => s.getBoundingClientRect().height)")
            assert heights and max(heights) <= size["height"], heights
            page.screenshot(path=str(SHOTS / f"front_timing_after_run_presenter_{size['width']}x{size['height']}.png"))
    finally:
        page.set_viewport_size(PROJECTOR)
    assert_no_exception(page, "Timing after the run, presenter mode")
