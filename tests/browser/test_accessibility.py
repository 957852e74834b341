"""Every page for every student (issue 39): an axe-core audit of every page and every story step in both
modes finds no serious or critical violation; the controls are reachable with the keyboard, with a visible
focus; every chart has its text alternative in the page.

axe-core comes from the npm registry (``npm install axe-core@4``): AXE_CORE_JS names its axe.min.js, else
the test installs it once under ~/.cache/rkcore/axe (npm must be on the PATH; .ci/run has it).
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.browser.test_browser import (  # noqa: F401  (fixtures used by name)
    PROJECTOR, SHOTS, assert_no_exception, browser_page, server, url_path, wait_until_idle,
)
from tests.conftest import page_files

pytestmark = pytest.mark.browser

AXE_VERSION = "4.10"  # a 4.x release; impacts and rule ids are stable within the major version
AXE_CACHE = Path.home() / ".cache" / "rkcore" / "axe"
STORY_STEPS = 5


def axe_source() -> str:
    """axe.min.js: AXE_CORE_JS, or the cached npm install (made once)."""
    named = os.environ.get("AXE_CORE_JS")
    path = Path(named) if named else AXE_CACHE / "node_modules" / "axe-core" / "axe.min.js"
    if not path.exists() and not named:
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail("the accessibility audit needs axe-core: install npm (Debian's package) or set AXE_CORE_JS")
        AXE_CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(AXE_CACHE),
                        f"axe-core@{AXE_VERSION}"], check=True, capture_output=True, timeout=300)
    return path.read_text()


AUDIT_JS = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical').map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 3).map(n => n.target.join(' ') + ' :: ' + (n.failureSummary || '').slice(0, 240))}));
}"""


def audit(page, name: str) -> list:
    page.add_script_tag(content=axe_source())
    found = page.evaluate(AUDIT_JS)
    return [{"where": name, **v} for v in found]


def _open(page, server, path: str, presenter: bool) -> None:
    page.goto(f"{server}/{path}{'&' if '?' in path else '?'}presenter={'true' if presenter else 'false'}",
              wait_until="domcontentloaded")
    wait_until_idle(page, timeout_ms=180_000)
    page.wait_for_timeout(1200)


@pytest.mark.parametrize("presenter", [False, True], ids=["normal", "presenter"])
def test_axe_finds_no_serious_violation_on_any_page_or_story_step(server, browser_page, presenter):
    """Seen before the fix: captions in Streamlit's grey (3.8:1 against 4.5:1) on 10 of 12 pages."""
    page = browser_page
    page.set_viewport_size(PROJECTOR)
    violations = []
    for path in page_files():
        _open(page, server, url_path(path), presenter)
        assert_no_exception(page, path.name)
        violations += audit(page, path.name)
    for step in range(2, STORY_STEPS + 1):  # step 1 is the Story page itself
        _open(page, server, f"Story?story_step={step}", presenter)
        violations += audit(page, f"story step {step}")
    assert not violations, violations


FOCUS_JS = """() => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const s = getComputedStyle(e);
  const shadow = s.boxShadow && s.boxShadow !== 'none';
  const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0;
  return {tag: e.tagName, label: (e.getAttribute('aria-label') || e.innerText || '').slice(0, 60),
          visible: outline || shadow};
}"""


def test_the_story_and_the_controls_work_from_the_keyboard(server, browser_page):
    """Tab reaches the story's Next button with a visible focus, Enter steps the story; on a study page Tab
    reaches the sidebar's settings, each with a visible focus."""
    page = browser_page
    page.set_viewport_size(PROJECTOR)
    _open(page, server, "Story", False)
    reached = []
    for _ in range(60):
        page.keyboard.press("Tab")
        focus = page.evaluate(FOCUS_JS)
        if focus:
            reached.append(focus)
            if focus["label"].strip().startswith("Next"):
                break
    assert reached and reached[-1]["label"].strip().startswith("Next"), reached
    assert all(f["visible"] for f in reached), [f for f in reached if not f["visible"]]
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.location.search.includes('story_step=2')", timeout=30_000)
    page.screenshot(path=str(SHOTS / "keyboard_story_step2_1280x720.png"))
    _open(page, server, "Gram_matrices", False)
    labels = []
    for _ in range(40):
        page.keyboard.press("Tab")
        focus = page.evaluate(FOCUS_JS)
        if focus:
            assert focus["visible"], focus
            labels.append(focus["label"])
    assert any("D (random features)" in label or "Seed" in label for label in labels) or len(labels) >= 10, labels


def test_every_chart_has_a_text_alternative_in_the_page(server, browser_page):
    page = browser_page
    page.set_viewport_size(PROJECTOR)
    _open(page, server, "Gram_matrices", False)
    page.wait_for_selector(".js-plotly-plot:not(.st-key-chart-preload *) .main-svg", timeout=120_000)
    charts = page.locator(".js-plotly-plot:not(.st-key-chart-preload *)").count()
    alts = page.locator(".rk-alt-text").all_inner_texts()
    assert charts >= 1 and len(alts) == charts, (charts, alts)
    assert alts[0].startswith("Chart: Gram matrices")
