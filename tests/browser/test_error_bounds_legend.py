"""Error bounds in front of the room (issue 38), in a real browser: at 1280x720 and 1440x900, in both modes, the
main chart's legend and the note's lead are inside the first screen, the legend beside or inside the plot (not
below it), over no data and into no title or axis text.

Seen before: the legend sat under the x axis of a 640 px chart, below the fold in all four size/mode pairs.
Shares the server and browser of tests/browser/test_browser.py."""
from __future__ import annotations

import pytest

from tests.browser.test_browser import (  # noqa: F401  (fixtures used by name)
    DRAWN_JS, LAPTOP, OVERFLOWS_JS, PROJECTOR, SHOTS, assert_no_exception, browser_page, server, wait_until_idle,
)
from tests.browser.test_front_of_room import NOTE_BOX_JS

pytestmark = pytest.mark.browser

#: The first (main) chart of the page: its whole box, its plot area and its legend, in viewport pixels.
MAIN_CHART_JS = """
() => {
  const plot = [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')]
    .find(p => !p.closest('.st-key-chart-preload') && p.querySelector('.main-svg'));
  if (!plot) return null;
  const box = e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top,
                                                                   bottom: r.bottom}; };
  const legend = plot.querySelector('.legend');
  return {chart: box(plot.querySelector('.main-svg')), area: box(plot.querySelector('.nsewdrag')),
          legend: legend ? box(legend.querySelector('.bg') || legend) : null,
          entries: plot.querySelectorAll('.legend .traces').length};
}
"""


@pytest.mark.parametrize("size", [PROJECTOR, LAPTOP], ids=["1280x720", "1440x900"])
@pytest.mark.parametrize("mode", ["normal", "presenter"])
def test_error_bounds_legend_and_note_lead_are_in_the_first_screen(server, browser_page, size, mode):
    page = browser_page
    page.set_viewport_size(size)
    page.goto(f"{server}/Error_bounds?presenter={'true' if mode == 'presenter' else 'false'}",
              wait_until="domcontentloaded")
    wait_until_idle(page, timeout_ms=180_000)
    page.wait_for_function(DRAWN_JS, timeout=120_000)
    page.wait_for_timeout(800)
    page.screenshot(path=str(SHOTS / f"front_error_bounds_{mode}_{size['width']}x{size['height']}.png"))
    assert_no_exception(page, f"Error bounds {mode}")

    note = page.evaluate(NOTE_BOX_JS)
    assert note is not None, "no note"
    lead = note["text"].split("What to notice.", 1)[1].strip()
    assert len(lead) <= 160, lead
    assert note["bottom"] <= size["height"], ("the note's lead is below the fold", mode, size, note)

    shown = page.evaluate(MAIN_CHART_JS)
    assert shown is not None and shown["legend"] is not None, shown
    legend, area, chart = shown["legend"], shown["area"], shown["chart"]
    assert shown["entries"] >= 4, shown  # the lemmas' bounds and the measured curves are all named
    assert legend["bottom"] <= size["height"], ("the legend is below the fold", mode, size, shown)
    assert legend["top"] < area["bottom"] - 2, ("the legend is below the plot, not beside or inside it", shown)
    assert chart["left"] - 2 <= legend["left"] and legend["right"] <= chart["right"] + 2, shown
    problems = [p for p in page.evaluate(OVERFLOWS_JS) if p.startswith("plot")]
    assert not problems, problems
