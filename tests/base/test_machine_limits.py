"""Cores and memory as a container sees them: joblib's cgroup-aware core count, the cgroup memory limit."""
from __future__ import annotations

import sys

import joblib

from rkcore.base import admission, limits


def test_usable_cores_follow_joblib(monkeypatch):
    """joblib.cpu_count() reads the cgroup CPU quota (docker --cpus=1 gives 1 on a 2-core machine), which the
    affinity mask does not show."""
    monkeypatch.setattr(joblib, "cpu_count", lambda *args, **kwargs: 1)
    assert admission.usable_cores() == 1


def test_physical_memory_is_lowered_to_the_cgroup_limit(monkeypatch, tmp_path):
    monkeypatch.delitem(sys.modules, "distributed.system", raising=False)
    limit = tmp_path / "memory.max"
    limit.write_text("1073741824\n")
    monkeypatch.setattr(limits, "CGROUP_MEMORY_FILES", (str(tmp_path / "absent"), str(limit)))
    assert limits.physical_memory() == 2**30
    limit.write_text("max\n")  # cgroup v2 without a limit: the machine's memory
    assert limits.physical_memory() > 2**30


def test_physical_memory_takes_distributed_limit_when_loaded(monkeypatch):
    class FakeSystem:
        MEMORY_LIMIT = 3 * 2**30

    monkeypatch.setitem(sys.modules, "distributed.system", FakeSystem)
    assert limits.physical_memory() == 3 * 2**30
