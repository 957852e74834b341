"""Classroom capacity: N students acting independently on the study pages over several minutes.

    python benchmarks/app/bench_classroom.py [--students 30 60] [--minutes 5] [--processes 1 2] [--seed 0]
    python benchmarks/app/bench_classroom.py --find-capacity --processes 1 2 [--steps ...] [--round-seconds 90]
    python benchmarks/app/bench_classroom.py --smoke            # 5 students, 1 minute: does it work at all
    python benchmarks/app/bench_classroom.py --quick --out F    # 2 students, 15 s: the test suite's smoke run
    python benchmarks/app/bench_classroom.py --browser 5        # a browser sanity check (shares the cores)

The server is started as ``rkcore-app --processes N`` starts it: N Streamlit processes (behind nginx when N > 1)
and the local Dask cluster that computes the views (one worker per core; ``--workers 0``: in the app process).
``--find-capacity``: students per core (benchmarks/app/capacity_search.py).

Every student is a real Streamlit session over the server's websocket (/_stcore/stream, the
BackMsg / ForwardMsg protobufs of streamlit.proto, as a browser sends and receives them) with no
renderer: the measurement is the server's, not that of 30 Chromium renderers on its own 2 cores.
Students arrive within the first 10 s, land on Home, open one of the study pages (Gram matrices,
Error bounds, Distributions and variance) and then act at random every 10-30 s until the end:
mostly a widget change (their own seed, n, degree, D, trials, maps, SCRK, each student with its own
random stream, so no two students ask for the same result), sometimes a switch to another study page;
one student in ten uploads a CSV of its own (the file_urls_request, a multipart PUT to the upload
URL with the XSRF cookie, the file_uploader's widget state: what a browser does) and goes on with it.

Reported per N (a section "<N> students, <minutes> minutes each, <processes, workers>[, server limits]" of
benchmarks/results/classroom.md, written by this script; the same run replaces its section): p50 / p95 / max of the time
from a change (the BackMsg sent) to its new charts (the last plotly chart of the run received);
errors (exception elements, error boxes, tracebacks in the server's log, lost connections); actions
and students that got a gate ("press the button") instead of charts; runs that waited in the
server's admission line (its "Waiting for one of the server's run slots" notice: shown after 0.5 s of
waiting) and how long; peak RSS of all the server's processes together (app processes and launcher, nginx, the
Dask cluster's scheduler, nannies and workers: StreamlitServer.roles), with each role's share at the peak; server
CPU seconds per change by role, the cores each role uses idle, client CPU seconds; the load average before and
after (the machine is shared: it is part of the result). Each row's figures are also an HTML comment that
capacity_plan.py reads.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout: benchmarks/<subject>/this file

from benchmarks.app.classroom_upload import Uploaded, _put_file, _upload, class_csv  # noqa: E402,F401 (bench_uploads)
from benchmarks.app.streamlit_server import StreamlitServer  # noqa: E402
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

STUDY_PAGES = ("Gram_matrices", "Error_bounds", "Distributions_and_variance")
#: Settings a student changes, by widget label, with the values it picks from (all of them auto-run at the
#: cost models' estimates: a gate is then a failure, not a choice).
CHANGES = {
    "Seed": lambda rng: rng.randrange(1, 10**6),
    "n (points)": lambda rng: rng.choice([100, 150, 200, 250, 300]),
    "Degree m": lambda rng: rng.choice([2, 3]),
    "D (random features)": lambda rng: rng.choice([128, 256, 512, 1024]),
    "Trials (maps per D)": lambda rng: rng.choice(["5", "10", "20"]),
    "Maps for the pair variances": lambda rng: rng.choice(["50", "100", "200"]),
    "Include SCRK (ANOVA)": lambda rng: rng.random() < 0.5,
}
#: Share of actions that switch to another study page (the rest change a widget).
PAGE_SWITCH = 0.2
#: One student in this many uploads a CSV of its own (its third action), as the Dataset "upload" choice.
UPLOADER_EVERY = 10
THINK_SECONDS = (10.0, 30.0)
ARRIVAL_SECONDS = 10.0
RUN_TIMEOUT = 180.0
P95_TARGET = 3.0  # seconds, change -> charts: the capacity criterion of issue 37
MAX_STUDENTS = 200
PREAMBLE = "# Classroom capacity (issues 26, 37): independent students over the websocket protocol"
#: the data set's uploader (the sidebar also holds the lesson panel's, for JSON files): found by its label
DATA_UPLOADER = "CSV (header row) or LIBSVM file"
QUEUE_NOTICE = "Waiting for one of the server's"
GATE_TEXT = "press the button"


@dataclass
class Action:
    student: int
    kind: str  # "landing", "page", "widget"
    page: str
    what: str
    seconds: float = float("nan")  # change -> its last chart
    finished: float = float("nan")  # change -> script_finished
    charted: bool = False
    gated: bool = False
    gate: str = ""  # the gate's sentence (its estimate says whether the settings or the load set it)
    errors: list[str] = field(default_factory=list)
    queue_wait: float | None = None  # seconds in the admission line (None: no notice)
    session: str = ""  # the server's session id (from new_session)
    sent_at: float = float("nan")  # perf_counter when its BackMsg was sent
    unfinished: bool = False  # still waiting for its charts when the round ended (seconds: the wait so far)


# ----------------------------------------------------------------------------- one session over the protocol
def _element_kind(fm):
    if fm.WhichOneof("type") != "delta" or fm.delta.WhichOneof("type") != "new_element":
        return None, None
    el = fm.delta.new_element
    return el.WhichOneof("type"), el


async def _rerun(ws, action: Action, page: str, widget=None) -> dict:
    """One script run: send the BackMsg, read ForwardMsgs until script_finished; fill ``action``, return
    the widgets of the page (label -> (kind, id))."""
    from rkapp.layout import PRELOAD_META
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    back = BackMsg()
    back.rerun_script.query_string = ""
    back.rerun_script.page_name = page
    if widget is not None:  # (id, value, widget kind)
        state = back.rerun_script.widget_states.widgets.add()
        state.id = widget[0]
        value = widget[1]
        if isinstance(value, bool):
            state.bool_value = value
        elif isinstance(value, int):
            state.int_value = value
        elif isinstance(value, Uploaded):
            info = state.file_uploader_state_value.uploaded_file_info.add()
            info.file_id, info.name, info.size = value.file_id, value.name, value.size
            info.file_urls.file_id, info.file_urls.upload_url = value.file_id, value.upload_url
            info.file_urls.delete_url = value.delete_url
        elif widget[2] == "selectbox":
            state.string_value = value
        else:
            state.string_array_value.data.append(str(value))
    widgets, first_notice, last_notice, after_notice = {}, None, None, None
    t0 = action.sent_at = time.perf_counter()
    await ws.send(back.SerializeToString())
    while True:
        fm = ForwardMsg()
        fm.ParseFromString(await asyncio.wait_for(ws.recv(), RUN_TIMEOUT))
        now = time.perf_counter() - t0
        if fm.WhichOneof("type") == "script_finished":
            action.finished = now
            break
        if fm.WhichOneof("type") == "new_session":
            action.session = fm.new_session.initialize.session_id
        kind, el = _element_kind(fm)
        if kind is None:
            continue
        if last_notice is not None and after_notice is None and not (kind == "alert" and QUEUE_NOTICE in el.alert.body):
            after_notice = now
        if kind == "plotly_chart" and PRELOAD_META not in el.plotly_chart.spec:
            action.charted, action.seconds = True, now
        elif kind == "exception":
            action.errors.append("exception: " + el.exception.message[:160])
        elif kind == "alert":
            body = el.alert.body
            if QUEUE_NOTICE in body:
                first_notice = now if first_notice is None else first_notice
                last_notice, after_notice = now, None
            elif el.alert.format == 1 and not (action.kind == "choose upload" and "No file uploaded yet" in body):
                action.errors.append("error box: " + body[:160])
            elif GATE_TEXT in body:
                action.gated, action.gate = True, body[:400]
        elif kind == "markdown" and GATE_TEXT in el.markdown.body:  # the estimate beside the run button (stop 42:
            # a line of text with a timer icon, no longer an alert), its punctuation escaped as user text is
            action.gated, action.gate = True, re.sub(r"\\(.)", r"\1", el.markdown.body)[:400]
        elif kind in ("number_input", "slider", "checkbox", "selectbox", "file_uploader"):
            widgets[getattr(el, kind).label] = (kind, getattr(el, kind).id,
                                                list(el.selectbox.options) if kind == "selectbox" else [])
    if first_notice is not None:  # the notice shows after QUEUE_POLL_SECONDS of waiting
        action.queue_wait = (after_notice or action.finished) - first_notice + 0.5
    if action.kind not in ("landing", "choose upload") and not action.charted and not action.gated and not action.errors:
        action.errors.append("no chart")
    return widgets


async def student(url: str, k: int, rng: random.Random, end: float, actions: list[Action]) -> None:
    import websockets

    await asyncio.sleep(rng.uniform(0, ARRIVAL_SECONDS))
    page, widgets, action = "", {}, None
    route = f"student-{k}-{rng.randrange(10**9)}"  # the browser's nginx route cookie (rkcore-app --processes N)
    try:
        async with websockets.connect(url.replace("http", "ws") + "/_stcore/stream", subprotocols=["streamlit"],
                                      max_size=2**28, open_timeout=RUN_TIMEOUT,
                                      additional_headers={"Cookie": f"rkcore_route={route}"}) as ws:
            landing = Action(k, "landing", "Home", "")
            await _rerun(ws, landing, "")
            actions.append(landing)
            page = rng.choice(STUDY_PAGES)
            next_at = time.monotonic()
            upload_at = 3 if k % UPLOADER_EVERY == 0 else -1  # a few students upload their own CSV
            while time.monotonic() < end:
                if len(actions_of(actions, k)) == upload_at and "Dataset" in widgets:
                    action = Action(k, "choose upload", page, "Dataset = upload")
                    choice = next(o for o in widgets["Dataset"][2] if "pload" in o)
                    widgets = await _rerun(ws, action, page, (widgets["Dataset"][1], choice, "selectbox")) or widgets
                    actions.append(action)
                    file = await _upload(ws, url, landing.session, rng, route)
                    action = Action(k, "upload", page, file.name)
                    uploader = widgets[DATA_UPLOADER][1]
                    widgets = await _rerun(ws, action, page, (uploader, file, "file_uploader")) or widgets
                elif widgets and rng.random() >= PAGE_SWITCH:
                    label = rng.choice(sorted(set(widgets) & set(CHANGES)))
                    value = CHANGES[label](rng)
                    action = Action(k, "widget", page, f"{label} = {value}")
                    widgets = await _rerun(ws, action, page, (widgets[label][1], value, widgets[label][0])) or widgets
                else:
                    page = rng.choice([p for p in STUDY_PAGES if p != page]) if widgets else page
                    action = Action(k, "page", page, page)
                    widgets = await _rerun(ws, action, page)
                actions.append(action)
                next_at += rng.uniform(*THINK_SECONDS)
                await asyncio.sleep(max(0.0, min(next_at, end) - time.monotonic()))
    except asyncio.CancelledError:  # the round's grace is over: the change in flight is kept as unfinished
        if action is not None and action.sent_at == action.sent_at and not any(a is action for a in actions):
            action.unfinished, action.charted = True, False
            action.seconds = time.perf_counter() - action.sent_at  # a lower bound of its time
            actions.append(action)
        raise
    except Exception as exc:  # noqa: BLE001 - a lost session is a result
        failed = Action(k, "lost", page, "")
        failed.errors.append(f"session lost: {type(exc).__name__}: {str(exc)[:160]}")
        actions.append(failed)


def actions_of(actions: list[Action], k: int) -> list[Action]:
    return [a for a in actions if a.student == k]


async def classroom(url: str, n: int, seconds: float, seed: int | str, grace: float | None = None) -> list[Action]:
    """``n`` students acting for ``seconds`` (their arrival included); each student's random stream is
    ``f"{seed}:{k}"``. ``grace``: seconds after the end to wait for the changes still in flight (None: as long
    as they take, up to RUN_TIMEOUT each); those still waiting then are kept as unfinished."""
    actions: list[Action] = []
    end = time.monotonic() + seconds
    tasks = [asyncio.create_task(student(url, k, random.Random(f"{seed}:{k}"), end, actions)) for k in range(n)]
    _, pending = await asyncio.wait(tasks, timeout=None if grace is None else seconds + grace)
    for task in pending:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return actions


# ----------------------------------------------------------------------------- measuring the server
class PeakSampler(threading.Thread):
    """Peak RSS of the server's process tree, sampled every 0.25 s: of all processes together (``peak``), the
    roles at that moment (``at_peak``: app, nginx, dask) and each role's own peak (``role_peaks``)."""

    def __init__(self, server: StreamlitServer):
        super().__init__(daemon=True)
        self.server, self.peak, self._halt = server, 0, threading.Event()
        self.at_peak: dict[str, int] = {}
        self.role_peaks: dict[str, int] = {}

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                roles = self.server.rss_by_role()
            except psutil.Error:
                return
            total = sum(roles.values())
            if total > self.peak:
                self.peak, self.at_peak = total, roles
            self.role_peaks = {r: max(self.role_peaks.get(r, 0), b) for r, b in roles.items()}
            time.sleep(0.25)

    def stop(self) -> int:
        self._halt.set()
        self.join(timeout=5)
        return self.peak


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(q * (len(v) - 1)))))]


