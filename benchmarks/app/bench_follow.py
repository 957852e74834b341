"""Follow the presenter (issue 39): how fast N followers see the lecturer's change, and what following costs.

    python benchmarks/app/bench_follow.py                        # 30 followers, 1 and 2 app processes
    python benchmarks/app/bench_follow.py --followers 30 --processes 1 --changes 10 --every 3
    python benchmarks/app/bench_follow.py --quick --out F        # 3 followers, 2 changes: does it work

Every follower is a real Streamlit session over the server's websocket (as benchmarks/app/bench_classroom.py:
the BackMsg / ForwardMsg protobufs, no renderer), joined with ``?class=CODE`` on Home. What a browser's
frontend does for ``st.fragment(run_every=...)`` the follower does too: on the server's ``auto_rerun``
message it asks for a fragment rerun (``is_auto_rerun``) at that interval.

The lecturer's change is a publish to the shared class store (rkapp.classroom, the file the server's processes
share through RKCORE_STORE_DIR) from this process: the Gram matrices page with a new D every ``--every`` s,
what the lecturer's own run does at its start (its page() call). Measured per follower and change: the time
from that publish to the follower's first message carrying the sidebar's "D (random features)" widget with
the new value (its run applying the class's state). Reported: p50 / p95 / max over followers x changes, and
the server's CPU seconds per follower per second of following while nothing changes (an idle window of
``--idle`` s, less the same window without followers).
"""
from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout: benchmarks/<subject>/this file

from benchmarks.app.streamlit_server import StreamlitServer  # noqa: E402
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

D_LABEL = "D (random features)"
D_VALUES = (320, 448, 576, 704)  # none is the page's default: every change is a change
PAGE = "Gram_matrices"


class Follower:
    """One student's session: lands with ?class=CODE, answers auto_rerun requests, notes when D arrives."""

    def __init__(self, k: int):
        self.k, self.page_hash, self.fragment, self.interval = k, "", None, None
        self.seen: dict[int, float] = {}  # D value -> when (perf_counter) it first arrived
        self.errors: list[str] = []
        self.branched = False

    async def run(self, url: str, code: str, stop: asyncio.Event) -> None:
        import websockets

        try:
            async with websockets.connect(url.replace("http", "ws") + "/_stcore/stream", subprotocols=["streamlit"],
                                          max_size=2**28, open_timeout=120,
                                          additional_headers={"Cookie": f"rkcore_route=follower-{self.k}"}) as ws:
                await self._send(ws, query=f"class={code}")
                poller = asyncio.create_task(self._poll(ws, stop))
                reader = asyncio.create_task(self._read(ws))
                await stop.wait()
                poller.cancel()
                reader.cancel()
        except Exception as exc:  # noqa: BLE001 - a lost session is a result
            self.errors.append(f"session lost: {type(exc).__name__}: {str(exc)[:160]}")

    async def _send(self, ws, *, query: str = "", fragment: str | None = None) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        back = BackMsg()
        back.rerun_script.query_string = query
        back.rerun_script.page_script_hash = self.page_hash
        if fragment:
            back.rerun_script.fragment_id = fragment
            back.rerun_script.is_auto_rerun = True
        await ws.send(back.SerializeToString())

    async def _poll(self, ws, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await asyncio.sleep(self.interval or 0.2)
            if self.fragment:
                await self._send(ws, fragment=self.fragment)

    async def _read(self, ws) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        while True:
            fm = ForwardMsg()
            fm.ParseFromString(await ws.recv())
            now = time.perf_counter()
            kind = fm.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = fm.new_session.page_script_hash
            elif kind == "auto_rerun":
                self.fragment, self.interval = fm.auto_rerun.fragment_id, fm.auto_rerun.interval
            elif kind == "delta" and fm.delta.WhichOneof("type") == "new_element":
                el = fm.delta.new_element
                which = el.WhichOneof("type")
                if which == "number_input" and el.number_input.label == D_LABEL:
                    value = int(el.number_input.value if el.number_input.set_value else el.number_input.default)
                    self.seen.setdefault(value, now)
                elif which == "exception":
                    self.errors.append("exception: " + el.exception.message[:160])
                elif which == "alert" and "exploring on your own" in el.alert.body:
                    self.branched = True


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] if ordered else float("nan")


