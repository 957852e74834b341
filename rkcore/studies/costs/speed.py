"""The machine's speed now: :func:`probe_seconds` times a fixed small workload, :func:`speed_factor` compares
it with the quiet calibration machine (clamped, reused for SPEED_CACHE_SECONDS) for the estimates benchmark,
and :func:`estimate_factor` is the factor every estimate is multiplied by (``RKCORE_SPEED_FACTOR``, else 1;
never the probe, issue 26).
"""
from __future__ import annotations

import math
import os
import threading
import time

import numpy as np
from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

#: Wall seconds of :func:`probe_seconds` on the quiet machine the constants were fitted on (median of
#: 15 probes in fresh processes, 12.4-15.7 ms, with no other job running).
PROBE_REFERENCE_SECONDS = 0.014
#: Bounds of :func:`speed_factor`: a faster server than the calibration machine halves the estimates at
#: most; a loaded one multiplies them by up to 16 (wall / CPU time of the benchmark's runs reached 10-16x
#: at load average 7-13 on the 2-core machine, benchmarks/results/run_estimates.md).
MIN_SPEED_FACTOR, MAX_SPEED_FACTOR = 0.5, 16.0
#: Seconds a measured speed factor is reused: every rerun of every page asks for it.
SPEED_CACHE_SECONDS = 10.0
#: Environment variable that fixes the speed factor (the tests pin it to 1, so which settings auto-run,
#: wait or are refused does not move with the machine).
SPEED_FACTOR_ENV = "RKCORE_SPEED_FACTOR"
_speed_lock = threading.Lock()
_speed_cache: dict[str, float] = {}  # "at": _clock() at the probe, "factor": its factor
_clock = time.monotonic


def probe_seconds(rounds: int = 20) -> float:
    """Wall seconds of a fixed small workload of the two kinds the models price (a 192 × 192 GEMM on one
    BLAS thread and element-wise passes over 65,536 numbers), ``rounds`` pieces of ~1 ms back to back,
    after one warm-up piece: about 14 ms on the quiet machine (up to 16x that on a busy one, once per
    SPEED_CACHE_SECONDS). The total, not a median of the pieces:
    a 1 ms piece mostly escapes the scheduler's time slicing (medians did not move at a 3x slowdown),
    while 25 ms in a row share the cores like a run does.

    Parameters
    ----------
    rounds : int, default 20
        Timed pieces of work.

    Returns
    -------
    float
        Wall seconds of the timed pieces.
    """
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((192, 192)), rng.standard_normal(1 << 16)

    def piece() -> None:  # numpydoc ignore=GL08
        A @ A
        np.sqrt(np.abs(x * 1.5 + 0.5)).sum()

    with threadpool_limits(limits=1, user_api="blas"):
        piece()
        started = time.perf_counter()
        for _ in range(int(rounds)):
            piece()
        return time.perf_counter() - started


def _clamped(factor: float) -> float:
    return min(max(float(factor), MIN_SPEED_FACTOR), MAX_SPEED_FACTOR)


def speed_factor() -> float:
    """How much slower than the calibration machine a run is now: :func:`probe_seconds` over
    PROBE_REFERENCE_SECONDS, clamped to [MIN_SPEED_FACTOR, MAX_SPEED_FACTOR] and reused for
    SPEED_CACHE_SECONDS. ``RKCORE_SPEED_FACTOR`` fixes it (clamped as well; a value that is not a
    positive number is ignored). benchmarks/results/run_estimates.md compares it with the load average.

    Returns
    -------
    float
        The slowdown factor (1 on the quiet calibration machine).
    """
    fixed = os.environ.get(SPEED_FACTOR_ENV, "").strip()
    if fixed:
        try:
            value = float(fixed)
        except ValueError:
            value = math.nan
        if value > 0 and math.isfinite(value):
            return _clamped(value)
    with _speed_lock:  # one probe at a time: concurrent sessions reuse it instead of probing at once
        if not _speed_cache or _clock() - _speed_cache["at"] > SPEED_CACHE_SECONDS:
            _speed_cache.update(at=_clock(), factor=_clamped(probe_seconds() / PROBE_REFERENCE_SECONDS))
        return _speed_cache["factor"]


def estimate_factor() -> float:
    """The factor of every estimate: ``RKCORE_SPEED_FACTOR`` (clamped like :func:`speed_factor`; a value
    that is not a positive number is ignored), else 1. Constant while a server runs, so the same
    settings always get the same estimate and the same decision (run, wait for the button, refuse).

    Returns
    -------
    float
        The factor, in [MIN_SPEED_FACTOR, MAX_SPEED_FACTOR].
    """
    fixed = os.environ.get(SPEED_FACTOR_ENV, "").strip()
    try:
        value = float(fixed) if fixed else math.nan
    except ValueError:
        value = math.nan
    return _clamped(value) if value > 0 and math.isfinite(value) else 1.0
