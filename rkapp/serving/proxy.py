"""Several app processes behind nginx: ``rkcore-app --processes N``.

One Streamlit process runs every session's script in threads that share one interpreter lock, so it
uses about one core however large the machine. ``--processes N`` starts N Streamlit servers on
loopback ports and nginx (Debian's package; its configuration is generated from
``nginx.conf.template`` beside this file) in front of them on the public port. nginx routes each
browser by a cookie it sets on the first request (``rkcore_route``, HttpOnly), so a whole class behind
one NAT address still spreads over the processes and a browser's page, websocket and uploads reach
its own process. The processes share the upload store (``RKCORE_STORE_DIR``, see
:mod:`rkapp.uploads`) and the owner cookie's secret (``RKCORE_COOKIE_SECRET``, :mod:`rkapp.identity`), so
that a browser is the same owner, and a shared link works, whichever process it reaches.

The command's own process only supervises: ``rkcore-app`` replaces itself (``os.execv``, same process id,
so the Dask cluster that watches it stays) with this file run as a script, which imports the standard
library only (about 20 MB, against 0.23 GB with the app's imports it no longer needs).

Nothing to configure: the run's folder (configuration, logs, nginx's temporary files, the store) is a
new private temporary folder, removed at the end. A Streamlit process that dies is started again.
"""
from __future__ import annotations

import os
import secrets
import shutil
import signal
import string
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

#: glibc's allocator settings for every process the command starts (app processes, the Dask cluster and its
#: workers; glibc reads them at start): two malloc arenas, not eight per core (arenas of threads that no longer
#: run hold freed memory), and free memory at the heap's top returned above 64 kB (dask's own nanny default for
#: its workers: ``distributed.nanny.pre-spawn-environ``). Defined here, in a module of the standard library
#: only, so that the supervisor (this file run as a script) needs no other import.
MALLOC_ENV = {"MALLOC_ARENA_MAX": "2", "MALLOC_TRIM_THRESHOLD_": "65536"}

TEMPLATE = Path(__file__).with_name("nginx.conf.template")
NGINX_HINT = ("rkcore-app --processes needs nginx on the PATH (Debian/Ubuntu: apt-get install nginx-light); "
              "without --processes the app runs as one process and needs nothing else")
HEALTH_SECONDS = 120.0
DEFAULT_PORT = 8501
DEFAULT_UPLOAD_MB = 64  # .streamlit/config.toml's server.maxUploadSize


def processes_from(text: str) -> int:
    """The number of app processes: a positive integer, or ``auto`` for the cores this process may use
    (joblib's count, which follows cgroup and affinity limits)."""
    if text.strip().lower() == "auto":
        from joblib import cpu_count

        return max(1, int(cpu_count()))
    try:
        value = int(text)
    except ValueError:
        raise SystemExit(f"--processes takes a positive whole number or 'auto', not {text!r}") from None
    if not 1 <= value <= 64:
        raise SystemExit(f"--processes takes 1 to 64 app processes, not {value}")
    return value


def nginx_config(app_ports: list[int], port: int, folder: str | Path, *, address: str = "0.0.0.0",
                 upload_mb: int = DEFAULT_UPLOAD_MB, user: str | None = None) -> str:
    """The nginx configuration for app processes on ``127.0.0.1:app_ports`` behind ``address:port``.

    Parameters
    ----------
    app_ports : list of int
        Loopback ports of the Streamlit processes.
    port : int
        The port students open.
    folder : str or Path
        The run's private folder: nginx's pid file, error log and temporary files.
    address : str, default "0.0.0.0"
        The address nginx listens on.
    upload_mb : int, default 64
        Streamlit's upload limit in MB; nginx allows one MB more for the multipart envelope.
    user : str, optional
        The user nginx's worker runs as when started by root (nginx's default, nobody, could not
        write to the private folder).

    Returns
    -------
    str
        The configuration file's text.
    """
    if not app_ports:
        raise ValueError("nginx_config needs at least one app port")
    servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=0;" for p in app_ports)
    return string.Template(TEMPLATE.read_text()).substitute(
        processes=len(app_ports), folder=str(folder), upload_mb=int(upload_mb) + 1, servers=servers,
        address=address, port=int(port), user_line=f"user {user};" if user else "")


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def take_option(args: list[str], name: str) -> tuple[str | None, list[str]]:
    """Take ``--name value`` or ``--name=value`` out of streamlit's arguments."""
    rest, value, i = [], None, 0
    while i < len(args):
        if args[i] == name and i + 1 < len(args):
            value, i = args[i + 1], i + 2
            continue
        if args[i].startswith(name + "="):
            value = args[i].split("=", 1)[1]
        else:
            rest.append(args[i])
        i += 1
    return value, rest


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as answer:
            return answer.status == 200
    except OSError:
        return False


