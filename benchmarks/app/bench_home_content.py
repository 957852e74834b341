"""Time until Home's content is visible on a cold visit (new browser session), before vs after.

bench_browser.py's cold visit waits until every plotly chart is drawn, which on Home includes the off-screen
chart-library preload (rkapp.layout.preload_chart_library). This asks the reader's question instead: when are
Home's first step and its last caption visible?

    python benchmarks/app/bench_home_content.py --before /tmp/before --repeats 4 [--quick] [--out FILE]

Writes the section "Home's content on a cold visit" of benchmarks/results/browser.md.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_browser import CHROMIUM_ARGS, REPO, _free_port, start_server, wait_healthy  # noqa: E402

sys.path.insert(0, str(REPO))
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "Home's content on a cold visit (`python benchmarks/app/bench_home_content.py`)"

FIRST, LAST = "1 · The itemset kernel", "Settings (data, kernel"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="a checkout of the previous version (default: none)")
    ap.add_argument("--repeats", type=int, default=4)
    add_output_arguments(ap, "browser.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats = 1
    run = Run.start(args, None if argv is None else [__file__, *argv])
    ports = {"after": (REPO, _free_port()), **({"before": (args.before.resolve(), _free_port())} if args.before else {})}
    servers = [start_server(repo, port) for repo, port in ports.values()]
    times: dict[str, list[float]] = {v: [] for v in ports}
    try:
        for _, port in ports.values():
            wait_healthy(f"http://127.0.0.1:{port}")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
            for r in range(args.repeats + 1):  # the first round warms the servers, untimed
                for version in (list(ports) if r % 2 == 0 else list(ports)[::-1]):
                    context = browser.new_context(viewport={"width": 1280, "height": 720})
                    page = context.new_page()
                    start = time.perf_counter()
                    page.goto(f"http://127.0.0.1:{ports[version][1]}", wait_until="domcontentloaded")
                    for text in (FIRST, LAST):
                        page.get_by_text(text).first.wait_for(state="visible", timeout=60_000)
                    if r:
                        times[version].append(time.perf_counter() - start)
                    context.close()
            browser.close()
    finally:
        for server in servers:
            server.terminate()
    lines = [f"Time from navigation until Home's first step ({FIRST!r}) and its last caption are visible, new "
             f"browser context each visit, {args.repeats} interleaved repeats after an untimed round; *before*: "
             f"{args.before or 'not measured'}.", "", "| version | median s (min-max) | cold visits |", "|---|---|---:|"]
    lines += [f"| {version} | {statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f}) | {len(values)} |"
              for version, values in times.items()]
    run.write(TITLE, "\n".join(lines), preamble="# Browser timings")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
