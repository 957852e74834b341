"""rkcore-app --processes N supervises in a process of the standard library only: the command replaces
itself (os.execv, the same pid the Dask cluster watches) with rkapp/serving/proxy.py run as a script."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rkapp import workers
from rkapp.serving import proxy

HEAVY = ("streamlit", "rkcore", "rkapp", "numpy", "pandas", "distributed", "plotly")


def test_the_supervisor_file_imports_the_standard_library_only():
    code = ("import runpy, sys\nrunpy.run_path(sys.argv[1], run_name='supervisor_check')\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))")
    out = subprocess.run([sys.executable, "-c", code, proxy.__file__], capture_output=True, text=True, check=True,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"})
    assert out.stdout.strip() == "[]", out.stdout


def test_rkcore_app_with_processes_execs_the_supervisor_keeping_the_cluster(monkeypatch):
    from rkapp import cli

    monkeypatch.setattr(sys, "argv", list(sys.argv))
    monkeypatch.setenv(workers.SCHEDULER_ENV, "")
    monkeypatch.delenv(workers.SCHEDULER_ENV)
    calls = []
    monkeypatch.setattr(workers, "start_local_cluster", lambda n: calls.append(("start", n)) or ("proc", "tcp://x:1"))
    monkeypatch.setattr(workers, "stop_local_cluster", lambda p: calls.append(("stop", p)))

    def execv(path, argv):
        calls.append(("exec", path, argv, os.environ.get(workers.SCHEDULER_ENV)))
        raise SystemExit(0)  # execv does not return

    monkeypatch.setattr(os, "execv", execv)
    with pytest.raises(SystemExit):
        cli.main(["--processes", "2", "--server.port", "8611"])
    start, (kind, path, argv, scheduler) = calls[0], calls[1]
    assert start[0] == "start" and kind == "exec" and path == sys.executable
    assert argv[1] == str(Path(proxy.__file__).resolve()) and argv[3] == "2" and argv[4:] == ["--server.port", "8611"]
    assert Path(argv[2]).name == "serve.py"
    assert scheduler == "tcp://x:1"  # the app processes the supervisor starts send their work to the cluster
    assert ("stop", "proc") not in calls  # the cluster outlives the exec: it watches this pid, which stays
