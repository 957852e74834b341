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


def measure(n: int, window: float, seed: int, processes: int, arrival: float = ARRIVAL, workers: int = -1) -> dict:
    """One burst on a fresh server (``rkcore-app --processes N`` with its local Dask cluster, one worker per
    core unless ``workers`` says otherwise); the CPU is read when the burst starts and when it is over, so
    CPU per change is the burst's own (the D changes), split app / nginx / Dask."""
    with StreamlitServer(processes=processes, workers=workers) as server:
        sampler = PeakSampler(server)
        sampler.start()
        results: list[tuple[Action, float]] = []
        cpu_at: list[dict[str, float]] = []

        async def class_() -> None:
            burst_at = time.monotonic() + 1.5 * arrival + 8.0  # everyone has landed and set its seed by then

            async def read_cpu_at_burst() -> None:
                await asyncio.sleep(max(0.0, burst_at - time.monotonic()))
                cpu_at.append(await asyncio.to_thread(server.cpu_by_role))

            await asyncio.gather(read_cpu_at_burst(), *(
                burst_student(server.url, k, random.Random(f"{seed}:{k}"), burst_at, window, results, arrival)
                for k in range(n)))

        load_before, rss_start = os.getloadavg(), server.rss_tree()
        asyncio.run(class_())
        peak = sampler.stop()
        cpu = {role: t - cpu_at[0][role] for role, t in server.cpu_by_role().items()}
    return burst_row(results, dict(N=n, processes=processes, window=window, peak=peak, peak_roles=sampler.at_peak,
                                   rss_start=rss_start, cpu_roles=cpu, load_before=load_before[0],
                                   load_after=os.getloadavg()[0]))


def burst_row(results: list[tuple[Action, float]], row: dict) -> dict:
    """The burst's figures from each student's D change (its action, the monotonic time it was sent)."""
    charted = [(a, sent) for a, sent in results if a.charted]
    seconds = [a.seconds for a, _ in charted]
    first = min((sent for _, sent in results if sent == sent), default=float("nan"))
    last = max((sent + a.seconds for a, sent in charted), default=float("nan"))
    n = row["N"]
    return row | dict(charted=len(charted), p50=pct(seconds, 0.5), p95=pct(seconds, 0.95),
                      max=max(seconds, default=float("nan")), to_last=last - first if len(charted) == n else float("inf"),
                      errors=[e for a, _ in results for e in a.errors], gated=sum(a.gated for a, _ in results),
                      cpu_per_change=sum(row["cpu_roles"].values()) / n,
                      app_cpu_per_change=row["cpu_roles"]["app"] / n, dask_cpu_per_change=row["cpu_roles"]["dask"] / n)


HEADER = ("| students | app processes | window s | charted | change → chart p50 / p95 / max s | first change → last "
          "chart s | errors | gated | peak RSS GB, all processes (app / nginx / Dask at the peak) | server CPU s per D "
          "change (app / nginx / Dask) | load (before → after) |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|")
LAST_CHART_TARGET = 15.0  # seconds from the first change to the last student's chart (issue 37, Done when)
DATA = "burst-data"  # the HTML comment holding the row's figures, read by capacity_plan.py


def format_row(r: dict) -> str:
    gb = lambda b: f"{b / 2**30:.2f}"  # noqa: E731
    roles, cpu, n = r["peak_roles"], r["cpu_roles"], r["N"]
    return (f"| {n} | {r['processes']} | {r['window']:g} | {r['charted']} | {r['p50']:.2f} / {r['p95']:.2f} / "
            f"{r['max']:.2f} | **{r['to_last']:.1f}** | {len(r['errors'])} | {r['gated']} | **{gb(r['peak'])}** "
            f"({gb(roles.get('app', 0))} / {gb(roles.get('nginx', 0))} / {gb(roles.get('dask', 0))}) | "
            f"{r['cpu_per_change']:.3f} ({cpu['app'] / n:.3f} / {cpu['nginx'] / n:.3f} / {cpu['dask'] / n:.3f}) | "
            f"{r['load_before']:.1f} → {r['load_after']:.1f} |")


def verdict(r: dict) -> str:
    checks = [(r["to_last"] <= LAST_CHART_TARGET, f"the last chart {r['to_last']:.1f} s after the first change ≤ "
               f"{LAST_CHART_TARGET:g} s"), (r["charted"] == r["N"], f"{r['charted']} of {r['N']} students charted"),
              (not r["errors"], f"{len(r['errors'])} errors = 0")]
    return "; ".join(("met: " if ok else "NOT met: ") + text for ok, text in checks) + "."


def row_data(r: dict) -> str:
    """The row's figures as one HTML comment: what capacity_plan.py reads."""
    import json

    keys = ("N", "processes", "window", "charted", "p50", "p95", "max", "to_last", "gated", "peak", "peak_roles",
            "rss_start", "cpu_roles", "cpu_per_change", "load_before", "load_after")
    return f"<!-- {DATA} {json.dumps({k: r[k] for k in keys} | {'errors': len(r['errors'])}, sort_keys=True)} -->"


def burst_title(students: int, window: float, processes: int, workers: int = -1) -> str:
    """The section's title: the configuration, so a re-run of the same one replaces it."""
    dask = {-1: ", one Dask worker per core", 0: ", computing in the app process"}.get(workers, f", {workers} Dask workers")
    return f"{students} students within {window:g} s, {processes} app process(es){dask}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=120)
    ap.add_argument("--window", type=float, default=5.0, help="seconds over which the students change D")
    ap.add_argument("--processes", type=int, default=1, help="app processes behind nginx (rkcore-app --processes N)")
    ap.add_argument("--workers", type=int, default=-1,
                    help="Dask worker processes of rkcore-app's local cluster (-1, the default: one per core; 0: none)")
    ap.add_argument("--seed", type=int, default=0)
    add_output_arguments(ap, "burst.md")
    args = ap.parse_args(argv)
    if not 1 <= args.students <= 150:
        raise SystemExit("1 to 150 students: a lecture hall, not a load test of the machine")
    if args.quick:
        args.students = 3
    run = Run.start(args, None if argv is None else [__file__, *argv])
    row = measure(args.students, args.window, args.seed, args.processes, 5.0 if args.quick else ARRIVAL, args.workers)
    print(HEADER, format_row(row), verdict(row), sep="\n", flush=True)
    for e in row["errors"][:10]:
        print("   error:", e, flush=True)
    run.write(burst_title(args.students, args.window, args.processes, args.workers),
              "\n".join([HEADER, format_row(row), "", verdict(row), "",
                         "CPU per change: the server's CPU seconds from the burst's start to its end over the students "
                         "(each changes D once), by role: the app processes and their launcher, nginx, the Dask "
                         "cluster (scheduler, nannies, workers). Peak RSS: all these processes together, sampled every "
                         "0.25 s from the server's start (the students' arrival included).", "", row_data(row)]),
              preamble="# A synchronized burst (issue 37): the whole class changes D at the lecturer's word")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
