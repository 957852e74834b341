"""Browser timings of the dashboard: per page, a cold visit (first in a new browser session, by a deep
link), a first visit from Home (a new session lands on Home, then clicks the page in its list of pages), a warm
visit (same session, server caches filled) and a widget change (the seed, a cheap field every page with
a sidebar has), measured in headless Chromium from navigation / key press until the page is idle and
its plotly charts are drawn.

    python benchmarks/app/bench_browser.py --repeats 3 [--pages Gram_matrices Story] [--port 8650]
    python benchmarks/app/bench_browser.py --repeats 3 --before /tmp/before   # before/after, interleaved
    python benchmarks/app/bench_browser.py --repeats 3 --reference            # + a bare Streamlit page, the floor

Starts its own `streamlit run app.py` on a free port (or --port), writes a markdown table of medians
(and min-max spread) with the load average into the section "Browser timings per page" of
benchmarks/results/browser.md (--out FILE elsewhere; --quick: Home once). With ``--before DIR`` a second server runs the checkout in
DIR (e.g. ``git worktree add /tmp/before <commit>``) and every page is timed on both servers in each
repeat, alternating which goes first, so both see the same machine load. Wall-clock on a shared
machine: compare the two columns of one run, not numbers of different runs. With ``--reference`` a third
server runs a bare Streamlit page (a title, a seed field and one 100 x 100 plotly heatmap, REFERENCE_APP),
timed in the same repeats: what any Streamlit page with a plotly chart costs on this machine, the floor under
every page of the dashboard.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[2]  # benchmarks/<subject>/this file
sys.path.insert(0, str(REPO))
from benchmarks.app.streamlit_server import StreamlitServer  # noqa: E402
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "Browser timings per page (`python benchmarks/app/bench_browser.py`)"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
#: Drawn: the script has finished (stApp's script state), no skeleton placeholder is left, and every plotly
#: element has its SVG (plotly's JS is loaded lazily and draws after the last server message).
DRAWN_JS = ("() => { const app = document.querySelector('[data-testid=\"stApp\"]');"
            " if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;"
            " if (document.querySelector('[data-testid=\"stSkeleton\"]')) return false;"
            " return [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
            ".every(p => p.querySelector('.main-svg')); }")


REFERENCE_ROW = "bare Streamlit page, one heatmap"
#: The reference page: what Streamlit and plotly cost by themselves (no rkcore, no sidebar of ours).
REFERENCE_APP = """\
import numpy as np
import plotly.graph_objects as go
import streamlit as st

seed = st.sidebar.number_input("Seed", value=int(st.query_params.get("seed", 0)), step=1)
st.query_params["seed"] = str(seed)
st.title("Reference: one heatmap")
z = np.random.default_rng(int(seed)).random((100, 100))
st.plotly_chart(go.Figure(go.Heatmap(z=z), layout=dict(title_text="Random 100 x 100")), theme=None)
"""


#: The drawn state must hold this long to count (not a moment between two reruns); the time reported is when
#: it began, so this wait is not part of the measurement (in the tables before stop 14 it was: +0.15-0.25 s on every number).
STABLE_S = 0.15
POLL_MS = 20


def _wait_drawn(page, timeout_s: float = 180.0) -> float:
    """Wait until the page is drawn (DRAWN_JS) and has stayed so for STABLE_S; return the perf_counter
    time at which that drawn state began (to within POLL_MS)."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_s * 1000)
    deadline = time.perf_counter() + timeout_s
    since = None
    while time.perf_counter() < deadline:
        drawn = page.evaluate(DRAWN_JS)
        now = time.perf_counter()
        if not drawn:
            since = None
        elif since is None:
            since = now
        elif now - since >= STABLE_S:
            return since
        page.wait_for_timeout(POLL_MS)
    raise TimeoutError(f"the page was not drawn within {timeout_s:.0f} s")


def visit(page, url: str) -> float:
    start = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")
    return _wait_drawn(page) - start


def via_home(page, base: str, path: str) -> float | None:
    """A reader's first visit: a new session lands on Home (not timed), then clicks the page in the
    list of pages; seconds from the click until the page is drawn (no reload: the app switches pages in place,
    so what Home already loaded, e.g. the chart library, is reused)."""
    if not path:
        return None
    page.goto(base, wait_until="domcontentloaded")
    _wait_drawn(page)
    link = page.locator(f'[data-testid="stMain"] a[href="{path}"]').first
    start = time.perf_counter()
    link.click()
    page.wait_for_function(f"() => window.location.pathname.endsWith('/{path}')"
                           " && document.querySelector('h1') && document.querySelector('h1').innerText !== "
                           "'Random Kernel Explorer'", timeout=60_000, polling=20)
    return _wait_drawn(page) - start


def change_seed(page, value: int) -> float | None:
    field = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"]').filter(has_text="Seed").locator("input")
    if field.count() == 0:
        return None
    field.first.fill(str(value))
    start = time.perf_counter()
    field.first.press("Enter")
    page.wait_for_function(f"() => window.location.search.includes('seed={value}')", timeout=60_000)
    return _wait_drawn(page) - start  # the URL is written during the rerun: wait for its end