def usable_cores() -> int:
    """The cores this process may use (affinity; what rkcore-app's ``auto`` counts, cgroup quotas aside)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def warm_up(server: StreamlitServer, seed: int) -> None:
    """One student for 15 s: imports, first compile, the workers' first task; not reported."""
    asyncio.run(classroom(server.url, 1, 15, seed + 999))


def idle_cores(server: StreamlitServer, seconds: float = 10.0) -> dict[str, float]:
    """The cores each role uses with no student (Dask's heartbeats and memory monitor, Streamlit's loop): the
    part of the CPU per change that is only the time passing."""
    before = server.cpu_by_role()
    time.sleep(seconds)
    return {role: (t - before[role]) / seconds for role, t in server.cpu_by_role().items()}


def wait_idle(server: StreamlitServer, timeout: float = 60.0, cores: float = 0.15) -> float:
    """Wait until the server uses under ``cores`` (runs cut off by the last round end); returns the seconds waited."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        before = server.cpu_seconds()
        time.sleep(2.0)
        if (server.cpu_seconds() - before) / 2.0 < cores:
            break
    return time.monotonic() - started


def measure(n: int, seconds: float, seed: int, env: dict[str, str], dump: str | None = None,
            processes: int = 1, workers: int = -1) -> dict:
    """A fresh server (``rkcore-app --processes N`` with its Dask cluster), warmed up; one round of ``n``."""
    with StreamlitServer(env=env, processes=processes, workers=workers) as server:
        warm_up(server, seed)
        idle = idle_cores(server)
        return measure_round(server, n, seconds, seed, dump=dump) | {"idle_cores": idle}


def measure_round(server: StreamlitServer, n: int, seconds: float, seed: int | str, *, dump: str | None = None,
                  grace: float | None = None) -> dict:
    """``n`` students for ``seconds`` on a running server: the row of the report (see :func:`summarize`)."""
    log_before = len(server.log_text())
    sampler = PeakSampler(server)
    load_before, client_before = os.getloadavg(), time.process_time()
    cpu_before = server.cpu_by_role()
    rss_start = server.rss_tree()
    sampler.start()
    started = time.perf_counter()
    actions = asyncio.run(classroom(server.url, n, seconds, seed, grace))
    wall = time.perf_counter() - started
    peak = sampler.stop()
    cpu = {role: t - cpu_before[role] for role, t in server.cpu_by_role().items()}
    row = dict(N=n, processes=server.processes, workers=server.workers, cores=usable_cores(), seconds=seconds,
               wall=wall, rss_start=rss_start, peak=peak, peak_roles=sampler.at_peak, role_peaks=sampler.role_peaks,
               load_before=load_before, load_after=os.getloadavg(), server_cpu=sum(cpu.values()), cpu_roles=cpu,
               client_cpu=time.process_time() - client_before)
    if dump:  # every action, for a closer look
        import dataclasses
        import json

        Path(dump).write_text("\n".join(json.dumps(dataclasses.asdict(a)) for a in actions) + "\n")
    return summarize(row, actions, server.log_text()[log_before:])


def summarize(row: dict, actions: list[Action], server_log: str) -> dict:
    """The round's figures: change -> charts p50 / p95 / max (an unfinished change counts with its wait so far,
    a lower bound: the verdict p95 <= 3 s stays exact as long as the grace is over 3 s), errors, gates, waits."""
    log_errors = [line for line in server_log.splitlines() if "Traceback" in line or "Error while computing" in line]
    changes = [a for a in actions if a.kind in ("page", "widget", "upload")]
    charted = [a.seconds for a in changes if a.charted]
    timed = charted + [a.seconds for a in changes if a.unfinished]
    waits = [a.queue_wait for a in changes if a.queue_wait is not None]
    row.update(actions=len(changes), charted=len(charted), unfinished=sum(a.unfinished for a in changes),
               p50=pct(timed, 0.5), p95=pct(timed, 0.95), max=max(timed, default=float("nan")),
               widget_p95=pct([a.seconds for a in changes if (a.charted or a.unfinished) and a.kind == "widget"], 0.95),
               page_p95=pct([a.seconds for a in changes if (a.charted or a.unfinished) and a.kind == "page"], 0.95),
               errors=[f"student {a.student}, {a.page}, {a.what or a.kind}: {e}" for a in actions for e in a.errors]
               + [f"server log: {line[:160]}" for line in log_errors],
               error_students=len({a.student for a in actions if a.errors}),
               gated=sum(a.gated for a in changes), gated_students=len({a.student for a in changes if a.gated}),
               by_load=sum(a.gated and not gated_by_settings(a.gate) for a in changes),
               by_load_students=len({a.student for a in changes if a.gated and not gated_by_settings(a.gate)}),
               gates=sorted({f"{a.page}: {gate_estimate(a.gate)}" for a in changes if a.gated}),
               queued=len(waits), wait_p50=pct(waits, 0.5), wait_p95=pct(waits, 0.95), wait_max=max(waits, default=0.0),
               per_page={p: sum(a.page == p for a in changes) for p in STUDY_PAGES},
               uploads=sum(a.kind == "upload" for a in changes),
               uploads_charted=sum(a.kind == "upload" and a.charted for a in changes))
    return row


def passed(r: dict) -> bool:
    """The capacity criterion of issue 37: p95 change -> charts <= 3 s, no error, no gate by load."""
    return r["p95"] <= P95_TARGET and not r["errors"] and r["by_load"] == 0


def _unescaped(text: str) -> str:
    """The alert's text as shown: the page escapes Markdown (``\\.``, ``\\(``) in what it writes."""
    return re.sub(r"\\(.)", r"\1", text)


