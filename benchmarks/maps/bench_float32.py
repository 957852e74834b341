"""float32 vs float64 transform: time ratio, output memory and the error float32 adds.

For each map, one fitted estimator transforms the same data as float64 and as float32,
interleaved within every repeat (so machine load hits both alike). Reported per map:

* time ratio float32 / float64 of ``transform`` (median and [min, max] over repeats);
* output bytes ratio (0.5 when float32 is kept);
* the error float32 adds to the features, max |Z32 - Z64| / max |Z64|;
* the error it adds to the kernel estimate, ``G = Z Z^T`` over the first ``--pairs`` rows:
  max |G32 - G64|, next to the Monte Carlo error of the float64 estimate itself,
  max |G64 - K| (K exact), which float32 must not visibly change.

Data: N(0, 1) rows scaled to unit L2 norm (so kernel values are O(1)).

Usage: python benchmarks/bench_float32.py [--n 4000] [--d 256] [--D 4096] [--repeats 7]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from rkcore.registry import KernelSpec, make_map

CASES = [  # (label, map key, kernel spec)
    ("RK dot", "rk", KernelSpec("dot")),
    ("RK ANOVA m=2", "rk", KernelSpec("anova", 2)),
    ("RK ANOVA m=3", "rk", KernelSpec("anova", 3)),
    ("SCRK ANOVA m=2", "scrk", KernelSpec("anova", 2)),
    ("RM poly m=2", "rm", KernelSpec("polynomial", 2)),
]


def _seconds(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def bench(n, d, D, repeats, pairs):
    rng = np.random.default_rng(0)
    X64 = rng.standard_normal((n, d))
    X64 /= np.linalg.norm(X64, axis=1, keepdims=True)
    X32 = X64.astype(np.float32)
    rows = []
    for label, key, spec in CASES:
        est = make_map(key, spec, D, random_state=0).fit(X64)
        est.transform(X64[:10]), est.transform(X32[:10])  # warm-up
        t64, t32 = [], []
        for r in range(repeats):
            # alternate which dtype goes first, so a load spike does not favour one
            order = (("64", X64), ("32", X32)) if r % 2 == 0 else (("32", X32), ("64", X64))
            for tag, X in order:
                seconds, Z = _seconds(lambda: est.transform(X))
                (t64 if tag == "64" else t32).append(seconds)
                if tag == "64":
                    Z64 = Z
                else:
                    Z32 = Z
        ratio = np.array(t32) / np.array(t64)
        G64 = Z64[:pairs] @ Z64[:pairs].T
        G32 = (Z32[:pairs] @ Z32[:pairs].T).astype(np.float64)
        K = spec.exact(X64[:pairs])
        rows.append({
            "map": label, "out_dtype": str(Z32.dtype),
            "t64_ms": 1e3 * float(np.median(t64)), "t32_ms": 1e3 * float(np.median(t32)),
            "ratio": float(np.median(ratio)), "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
            "bytes_ratio": Z32.nbytes / Z64.nbytes,
            "feature_rel_err": float(np.abs(Z32 - Z64).max() / np.abs(Z64).max()),
            "gram_err_f32": float(np.abs(G32 - G64).max()),
            "gram_err_mc": float(np.abs(G64 - K).max()),
        })
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--n", type=int, default=4000)
    p.add_argument("--d", type=int, default=256)
    p.add_argument("--D", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--pairs", type=int, default=500, help="rows whose Gram estimate is compared")
    a = p.parse_args(argv)
    load_before = os.getloadavg()
    rows = bench(a.n, a.d, a.D, a.repeats, a.pairs)
    load_after = os.getloadavg()
    print(f"n={a.n} d={a.d} D={a.D} repeats={a.repeats}; load average (1, 5, 15 min) "
          f"before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}\n")
    print("| map | float32 out | t64 ms | t32 ms | time ratio 32/64 median [min, max] | memory ratio "
          "| feature rel. error | Gram error added by float32 | Gram MC error (float64) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['map']} | {r['out_dtype']} | {r['t64_ms']:.0f} | {r['t32_ms']:.0f} | "
              f"{r['ratio']:.2f} [{r['ratio_min']:.2f}, {r['ratio_max']:.2f}] | {r['bytes_ratio']:.2f} | "
              f"{r['feature_rel_err']:.1e} | {r['gram_err_f32']:.1e} | {r['gram_err_mc']:.1e} |")


if __name__ == "__main__":
    main()
