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

from tests.browser.test_browser import CHROMIUM, CHROMIUM_ARGS, sync_playwright
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