def gate_estimate(text: str) -> str:
    """The estimate a gate states ("about 2 s and 49.4 MB ... (error study: about 1.5 s, ...)")."""
    text = _unescaped(text)
    found = re.search(r"takes (about .*?) on this server \((.*?)\)\.", text)
    return f"{found.group(1)} ({found.group(2)})" if found else text[:160]


def gated_by_settings(text: str) -> bool:
    """Whether a gate comes from the settings alone: its estimate (the cost models', which never follow the
    load, rkapp.guard) is above the auto-run threshold, so a quiet server with one student gives the same
    gate. Any other gate (a shorter estimate) would be one the load caused."""
    from rkapp.guard import AUTO_RUN_SECONDS

    found = re.search(r"takes about ([0-9.]+) (s|minutes)", _unescaped(text))
    return bool(found) and float(found.group(1)) * (60 if found.group(2) == "minutes" else 1) >= AUTO_RUN_SECONDS


# ----------------------------------------------------------------------------- report
HEADER = ("| students | app processes | changes (charted, unfinished) | change → charts p50 / p95 / max s | p95 widget / "
          "page switch s | errors (students) | gated: by load, by settings (students) | waited in line: runs, p50 / p95 / "
          "max s | peak RSS MB, all processes (app / nginx / Dask at the peak; at the start) | server CPU s per change "
          "(app / nginx / Dask) | client CPU s | load avg 1 min (before → after) |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")
