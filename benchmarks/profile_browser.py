"""Where a page's browser time goes: one cold visit, one warm visit and one seed change of a page, in
headless Chromium (1280x720), with the network (bytes per JS chunk, per websocket message) and the
moments that matter: navigation, DOMContentLoaded, first/last websocket message from the server, script
finished, charts drawn.

    python benchmarks/profile_browser.py --pages "" Gram_matrices Random_projections [--port 8701]

Starts its own server (or uses --url of a running one). Prints one block per page and visit.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_browser import CHROMIUM_ARGS, DRAWN_JS, REPO, start_server, wait_healthy  # noqa: E402

#: when the page last became "drawn" and when the script-state attribute last changed
_PROBE = """() => {
  window.__rk = {marks: []};
  const mark = (what) => window.__rk.marks.push([what, performance.now()]);
  let wasDrawn = false, state = null;
  const check = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    const s = app && app.getAttribute('data-test-script-state');
    if (s !== state) { state = s; mark('script ' + s); }
    const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
    const drawn = charts.length > 0 && charts.every(p => p.querySelector('.main-svg'));
    if (drawn !== wasDrawn) { wasDrawn = drawn; mark(drawn ? 'charts drawn (' + charts.length + ')' : 'charts not drawn'); }
    requestAnimationFrame(check);
  };
  requestAnimationFrame(check);
}"""


def profile(page, cdp, action, label):
    events = []
    t0 = time.perf_counter()

    def on_ws(ws):
        ws.on("framereceived", lambda payload: events.append(("ws<", time.perf_counter() - t0,
                                                               len(payload) if payload else 0)))
        ws.on("framesent", lambda payload: events.append(("ws>", time.perf_counter() - t0,
                                                           len(payload) if payload else 0)))
    page.on("websocket", on_ws)
    responses = []

    def on_response(resp):
        try:
            size = len(resp.body())
        except Exception:
            size = -1
        responses.append((resp.url.split("/")[-1][:60], size, time.perf_counter() - t0))
    page.on("response", on_response)
    t0 = time.perf_counter()
    action()
    page.wait_for_function(DRAWN_JS, timeout=120_000, polling=50)
    page.wait_for_timeout(300)
    page.wait_for_function(DRAWN_JS, timeout=120_000, polling=50)
    total = time.perf_counter() - t0
    page.remove_listener("websocket", on_ws)
    page.remove_listener("response", on_response)
    marks = page.evaluate("() => (window.__rk || {marks: []}).marks")
    nav0 = page.evaluate("() => performance.timeOrigin") 
    print(f"\n## {label}: drawn after {total:.2f} s")
    received = [e for e in events if e[0] == "ws<"]
    if received:
        print(f"  websocket: {len(received)} messages received, {sum(e[2] for e in received)/1e3:.1f} kB; "
              f"first at {received[0][1]:.2f} s, last at {received[-1][1]:.2f} s; largest "
              f"{sorted((e[2] for e in received), reverse=True)[:5]}")
    js = [r for r in responses if r[0].endswith(".js") or ".js?" in r[0]]
    if js:
        print(f"  JS: {len(js)} files, {sum(r[1] for r in js)/1e3:.0f} kB; largest: "
              + ", ".join(f"{n} {s/1e3:.0f} kB @{t:.2f}s" for n, s, t in sorted(js, key=lambda r: -r[1])[:4]))
    other = [r for r in responses if r not in js]
    if other:
        print(f"  other responses: {len(other)}, {sum(max(r[1],0) for r in other)/1e3:.0f} kB")
    return total, marks


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", nargs="*", default=["", "Gram_matrices", "Random_projections"])
    ap.add_argument("--port", type=int, default=8701)
    ap.add_argument("--repo", type=Path, default=REPO)
    ap.add_argument("--trace", type=Path, default=None, help="write a Chromium trace of the cold visit here")
    args = ap.parse_args(argv)
    server = start_server(args.repo, args.port)
    base = f"http://127.0.0.1:{args.port}"
    try:
        wait_healthy(base)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
            ctx = browser.new_context(viewport={"width": 1280, "height": 720})
            p = ctx.new_page(); p.goto(base); p.wait_for_function(DRAWN_JS.replace("every", "every") , timeout=120000) if False else p.wait_for_timeout(6000)
            ctx.close()
            for path in args.pages:
                ctx = browser.new_context(viewport={"width": 1280, "height": 720})
                ctx.add_init_script("(" + _PROBE + ")()")
                page = ctx.new_page()
                cdp = ctx.new_cdp_session(page)
                url = f"{base}/{path}"
                profile(page, cdp, lambda: page.goto(url, wait_until="commit"), f"{path or 'Home'} cold")
                marks = page.evaluate("() => window.__rk.marks")
                print("  marks (ms since navigation):", [(m, round(t)) for m, t in marks])
                res = page.evaluate("() => performance.getEntriesByType('resource').map(r => [r.name.split('/').pop().slice(0,50), Math.round(r.startTime), Math.round(r.responseEnd), r.encodedBodySize, r.decodedBodySize])")
                big = sorted(res, key=lambda r: -r[4])[:6]
                print("  resources (name, start ms, end ms, encoded B, decoded B):", big)
                nav = page.evaluate("() => { const n = performance.getEntriesByType('navigation')[0]; return [Math.round(n.domContentLoadedEventEnd), Math.round(n.loadEventEnd)]; }")
                print("  DOMContentLoaded end, load end (ms):", nav)
                lt = page.evaluate("() => performance.getEntriesByType('longtask').length")
                profile(page, cdp, lambda: page.goto(url, wait_until="commit"), f"{path or 'Home'} warm")
                print("  marks:", [(m, round(t)) for m, t in page.evaluate("() => window.__rk.marks")])
                field = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"]').filter(has_text="Seed").locator("input")
                if field.count():
                    field.first.fill("7")
                    page.evaluate("() => { window.__rk.marks = []; window.__rk.t = performance.now(); }")
                    profile(page, cdp, lambda: field.first.press("Enter"), f"{path or 'Home'} seed change")
                    t = page.evaluate("() => window.__rk.t")
                    print("  marks (ms since Enter):", [(m, round(x - t)) for m, x in page.evaluate("() => window.__rk.marks")])
                ctx.close()
            browser.close()
    finally:
        server.terminate(); server.wait(timeout=20)


if __name__ == "__main__":
    main()
