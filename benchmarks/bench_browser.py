"""Browser timings of the dashboard: per page, a cold visit (first in a new browser session), a warm
visit (same session, server caches filled) and a widget change (the seed, a cheap field every page with
a sidebar has), measured in headless Chromium from navigation / key press until the page is idle and
its plotly charts are drawn.

    python benchmarks/bench_browser.py --repeats 3 [--pages Gram_matrices Story] [--port 8650]

Starts its own `streamlit run app.py` on a free port (or --port), prints a markdown table of medians
(and min-max spread) with the load average. Wall-clock on a shared machine: compare pages and
before/after runs made back to back, not single numbers.
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
IDLE_JS = ("() => !document.querySelector('[data-testid=\"stStatusWidget\"]') && "
           "!document.querySelector('[data-testid=\"stSkeleton\"]')")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_drawn(page, timeout_ms=180_000) -> None:
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)
    page.wait_for_timeout(300)
    page.wait_for_function(IDLE_JS, timeout=timeout_ms)
    page.wait_for_function("() => [...document.querySelectorAll('.js-plotly-plot')].every(p => p.querySelector('.main-svg'))",
                           timeout=timeout_ms)


def visit(page, url: str) -> float:
    start = time.perf_counter()
    page.goto(url, wait_until="domcontentloaded")
    _wait_drawn(page)
    return time.perf_counter() - start


def change_seed(page, value: int) -> float | None:
    field = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"]').filter(has_text="Seed").locator("input")
    if field.count() == 0:
        return None
    field.first.fill(str(value))
    start = time.perf_counter()
    field.first.press("Enter")
    page.wait_for_function(f"() => window.location.search.includes('seed={value}')", timeout=60_000)
    _wait_drawn(page)
    return time.perf_counter() - start


def main(argv=None) -> int:
    from rkapp.navigation import PAGES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", nargs="*", default=None, help="URL paths (default: Home and every page)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--port", type=int, default=None)
    args = ap.parse_args(argv)
    pages = args.pages or ["", *[p.url_path for p in PAGES]]
    port = args.port or _free_port()
    env = dict(os.environ, PYTHONPATH=str(REPO), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                               "--server.port", str(port), "--server.address", "127.0.0.1",
                               "--server.fileWatcherType", "none"], cwd=REPO, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                if urllib.request.urlopen(f"{base}/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.5)
        times: dict[str, dict[str, list[float]]] = {p: {"cold": [], "warm": [], "change": []} for p in pages}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
            for r in range(args.repeats):  # interleaved: every page once per repeat
                for path in pages:
                    context = browser.new_context(viewport={"width": 1280, "height": 720})
                    page = context.new_page()
                    times[path]["cold"].append(visit(page, f"{base}/{path}"))
                    times[path]["warm"].append(visit(page, f"{base}/{path}"))
                    changed = change_seed(page, 1 + r)
                    if changed is not None:
                        times[path]["change"].append(changed)
                    context.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)

    def cell(values):
        if not values:
            return "–"
        return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"

    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; repeats: {args.repeats}; 1280x720\n")
    print("| page | cold visit, s | warm visit, s | seed change, s |")
    print("|---|---|---|---|")
    for path in pages:
        t = times[path]
        print(f"| {path or 'Home'} | {cell(t['cold'])} | {cell(t['warm'])} | {cell(t['change'])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