DATA = "classroom-data"  # the HTML comment holding a row's figures, read by capacity_plan.py


def format_row(r: dict) -> str:
    mb = lambda b: f"{b / 2**20:,.0f}"  # noqa: E731
    roles, cpu = r["peak_roles"], r["cpu_roles"]
    per = lambda t: t / max(r["actions"], 1)  # noqa: E731
    bound = "≥ " if r["unfinished"] else ""
    return (f"| {r['N']} | {r['processes']} | {r['actions']} ({r['charted']}, {r['unfinished']}) | {r['p50']:.2f} / "
            f"{bound}{r['p95']:.2f} / {bound}{r['max']:.2f} | {r['widget_p95']:.2f} / {r['page_p95']:.2f} "
            f"| {len(r['errors'])} ({r['error_students']}) | {r['by_load']}, {r['gated'] - r['by_load']} "
            f"({r['by_load_students']}, {r['gated_students']}) | {r['queued']}, {r['wait_p50']:.1f} / "
            f"{r['wait_p95']:.1f} / {r['wait_max']:.1f} | **{mb(r['peak'])}** ({mb(roles.get('app', 0))} / "
            f"{mb(roles.get('nginx', 0))} / {mb(roles.get('dask', 0))}; {mb(r['rss_start'])}) | "
            f"**{per(r['server_cpu']):.3f}** ({per(cpu['app']):.3f} / {per(cpu['nginx']):.3f} / {per(cpu['dask']):.3f}) "
            f"| {r['client_cpu']:.0f} | {r['load_before'][0]:.1f} → {r['load_after'][0]:.1f} |")


