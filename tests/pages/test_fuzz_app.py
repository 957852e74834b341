"""Seeded fuzz of the dashboard, and proof that the fuzz would catch a broken app.

:mod:`tests.pages.fuzzing` holds the harness (cases, checks, mutants). Here:

- ``test_fuzz_every_page``: probes, two sessions (a link holding another session's private upload), one
  control case per page, a bounds case per page (every field of the state table out of range: a message
  naming the field and its bound), a largest case per page (each size field at its largest legal value:
  refusal, run button or a quick answer) and ``RK_FUZZ_RUNS`` hostile cases (default 16) from
  ``RK_FUZZ_SEED`` (default: the clock, so every CI run tries new cases; the seed is in every failure
  message - rerun with ``RK_FUZZ_SEED=<seed>``). Every error, warning and info seen must be in the user's
  words (tests.pages.fuzz_cases.wording_problems), and every bounded field of the table must have been
  checked;
- ``test_the_harness_catches_each_mutant``: the harness, run in a subprocess on an app broken on purpose
  in one way (every data load raises, escaping removed, the Gram estimate zeroed, every run refused,
  charts dropped, a slow load, a memory hog, the upload privacy check removed, the bound and choice
  check removed, every run started without refusal or button, numpy's wording shown), must fail on each.

The false-alarm count over many seeds: ``python -m tests.pages.fuzzing --seeds 200 --seed 1 --hostile 16``
(the Gram page's cases, where the statistical oracle is). Skipped with ``-m "not fuzz"``.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO
from tests.pages import fuzz_cases
from tests.pages.fuzzing import MESSAGES, MUTANTS, run_fuzz

pytestmark = pytest.mark.fuzz

SEED = int(os.environ.get("RK_FUZZ_SEED") or time.time_ns() % 2**31)
RUNS = int(os.environ.get("RK_FUZZ_RUNS", "16"))


def test_fuzz_every_page(clear_streamlit_cache):
    failures = run_fuzz(SEED, RUNS)
    print(f"{len(MESSAGES)} distinct messages seen:", *sorted(MESSAGES)[:200], sep="\n  ")
    unchecked = fuzz_cases.bounded_fields() - fuzz_cases.CHECKED
    assert not unchecked, f"fields never seen refused with their bound (seed {SEED}): {sorted(unchecked)}"
    assert not failures, f"fuzz seed {SEED} (replay: RK_FUZZ_SEED={SEED}): {len(failures)} failure(s):\n" + \
        "\n".join(failures[:10])


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_the_harness_catches_each_mutant(mutant):
    """Each mutant runs the probes and control cases first (the cases that can see it), then a few hostile
    ones, and stops at the first failure: the harness must report one."""
    done = subprocess.run([sys.executable, "-m", "tests.pages.fuzzing", "--mutant", mutant, "--seed", str(SEED),
                           "--hostile", "2"], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert done.returncode == 1, (f"the fuzz harness did not catch mutant {mutant!r} (seed {SEED}):\n"
                                  f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    assert "case " in done.stdout, done.stdout[-2000:]
