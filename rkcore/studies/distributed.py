"""Scale-out on Dask: study sweeps on a cluster, and out-of-core transforms of dask arrays.

Dask is optional (``pip install rkcore[dask]``); this module imports it only when used.

* :func:`connect` gives a ``dask.distributed.Client`` for an address (``"local"`` starts a
  LocalCluster bound to 127.0.0.1).
* :func:`run_tasks` runs independent tasks on a client with their large read-only inputs
  **scattered once** (broadcast to the workers), so the task graph holds only small
  arguments and references: the study engines (:func:`rkcore.studies.errors.error_study`,
  :func:`rkcore.studies.accuracy.accuracy_study`, :func:`rkcore.studies.timing.time_maps`) take
  ``client=`` and use it. Every task carries its own seed, so results are the same
  locally and on any cluster.
* :func:`transform_dask` maps a ``dask.array`` chunked by rows through a fitted
  transformer chunk by chunk: memory per worker is bounded by a few chunks, whatever
  the number of rows.
"""
from __future__ import annotations

import pickle
import sys
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import numpy as np

if TYPE_CHECKING:  # dask is optional and imported where used
    import dask.array as da
    import dask.distributed as distributed

LOCAL = "local"


def _distributed():
    try:
        import dask.distributed as distributed
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("Dask is not installed: pip install 'rkcore[dask]' "
                          "(dask[array,distributed]).") from exc
    return distributed


def connect(address: str, *, n_workers: int = 1, threads_per_worker: int | None = None,
            processes: bool = False) -> distributed.Client:
    """A Dask client for ``address``.

    Parameters
    ----------
    address : str
        A scheduler address such as ``"tcp://10.0.0.5:8786"``, or ``"local"`` for a
        LocalCluster on this machine: thread workers communicate in-process, process
        workers bind to 127.0.0.1; no dashboard, nothing reachable from outside.
    n_workers : int, default=1
        Workers of the local cluster (ignored for a remote address).
    threads_per_worker : int or None, default=None
        Threads per local worker (None: dask's default).
    processes : bool, default=False
        Local workers as processes (True) or threads of this process (False).

    Returns
    -------
    client : dask.distributed.Client
        Close it (or use it as a context manager) when done; a local cluster closes with it.
    """
    distributed = _distributed()
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"scheduler address must be a non-empty string such as tcp://HOST:8786 or 'local'; "
                         f"got {address!r}.")
    if address == LOCAL:
        # thread workers talk in-process (nothing listens); process workers bind to 127.0.0.1 only
        where = {"host": "127.0.0.1"} if processes else {}
        cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=threads_per_worker,
                                           processes=processes, dashboard_address=None,
                                           scheduler_kwargs={"dashboard": False}, **where)
        client = distributed.Client(cluster)
        client._rkcore_cluster = cluster  # closed with the client (see close)
        return client
    try:
        return distributed.Client(address, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"cannot reach the Dask scheduler at {address!r}: {exc}") from None


