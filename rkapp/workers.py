"""Heavy work in worker processes: a view's computation and the parsing of an upload run on Dask distributed.

Where a run executes (:func:`run_in_worker`), decided once per app process from ``RKCORE_SCHEDULER``:

* ``rkcore-app`` (one process, or ``--processes N`` behind nginx) starts, unless told otherwise, a local
  cluster beside the app (:func:`start_local_cluster`): one worker process per usable core (cgroup- and
  affinity-aware), one thread and one BLAS thread each, each with a memory limit derived from the server's
  memory budget (:func:`worker_memory_limit`), bound to 127.0.0.1. It passes the scheduler's address to
  every app process in ``RKCORE_SCHEDULER``. Nothing to install or configure.
* ``RKCORE_SCHEDULER=tcp://host:8786`` set by whoever starts ``rkcore-app``: the app uses that cluster (the
  department's) and starts none. Its workers need rkcore installed; set
  ``distributed.scheduler.allowed-failures: 0`` there too, so that a run that kills its worker is not tried
  again on another one.
* Neither (``streamlit run app.py``, Streamlit's AppTest in the test suite): the run executes in the app
  process, as before.

A run still holds its admission slot (:mod:`rkapp.guard`) while a worker computes it: the slots and the
per-student queue are each app process's own (nginx's cookie affinity keeps a browser's tabs on one process);
the workers are where the memory is spent, so that a run that outgrows its estimate ends its own worker (the
nanny starts a new one), not the app.

**One memory budget for all app processes** (``RKCORE_SERVER_MEMORY``, issue 37). The server-wide bound on
the runs' memory is the engine's own placement, not the app processes' admissions (one per process): each
local worker declares the Dask resource ``MEMORY`` = :func:`worker_run_bytes` (the most one run may take) and
every task is submitted with ``resources={"MEMORY": its price}`` (the cost its :func:`rkapp.guard.heavy_work`
holds), so the scheduler never runs more than the declared total at once, whichever app process submitted the
runs. Dask's resources are per worker (cluster-wide resources are an open request, dask/distributed#6382), so
the total is set by the number of workers: :func:`local_workers` starts as many as the budget pays for, each
one's imports (:data:`WORKER_BASE_BYTES`) and one largest run, at most one per core, at least one:
``workers x (WORKER_BASE_BYTES + worker_run_bytes) <= budget`` when two or more fit. With a 1 GB budget that is
one worker (two would hold 0.5 GB of imports before any run). A department's cluster whose workers declare
``MEMORY`` is used the same way; one whose workers declare nothing gets tasks without resources. What does not
run in Dask (uploads received by the app processes) takes a per-process share (:mod:`rkapp.upload_limits`).
A worker that dies mid-run raises :class:`WorkerLost`, a ValueError whose message says what stopped and
what to do; :class:`rkapp.guard.guarded` shows it in place and the page goes on.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from rkcore.base.admission import server_memory, usable_cores

from .serving.proxy import MALLOC_ENV  # the allocator settings, defined where the supervisor can read them
from rkcore.base.limits import physical_memory

__all__ = ["MEMORY_RESOURCE", "SCHEDULER_ENV", "WORKER_BASE_BYTES", "WorkerLost", "computed_here",
           "one_blas_thread_here", "scheduler_address", "start_local_cluster", "run_in_worker", "worker_memory_limit",
           "worker_run_bytes", "workers_from"]

SCHEDULER_ENV = "RKCORE_SCHEDULER"
#: What a worker process holds before its run: Python, dask and the library's imports (measured: about 0.3 GB
#: with rkcore.views, numpy, scipy, scikit-learn and pandas loaded), given on top of each run's own budget.
WORKER_BASE_BYTES = 384 * 2**20
#: Seconds to reach the scheduler.
CONNECT_SECONDS = 10
#: Arguments larger than this (an upload's bytes) go to a worker directly (scatter), not through the scheduler.
SCATTER_BYTES = 1 * 2**20
#: The Dask resource a worker declares (bytes its runs may take at once) and every task asks for (its price).
MEMORY_RESOURCE = "MEMORY"
#: Seconds the workers' declared MEMORY is taken as read (workers a nanny restarts declare the same).
DECLARED_SECONDS = 30.0
#: Times a run is sent again when the worker it waited on died before starting it (another run ended that worker).
RESUBMISSIONS = 2

#: A run the cost models price under both of these (rkapp.guard's light runs: LIGHT_SECONDS and LIGHT_BYTES are these)
#: is computed in the app process that
#: asked for it, not sent to a worker (:func:`computed_here`): for such a run the trip cost more CPU than the run
#: (issue 37 (d): the Gram view at n = 250, D = 512 takes 4-5 ms of CPU with one BLAS thread, against 16-70 ms
#: through the cluster: client, scheduler, worker; benchmarks/results/cpu_per_change.md). The bytes are the cost
#: models' prices, which are upper bounds (that run: priced 29 MB, 2.9 MB at its traced peak). Uploads are parsed
#: by workers whatever their size (they are the bytes a stranger chose).
HERE_SECONDS = 0.05
HERE_BYTES = 64 * 2**20
#: At most this many bytes (prices) of such runs at once in one app process (its script threads run them side by
#: side): a run that would go past it goes to a worker instead, without waiting. Part of each app process's own
#: memory, beside its imports and its sessions.
HERE_PROCESS_BYTES = 128 * 2**20

_lock = threading.Lock()
_client = None  # this process's client, connected on first use
_here_bytes = 0  # bytes of light runs being computed in this process now (computed_here)


class WorkerLost(ValueError):
    """The worker process running a computation stopped before it finished (killed, or out of memory)."""


def scheduler_address() -> str | None:
    """The Dask scheduler this app process sends its heavy work to (``RKCORE_SCHEDULER``), None: in process."""
    return os.environ.get(SCHEDULER_ENV, "").strip() or None


def worker_run_bytes(budget: int | None = None) -> int:
    """Bytes one run may take in a worker: the server's memory budget, at most a quarter of the machine's memory
    and 2 GB (what :data:`rkapp.guard.MEMORY_BUDGET` allows a view); the ``MEMORY`` resource each local worker
    declares."""
    budget = server_memory() if budget is None else int(budget)
    return int(min(budget, 2 * 2**30, physical_memory() // 4))


def worker_memory_limit(budget: int | None = None) -> int:
    """Bytes a local worker may hold: :func:`worker_run_bytes` plus the worker's own :data:`WORKER_BASE_BYTES`.
    The resources keep the runs within the budget; the limit ends only the worker whose run outgrew its
    estimate."""
    return worker_run_bytes(budget) + WORKER_BASE_BYTES


def _client_or_none():
    """This process's client of the scheduler (connected once, again after the scheduler was lost), or None."""
    global _client
    address = scheduler_address()
    if address is None:
        return None
    with _lock:
        if _client is None or _client.status not in ("running", "connecting"):
            from distributed import Client

            try:
                # results straight from the worker that holds them, not relayed (and copied) by the scheduler: the
                # workers are reachable from here already (large uploads are scattered to them directly)
                _client = Client(address, timeout=f"{CONNECT_SECONDS}s", set_as_default=False, direct_to_workers=True)
                one_blas_thread_here()  # also when the app was started without rkcore-app (streamlit run)
            except (OSError, TimeoutError) as exc:
                raise ValueError(f"The server's worker processes cannot be reached ({SCHEDULER_ENV}={address}): "
                                 f"{exc}. Ask whoever runs the server to check them; reloading the page tries again."
                                 ) from None
        return _client


