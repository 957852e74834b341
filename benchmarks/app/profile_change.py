"""CPU seconds per widget change on the study pages, split by process, and where the app process's go.

    python benchmarks/app/profile_change.py [--changes 12] [--repeats 2] [--before /tmp/checkout] [--workers 2]

A real server (``rkcore-app`` with its local Dask cluster, as a class is served: one app process, the
scheduler's process, its worker processes), one session over the websocket without a browser (the protocol of
bench_classroom.py): Home, then each study page the classroom benchmark uses (Gram matrices, Error bounds,
Distributions and variance), one warm-up change, then ``--changes`` widget changes with the classroom's values
(seed, n, degree, D, trials, maps, SCRK, drawn from a seeded stream: mostly new settings, so mostly computed).
Per page it reports the CPU seconds per change of the app process, of the Dask workers and of the scheduler
(psutil, user + system), and, from a CPU-weighted stack sampler running in the app process only
(benchmarks/app/cpu_sampler: a benchmark-only ``sitecustomize``, never part of the app), the phases of the app
process's CPU: our code, plotly figure building, plotly JSON, protobuf, streamlit, the websocket server.

``--before DIR``: a checkout of an earlier version measured the same way; versions alternate in every repeat
(the machine is shared), each on a fresh server, and the table gives medians over repeats.
Writes the section into benchmarks/results/cpu_per_change.md.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]  # benchmarks/<subject>/this file
sys.path.insert(0, str(REPO))

from benchmarks.app.bench_classroom import CHANGES, STUDY_PAGES, Action, _rerun  # noqa: E402
from benchmarks.app.streamlit_server import StreamlitServer  # noqa: E402
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

SAMPLER = Path(__file__).resolve().parent / "cpu_sampler"
TITLE = "CPU seconds per widget change, by process and by phase (`python benchmarks/app/profile_change.py`)"


def process_cpu(server: StreamlitServer) -> dict[str, float]:
    """CPU seconds so far of the app process, the cluster's process (scheduler and nannies) and its workers."""
    root = psutil.Process(server.proc.pid)
    totals = {"app": 0.0, "scheduler": 0.0, "workers": 0.0}

    def cpu(p) -> float:
        t = p.cpu_times()
        return t.user + t.system

    totals["app"] = cpu(root)
    for child in root.children():
        try:
            if "serve_local_cluster" in " ".join(child.cmdline()):
                totals["scheduler"] += cpu(child)
                totals["workers"] += sum(cpu(w) for w in child.children(recursive=True))
            else:
                totals["scheduler"] += cpu(child)  # anything else the server started (none today)
        except psutil.Error:
            pass
    return totals


def sampled(folder: Path, pid: int) -> dict:
    """The app process's sampler totals so far (written every second)."""
    path = folder / f"{pid}.json"
    return json.loads(path.read_text()) if path.exists() else {"phases": {}, "script": {}, "functions": {}}


def diff(after: dict, before: dict) -> dict:
    return {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}


async def drive(server: StreamlitServer, folder: Path, changes: int, seed: int) -> dict[str, dict]:
    """One session: every study page, a warm-up change then ``changes`` measured ones; per page the deltas."""
    import websockets

    rng = random.Random(seed)
    out, current = {}, {}
    async with websockets.connect(server.url.replace("http", "ws") + "/_stcore/stream", subprotocols=["streamlit"],
                                  max_size=2**28, open_timeout=120) as ws:
        await _rerun(ws, Action(0, "landing", "Home", ""), "")
        for page in STUDY_PAGES:
            widgets = await _rerun(ws, Action(0, "page", page, page), page)

            async def change(record: list) -> None:
                nonlocal widgets
                label = rng.choice(sorted(set(widgets) & set(CHANGES)))
                value = CHANGES[label](rng)
                while value == current.get((page, label)):  # a real change (the same value reruns from caches)
                    value = CHANGES[label](rng)
                current[(page, label)] = value
                action = Action(0, "widget", page, f"{label} = {value}")
                widgets = await _rerun(ws, action, page, (widgets[label][1], value, widgets[label][0])) or widgets
                record.append(action)

            await change([])  # warm-up: this page's first imports and compiles
            await asyncio.sleep(1.5)
            cpu0, prof0 = process_cpu(server), sampled(folder, server.proc.pid)
            actions: list = []
            started = time.perf_counter()
            for _ in range(changes):
                await change(actions)
            wall = time.perf_counter() - started
            await asyncio.sleep(1.5)  # the sampler writes every second
            cpu1, prof1 = process_cpu(server), sampled(folder, server.proc.pid)
            out[page] = {"cpu": diff(cpu1, cpu0), "sampler": prof1.get("sampler_cpu", 0) - prof0.get("sampler_cpu", 0),
                         "phases": diff(prof1["phases"], prof0["phases"]),
                         "script": diff(prof1["script"], prof0["script"]),
                         "functions": diff(prof1["functions"], prof0["functions"]), "wall": wall,
                         "entries": diff(prof1.get("entries", {}), prof0.get("entries", {})),
                         "changes": [a.what for a in actions], "errors": [e for a in actions for e in a.errors],
                         "charted": sum(a.charted for a in actions), "n": len(actions)}
    return out


def measure(repo: Path, changes: int, seed: int, workers: int) -> dict[str, dict]:
    with tempfile.TemporaryDirectory(prefix="rk-cpu-") as folder:
        env = {"PYTHONPATH": f"{SAMPLER}{os.pathsep}{repo}", "RKCORE_CPU_PROFILE": folder}
        with StreamlitServer(env=env, repo=repo, workers=workers) as server:
            return asyncio.run(drive(server, Path(folder), changes, seed))