def close(client) -> None:
    """Close a client from :func:`connect` and the local cluster it started, if any.

    Parameters
    ----------
    client : distributed.Client
        The client to close.
    """
    cluster = getattr(client, "_rkcore_cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()
    # Each Client restores, on close, the dask scheduler setting it found when it opened: clients closed in
    # the order they opened (A, B; close A, close B) leave "dask.distributed" set with no client, and a later
    # .compute() fails on dask 2024.1 ("no Client active"). Without a client the default scheduler is right.
    import dask

    if dask.config.get("scheduler", None) == "dask.distributed":
        try:
            _distributed().default_client()
        except ValueError:
            dask.config.set(scheduler=None)


def run_tasks(client, fn: Callable, tasks: Sequence[tuple], shared: Mapping[str, Any] | None = None) -> Iterator:
    """``fn(*task, **shared)`` for every task on the cluster; results in task order.

    ``shared`` values (data, cached Gram strips) are scattered once with
    ``broadcast=True`` and passed to every task as futures, so the graph sent to the
    scheduler holds only the small per-task arguments (see :func:`graph_bytes`).

    Parameters
    ----------
    client : dask.distributed.Client
        Where to run.
    fn : callable
        A module-level function (pickled by reference).
    tasks : sequence of tuple
        Positional arguments of each call.
    shared : mapping of str to object, default=None
        Keyword arguments common to all calls: scattered once.

    Yields
    ------
    result : object
        ``fn``'s return value, task by task in the order of ``tasks``.
    """
    # scatter([v])[0]: one future per input, even when the input is itself a list
    futures_of_shared = {k: client.scatter([v], broadcast=True, hash=False)[0] for k, v in (shared or {}).items()}
    futures = [client.submit(fn, *task, **futures_of_shared, pure=False) for task in tasks]
    try:
        for future in futures:
            yield future.result()
    finally:
        for future in futures:
            future.cancel()
        for future in futures_of_shared.values():
            future.release()


def graph_bytes(tasks: Sequence[tuple], shared: Mapping[str, Any] | None = None, scattered: bool = True) -> int:
    """Serialized size of the task arguments sent to the scheduler.

    With ``scattered=True`` the shared inputs are references (a future pickles to its
    key); with False every task carries them, as when they are plain arguments of a
    joblib/dask call.

    Parameters
    ----------
    tasks : Sequence[tuple]
        The per-task positional arguments.
    shared : Mapping[str, Any] or None, default None
        Inputs common to every task, by keyword.
    scattered : bool, default True
        Whether the shared inputs are scattered futures rather than pickled into each task.

    Returns
    -------
    int
        Bytes (approximate for the futures' keys).
    """
    per_task = sum(len(pickle.dumps(task, protocol=5)) for task in tasks)
    if scattered:
        return per_task + len(tasks) * sum(64 + len(k) for k in (shared or {}))
    shared_size = sum(len(pickle.dumps(v, protocol=5)) for v in (shared or {}).values())
    return per_task + len(tasks) * shared_size


def transform_dask(estimator, X: da.Array, client=None) -> da.Array:
    """Transform a ``dask.array`` chunk by chunk (out of core) with a fitted transformer.

    Parameters
    ----------
    estimator : fitted transformer
        E.g. :class:`rkcore.maps.random_kernel.RandomKernel`. With a ``distributed`` client active it is
        scattered to the workers once and the task graph holds only its key (a fitted RK with D = 4096,
        d = 1024 is 32 MB: inside the graph, it was shipped through the scheduler with every compute);
        without one it is a single graph node shared by the chunks.
    X : dask.array.Array of shape (n_samples, n_features)
        Chunked by rows; chunks spanning several column blocks are merged first.
    client : distributed.Client or None, default=None
        The client that will compute Z (the estimator is scattered to its workers); None means the default
        client, the one ``Z.compute()`` uses, if one is running.

    Returns
    -------
    Z : dask.array.Array of shape (n_samples, n_components)
        Lazy; the same row chunks as X, one column chunk. Reduce it (``Z.T @ Z``,
        ``Z.mean(axis=0)``) or store it (``Z.to_zarr``) to keep memory bounded.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from rkcore.maps.random_kernel import RandomKernel
    >>> from rkcore.studies.distributed import transform_dask
    >>> X = da.random.default_rng(0).random((1000, 6), chunks=(250, 6))
    >>> rk = RandomKernel(16, random_state=0).fit(X[:10].compute())
    >>> Z = transform_dask(rk, X)
    >>> Z.shape, Z.chunks[0]
    ((1000, 16), (250, 250, 250, 250))
    >>> np.allclose(Z.compute(), rk.transform(X.compute()))
    True
    """
    import dask.array as da
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    if not isinstance(X, da.Array) or X.ndim != 2:
        raise ValueError(f"X must be a 2-D dask.array; got {type(X).__name__}.")
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    n_out = estimator.transform(np.zeros((1, X.shape[1]), dtype=X.dtype)).shape[1]
    out_dtype = np.float32 if X.dtype == np.float32 and _preserves_float32(estimator) else np.float64
    shared = _scattered(estimator, client)
    return da.map_blocks(_transform_chunk, X, shared, dtype=out_dtype, chunks=(X.chunks[0], (n_out,)),
                         meta=np.empty((0, 0), dtype=out_dtype))


def _scattered(estimator, client=None):
    """The estimator as a future on every worker of ``client`` (None: the default ``distributed`` client), or
    as one delayed node when there is none (the local schedulers share memory: nothing is sent). A future
    lives on one cluster: compute Z with the client it was scattered to."""
    import dask

    if client is None:
        try:
            from distributed import default_client
            client = default_client()
        except (ImportError, ValueError):  # no distributed, or no client running
            return dask.delayed(estimator, pure=True)
    return client.scatter(estimator, broadcast=True, hash=False)


def _transform_chunk(block, estimator):
    return estimator.transform(block)


def _preserves_float32(estimator) -> bool:
    tags = estimator.__sklearn_tags__()
    return "float32" in (tags.transformer_tags.preserves_dtype if tags.transformer_tags else [])


def call_with_one_blas_thread(payload: bytes, large: Mapping[Any, Any] | None = None) -> Any:
    """Run a pickled call with BLAS and OpenMP pools limited to one thread: what a worker task of the
    dashboard runs (one thread per worker, one core per run, whatever the worker's environment).

    The call comes pickled (:func:`pickled_call`), so that the scheduler, which unpickles every task it is given,
    handles bytes only and never imports the modules the call needs (pandas, scikit-learn: about 150 MB).

    Parameters
    ----------
    payload : bytes
        ``pickle.dumps((fn, args, kwargs))`` with the large arguments left out (None in their place).
    large : mapping, optional
        Position in ``args`` or name in ``kwargs`` -> a uint8 array: large bytes arguments, sent without a copy
        (scattered), made bytes again here.

    Returns
    -------
    object
        ``fn(*args, **kwargs)``.
    """
    _announce_start()
    fn, args, kwargs = pickle.loads(payload)
    args, kwargs = list(args), dict(kwargs)
    for where, array in (large or {}).items():
        (args if isinstance(where, int) else kwargs)[where] = array.tobytes()
    try:
        with _thread_pools().limit(limits=1), _heap_mapped_per_array(bool(large)):
            return fn(*args, **kwargs)
    finally:
        del args, kwargs
        _release_free_heap()


_libc: Any = None  # glibc, looked up once (False: not glibc)
#: mallopt's parameters (glibc's malloc.h).
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
#: The thresholds of a task that reads a file's bytes (an upload, scattered to the worker: ``large``): dask's own
#: (every array above 128 KiB mapped on its own, unmapped when freed), not the study views' (LOCAL_CLUSTER_CONFIG):
#: parsing a 59 MB CSV on the heap peaked 50 MB higher, and the memory budget prices uploads from its peak.
FILE_TASK_THRESHOLD = 128 * 2**10


def _glibc():
    global _libc
    if _libc is None:
        import ctypes
        import ctypes.util

        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _libc.malloc_trim, _libc.mallopt  # noqa: B018 - both exist, or this is not glibc
        except (OSError, AttributeError):
            _libc = False
    return _libc


@contextmanager
def _heap_mapped_per_array(active: bool) -> Iterator[None]:
    """While ``active``: glibc's mmap and trim thresholds at :data:`FILE_TASK_THRESHOLD`; after, the worker's own
    (its environment's MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_, else glibc's 128 KiB)."""
    libc = _glibc() if active else None
    if not libc:
        yield
        return
    import os

    libc.mallopt(M_MMAP_THRESHOLD, FILE_TASK_THRESHOLD)
    libc.mallopt(M_TRIM_THRESHOLD, FILE_TASK_THRESHOLD)
    try:
        yield
    finally:
        for option, name in ((M_MMAP_THRESHOLD, "MALLOC_MMAP_THRESHOLD_"), (M_TRIM_THRESHOLD, "MALLOC_TRIM_THRESHOLD_")):
            value = os.environ.get(name, "").strip()
            libc.mallopt(option, int(value) if value.isdigit() else FILE_TASK_THRESHOLD)


def _release_free_heap() -> None:
    """Give the heap's free memory back to the system at the end of a task (glibc's ``malloc_trim(0)``; nothing
    elsewhere). A worker reuses its heap for arrays up to 32 MiB (LOCAL_CLUSTER_CONFIG): within a run that saves
    the page faults; between runs that memory would stay with the worker, above what the memory budget counts
    (eight 59 MB uploads, 2 app processes: the server's memory after them 1.24 GB without this, 1.03 with it)."""
    libc = _glibc()
    if libc:
        libc.malloc_trim(0)


_pools: tuple[int, Any] | None = None  # (modules imported when made, the controller)


def _thread_pools():
    """threadpoolctl's view of this process's BLAS and OpenMP pools, made again only when modules were imported
    since (a new import may load a new pool). ``threadpool_limits`` finds the pools anew on every call by walking
    every loaded library: 2.5 ms per task, against 0.01 ms for a kept controller's ``limit``."""
    global _pools
    from threadpoolctl import ThreadpoolController

    imported = len(sys.modules)
    if _pools is None or _pools[0] != imported:
        _pools = (imported, ThreadpoolController())
    return _pools[1]


def pickled_call(fn: Callable, args: tuple, kwargs: Mapping[str, Any], leave_out: frozenset = frozenset()) -> bytes:
    """The payload of :func:`call_with_one_blas_thread`: ``(fn, args, kwargs)`` pickled, the arguments at the
    positions and names in ``leave_out`` replaced by None.

    Parameters
    ----------
    fn : callable
        A module-level function.
    args : tuple
        Positional arguments.
    kwargs : mapping
        Keyword arguments.
    leave_out : frozenset, default=frozenset()
        Positions and names sent apart.

    Returns
    -------
    bytes
        The pickle.
    """
    return pickle.dumps((fn, tuple(None if k in leave_out else a for k, a in enumerate(args)),
                         {k: None if k in leave_out else v for k, v in kwargs.items()}), protocol=5)


#: The scheduler's event topic where a task of :func:`call_with_one_blas_thread` says that it started: a task that
#: was only waiting on a worker that died had not started, and can be sent to another worker (rkapp.workers).
STARTED_TOPIC = "rkcore-task-started"


def _announce_start() -> None:
    """In a worker: record on the scheduler, before running, that this task started (a round trip, so that the
    record is there even when the run kills its worker at once). Elsewhere: nothing."""
    try:
        from distributed import get_worker
        from distributed.utils import sync

        worker = get_worker()
    except (ImportError, ValueError):
        return
    sync(worker.loop, worker.scheduler.log_event, topic=STARTED_TOPIC, msg={"key": str(worker.get_current_task())})


#: The local cluster's settings (:func:`serve_local_cluster`): a run that kills its worker is not tried again
#: on another (it would kill that one too); no spilling to disk and no pause (a task's result leaves the worker
#: at once); the nanny ends a worker at 95% of its memory limit and starts a new one (its own 100 ms memory
#: monitor, left as it is); the scheduler hands a worker one task at a time (one thread each).
#: Less housekeeping, for a cluster that sits idle between a class's changes (issue 37 (d); measured in
#: benchmarks/results/cpu_per_change.md): no statistical profiler in the workers (it samples every thread every
#: 10 ms for a dashboard this cluster does not serve), the event loops' health tick every second instead of every
#: 20 ms, and the system monitor (CPU, memory and disk figures for that dashboard) every 2 s instead of 0.5 s.
#: An idle two-worker cluster went from 0.06-0.075 to 0.017-0.018 cores.
LOCAL_CLUSTER_CONFIG = {
    "distributed.scheduler.allowed-failures": 0,
    "distributed.scheduler.worker-saturation": 1.0,
    "distributed.worker.memory.target": False,
    "distributed.worker.memory.spill": False,
    "distributed.worker.memory.pause": False,
    "distributed.worker.memory.terminate": 0.95,
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "2s",
    # What the nanny puts in a worker's environment before starting it (dask's default: one thread for BLAS and
    # OpenMP, and MALLOC_TRIM_THRESHOLD_=65536). That trim threshold also freezes glibc's mmap threshold at
    # 128 KiB, so every array above it is a fresh mmap whose pages fault in zeroed, and the study views spent
    # nearly as much time in the kernel as in numpy (one BLAS thread, n = 200, D = 256, CPU ms per run, dask's
    # default -> these: error study 105 -> 57, pair variances 95 -> 45, error bounds 55 -> 38; page faults
    # 24,000 -> 4 a run; benchmarks/app/bench_run_trip.py). Arrays up to 32 MiB now come from the heap and are
    # reused; each task ends by giving the free heap back (_release_free_heap), and a task that reads an upload's
    # bytes runs with dask's thresholds (_heap_mapped_per_array: on the heap, parsing a 59 MB file peaked 50 MB
    # higher, and eight such uploads went past the memory budget's 1.5 GB; benchmarks/results/uploads.md).
    "distributed.nanny.pre-spawn-environ": {
        "OMP_NUM_THREADS": 1, "MKL_NUM_THREADS": 1, "OPENBLAS_NUM_THREADS": 1,
        "MALLOC_MMAP_THRESHOLD_": 32 * 2**20, "MALLOC_TRIM_THRESHOLD_": 64 * 2**20,
    },
}


def serve_local_cluster(workers: int, memory_limit: int, *, announce: Callable[[str], None] = print,
                        parent: int | None = None, poll: float = 1.0) -> None:
    """Run a local cluster of worker processes until this process is asked to stop (SIGTERM, SIGINT) or
    ``parent`` (a process id) ends: what ``rkcore-app`` starts beside the app (``rkapp.workers``).

    Each worker is a process with one thread, ``memory_limit`` bytes (its nanny ends it at 95% and starts a
    new one) and one BLAS thread (dask's nanny sets OMP/MKL/OpenBLAS_NUM_THREADS=1); everything binds to
    127.0.0.1, without a dashboard. Settings: :data:`LOCAL_CLUSTER_CONFIG`.

    Parameters
    ----------
    workers : int
        Worker processes, at least 1.
    memory_limit : int
        Bytes per worker.
    announce : callable, default=print
        Called once with the scheduler's address when the workers are up.
    parent : int, optional
        A process id: the cluster ends when it is gone (the app was killed without a word).
    poll : float, default=1.0
        Seconds between two looks at ``parent``.
    """
    import os
    import signal
    import threading

    import dask

    distributed = _distributed()
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with dask.config.set(LOCAL_CLUSTER_CONFIG):
        cluster = distributed.LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=True,
                                           memory_limit=int(memory_limit), host="127.0.0.1", dashboard_address=None,
                                           scheduler_kwargs={"dashboard": False})
        try:
            announce(cluster.scheduler_address)
            while not stop.wait(poll):
                if parent is not None and os.getppid() != parent:
                    break
        finally:
            cluster.close()