@contextmanager
def computed_here(seconds: float, memory: int) -> Iterator[bool]:
    """Whether a run priced ``seconds`` and ``memory`` bytes is computed in this process (True inside the block,
    its bytes held in this process's share meanwhile) rather than by :func:`run_in_worker`: always without a
    cluster; with one, when it is light (:data:`HERE_SECONDS`, :data:`HERE_BYTES`) and the process's share
    (:data:`HERE_PROCESS_BYTES`) has room."""
    global _here_bytes
    if scheduler_address() is None:
        yield True
        return
    memory = max(0, int(memory))
    with _lock:
        here = seconds < HERE_SECONDS and memory < HERE_BYTES and _here_bytes + memory <= HERE_PROCESS_BYTES
        if here:
            _here_bytes += memory
    try:
        yield here
    finally:
        if here:
            with _lock:
                _here_bytes -= memory


def one_blas_thread_here() -> None:
    """This process sends its heavy work to workers; what it computes itself (figures, light runs:
    :func:`computed_here`) takes one BLAS and OpenMP thread, as a worker's task does, so that no idle pool spins
    beside the script threads (two OpenBLAS threads cost 5x the CPU of one on a light Gram run). For the pools
    loaded now (threadpoolctl) and those loaded later or by child processes (the environment they read)."""
    from threadpoolctl import threadpool_limits

    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    threadpool_limits(limits=1)


