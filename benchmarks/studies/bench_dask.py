"""Dask scale-out, measured: task-graph size of the error study at n = 10,000, and an
out-of-core transform of a row-chunked dask.array.

1. Graph size. The error study's trials share X and the exact Gram strips (the upper
   triangle: 400 MB at n = 10,000). Passed as plain task arguments (joblib's Dask backend,
   the previous scale-out path) they ride in the graph; with ``error_study(client=...)``
   they are scattered once and the graph holds references. Reported: serialized bytes of
   the task arguments both ways (rkcore.studies.distributed.graph_bytes), and, for the old path,
   the size distributed itself reports when it warns "Sending large graph".
2. Out of core. ``transform_dask(RandomKernel, X)`` on X = uniform random (n, d) generated
   lazily in row chunks, reduced to the feature means and the D x D Gram Z^T Z (the n x D
   output never exists). LocalCluster bound to 127.0.0.1, process workers; reported: rows,
   chunks, wall time, peak resident memory of each worker (getrusage).

Usage: python benchmarks/studies/bench_dask.py [--n-error 10000] [--n-rows 10000000] [--chunk 100000] [--quick]
Writes the section "Dask scale-out" of benchmarks/results/dask.md (--out FILE elsewhere).
"""
from __future__ import annotations

import argparse
import logging
import re
import resource
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "Dask scale-out (`python benchmarks/studies/bench_dask.py`)"


def movielens_like(n: int, d: int = 78, seed: int = 0) -> sp.csr_matrix:
    """Binary rows with 8 non-zeros of 78 (the MovieLens encoding's shape), L1-normalized."""
    rng = np.random.default_rng(seed)
    cols = np.sort(np.argsort(rng.random((n, d)), axis=1)[:, :8], axis=1)
    X = sp.csr_matrix((np.full(n * 8, 1 / 8), cols.ravel(), np.arange(0, n * 8 + 1, 8)), shape=(n, d))
    return X


def graph_sizes(n: int, trials: int) -> dict:
    from joblib import parallel_config

    from rkcore.studies.distributed import close, connect, graph_bytes
    from rkcore.studies.errors import EXACT_CACHE_BYTES, _block_rows, _exact_cache, _row_blocks, error_study
    from rkcore.registry import KernelSpec

    X = movielens_like(n)
    spec = KernelSpec("anova", 2)
    t0 = time.perf_counter()
    cache = _exact_cache(X, spec, _row_blocks(n, _block_rows(n, None, 2)), EXACT_CACHE_BYTES)
    cache_s = time.perf_counter() - t0
    tasks = [(spec, "rk", "rademacher", 156, t, "nonzero", True, (1e-3,), 1) for t in range(trials)]
    shared = {"X": X, "exact_cache": cache}
    out = {"n": n, "trials": trials, "cache_MB": sum(c.nbytes for c in cache) / 2**20, "cache_seconds": cache_s,
           "inline_MB": graph_bytes(tasks, shared, scattered=False) / 2**20,
           "scattered_KB": graph_bytes(tasks, shared) / 2**10}
    # what distributed says on the old path (joblib's Dask backend) vs the new one
    messages = []

    class Catch(logging.Handler):
        def emit(self, record):
            messages.append(record.getMessage())

    handler = Catch()
    logging.getLogger("distributed").addHandler(handler)
    client = connect("local", n_workers=1, threads_per_worker=2)
    try:
        import warnings

        def sizes_reported(caught) -> list[str]:
            found = [m for m in messages + [str(w.message) for w in caught] if "large graph" in m]
            messages.clear()
            return [re.search(r"large graph of size ([\d.]+ \w+)", m).group(1) for m in found]

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            with parallel_config(backend="dask"):
                old = error_study(X, spec, [("rk", "rademacher")], [156], trials, pairs="nonzero", n_jobs=2)
            out["old_seconds"] = time.perf_counter() - t0
            out["old_warnings"] = sizes_reported(caught)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t0 = time.perf_counter()
            new = error_study(X, spec, [("rk", "rademacher")], [156], trials, pairs="nonzero", client=client)
            out["new_seconds"] = time.perf_counter() - t0
            out["new_warnings"] = sizes_reported(caught)
        out["same_results"] = bool(old.equals(new))
    finally:
        close(client)
        logging.getLogger("distributed").removeHandler(handler)
    return out


