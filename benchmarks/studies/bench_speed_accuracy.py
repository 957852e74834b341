"""The skeptic's chart in numbers: accuracy and time of RK, SCRK, RFF, Nystroem and the exact kernel SVMs over seeds,
time against n with the crossover, and the factorization machine against the kernel SVM at two sizes.

    python benchmarks/studies/bench_speed_accuracy.py [--n 2000] [--seeds 10] [--quick] [--out FILE]

Writes benchmarks/results/speed_accuracy.md. Everything runs with one BLAS thread on the synthetic interaction data
(d = 20, L1 rows). Part 1 is the Speed and accuracy page's study (rkcore.studies.speed_accuracy.sweep_D: the seed
draws the split and the map, for every method, the exact SVMs included); part 2 its time against n (measured at
MEASURED_N, the power law fitted to them, the crossover); part 3 the evidence behind rkcore.teaching.speed.FM_EVIDENCE:
the exact ANOVA-2 kernel SVM and the factorization machine (the Classifiers page's study, 3 seeds) at 1,000 and 4,000
points, and an L1-penalized logistic regression on the 190 explicit products x_j x_k (C on the validation set).
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402
from rkcore.registry import KernelSpec  # noqa: E402
from rkcore.spec import load_view_data  # noqa: E402
from rkcore.studies.accuracy import accuracy_study, summarize  # noqa: E402
from rkcore.studies.speed_accuracy import (  # noqa: E402
    crossover_n, extrapolate, fits_in_memory, summarize_sweep, sweep_D, time_against_n,
)
from rkcore.studies.splits import split_indices, split_sizes  # noqa: E402
from rkcore.teaching.speed import comparison_sentences, crossover_sentence, fm_sentence  # noqa: E402
from rkcore.views.speed_accuracy import MEASURED_N, TIME_D, D_grid  # noqa: E402

TITLE = "Speed and accuracy: the skeptic's chart (`python benchmarks/studies/bench_speed_accuracy.py`)"


def fm_evidence(n: int, trials: int = 3) -> dict:
    """Kernel SVM and FM (the Classifiers study) and L1 on the explicit pairs, on n points of the interaction data."""
    from sklearn.linear_model import LogisticRegression

    data = load_view_data("interactions", "l1", n)
    X, y = np.asarray(data.X), np.asarray(data.y)
    df = accuracy_study((X, y), ["kernel_svm", "fm"], [], trials, kernel=KernelSpec("anova", 2))
    s = summarize(df).set_index("method")
    tr, va, te = split_indices(y, split_sizes(len(y), (0.5, 0.1, 0.4)), 0)
    rows, cols = np.triu_indices(X.shape[1], 1)
    P = X[:, rows] * X[:, cols]
    P = P / np.abs(P).max()
    fit = lambda C: LogisticRegression(penalty="l1", C=C, solver="liblinear", max_iter=2000).fit(P[tr], y[tr])  # noqa: E731
    C = max((1e-1, 1.0, 10.0, 100.0), key=lambda c: np.mean(fit(c).predict(P[va]) == y[va]))
    model = fit(C)
    return {"n_train": len(tr), "kernel_svm": s.loc["kernel_svm", "accuracy_mean"], "fm": s.loc["fm", "accuracy_mean"],
            "fm_std": s.loc["fm", "accuracy_std"], "l1_pairs": float(np.mean(model.predict(P[te]) == y[te])),
            "l1_nonzero": int(np.sum(model.coef_ != 0))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--D-max", type=int, default=640)
    add_output_arguments(ap, "speed_accuracy.md")
    args = ap.parse_args(argv)
    measured_n, fm_sizes = MEASURED_N, (1000, 4000)
    if args.quick:
        args.n, args.seeds, args.D_max, measured_n, fm_sizes = 200, 2, 40, (50, 100), (200,)
    run = Run.start(args, None if argv is None else [__file__, *argv])
    warnings.filterwarnings("ignore")
    data = load_view_data("interactions", "l1", args.n)
    with threadpool_limits(limits=1, user_api="blas"):
        runs = sweep_D(data.X, data.y, D_grid(args.D_max), range(args.seeds))
        C = float(runs.loc[runs["contender"] == "svm_anova", "C"].iloc[0])
        measured = time_against_n(measured_n, TIME_D, C=C)
        evidence = [fm_evidence(n) for n in fm_sizes]
    summary = summarize_sweep(runs)
    n_memory = fits_in_memory()
    times = extrapolate(measured, n_memory)
    crossings = {p: crossover_n(measured, p) for p in ("train", "predict")}
    lines = [f"Interaction data, n = {args.n:,} ({int(runs['n_train'].iloc[0]):,} training points), {args.seeds} "
             f"seeds (split and map), C = {C:g} for the ANOVA target. One BLAS thread.", "",
             "| method | D | accuracy mean ± sd (se) | train s median (min–max) | predict s median (min–max) |",
             "|---|---|---|---|---|"]
    for _, r in summary.iterrows():
        lines.append(f"| {r['label']} | {'-' if np.isnan(r['D']) else int(r['D'])} | {r['accuracy_mean']:.4f} ± "
                     f"{r['accuracy_std']:.4f} ({r['accuracy_se']:.4f}) | {r['train_median']:.4f} ({r['train_min']:.4f}"
                     f"–{r['train_max']:.4f}) | {r['predict_median']:.4f} ({r['predict_min']:.4f}–"
                     f"{r['predict_max']:.4f}) |")
    lines += ["", "What the page says (rkcore.teaching.speed):", ""]
    lines += [f"- {s}" for s in comparison_sentences(summary, "rk", "svm_anova")]
    lines += [f"- {s}" for s in comparison_sentences(summary, "nystroem", "svm_rbf")]
    lines += ["", f"Time against n (RK at D = {TIME_D}, 4,000 test rows, fastest of 3 fits; the exact Gram fits the "
              f"memory budget up to n = {n_memory:,}):", "", "| model | phase | n | seconds | source |", "|---|---|---|---|---|"]
    lines += [f"| {r.model} | {r.phase} | {r.n:,} | {r.seconds:.4g} | {r.source} |" for r in times.itertuples()]
    fits = times.attrs["fits"]
    lines += ["", "Power laws seconds = a·n^b: " + "; ".join(f"{m} {p}: a = {a:.3g}, b = {b:.2f}"
                                                           for (m, p), (a, b) in fits.items()), ""]
    lines += [f"- {crossover_sentence(*crossings[p], p, n_memory, max(measured_n))}" for p in ("train", "predict")]
    lines += ["", "Factorization machine against the kernel SVM (3 seeds for FM; L1 on the explicit pairs):", "",
              "| training points | kernel SVM | FM (sd) | L1 on pairs (non-zero weights) |", "|---|---|---|---|"]
    lines += [f"| {e['n_train']:,} | {e['kernel_svm']:.4f} | {e['fm']:.4f} ({e['fm_std']:.4f}) | {e['l1_pairs']:.4f} "
              f"({e['l1_nonzero']}) |" for e in evidence]
    lines += ["", f"- This run: {fm_sentence(pd.DataFrame(evidence))}", f"- The page (FM_EVIDENCE): {fm_sentence()}"]
    run.write(TITLE, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
