"""CPU seconds (one BLAS thread) of bench_vs_pyrfm's exact Gram cells: rkcore, rkcore at a git
revision ("before"), pyrfm; the load-robust companion of ``bench_vs_pyrfm.py --only gram``.

Usage: python benchmarks/maps/gram_cpu_vs_pyrfm.py [--repeats 5] [--before 430bad8] [--n 2000] [--quick]
(pyrfm built by setup_pyrfm.sh). Writes one row per cell (rkcore ms, before ms, pyrfm ms,
rkcore / pyrfm (min-max), before / pyrfm) into the section "Exact Gram cells in CPU time" of
benchmarks/results/grams.md.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vs_pyrfm import PYRFM_DIR, import_before, movielens_shaped  # noqa: E402  (puts this checkout first)

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402
from rkcore.kernels import exact as K  # noqa: E402

TITLE = "Exact Gram cells in CPU time (`python benchmarks/maps/gram_cpu_vs_pyrfm.py`)"


def cell_times(contenders, repeats: int) -> list[np.ndarray]:
    """CPU seconds of each contender per repeat, interleaved, after one warm-up call each."""
    for f in contenders:
        f()
    times = [[] for _ in contenders]
    for _ in range(repeats):
        for i, f in enumerate(contenders):
            t0 = time.process_time()
            f()
            times[i].append(time.process_time() - t0)
    return [np.array(t) for t in times]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--before", default="430bad8", help="git revision of the 'before' column")
    p.add_argument("--n", type=int, default=2000, help="rows of the MovieLens-shaped data")
    add_output_arguments(p, "grams.md")
    a = p.parse_args(argv)
    if a.quick:
        a.repeats, a.n = 1, 100
    run = Run.start(a, None if argv is None else [__file__, *argv])
    sys.path.insert(0, str(PYRFM_DIR))
    import pyrfm.kernels

    KM = import_before(a.before, Path(tempfile.mkdtemp()))[1]
    ml = movielens_shaped(a.n, seed=3)
    lines = [f"MovieLens-shaped rows (n = {a.n:,}, d = 78, 7 non-zeros), one BLAS thread, CPU seconds "
             f"(process time, which load inflates little); medians over {a.repeats} interleaved repeats. *before*: "
             f"rkcore at `{a.before}`.", "",
             "| data | kernel | rkcore ms | before ms | pyrfm ms | rkcore / pyrfm (min-max) | before / pyrfm |",
             "|---|---|---:|---:|---:|---|---:|"]
    with threadpool_limits(1, user_api="blas"):
        for label, X in (("dense", ml.toarray()), ("CSR", ml)):
            cases = [("all-subsets", (lambda X=X: K.all_subsets_kernel(X), lambda X=X: KM.all_subsets_kernel(X),
                                      lambda X=X: pyrfm.kernels.all_subsets(X, X)))]
            for m in (2, 3):
                cases.append((f"ANOVA-{m}", (lambda X=X, m=m: K.anova_kernel(X, degree=m),
                                             lambda X=X, m=m: KM.anova_kernel(X, degree=m),
                                             lambda X=X, m=m: pyrfm.kernels.anova(X, X, m))))
            for name, contenders in cases:
                ta, tb, tc = cell_times(contenders, a.repeats)
                lines.append(f"| {label} | {name} | {np.median(ta)*1e3:.0f} | {np.median(tb)*1e3:.0f} | "
                             f"{np.median(tc)*1e3:.0f} | {np.median(ta/tc):.2f} ({(ta/tc).min():.2f}-{(ta/tc).max():.2f}) "
                             f"| {np.median(tb/tc):.2f} |")
                print(lines[-1], flush=True)
    run.write(TITLE, "\n".join(lines), preamble="# Exact Gram matrices: rkcore vs pyrfm")


if __name__ == "__main__":
    main()
