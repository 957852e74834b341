"""Classroom load benchmark: N students open the app at once and play with the Gram page.

    python benchmarks/bench_classroom.py [--sessions 1 10 30] [--port 8790] [--out benchmarks/results/classroom.md]

Starts ``streamlit run app.py`` on 127.0.0.1 (headless, file watcher off), then for each N
drives N concurrent sessions (one headless Debian Chromium, one browser context = one
Streamlit session each, Playwright's async API) through

1. the landing page (until its title and the preset buttons are drawn),
2. the Gram page, URL path /Gram_matrices (until its default view's plotly chart is drawn),
3. three widget changes in the sidebar, each waited for until the page's caption shows the new
   value and the chart is drawn again: D = 512, seed = 1 + (session mod 5) (so the class
   shares some cached results and not others), then n = 300.

Reported per N: errors (timeouts, exception text, error boxes), p50 / p95 of the time to
rendered charts per step, server RSS (baseline, peak, after), server CPU seconds split into
the main thread (Tornado's event loop: websockets, protobuf forwarding) and the other threads
(one ScriptRunner thread per session runs the page script and the numerics), and the load
average. The machine is shared with other developers' jobs: the load average is part of the
result. Every request goes to 127.0.0.1 only, and every wait is bounded.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]  # benchmarks/<subject>/this file
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
STEP_TIMEOUT_MS = 180_000
ERROR_MARKERS = ("Traceback (most recent call last)", "StreamlitAPIException", "Uncaught app exception")
#: Plotly charts of the Gram page's default view (one view at a time since stop 12: K and K̂ side by side).
GRAM_CHARTS = 1
CHARTS_DRAWN = ("() => [...document.querySelectorAll('.js-plotly-plot')]"
                ".filter(p => !p.closest('.st-key-chart-preload'))"  # not the off-screen preload (rkapp.layout)
                f".filter(p => p.querySelector('.main-svg')).length >= {GRAM_CHARTS}")
IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"


# ----------------------------------------------------------------------------- server
class Server:
    def __init__(self, port: int):
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        env = dict(os.environ, PYTHONPATH=str(REPO), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.ps = psutil.Process(self.proc.pid)
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2).status == 200:
                    return
            except OSError:
                time.sleep(0.3)
            if self.proc.poll() is not None:
                raise RuntimeError("streamlit exited early")
        self.stop()
        raise RuntimeError("streamlit did not answer /_stcore/health within 90 s")

    def rss(self) -> int:
        return self.ps.memory_info().rss

    def cpu_split(self) -> tuple[float, float]:
        """(main thread, all other threads) CPU seconds so far. The process total includes threads
        that have exited (each script run's ScriptRunner thread ends with the run)."""
        total = self.ps.cpu_times()
        main = next((t.user_time + t.system_time for t in self.ps.threads() if t.id == self.proc.pid), 0.0)
        return main, total.user + total.system - main

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class RssSampler(threading.Thread):
    def __init__(self, server: Server, every: float = 0.25):
        super().__init__(daemon=True)
        self.server, self.every, self.peak, self._halt = server, every, 0, threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                self.peak = max(self.peak, self.server.rss())
            except psutil.Error:
                return
            time.sleep(self.every)

    def stop(self) -> int:
        self._halt.set()
        self.join(timeout=5)
        return self.peak


def client_cpu() -> float:
    """CPU seconds of this process's descendants (the Playwright driver and Chromium), the server excluded."""
    total = 0.0
    for child in psutil.Process().children(recursive=True):
        try:
            if "streamlit" in " ".join(child.cmdline()):
                continue
            t = child.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


# ----------------------------------------------------------------------------- one student
async def _charts_after(page, expect_text: str | None, t0: float) -> float:
    if expect_text:
        await page.get_by_text(expect_text).first.wait_for(timeout=STEP_TIMEOUT_MS)
    await page.wait_for_function(IDLE, timeout=STEP_TIMEOUT_MS)
    await page.wait_for_function(CHARTS_DRAWN, timeout=STEP_TIMEOUT_MS)
    return time.perf_counter() - t0


async def _set_number(page, label: str, value: int, caption: str) -> float:
    field = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"]').filter(has_text=label).locator("input")
    await field.fill(str(value))
    t0 = time.perf_counter()
    await field.press("Enter")
    return await _charts_after(page, caption, t0)


async def _errors_on(page) -> list[str]:
    text = await page.inner_text("body")
    found = [m for m in ERROR_MARKERS if m in text]
    if await page.locator('[data-testid="stException"]').count():
        found.append("exception element")
    alerts = page.locator('[data-testid="stAlertContentError"]')
    for k in range(min(await alerts.count(), 3)):
        found.append("error box: " + (await alerts.nth(k).inner_text())[:120])
    return found


async def student(browser, url: str, k: int, out: dict) -> None:
    times: dict[str, float] = {}
    errors: list[str] = []
    context = await browser.new_context(viewport={"width": 1280, "height": 720})
    page = await context.new_page()
    step = "landing"
    try:
        t0 = time.perf_counter()
        await page.goto(url + "/", wait_until="domcontentloaded", timeout=STEP_TIMEOUT_MS)
        await page.get_by_text("One-click presets").first.wait_for(timeout=STEP_TIMEOUT_MS)
        await page.wait_for_function(IDLE, timeout=STEP_TIMEOUT_MS)
        times["landing"] = time.perf_counter() - t0
        errors += await _errors_on(page)

        step = "gram"
        t0 = time.perf_counter()
        await page.goto(url + "/Gram_matrices", wait_until="domcontentloaded", timeout=STEP_TIMEOUT_MS)
        times["gram"] = await _charts_after(page, None, t0)
        errors += await _errors_on(page)

        for step, label, value, caption in (("D=512", "D (random features)", 512, "D = 512"),
                                            ("seed", "Seed", 1 + k % 5, f"seed = {1 + k % 5}"),
                                            ("n=300", "n (points)", 300, "n = 300 points")):
            times[step] = await _set_number(page, label, value, caption)
            errors += await _errors_on(page)
    except Exception as exc:  # noqa: BLE001 - a timeout or a crash is the measurement
        errors.append(f"{step}: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
    finally:
        await context.close()
    out[k] = dict(times=times, errors=errors)


async def classroom(url: str, n: int) -> dict:
    from playwright.async_api import async_playwright

    results: dict[int, dict] = {}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            c0 = client_cpu()
            await asyncio.gather(*(student(browser, url, k, results) for k in range(n)))
            results["client_cpu"] = client_cpu() - c0
        finally:
            await browser.close()
    return results


# ----------------------------------------------------------------------------- protocol clients (no browser)
# The same steps over Streamlit's own websocket protocol (BackMsg / ForwardMsg protobufs, as the
# browser sends them): time from the request until the server's script_finished, with the 3
# plotly charts and the new caption among the deltas. No rendering, so at N = 30 this measures
# the server, not 30 Chromium renderers sharing its 2 cores.
async def _proto_run(ws, page_name: str, widget: tuple[str, int] | None = None) -> tuple[float, list]:
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    back = BackMsg()
    back.rerun_script.query_string = ""
    back.rerun_script.page_name = page_name
    if widget:
        state = back.rerun_script.widget_states.widgets.add()
        state.id, state.int_value = widget
    t0 = time.perf_counter()
    await ws.send(back.SerializeToString())
    elements = []
    while True:
        fm = ForwardMsg()
        fm.ParseFromString(await asyncio.wait_for(ws.recv(), STEP_TIMEOUT_MS / 1000))
        kind = fm.WhichOneof("type")
        if kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
            elements.append(fm.delta.new_element)
        elif kind == "script_finished":
            return time.perf_counter() - t0, elements


def _proto_errors(elements) -> list[str]:
    out = []
    for el in elements:
        kind = el.WhichOneof("type")
        if kind == "exception":
            out.append("exception: " + el.exception.message[:120])
        elif kind == "alert" and el.alert.format == 1:  # Alert.ERROR
            out.append("error box: " + el.alert.body[:120])
    return out


def _proto_check(elements, caption: str | None) -> None:
    charts = sum(1 for el in elements if el.WhichOneof("type") == "plotly_chart")
    if charts < GRAM_CHARTS:
        raise RuntimeError(f"{charts} plotly charts sent, expected {GRAM_CHARTS}")
    if caption and not any(el.WhichOneof("type") == "markdown" and caption in el.markdown.body for el in elements):
        raise RuntimeError(f"caption {caption!r} not sent")


async def proto_student(url: str, k: int, out: dict) -> None:
    import websockets

    times: dict[str, float] = {}
    errors: list[str] = []
    step = "landing"
    try:
        async with websockets.connect(url.replace("http", "ws") + "/_stcore/stream", subprotocols=["streamlit"],
                                      max_size=2**28, open_timeout=STEP_TIMEOUT_MS / 1000) as ws:
            times["landing"], els = await _proto_run(ws, "")
            errors += _proto_errors(els)
            step = "gram"
            times["gram"], els = await _proto_run(ws, "Gram_matrices")
            _proto_check(els, None)
            errors += _proto_errors(els)
            ids = {el.number_input.label: el.number_input.id for el in els if el.WhichOneof("type") == "number_input"}
            for step, label, value, caption in (("D=512", "D (random features)", 512, "D = 512"),
                                                ("seed", "Seed", 1 + k % 5, f"seed = {1 + k % 5}"),
                                                ("n=300", "n (points)", 300, "n = 300 points")):
                times[step], els = await _proto_run(ws, "Gram_matrices", (ids[label], value))
                _proto_check(els, caption)
                errors += _proto_errors(els)
    except Exception as exc:  # noqa: BLE001 - a timeout or a crash is the measurement
        errors.append(f"{step}: {type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}")
    out[k] = dict(times=times, errors=errors)


async def proto_classroom(url: str, n: int) -> dict:
    results: dict[int, dict] = {}
    await asyncio.gather(*(proto_student(url, k, results) for k in range(n)))
    results["client_cpu"] = float("nan")
    return results


# ----------------------------------------------------------------------------- report
def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(q * (len(v) - 1)))))]