@dataclass
class Farm:
    """N Streamlit processes and nginx in front of them (see the module's docstring)."""

    script: Path
    processes: int
    port: int = DEFAULT_PORT
    address: str = "0.0.0.0"
    streamlit_args: list[str] = field(default_factory=list)
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="rkcore-app-")))
    app_ports: list[int] = field(default_factory=list)
    apps: list[subprocess.Popen] = field(default_factory=list)
    nginx: subprocess.Popen | None = None

    def environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("RKCORE_STORE_DIR", str(self.folder / "store"))
        # glibc's allocator settings (rkapp.workers.MALLOC_ENV) for every app process, as for the workers
        for name, value in MALLOC_ENV.items():
            env.setdefault(name, value)
        env.setdefault("STREAMLIT_SERVER_COOKIE_SECRET", self._secret)
        # one owner-cookie secret for every process: a browser's rkcore_owner cookie (rkapp.identity) verifies
        # on whichever process it reaches (a restarted one included)
        env.setdefault("RKCORE_COOKIE_SECRET", self._owner_secret)
        return env

    def _start_app(self, port: int) -> subprocess.Popen:
        log = open(self.folder / f"app-{port}.log", "ab")
        command = [sys.executable, "-m", "streamlit", "run", str(self.script), "--server.headless", "true",
                   "--server.port", str(port), "--server.address", "127.0.0.1", *self.streamlit_args]
        return subprocess.Popen(command, env=self.environment(), stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)

    def start(self) -> None:
        nginx = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx", "/sbin/nginx") if os.access(p, os.X_OK)),
                                              None)
        if nginx is None:
            raise SystemExit(NGINX_HINT)
        self._secret, self._owner_secret = secrets.token_hex(32), secrets.token_hex(32)
        os.chmod(self.folder, 0o700)
        for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi", "store"):
            (self.folder / sub).mkdir(mode=0o700, exist_ok=True)
        self.app_ports = [free_port() for _ in range(self.processes)]
        self.apps = [self._start_app(p) for p in self.app_ports]
        deadline = time.monotonic() + HEALTH_SECONDS
        for port, app in zip(self.app_ports, self.apps):
            while not _healthy(f"http://127.0.0.1:{port}/_stcore/health"):
                if app.poll() is not None or time.monotonic() > deadline:
                    log = (self.folder / f"app-{port}.log").read_text(errors="replace")[-2000:]
                    self.stop()
                    raise SystemExit(f"an app process did not start:\n{log}")
                time.sleep(0.3)
        user = None
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            import pwd

            user = pwd.getpwuid(os.geteuid()).pw_name
        conf = self.folder / "nginx.conf"
        conf.write_text(nginx_config(self.app_ports, self.port, self.folder, address=self.address, user=user))
        self.nginx = subprocess.Popen([nginx, "-e", str(self.folder / "error.log"), "-p", str(self.folder), "-c",
                                       str(conf), "-g", "daemon off;"], start_new_session=True)

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.address in ("0.0.0.0", "::") else self.address
        return f"http://{host}:{self.port}"

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while not _healthy(f"{self.url}/_stcore/health"):
            if self.nginx is None or self.nginx.poll() is not None or time.monotonic() > deadline:
                error = (self.folder / "error.log")
                text = error.read_text(errors="replace")[-2000:] if error.exists() else ""
                self.stop()
                raise SystemExit(f"nginx did not start on {self.url}:\n{text}")
            time.sleep(0.2)

    def keep_alive(self) -> None:
        """Start again an app process that died (its sessions reconnect to the new one)."""
        for k, app in enumerate(self.apps):
            if app.poll() is not None:
                self.apps[k] = self._start_app(self.app_ports[k])

    def stop(self) -> None:
        for proc in [self.nginx, *self.apps]:
            if proc is not None and proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
        for proc in [self.nginx, *self.apps]:
            if proc is not None:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
        shutil.rmtree(self.folder, ignore_errors=True)


def serve(script: Path, processes: int, streamlit_args: list[str]) -> int:
    """Run the farm until nginx exits or the command is interrupted; returns the exit code."""
    port_text, args = take_option(list(streamlit_args), "--server.port")
    address, args = take_option(args, "--server.address")
    farm = Farm(script, processes, int(port_text or DEFAULT_PORT), address or "0.0.0.0", args)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    try:
        farm.start()
        farm.wait_ready()
        print(f"Random Kernel Explorer: {processes} app processes behind nginx at {farm.url} "
              f"(logs and the upload store in {farm.folder}, removed at the end)", flush=True)
        while not stopping and farm.nginx.poll() is None:
            farm.keep_alive()
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        farm.stop()
    return 0


def supervise_argv(script: Path, processes: int, streamlit_args: list[str]) -> list[str]:
    """The command line that runs :func:`serve` in a process of the standard library only (this file as a
    script: no package import, so neither streamlit nor the library is loaded)."""
    return [sys.executable, str(Path(__file__).resolve()), str(script), str(int(processes)), *streamlit_args]


if __name__ == "__main__":  # rkcore-app --processes N, after os.execv (supervise_argv)
    sys.exit(serve(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]))