def row_data(r: dict) -> str:
    """The row's figures as one HTML comment (invisible in the rendered page): what capacity_plan.py reads."""
    import json

    keys = ("N", "processes", "workers", "cores", "seconds", "wall", "actions", "charted", "unfinished", "p50", "p95",
            "max", "by_load", "gated", "queued", "peak", "rss_start", "peak_roles", "role_peaks", "cpu_roles",
            "server_cpu")
    data = {k: r[k] for k in ("idle_cores", "idle_wait", "round_wall") if k in r} | {k: r[k] for k in keys} | {"errors": len(r["errors"]), "passed": passed(r), "load_before": r["load_before"][0],
                                      "load_after": r["load_after"][0]}
    return f"<!-- {DATA} {json.dumps(data, sort_keys=True)} -->"


def verdict(r: dict) -> str:
    checks = [(r["p95"] <= P95_TARGET, f"p95 {r['p95']:.2f} s ≤ {P95_TARGET:g} s"),
              (not r["errors"], f"{len(r['errors'])} errors = 0"),
              (r["by_load"] == 0, f"{r['by_load']} gated by load = 0"),
              (r["peak"] < 4 * 2**30, f"peak {r['peak'] / 2**30:.2f} GB < 4 GB")]
    unfinished = (f" ({r['unfinished']} change(s) still waiting when the round's grace ended count with their wait "
                  "so far, a lower bound)") if r["unfinished"] else ""
    return f"N = {r['N']}: " + "; ".join(("met: " if ok else "NOT met: ") + text for ok, text in checks) + unfinished + "."


