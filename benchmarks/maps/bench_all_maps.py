"""Every registry map at the MovieLens 100K shape (n=10,000, d=78, D=1,248 = 16 d), dense float64.

Each map is built with rkcore.registry.make_map on the kernel rkcore.studies.timing.timing_kernel
pairs it with (degree m). Times are ratios to one float64 matrix product
(n x d) @ (d x D) timed in the same repeat, so machine load cancels; the table shows the
median over --repeats of each ratio (fresh map every repeat: fit draws new weights).

Usage: python benchmarks/maps/bench_all_maps.py [--repeats 5] [--degree 2] [--maps rk scrk ...]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from rkcore.registry import MAPS, make_map
from rkcore.studies.timing import timing_kernel


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
    p.add_argument("--degree", type=int, default=2)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args(argv)
    gemm, ratios = bench(a.maps, a.n, a.d, a.D, a.degree, a.repeats)
    print(f"n={a.n}, d={a.d}, D={a.D}, m={a.degree}, dense float64; reference GEMM (n x d)@(d x D) "
          f"median {gemm*1e3:.1f} ms; ratios are medians over {a.repeats} repeats\n")
    print("| map | kernel | fit / GEMM | transform / GEMM | (fit + transform) / GEMM |")
    print("|---|---|---:|---:|---:|")
    for k in a.maps:
        r = ratios[k]
        print(f"| {k} | {timing_kernel(k, a.degree).label()} | {r['fit']:.2f} "
              f"| {r['transform']:.2f} | {r['fit'] + r['transform']:.2f} |")


if __name__ == "__main__":
    main()
