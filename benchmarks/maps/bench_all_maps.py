"""Every registry map at the MovieLens 100K shape (n=10,000, d=78, D=1,248 = 16 d), dense float64.

Each map is built with rkcore.registry.make_map on the kernel rkcore.studies.timing.timing_kernel
pairs it with (degree m). Times are ratios to one float64 matrix product
(n x d) @ (d x D) timed in the same repeat, so machine load cancels; the table shows the
median over --repeats of each ratio (fresh map every repeat: fit draws new weights).

Writes the README's table (transform / GEMM at m = 2 and 3, fit / GEMM at the first degree) into the
section "Every map at the MovieLens shape" of benchmarks/results/summary.md.

Usage: python benchmarks/maps/bench_all_maps.py [--repeats 5] [--degree 2 3] [--maps rk scrk ...] [--quick]
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402
from rkcore.registry import MAPS, make_map  # noqa: E402
from rkcore.studies.timing import timing_kernel  # noqa: E402

TITLE = ("Every map at the MovieLens shape (`python benchmarks/maps/bench_all_maps.py --degree 2`, "
         "`--degree 3`)")


def _seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench(keys, n, d, D, degree, repeats):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    B = rng.standard_normal((d, D))
    specs = {k: timing_kernel(k, degree) for k in keys}
    ratios = {k: {"fit": [], "transform": []} for k in keys}
    gemm = []
    for r in range(repeats + 1):  # the first round is a warm-up
        g = _seconds(lambda: X @ B)
        for k in keys:
            est = make_map(k, specs[k], D, random_state=r)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # e.g. Nystroem when D > n
                f = _seconds(lambda: est.fit(X))
                t = _seconds(lambda: est.transform(X))
            if r:
                ratios[k]["fit"].append(f / g)
                ratios[k]["transform"].append(t / g)
        if r:
            gemm.append(g)
    return float(np.median(gemm)), {k: {ph: float(np.median(v)) for ph, v in d_.items()} for k, d_ in ratios.items()}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--maps", nargs="+", default=list(MAPS), help="registry keys")
    p.add_argument("--n", type=int, default=10_000)
    p.add_argument("--d", type=int, default=78)
    p.add_argument("--D", type=int, default=1248)
    p.add_argument("--degree", type=int, nargs="+", default=[2, 3])
    p.add_argument("--repeats", type=int, default=5)
    add_output_arguments(p, "summary.md")
    a = p.parse_args(argv)
    if a.quick:
        a.n, a.d, a.D, a.repeats = 200, 16, 64, 1
    run = Run.start(a, None if argv is None else [__file__, *argv])
    measured = {m: bench(a.maps, a.n, a.d, a.D, m, a.repeats) for m in a.degree}
    gemm = np.median([measured[m][0] for m in a.degree])
    first = a.degree[0]
    lines = [f"Times as ratios to one (n x d)(d x D) GEMM of the same run ({gemm * 1e3:.0f} ms); n = {a.n:,}, "
             f"d = {a.d}, D = {a.D:,}; medians over {a.repeats} repeats (fresh map every repeat).", "",
             "| map | kernel | " + " | ".join(f"transform / GEMM, m = {m}" for m in a.degree)
             + f" | fit / GEMM, m = {first} |", "|---|---|" + "---:|" * (len(a.degree) + 1)]
    for k in a.maps:
        cells = " | ".join(f"{measured[m][1][k]['transform']:.2f}" for m in a.degree)
        lines.append(f"| {k} | {timing_kernel(k, first).label()} | {cells} | {measured[first][1][k]['fit']:.2f} |")
    default = a.degree == [2, 3] and a.maps == list(MAPS)
    run.write(TITLE if default else f"Maps at the MovieLens shape (`{run.command}`)", "\n".join(lines))


if __name__ == "__main__":
    main()
