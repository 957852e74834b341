"""Why no test compares floats with ``==`` after BLAS: the answer depends on the CPU.

OpenBLAS chooses its kernel by CPU at import (``OPENBLAS_CORETYPE`` forces one). Kernels that fuse the
multiply-add (SkylakeX on AVX-512) round a dot product differently from those that do not (Prescott,
and Haswell on small shapes), so the same call returns different bits on different machines. The
README's test command once asserted ``dot_kernel([[1e300, 1e300]], [[1e10, -1e10]]) == 0.0`` and failed
on every AVX-512 CPU, where the answer is -4.15e293: the rounding error of the first product, inside
the accuracy contract (S * eps with S = 2e310).

Here the same repro runs in a process per core type the CPU can execute: every answer is finite and
within the contract, whatever its bits. CI (.ci/run) runs the numerics tests (kernels, maps, theory)
under Prescott and the CPU's own kernel beside the README's run.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from tests.kernels.test_numerics_contract import check_value

REPO = Path(__file__).resolve().parents[2]

_PROBE = """
import json, numpy as np
from threadpoolctl import threadpool_info
from rkcore.kernels import exact as K
X, Y = np.array([[1e300, 1e300]]), np.array([[1e10, -1e10]])
kernels = sorted({i.get("architecture") for i in threadpool_info() if i["internal_api"] == "openblas"})
print(json.dumps({"kernels": kernels, "value": float(K.dot_kernel(X, Y)[0, 0]).hex()}))
"""


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


def _core_types() -> list[str]:
    """The forced kernels this CPU can run (forcing SkylakeX without AVX-512 would crash the process)."""
    flags = _cpu_flags()
    types = ["Prescott"]
    if {"avx2", "fma"} <= flags:
        types.append("Haswell")
    if "avx512f" in flags:
        types.append("SkylakeX")
    return types


def _probe(core: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
    env["OPENBLAS_CORETYPE"] = core
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True,
                          timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def answers() -> dict[str, dict]:
    return {core: _probe(core) for core in _core_types()}


def test_each_forced_kernel_is_the_one_that_runs(answers):
    """A core type that OpenBLAS ignored would make the CI step below test nothing new."""
    for core, answer in answers.items():
        # OpenBLAS reports its Prescott-class kernel under the older name Katmai on some builds
        expected = {"Prescott": {"Prescott", "Katmai"}}.get(core, {core})
        assert set(answer["kernels"]) <= expected, (core, answer["kernels"])


def test_the_dot_repro_is_within_the_contract_under_every_kernel(answers):
    exact, scale = Fraction(0), Fraction(10**300) * 10**10 * 2
    for core, answer in answers.items():
        check_value(f"dot repro under {core}", float.fromhex(answer["value"]), exact, scale)


def test_the_ci_runs_the_numerics_under_other_kernels():
    """The CI step this module explains: numerics under Prescott and the CPU's own kernel."""
    script = (REPO / ".ci" / "run").read_text()
    assert 'OPENBLAS_CORETYPE="$CORE" python -m pytest' in script
    assert "for CORE in Prescott native" in script
    assert "tests/kernels tests/maps tests/theory" in script
