"""Issue 35 (items 5, 6): the cost of the float-range fixes on well-conditioned data, before vs after.

The paths the fixes touched: the exact variance (one pass over the row exponents decides which pairs the
(mantissa, exponent) program recomputes), the canonical CSR copy (duplicates checked only where stored twice),
the all-subsets level table on CSR, the RK up-to map (its repair sums orders in (mantissa, exponent) form)
and the Fourier maps on float32 (one isfinite pass per block). The rkcore of a reference commit (default:
174e283, the branch point) is imported beside this checkout's as ``rkcore_before`` (as
bench_float_range.py does), both run interleaved on the same data; reported per case: median seconds of
each and the median and [min, max] of the per-repeat ratios after / before.

Usage: python benchmarks/numerics/bench_contract_paths.py [--repeats 7] [--n 2000] [--ref 174e283] [--quick]
       [--out FILE]   (default: the section of benchmarks/results/float_range.md with this title)
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from benchmarks.numerics.bench_float_range import datasets, interleaved_times, load_reference  # noqa: E402
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "The float-range fixes of issue 35 on well-conditioned data (`python benchmarks/numerics/bench_contract_paths.py`)"


def cases(pkg: str, X):
    """(name, thunk) per touched path, for the package ``pkg`` (rkcore or rkcore_before)."""
    variance = importlib.import_module(pkg + ".theory.variance")
    exact = importlib.import_module(pkg + ".kernels.exact")
    maps = importlib.import_module(pkg + ".maps.random_kernel")
    structured = importlib.import_module(pkg + ".maps.structured")
    n = X.shape[0]
    Y = X[::-1]
    small = X[: min(n, 150)]
    X32 = X.astype(np.float32)
    out = [(f"rk_variance {kind}-{m}", (lambda k, mm: lambda: variance.rk_variance(X, Y, 64, kernel=k, degree=mm))(kind, m))
           for kind, m in (("anova", 2), ("anova", 3), ("up_to", 2), ("dot", 1), ("all_subsets", 1))]
    out.append(("rk_variance_gram dot (150 rows)", lambda: variance.rk_variance_gram(small, 64, kernel="dot")))
    out.append(("rk_variance_gram anova-2 (150 rows)", lambda: variance.rk_variance_gram(small, 64, kernel="anova")))
    out.append(("Gram all-subsets", lambda: exact.all_subsets_kernel(X, X[: n // 2])))
    rk = maps.RandomKernel(1024, kernel="up_to", degree=3, distribution="gaussian", random_state=0).fit(X)
    out.append(("RK up-to-3 gaussian D=1024", lambda: rk.transform(X)))
    for name in ("StructuredOrthogonalRandomFeatures", "RandomFourierPairs"):
        fmap = getattr(structured, name)(n_components=1024, random_state=0).fit(X)
        out.append((f"{name} float32 D=1024", (lambda f: lambda: f.transform(X32))(fmap)))
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--ref", default="174e283")
    add_output_arguments(ap, "float_range.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.repeats = 30, 1
    run = Run.start(args, None if argv is None else [__file__, *argv])
    lines = [f"Reference {args.ref} (before issue 35's fixes), n = {args.n}, {args.repeats} interleaved repeats.", "",
             "| data | case | before s | after s | after/before median [min, max] |", "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as folder:
        load_reference(args.ref, folder)
        for data_name, X in datasets(args.n).items():
            for (name, f_old), (_, f_new) in zip(cases("rkcore_before", X), cases("rkcore", X)):
                t_old, t_new = interleaved_times(f_old, f_new, args.repeats)
                ratios = t_new / t_old
                line = (f"| {data_name} | {name} | {np.median(t_old):.4f} | {np.median(t_new):.4f} | "
                        f"{np.median(ratios):.2f} [{ratios.min():.2f}, {ratios.max():.2f}] |")
                print(line, flush=True)
                lines.append(line)
    run.write(TITLE, "\n".join(lines),
              preamble="# The float-range fixes of issue 35 (benchmarks/numerics/bench_contract_paths.py)")


if __name__ == "__main__":
    main()
