"""SCRK vs RK transform time for the ANOVA kernel (default: d=4096, D=8192, n=1000, paper Figure 1's largest d).

Times, interleaved within each repeat so machine load hits all alike (median of --repeats):
  * scrk        SignedCirculantRandomKernel.transform (FFT path)
  * rk          RandomKernel.transform (rkcore.maps.random_kernel), Rademacher weights
  * gemm        X @ Omega.T alone: a floor for any dense-Omega RK transform

The default run is the README's table: m = 2 over d = 16 ... 4096 (where SCRK starts to win) and m = 3 at
d = 4096, written to the section "SCRK vs RK" of benchmarks/results/summary.md; a run with --degree or --d
writes a section named after its command.

Usage: python benchmarks/maps/bench_scrk.py [--repeats 5] [--n 1000] [--D 8192] [--quick] [--out FILE]
       python benchmarks/maps/bench_scrk.py --degree 2 --d 16 32 64 128 256 512 1024
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402
from rkcore.maps.circulant import SignedCirculantRandomKernel  # noqa: E402
from rkcore.maps.random_kernel import RandomKernel  # noqa: E402

TITLE = ("SCRK vs RK (`python benchmarks/maps/bench_scrk.py --degree 2 3` and "
         "`--degree 2 --d 16 64 256 1024 4096`)")
#: the README table's cells: (m, d)
DEFAULT_CELLS = [(2, d) for d in (16, 64, 256, 1024, 4096)] + [(3, 4096)]


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
    p.add_argument("--d", type=int, nargs="+", default=None, help="default: the README's cells")
    p.add_argument("--D", type=int, default=8192)
    p.add_argument("--degree", type=int, nargs="+", default=None, help="default: the README's cells")
    p.add_argument("--repeats", type=int, default=5)
    add_output_arguments(p, "summary.md")
    a = p.parse_args(argv)
    run = Run.start(a, None if argv is None else [__file__, *argv])
    custom = a.d is not None or a.degree is not None
    cells = [(m, d) for m in (a.degree or [2, 3]) for d in (a.d or [4096])] if custom else DEFAULT_CELLS
    if a.quick:
        a.n, a.D, a.repeats, cells = 60, 64, 2, [(2, 8), (2, 32), (3, 32)]
    lines = [f"n = {a.n:,}, D = {a.D:,}, N(0,1) data, ANOVA kernel, float64, median of {a.repeats} interleaved "
             "repeats; \"GEMM\" is X Omega^T alone, the floor for any dense-Omega RK.", "",
             "| m | d | SCRK (ms) | RK (ms) | GEMM (ms) | RK / SCRK | GEMM / SCRK |", "|---|---:|---:|---:|---:|---:|---:|"]
    for m, d in cells:
        t = bench(a.n, d, a.D, m, a.repeats)
        s = t["scrk"]
        lines.append(f"| {m} | {d} | {s*1e3:.1f} | {t['rk']*1e3:.1f} | {t['gemm']*1e3:.1f} "
                     f"| {t['rk']/s:.1f} | {t['gemm']/s:.1f} |")
        print(lines[-1], flush=True)
    run.write(f"SCRK vs RK (`{run.command}`)" if custom else TITLE, "\n".join(lines))


if __name__ == "__main__":
    main()
