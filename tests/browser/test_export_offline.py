"""The offline lesson: the story exported as one HTML file opens in Chromium with the network blocked and
shows all five story charts, interactive (plotly.js from inside the file), with their sentences.

Marked ``browser`` (Debian's Chromium, never downloaded). The file is written by the command line
(``rkcore export-story``, the same code as the dashboard's button) with a small classifier duel.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser.test_browser import CHROMIUM, CHROMIUM_ARGS, browser_page, server, sync_playwright  # noqa: F401 (fixtures)
from tests.conftest import REPO

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def story_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "story.html"
    done = subprocess.run([sys.executable, "-m", "rkcore", "export-story", "--out", str(out), "--duel-n", "400",
                           "--quiet"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return out


def test_exported_story_opens_offline_with_all_five_charts(story_file):
    if not CHROMIUM.exists() or sync_playwright is None:
        pytest.skip("needs Debian's Chromium and the playwright package")
    text = story_file.read_text(encoding="utf-8")
    assert "<script src=" not in text and "cdn.plot.ly" not in text.split("</script>", 1)[1]
    blocked = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        context = browser.new_context(viewport={"width": 1280, "height": 720})

        def refuse(route):  # the lecture hall without network: anything but the file itself fails
            blocked.append(route.request.url)
            route.abort()

        context.route(lambda url: not url.startswith("file:"), refuse)
        page = context.new_page()
        page.goto(story_file.as_uri())
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 5",
                               timeout=60_000)
        charts = page.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')].map(p => "
                               "[p.id, p.querySelector('.gtitle')?.textContent || '', "
                               "p.querySelectorAll('.heatmaplayer image, .scatterlayer .trace, .barlayer .trace')"
                               ".length])")
        notes = page.locator(".note").all_inner_texts()
        footer = page.locator("footer").inner_text()
        context.close()
        browser.close()
    assert len(charts) == 5, charts
    assert all(drawn > 0 for _, _, drawn in charts), charts  # each chart drew its data, not an empty frame
    assert [c[0] for c in charts] == [f"rk-chart-{i}" for i in range(5)]
    assert len(notes) == 5 and all(n.startswith("What to notice.") for n in notes)
    assert "rkcore " in footer and blocked == [], blocked


def _downloaded_html(page, label: str, timeout_ms: int = 300_000) -> str:
    with page.expect_download(timeout=timeout_ms) as info:
        page.get_by_role("button", name=label).click()
    return Path(info.value.path()).read_text(encoding="utf-8")


def test_story_and_page_export_buttons_write_offline_files(server, browser_page):
    """The dashboard's buttons: the story's writes all five steps, a page's writes the view it shows (its
    charts, its note, its settings), each with plotly.js inside."""
    from tests.browser.test_browser import wait_until_idle

    page = browser_page
    page.goto(f"{server}/Story?story_step=5", wait_until="domcontentloaded")
    wait_until_idle(page, timeout_ms=300_000)
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=300_000)
    text = _downloaded_html(page, "Export the story (one HTML file, works offline)")
    assert text.count('id="rk-chart-') == 5 and text.count('class="note"') == 5 and "<script src=" not in text
    page.goto(f"{server}/Gram_matrices?D=128&n=60", wait_until="domcontentloaded")
    wait_until_idle(page, timeout_ms=300_000)
    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=300_000)
    text = _downloaded_html(page, "Export this view (one HTML file, works offline)")
    assert text.count('id="rk-chart-') == 1 and "What to notice." in text and "<td>D</td><td>128</td>" in text
    assert "<script src=" not in text
