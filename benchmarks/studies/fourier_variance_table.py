"""MSE, variance and squared bias of the Gaussian-kernel Gram estimate at D = d, 4d, 16d: i.i.d. RFF (scikit-learn's
offset form and the cos/sin form) against ORF, SORF and FastFood (rkcore.studies.fourier_study), on three data sets.

python benchmarks/studies/fourier_variance_table.py [--trials 50] [--quick] [--out FILE]
-> the section "MSE of the Gaussian-kernel estimate at D = d, 4d, 16d" (a README table) of
benchmarks/results/fourier_variance.md
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "maps"))

from bench_vs_pyrfm import movielens_shaped  # noqa: E402

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

from rkcore.data.datasets import load_builtin, normalize  # noqa: E402
from rkcore.teaching.foundations import median_heuristic_gamma  # noqa: E402
from rkcore.studies.fourier_study import IID_REFERENCE, fourier_map_study, fourier_maps, fourier_note  # noqa: E402

TITLE = "MSE of the Gaussian-kernel estimate at D = d, 4d, 16d"
PREAMBLE = """# Random Fourier features: i.i.d., orthogonal and structured maps at D = d, 4d, 16d

Written by `benchmarks/studies/fourier_variance_table.py` (Monte Carlo; the machine's load does not enter these
numbers). Gaussian kernel exp(-γ‖x−y‖²), γ by the median heuristic; independent maps per cell (seeds 0, 1, ...);
over the n(n−1)/2 pairs of n rows: MSE = mean (K̂ − K)², variance = mean over pairs of the variance over maps,
bias² = mean (mean K̂ − K)² − variance / maps. *ratio*: MSE / MSE of i.i.d. RFF with the same cos/sin features
(RFF (cos/sin)); RFF is scikit-learn's RBFSampler (one cosine with a random phase per frequency). SORF is biased
(its rows have a fixed length)."""


def datasets(n: int):
    yield "N(0, 1), d = 32", np.random.RandomState(0).standard_normal((n, 32))
    yield "interactions (built-in), L2 rows, d = 20", np.asarray(normalize(load_builtin("interactions", n).X, "l2"))
    yield "MovieLens-shaped (synthetic, 7 of 78 non-zero), L2 rows", \
        np.asarray(normalize(movielens_shaped(n, seed=0), "l2").toarray())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--trials", type=int, default=50)
    add_output_arguments(ap, "fourier_variance.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.trials = 20, 3
    run = Run.start(args, None if argv is None else [__file__, *argv])
    readme = [f"n = {args.n} rows, {args.trials} independent maps per cell.", "",
              "| data | D | " + " | ".join(["RFF", "RFF (cos/sin)", "ORF", "SORF", "FastFood"]) +
              " | ORF / RFF (cos/sin) | SORF / RFF (cos/sin) | FastFood / RFF (cos/sin) |",
              "|---|---:|" + "---:|" * 8]
    details = []
    with threadpool_limits(1):
        for name, X in datasets(args.n):
            d = X.shape[1]
            study = fourier_map_study(X, median_heuristic_gamma(X), fourier_maps(), [d, 4 * d, 16 * d], args.trials)
            mse = study.pivot(index="D", columns="map", values="mse")
            for D, row in mse.iterrows():
                ref = row[IID_REFERENCE]
                readme.append(f"| {name} | {D} | " + " | ".join(f"{row[k]:.2e}" for k in
                                                               ("rff", "rff_pairs", "orf", "sorf", "fastfood")) +
                              " | " + " | ".join(f"{row[k] / ref:.2f}" for k in ("orf", "sorf", "fastfood")) + " |")
            details += [f"#### {name}", "", "| map | D | MSE | variance | bias² | mean abs error |",
                        "|---|---:|---:|---:|---:|---:|"]
            details += [f"| {r.label} | {r.D} | {r.mse:.3e} | {r.variance:.3e} | {r.bias2:.2e} | {r.mean_abs_error:.3e} |"
                        for r in study.itertuples()]
            details += ["", f"Note (computed): {fourier_note(study)}", ""]
            print(name, fourier_note(study), flush=True)
    run.write(TITLE, "\n".join(readme + [""] + details), level=3, preamble=PREAMBLE)


if __name__ == "__main__":
    main()
