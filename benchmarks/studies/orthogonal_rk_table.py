"""RK with weights drawn orthogonal in blocks against i.i.d. weights of the same row law: measured variance of the
estimate over independent maps / the exact i.i.d. variance, and the bias z-score (rkcore.studies.orthogonal_study).

python benchmarks/studies/orthogonal_rk_table.py [--trials 1000] [--quick] [--out FILE]
-> the section "RK with orthogonal weights: variance against i.i.d. weights" (a README table) of
benchmarks/results/orthogonal_rk.md
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402
from rkcore.base.arrays import dense  # noqa: E402
from rkcore.data.datasets import load_builtin, normalize  # noqa: E402
from rkcore.studies.orthogonal_study import orthogonal_note, orthogonal_variance_study, variance_ratio_summary  # noqa: E402
from rkcore.registry import KernelSpec  # noqa: E402
from rkcore.studies.variance_study import select_pairs  # noqa: E402

TITLE = "RK with orthogonal weights: variance against i.i.d. weights"
PREAMBLE = ("# RK with weights drawn orthogonal in blocks\n\nWritten by `benchmarks/studies/orthogonal_rk_table.py` "
            "(Monte Carlo; the machine's load does not enter these numbers).")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--trials", type=int, default=1000)
    add_output_arguments(ap, "orthogonal_rk.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.trials = 30, 20
    run = Run.start(args, None if argv is None else [__file__, *argv])
    X = dense(normalize(load_builtin("interactions", args.n).X, "l1"))
    d = X.shape[1]
    table = [f"Built-in interactions data (n = {args.n}, d = {d}, L1 rows), the three pairs of the Distributions page "
             f"(largest |K|, median |K|, the diagonal); {args.trials} independent maps per cell. *ratio*: measured "
             "variance of the D-feature estimate / the exact i.i.d. variance (E f² − K²)/D of the same row law "
             "(Gaussian, Rademacher); median over the pairs (lowest-highest). |z|: largest |mean − K| / standard "
             "error over the pairs (unbiased: a few at most).", "",
             "| kernel | weights | D | median ratio | lowest-highest pair | largest bias |z| |", "|---|---|---:|---:|---|---:|"]
    notes = []
    with threadpool_limits(1):
        for kernel in ("anova", "all_subsets", "dot"):
            spec = KernelSpec(kernel, 2)
            pairs = select_pairs(spec.exact(X))
            summary = variance_ratio_summary(orthogonal_variance_study(X, pairs, spec, [d, 4 * d, 16 * d],
                                                                       args.trials, random_state=0))
            label = spec.label()
            table += [f"| {label} | {r.distribution} | {r.D} | {r.median_ratio:.3g} | {r.min_ratio:.3g}-{r.max_ratio:.3g} "
                      f"| {r.max_abs_bias_z:.1f} |" for r in summary.itertuples()]
            notes.append(f"- {label}: {orthogonal_note(summary)}")
            print(notes[-1], flush=True)
    run.write(TITLE, "\n".join([*table, "", "Notes computed from the numbers:", "", *notes]), level=3,
              preamble=PREAMBLE)


if __name__ == "__main__":
    main()
