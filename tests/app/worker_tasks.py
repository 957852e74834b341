"""Functions the worker tests send to a Dask worker (a module of its own, importable by name in the worker
processes: pickle sends a function by reference)."""
from __future__ import annotations

import os
import time


def stop_own_process(*args, **kwargs):
    """A computation whose worker dies mid-run (as the kernel's OOM killer or a crash ends it)."""
    os._exit(3)


def sleep_then_pid(seconds: float) -> int:
    """A long computation (the test kills its worker meanwhile)."""
    time.sleep(seconds)
    return os.getpid()


def allocate(megabytes: int) -> int:
    """A computation that outgrows its worker's memory limit (every page written)."""
    import numpy as np

    block = np.ones(megabytes * 2**20 // 8)
    return int(block.size)


def blas_threads() -> list:
    """The BLAS / OpenMP pools' thread counts where the computation runs."""
    from threadpoolctl import threadpool_info

    return sorted({pool["num_threads"] for pool in threadpool_info()})


def interval(seconds: float) -> tuple[float, float]:
    """(start, end) wall-clock times of a computation that holds its worker thread ``seconds``."""
    start = time.time()
    time.sleep(seconds)
    return start, time.time()


def page_faults_of_reused_arrays(size: int, times: int) -> int:
    """Minor page faults of allocating, writing and freeing a ``size``-byte array ``times`` times (after one warm-up):
    about size / 4096 when the heap hands the same memory back, times that when each array is a fresh mmap."""
    import resource

    import numpy as np

    np.ones(size // 8).sum()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(times):
        np.ones(size // 8).sum()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
