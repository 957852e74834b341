"""Issue 11: the least a per-entry accuracy check costs on top of the previous Gaussian-weight RK ANOVA-2 path.

The accuracy contract needs a per-entry decision (which features Newton's identities may have cancelled); with
non-Rademacher weights the closed form's two GEMMs are all the previous path did. This times, in one process,
interleaved, one BLAS thread, CPU time: the previous path (a copy, as in bench_numerics.py), the same plus one
compare pass over the features and its P2 (the least any per-entry test reads), plus the |e| < rho P2 test
(tier 1 of AnovaBlock.checked, without its follow-up tests) over the whole block or fused per L2-sized chunk,
and rkcore's checked path.

    python benchmarks/numerics/bench_check_floor.py [--n 2000] [--repeats 15] [--quick] [--out FILE]

Writes the section "The least a per-entry check costs" of benchmarks/results/numerics.md.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

REPO = Path(__file__).resolve().parents[2]  # benchmarks/<subject>/this file
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks" / "numerics"))  # bench_numerics, its neighbour

from bench_numerics import movielens_shaped  # noqa: E402
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402
from rkcore import RandomKernel  # noqa: E402
import rkcore.kernels.exact as K  # noqa: E402
from rkcore.maps.random_kernel import MIN_GEMM_BLOCK_ROWS, TRANSFORM_BLOCK_BYTES  # noqa: E402

RHO = 0.06  # about tier 1's rho at d = 78 (anova_tier1_constants); the value does not change the cost
TITLE = "The least a per-entry check costs (`python benchmarks/numerics/bench_check_floor.py`)"


def old_m2(rk, X, extra):
    """The previous fast path (bench_numerics.old_rk_transform, m = 2, non-Rademacher weights) plus ``extra``:
    0 nothing, 1 one compare pass, 3 the rho test over the block, 4 the rho test per L2-sized chunk."""
    W = rk.random_weights_
    n, D = X.shape[0], W.shape[0]
    c = np.sqrt(1.0 / np.sqrt(D) / 2.0)
    Wc, W2c = W.T * c, (W * W).T * (c * c)
    out = np.empty((n, D))
    bytes_per_row = min(8 * D * 2, max(1, TRANSFORM_BLOCK_BYTES // MIN_GEMM_BLOCK_ROWS))
    for rows in K.row_blocks(n, bytes_per_row, TRANSFORM_BLOCK_BYTES):
        Xb = X[rows]
        Z = np.asarray(Xb @ Wc)
        X2 = Xb.multiply(Xb) if sp.issparse(Xb) else Xb * Xb
        P2 = np.asarray(X2 @ W2c)
        if extra == 4:  # the rho test in L2-sized chunks, fused with square and subtract
            step = max(1, 2**19 // (8 * D))
            t, u, mask = np.empty((step, D)), np.empty((step, D)), np.empty((step, D), dtype=bool)
            left = []
            for a in range(0, Z.shape[0], step):
                z, p = Z[a:a + step], P2[a:a + step]
                k = z.shape[0]
                np.square(z, out=z)
                z -= p
                np.abs(z, out=t[:k])
                np.multiply(p, RHO, out=u[:k])
                np.less(t[:k], u[:k], out=mask[:k])
                left.append(np.flatnonzero(mask[:k]))
            out[rows] = Z
            continue
        np.square(Z, out=Z)
        Z -= P2
        if extra >= 1:
            mask = np.empty(Z.shape, dtype=bool)
            if extra == 1:
                np.less(Z, P2, out=mask)            # one compare pass: the least any per-entry test reads
            else:
                P2 *= RHO
                np.less(np.abs(Z), P2, out=mask)  # |e| < rho P2: three passes
            np.flatnonzero(mask)
        out[rows] = Z
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=15)
    add_output_arguments(p, "numerics.md")
    args = p.parse_args(argv)
    if args.quick:
        args.n, args.repeats = 50, 1
    run = Run.start(args, None if argv is None else [__file__, *argv])
    rng = np.random.default_rng(0)
    lines = [f"n = {args.n:,}, D = 1,248, Gaussian weights, ANOVA-2; one BLAS thread, CPU time, {args.repeats} "
             "interleaved repeats (order reversed every other repeat). Each variant adds a test to a copy of the "
             "previous path."]
    for label, X in (("N(0,1) d=78", rng.standard_normal((args.n, 78))), ("MovieLens-shaped", movielens_shaped(args.n))):
        rk = RandomKernel(1248, degree=2, distribution="gaussian", random_state=0).fit(X)
        fns = {"old": lambda: old_m2(rk, X, 0), "old + 1 compare pass": lambda: old_m2(rk, X, 1),
               "old + |e| < rho P2 (3 passes)": lambda: old_m2(rk, X, 3),
               "old + rho test in L2 chunks": lambda: old_m2(rk, X, 4), "new (rkcore)": lambda: rk.transform(X)}
        times = {k: [] for k in fns}
        with threadpool_limits(limits=1, user_api="blas"):
            for f in fns.values():  # warm-up
                f()
            for r in range(args.repeats):
                for k, f in (list(fns.items()) if r % 2 else list(fns.items())[::-1]):
                    t0 = time.process_time()
                    f()
                    times[k].append(time.process_time() - t0)
        base = statistics.median(times["old"])
        lines += ["", f"{label}:", "", "| variant | median ms [min, max] | ratio to old (median) |", "|---|---|---:|"]
        for k, v in times.items():
            median = statistics.median(v)
            lines.append(f"| {k} | {1e3 * median:.1f} [{1e3 * min(v):.1f}, {1e3 * max(v):.1f}] | {median / base:.2f} |")
    run.write(TITLE, "\n".join(lines), preamble="# Numerics (issue 11): accuracy contract vs the previous fast path")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