def _large(value) -> bool:
    return isinstance(value, (bytes, bytearray, memoryview)) and len(value) > SCATTER_BYTES


def _lost(doing: str, hint: str) -> WorkerLost:
    return WorkerLost(f"The worker {doing} stopped before it finished (out of memory?): {hint}. "
                      "Nothing else on the server was affected, and a new worker has taken its place.")


_declared: dict[int, tuple[float, int | None]] = {}  # id(client) -> (when read, largest MEMORY declared)


def _declared_memory(client) -> int | None:
    """The largest ``MEMORY`` resource a worker of the cluster declares (None: no worker declares it), read from
    the scheduler at most every DECLARED_SECONDS."""
    import time

    when, value = _declared.get(id(client), (-DECLARED_SECONDS, None))
    if time.monotonic() - when >= DECLARED_SECONDS:
        workers = client.scheduler_info(n_workers=-1)["workers"].values()
        declared = [int(w.get("resources", {}).get(MEMORY_RESOURCE) or 0) for w in workers]
        value = max([d for d in declared if d > 0], default=None)
        _declared[id(client)] = (time.monotonic(), value)
    return value


def _resources(client, memory: int | None) -> dict | None:
    """``{"MEMORY": price}`` for a task priced ``memory`` bytes when the workers declare the resource (capped at the
    largest declaration, so that every task can be placed), else None."""
    if not memory:
        return None
    declared = _declared_memory(client)
    return None if declared is None else {MEMORY_RESOURCE: max(1, min(int(memory), declared))}


def run_in_worker(fn: Callable, args: tuple = (), kwargs: dict | None = None, *, what: str,
                  hint: str = "reduce n or D and run again", doing: str | None = None,
                  memory: int | None = None) -> Any:
    """``fn(*args, **kwargs)`` in a worker process of the cluster (see the module's docstring), else here.

    Parameters
    ----------
    fn : callable
        A module-level, pure function (a view's ``compute``, a file reader): pickled by reference.
    args, kwargs : tuple, dict
        Its arguments (pickled; bytes over :data:`SCATTER_BYTES` are sent to a worker directly).
    what : str
        What it computes, as messages name it ("the Gram matrices").
    hint : str
        What the user can do when the worker stops mid-run (out of memory).
    doing : str, optional
        What the worker was doing, for that message (default "computing <what>").
    memory : int, optional
        The run's price in bytes, asked of the workers' ``MEMORY`` resource (module docstring); default: the price
        of the admitted run this thread holds (:func:`rkapp.guard.heavy_work`), if any.

    Returns
    -------
    object
        ``fn``'s result; its exceptions are raised here as they were raised there.

    Raises
    ------
    WorkerLost
        When the worker stopped before it finished (killed, or ended by its memory limit).
    """
    from rkcore.studies.distributed import call_with_one_blas_thread, pickled_call

    client = _client_or_none()
    if client is None:
        return fn(*args, **(kwargs or {}))
    from distributed import CancelledError, KilledWorker

    handles = []  # futures of this run (its task and its scattered inputs), released at the end
    large = frozenset(k for k, v in [*enumerate(args), *(kwargs or {}).items()] if _large(v))
    payload = pickled_call(fn, tuple(args), dict(kwargs or {}), large)

    def scattered() -> dict:
        """Large bytes arguments go straight to a worker (not through the scheduler), as uint8 arrays: sent
        without a pickled copy in this process (made bytes again in the worker)."""
        import numpy as np

        arrays = {k: np.frombuffer(args[k] if isinstance(k, int) else kwargs[k], dtype=np.uint8) for k in large}
        futures = {k: client.scatter(a, direct=True, hash=False) for k, a in arrays.items()}
        handles.extend(futures.values())
        return futures

    if memory is None:
        from .run_context import current_run

        memory = current_run().memory
    try:
        resources = _resources(client, memory)
        for attempt in range(1 + RESUBMISSIONS):
            future = client.submit(call_with_one_blas_thread, payload, scattered(), pure=False, resources=resources)
            handles.append(future)
            try:
                return future.result()
            except (KilledWorker, CancelledError) as exc:  # its worker died (or the one holding its input)
                if attempt == RESUBMISSIONS or _started(client, future.key):
                    raise _lost(doing or f"computing {what}", hint) from exc
                # it only waited on a worker that another run ended: not this run's fault, send it again
    except OSError as exc:  # the scheduler went away mid-run (a restart): the next run connects again
        raise ValueError(f"The server's worker processes could not be reached while computing {what} ({exc}); "
                         "run it again in a moment.") from None
    finally:
        for handle in handles:
            handle.release()


