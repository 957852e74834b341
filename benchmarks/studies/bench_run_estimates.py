"""Run estimates against measured runs: the cost models of rkcore.studies.costs (what the pages' run protocol
shows and refuses on) next to the time and peak memory of the same engine calls the pages make.

The one command (all pages, a few minutes on a quiet machine):

    python benchmarks/studies/bench_run_estimates.py --repeats 3

Each case runs in a fresh subprocess (one BLAS thread, as on the pages): it probes the machine's speed
(rkcore.studies.costs.speed_factor, as a page does before its estimate), loads its data, then times the engine
calls and reads the peak resident memory above the post-setup baseline from /proc/self/status (VmHWM -
VmRSS). Target: estimate / measured within 0.5 ... 2 for time and memory. It prints every run and the
table (with whether each estimate is within 2x), and writes the table as the section "Run estimates vs measured
runs" of benchmarks/results/run_estimates.md (``--out ''`` to only print; ``--short`` (9 cases) and ``--pages`` for
subsets, named in the section's title; ``--quick``: the two smallest cases, a smoke run).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # benchmarks/<subject>/this file
sys.path.insert(0, str(REPO))  # this checkout's rkcore, not an installed one

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

#: (page, label, parameters): the sizes span the auto-run threshold and the button range.
CASES = [
    ("Gram", "n=500, D=256", dict(kind="gram", n=500, D=256)),
    ("Gram", "n=2000, D=1024", dict(kind="gram", n=2000, D=1024)),
    ("Gram", "n=4000, D=256", dict(kind="gram", n=4000, D=256)),
    ("Error bounds", "n=100, 10 trials", dict(kind="bounds", n=100, trials=10)),
    ("Error bounds", "n=300, 5 trials", dict(kind="bounds", n=300, trials=5)),
    ("Distributions", "n=200, 10 trials, 100 maps", dict(kind="dist", n=200, trials=10, var_trials=100)),
    ("Distributions", "n=200, 5 trials, 1000 maps", dict(kind="dist", n=200, trials=5, var_trials=1000)),
    ("RFF", "n=500, D≤4096, 5 trials", dict(kind="rff", n=500, D_max=4096, trials=5)),
    ("RFF", "n=2000, D≤16384, 2 trials", dict(kind="rff", n=2000, D_max=16384, trials=2)),
    ("Random projections", "n=200, m≤1024, 10 draws", dict(kind="rp", n=200, m_max=1024, trials=10)),
    ("Random projections", "n=1000, m≤1024, 40 draws", dict(kind="rp", n=1000, m_max=1024, trials=40)),
    ("Compositional", "n=200, D≤512, 4 trials", dict(kind="ck", n=200, D_max=512, trials=4)),
    ("Compositional", "n=500, D≤1024, 10 trials", dict(kind="ck", n=500, D_max=1024, trials=10)),
    ("Timing", "RK+SCRK, n=200, d≤512, D≤2048, 3 repeats",
     dict(kind="timing", n=200, maps=["rk", "scrk"], d_list=[64, 128, 256, 512], D_at=1024,
          D_list=[256, 512, 1024, 2048], d_at=128, repeats=3)),
    ("Timing", "RK+SCRK+TS, n=500, d≤1024, D≤2048, 3 repeats",
     dict(kind="timing", n=500, maps=["rk", "scrk", "ts"], d_list=[128, 256, 512, 1024], D_at=1024,
          D_list=[256, 512, 1024, 2048], d_at=256, repeats=3)),
    ("Classifiers", "n=200 (the page's default), SVM+FM+RK+SCRK, D=2d…16d, 3 trials",
     dict(kind="classifiers", n=200, methods=["kernel_svm", "fm", "rk", "scrk"], multiples=[2, 4, 8, 16], trials=3)),
    ("Classifiers", "n=1000, SVM+RK, D=2d,4d, 2 trials",
     dict(kind="classifiers", n=1000, methods=["kernel_svm", "rk"], multiples=[2, 4], trials=2)),
    ("Classifiers", "n=4000, SVM+RK+SCRK+FM, D=2d…16d, 3 trials",
     dict(kind="classifiers", n=4000, methods=["kernel_svm", "rk", "scrk", "fm"], multiples=[2, 4, 8, 16],
          trials=3)),
    ("Itemsets", "all subsets of 1,500 columns", dict(kind="itemsets", n=200, d=1500, kernel="all_subsets", degree=2)),
    ("Itemsets", "up to degree 20 of 10,000 columns", dict(kind="itemsets", n=50, d=10000, kernel="up_to", degree=20)),
    ("Itemsets", "ANOVA m=3 of 60 columns", dict(kind="itemsets", n=200, d=60, kernel="anova", degree=3)),
]
SHORT = {0, 3, 5, 7, 9, 11, 13, 15, 18}
SMOKE = {0, 3}  # --quick: the smallest Gram and Error bounds cases


def _memory_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def setup(case: dict):
    """Load the case's data like the page does; returns (the page's RunCost, the page's engine calls)."""
    import numpy as np
    import pandas as pd
    from threadpoolctl import threadpool_limits

    from rkcore.studies import costs
    from rkcore.spec import kernel_spec_from_text, load_view_data
    from rkcore.base.arrays import dense

    kind, n = case["kind"], case["n"]
    data = load_view_data("interactions", "l1", n)
    X = dense(data.X)
    d = X.shape[1]
    spec = kernel_spec_from_text("anova", d, degree=2)
    work = None
    if kind == "gram":
        from rkcore.studies.gram import gram_pair
        from rkcore.studies.gram import block_average, gram_error_stats, gram_pairs

        cost = costs.gram_view_cost(n, d, case["D"], "anova", 2, "rk")

        def work():
            K, K_hat = gram_pair(X, spec, "rk", case["D"], "rademacher", 0)
            gram_error_stats(K, K_hat), gram_pairs(K, K_hat, max_points=4000, random_state=0)
            block_average(K), block_average(K_hat)
    elif kind == "bounds":
        from rkcore.studies.errors import error_study

        D_grid = (16, 32, 64, 128, 256, 512, 1024)
        eps = tuple(float(f"{m}e{k}") for k in range(-6, 0) for m in (1, 2, 5)) + (1.0,)
        cost = costs.error_study_cost(n, d, "anova", 2, D_grid, [("rk", "rademacher")], case["trials"], len(eps))

        def work():
            error_study(X, spec, [("rk", "rademacher")], list(D_grid), case["trials"], eps=eps, random_state=0)
    elif kind == "dist":
        from rkcore.maps.distributions import DISTRIBUTIONS
        from rkcore.studies.errors import error_study
        from rkcore.studies.variance_study import (
            empirical_pair_variance, exact_pair_variance, select_pairs, variance_by_distribution,
        )

        dists = tuple(DISTRIBUTIONS)
        D_list = tuple(m * d for m in (2, 4, 8, 16))
        methods = [("rk", k) for k in dists] + [("scrk", None)]
        cost = (costs.error_study_cost(n, d, "anova", 2, D_list, methods, case["trials"])
                + costs.pair_variance_cost(d, "anova", 2, D_list, len(dists), case["var_trials"], True))

        def work():
            error_study(X, spec, methods, list(D_list), case["trials"], pairs="nonzero", random_state=0)
            pairs = select_pairs(spec.exact(X[:400]))
            empirical_pair_variance(X, pairs, spec, dists, D_list, case["var_trials"], random_state=0)
            exact_pair_variance(X, pairs, spec, dists, np.logspace(np.log10(D_list[0]), np.log10(D_list[-1]), 40))
            variance_by_distribution(X, spec, dists, random_state=0)
    elif kind == "rff":
        from rkcore.teaching.fourier_features import median_heuristic_gamma, rff_error_curve

        D_list = [int(D) for D in 2 ** np.arange(4, int(np.log2(case["D_max"])) + 1)]
        cost = costs.rff_curve_cost(n, d, D_list, case["trials"])

        def work():
            rff_error_curve(X, median_heuristic_gamma(X), D_list, trials=case["trials"], seed=0)
    elif kind == "rp":
        from rkcore.teaching.kernel_trick import polynomial_features
        from rkcore.teaching.random_projections import distortion_summary, projection_distortion

        m_list = [int(m) for m in 2 ** np.arange(2, int(np.log2(case["m_max"])) + 1)]
        dim = 1 + 2 * d + d * (d - 1) // 2
        kinds = ("gaussian", "sparse")
        cost = costs.projection_cost(n, dim, m_list, case["trials"], kinds)

        def work():
            V = polynomial_features(X, 2, 1.0)
            df = pd.concat([projection_distortion(V, m_list, kind=k, trials=case["trials"], seed=0) for k in kinds],
                           ignore_index=True)
            distortion_summary(df, 0.05)
    elif kind == "ck":
        from rkcore.teaching.compositional import CompositionalFeatures, compositional_error_curve, preset_skeleton

        D_list = [int(D) for D in 2 ** np.arange(4, int(np.log2(case["D_max"])) + 1)]
        cost = costs.compositional_cost(n, d, D_list, case["trials"], 2, 128, n_nodes=2 * d + 2)

        def work():
            skel, Xp = preset_skeleton("shallow", X)
            skel.kernel(Xp)
            CompositionalFeatures(skel, 128, dedup="unbiased", random_state=0).fit(Xp).kernel_estimate(Xp)
            compositional_error_curve(Xp, skel, D_list, trials=case["trials"], seed=0, dedup_modes=("none", "unbiased"))
    elif kind == "timing":
        from rkcore.studies.timing import time_maps

        args = (case["maps"], case["d_list"], case["D_at"], case["D_list"], case["d_at"], n, 2, case["repeats"])
        cost = costs.timing_cost(*args)

        def work():  # the page's two sweeps (pages/5_Timing.py run_timings)
            time_maps(case["maps"], case["d_list"], [case["D_at"]], [n], kernel_degree=2, repeats=case["repeats"],
                      warmup=1, random_state=0)
            time_maps(case["maps"], [case["d_at"]], case["D_list"], [n], kernel_degree=2, repeats=case["repeats"],
                      warmup=1, random_state=0)
    elif kind == "classifiers":
        from rkcore.studies.accuracy import accuracy_study
        from rkcore.studies.splits import split_sizes

        split, C_grid = (0.5, 0.1, 0.4), (0.1, 1.0, 10.0, 100.0, 1000.0)  # pages/6_Classifiers.py
        D_list = [m * d for m in case["multiples"]]
        n_train, _, n_test = split_sizes(n, split)
        cost = costs.classifier_cost(case["methods"], n_train, n_test, d, D_list, spec, case["trials"], len(C_grid))

        def work():
            accuracy_study((data.X, data.y), case["methods"], D_list, case["trials"], kernel=spec, split=split,
                           C_grid=C_grid, random_state=0)
    elif kind == "itemsets":
        from rkcore.kernels.itemsets import family_from_spec
        from rkcore.studies.family_views import explicit_feature_table, explicit_view_family, family_counts, family_listing, kernel_check

        family = family_from_spec(case["kernel"], case["d"], case["degree"])
        Xw = np.random.default_rng(0).standard_normal((n, case["d"]))
        cost = costs.itemsets_view_cost(family, 200, 4096)

        def work():  # pages/2_Itemsets.py
            family_counts(family)
            family_listing(family, limit=200)
            sub = explicit_view_family(family, max_itemsets=4096)
            explicit_feature_table(Xw[:, :sub.d], sub, rows=5, max_columns=8)
            kernel_check(Xw[:, :sub.d], sub, n_pairs=6, random_state=0)
    return cost, work