STEPS = ("landing", "gram", "D=512", "seed", "n=300")


def run(port: int, sessions: list[int], client: str = "browser") -> tuple[list[dict], dict]:
    drive = classroom if client == "browser" else proto_classroom
    server = Server(port)
    rows = []
    try:
        warm = RssSampler(server)
        warm.start()
        asyncio.run(drive(server.url, 1))  # warm-up: imports, first compile; not reported
        warm.stop()
        idle_rss = server.rss()
        for n in sessions:
            load_before = os.getloadavg()
            sampler = RssSampler(server)
            rss0 = server.rss()
            cpu0 = server.cpu_split()
            sampler.start()
            t0 = time.perf_counter()
            results = asyncio.run(drive(server.url, n))
            client = results.pop("client_cpu", float("nan"))
            wall = time.perf_counter() - t0
            peak = sampler.stop()
            cpu1 = server.cpu_split()
            time.sleep(2)
            row = dict(N=n, wall=wall, rss0=rss0, peak=peak, rss_after=server.rss(),
                       cpu_main=cpu1[0] - cpu0[0], cpu_other=cpu1[1] - cpu0[1], cpu_client=client,
                       load_before=load_before, load_after=os.getloadavg(),
                       errors=[e for r in results.values() for e in r["errors"]],
                       failed_sessions=sum(1 for r in results.values() if r["errors"]))
            for s in STEPS:
                vals = [r["times"][s] for r in results.values() if s in r["times"]]
                row[s] = (pct(vals, 0.5), pct(vals, 0.95), len(vals))
            widget = [r["times"][s] for r in results.values() for s in ("D=512", "seed", "n=300") if s in r["times"]]
            row["widget"] = (pct(widget, 0.5), pct(widget, 0.95), len(widget))
            rows.append(row)
            print(format_row(row), flush=True)
            for e in row["errors"][:10]:
                print("   error:", e, flush=True)
    finally:
        server.stop()
    return rows, dict(idle_rss=idle_rss)


