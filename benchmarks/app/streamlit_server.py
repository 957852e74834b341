"""Start the dashboard's Streamlit server for a benchmark or a browser test, and stop it.

    from benchmarks.app.streamlit_server import StreamlitServer
    with StreamlitServer(env={"RKCORE_SERVER_RUNS": "2"}) as server:
        ...  # server.url, server.rss_tree(), server.cpu_seconds(), server.log_text(), server.cpu_by_role()

One place for what every benchmark and the browser test did on its own: a free port on 127.0.0.1
(picked by the OS, so helpers sharing the machine do not collide), headless, file watcher off, usage
statistics off, RKCORE_SPEED_FACTOR pinned to 1 unless given (the tests' calibration), the server's
output kept in a log file (tracebacks the app logs are errors of the run), a bounded wait for
/_stcore/health, and a stop that ends the server's whole process group.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # benchmarks/<subject>/this file
#: The server's processes by role (:meth:`StreamlitServer.roles`).
ROLES = ("app", "nginx", "dask")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StreamlitServer:
    """``streamlit run <script>`` from the repository, on 127.0.0.1 and a free port (or ``port``)."""

    def __init__(self, script: str = "serve.py", *, port: int | None = None, env: dict[str, str] | None = None,
                 health_timeout: float = 90.0, repo: Path = REPO, processes: int = 1, workers: int | None = None):
        """``workers``: None, ``streamlit run`` (one process) or ``rkapp.cli --processes N`` as given; else
        ``rkapp.cli`` (rkcore-app) with its local Dask cluster of that many worker processes (-1: its default,
        one per core; 0: none, computing in the app process)."""
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.processes, self.workers = processes, workers
        self.log = tempfile.NamedTemporaryFile(prefix="streamlit-", suffix=".log", delete=False)
        environment = dict(os.environ, PYTHONPATH=str(repo), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
                           RKCORE_SPEED_FACTOR=os.environ.get("RKCORE_SPEED_FACTOR", "1"))
        environment.update(env or {})
        if processes > 1 or workers is not None:  # rkcore-app --processes N: N app processes behind nginx
            command = [sys.executable, "-m", "rkapp.cli", "--processes", str(processes), "--server.port",
                       str(self.port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
                       *(["--workers", str(workers)] if workers is not None and workers >= 0 else [])]
            if processes == 1:
                command += ["--server.headless", "true"]
        else:
            command = [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true", "--server.port",
                       str(self.port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
        self.proc = subprocess.Popen(
            command,
            cwd=repo, env=environment, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            self._wait_healthy(health_timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited early (code {self.proc.returncode}):\n{self.log_text()[-2000:]}")
            try:
                if urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2).status == 200:
                    return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"streamlit did not answer {self.url}/_stcore/health within {timeout:.0f} s")

    def log_text(self) -> str:
        """What the server printed so far (its log, tracebacks included)."""
        return Path(self.log.name).read_text(errors="replace")

    def _processes(self) -> list:
        import psutil

        root = psutil.Process(self.proc.pid)
        return [root, *root.children(recursive=True)]

    def rss_tree(self) -> int:
        """Resident bytes of the server and every process it started (joblib workers, ...)."""
        import psutil

        total = 0
        for p in self._processes():
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def roles(self) -> dict[str, list]:
        """The server's processes by role: ``app`` (the launcher and the Streamlit processes), ``nginx`` (its
        master and workers), ``dask`` (the local cluster's process, which holds the scheduler and the nannies,
        and everything it started: the worker processes). The cluster is told apart by its command line
        (rkapp.workers.start_local_cluster runs ``serve_local_cluster``), nginx by its name."""
        import psutil

        roles: dict[str, list] = {role: [] for role in ROLES}
        dask_roots: set[int] = set()
        for p in self._processes():  # parents come before their children (psutil walks the tree in order)
            try:
                parent = p.ppid()
                if parent in dask_roots or "serve_local_cluster" in " ".join(p.cmdline()):
                    dask_roots.add(p.pid)
                    roles["dask"].append(p)
                elif p.name().startswith("nginx"):
                    roles["nginx"].append(p)
                else:
                    roles["app"].append(p)
            except psutil.Error:  # ended meanwhile
                pass
        return roles

    def rss_by_role(self) -> dict[str, int]:
        """Resident bytes of each role of :meth:`roles` now."""
        import psutil

        totals = dict.fromkeys(ROLES, 0)
        for role, processes in self.roles().items():
            for p in processes:
                try:
                    totals[role] += p.memory_info().rss
                except psutil.Error:
                    pass
        return totals

    def cpu_by_role(self) -> dict[str, float]:
        """CPU seconds (user + system) of each role of :meth:`roles` so far, the ended children those processes
        waited for included (a worker the nanny restarted, an app process started again)."""
        import psutil

        totals = dict.fromkeys(ROLES, 0.0)
        for role, processes in self.roles().items():
            for p in processes:
                try:
                    t = p.cpu_times()
                    totals[role] += t.user + t.system + t.children_user + t.children_system
                except psutil.Error:
                    pass
        return totals

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) of the server process so far, its exited threads included."""
        if self.processes == 1 and self.workers is None:
            t = self._processes()[0].cpu_times()
            return t.user + t.system
        total = 0.0  # the launcher, nginx and every app process
        for p in self._processes():
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except Exception:  # noqa: BLE001 - a process that ended meanwhile
                pass
        return total

    def stop(self) -> None:
        """End the server's process group (SIGTERM, then SIGKILL after 15 s) and remove its log."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=15)
            except ProcessLookupError:
                pass
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)

    def __enter__(self) -> "StreamlitServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
