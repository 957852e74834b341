"""A browser sanity check of the classroom benchmark: N <= 5 headless Chromium sessions (Playwright) open
Home, then the Gram page, then change D, the seed and n in the sidebar, each timed until the chart is drawn.

    python benchmarks/app/bench_classroom.py --browser 5

The renderers run on the server's own 2 cores (at 30 sessions they used 111 CPU-s against the server's 12,
issue 26): these times include the browsers' work and say only that a real browser gets its charts.
The capacity of the server is measured by bench_classroom.py's protocol students.
"""
from __future__ import annotations

import asyncio
import time

import psutil

from benchmarks.app.streamlit_server import StreamlitServer

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




def main(n: int) -> int:
    with StreamlitServer() as server:
        started = time.perf_counter()
        results = asyncio.run(classroom(server.url, n))
        wall = time.perf_counter() - started
    client = results.pop("client_cpu")
    steps = ("landing", "gram", "D=512", "seed", "n=300")
    print(f"{n} browser sessions (sharing the server's cores), {wall:.0f} s, browsers' CPU {client:.0f} s")
    for step in steps:
        values = sorted(r["times"][step] for r in results.values() if step in r["times"])
        print(f"  {step}: " + (f"median {values[len(values) // 2]:.1f} s, max {values[-1]:.1f} s" if values else "-"))
    errors = [e for r in results.values() for e in r["errors"]]
    print(f"  errors: {len(errors)}", *errors[:10], sep="\n  ")
    return 0
