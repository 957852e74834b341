"""Does preloading plotly's JavaScript chunk make a cold visit faster? (Issue 15; result in results/browser.md.)

A cold deep-link visit draws its first chart only after Streamlit's lazily loaded PlotlyChart chunk (~4.7 MB)
is fetched, compiled and run. This serves each page twice per repeat, interleaved: as is, and with a
``<link rel="modulepreload">`` of that chunk injected into index.html (through a Playwright route), and prints
the median time to drawn (bench_browser's definition) of each.

    python benchmarks/app/bench_plotly_preload.py --repeats 6 Gram_matrices Timing [--quick] [--out FILE]

Writes the section "Cold visits with plotly's chunk preloaded" of benchmarks/results/browser.md.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import streamlit
from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_browser import (  # noqa: E402
    CHROMIUM_ARGS, REFERENCE_APP, REPO, _free_port, _wait_drawn, start_server, wait_healthy,
)

#: a document fulfilled by a route loses its local address space: its WebSocket to 127.0.0.1 is then blocked
sys.path.insert(0, str(REPO))
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "Cold visits with plotly's chunk preloaded (`python benchmarks/app/bench_plotly_preload.py`)"
ROUTE_ARGS = ["--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="*", help="URL paths of the app (the bare reference page is always timed)")
    ap.add_argument("--repeats", type=int, default=6)
    add_output_arguments(ap, "browser.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats = 1
    run = Run.start(args, None if argv is None else [__file__, *argv])
    static = os.path.join(os.path.dirname(streamlit.__file__), "static", "static", "js")
    chunk = os.path.basename(glob.glob(os.path.join(static, "PlotlyChart.*.js"))[0])
    preload = f'<link rel="modulepreload" crossorigin href="./static/js/{chunk}"></head>'

    def inject(route):
        response = route.fetch()
        route.fulfill(response=response, body=response.text().replace("</head>", preload))

    reference_dir = Path(tempfile.mkdtemp(prefix="bench_reference_"))
    (reference_dir / "reference.py").write_text(REFERENCE_APP)
    ports = {"app": _free_port(), "reference": _free_port()}
    servers = [start_server(REPO, ports["app"]), start_server(reference_dir, ports["reference"], "reference.py")]
    urls = {"bare page": f"http://127.0.0.1:{ports['reference']}/",
            **{p: f"http://127.0.0.1:{ports['app']}/{p}" for p in args.pages}}
    times: dict = {}
    try:
        for port in ports.values():
            wait_healthy(f"http://127.0.0.1:{port}")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS + ROUTE_ARGS,
                                         headless=True)
            for url in urls.values():  # not timed: the servers' first script runs
                page = browser.new_page()
                page.goto(url)
                _wait_drawn(page)
                page.close()
            for r in range(args.repeats):
                for name, url in urls.items():
                    for mode in (("plain", "preload") if r % 2 else ("preload", "plain")):
                        context = browser.new_context(viewport={"width": 1280, "height": 720})
                        page = context.new_page()
                        if mode == "preload":
                            page.route(re.compile(r".*:\d+/([A-Za-z_]*)$"), inject)  # the documents only
                        start = time.perf_counter()
                        page.goto(url, wait_until="domcontentloaded")
                        times.setdefault((name, mode), []).append(_wait_drawn(page, 60) - start)
                        context.close()
            browser.close()
    finally:
        for server in servers:
            server.terminate()
    lines = [f"Time to drawn (bench_browser's definition) of a cold visit, new browser context each visit, "
             f"{args.repeats} repeats, the two modes interleaved.", "",
             "| page | with preload, s (min-max) | plain, s (min-max) |", "|---|---|---|"]
    for name in urls:
        cells = [f"{statistics.median(v):.2f} ({min(v):.2f}-{max(v):.2f})" for v in
                 (times[(name, "preload")], times[(name, "plain")])]
        lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
    run.write(TITLE, "\n".join(lines), preamble="# Browser timings")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
