"""Library size checks (issue 12): oversized requests raise a ValueError naming the array, the shape
and the bytes, before anything of that size is allocated (tracemalloc shows the peak stays small)."""
from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rkcore.base import admission as server_admission
from rkcore.base import limits
from rkcore.base.limits import (
    check_allocation, estimate_cost, format_bytes, max_size_within, memory_budget, memory_budget_set, nbytes,
    require_memory,
)

#: Peak Python-visible allocation allowed while refusing (the refused arrays are GBs to TBs).
SMALL = 64 * 2**20


def peak_while(fn):
    """(result or exception, peak bytes traced) of fn()."""
    tracemalloc.start()
    try:
        try:
            out = fn()
        except Exception as exc:  # noqa: BLE001 - returned for the caller to inspect
            out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ----------------------------------------------------------------------------- the helper itself
def test_nbytes_is_exact_for_huge_shapes():
    assert nbytes((10**9, 10**9)) == 8 * 10**18  # beyond int64: Python ints, no overflow
    assert nbytes((3, 4), (5,), itemsize=4) == 4 * 17
    assert nbytes((0, 10**12)) == 0


def test_format_bytes_units():
    assert format_bytes(512) == "512 B"
    assert format_bytes(1536) == "1.5 KB"
    assert format_bytes(80_000_000_000) == "74.5 GB"
    assert format_bytes(8 * 10**18).endswith("PB")


def test_check_allocation_message_names_array_shape_and_bytes():
    with pytest.raises(ValueError) as info:
        check_allocation("The random weights", (10**9, 10), budget=2**30, hint="Lower D.")
    msg = str(info.value)
    assert "The random weights" in msg and "1,000,000,000 x 10" in msg and "float64" in msg
    assert "80,000,000,000 bytes" in msg and "74.5 GB" in msg and "1.0 GB allowed" in msg and msg.endswith("Lower D.")
    assert check_allocation("small", (10, 10), budget=2**30) == 800
    assert check_allocation("ints", (10,), np.int32, budget=2**30) == 40


def test_require_memory_and_estimate():
    est = estimate_cost({"a": (10, 10), "b": (2, 5)})
    assert est.bytes == 880 and est.parts == (("a", 800), ("b", 80))
    assert require_memory({"a": (10, 10)}, budget=1000).bytes == 800
    with pytest.raises(ValueError, match=r"need about 7\.8 KB .*a 7\.8 KB.*more than the 1,000 B allowed\. Try less"):
        require_memory({"a": (1000,)}, budget=1000, hint="Try less.")


def test_budget_is_configurable(monkeypatch):
    monkeypatch.setenv("RKCORE_MEMORY_BUDGET", "12345")
    assert memory_budget() == 12345
    with memory_budget_set(999):
        assert memory_budget() == 999
        with pytest.raises(ValueError, match="999 B allowed"):
            check_allocation("x", (1000,))
    assert memory_budget() == 12345
    monkeypatch.delenv("RKCORE_MEMORY_BUDGET")
    assert memory_budget() == limits.physical_memory() // 2
    monkeypatch.setenv("RKCORE_MEMORY_BUDGET", "lots")
    with pytest.raises(ValueError, match="RKCORE_MEMORY_BUDGET"):
        memory_budget()
    with pytest.raises(ValueError):
        with memory_budget_set(0):
            pass


def test_max_size_within():
    assert max_size_within(lambda s: 8 * s * s, budget=800) == 10
    assert max_size_within(lambda s: 10**20, budget=1) == 0


# ----------------------------------------------------------------------------- the library's users of it
def test_random_kernel_huge_n_components_is_a_value_error():
    from rkcore.maps.random_kernel import RandomKernel

    out, peak = peak_while(lambda: RandomKernel(n_components=10**9, random_state=0).fit(np.ones((3, 10))))
    assert isinstance(out, ValueError), out
    # the weights and the temporaries of their draw (5 W-sized arrays at most, measured)
    assert "random weights" in str(out) and "5 x 1,000,000,000 x 10" in str(out) and "400,000,000,000 bytes" in str(out)
    largest = max_size_within(lambda D: nbytes((5, D, 10)), upper=10**12)
    assert f"The largest n_components (D) that fits is {largest:,}" in str(out)
    assert peak < SMALL


def test_random_kernel_transform_checks_the_output(monkeypatch):
    from rkcore.maps.random_kernel import RandomKernel

    from rkcore.maps.random_kernel import transform_parts

    rk = RandomKernel(n_components=64, random_state=0).fit(np.ones((3, 10)))  # second-order ANOVA
    # Z, the weights' powers transform caches (2m + 3 = 7 W-sized arrays for m = 2) and a row block's scratch
    with memory_budget_set(estimate_cost(transform_parts(rk.family_, 100, 64, 10)).bytes):
        rk.transform(np.ones((100, 10)))  # exactly the budget: fine
        with pytest.raises(ValueError, match=r"the random features Z 50\.5 KB.*The largest number of rows that fits "
                                             r"is 100 "):
            rk.transform(np.ones((101, 10)))


