"""MovieLens 100K accuracy / time study (Atarashi et al., AAAI-19, Figures 2 and 3).

Runs :func:`rkcore.studies.accuracy.accuracy_study` for the paper's configurations and writes one
section per configuration (``### <config> (C by validation ...): <kernel>``) into
benchmarks/results/accuracy.md (``--out`` elsewhere; ``--quick``: a few hundred rows, seconds), with Markdown tables (accuracy mean +- std over trials, balanced accuracy, mean train and test
seconds, and the speed-up against the exact kernel SVM measured in the same run).

    python benchmarks/studies/bench_accuracy.py --data /path/to/ml-100k --configs fig2a,fig3 \
        --n-train 10000 --n-val 1000 --n-test 10000 --trials 3 --out-dir /tmp/rk_accuracy

Every configuration uses the same seeded split (``--seed``), so rows of different
configurations (e.g. RK in fig2a and TS in fig3) are comparable. BLAS is limited to
``--blas-threads`` threads for every method (default 1): on a shared 2-core machine
multi-threaded BLAS mostly measures the neighbours' load.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import pandas as pd
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402
from rkcore.studies.accuracy import accuracy_study, speedups  # noqa: E402
from rkcore.data.datasets import load_movielens, normalize  # noqa: E402
from rkcore.registry import KernelSpec  # noqa: E402

CONFIGS = {
    # paper Figure 2 (a): second-order ANOVA kernel
    "fig2a": {"kernel": KernelSpec("anova", 2), "methods": ["kernel_svm", "fm", "rk", "scrk"], "reference": "kernel_svm"},
    # Figure 2 (b): third-order ANOVA kernel
    "fig2b": {"kernel": KernelSpec("anova", 3), "methods": ["kernel_svm", "fm", "rk", "scrk"], "reference": "kernel_svm"},
    # Figure 2 (c): all-subsets kernel
    "fig2c": {"kernel": KernelSpec("all_subsets"), "methods": ["kernel_svm", "all_subsets_model", "rk"],
              "reference": "kernel_svm"},
    # Figure 3: polynomial-kernel maps (RK / SCRK rows come from fig2a, same split and seeds)
    "fig3": {"kernel": KernelSpec("anova", 2), "methods": ["poly_svm", "ts", "rm"], "reference": "poly_svm"},
    # not in the paper: Sparse Random Features (Yen et al. 2014) over RK-ANOVA-2
    "sparse_rf": {"kernel": KernelSpec("anova", 2), "methods": ["sparse_rf"], "reference": "kernel_svm"},
}


def markdown(df: pd.DataFrame, reference: str) -> str:
    s = speedups(df, reference)
    lines = ["| method | D | accuracy | balanced acc. | train s | test s | train speed-up | test speed-up | C | size |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in s.itertuples():
        D = "-" if pd.isna(r.D) else str(int(r.D))
        lines.append(f"| {r.method} | {D} | {r.accuracy_mean:.4f} ± {r.accuracy_std:.4f} | {r.balanced_accuracy:.4f} | "
                     f"{r.train_seconds:.2f} | {r.test_seconds:.2f} | {r.train_speedup:.2f}x | {r.test_speedup:.2f}x | "
                     f"{r.C:g} | {r.model_size:.0f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=os.environ.get("RKCORE_ML100K", "/work/shared/datasets/ml-100k"))
    parser.add_argument("--configs", default="fig2a", help=f"comma-separated: {', '.join(CONFIGS)}")
    parser.add_argument("--n-train", type=int, default=10_000)
    parser.add_argument("--n-val", type=int, default=1_000)
    parser.add_argument("--n-test", type=int, default=10_000)
    parser.add_argument("--D", default="2,4,8,16", help="multiples of d (paper: 2, 4, 8, 16)")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--C-grid", default="1,10,100,1000")
    parser.add_argument("--select-by", default="accuracy", choices=["accuracy", "balanced_accuracy"],
                        help="validation score that picks the shared C (paper: accuracy)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--out-dir", default="/tmp/rk_accuracy", help="per-configuration CSV files (not in the repo)")
    add_output_arguments(parser, "accuracy.md")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_train, args.n_val, args.n_test, args.trials, args.D, args.C_grid = 300, 100, 300, 1, "2", "1"
    run = Run.start(args, None if argv is None else [__file__, *argv])

    data = load_movielens(args.data)
    X = normalize(data.X, "l1")  # the paper L1-normalizes every feature vector
    d = X.shape[1]
    Ds = [int(float(m) * d) for m in args.D.split(",")]
    C_grid = [float(c) for c in args.C_grid.split(",")]
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in args.configs.split(","):
        cfg = CONFIGS[name]
        start = time.perf_counter()
        with threadpool_limits(args.blas_threads):
            df = accuracy_study(
                (X, data.y), cfg["methods"], Ds, args.trials, kernel=cfg["kernel"],
                split=(args.n_train, args.n_val, args.n_test), C_grid=C_grid, select_by=args.select_by,
                random_state=args.seed,
                progress=lambda done, total, text: print(f"  [{name} {done}/{total}] {text}", file=sys.stderr,
                                                         flush=True))
        elapsed = time.perf_counter() - start
        df.to_csv(out_dir / f"accuracy_{name}.csv", index=False)
        split = df.attrs["split"]
        val = pd.DataFrame(df.attrs["validation"])
        lines = [f"Train/val/test = {split['n_train']}/{split['n_val']}/{split['n_test']}, majority-class test accuracy "
                 f"{split['majority_accuracy']:.4f}, {args.trials} trials, wall time {elapsed / 60:.1f} min.", ""]
        if not val.empty:
            lines += ["Validation accuracy / balanced accuracy of the exact kernel SVM by C: " + "; ".join(
                f"{k}: " + ", ".join(f"C={c:g} {a:.3f}/{b:.3f}" for c, a, b in
                                     zip(t["C"], t["val_accuracy"], t["val_balanced_accuracy"]))
                for k, t in val.groupby("kernel")), ""]
        lines.append(markdown(df, cfg["reference"]))
        run.write(f"{name} (C by validation {args.select_by}): {cfg['kernel'].label()}", "\n".join(lines), level=3,
                  preamble="# Accuracy and time on MovieLens 100K (paper Figures 2 and 3)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