async def follow(url: str, n: int, changes: int, every: float, idle: float, server: StreamlitServer) -> dict:
    from rkapp import classroom

    token = secrets.token_urlsafe(32)
    code = classroom.start_class(token, page=PAGE)
    stop = asyncio.Event()
    followers = [Follower(k) for k in range(n)]
    tasks = [asyncio.create_task(f.run(url, code, stop)) for f in followers]
    await asyncio.sleep(min(30.0, 8.0 + 0.5 * n))  # every follower landed on the class's page
    cpu0, t0 = server.cpu_seconds(), time.perf_counter()
    await asyncio.sleep(idle)
    idle_cpu = (server.cpu_seconds() - cpu0) / (time.perf_counter() - t0)
    published = []  # per change (D values repeat: a change is its own entry): (when, lags, missed)
    for i in range(changes):
        value = D_VALUES[i % len(D_VALUES)]
        for f in followers:
            f.seen.pop(value, None)
        when = time.perf_counter()
        classroom.publish(code, token, PAGE, {"D": str(value)})
        await asyncio.sleep(every)
        lags = [f.seen[value] - when for f in followers if value in f.seen]
        print(f"  change {i + 1}: D = {value}: {len(lags)}/{n} followed, "
              f"p95 {pct(lags, 0.95):.3f} s", flush=True)
        published.append((when, lags, n - len(lags)))
    stop.set()
    await asyncio.gather(*tasks)
    classroom.end_class(code, token)
    lags = [x for _, got, _ in published for x in got]
    return {"lags": lags, "missed": sum(m for _, _, m in published), "idle_cpu": idle_cpu,
            "errors": [e for f in followers for e in f.errors], "branched": sum(f.branched for f in followers)}


def measure(n: int, processes: int, changes: int, every: float, idle: float) -> dict:
    store = tempfile.mkdtemp(prefix="rkcore-follow-")
    os.environ["RKCORE_STORE_DIR"] = store  # this process publishes into the servers' store
    env = {"RKCORE_STORE_DIR": store, "RKCORE_LECTURER_KEY": secrets.token_urlsafe(16)}
    with StreamlitServer(env=env, processes=processes) as server:
        time.sleep(3.0)
        cpu0, t0 = server.cpu_seconds(), time.perf_counter()
        time.sleep(idle)
        base_cpu = (server.cpu_seconds() - cpu0) / (time.perf_counter() - t0)
        result = asyncio.run(follow(server.url, n, changes, every, idle, server))
    result.update(n=n, processes=processes, base_cpu=base_cpu,
                  per_follower=max(0.0, result["idle_cpu"] - base_cpu) / n)
    return result


HEADER = ("| followers | app processes | changes seen | p50 (s) | p95 (s) | max (s) | missed | branched | "
          "server CPU-s per follower-s (idle) | errors |\n|---|---|---|---|---|---|---|---|---|---|")


def row(r: dict) -> str:
    lags = r["lags"]
    return (f"| {r['n']} | {r['processes']} | {len(lags)} | {statistics.median(lags) if lags else float('nan'):.3f} | "
            f"{pct(lags, 0.95):.3f} | {max(lags) if lags else float('nan'):.3f} | {r['missed']} | {r['branched']} | "
            f"{r['per_follower']:.4f} | {len(r['errors'])} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--followers", type=int, default=30)
    ap.add_argument("--processes", type=int, nargs="+", default=[1, 2],
                    help="app processes (1: one Streamlit process; N > 1: rkcore-app --processes N behind nginx)")
    ap.add_argument("--changes", type=int, default=10, help="lecturer changes of D")
    ap.add_argument("--every", type=float, default=3.0, help="seconds between two changes")
    ap.add_argument("--idle", type=float, default=10.0, help="seconds of following without a change (CPU cost)")
    add_output_arguments(ap, "follow.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.followers, args.processes, args.changes, args.every, args.idle = 3, [1], 2, 2.0, 2.0
    if args.followers > 60:
        raise SystemExit("at most 60 followers: this is a classroom, not a load test of the machine")
    run = Run.start(args, None if argv is None else [__file__, *argv])
    rows = []
    for processes in args.processes:
        print(f"{args.followers} followers, {processes} app process(es)", flush=True)
        rows.append(measure(args.followers, processes, args.changes, args.every, args.idle))
        print(row(rows[-1]), flush=True)
        for e in rows[-1]["errors"][:5]:
            print("   error:", e, flush=True)
    body = "\n".join([
        HEADER, *map(row, rows), "",
        f"Latency: from the lecturer's publish to the follower's run drawing the new D, over followers x changes "
        f"({args.changes} changes, one every {args.every:g} s; a change not seen within that time is missed). "
        f"CPU: the server's process tree while {args.followers} followers poll and nothing changes ({args.idle:g} s), "
        "less the same window without followers, per follower. The machine is shared: read the load line above.",
    ])
    run.write(f"{args.followers} followers, {args.changes} changes every {args.every:g} s", body,
              preamble="# Follow the presenter (issue 39): follow latency and per-follower cost")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
