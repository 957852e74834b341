"""Where a page's browser time goes (the breakdown in benchmarks/results/browser.md): for each page, a cold
visit (new browser session) and a seed change, in headless Chromium at 1280x720, with

- the moments: script running / finished (stApp's script state) and charts drawn, ms after navigation
  (or after Enter);
- the network: JavaScript fetched (total and the largest chunks), websocket bytes from the server;
- a Chromium trace of the renderer's main thread: busy time, and the time spent evaluating JavaScript
  modules (Streamlit loads an element's code, e.g. plotly's 4.7 MB chunk, the first time it is shown).

    python benchmarks/app/profile_browser.py --pages "" Gram_matrices Random_projections [--port N] [--repo DIR]
        [--quick] [--out FILE]

Starts its own server on --port (default: a free one) for the checkout --repo (default: this one) and writes
the section "Where a page's browser time goes" of benchmarks/results/browser.md. One sample per page: run it
on a quiet machine, or compare two checkouts in the same load.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_browser import CHROMIUM_ARGS, DRAWN_JS, REPO, _free_port, start_server, wait_healthy  # noqa: E402

sys.path.insert(0, str(REPO))
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "Where a page's browser time goes (`python benchmarks/app/profile_browser.py`)"

#: records when the script state changes and when all charts are drawn (polled every animation frame)
PROBE_JS = """() => {
  window.__rk = {marks: [], t0: 0};
  const mark = (what) => window.__rk.marks.push([what, Math.round(performance.now() - window.__rk.t0)]);
  let drawn = false, state = null;
  const check = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    const s = app && app.getAttribute('data-test-script-state');
    if (s !== state) { state = s; mark('script ' + s); }
    const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
    const now = charts.length > 0 && charts.every(p => p.querySelector('.main-svg'));
    if (now !== drawn) { drawn = now; mark(now ? `${charts.length} chart(s) drawn` : 'charts redrawing'); }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
}"""
TRACE_CATEGORIES = ["toplevel", "devtools.timeline", "v8"]


def main_thread_summary(trace: bytes) -> dict[str, float]:
    """Seconds of the renderer main thread: busy (top-level tasks), evaluating JS modules, largest module."""
    events = json.loads(trace)["traceEvents"]
    mains = {(e["pid"], e["tid"]) for e in events
             if e.get("name") == "thread_name" and e.get("args", {}).get("name") == "CrRendererMain"}
    durations: dict[str, list[float]] = {}
    for e in events:
        if (e.get("pid"), e.get("tid")) in mains and e.get("ph") == "X":
            durations.setdefault(e["name"], []).append(e.get("dur", 0) / 1e6)
    modules = durations.get("v8.evaluateModule", [])
    return {"busy": sum(durations.get("ThreadControllerImpl::RunTask", [])), "modules": sum(modules),
            "largest module": max(modules, default=0.0)}


def measure(browser, page, action, label: str, summary_rows: list[str]) -> list[str]:
    """The breakdown of one action as markdown lines (a ### heading and bullets); its row of the summary
    table is appended to ``summary_rows``."""
    received: list[int] = []
    scripts: dict[str, int] = {}

    def on_ws(ws):
        ws.on("framereceived", lambda payload: received.append(len(payload or b"")))

    def on_response(response):
        if response.url.endswith(".js"):
            try:
                scripts[response.url.rsplit("/", 1)[-1]] = len(response.body())
            except Exception:  # a response without a body (redirect, cache): not counted
                pass

    page.on("websocket", on_ws)
    page.on("response", on_response)
    if page.url.startswith("http"):  # an action on a loaded page: moments count from now (else from navigation)
        page.evaluate("() => { window.__rk.marks = []; window.__rk.t0 = performance.now(); }")
    browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
    start = time.perf_counter()
    action()
    page.wait_for_function(DRAWN_JS, timeout=180_000, polling=50)
    page.wait_for_timeout(300)
    page.wait_for_function(DRAWN_JS, timeout=180_000, polling=50)
    total = time.perf_counter() - start
    summary = main_thread_summary(browser.stop_tracing())
    page.remove_listener("websocket", on_ws)
    page.remove_listener("response", on_response)
    marks = page.evaluate("() => window.__rk.marks")
    summary_rows.append(f"| {label} | {total:.2f} | {summary['busy']:.2f} | {summary['modules']:.2f} | "
                        f"{sum(scripts.values()) / 1e6:.2f} | {sum(received) / 1e3:.0f} |")
    lines = [f"### {label}: drawn {total:.2f} s after the action", "",
             "- moments (ms): " + ", ".join(f"{what} {t}" for what, t in marks),
             f"- main thread: busy {summary['busy']:.2f} s, evaluating JS modules {summary['modules']:.2f} s "
             f"(largest {summary['largest module']:.2f} s)"]
    if scripts:
        largest = sorted(scripts.items(), key=lambda kv: -kv[1])[:4]
        lines.append(f"- JavaScript: {len(scripts)} files, {sum(scripts.values()) / 1e6:.2f} MB; largest: "
                     + ", ".join(f"{name} {size / 1e6:.2f} MB" for name, size in largest))
    if received:
        lines.append(f"- websocket from the server: {len(received)} messages, {sum(received) / 1e3:.0f} kB "
                     f"(largest {max(received) / 1e3:.0f} kB)")
    print("\n".join(lines), flush=True)
    return lines + [""]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pages", nargs="*", default=["", "Gram_matrices", "Random_projections"])
    ap.add_argument("--port", type=int, default=None, help="default: a free port")
    ap.add_argument("--repo", type=Path, default=REPO, help="the checkout to profile")
    add_output_arguments(ap, "browser.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.pages = [""]
    run = Run.start(args, None if argv is None else [__file__, *argv])
    args.port = args.port or _free_port()
    details: list[str] = []
    rows: list[str] = []
    server = start_server(args.repo.resolve(), args.port)
    base = f"http://127.0.0.1:{args.port}"
    try:
        wait_healthy(base)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
            warmup = browser.new_page()  # not measured: the server's first run imports everything
            warmup.goto(base)
            warmup.wait_for_timeout(5000)
            warmup.close()
            for path in args.pages:
                context = browser.new_context(viewport={"width": 1280, "height": 720})
                context.add_init_script(f"({PROBE_JS})()")
                page = context.new_page()
                url = f"{base}/{path}"
                details += measure(browser, page, lambda: page.goto(url, wait_until="commit"),
                                   f"{path or 'Home'}, cold visit", rows)
                seed = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"]').filter(
                    has_text="Seed").locator("input")
                if path and seed.count():
                    seed.first.fill("7")
                    details += measure(browser, page, lambda: seed.first.press("Enter"), f"{path}, seed change", rows)
                context.close()
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=20)
    lines = [f"One sample per page, headless Chromium at 1280x720, checkout {args.repo}.", "",
             "| action | drawn after s | main thread busy s | evaluating JS modules s | JavaScript MB | websocket kB |",
             "|---|---:|---:|---:|---:|---:|", *rows, "", *details]
    run.write(TITLE, "\n".join(lines), preamble="# Browser timings")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
