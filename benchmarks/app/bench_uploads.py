"""Memory of the whole server while eight students upload a 59 MB CSV each, at once (issue 37, benchmark (e)).

    python benchmarks/app/bench_uploads.py                       # after: rkcore-app and its worker processes
    python benchmarks/app/bench_uploads.py --before DIR          # also the code checked out in DIR (in process)
    python benchmarks/app/bench_uploads.py --quick --out F       # 2 students, 1 MB files: the suite's smoke run

Each student is a Streamlit session over the websocket (as in bench_classroom.py): it opens the Gram page,
chooses the upload as its data set, asks for an upload URL, PUTs its own CSV (generated here, never stored:
numeric cells of 3 characters, about 15 million cells, the densest valid file of that size) and reruns with it,
as a browser does; all eight start together. The server runs with ``RKCORE_SERVER_MEMORY=1e9`` (a 1 GB budget).
Reported: the peak resident memory of all the server's processes together (app processes, Dask scheduler and
workers, nginx), sampled every 0.25 s; how many students got their charts, how many were refused (the server's
upload bound answers 413; the page says why) and the errors; the time from the upload to the charts.
The target: the peak within the budget + 0.5 GB.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout: benchmarks/<subject>/this file

from benchmarks.app.bench_classroom import DATA_UPLOADER, Action, Uploaded, _rerun, pct  # noqa: E402
from benchmarks.app.classroom_upload import upload_file  # noqa: E402
from benchmarks.app.streamlit_server import StreamlitServer  # noqa: E402
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

BUDGET = 10**9
#: The issue's target: all processes together within the memory budget plus this.
ALLOWANCE = 0.5 * 10**9
GB = 1e9
PAGE = "Gram_matrices"
RUN_TIMEOUT = 600.0
#: Seconds between two samples of the processes' memory (a parse's peak lasts about a second).
SAMPLE_SECONDS = 0.03
#: Seconds after the last student's charts before "after" is read.
AFTER_SECONDS = 5.0


def dense_csv(megabytes: float, seed: int) -> bytes:
    """A valid numeric CSV of about ``megabytes`` MB: 20 columns of one-decimal numbers and a 0/1 label."""
    import numpy as np

    rng = np.random.default_rng(seed)
    rows = int(megabytes * 1e6 / (20 * 4 + 2))
    values = rng.integers(0, 100, size=(rows, 20)) / 10
    lines = ["\n".join(",".join(f"{v:.1f}" for v in row) + f",{int(row[0] > 5)}" for row in values[k:k + 10_000])
             for k in range(0, rows, 10_000)]
    return (",".join(f"x{j}" for j in range(20)) + ",label\n" + "\n".join(lines) + "\n").encode()


async def _upload(ws, base: str, session: str, name: str, content: bytes, route: str) -> Uploaded:
    return await upload_file(ws, base, session, name, content, route, RUN_TIMEOUT)


async def student(url: str, k: int, content: bytes, start: asyncio.Event, out: list[dict]) -> None:
    import websockets

    route = f"uploader-{k}-{random.getrandbits(32)}"
    row = {"student": k, "refused": False, "charted": False, "errors": [], "seconds": float("nan")}
    try:
        async with websockets.connect(url.replace("http", "ws") + "/_stcore/stream", subprotocols=["streamlit"],
                                      max_size=2**28, open_timeout=RUN_TIMEOUT,
                                      additional_headers={"Cookie": f"rkcore_route={route}"}) as ws:
            landing = Action(k, "landing", PAGE, "")
            widgets = await _rerun(ws, landing, PAGE)
            choose = Action(k, "choose upload", PAGE, "Dataset = upload")
            option = next(o for o in widgets["Dataset"][2] if "pload" in o)
            widgets = await _rerun(ws, choose, PAGE, (widgets["Dataset"][1], option, "selectbox")) or widgets
            uploader = widgets[DATA_UPLOADER][1]
            await start.wait()  # every student uploads at the same moment
            t0 = time.perf_counter()
            try:
                file = await _upload(ws, url, landing.session, f"class_{k}.csv", content, route)
            except OSError as exc:  # urllib's HTTPError: the server's upload bound (413) says why
                row["refused"] = True
                row["errors"].append(f"upload refused: {str(exc)[:120]}")
                out.append(row)
                return
            action = Action(k, "upload", PAGE, file.name)
            await _rerun(ws, action, PAGE, (uploader, file, "file_uploader"))
            row.update(charted=action.charted, seconds=time.perf_counter() - t0, errors=action.errors)
    except Exception as exc:  # noqa: BLE001 - a lost session is a result
        row["errors"].append(f"session lost: {type(exc).__name__}: {str(exc)[:160]}")
    out.append(row)


async def _class(url: str, n: int, content: bytes) -> list[dict]:
    start, out = asyncio.Event(), []
    tasks = [asyncio.create_task(student(url, k, content, start, out)) for k in range(n)]
    await asyncio.sleep(20.0 if n > 2 else 8.0)  # every session opened its page and chose the upload
    start.set()
    await asyncio.gather(*tasks)
    return out


def role(process) -> str:
    """What a server process is, from its command line: app, cluster (scheduler and nannies), worker, nginx."""
    try:
        line = " ".join(process.cmdline())
    except Exception:  # noqa: BLE001 - a process that ended meanwhile
        return "other"
    if "nginx" in line:
        return "nginx"
    if "serve_local_cluster" in line:
        return "cluster"
    if "multiprocessing" in line or "spawn_main" in line or "forkserver" in line:
        return "worker"
    return "app"


class FastPeakSampler(threading.Thread):
    """The peak of the sum of the RSS of all the server's processes, sampled every SAMPLE_SECONDS (the process list
    refreshed every second), with each process's RSS at that peak and each process's own highest RSS."""

    def __init__(self, server: StreamlitServer):
        super().__init__(daemon=True)
        self.server, self._halt = server, threading.Event()
        self.peak, self.at_peak, self.highest, self.roles = 0, {}, {}, {}

    def run(self) -> None:
        import psutil

        processes, listed = [], 0.0
        while not self._halt.is_set():
            if time.monotonic() - listed > 1.0:
                try:
                    processes, listed = self.server._processes(), time.monotonic()
                except psutil.Error:
                    return
                for p in processes:
                    self.roles.setdefault(p.pid, role(p))
            sample = {}
            for p in processes:
                try:
                    sample[p.pid] = p.memory_info().rss
                except psutil.Error:
                    pass
            total = sum(sample.values())
            if total > self.peak:
                self.peak, self.at_peak = total, sample
            for pid, rss in sample.items():
                self.highest[pid] = max(self.highest.get(pid, 0), rss)
            time.sleep(SAMPLE_SECONDS)

    def stop(self) -> int:
        self._halt.set()
        self.join(timeout=5)
        return self.peak

    def by_role(self, sample: dict[int, int]) -> dict[str, list[int]]:
        """RSS per role (each role's processes, largest first)."""
        out: dict[str, list[int]] = {}
        for pid, rss in sample.items():
            out.setdefault(self.roles.get(pid, "other"), []).append(rss)
        return {r: sorted(v, reverse=True) for r, v in out.items()}


def measure(label: str, n: int, content: bytes, *, repo: Path | None, processes: int, workers: int | None,
            extra_env: dict[str, str] | None = None, budget: int = BUDGET) -> dict:
    env = {"RKCORE_SERVER_MEMORY": str(budget), **(extra_env or {})}
    options = {"repo": repo} if repo is not None else {}
    with StreamlitServer(env=env, processes=processes, workers=workers, **options) as server:
        rss_start = server.rss_tree()
        sampler = FastPeakSampler(server)
        sampler.start()
        load_before = os.getloadavg()[0]
        rows = asyncio.run(_class(server.url, n, content))
        peak = sampler.stop()
        time.sleep(AFTER_SECONDS)  # what the server keeps once the uploads are charted
        rss_end = server.rss_tree()
        log = server.log_text()
    charted = [r["seconds"] for r in rows if r["charted"]]
    return dict(label=label, n=n, budget=budget, rss_start=rss_start, peak=peak, rss_end=rss_end, load=(load_before, os.getloadavg()[0]),
                charted=len(charted), refused=sum(r["refused"] for r in rows), p50=pct(charted, 0.5),
                max=max(charted, default=float("nan")), errors=[e for r in rows for e in r["errors"] if not r["refused"]],
                tracebacks=log.count("Traceback"), at_peak=sampler.by_role(sampler.at_peak),
                highest=sampler.by_role(sampler.highest))


HEADER = ("| server | students | at rest | peak, all processes | after | budget + 0.5 GB | charted | refused (413) | "
          "upload → charts p50 / max | errors | load |\n|---|---|---|---|---|---|---|---|---|---|---|")


def format_row(r: dict) -> str:
    verdict = "within" if r["peak"] <= r["budget"] + ALLOWANCE else "over"
    return (f"| {r['label']} | {r['n']} | {r['rss_start'] / GB:.2f} GB | **{r['peak'] / GB:.2f} GB** | "
            f"{r['rss_end'] / GB:.2f} GB | {verdict} | {r['charted']} | {r['refused']} | {r['p50']:.1f} / {r['max']:.1f} s | "
            f"{len(r['errors'])} | {r['load'][0]:.1f} → {r['load'][1]:.1f} |")


ROLES = ("app", "cluster", "worker", "nginx", "other")
SPLIT_HEADER = ("| server | at the peak: " + " | ".join(ROLES) + " | each process's own highest: "
                + " | ".join(ROLES) + " |\n|---|" + "---|" * (2 * len(ROLES)))


def _gb(values: list[int] | None) -> str:
    return " + ".join(f"{v / GB:.2f}" for v in values) if values else "-"


def format_split(r: dict) -> str:
    """Where the peak goes: each role's processes' RSS (GB) at the sampled peak of the sum, and each one's own highest
    (the highest values need not coincide)."""
    return (f"| {r['label']} | " + " | ".join(_gb(r["at_peak"].get(k)) for k in ROLES) + " | "
            + " | ".join(_gb(r["highest"].get(k)) for k in ROLES) + " |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=8)
    ap.add_argument("--megabytes", type=float, default=59.0)
    ap.add_argument("--processes", type=int, default=1, help="app processes (rkcore-app --processes N)")
    ap.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    ap.add_argument("--before", type=Path, default=None,
                    help="a checkout of the code before (e.g. `git worktree add DIR <commit>`): measured too, as "
                         "`streamlit run serve.py` (its computations in the app process)")
    ap.add_argument("--title", default="", help="a note appended to the section's title (e.g. 'before')")
    ap.add_argument("--budget", type=float, default=BUDGET, help="RKCORE_SERVER_MEMORY in bytes (default 1e9)")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="an environment variable for the server (an experiment: e.g. MALLOC_ARENA_MAX=2)")
    add_output_arguments(ap, "uploads.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.students, args.megabytes, args.before = 2, 1.0, None
    run = Run.start(args, None if argv is None else [__file__, *argv])
    content = dense_csv(args.megabytes, 0)
    print(f"{len(content) / 1e6:.1f} MB per file", HEADER, sep="\n", flush=True)
    rows = []
    if args.before is not None:
        rows.append(measure(f"before ({args.before.name}): one process, in process", args.students, content,
                            repo=args.before.resolve(), processes=1, workers=None, budget=int(args.budget)))
        print(format_row(rows[-1]), flush=True)
    workers = args.workers if args.workers is not None else "as many as the budget pays for, at most one per core"
    with_env = f", {' '.join(args.env)}" if args.env else ""
    rows.append(measure(f"rkcore-app --processes {args.processes}, workers: {workers}{with_env}", args.students, content,
                        repo=None, processes=args.processes, workers=args.workers if args.workers is not None else -1,
                        extra_env=dict(item.split("=", 1) for item in args.env), budget=int(args.budget)))
    print(format_row(rows[-1]), format_split(rows[-1]), sep="\n", flush=True)
    body = "\n".join([
        f"{args.students} students upload a {len(content) / 1e6:.1f} MB CSV each at the same moment "
        f"(RKCORE_SERVER_MEMORY={args.budget:g}: a {args.budget / GB:g} GB budget; target: the peak of all processes "
        f"together within {(args.budget + ALLOWANCE) / GB:g} GB).", "",
        HEADER, *map(format_row, rows), "",
        f"Where it goes (GB, per process; sampled every {SAMPLE_SECONDS * 1000:.0f} ms; app: the Streamlit "
        "process(es) and the rkcore-app launcher; cluster: the Dask scheduler and the nannies; worker: the Dask worker "
        "processes):", "", SPLIT_HEADER, *map(format_split, rows), "",
        *[f"- {r['label']}: errors {r['errors'][:3]}; tracebacks in the server's log: {r['tracebacks']}" for r in rows]])
    run.write(f"{args.students} uploads of {args.megabytes:g} MB, {args.processes} app process(es)"
              + (f", {args.title}" if args.title else ""), body,
              preamble="# Memory during simultaneous uploads (issue 37, benchmark (e))")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
