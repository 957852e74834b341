"""The price of reading an upload (rkcore.studies.costs.files.parse_cost), which the server admits before the
parse, bounds the parse's real peak memory, measured in a fresh process (its peak resident size) for the
numeric shapes the price is derived from: many float columns, and the densest file (one-digit cells)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rkcore.studies.costs.files import PARSE_BYTES_PER_FILE_BYTE, parse_cost

REPO = Path(__file__).resolve().parents[2]

_CHILD = r"""
import json, sys
import psutil
from rkcore.spec import load_view_data
kind, size = sys.argv[1], int(sys.argv[2])
head = ",".join(f"c{j}" for j in range(20)) + "\n"
row = ",".join(["1"] * 20) + "\n" if kind == "digits" else ",".join(["0.123456"] * 20) + "\n"
content = (head + row * ((size - len(head)) // len(row))).encode()
base = psutil.Process().memory_info().rss
load_view_data("upload", "none", 100, upload_name="a.csv", upload_bytes=content)
# the peak of this process's own memory (VmHWM): getrusage's ru_maxrss survives exec on Linux, so a child of a
# large pytest process started at its parent's size (540 MB measured in the long run, 16 MB files)
peak = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"bytes": len(content), "extra": peak - base}))
"""


def _measured(kind: str, size: int) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, kind, str(size)], capture_output=True, text=True, timeout=300,
                         cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # two child processes parse 16 MB files
@pytest.mark.parametrize("kind", ["floats", "digits"])
def test_the_price_of_a_parse_bounds_its_peak(kind):
    measured = _measured(kind, 16 * 2**20)
    # the file's bytes are held before the parse (in the base); the price counts them too
    assert measured["extra"] + measured["bytes"] <= parse_cost(measured["bytes"]).bytes, measured


def test_the_price_grows_with_the_file():
    assert parse_cost(0).bytes < parse_cost(2**20).bytes < parse_cost(2**30).bytes
    assert parse_cost(2**30).bytes >= PARSE_BYTES_PER_FILE_BYTE * 2**30