def cpu_reading(r: dict) -> str:
    """What the server needed against what it got: CPU seconds per change, the cores the class's changes
    need at that rate when every student acts every 20 s on average (the mean think time: the rate the
    students would reach if no answer made them wait), and the cores the server got on average (less than
    the machine's when other jobs load it)."""
    per_change = r["server_cpu"] / max(r["actions"], 1)
    wanted = r["N"] / (sum(THINK_SECONDS) / 2)
    return (f"N = {r['N']}: {per_change:.3f} server CPU s per change (app processes and launcher "
            f"{r['cpu_roles']['app'] / max(r['actions'], 1):.3f}, Dask scheduler and workers "
            f"{r['cpu_roles']['dask'] / max(r['actions'], 1):.3f}); {wanted:.2f} changes/s (every student "
            f"every 20 s) need {per_change * wanted:.2f} cores at that rate; the server got "
            f"{r['server_cpu'] / r['wall']:.2f} cores on average" + (
                "; idle, before the class, the server used " + ", ".join(
                    f"{role} {cores:.3f}" for role, cores in r["idle_cores"].items()) + " cores" if "idle_cores" in r
                else "") + ".")


def configuration(processes: int, workers: int, env: dict[str, str]) -> str:
    """The server's configuration as a title's tail."""
    limits = "".join(f", {k}={v}" for k, v in env.items())
    farm = f", {processes} app processes behind nginx" if processes > 1 else ""
    dask = {-1: ", one Dask worker per core", 0: ", computing in the app process"}.get(workers, f", {workers} Dask workers")
    return f"{farm}{dask}{limits}"


