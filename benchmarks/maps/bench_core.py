"""Benchmark of the RK map at the paper's MovieLens shape (issue: rkcore core).

n = 10,000, d = 78, D = 1,248, dense float64. Each map's transform time is printed
as a ratio to (a) one float64 matrix product (n x d) @ (d x D) and (b) the
straightforward formula, both timed in the same process:
  ANOVA-2:     ((X W^T)^2 - X^2 (W^2)^T) / 2
  ANOVA-3:     (p1^3 - 3 p1 p2 + 2 p3) / 6 with p_t = X^t (W^t)^T (three GEMMs)
  all-subsets: prod_j (1 + x_j w_j), element-wise (blocked over rows to fit memory)
Run: python benchmarks/maps/bench_core.py [--repeats 7] [--quick] [--out FILE]
-> the section "RK at the MovieLens shape" of benchmarks/results/summary.md (a README table).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402
from rkcore.maps.random_kernel import RandomKernel  # noqa: E402

TITLE = "RK at the MovieLens shape (`python benchmarks/maps/bench_core.py --repeats 7`)"


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(fn, reference, repeats):
    """Median time of fn and median ratio fn/reference, the two run alternately.

    Alternating keeps both under the same machine load, so the ratio is robust even
    when the absolute times are not (shared machines).
    """
    fn(), reference()  # warm-up
    pairs = np.array([(timed(fn), timed(reference)) for _ in range(repeats)])
    return float(np.median(pairs[:, 0])), float(np.median(pairs[:, 0] / pairs[:, 1]))


def naive_anova2(X, W):
    return ((X @ W.T) ** 2 - (X**2) @ (W**2).T) / 2 / np.sqrt(W.shape[0])


def naive_anova3(X, W):
    p1, p2, p3 = X @ W.T, (X**2) @ (W**2).T, (X**3) @ (W**3).T
    return (p1**3 - 3 * p1 * p2 + 2 * p3) / 6 / np.sqrt(W.shape[0])


def naive_all_subsets(X, W, rows=64):
    out = np.empty((X.shape[0], W.shape[0]))
    for start in range(0, X.shape[0], rows):
        out[start:start + rows] = np.prod(1 + X[start:start + rows, None, :] * W[None, :, :], axis=2)
    return out / np.sqrt(W.shape[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--d", type=int, default=78)
    parser.add_argument("--D", type=int, default=1248)
    parser.add_argument("--repeats", type=int, default=7)
    add_output_arguments(parser, "summary.md")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.d, args.D, args.repeats = 300, 12, 48, 2
    run = Run.start(args, None if argv is None else [__file__, *argv])

    rng = np.random.RandomState(0)
    X = rng.rand(args.n, args.d)
    X /= X.sum(axis=1, keepdims=True)  # L1-normalized, as in the paper
    Wref = rng.randn(args.D, args.d)
    gemm = lambda: X @ Wref.T  # noqa: E731

    rows = []
    for label, kernel, degree, naive in [
        ("ANOVA-2", "anova", 2, naive_anova2),
        ("ANOVA-3", "anova", 3, naive_anova3),
        ("all-subsets", "all_subsets", 2, naive_all_subsets),
    ]:
        for distribution in ("rademacher", "gaussian"):
            rk = RandomKernel(args.D, kernel=kernel, degree=degree, distribution=distribution, random_state=0).fit(X)
            W = rk.random_weights_
            np.testing.assert_allclose(rk.transform(X[:200]), naive(X[:200], W), rtol=1e-8, atol=1e-12)
            t, vs_gemm = interleaved(lambda: rk.transform(X), gemm, args.repeats)
            _, naive_vs_rk = interleaved(lambda: naive(X, W), lambda: rk.transform(X), max(3, args.repeats // 2))
            rows.append((label, distribution, t, vs_gemm, naive_vs_rk))

    t_gemm = np.median([timed(gemm) for _ in range(args.repeats)])
    lines = [f"n = {args.n:,}, d = {args.d}, D = {args.D:,}, dense float64; one GEMM (n x d)(d x D) took "
             f"{t_gemm * 1e3:.0f} ms (median of {args.repeats}); ratios are medians of interleaved runs.", "",
             "| kernel | distribution | RK transform (ms) | / one GEMM | speed-up vs straightforward formula |",
             "|---|---|---:|---:|---:|"]
    lines += [f"| {label} | {distribution} | {t * 1e3:.1f} | {ratio:.2f}x | {speedup:.1f}x |"
              for label, distribution, t, ratio, speedup in rows]
    anova2 = max(r[3] for r in rows if r[0] == "ANOVA-2")
    subsets = next(r[4] for r in rows if r[0] == "all-subsets" and r[1] == "rademacher")
    lines += ["", f"Targets: ANOVA-2 within 2x of one GEMM ({'met' if anova2 <= 2 else 'not met'}: at most "
              f"{anova2:.2f}x); all-subsets with Rademacher weights at least 5x faster than the element-wise product "
              f"({'met' if subsets >= 5 else 'not met'}: {subsets:.1f}x)."]
    run.write(TITLE, "\n".join(lines))


if __name__ == "__main__":
    main()
