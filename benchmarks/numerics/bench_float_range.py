"""Issue 27: the cost of the whole-float-range guard on well-conditioned data, before vs after.

The rkcore of a reference commit (default: 10b2c9d, before issue 27) is extracted with
``git archive`` into a temporary folder as the package ``rkcore_before`` and imported beside this
checkout's ``rkcore``, so both run in one process on the same data, interleaved within each
repeat (before, after, after, before, ...: machine load hits both alike). Reported per case:
median seconds of each, the median and [min, max] of the per-repeat ratios after / before, and
the load average before and after. Data: N(0, 1) rows scaled to unit L2 norm (dense), and
MovieLens-shaped CSR rows (one-hot blocks + genre flags, L1-normalized): both in range, so the
guard costs its one pass over the data (and, for Rademacher all-subsets, the per-row log-sum
bound; rows it cannot vouch for take the direct product, which is counted in the time).

Usage: python benchmarks/numerics/bench_float_range.py [--repeats 7] [--n 2000] [--ref 10b2c9d] [--quick]
       [--out FILE]   (default: the section "The float-range guard ..." of benchmarks/results/float_range.md)
"""
from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "The float-range guard on well-conditioned data (`python benchmarks/numerics/bench_float_range.py`)"


def load_reference(ref: str, folder: str):
    """The package rkcore at commit ``ref`` as the module ``rkcore_before``."""
    archive = subprocess.run(["git", "archive", ref, "rkcore"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", folder], input=archive, check=True)
    os.rename(os.path.join(folder, "rkcore"), os.path.join(folder, "rkcore_before"))
    sys.path.insert(0, folder)
    return importlib.import_module("rkcore_before")


def datasets(n: int, seed: int = 0):
    rng = np.random.RandomState(seed)
    dense = rng.randn(n, 64)
    dense /= np.linalg.norm(dense, axis=1, keepdims=True)
    users, items, genres = rng.randint(0, 30, n), rng.randint(0, 30, n), rng.rand(n, 18) < 0.15
    rows = np.repeat(np.arange(n), 2)
    cols = np.column_stack([users, 30 + items]).ravel()
    onehot = sp.csr_matrix((np.ones(2 * n), (rows, cols)), shape=(n, 60))
    movielens = sp.hstack([onehot, sp.csr_matrix(genres.astype(float))], format="csr")
    movielens = sp.csr_matrix(movielens.multiply(1.0 / np.asarray(movielens.sum(axis=1))))
    return {"N(0,1) unit-norm d=64": dense, "MovieLens-shaped CSR d=78": movielens}


#: Module paths of the kernels, the RK map, SCRK and itemsets: flat before the rooms (issue 29), in rooms now.
LAYOUT = {"rkcore_before": (".kernels", ".maps", ".circulant", ".itemsets"),
          "rkcore": (".kernels.exact", ".maps.random_kernel", ".maps.circulant", ".kernels.itemsets")}


def cases(pkg, X):
    """(name, thunk) per public path, for the package ``pkg`` (rkcore or rkcore_before)."""
    names = LAYOUT[pkg]
    kernels = importlib.import_module(pkg + names[0])
    maps = importlib.import_module(pkg + names[1])
    circulant = importlib.import_module(pkg + names[2])
    fam = importlib.import_module(pkg + names[3]).ItemsetFamily
    d = X.shape[1]
    Y = X[: max(1, X.shape[0] // 2)]
    out = [("Gram ANOVA m=2", lambda: kernels.anova_kernel(X, Y, 2)),
           ("Gram ANOVA m=3", lambda: kernels.anova_kernel(X, Y, 3)),
           ("Gram up-to m=3", lambda: kernels.up_to_kernel(X, Y, 3)),
           ("Gram dot", lambda: kernels.dot_kernel(X, Y)),
           ("Gram cross-field m=2", lambda: kernels.itemset_kernel(
               X, Y, fam.cross_fields([tuple(range(0, d, 2)), tuple(range(1, d, 2))], 2, d=d)))]
    for kind, m, dist in (("anova", 2, "rademacher"), ("anova", 2, "gaussian"), ("anova", 3, "gaussian"),
                          ("anova", 4, "rademacher"), ("dot", 1, "gaussian"), ("all_subsets", 1, "rademacher"),
                          ("up_to", 2, "gaussian")):
        rk = maps.RandomKernel(1024, kernel=kind, degree=m, distribution=dist, random_state=0).fit(X)
        out.append((f"RK {kind}-{m} {dist} D=1024", (lambda r: lambda: r.transform(X))(rk)))
    scrk = circulant.SignedCirculantRandomKernel(1024, degree=3, random_state=0).fit(X)
    out.append(("SCRK m=3 D=1024", lambda: scrk.transform(X)))
    return out


def guard(X, Y) -> bool:
    """The whole-float-range guard of an in-range call: the canonical copy of sparse input, the row
    exponents of both sides and the range test (what every exact Gram and RK block now adds)."""
    from rkcore.kernels.numerics import canonical_csr
    from rkcore.kernels.ranges import in_range, row_exponents
    if sp.issparse(X):
        X, Y = canonical_csr(X), canonical_csr(Y)
    (lx, hx), (ly, hy) = row_exponents(X), row_exponents(Y)
    return in_range(lx, hx, ly, hy, 3, X.shape[1])


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved_times(f_old, f_new, repeats: int) -> tuple[np.ndarray, np.ndarray]:
    """Seconds of each call over ``repeats`` rounds after one warm-up call each (caches, BLAS threads), the
    order alternating per round so that the machine's load hits both alike."""
    f_old(), f_new()
    t_old, t_new = [], []
    for r in range(repeats):
        pair = [(f_old, t_old), (f_new, t_new)]
        for fn, acc in (pair if r % 2 == 0 else pair[::-1]):
            acc.append(timed(fn))
    return np.array(t_old), np.array(t_new)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--ref", default="10b2c9d")
    add_output_arguments(ap, "float_range.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.repeats = 30, 1
    run = Run.start(args, None if argv is None else [__file__, *argv])
    lines = [f"Reference {args.ref} (before issue 27), n = {args.n}, {args.repeats} interleaved repeats.", "",
             "| data | case | before s | after s | after/before median [min, max] | guard s (share of after) |",
             "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as folder:
        load_reference(args.ref, folder)
        for data_name, X in datasets(args.n).items():
            old, new = cases("rkcore_before", X), cases("rkcore", X)
            for (name, f_old), (_, f_new) in zip(old, new):
                t_old, t_new = interleaved_times(f_old, f_new, args.repeats)
                ratios = t_new / t_old
                g = np.median([timed(lambda: guard(X, X[: max(1, X.shape[0] // 2)])) for _ in range(args.repeats)])
                line = (f"| {data_name} | {name} | {np.median(t_old):.4f} | {np.median(t_new):.4f} | "
                        f"{np.median(ratios):.2f} [{ratios.min():.2f}, {ratios.max():.2f}] | "
                        f"{g:.5f} ({g / np.median(t_new):.1%}) |")
                print(line, flush=True)
                lines.append(line)
    run.write(TITLE, "\n".join(lines),
              preamble="# The float-range guard on well-conditioned data (benchmarks/numerics/bench_float_range.py)")


if __name__ == "__main__":
    main()
