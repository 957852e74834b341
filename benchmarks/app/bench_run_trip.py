"""A view's run in the app process against the same run sent to a worker of the local cluster: CPU seconds of all
processes (the app's client, the scheduler, the worker) per run.

    python benchmarks/app/bench_run_trip.py [--repeats 5] [--runs 6]

Why (issue 37 (d)): rkapp.workers.computed_here keeps light runs (priced under HERE_SECONDS and HERE_BYTES) in the
app process, because for them the trip through the cluster costs more CPU than the run. For each study view at
classroom settings, each repeat measures ``--runs`` runs (new seeds) computed here with one BLAS thread (what an
app process with a cluster uses, rkapp.workers.one_blas_thread_here) and ``--runs`` runs through
``rkapp.workers.run_in_worker`` on rkcore-app's local cluster of two workers (process-tree CPU, psutil user +
system); the two alternate in every repeat, and the table gives medians and the spread over repeats, the trip's
extra CPU per run and the ratio, beside the cost model's estimate that decides where a run goes.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[2]  # benchmarks/<subject>/this file
sys.path.insert(0, str(REPO))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "A run in the app process against its trip to a worker (`python benchmarks/app/bench_run_trip.py`)"
MULTIPLES = ("2", "4", "8", "16")


def cases(quick: bool) -> dict:
    """Views at classroom settings (benchmarks/app/bench_classroom.py's ranges): (view, settings, n, D)."""
    from rkcore.views import distributions as dv
    from rkcore.views import error_bounds as eb
    from rkcore.views import gram

    n, D = (60, 64) if quick else (200, 256)
    return {
        "Gram matrices": (gram.GRAM, {}, n, D),
        "Error bounds (5 trials)": (eb.BOUNDS, {"eb_trials": 5}, n, D),
        "Distributions: error study (5 trials)": (dv.STUDY, {"dv_mult": MULTIPLES, "dv_trials": 5, "dv_scrk": False},
                                                  n, D),
        "Distributions: pair variances (50 maps)": (dv.VARIANCES, {"dv_mult": MULTIPLES, "dv_vtrials": 50}, n, D),
        "Distributions: exact variances": (dv.EXACT, {"dv_mult": MULTIPLES}, n, D),
    }


def tree_cpu() -> float:
    """CPU seconds so far of this process and all its descendants (the cluster's scheduler, nannies, workers)."""
    total = 0.0
    me = psutil.Process()
    for p in [me, *me.children(recursive=True)]:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.Error:
            pass
    return total


def per_run(call, runs: int, first_seed: int) -> float:
    start = tree_cpu()
    for k in range(runs):
        call(first_seed + k)
    return (tree_cpu() - start) / runs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--runs", type=int, default=6, help="runs per view, version and repeat (new seeds)")
    add_output_arguments(ap, "run_trip.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeats, args.runs = 2, 2
    run = Run.start(args, argv)

    from threadpoolctl import threadpool_limits

    from rkapp import workers
    from rkcore.spec import load_view_data
    from rkcore.views import ViewSpec

    table = cases(args.quick)
    data = {n: load_view_data("interactions", "l1", n) for _, _, n, _ in table.values()}
    process, address = workers.start_local_cluster(2, workers.WORKER_BASE_BYTES + 512 * 2**20)
    os.environ[workers.SCHEDULER_ENV] = address
    here: dict[str, list[float]] = {name: [] for name in table}
    trip: dict[str, list[float]] = {name: [] for name in table}
    try:
        workers._client_or_none().wait_for_workers(2, timeout=120)
        seed = 1
        for repeat in range(args.repeats):
            for name, (view, settings, n, D) in table.items():
                settings = view.checked(settings)

                def in_place(s, view=view, settings=settings, n=n, D=D):
                    return view.compute(ViewSpec(n=n, D=D, seed=s), data[n], **settings)

                def through(s, view=view, settings=settings, n=n, D=D):
                    return workers.run_in_worker(view.compute, (ViewSpec(n=n, D=D, seed=s), data[n]), settings,
                                                 what=name)

                with threadpool_limits(limits=1):
                    in_place(0)  # warm: imports and caches, here and in both workers
                through(0)
                through(0)
                order = (("here", in_place), ("trip", through)) if repeat % 2 == 0 else (
                    ("trip", through), ("here", in_place))
                for kind, call in order:
                    if kind == "here":
                        with threadpool_limits(limits=1):
                            here[name].append(per_run(call, args.runs, seed))
                    else:
                        trip[name].append(per_run(call, args.runs, seed))
                    seed += args.runs
                time.sleep(0.2)
    finally:
        workers._client_or_none().close()
        workers._client = None
        workers.stop_local_cluster(process)

    lines = ["| view (n, D) | estimate s | in the app process: CPU s per run, median (min-max) | through a worker: "
             "CPU s per run, median (min-max) | the trip's extra CPU s | ratio | where it runs |",
             "|---|---|---|---|---|---|---|"]
    for name, (view, settings, n, D) in table.items():
        cost = view.cost(ViewSpec(n=n, D=D), n, data[n].X.shape[1], **view.checked(settings))
        h, t = statistics.median(here[name]), statistics.median(trip[name])
        where = ("app process" if cost.seconds < workers.HERE_SECONDS and cost.bytes < workers.HERE_BYTES
                 else "worker")
        lines.append(f"| {name} ({n}, {D}) | {cost.seconds:.3f} | {h:.4f} ({min(here[name]):.4f}-{max(here[name]):.4f})"
                     f" | {t:.4f} ({min(trip[name]):.4f}-{max(trip[name]):.4f}) | {t - h:+.4f} | {t / h:.1f}x | "
                     f"{where} |")
    body = (f"{args.repeats} repeats of {args.runs} runs per view and version, alternating; two worker processes of "
            "rkcore-app's local cluster; the app side with one BLAS thread. CPU of all processes (this one, the "
            "scheduler, the nannies and the workers) per run.\n\n" + "\n".join(lines) + "\n")
    run.write(TITLE, body)


if __name__ == "__main__":
    main()
