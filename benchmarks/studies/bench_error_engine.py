"""Paper-size run of the approximation-error engine: n = 10,000 instances (10^8 pairs).

    python benchmarks/studies/bench_error_engine.py [--data /work/shared/datasets/ml-100k] [--n 10000]
        [--multiple 16] [--kernel anova2|anova3|all_subsets] [--trials 2]

One method (RK, Rademacher) and one D = multiple * d. Reports, in the same process:

* the floor: the blocked product Z Z^T alone over all row blocks (what any engine must pay),
* the exact-kernel cache build (once per study),
* engine time per trial with the cache, and with ``exact_cache_bytes=0`` (exact blocks recomputed),
* wall and CPU seconds (the CPU time is steadier on a shared machine),
* peak traced memory (tracemalloc: numpy reports its buffers) and the process max RSS.

The machine is shared, so the useful numbers are the ratios to the floor, not the seconds.
Without the MovieLens folder it falls back to synthetic one-hot-like data of the same shape.
"""
from __future__ import annotations

import argparse
import resource
import time
import tracemalloc
from pathlib import Path

import numpy as np

from rkcore.data.datasets import load_movielens, normalize
from rkcore.studies.errors import _block_rows, error_study
from rkcore.registry import make_map
from rkcore.studies.table1 import TABLE1_KERNELS as KERNELS


def synthetic(n: int, d: int = 78, active: int = 7, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = np.zeros((n, d))
    X[np.arange(n)[:, None], rng.integers(0, d, size=(n, active))] = 1.0
    return X


def timed(fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return out, Seconds(seconds, cpu), peak


class Seconds(float):
    """Wall seconds that also carry the process CPU seconds (all threads)."""

    def __new__(cls, wall: float, cpu: float):
        obj = super().__new__(cls, wall)
        obj.cpu = cpu
        return obj

    def __str__(self) -> str:
        return f"{float(self):7.2f} s wall, {self.cpu:7.2f} s CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default="/work/shared/datasets/ml-100k")
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--multiple", type=int, default=16)
    parser.add_argument("--kernel", choices=list(KERNELS), default="anova2")
    parser.add_argument("--trials", type=int, default=2)
    args = parser.parse_args()

    if Path(args.data).is_dir():
        X = load_movielens(args.data, n_samples=args.n).X
        source = "MovieLens 100K (first n rows)"
    else:
        X = synthetic(args.n)
        source = "synthetic one-hot (MovieLens folder not found)"
    X = normalize(X, "l1")
    n, d = X.shape
    spec = KERNELS[args.kernel][0]
    D = args.multiple * d
    block = _block_rows(n, None, spec.degree if spec.name == "anova" else 2)
    print(f"data: {source}; n = {n}, d = {d}, pairs = {n * n:.3g}; kernel {spec.label()}; RK (Rademacher), D = {D}; "
          f"block = {block} rows")

    # floor: Z = map(X) and the blocked Z Z^T, nothing else
    def floor():
        Z = make_map("rk", spec, D, "rademacher", 0).fit(X).transform(X)
        acc = 0.0
        for start in range(0, n, block):
            acc += float((Z[start:start + block] @ Z.T).sum())
        return acc

    _, t_floor, m_floor = timed(floor)
    print(f"floor (map + blocked Z Z^T):         {t_floor}   peak traced {m_floor / 2**20:7.1f} MiB")

    methods = [("rk", "rademacher")]
    kwargs = dict(pairs="nonzero", random_state=0)
    _, t_one, m_one = timed(lambda: error_study(X, spec, methods, [D], 1, **kwargs))
    print(f"engine, 1 trial, cache built:        {t_one}   peak traced {m_one / 2**20:7.1f} MiB   "
          f"CPU ratio to floor {t_one.cpu / t_floor.cpu:5.2f}")
    df, t_many, m_many = timed(lambda: error_study(X, spec, methods, [D], args.trials, **kwargs))
    extra_cpu = (t_many.cpu - t_one.cpu) / max(1, args.trials - 1)
    print(f"engine, {args.trials} trials, cache built:       {t_many}   peak traced {m_many / 2**20:7.1f} MiB   "
          f"CPU per extra trial {extra_cpu:6.2f} s ({extra_cpu / t_floor.cpu:5.2f} x floor)")
    _, t_nocache, m_nocache = timed(lambda: error_study(X, spec, methods, [D], 1, exact_cache_bytes=0, **kwargs))
    print(f"engine, 1 trial, no cache:           {t_nocache}   peak traced {m_nocache / 2**20:7.1f} MiB   "
          f"CPU ratio to floor {t_nocache.cpu / t_floor.cpu:5.2f}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process max RSS: {rss:.0f} MiB")
    mae = df[df.metric == "mean_abs_error"]["value"]
    print(f"mean absolute error over {int(df['n_pairs'].iloc[0]):,} non-zero pairs: "
          f"{mae.mean():.3e} +- {mae.std(ddof=0):.3e} ({args.trials} trials)")


if __name__ == "__main__":
    main()
