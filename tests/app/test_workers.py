"""Heavy work in Dask worker processes (rkapp.workers, issue 37): with a real local cluster of worker processes,
a view's computation runs in a worker and equals the in-process result (by a derived rounding bound, not ==),
a worker that dies or outgrows its memory mid-run is a clear message and the next run works, uploads are parsed
there, RKCORE_SCHEDULER picks the cluster (an external one too), and without it everything stays in process."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from rkapp import workers
from rkcore.views import ViewSpec
from rkcore.views import gram
from tests.app import worker_tasks

REPO = Path(__file__).resolve().parents[2]
#: A worker's memory limit in these tests: its imports (about 0.3 GB) and room for a small run.
TEST_WORKER_BYTES = workers.WORKER_BASE_BYTES + 256 * 2**20


def _disconnect() -> None:
    if workers._client is not None:
        workers._client.close()
        workers._client = None


@pytest.fixture(scope="module")
def cluster():
    """rkcore-app's local cluster (two worker processes, one thread each), as start_local_cluster starts it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        # as rkcore-app's environment is: a nanny started in this test process earlier (dask's own default
        # configuration) wrote its MALLOC_TRIM_THRESHOLD_ into os.environ, and a nanny lets the environment override
        # the thresholds its configuration gives the workers
        for name in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"):
            mp.delenv(name, raising=False)
        process, address = workers.start_local_cluster(2, TEST_WORKER_BYTES)
    yield address
    _disconnect()
    workers.stop_local_cluster(process)
    assert process.poll() is not None


@pytest.fixture
def on_cluster(cluster, monkeypatch):
    monkeypatch.setenv(workers.SCHEDULER_ENV, cluster)
    monkeypatch.setattr(workers, "one_blas_thread_here", lambda: None)  # not this test process's pools and environment
    client = workers._client_or_none()
    # a worker ended by the test before is back: in 0.3 s on a quiet machine, but twice in this stop's runs (after
    # an edit, with the test files' bytecode recompiled) not within 60 s; 180 s before calling it an error
    client.wait_for_workers(2, timeout=180)
    yield client
    _disconnect()


def _worker_pids(client) -> set[int]:
    return set(client.run(os.getpid).values())


def test_without_a_scheduler_everything_stays_in_process(monkeypatch):
    monkeypatch.delenv(workers.SCHEDULER_ENV, raising=False)
    assert workers.scheduler_address() is None
    assert workers.run_in_worker(os.getpid, what="x") == os.getpid()


def test_a_view_computes_in_a_worker_and_equals_the_in_process_result(on_cluster):
    from distributed import get_task_stream

    from rkapp.views import execute
    from rkcore.spec import load_view_data

    spec = ViewSpec(dataset="wine", n=60, D=256, seed=3)
    data = load_view_data(spec.dataset, spec.normalization, spec.n)
    with get_task_stream(on_cluster) as stream:
        far = execute(gram.GRAM, spec, data, {})
    assert len(stream.data) == 1 and stream.data[0]["worker"] in on_cluster.scheduler_info()["workers"]
    near = gram.GRAM.compute(spec, data)
    assert (far.block, far.n, far.d, far.kernel_text) == (near.block, near.n, near.d, near.kernel_text)
    # Same code and inputs; only BLAS's summation order may differ (one thread there). K̂ = Z Zᵀ sums D terms:
    # reordering moves an entry by at most 2 D eps sqrt(K̂ii K̂jj) <= 2 D eps max|K̂|; K sums d terms.
    eps = np.finfo(float).eps
    for a, b, terms in ((far.K_small, near.K_small, data.X.shape[1]), (far.K_hat_small, near.K_hat_small, spec.D)):
        bound = 2 * terms * eps * np.abs(b).max()
        assert np.abs(a - b).max() <= bound
    assert list(far.stats.columns) == list(near.stats.columns)


def test_one_blas_thread_in_a_worker(on_cluster):
    assert workers.run_in_worker(worker_tasks.blas_threads, what="x") == [1]


def test_a_worker_that_dies_mid_run_is_a_clear_message_and_the_next_run_works(on_cluster):
    with pytest.raises(workers.WorkerLost) as lost:
        workers.run_in_worker(worker_tasks.stop_own_process, ("spec", "data"), what="the Gram matrices")
    assert str(lost.value).startswith("The worker computing the Gram matrices stopped before it finished "
                                      "(out of memory?): reduce n or D and run again.")
    assert "KilledWorker" not in str(lost.value) and "tcp://" not in str(lost.value)
    assert workers.run_in_worker(worker_tasks.sleep_then_pid, (0,), what="x") in _worker_pids(on_cluster)


@pytest.mark.slow  # 8 s; CI's long job runs it (the README suite keeps under 8 minutes)
def test_a_worker_killed_from_outside_mid_run_is_a_clear_message_others_go_on(on_cluster):
    """Both workers busy with a run each, a third run waiting on one of them; that worker is killed (SIGKILL):
    the run it was computing gets the message; the run that only waited there is sent again and finishes, as
    does the other worker's run; a run afterwards works on the restarted worker."""
    results: dict = {}

    def run(name: str, seconds: float) -> None:
        try:
            results[name] = workers.run_in_worker(worker_tasks.sleep_then_pid, (seconds,), what=f"the {name} run")
        except ValueError as exc:
            results[name] = exc

    def processing(count: int) -> dict:
        deadline = time.monotonic() + 30
        while True:
            now = on_cluster.processing()
            if sum(len(tasks) for tasks in now.values()) >= count:
                return now
            assert time.monotonic() < deadline, f"{count} runs never reached the workers: {now}"
            time.sleep(0.05)

    threads = []
    for name, seconds, count in (("long", 8.0, 1), ("other", 8.0, 2), ("waiting", 0.0, 3)):
        threads.append(threading.Thread(target=run, args=(name, seconds)))
        threads[-1].start()
        now = processing(count)
    (victim,) = [w for w, tasks in now.items() if len(tasks) == 2]
    pid = on_cluster.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, 9)
    for thread in threads:
        thread.join(60)
    lost = [name for name, value in results.items() if isinstance(value, workers.WorkerLost)]
    assert len(lost) == 1 and lost[0] in ("long", "other"), results
    assert str(results[lost[0]]).startswith(f"The worker computing the {lost[0]} run stopped before it finished")
    finished = {name: value for name, value in results.items() if name not in lost}
    assert set(finished) == {"waiting", "long", "other"} - set(lost)
    assert all(isinstance(v, int) and v != pid for v in finished.values()), results
    on_cluster.wait_for_workers(2, timeout=60)  # the nanny started a new worker
    assert workers.run_in_worker(worker_tasks.sleep_then_pid, (0,), what="x") != pid


