"""A CPU-weighted stack sampler for the app process, benchmark-only (benchmarks/app/profile_change.py puts this
folder first on PYTHONPATH with RKCORE_CPU_PROFILE=<folder>; the app itself never imports it).

Every INTERVAL seconds a daemon thread reads each thread's own CPU clock (``time.pthread_getcpuclockid``) and
its current stack (``sys._current_frames``), and charges the CPU the thread used since the last sample to the
phase its stack is in (:func:`phase`): threads that waited (a socket, a lock) are charged nothing, so idle
threads cost nothing and a sample is CPU, not wall-clock. It runs only in a process that imports streamlit (the
app process; Dask's scheduler and workers never do) and writes its cumulative totals as JSON to
``<folder>/<pid>.json`` every second.
"""
import os
import sys
import threading
import time

INTERVAL = 0.004
FOLDER = os.environ.get("RKCORE_CPU_PROFILE")

#: (phase, test on a frame's file name and function), tried from the innermost frame outwards: the first match names
#: the phase. Libraries not listed (numpy, pandas, json, re, ...) are charged to the frame that called them.
RULES = (
    ("plotly JSON (fig.to_json)", lambda f, fn: "/plotly/io/_json" in f or "/_plotly_utils/utils" in f
     or fn in ("to_json", "to_plotly_json")),
    ("plotly figure building (graph_objects, validation)", lambda f, fn: "/plotly/" in f or "/_plotly_utils/" in f),
    ("protobuf", lambda f, fn: "/google/protobuf/" in f),
    ("streamlit caching (hashing, pickling)", lambda f, fn: "/streamlit/runtime/caching/" in f),
    ("Dask client (sending work, waiting)", lambda f, fn: "/distributed/" in f or "/dask/" in f),
    ("our code (rkcore, rkapp, pages)", lambda f, fn: "/rkcore/" in f or "/rkapp/" in f or "/pages/" in f
     or f.endswith(("app.py", "serve.py"))),
    ("streamlit elements and script runner", lambda f, fn: "/streamlit/" in f and "/web/server/" not in f),
    ("websocket and HTTP server (tornado, starlette, asyncio)",
     lambda f, fn: "/tornado/" in f or "/streamlit/web/server/" in f or "/asyncio/" in f or "/starlette/" in f
     or "/uvicorn/" in f or "/websockets/" in f),
)
SCRIPT_RUN = "_run_script"  # streamlit's ScriptRunner method: the whole rerun of the page's script


def phase(frame) -> tuple[str, bool, str, str]:
    """The phase of a stack, whether it is inside a script run, its innermost frame's name, and the app's entry:
    the outermost call into rkapp under the page's script (``sidebar``, ``chart``, ``run_view``...)."""
    found, in_script, innermost, entry, below = None, False, None, "-", None
    while frame is not None:
        code = frame.f_code
        if entry == "-" and "/pages/" in code.co_filename:  # the page's script: name the call it made
            entry = below or f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_name}"
        elif entry == "-" and "/rkapp/" in code.co_filename:
            below = f"rkapp/{code.co_filename.rsplit('/rkapp/', 1)[-1]}:{code.co_name}"
        if innermost is None:
            innermost = f"{code.co_filename.rsplit('site-packages/', 1)[-1]}:{code.co_name}"
        if found is None:
            for name, test in RULES:
                if test(code.co_filename, code.co_name):
                    found = name
                    break
        if code.co_name == SCRIPT_RUN:
            in_script = True
        frame = frame.f_back
    return found or "other (threads, imports, garbage collection)", in_script, innermost or "?", entry


def _sample() -> None:
    deadline = time.monotonic() + 60
    while "streamlit.runtime" not in sys.modules:  # not the app process: stop
        if time.monotonic() > deadline:
            return
        time.sleep(0.5)
    import json

    me = threading.get_ident()
    last_cpu: dict[int, float] = {}
    phases: dict[str, float] = {}
    script: dict[str, float] = {}
    functions: dict[str, float] = {}
    entries: dict[str, float] = {}
    written = time.monotonic()
    path = os.path.join(FOLDER, f"{os.getpid()}.json")
    while True:
        time.sleep(INTERVAL)
        frames = sys._current_frames()
        for ident, frame in frames.items():
            if ident == me:
                continue
            try:
                cpu = time.clock_gettime(time.pthread_getcpuclockid(ident))
            except (OSError, ValueError):
                continue
            # a new thread's clock starts at 0; a smaller reading is a new thread under a reused ident
            before = last_cpu.get(ident, 0.0)
            used = cpu - before if cpu >= before else cpu
            last_cpu[ident] = cpu
            if used <= 0:
                continue
            name, in_script, innermost, entry = phase(frame)
            if in_script:
                entries[entry] = entries.get(entry, 0.0) + used
            phases[name] = phases.get(name, 0.0) + used
            if in_script:
                script[name] = script.get(name, 0.0) + used
            functions[innermost] = functions.get(innermost, 0.0) + used
        del frames
        if time.monotonic() - written > 1.0:
            written = time.monotonic()
            tmp = path + ".tmp"
            with open(tmp, "w") as out:
                json.dump({"phases": phases, "script": script, "functions": functions, "entries": entries,
                           "sampler_cpu": time.clock_gettime(time.CLOCK_THREAD_CPUTIME_ID)}, out)
            os.replace(tmp, path)


if FOLDER:
    threading.Thread(target=_sample, name="rkcore-cpu-sampler", daemon=True).start()