def click_option(page, option: str) -> float:
    """Click the page-level radio option labelled ``option`` (in the main area); seconds until redrawn
    with it (the fragment or page rerun has ended and the charts are drawn)."""
    target = page.locator('[data-testid="stMain"] [data-testid="stRadio"] label').filter(has_text=option).first
    start = time.perf_counter()
    target.click()
    page.wait_for_function(f"() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes({option!r})"
                           " && [...document.querySelectorAll('.js-plotly-plot .g-ytitle')].some(t => "
                           f"t.textContent.includes({option.split()[0]!r}))", timeout=60_000)
    return _wait_drawn(page) - start


@contextlib.contextmanager
def reference_server():
    """A server of REFERENCE_APP, run from a temporary folder of its own (no rkcore on its path), removed after."""
    with tempfile.TemporaryDirectory(prefix="bench_reference_") as folder:
        (Path(folder) / "reference.py").write_text(REFERENCE_APP)
        with StreamlitServer("reference.py", repo=Path(folder)) as server:
            yield server


def time_page(browser, base: str, path: str, seed: int, option: str | None = None) -> dict[str, float | None]:
    """Cold visit (new browser context), warm visit (same context again), seed change; with ``option``
    instead of the seed: a click on that page-level radio option."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        result = {"cold": visit(page, f"{base}/{path}"), "warm": visit(page, f"{base}/{path}"),
                  "change": click_option(page, option) if option else change_seed(page, seed)}
    finally:
        context.close()
    context = browser.new_context(viewport={"width": 1280, "height": 720})  # a new reader, from Home
    try:
        result["via_home"] = via_home(context.new_page(), base, path)
    finally:
        context.close()
    return result


def time_all(args, pages: list[str], versions: dict, bases: dict[str, str]) -> dict:
    """Every page on every server (and the reference page), interleaved: (version, path) -> kind -> seconds."""
    times = {(v, p): {"cold": [], "via_home": [], "warm": [], "change": []} for v in versions for p in pages}
    times[("reference", REFERENCE_ROW)] = {"cold": [], "via_home": [], "warm": [], "change": []}

    def record(key, result):
        for kind, value in result.items():
            if value is not None:
                times[key][kind].append(value)
        print(key[0], key[1] or "Home", {k: None if v is None else round(v, 2) for k, v in result.items()}, file=sys.stderr, flush=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
        for version, base in bases.items():
            # not timed: the server's first script run imports rkcore, scikit-learn and plotly; "cold"
            # below is a new browser session on a running server
            time_page(browser, base, "", 0)
        for r in range(args.repeats):  # interleaved: every page once per repeat, on every server
            for i, path in enumerate(pages):
                order = list(versions) if (r + i) % 2 == 0 else list(versions)[::-1]
                for version in order:
                    record((version, path), time_page(browser, bases[version], path, 1 + r, args.option))
            if args.reference:
                record(("reference", REFERENCE_ROW), time_page(browser, bases["reference"], "", 1 + r))
        browser.close()
    return times


def main(argv=None) -> int:
    from rkapp.navigation import PAGES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", nargs="*", default=None, help="URL paths (default: Home and every page)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--port", type=int, default=None)
    ap.add_argument("--before", type=Path, default=None, help="a checkout of the previous version to compare")
    ap.add_argument("--before-port", type=int, default=None)
    ap.add_argument("--option", default=None,
                    help="time a click on this page-level radio option instead of the seed change "
                         "(e.g. --pages Random_Fourier_features --option 'max entry error')")
    ap.add_argument("--after", type=Path, default=REPO, help="the checkout to time (default: this one)")
    ap.add_argument("--reference", action="store_true",
                    help="also time a bare Streamlit page with one plotly heatmap (REFERENCE_APP) in every repeat")
    add_output_arguments(ap, "browser.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.pages, args.repeats = args.pages or [""], 1
    run = Run.start(args, None if argv is None else [__file__, *argv])
    pages = args.pages or ["", *[p.url_path for p in PAGES]]
    versions = {"after": (args.after.resolve(), args.port)}
    if args.before:
        versions["before"] = (args.before.resolve(), args.before_port)
    with contextlib.ExitStack() as servers:
        bases = {name: servers.enter_context(StreamlitServer(repo=repo, port=port)).url
                 for name, (repo, port) in versions.items()}
        if args.reference:
            bases["reference"] = servers.enter_context(reference_server()).url
        load_start = os.getloadavg()
        times = time_all(args, pages, versions, bases)
    load_end = os.getloadavg()

    def cell(values):
        if not values:
            return "–"
        return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"

    lines = [f"Load average (1, 5, 15 min) at start: {' '.join(f'{x:.2f}' for x in load_start)}; at end: "
             f"{' '.join(f'{x:.2f}' for x in load_end)}; repeats: {args.repeats}; 1280x720; median (min–max) s.", "",
             f"| page | version | cold visit (deep link), s | first visit from Home, s | warm visit, s | "
             f"{'click ' + repr(args.option) if args.option else 'seed change'}, s |", "|---|---|---|---|---|---|"]
    rows = [(version, path) for path in pages for version in versions]
    for version, path in rows + ([("reference", REFERENCE_ROW)] if args.reference else []):
        t = times[(version, path)]
        lines.append(f"| {path or 'Home'} | {version} | {cell(t['cold'])} | {cell(t['via_home'])} | {cell(t['warm'])} | "
                     f"{cell(t['change'])} |")
    run.write(TITLE, "\n".join(lines), preamble="# Browser timings")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