@pytest.mark.slow  # a worker process's memory, another cluster, or a page's run in AppTest
def test_a_run_beyond_its_workers_memory_limit_ends_that_worker_only(on_cluster):
    with pytest.raises(workers.WorkerLost, match="out of memory"):
        workers.run_in_worker(worker_tasks.allocate, (TEST_WORKER_BYTES // 2**20,), what="the Gram matrices")
    assert workers.run_in_worker(worker_tasks.allocate, (8,), what="x") == 2**20


def test_workers_reuse_their_heap_for_small_arrays_and_give_it_back_after_a_task(on_cluster):
    """LOCAL_CLUSTER_CONFIG's heap thresholds reach the workers (dask's default trim threshold, which freezes the mmap
    threshold at 128 KiB, made the study views fault in fresh pages for every array), and they work: a 2 MB array
    allocated and freed a hundred times faults its pages in about once, not a hundred times."""
    from rkcore.studies.distributed import LOCAL_CLUSTER_CONFIG

    wanted = LOCAL_CLUSTER_CONFIG["distributed.nanny.pre-spawn-environ"]
    names = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
    environ = on_cluster.run(lambda: {k: os.environ.get(k) for k in names})
    assert environ and all(e == {k: str(wanted[k]) for k in names} for e in environ.values()), environ
    size = 2 * 2**20
    assert size < int(wanted["MALLOC_MMAP_THRESHOLD_"])
    faults = on_cluster.submit(worker_tasks.page_faults_of_reused_arrays, size, 100, pure=False).result()
    assert faults < size // 4096 * 5, faults  # a fresh mmap each time: about 100 x 512 pages


def test_errors_raised_in_a_worker_arrive_as_raised(on_cluster):
    from rkcore.spec import load_view_data

    with pytest.raises(ValueError, match="The CSV file is empty"):
        workers.run_in_worker(load_view_data, ("upload", "none", 10), dict(upload_name="a.csv", upload_bytes=b""),
                              what="the file a.csv")
    big = b"a,b\n" + b"1,2\n" * (workers.SCATTER_BYTES // 4 + 10)  # sent to a worker directly (scatter)
    data = workers.run_in_worker(load_view_data, ("upload", "none", 10), dict(upload_name="a.csv", upload_bytes=big),
                                 what="the file a.csv")
    assert data.X.shape == (10, 2)


@pytest.mark.slow  # a worker process's memory, another cluster, or a page's run in AppTest
def test_an_external_scheduler_named_in_the_environment_is_used(monkeypatch):
    """RKCORE_SCHEDULER names a cluster the app did not start (a department's): its workers compute."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
                      memory_limit=TEST_WORKER_BYTES) as external:
        monkeypatch.setenv(workers.SCHEDULER_ENV, external.scheduler_address)
        try:
            client = workers._client_or_none()
            assert client.scheduler.address == external.scheduler_address
            pid = workers.run_in_worker(worker_tasks.sleep_then_pid, (0,), what="x")
            assert pid != os.getpid() and pid in _worker_pids(client)
        finally:
            _disconnect()


def test_an_unreachable_scheduler_is_a_clear_message(monkeypatch):
    from rkapp.serving.proxy import free_port

    monkeypatch.setenv(workers.SCHEDULER_ENV, f"tcp://127.0.0.1:{free_port()}")
    monkeypatch.setattr(workers, "CONNECT_SECONDS", 1)
    try:
        with pytest.raises(ValueError, match="The server's worker processes cannot be reached"):
            workers.run_in_worker(os.getpid, what="x")
    finally:
        _disconnect()


@pytest.mark.parametrize("environment, started", [({}, True), ({workers.SCHEDULER_ENV: "tcp://10.0.0.5:8786"}, False)])
def test_rkcore_app_starts_a_local_cluster_unless_one_is_named(monkeypatch, environment, started):
    """The command starts a cluster and hands its address to the app process(es), unless RKCORE_SCHEDULER is set
    (or --workers 0); it stops it when the app ends."""
    import streamlit.web.cli as stcli

    from rkapp import cli

    import sys

    monkeypatch.setattr(sys, "argv", list(sys.argv))  # the command sets streamlit's argv
    monkeypatch.setenv(workers.SCHEDULER_ENV, "")  # recorded, so the address the command sets is undone at the end
    monkeypatch.delenv(workers.SCHEDULER_ENV)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    calls = []
    monkeypatch.setattr(workers, "start_local_cluster", lambda n: calls.append(("start", n)) or ("proc", "tcp://x:1"))
    monkeypatch.setattr(workers, "stop_local_cluster", lambda p: calls.append(("stop", p)))
    monkeypatch.setattr(stcli, "main", lambda: calls.append(("app", os.environ.get(workers.SCHEDULER_ENV))) or 0)
    monkeypatch.setattr(workers, "one_blas_thread_here", lambda: calls.append(("one BLAS thread", None)))
    with pytest.raises(SystemExit):
        cli.main([])
    scheduler = "tcp://x:1" if started else environment[workers.SCHEDULER_ENV]
    assert calls == ([("start", workers.local_workers())] if started else []) + [
        ("one BLAS thread", None), ("app", scheduler)] + ([("stop", "proc")] if started else [])
    calls.clear()
    monkeypatch.delenv(workers.SCHEDULER_ENV, raising=False)
    with pytest.raises(SystemExit):
        cli.main(["--workers", "0"])
    assert calls == [("app", None)]


def test_worker_memory_limit_follows_the_budget():
    assert workers.worker_memory_limit(10**9) == 10**9 + workers.WORKER_BASE_BYTES
    assert workers.worker_memory_limit(10**12) <= 2 * 2**30 + workers.WORKER_BASE_BYTES
    with pytest.raises(SystemExit, match="--workers takes"):
        workers.workers_from("-1")
    assert workers.workers_from("auto") == workers.local_workers() >= 1


# ---------------------------------------------------------------------------- pages (AppTest) on the cluster
GRAM_PAGE = "pages/1_Gram_matrices.py"


@pytest.fixture
def heavy_runs(monkeypatch):
    """Every run priced as too heavy to compute in the app process (workers.computed_here), whatever its size."""
    monkeypatch.setattr(workers, "HERE_SECONDS", 0.0)


@pytest.mark.slow  # a worker process's memory, another cluster, or a page's run in AppTest
def test_the_gram_page_computes_in_a_worker(on_cluster, run_page, heavy_runs):
    from distributed import get_task_stream

    from tests.conftest import error_texts, plotly_figures

    with get_task_stream(on_cluster) as stream:
        at = run_page(GRAM_PAGE, dataset="wine", n=40, D=64)
    assert not error_texts(at) and plotly_figures(at)
    assert len(stream.data) == 1  # the view's compute (wine is a built-in data set: read in the app process)


@pytest.mark.slow  # a worker process's memory, another cluster, or a page's run in AppTest
def test_a_light_run_is_computed_in_the_app_process_a_heavy_one_in_a_worker(on_cluster, run_page):
    """Issue 37 (d): a run priced under HERE_SECONDS and HERE_BYTES costs less CPU here than its trip to a worker.
    The Gram page at n = 40, D = 64 is light (priced in ms): no task; at n = 400, D = 4096 it is not: one task."""
    from distributed import get_task_stream

    from tests.conftest import error_texts, plotly_figures

    for n, D, tasks in ((40, 64, 0), (400, 4096, 1)):
        cost = gram.GRAM.cost(ViewSpec(dataset="wine", n=n, D=D), n, 13)
        assert (cost.seconds < workers.HERE_SECONDS) == (tasks == 0), (n, D, cost)
        with get_task_stream(on_cluster) as stream:
            at = run_page(GRAM_PAGE, dataset="wine", n=n, D=D)
        assert not error_texts(at) and plotly_figures(at)
        assert len(stream.data) == tasks, (n, D, stream.data)


def test_light_runs_here_are_bounded_per_process(monkeypatch):
    """computed_here: without a cluster everything is here; with one, a light run is here while the process's share
    has room, a heavy or large one never, and a run's bytes return to the share when it ends (or raises)."""
    monkeypatch.delenv(workers.SCHEDULER_ENV, raising=False)
    with workers.computed_here(1e9, 10**12) as here:
        assert here
    monkeypatch.setenv(workers.SCHEDULER_ENV, "tcp://127.0.0.1:1")  # never reached: nothing here connects
    light = workers.HERE_BYTES - 1
    with workers.computed_here(workers.HERE_SECONDS / 2, light) as here:
        assert here
    with workers.computed_here(workers.HERE_SECONDS, 0) as here:
        assert not here
    with workers.computed_here(0.0, workers.HERE_BYTES) as here:
        assert not here
    fits = workers.HERE_PROCESS_BYTES // light
    held = [workers.computed_here(0.0, light) for _ in range(fits + 1)]
    entered = [h.__enter__() for h in held]
    assert entered == [True] * fits + [False]
    for h in reversed(held):
        h.__exit__(None, None, None)
    with pytest.raises(RuntimeError):
        with workers.computed_here(0.0, light) as here:
            assert here
            raise RuntimeError("the run failed")
    assert workers._here_bytes == 0


@pytest.mark.slow  # a worker process's memory, another cluster, or a page's run in AppTest
def test_a_worker_dying_mid_run_is_an_error_in_place_and_the_page_goes_on(on_cluster, run_page, monkeypatch,
                                                                         heavy_runs):
    """The student sees the message where the charts would be, the page's other parts (the reproduce box) are
    drawn, no traceback; the next run, with a working compute, draws the charts."""
    import dataclasses

    from tests.conftest import error_texts, plotly_figures

    monkeypatch.setattr(gram, "GRAM", dataclasses.replace(gram.GRAM, compute=worker_tasks.stop_own_process))
    at = run_page(GRAM_PAGE, dataset="wine", n=40, D=64)
    (error,) = error_texts(at)
    assert "The worker computing the Gram matrices stopped before it finished (out of memory?)" in error
    assert "reduce n or D" in error and not at.exception and not plotly_figures(at)
    assert any(e.label == "Reproduce in Python" for e in at.expander), "the page goes on: its reproduce box is drawn"
    monkeypatch.undo()
    monkeypatch.setenv(workers.SCHEDULER_ENV, on_cluster.scheduler.address)
    at.run()
    assert not error_texts(at) and plotly_figures(at)


@pytest.mark.slow  # a worker process's memory, another cluster, or a page's run in AppTest
def test_an_upload_is_parsed_in_a_worker_admitted_at_its_price(on_cluster, run_page, monkeypatch):
    """The CSV's columns and its data are read by workers, each under an admission ticket priced from the file's
    size (rkcore.studies.costs.files): the memory budget counts parsing."""
    from distributed import get_task_stream

    from rkapp import guard
    from rkapp.upload_section import UPLOAD_STATE_KEY
    from rkcore.studies.costs.files import columns_cost, parse_cost
    from tests.conftest import error_texts, plotly_figures

    rng = np.random.default_rng(0)
    rows = rng.random((2_000, 6))
    monkeypatch.setattr(guard, "LIGHT_BYTES", 0)  # a small file's reading is priced as a heavy run
    content = ("a,b,c,d,e,label\n" + "\n".join(",".join(f"{v:.6f}" for v in r[:5]) + f",{int(r[5] > .5)}"
                                               for r in rows) + "\n").encode()
    asked = []
    request = guard.ADMISSION.request
    monkeypatch.setattr(guard.ADMISSION, "request",
                        lambda bytes_, *a, **k: asked.append(bytes_) or request(bytes_, *a, **k))
    with get_task_stream(on_cluster) as stream:
        at = run_page(GRAM_PAGE, dataset="upload", n=40, D=64, session={UPLOAD_STATE_KEY: ("mine.csv", content)})
    assert not error_texts(at) and plotly_figures(at)
    assert columns_cost(len(content)).bytes in asked and parse_cost(len(content)).bytes in asked
    assert len(stream.data) == 3  # the columns, the data, the view


def test_a_task_gives_its_free_heap_back_whatever_it_ends_with(monkeypatch):
    """call_with_one_blas_thread (every worker task) ends with malloc_trim(0), after a result and after an error:
    the heap a run freed does not stay with the worker, above what the memory budget counts. A task given a file's
    bytes (``large``: an upload) runs with every array above 128 KiB mapped on its own, and the worker's own
    thresholds come back after it."""
    from rkcore.studies import distributed as rkd

    calls = []

    class FakeLibc:
        def malloc_trim(self, pad):
            calls.append(("trim", pad))

        def mallopt(self, option, value):
            calls.append((option, value))

    monkeypatch.setattr(rkd, "_libc", FakeLibc())
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", str(32 * 2**20))
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    assert rkd.call_with_one_blas_thread(rkd.pickled_call(sum, ([1, 2, 3],), {})) == 6
    with pytest.raises(ZeroDivisionError):
        rkd.call_with_one_blas_thread(rkd.pickled_call(divmod, (1, 0), {}))
    assert calls == [("trim", 0), ("trim", 0)]
    calls.clear()
    payload = rkd.pickled_call(len, (b"",), {}, leave_out=frozenset({0}))
    assert rkd.call_with_one_blas_thread(payload, {0: np.zeros(5, dtype=np.uint8)}) == 5
    small = rkd.FILE_TASK_THRESHOLD
    assert calls == [(rkd.M_MMAP_THRESHOLD, small), (rkd.M_TRIM_THRESHOLD, small),
                     (rkd.M_MMAP_THRESHOLD, 32 * 2**20), (rkd.M_TRIM_THRESHOLD, small), ("trim", 0)]
    monkeypatch.setattr(rkd, "_libc", None)  # looked up for real: glibc's here (mallopt is not called: it would
    rkd._release_free_heap()                 # change this test process's allocator for the rest of the suite)
    assert rkd._libc is not None and (rkd._libc is False or hasattr(rkd._libc, "mallopt"))
