"""Paper Table 1 on MovieLens 100K through the command line (``python -m rkcore table1``), written as a results section.

Runs the CLI in a subprocess (the command a user types), measures its wall time and peak memory (the child's
max RSS), and writes its tables into the section "n = <n>, <trials> trials" of benchmarks/results/table1.md.

    python benchmarks/studies/table1_results.py [--n 3000] [--trials 10] [--pairs nonzero] [--data DIR]
        [--quick] [--out FILE]
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("RKCORE_ML100K", "/work/shared/datasets/ml-100k"))
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--pairs", default="nonzero")
    ap.add_argument("--kernels", default="anova2,anova3,all_subsets")
    ap.add_argument("--multiples", default="2,4,8,16")
    add_output_arguments(ap, "table1.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.trials, args.kernels, args.multiples = 100, 1, "anova2", "2"
    run = Run.start(args, None if argv is None else [__file__, *argv])
    command = [sys.executable, "-m", "rkcore", "table1", "--data", args.data, "--n", str(args.n), "--trials",
               str(args.trials), "--pairs", args.pairs, "--kernels", args.kernels, "--multiples", args.multiples,
               "--quiet"]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"rkcore table1 failed:\n{done.stderr[-2000:]}")
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    cli = " ".join(["python -m rkcore table1", *command[4:]]).replace(args.data, "PATH/ml-100k")
    body = [f"`{cli}`: wall time {seconds:.0f} s, peak memory (max RSS) {peak_mb:.0f} MB.", "",
            done.stdout.strip()]
    run.write(f"n = {args.n}, {args.trials} trials", "\n".join(body),
              preamble="# Paper Table 1 on MovieLens 100K (`python -m rkcore table1`)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