@pytest.mark.parametrize("build", [
    lambda: __import__("rkcore.maps.maclaurin", fromlist=["x"]).RandomMaclaurin(n_components=10**9, random_state=0),
    lambda: __import__("rkcore.maps.circulant", fromlist=["x"]).SignedCirculantRandomKernel(n_components=10**10,
                                                                                        random_state=0),
])
def test_other_maps_refuse_huge_n_components(build):
    out, peak = peak_while(lambda: build().fit(np.ones((3, 10))))
    assert isinstance(out, ValueError) and "bytes" in str(out), out
    assert peak < SMALL


@pytest.mark.parametrize("key", ["gaussian", "interactions"])
def test_load_builtin_huge_n_samples(key):
    from rkcore.data.datasets import load_builtin

    out, peak = peak_while(lambda: load_builtin(key, n_samples=10**9))
    assert isinstance(out, ValueError), out
    assert "synthetic data" in str(out) and "1,000,000,000 x" in str(out) and "n_samples" in str(out)
    assert peak < SMALL


def test_polynomial_features_on_5000_columns():
    from rkcore.teaching.kernel_trick import polynomial_feature_names, polynomial_features

    out, peak = peak_while(lambda: polynomial_features(np.ones((10, 5000)), 2))
    assert isinstance(out, ValueError), out
    assert "12,507,501 monomials" in str(out) and "exponent table" in str(out)
    assert peak < SMALL
    with pytest.raises(ValueError, match="exponent table"):
        polynomial_feature_names(5000, 2)
    # small cases are untouched
    assert polynomial_features(np.ones((2, 3)), 2).shape == (2, 10)


def test_kernel_trick_timing_huge_n():
    from rkcore.teaching.kernel_trick import kernel_trick_timing

    out, peak = peak_while(lambda: kernel_trick_timing(n=10**6, d_list=(2,), repeats=1))
    assert isinstance(out, ValueError), out
    assert "Gram" in str(out) and "n=1,000,000" in str(out) and "TB" in str(out)
    assert peak < SMALL


def test_rff_and_projection_sizes_are_checked():
    from rkcore.teaching.fourier_features import rff_error_curve, rff_features
    from rkcore.teaching.kernel_trick import interaction_features
    from rkcore.teaching.random_projections import projection_distortion

    X = np.ones((4, 3))
    with pytest.raises(ValueError, match="rff_features would need"):
        rff_features(X, 1.0, n_components=10**11)
    with pytest.raises(ValueError, match="rff_error_curve would need"):
        rff_error_curve(X, 1.0, D_list=(10**11,), trials=1)
    with pytest.raises(ValueError, match="projection_distortion would need"):
        projection_distortion(X, m_list=(10**11,), trials=1)
    with memory_budget_set(1000):
        with pytest.raises(ValueError, match="interaction features"):
            interaction_features(np.ones((100, 5)), 2)


def test_gram_pair_refuses_huge_n():
    import scipy.sparse as sp

    from rkcore.registry import KernelSpec
    from rkcore.studies.gram import gram_pair

    X = sp.csr_matrix((10**6, 5))  # a million (empty) rows cost nothing to hold
    with pytest.raises(ValueError, match=r"gram_pair would need about 29\.1 TB"):
        gram_pair(X, KernelSpec("anova", degree=2), "rk", 16)


