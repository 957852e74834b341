"""The lecturer says "now set D = 256": N students change the same widget within a few seconds.

    python benchmarks/app/bench_burst.py [--students 120] [--window 5] [--processes 2] [--seed 0]

Every student is a real Streamlit session over the websocket protocol (as in bench_classroom.py, whose
client this reuses; each with its own nginx route cookie when ``--processes`` > 1). The students
arrive over ARRIVAL seconds and open the Gram matrices page, each sets a seed of its own (so no two ask
for the same result and the server's cache cannot answer for them), then all change "D (random
features)" to 256 at moments spread uniformly over ``--window`` seconds. Reported (a section of
benchmarks/results/burst.md): p50 / p95 / max of change -> new chart, the time from the first change
to the last student's chart, errors, gates, peak RSS of the server's processes, server CPU seconds
per change, the load average.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout

from benchmarks.app.bench_classroom import RUN_TIMEOUT, Action, PeakSampler, _rerun, pct  # noqa: E402
from benchmarks.app.streamlit_server import StreamlitServer  # noqa: E402
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

PAGE = "Gram_matrices"
WIDGET, VALUE = "D (random features)", 256
ARRIVAL = 60.0


async def burst_student(url: str, k: int, rng: random.Random, burst_at: float, window: float,
                        results: list[tuple[Action, float]], arrival: float = ARRIVAL) -> None:
    import websockets

    await asyncio.sleep(rng.uniform(0, arrival))
    route = f"burst-{k}-{rng.randrange(10**9)}"
    action = Action(k, "widget", PAGE, f"{WIDGET} = {VALUE}")
    sent = float("nan")
    try:
        async with websockets.connect(url.replace("http", "ws") + "/_stcore/stream", subprotocols=["streamlit"],
                                      max_size=2**28, open_timeout=RUN_TIMEOUT,
                                      additional_headers={"Cookie": f"rkcore_route={route}"}) as ws:
            widgets = await _rerun(ws, Action(k, "page", PAGE, PAGE), PAGE)
            seed = Action(k, "widget", PAGE, "Seed")
            widgets = await _rerun(ws, seed, PAGE, (widgets["Seed"][1], 1000 + k, widgets["Seed"][0])) or widgets
            await asyncio.sleep(max(0.0, burst_at + rng.uniform(0, window) - time.monotonic()))
            sent = time.monotonic()
            await _rerun(ws, action, PAGE, (widgets[WIDGET][1], VALUE, widgets[WIDGET][0]))
    except Exception as exc:  # noqa: BLE001 - a lost session is a result
        action.errors.append(f"session lost: {type(exc).__name__}: {str(exc)[:160]}")
    if not action.charted and not action.gated and not action.errors:
        action.errors.append("no chart")
    results.append((action, sent))


def measure(n: int, window: float, seed: int, processes: int, arrival: float = ARRIVAL) -> dict:
    with StreamlitServer(processes=processes) as server:
        sampler = PeakSampler(server)
        sampler.start()
        results: list[tuple[Action, float]] = []

        async def class_() -> None:
            burst_at = time.monotonic() + 1.5 * arrival + 8.0  # everyone has landed and set its seed by then
            await asyncio.gather(*(burst_student(server.url, k, random.Random(f"{seed}:{k}"), burst_at, window,
                                                 results, arrival) for k in range(n)))

        cpu_before, load_before = server.cpu_seconds(), os.getloadavg()
        asyncio.run(class_())
        peak = sampler.stop()
        cpu = server.cpu_seconds() - cpu_before
    charted = [(a, sent) for a, sent in results if a.charted]
    seconds = [a.seconds for a, _ in charted]
    first = min((sent for _, sent in results if sent == sent), default=float("nan"))
    last = max((sent + a.seconds for a, sent in charted), default=float("nan"))
    return dict(N=n, processes=processes, window=window, charted=len(charted), p50=pct(seconds, 0.5),
                p95=pct(seconds, 0.95), max=max(seconds, default=float("nan")), to_last=last - first,
                errors=[e for a, _ in results for e in a.errors], gated=sum(a.gated for a, _ in results),
                peak=peak, cpu_per_change=cpu / max(3 * n, 1), load_before=load_before[0], load_after=os.getloadavg()[0])


HEADER = ("| students | app processes | window s | charted | change → chart p50 / p95 / max s | first change → last "
          "chart s | errors | gated | peak RSS GB | server CPU s per change | load (before → after) |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|")


def format_row(r: dict) -> str:
    return (f"| {r['N']} | {r['processes']} | {r['window']:g} | {r['charted']} | {r['p50']:.2f} / {r['p95']:.2f} / "
            f"{r['max']:.2f} | {r['to_last']:.1f} | {len(r['errors'])} | {r['gated']} | {r['peak'] / 2**30:.2f} | "
            f"{r['cpu_per_change']:.2f} | {r['load_before']:.1f} → {r['load_after']:.1f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=120)
    ap.add_argument("--window", type=float, default=5.0, help="seconds over which the students change D")
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    add_output_arguments(ap, "burst.md")
    args = ap.parse_args(argv)
    if not 1 <= args.students <= 150:
        raise SystemExit("1 to 150 students: a lecture hall, not a load test of the machine")
    if args.quick:
        args.students = 3
    run = Run.start(args, None if argv is None else [__file__, *argv])
    row = measure(args.students, args.window, args.seed, args.processes, 5.0 if args.quick else ARRIVAL)
    print(HEADER, format_row(row), sep="\n", flush=True)
    for e in row["errors"][:10]:
        print("   error:", e, flush=True)
    run.write(f"{args.students} students within {args.window:g} s, {args.processes} app process(es)",
              "\n".join([HEADER, format_row(row), "",
                         "CPU per change counts the three script runs of each student (page, seed, D)."]),
              preamble="# A synchronized burst (issue 37): the whole class changes D at the lecturer's word")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
