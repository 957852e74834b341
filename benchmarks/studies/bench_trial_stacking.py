"""The error engine's trials, stacked vs one task per trial, in one process.

    python benchmarks/studies/bench_trial_stacking.py [--repeats 9] [--n 200 1000 5000] [--quick] [--out FILE]

Writes the section "The error engine's trials, stacked vs one task per trial" of benchmarks/results/study_pages.md.

The study is the Distributions page's default (rkcore.studies.errors.error_study): the built-in
"interactions" data (d = 20, L1-normalized), ANOVA-2, RK with the four weight distributions and
SCRK, D = 2d, 4d, 8d, 16d, 10 trials, pairs="nonzero", one BLAS thread. "stacked" is the engine
as it is (a task computes the trials of a (method, D) whose features fit STACKED_FEATURES_BYTES as
one stacked RK map, and a block's exact strip and pair mask serve all of them); "per trial" sets
STACKED_FEATURES_BYTES = 0, which gives one task per trial: the previous task layout. Repeats
alternate the two, CPU time (process_time) is reported, as median (min-max), with the ratio of
medians and the load average. Both give the same numbers (tests/studies/test_experiments.py).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout

from threadpoolctl import threadpool_limits  # noqa: E402

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402
from rkcore.studies import errors as experiments  # noqa: E402
from rkcore.data.datasets import make_interactions, normalize  # noqa: E402
from rkcore.maps.distributions import DISTRIBUTIONS  # noqa: E402
from rkcore.registry import KernelSpec  # noqa: E402

METHODS = [("rk", dist) for dist in DISTRIBUTIONS] + [("scrk", None)]
TITLE = "The error engine's trials, stacked vs one task per trial (`python benchmarks/studies/bench_trial_stacking.py`)"


def study(X, stacking_bytes: int, trials: int = 10) -> float:
    experiments.STACKED_FEATURES_BYTES = stacking_bytes
    d = X.shape[1]
    start = time.process_time()
    experiments.error_study(X, KernelSpec("anova", 2), METHODS, [2 * d, 4 * d, 8 * d, 16 * d], trials,
                            pairs="nonzero", random_state=0)
    return time.process_time() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--n", type=int, nargs="*", default=[200, 1000, 5000])
    add_output_arguments(ap, "study_pages.md")
    args = ap.parse_args(argv)
    trials = 2 if args.quick else 10
    if args.quick:
        args.repeats, args.n = 1, [40]
    run = Run.start(args, None if argv is None else [__file__, *argv])
    default = experiments.STACKED_FEATURES_BYTES
    rows = []
    with threadpool_limits(limits=1, user_api="blas"):
        for n in args.n:
            X = normalize(make_interactions(n, random_state=0).X, "l1")
            times = {"stacked": [], "per trial": []}
            study(X, default, trials)  # warm-up: imports, caches
            for r in range(args.repeats):
                order = [("stacked", default), ("per trial", 0)]
                for label, size in (order if r % 2 == 0 else order[::-1]):
                    times[label].append(study(X, size, trials))
            med = {k: statistics.median(v) for k, v in times.items()}
            rows.append((n, *(f"{med[k]:.3f} ({min(times[k]):.3f}–{max(times[k]):.3f})" for k in times),
                         f"{med['stacked'] / med['per trial']:.2f}"))
    experiments.STACKED_FEATURES_BYTES = default
    lines = [f"Distributions page's default study ({trials} trials), one BLAS thread; {args.repeats} repeats "
             "alternating the two layouts; CPU seconds, median (min–max).", "",
             "| n | stacked, s | per trial, s | stacked / per trial |", "|---|---|---|---|"]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    run.write(TITLE, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