def _started(client, key) -> bool:
    """Whether the task ``key`` had started (rkcore.studies.distributed.STARTED_TOPIC) when its worker died."""
    from rkcore.studies.distributed import STARTED_TOPIC

    return any(event.get("key") == str(key) for _, event in client.get_events(STARTED_TOPIC))


# ---------------------------------------------------------------------------- the local cluster (rkcore-app)
def local_workers(budget: int | None = None) -> int:
    """Worker processes of the local cluster: as many as the memory budget pays for (each one's imports and one
    largest run, :func:`worker_memory_limit`), at most one per usable core (cgroup- and affinity-aware), at
    least one (module docstring)."""
    budget = server_memory() if budget is None else int(budget)
    return max(1, min(usable_cores(), budget // worker_memory_limit(budget)))


def workers_from(text: str) -> int:
    """``rkcore-app --workers``: a whole number from 0 (compute in the app process) to 64, or ``auto`` (one
    worker per usable core, the default)."""
    if text.strip().lower() == "auto":
        return local_workers()
    try:
        value = int(text)
    except ValueError:
        raise SystemExit(f"--workers takes a whole number from 0 to 64 or 'auto', not {text!r}") from None
    if not 0 <= value <= 64:
        raise SystemExit(f"--workers takes 0 to 64 worker processes, not {value}")
    return value


#: The app processes' allocator settings (MALLOC_ENV) that the local cluster's processes take too.
WORKER_MALLOC = ("MALLOC_ARENA_MAX",)


def cluster_environment(run_bytes: int, base: dict[str, str] | None = None) -> dict[str, str]:
    """The local cluster's environment: ``base`` (default this process's) with :data:`MALLOC_ENV`'s arena cap
    (unless set) and each worker's ``MEMORY`` resource, ``run_bytes`` (dask reads
    ``DASK_DISTRIBUTED__WORKER__RESOURCES__*``; the nannies pass their configuration on to the workers they
    start). Not the app processes' trim threshold: a nanny lets its own environment override the heap thresholds
    it gives its workers (rkcore.studies.distributed.LOCAL_CLUSTER_CONFIG, chosen for runs, not for uploads)."""
    env = dict(os.environ if base is None else base)
    for name in WORKER_MALLOC:
        env.setdefault(name, MALLOC_ENV[name])
    env[f"DASK_DISTRIBUTED__WORKER__RESOURCES__{MEMORY_RESOURCE}"] = str(int(run_bytes))
    return env


def start_local_cluster(workers: int | None = None, memory_limit: int | None = None,
                        timeout: float = 120.0) -> tuple[subprocess.Popen, str]:
    """Start a local cluster in a process of its own (it imports no streamlit; it ends with this process).

    Parameters
    ----------
    workers : int, optional
        Worker processes (default :func:`local_workers`).
    memory_limit : int, optional
        Bytes per worker (default :func:`worker_memory_limit`).
    timeout : float, default=120.0
        Seconds to wait for the workers.

    Returns
    -------
    (process, address)
        The cluster's process (SIGTERM ends it and its workers) and its scheduler's address.
    """
    workers = local_workers() if workers is None else int(workers)
    memory_limit = worker_memory_limit() if memory_limit is None else int(memory_limit)
    code = ("import sys\nfrom rkcore.studies.distributed import serve_local_cluster\n"
            f"serve_local_cluster({workers}, {memory_limit}, parent={os.getpid()}, "
            "announce=lambda a: print('RKCORE_SCHEDULER=' + a, flush=True))\n")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=None, text=True,
                               env=cluster_environment(memory_limit - WORKER_BASE_BYTES))
    result: list[str] = []
    reader = threading.Thread(target=lambda: result.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    line = result[0].strip() if result else ""
    if not line.startswith("RKCORE_SCHEDULER="):
        process.terminate()
        raise SystemExit(f"the local Dask cluster did not start within {timeout:g} s (set {SCHEDULER_ENV} to use "
                         "another cluster, or --workers 0 to compute in the app process)")
    return process, line.split("=", 1)[1]


def stop_local_cluster(process: subprocess.Popen) -> None:
    """End the cluster started by :func:`start_local_cluster` (its workers end with it)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