def load_factor() -> float:
    """The alternative signal (branch loadaware): load average (1 min) per core, clamped to [1, 4]."""
    return min(max(os.getloadavg()[0] / (os.cpu_count() or 1), 1.0), 4.0)


def child(case: dict) -> dict:
    """Probe the machine's speed as a page does before its estimate, set up like the page, then time the
    engine calls; returns the estimates (speed probe, load average, quiet) and the measurement."""
    from threadpoolctl import threadpool_limits

    from rkcore.studies import costs

    os.environ.pop(costs.SPEED_FACTOR_ENV, None)
    factor, by_load = costs.speed_factor(), load_factor()
    os.environ[costs.SPEED_FACTOR_ENV] = repr(factor)  # the estimate below uses this very probe
    cost, work = setup(case)
    base = _memory_kb("VmRSS")
    with threadpool_limits(limits=1, user_api="blas"):
        started, cpu_started = time.perf_counter(), time.process_time()
        work()
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    peak = (_memory_kb("VmHWM") - base) * 1024
    quiet = cost.seconds / factor
    return dict(est_seconds=cost.seconds, quiet_seconds=quiet, load_seconds=quiet * by_load, factor=factor,
                load_factor=by_load, est_bytes=cost.bytes, seconds=seconds, cpu=cpu, bytes=max(peak, 0),
                load=os.getloadavg()[0])