def out_of_core(n: int, d: int, D: int, chunk: int, workers: int) -> dict:
    import dask.array as da

    from rkcore.studies.distributed import close, connect, transform_dask
    from rkcore.maps.random_kernel import RandomKernel

    client = connect("local", n_workers=workers, threads_per_worker=1, processes=True)
    try:
        addresses = list(client.scheduler_info()["workers"])
        baseline = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        X = da.random.default_rng(0).random((n, d), chunks=(chunk, d))
        rk = RandomKernel(D, kernel="anova", degree=2, random_state=0).fit(np.zeros((2, d)))
        Z = transform_dask(rk, X)
        t0 = time.perf_counter()
        mean, gram = client.compute([Z.mean(axis=0), Z.T @ Z], sync=True)
        seconds = time.perf_counter() - t0
        peak = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    finally:
        close(client)
    return {"rows": n, "d": d, "D": D, "chunks": len(X.chunks[0]), "chunk_rows": chunk, "workers": addresses,
            "seconds": seconds, "peak_MB": {w: kb / 1024 for w, kb in peak.items()},
            "idle_MB": {w: kb / 1024 for w, kb in baseline.items()},
            "input_GB": n * d * 8 / 2**30, "output_GB": n * D * 8 / 2**30, "finite": bool(np.isfinite(gram).all())}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n-error", type=int, default=10_000)
    p.add_argument("--trials", type=int, default=4)
    p.add_argument("--n-rows", type=int, default=10_000_000)
    p.add_argument("--d", type=int, default=78)
    p.add_argument("--D", type=int, default=256)
    p.add_argument("--chunk", type=int, default=100_000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--skip-graph", action="store_true")
    add_output_arguments(p, "dask.md")
    a = p.parse_args(argv)
    if a.quick:
        a.n_error, a.trials, a.n_rows, a.chunk, a.workers = 300, 1, 20_000, 5_000, 1
    run = Run.start(a, None if argv is None else [__file__, *argv])
    lines = []
    if not a.skip_graph:
        g = graph_sizes(a.n_error, a.trials)
        lines += [f"### Task-graph size of the error study at n = {g['n']:,}", "",
                  f"RK Rademacher, ANOVA m = 2, D = 156, {g['trials']} trials; the exact strips ({g['cache_MB']:.0f} MB) "
                  f"computed once in {g['cache_seconds']:.1f} s; identical results both ways: {g['same_results']}.", "",
                  "| path | task arguments the scheduler receives | \"Sending large graph\" warnings | wall time s |",
                  "|---|---|---|---:|",
                  f"| joblib's Dask backend (X and strips in every task) | {g['inline_MB']:.1f} MB | "
                  f"{g['old_warnings'] or 'none'} | {g['old_seconds']:.1f} |",
                  f"| `error_study(client=...)` (scattered once) | {g['scattered_KB']:.1f} KB | "
                  f"{g['new_warnings'] or 'none'} | {g['new_seconds']:.1f} |", ""]
    r = out_of_core(a.n_rows, a.d, a.D, a.chunk, a.workers)
    peaks = " and ".join(f"{r['peak_MB'][w]:.0f} MB" for w in r["workers"])
    idle = " / ".join(f"{r['idle_MB'][w]:.0f}" for w in r["workers"])
    lines += ["### Out-of-core transform of a row-chunked dask.array", "",
              f"`transform_dask(RandomKernel({r['D']}, ANOVA m=2), X)` reduced to the feature means and Z^T Z; "
              f"{len(r['workers'])} process worker(s), one thread each, on 127.0.0.1; Gram finite: {r['finite']}.", "",
              "| rows | d -> D | chunks | input / output if held in memory | wall time s | peak RSS per worker MB (idle) |",
              "|---|---|---|---|---:|---|",
              f"| {r['rows']:,} | {r['d']} -> {r['D']} | {r['chunks']} x {r['chunk_rows']:,} rows | "
              f"{r['input_GB']:.2f} GiB / {r['output_GB']:.2f} GiB | {r['seconds']:.1f} | {peaks} ({idle}) |"]
    run.write(TITLE, "\n".join(lines), preamble="# Dask scale-out (benchmarks/studies/bench_dask.py)")


if __name__ == "__main__":
    main()
