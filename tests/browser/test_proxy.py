"""``rkcore-app --processes 2`` behind a real nginx, driven by two real browsers (issue 37).

The command is started as a user starts it (a subprocess, the repository's app). Two Playwright browser
contexts are two browsers with their own cookies: each keeps its session (and its process) across
reruns and reloads, an upload works through the proxy, the second browser cannot open the first's
private upload, and a shared link works although the second browser's process is another one (the
processes share the upload store); a run whose Dask worker process is killed mid-run is a clear message
in the page, and the next run works. nginx's route log (``routes.log`` in the run's folder) says which
process answered each request.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

import pytest

from rkapp.serving.proxy import free_port
from tests.browser.test_browser import (
    CHROMIUM, CHROMIUM_ARGS, body_text, sync_playwright, upload_data_file, wait_for_text, wait_until_idle,
)
from tests.browser.test_upload_privacy import CSV, SECRET

pytestmark = pytest.mark.browser
REPO = Path(__file__).resolve().parents[2]


def _nginx() -> str | None:
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)


@pytest.fixture(scope="module")
def farm(tmp_path_factory):
    if _nginx() is None:
        if os.environ.get("CI"):
            pytest.fail("nginx is missing: .ci/run installs Debian's nginx-light")
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    port = free_port()
    log = tmp_path_factory.mktemp("farm") / "farm.log"
    env = dict(os.environ, PYTHONPATH=str(REPO), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "rkapp.cli", "--processes", "2", "--server.port", str(port),
                                 "--server.address", "127.0.0.1"], cwd=REPO, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180
    while True:
        if "app processes behind nginx" in log.read_text(errors="replace"):
            break
        if proc.poll() is not None or time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL) if proc.poll() is None else None
            pytest.fail(f"rkcore-app --processes 2 did not start:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.5)
    folder = Path(re.search(r"logs and the upload store in (\S+),", log.read_text(errors="replace")).group(1))
    yield url, folder, proc.pid, log
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)
    assert not folder.exists(), "the run's private folder is removed at the end"


def _routes(folder: Path) -> dict[str, set[str]]:
    """route cookie -> the app processes (loopback addresses) that answered it."""
    served: dict[str, set[str]] = defaultdict(set)
    for line in (folder / "routes.log").read_text().splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[1] != "-":
            served[parts[1]].add(parts[2])
    return served


def _probe_routes(url: str, folder: Path) -> dict[str, set[str]]:
    """24 made-up route cookies, each sent twice: route -> the processes that answered it."""
    for k in [*range(24), *range(24)]:
        request = urllib.request.Request(f"{url}/_stcore/health", headers={"Cookie": f"rkcore_route=probe{k}"})
        assert urllib.request.urlopen(request, timeout=10).status == 200
    return {route: addrs for route, addrs in _routes(folder).items() if route.startswith("probe")}


def test_new_browsers_spread_over_both_processes(farm):
    url, folder, *_ = farm
    probes = _probe_routes(url, folder)
    assert all(len(addrs) == 1 for addrs in probes.values())
    assert len(set().union(*probes.values())) == 2, probes


def test_two_browsers_keep_their_process_and_their_uploads_private(farm, tmp_path):
    url, folder, *_ = farm
    path = tmp_path / SECRET
    path.write_bytes(CSV)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        alice_context, bob_context = browser.new_context(), browser.new_context()
        alice, bob = alice_context.new_page(), bob_context.new_page()
        alice.goto(f"{url}/Gram_matrices?dataset=upload&n=30&D=32")
        wait_until_idle(alice)
        upload_data_file(alice, path)
        wait_until_idle(alice)
        link = alice.url
        alice.reload()  # a new session of the same browser: same process, the file found again
        wait_until_idle(alice)
        wait_for_text(alice, "found again on the server")

        # Bob's browser on the other process (a route that nginx sends there), so that the shared link below
        # must cross processes: one process's memory would not have Alice's file.
        alice_route = next(c["value"] for c in alice_context.cookies() if c["name"] == "rkcore_route")
        (alice_process,) = _routes(folder)[alice_route]
        other = next(route for route, addrs in _probe_routes(url, folder).items() if alice_process not in addrs)
        bob_context.add_cookies([{"name": "rkcore_route", "value": other, "url": url}])
        bob.goto(link)
        wait_until_idle(bob)
        wait_for_text(bob, "cannot open")
        assert SECRET not in body_text(bob) and "grade_of_alice" not in bob.content()

        alice.get_by_role("checkbox", name="Share this file with the link").check(force=True)
        wait_for_text(alice, "anyone with this page's link can use")
        bob.goto(link)
        wait_until_idle(bob)
        wait_for_text(bob, "was shared with this link")

        routes = {c["name"]: c for c in alice_context.cookies() if c["name"] == "rkcore_route"}
        assert routes and routes["rkcore_route"]["httpOnly"], "nginx's route cookie is HttpOnly"
        served = _routes(folder)
        assert served[alice_route] == {alice_process}, f"Alice's requests reached {served[alice_route]}: no affinity"
        assert served[other] and alice_process not in served[other]
        browser.close()


def _worker_processes(farm_pid: int) -> list:
    """The Dask worker processes rkcore-app started for the farm (children of its local cluster's process)."""
    import psutil

    return [p for p in psutil.Process(farm_pid).children(recursive=True)
            if "spawn_main" in " ".join(p.cmdline())]


def test_a_killed_worker_is_a_clear_message_through_the_proxy(farm):
    """rkcore-app --processes 2 computes in the worker processes of its local cluster: a run whose worker is killed
    mid-run (as the kernel's OOM killer would) shows the message in place, the page goes on, and the next run
    (its worker started again) draws its charts."""
    import psutil
    from distributed import Client

    from rkcore.studies.distributed import STARTED_TOPIC

    url, folder, pid, log = farm
    assert len(_worker_processes(pid)) >= 1, "rkcore-app started no worker processes"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_context().new_page()
        # priced at about 6 s: it waits for its button, then computes in a worker long enough to be killed
        page.goto(f"{url}/Gram_matrices?dataset=gaussian&n=200&kernel=anova&degree=8&D=4096&seed=5")
        wait_until_idle(page)
        scheduler = re.search(r"their scheduler: (\S+)", log.read_text()).group(1)
        with Client(scheduler, timeout="30s") as client:
            started = len(client.get_events(STARTED_TOPIC))
            page.get_by_role("button", name=re.compile(r"^Run \(")).click()
            deadline = time.monotonic() + 120
            while len(client.get_events(STARTED_TOPIC)) == started:  # the run started computing in a worker
                assert time.monotonic() < deadline, f"the run never started:\n{body_text(page)[-1500:]}"
                time.sleep(0.1)
            (busy,) = [w for w, tasks in client.processing().items() if tasks]
            killed = client.run(os.getpid, workers=[busy])[busy]
            os.kill(killed, signal.SIGKILL)
        wait_for_text(page, "The worker computing the Gram matrices stopped before it finished (out of memory?)")
        wait_until_idle(page)
        text = body_text(page)
        assert "reduce n or D" in text and "Reproduce in Python" in text and "Traceback" not in text
        page.goto(f"{url}/Gram_matrices?dataset=gaussian&n=40&D=64&seed=6")
        page.wait_for_selector(".js-plotly-plot:not(.st-key-chart-preload *) .main-svg", timeout=180_000)
        wait_until_idle(page)
        assert "stopped before it finished" not in body_text(page)
        browser.close()
    assert killed not in {w.pid for w in _worker_processes(pid)}
    assert not any(w.status() == psutil.STATUS_ZOMBIE for w in _worker_processes(pid))