def report_title(students: list[int], minutes: float, processes: int, workers: int = -1,
                 env: dict[str, str] | None = None) -> str:
    """The section's title: the configuration, so a re-run of the same one replaces it."""
    return f"{', '.join(map(str, students))} students, {minutes:g} minutes each{configuration(processes, workers, env or {})}"


def capacity_title(processes: int, workers: int = -1, env: dict[str, str] | None = None) -> str:
    """The title of a ``--find-capacity`` search's section."""
    return (f"Students per core, {processes} app process{'es' if processes > 1 else ''}"
            f"{configuration(1, workers, env or {})}")


def machine_line(args, env: dict[str, str]) -> str:
    return (f"Seed {args.seed}; {os.cpu_count()} cores ({usable_cores()} usable), "
            f"{psutil.virtual_memory().total / 2**30:.0f} GiB; server limits: "
            f"{', '.join(f'{k}={v}' for k, v in env.items()) or 'defaults'}. The server (`rkcore-app`: its app "
            "processes, nginx with more than one, its local Dask cluster) and every client run on this machine, which "
            "other jobs may share: see the load average (2 cores: a load above 2 means waiting for a core).")


def report_body(rows: list[dict], args, env: dict[str, str]) -> str:
    lines = [
        machine_line(args, env),
        "",
        HEADER,
        *[format_row(r) for r in rows],
        "",
        *[verdict(r) for r in rows],
        "",
        *[cpu_reading(r) for r in rows],
        "",
        "Changes by page: " + "; ".join(f"N = {r['N']}: " + ", ".join(f"{p} {c}" for p, c in r["per_page"].items())
                                        + f"; uploads {r['uploads']} ({r['uploads_charted']} charted)"
                                        for r in rows) + ".",
        "",
        *[row_data(r) for r in rows],
    ]
    lines += details(rows)
    return "\n".join(lines)