def mb(b: float) -> str:
    return f"{b / 2**20:,.0f}"


def format_row(r: dict) -> str:
    cells = [str(r["N"]), f"{len(r['errors'])} ({r['failed_sessions']} sessions)"]
    for s in (*STEPS, "widget"):
        p50, p95, k = r[s]
        cells.append(f"{p50:.1f} / {p95:.1f}" + ("" if k == r["N"] * (3 if s == "widget" else 1) else f" (n={k})"))
    cells += [f"{mb(r['rss0'])} → {mb(r['peak'])} → {mb(r['rss_after'])}",
              f"{r['cpu_main']:.1f} / {r['cpu_other']:.1f}", f"{r['cpu_client']:.0f}", f"{r['wall']:.0f}",
              f"{r['load_before'][0]:.1f} → {r['load_after'][0]:.1f}"]
    return "| " + " | ".join(cells) + " |"


HEADER = ("| N | errors | landing p50 / p95 s | Gram charts p50 / p95 s | D=512 p50 / p95 s | seed p50 / p95 s "
          "| n=300 p50 / p95 s | any widget change p50 / p95 s | server RSS MB (start → peak → after) "
          "| server CPU s (main thread / script threads) | browser CPU s | wall s | load avg (1 min) |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, nargs="+", default=[1, 10, 30])
    ap.add_argument("--port", type=int, default=8790)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "classroom.md"))
    ap.add_argument("--client", choices=("browser", "protocol"), default="browser",
                    help="browser: headless Chromium sessions (what students see); protocol: Streamlit's websocket "
                         "protocol without rendering (what the server can serve)")
    a = ap.parse_args()
    if max(a.sessions) > 60:
        raise SystemExit("at most 60 sessions: this is a classroom, not a load test of the machine")
    print(HEADER, flush=True)
    rows, extra = run(a.port, a.sessions, a.client)
    lines = [
        "# Classroom load benchmark",
        "",
        f"`python benchmarks/bench_classroom.py --client {a.client} --sessions {' '.join(map(str, a.sessions))}` on "
        f"{time.strftime('%Y-%m-%d %H:%M %Z')}; {os.cpu_count()} cores, "
        f"{psutil.virtual_memory().total / 2**30:.0f} GiB, Streamlit server and all "
        f"{'Chromium sessions' if a.client == 'browser' else 'protocol clients'} on the same "
        "machine, which other developers' jobs share (see the load average).",
        "",
        f"Each session: landing page, then /Gram_matrices ({GRAM_CHARTS} plotly chart(s) in its default view), then three sidebar changes "
        "(D = 512, seed = 1 + k mod 5, n = 300), each timed from Enter until the caption shows the value and the "
        "chart is drawn again" + ("" if a.client == "browser" else
                                      " (protocol client: until the server's script_finished, with the plotly "
                                      "chart and the caption among the deltas; nothing is rendered)") +
        ". Times are seconds, p50 / p95 over sessions.",
        f"Idle server RSS after a warm-up session: {mb(extra['idle_rss'])} MB.",
        "",
        HEADER,
        *[format_row(r) for r in rows],
        "",
    ]
    for r in rows:
        if r["errors"]:
            lines.append(f"Errors at N = {r['N']}:")
            lines += [f"- {e}" for e in r["errors"][:20]]
            lines.append("")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text("\n".join(lines) + "\n")
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