# ---------------------------------------------------------------------------- server-wide admission (issue 26)
class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_admission_bounds_concurrent_runs_and_their_memory():
    """Many threads ask at once: never more than `slots` runs together, never more than `budget` bytes
    admitted together, and every run ends up running (none dropped)."""
    import random
    import threading
    import time

    admission = server_admission.Admission(slots=2, budget=100)
    lock = threading.Lock()
    running, peak_runs, peak_bytes, finished = [], [0], [0], []

    def run(k: int, size: int) -> None:
        with admission.admitted(size, 0.01, poll=0.01):
            with lock:
                running.append(size)
                peak_runs[0] = max(peak_runs[0], len(running))
                peak_bytes[0] = max(peak_bytes[0], sum(running))
            time.sleep(0.002 * random.Random(k).random())
            with lock:
                running.remove(size)
                finished.append(k)

    sizes = [random.Random(k).choice([10, 30, 60, 90]) for k in range(40)]
    threads = [threading.Thread(target=run, args=(k, s)) for k, s in enumerate(sizes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert sorted(finished) == list(range(40))
    assert peak_runs[0] == 2 and peak_bytes[0] <= 100
    assert admission.state() == {"running": 0, "waiting": 0, "bytes": 0, "slots": 2, "budget": 100}


def test_admission_is_first_come_first_served_and_a_big_run_is_not_overtaken():
    clock = FakeClock()
    admission = server_admission.Admission(slots=3, budget=100, clock=clock)
    a = admission.request(60, seconds=4.0)
    clock.now = 1.0
    big = admission.request(70, seconds=2.0)   # does not fit next to a: waits
    small = admission.request(10, seconds=1.0)  # would fit, but must not overtake the big run
    assert a.admitted and not big.admitted and not small.admitted
    assert admission.position(big) == 1 and admission.position(small) == 2 and admission.position(a) == 0
    # expected waits from the cost models: a has 3 s left at t = 1; small also waits for big's 2 s
    assert admission.expected_wait(big) == pytest.approx(3.0 / 3)
    assert admission.expected_wait(small) == pytest.approx((3.0 + 2.0) / 3)
    # a rerun of a session that was waiting since t = 0.5 keeps its earlier place
    early = admission.request(50, seconds=1.0, arrival=0.5)
    assert admission.position(early) == 1 and admission.position(big) == 2
    admission.release(early)  # the session went away while waiting: it leaves the line
    admission.release(a)
    assert big.admitted and small.admitted and admission.state()["bytes"] == 80
    admission.release(a)  # idempotent
    assert admission.state()["running"] == 2


def test_admission_releases_a_raising_run_and_refuses_what_never_fits():
    admission = server_admission.Admission(slots=1, budget=100)
    with pytest.raises(RuntimeError, match="boom"):
        with admission.admitted(50):
            assert admission.state()["running"] == 1
            raise RuntimeError("boom")
    assert admission.state()["running"] == 0
    with admission.admitted(100):  # the slot is free again
        pass
    with pytest.raises(ValueError, match=r"more than the 100 B this server gives all runs at once"):
        admission.request(101)
    assert admission.state() == {"running": 0, "waiting": 0, "bytes": 0, "slots": 1, "budget": 100}


def test_admission_leaves_the_line_when_the_wait_is_abandoned():
    """A session that stops while waiting (on_wait raises, as Streamlit's stop does at a checkpoint)
    leaves the line: the run behind it moves up."""
    admission = server_admission.Admission(slots=1, budget=100)
    holder = admission.request(10)
    behind = []

    def stop(ticket):
        behind.append(admission.request(10))
        raise KeyboardInterrupt("session closed")

    with pytest.raises(KeyboardInterrupt):
        with admission.admitted(10, poll=0.01, on_wait=stop):
            pass
    assert admission.position(behind[0]) == 1
    admission.release(holder)
    assert behind[0].admitted


def test_server_limits_come_from_the_environment(monkeypatch):
    monkeypatch.delenv(server_admission.SERVER_RUNS_ENV, raising=False)
    monkeypatch.delenv(server_admission.SERVER_MEMORY_ENV, raising=False)
    assert server_admission.server_runs() == server_admission.usable_cores() >= 1
    assert server_admission.server_memory() == limits.physical_memory() // 4
    monkeypatch.setenv(server_admission.SERVER_RUNS_ENV, "3")
    monkeypatch.setenv(server_admission.SERVER_MEMORY_ENV, "4e9")
    assert server_admission.server_runs() == 3 and server_admission.server_memory() == 4_000_000_000
    for junk in ("0", "-2", "many", "nan", "inf"):
        monkeypatch.setenv(server_admission.SERVER_RUNS_ENV, junk)
        with pytest.raises(ValueError, match="RKCORE_SERVER_RUNS must be a positive number"):
            server_admission.server_runs()
    monkeypatch.delenv(server_admission.OWNER_RUNS_ENV, raising=False)
    assert server_admission.owner_runs() == server_admission.RUNS_PER_OWNER == 1
    monkeypatch.setenv(server_admission.OWNER_RUNS_ENV, "2")
    assert server_admission.owner_runs() == 2
    monkeypatch.setenv(server_admission.OWNER_RUNS_ENV, "0")
    with pytest.raises(ValueError, match="RKCORE_OWNER_RUNS must be a positive number"):
        server_admission.owner_runs()


# ============================================================================ estimates shown to the reader
def _shown_seconds(text: str) -> float:
    """The number of seconds a format_estimate phrase names ("about 2 minutes" -> 120)."""
    number, unit = text.removeprefix("about ").split(" ")
    return float(number.replace(",", "")) * {"s": 1, "minute": 60, "minutes": 60, "hour": 3600, "hours": 3600}[unit]


@given(st.floats(min_value=0.0, max_value=1e9, allow_nan=False))
def test_format_estimate_is_under_1_s_or_one_significant_digit(seconds):
    from rkcore.base.limits import format_estimate

    text = format_estimate(seconds)
    if seconds < 1:
        assert text == "under 1 s"  # never "about 0 s"
        return
    assert text.startswith("about ") and not text.startswith("about 0")
    shown = _shown_seconds(text)
    unit = 1 if text.endswith(" s") else 60 if "minute" in text else 3600
    digit = 10 ** math.floor(math.log10(seconds / unit))  # the one significant digit's place
    assert abs(shown - seconds) <= 0.5 * digit * unit * (1 + 1e-12), (seconds, text)
    assert len(text.removeprefix("about ").split(" ")[0].replace(",", "").rstrip("0")) == 1, text


def test_format_estimate_examples():
    from rkcore.base.limits import format_estimate

    assert [format_estimate(s) for s in (0.0, 0.3, 1.4, 2.6, 46, 95, 300, 5400)] == [
        "under 1 s", "under 1 s", "about 1 s", "about 3 s", "about 50 s", "about 2 minutes", "about 5 minutes",
        "about 2 hours"]
    assert format_estimate(60) == "about 60 s" and format_estimate(float("nan")) == "an unknown time"