def run_case(case: dict) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, __file__, "--child", json.dumps(case)], capture_output=True, text=True,
                         cwd=REPO, env=env, timeout=1800)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def _mb(b: float) -> str:
    return f"{b / 2**20:,.0f}"


def _within(ratio: float) -> bool:
    return 0.5 <= ratio <= 2


def _yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


#: One single-thread numpy loop of ``--busy`` (GEMMs and element-wise passes, like the runs themselves).
BUSY_LOOP = ("import numpy as np\na = np.ones((300, 300)); b = np.ones(1_000_000)\n"
             "while True:\n    a @ a; (b * 2 + 1).sum()")


def _print_run(case, r: dict) -> None:
    ratio = r["est_seconds"] / max(r["seconds"], 1e-9)
    print(f"{case[0]} | {case[1]}: estimated {r['est_seconds']:.2f} s, measured {r['seconds']:.2f} s (ratio {ratio:.2f}, "
          f"within 2x: {_within(ratio)}), CPU {r['cpu']:.2f} s, speed factor {r['factor']:.2f}, load average "
          f"{r['load']:.1f} (its estimate's ratio {r['load_seconds'] / max(r['seconds'], 1e-9):.2f}); "
          f"{_mb(r['est_bytes'])} MB estimated, {_mb(r['bytes'])} MB measured", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child")
    parser.add_argument("--short", action="store_true", help="9 of the cases, a few minutes")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--pages", nargs="+", help="only the cases of these pages (e.g. Timing Itemsets)")
    parser.add_argument("--busy", type=int, default=0,
                        help="load the machine on purpose with this many single-thread numpy loops during the runs")
    add_output_arguments(parser, "run_estimates.md")
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    run = Run.start(args, None if argv is None else [__file__, *argv])
    subset = SMOKE if args.quick else SHORT if args.short else range(len(CASES))
    cases = [c for i, c in enumerate(CASES) if i in subset and (not args.pages or c[0] in args.pages)]
    results = {i: [] for i in range(len(cases))}
    load = os.getloadavg()[0]
    busy = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP], env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
            for _ in range(args.busy)]
    try:
        for _ in range(args.repeats):  # interleaved repeats
            for i, (_, _, case) in enumerate(cases):
                results[i].append(run_case(case))
                _print_run(cases[i], results[i][-1])
    finally:
        for process in busy:
            process.kill()
            process.wait()
    lines = [f"Load average (1 min) at start {load:.1f} (2 cores, shared{f'; {args.busy} busy loops of ours' if args.busy else ''}); one BLAS thread as on the "
             "pages; each run in a fresh process, repeats interleaved. **Estimated s** is what the page shows: the "
             "quiet-machine model times the speed factor its own probe measured just before the run (median over "
             "the repeats); **ratio** = median over the repeats of estimate / measured wall time (target 0.5 … 2). "
             "**quiet / CPU**: the model at speed factor 1 against the run's CPU seconds (process time, which the "
             "load inflates little): the calibration itself. **load avg**: ratio of the alternative estimate, quiet "
             "model × load average per core clamped to [1, 4] (branch loadaware).", "",
             "| page | settings | estimated s | measured s | ratio | within 2x | CPU s | quiet / CPU | load avg | "
             "speed factor | estimated MB | measured peak MB | ratio | within 2x |",
             "|---|---|---:|---:|---:|:-:|---:|---:|---:|---:|---:|---:|---:|:-:|"]
    within_t = within_b = runs_probe = runs_load = runs = 0
    med = statistics.median
    for i, (page, label, _) in enumerate(cases):
        rs = results[i]
        s = med(r["seconds"] for r in rs)
        b = med(r["bytes"] for r in rs)
        es, eb = med(r["est_seconds"] for r in rs), rs[0]["est_bytes"]
        rt = med(r["est_seconds"] / max(r["seconds"], 1e-9) for r in rs)
        rl = med(r["load_seconds"] / max(r["seconds"], 1e-9) for r in rs)
        rq = med(r["quiet_seconds"] / max(r["cpu"], 1e-9) for r in rs)
        rb = eb / max(b, 1.0)
        within_t, within_b = within_t + _within(rt), within_b + _within(rb)
        runs += len(rs)
        runs_probe += sum(_within(r["est_seconds"] / max(r["seconds"], 1e-9)) for r in rs)
        runs_load += sum(_within(r["load_seconds"] / max(r["seconds"], 1e-9)) for r in rs)
        spread = f" ({min(r['seconds'] for r in rs):.2f}–{max(r['seconds'] for r in rs):.2f})" if len(rs) > 1 else ""
        factors = sorted(r["factor"] for r in rs)
        fs = f"{factors[0]:.2f}–{factors[-1]:.2f}" if len(rs) > 1 else f"{factors[0]:.2f}"
        lines.append(f"| {page} | {label} | {es:.2f} | {s:.2f}{spread} | {rt:.2f} | {_yes(_within(rt))} "
                     f"| {med(r['cpu'] for r in rs):.2f} | {rq:.2f} | {rl:.2f} | {fs} | {_mb(eb)} | {_mb(b)} | {rb:.2f} "
                     f"| {_yes(_within(rb))} |")
    loads = [r["load"] for rs in results.values() for r in rs]
    quiet_cpu = sorted(r["quiet_seconds"] / max(r["cpu"], 1e-9) for rs in results.values() for r in rs)
    lines += ["", f"Load average (1 min) at the end of each run: {min(loads):.1f} to {max(loads):.1f}.",
              f"**Time: {within_t} of {len(cases)} estimates within 2x** (median ratio per case); memory: {within_b} "
              f"of {len(cases)}. Single runs within 2x: {runs_probe} of {runs} with the speed probe, {runs_load} of "
              f"{runs} with the load average. Quiet model / CPU s over all runs: {quiet_cpu[0]:.2f} to "
              f"{quiet_cpu[-1]:.2f} (median {med(quiet_cpu):.2f}). Peak memory below ~30 MB is dominated by the "
              "allocator's granularity (RSS pages), so small-case memory ratios are loose by nature."]
    title = "Run estimates vs measured runs" + (", the short subset" if args.short else "") + (
        f", pages {', '.join(args.pages)}" if args.pages else "") + (f", {args.busy} busy loops" if args.busy else "")
    run.write(title, "\n".join(lines), preamble="# Run estimates vs measured runs")


if __name__ == "__main__":
    main()