def median_of(runs: list[dict], page: str, part: str, key: str) -> float:
    return statistics.median(r[page][part].get(key, 0.0) / r[page]["n"] for r in runs)


def report(samples: dict[str, list[dict]], args) -> str:
    versions = list(samples)
    lines = ["| page | version | app process CPU s / change | workers | scheduler | total | wall s / change "
             "| charted / changes |", "|---|---|---|---|---|---|---|---|"]
    for page in STUDY_PAGES:
        for version in versions:
            runs = samples[version]
            app, workers, sched = (median_of(runs, page, "cpu", k) for k in ("app", "workers", "scheduler"))
            total = statistics.median(sum(r[page]["cpu"].values()) / r[page]["n"] for r in runs)
            wall = statistics.median(r[page]["wall"] / r[page]["n"] for r in runs)
            charted = sum(r[page]["charted"] for r in runs)
            lines.append(f"| {page.replace('_', ' ')} | {version} | {app:.3f} | {workers:.3f} | {sched:.3f} "
                         f"| {total:.3f} | {wall:.2f} | {charted} / {sum(r[page]['n'] for r in runs)} |")
    for version in versions:
        runs = samples[version]
        phases = sorted({p for r in runs for page in STUDY_PAGES for p in r[page]["phases"]})
        lines += ["", f"Where the app process's CPU goes ({version}; sampled, CPU s per change, median over repeats; "
                  "'in the rerun' is the part inside the script's run):", "",
                  "| phase | " + " | ".join(p.replace("_", " ") for p in STUDY_PAGES) + " |",
                  "|---|" + "---|" * len(STUDY_PAGES)]
        for phase in phases:
            cells = [f"{median_of(runs, page, 'phases', phase):.3f} (in the rerun "
                     f"{median_of(runs, page, 'script', phase):.3f})" for page in STUDY_PAGES]
            lines.append(f"| {phase} | " + " | ".join(cells) + " |")
        top: dict[str, float] = {}
        for r in runs:
            for page in STUDY_PAGES:
                for fn, s in r[page]["functions"].items():
                    top[fn] = top.get(fn, 0.0) + s / r[page]["n"] / len(runs) / len(STUDY_PAGES)
        entries: dict[str, dict[str, float]] = {}
        for r in runs:
            for page in STUDY_PAGES:
                for fn, s in r[page].get("entries", {}).items():
                    entries.setdefault(fn, {}).setdefault(page, 0.0)
                    entries[fn][page] += s / r[page]["n"] / len(runs)
        lines += ["", f"The rerun's CPU by the app's outermost call under the page script ({version}; CPU s per "
                  "change, mean over repeats; '-': Streamlit's own, outside our calls):", "",
                  "| call | " + " | ".join(p.replace("_", " ") for p in STUDY_PAGES) + " |",
                  "|---|" + "---|" * len(STUDY_PAGES)]
        for fn, by_page in sorted(entries.items(), key=lambda kv: -sum(kv[1].values()))[:14]:
            lines.append(f"| `{fn}` | " + " | ".join(f"{by_page.get(p, 0.0):.4f}" for p in STUDY_PAGES) + " |")
        lines += ["", f"Innermost functions of the app process ({version}; CPU s per change, mean over pages):", ""]
        lines += [f"- {s:.4f} `{fn}`" for fn, s in sorted(top.items(), key=lambda kv: -kv[1])[:15]]
        sampler = statistics.median(r[page]["sampler"] / r[page]["n"] for r in runs for page in STUDY_PAGES)
        lines += ["", f"The sampler's own CPU (in the app process's figures above): {sampler:.4f} s per change."]
        errors = [f"{page}: {e}" for r in runs for page in STUDY_PAGES for e in r[page]["errors"]]
        if errors:
            lines += ["", f"Errors ({version}):", *[f"- {e}" for e in errors[:10]]]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", type=int, default=12, help="measured changes per page")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="Dask worker processes (0: compute in the app process)")
    ap.add_argument("--before", type=Path, help="a checkout of the earlier version, measured alternately")
    ap.add_argument("--label", default="after", help="this checkout's name in the table")
    ap.add_argument("--dump", type=Path, help="write the raw samples as JSON here")
    add_output_arguments(ap, "cpu_per_change.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.changes, args.repeats = 2, 1
    run = Run.start(args, None if argv is None else [__file__, *argv])
    checkouts = {**({"before": args.before.resolve()} if args.before else {}), args.label: REPO}
    load = os.getloadavg()
    samples: dict[str, list[dict]] = {v: [] for v in checkouts}
    for repeat in range(args.repeats):
        for version, repo in checkouts.items():
            samples[version].append(measure(repo, args.changes, args.seed + repeat, args.workers))
            print(version, repeat, {p: round(sum(s["cpu"].values()) / s["n"], 3)
                                    for p, s in samples[version][-1].items()}, flush=True)
    if args.dump:
        args.dump.write_text(json.dumps(samples))
    body = (f"{args.changes} changes per page after a warm-up change, {args.repeats} repeats "
            f"(versions alternating, each on a fresh server), {args.workers} Dask workers, {os.cpu_count()} cores; "
            f"load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, at end "
            + " ".join(f"{v:.2f}" for v in os.getloadavg()) + " (6 agents share the machine).\n\n"
            + report(samples, args))
    run.write(TITLE, body, preamble="# CPU per widget change (issue 37, benchmark (d))")
    print(body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