def details(rows: list[dict]) -> list[str]:
    """The gates and errors of each row, for a closer look."""
    lines = []
    for r in rows:
        if r["gates"]:
            lines += ["", f"Gates at N = {r['N']} (a button instead of charts; the estimates they stated, distinct):",
                      *[f"- {g}" for g in r["gates"][:12]]]
        if r["errors"]:
            lines += ["", f"Errors at N = {r['N']} (first 15):", *[f"- {e}" for e in r["errors"][:15]]]
    return lines


def print_row(r: dict) -> None:
    print(format_row(r), verdict(r), cpu_reading(r), sep="\n", flush=True)
    for e in r["errors"][:10]:
        print("   error:", e, flush=True)


def parse_arguments(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, nargs="+", default=[30, 60])
    ap.add_argument("--minutes", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--processes", type=int, nargs="+", default=[1],
                    help="app processes behind nginx (rkcore-app --processes N); several: one section each")
    ap.add_argument("--workers", type=int, default=-1,
                    help="Dask worker processes of rkcore-app's local cluster (-1, the default: one per core, as "
                         "rkcore-app starts it; 0: computing in the app process)")
    ap.add_argument("--find-capacity", action="store_true",
                    help="students per core: rounds of growing classes (--steps) until one fails p95 <= 3 s, 0 errors, "
                         "0 gated by load (benchmarks/app/capacity_search.py)")
    ap.add_argument("--steps", type=int, nargs="+", default=[20, 40, 60, 90, 120, 150, 180],
                    help="with --find-capacity: the class sizes tried, in increasing order")
    ap.add_argument("--round-seconds", type=float, default=90.0,
                    help="with --find-capacity: each round's length after the students' arrival")
    ap.add_argument("--max-minutes", type=float, default=float("inf"),
                    help="with --find-capacity: a time budget for the whole search, shared by the --processes values; "
                         "no larger class is tried once a value's share is spent (one has passed)")
    ap.add_argument("--grace", type=float, default=30.0,
                    help="with --find-capacity: seconds after a round to wait for the changes in flight (those still "
                         "waiting count with their wait so far, over 3 s: the verdict stays exact)")
    ap.add_argument("--smoke", action="store_true", help="5 students for 1 minute, written only with --out")
    ap.add_argument("--smoke-students", type=int, default=5, help=argparse.SUPPRESS)
    ap.add_argument("--browser", type=int, default=0, metavar="N",
                    help="instead: N ≤ 5 headless Chromium sessions as a sanity check (they share the server's cores)")
    ap.add_argument("--dump", help="write every action of the last N as JSON lines to this file")
    add_output_arguments(ap, "classroom.md")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_arguments(argv)
    if args.browser:
        from benchmarks.app.classroom_browser import main as browser_main

        return browser_main(min(args.browser, 5))
    if args.smoke:
        args.students, args.minutes, args.quick = [args.smoke_students], 1.0, True  # quick: not written by default
    elif args.quick:
        args.students, args.minutes = [2], 0.25
        args.steps, args.round_seconds = [1, 2], 5.0
    run = Run.start(args, None if argv is None else [__file__, *argv])
    if max(args.students + args.steps) > MAX_STUDENTS:
        raise SystemExit(f"at most {MAX_STUDENTS} students: a lecture hall, not a load test of the machine")
    env = {k: os.environ[k] for k in ("RKCORE_SERVER_RUNS", "RKCORE_SERVER_MEMORY") if k in os.environ}
    if args.find_capacity:
        from benchmarks.app.capacity_search import find_capacity

        return find_capacity(args, env, run)
    print(HEADER, flush=True)
    for processes in args.processes:
        rows = []
        for n in args.students:
            rows.append(measure(n, 60 * args.minutes, args.seed, env, args.dump, processes, args.workers))
            print_row(rows[-1])
        run.write(report_title(args.students, args.minutes, processes, args.workers, env), report_body(rows, args, env),
                  preamble=PREAMBLE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
