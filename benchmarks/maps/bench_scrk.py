"""SCRK vs RK transform time for the ANOVA kernel (default: d=4096, D=8192, n=1000, paper Figure 1's largest d).

Times, interleaved within each repeat so machine load hits all alike (median of --repeats):
  * scrk        SignedCirculantRandomKernel.transform (FFT path)
  * rk          RandomKernel.transform (rkcore.maps.random_kernel), Rademacher weights
  * gemm        X @ Omega.T alone: a floor for any dense-Omega RK transform

Usage: python benchmarks/maps/bench_scrk.py [--repeats 5] [--degree 2 3] [--n 1000] [--d 4096] [--D 8192]
       python benchmarks/maps/bench_scrk.py --degree 2 --d 16 32 64 128 256 512 1024   # where SCRK starts to win
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from rkcore.maps.circulant import SignedCirculantRandomKernel
from rkcore.maps.random_kernel import RandomKernel


def _seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench(n: int, d: int, D: int, degree: int, repeats: int) -> dict[str, float]:
    X = np.random.default_rng(0).standard_normal((n, d))
    scrk = SignedCirculantRandomKernel(D, degree=degree, random_state=0).fit(X)
    rk = RandomKernel(D, degree=degree, random_state=0).fit(X)
    Wt = np.ascontiguousarray(rk.random_weights_.T)
    runs = {"scrk": lambda: scrk.transform(X), "rk": lambda: rk.transform(X), "gemm": lambda: X @ Wt}
    for fn in runs.values():  # warm-up
        fn()
    times = {k: [] for k in runs}
    for _ in range(repeats):
        for k, fn in runs.items():
            times[k].append(_seconds(fn))
    return {k: float(np.median(v)) for k, v in times.items()}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--d", type=int, nargs="+", default=[4096])
    p.add_argument("--D", type=int, default=8192)
    p.add_argument("--degree", type=int, nargs="+", default=[2, 3])
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args(argv)
    print(f"n={a.n}, D={a.D}, float64, median of {a.repeats} interleaved repeats\n")
    print("| m | d | SCRK [ms] | RK [ms] | GEMM X@Omega^T [ms] | RK/SCRK | GEMM/SCRK |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for m in a.degree:
        for d in a.d:
            t = bench(a.n, d, a.D, m, a.repeats)
            s = t["scrk"]
            print(f"| {m} | {d} | {s*1e3:.1f} | {t['rk']*1e3:.1f} | {t['gemm']*1e3:.1f} "
                  f"| {t['rk']/s:.1f} | {t['gemm']/s:.1f} |", flush=True)


if __name__ == "__main__":
    main()
