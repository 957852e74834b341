"""rkcore's ORF, SORF and FastFood against pyrfm's, on the same weights and data, and against a floor, in one process.

One command:  python benchmarks/maps/bench_fourier_vs_pyrfm.py   (builds pyrfm first if needed: benchmarks/maps/setup_pyrfm.sh)

Cells: dense N(0, 1) rows (n, d) with D features (cos/sin pairs: D/2 frequencies; pyrfm's use_offset=False),
gamma = 1/d. Per cell and map:
  * pyrfm's transformer is fitted; rkcore's gets the same weights (ORF: the frequency matrix; SORF: the three
    sign diagonals; FastFood: B, Pi, G and S). ORF and SORF outputs are checked equal to pyrfm's before timing.
    FastFood: pyrfm applies S between G and the second H (H S G Pi H B), rkcore as the paper (S H G Pi H B; see
    rkcore.maps.structured): the outputs are checked equal with S constant per block (then both agree), and timed
    with the drawn S (the same operation count).
  * floor: ORF one (n x d) @ (d x D/2) GEMM; SORF and FastFood one real FFT (scipy.fft.rfft) over the last
    axis of an (n, blocks, p) array: the O(D log d) transform of the same shape, done once (the maps do two
    or three Walsh-Hadamard transforms, the cos/sin and the sign/permutation passes on top).
Each contender once per repeat, interleaved (order reversed on odd repeats), one BLAS thread for all (pyrfm is
single-threaded); a contender faster than --min-sample-ms is called several times per repeat (the count fixed
from its warm-up) and its mean per call taken, so that millisecond cells are not timer and scheduler noise;
ratios are per-repeat ratios, reported as median (min-max). Cells with D > --max-D are skipped (the default
grid takes about 1 minute of CPU, 4-5 minutes wall at load 10 on 2 cores). Writes the section "ORF, SORF and
FastFood against pyrfm" (a README table) of benchmarks/results/fourier_vs_pyrfm.md (--out, --quick: see --help).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.fft
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_vs_pyrfm import import_pyrfm, ms, ratio, seconds  # noqa: E402

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

from rkcore.maps.orthogonal import next_power_of_two  # noqa: E402
from rkcore.maps.structured import FastFood, OrthogonalRandomFeatures, StructuredOrthogonalRandomFeatures  # noqa: E402

TITLE = "ORF, SORF and FastFood against pyrfm"
PREAMBLE = "# ORF, SORF and FastFood: rkcore against pyrfm and the floor"


def fisher_yates_permutation(fy_vector: np.ndarray) -> np.ndarray:
    """pyrfm's in-place swaps (cache[j] <-> cache[j + fy[j]], j = 0, 1, ...) as a gather index: new = old[perm]."""
    perm = np.arange(fy_vector.size)
    for j, step in enumerate(fy_vector):
        k = j + int(step)
        perm[j], perm[k] = perm[k], perm[j]
    return perm


def twin_orf(ours, theirs, gamma):
    ours.random_weights_ = np.ascontiguousarray(theirs.random_weights_.T) / np.sqrt(2 * gamma)


def twin_sorf(ours, theirs, d, p):
    rw = theirs.random_weights_
    signs = np.ones((rw.shape[0], 3, p))
    signs[:, 0, :d], signs[:, 1], signs[:, 2] = rw[:, :d], rw[:, d:d + p], rw[:, d + p:]
    ours.random_signs_ = signs


def twin_fastfood(ours, theirs, d, p, constant_scaling: bool):
    n_blocks = theirs.random_weights_.shape[0]
    signs = np.ones((n_blocks, p))
    signs[:, :d] = theirs.random_sign_
    ours.random_signs_ = signs
    ours.random_perm_ = np.stack([fisher_yates_permutation(v) for v in theirs._fy_vector_])
    ours.random_gaussian_ = np.asarray(theirs.random_weights_, dtype=np.float64)
    if constant_scaling:  # S commutes with H only when constant per block: then both arrangements agree
        theirs.random_scaling_ = np.repeat(theirs.random_scaling_[:, :1], p, axis=1)
    ours.random_scaling_ = theirs.random_scaling_ / np.sqrt(p)


def build(kind, pyrfm, X, D, gamma, constant_scaling=False):
    n, d = X.shape
    p = next_power_of_two(d)
    if kind == "ORF":
        theirs = pyrfm.OrthogonalRandomFeature(D, gamma=gamma, random_state=0).fit(X)
        ours = OrthogonalRandomFeatures(D, gamma=gamma, random_state=0).fit(X)
        twin_orf(ours, theirs, gamma)
    elif kind == "SORF":
        theirs = pyrfm.StructuredOrthogonalRandomFeature(D, gamma=gamma, random_state=0).fit(X)
        ours = StructuredOrthogonalRandomFeatures(D, gamma=gamma, random_state=0).fit(X)
        twin_sorf(ours, theirs, d, p)
    else:
        theirs = pyrfm.FastFood(D, gamma=gamma, random_state=0).fit(X)
        ours = FastFood(D, gamma=gamma, random_state=0).fit(X)
        twin_fastfood(ours, theirs, d, p, constant_scaling)
    if theirs.n_components != D:
        raise ValueError(f"pyrfm changed D from {D} to {theirs.n_components}: pick D a multiple of 2p.")
    return ours, theirs


def floor(kind, X, D):
    n, d = X.shape
    if kind == "ORF":
        W = np.random.RandomState(0).standard_normal((d, D // 2))
        return lambda: X @ W
    p = next_power_of_two(d)
    V = np.zeros((n, -(-(D // 2) // p), p))
    V[:, :, :d] = X[:, None, :]
    return lambda: scipy.fft.rfft(V, axis=-1)


def interleave(contenders: dict, repeats: int, min_sample: float) -> dict:
    """Per contender, ``repeats`` per-call times: each sample the mean of k calls, k = ceil(min_sample / warm-up
    time) (at most 100), the contenders in turn, the order reversed on odd repeats (as bench_vs_pyrfm.interleave)."""
    calls = {k: min(100, max(1, int(np.ceil(min_sample / max(seconds(fn), 1e-9))))) for k, fn in contenders.items()}
    times = {k: [] for k in contenders}
    for r in range(repeats):
        order = list(contenders.items())
        for k, fn in (order if r % 2 == 0 else order[::-1]):
            times[k].append(mean_call_seconds(fn, calls[k]))
    return times


def mean_call_seconds(fn, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def run(args) -> list[str]:
    pyrfm = import_pyrfm()
    rows = []
    for d in args.d:
        for mult in args.D_per_d:
            X = np.random.RandomState(1).standard_normal((args.n, d))
            gamma = 1.0 / d
            for kind in args.maps:
                # pyrfm's D: whole blocks of cos/sin pairs, d frequencies (ORF) or p (SORF, FastFood) per block
                D = 2 * (d if kind == "ORF" else next_power_of_two(d)) * mult
                if D > args.max_D:
                    continue
                ours, theirs = build(kind, pyrfm, X, D, gamma, constant_scaling=True)
                np.testing.assert_allclose(ours.transform(X), theirs.transform(X), rtol=1e-9, atol=1e-11)
                ours, theirs = build(kind, pyrfm, X, D, gamma)
                contenders = {"rkcore": lambda: ours.transform(X), "pyrfm": lambda: theirs.transform(X),
                              "floor": floor(kind, X, D)}
                load = os.getloadavg()[0]
                times = interleave(contenders, args.repeats, args.min_sample_ms / 1e3)
                row = (f"| {args.n:,} x {d} | {D:,} | {kind} | {ms(times['rkcore'])} | {ms(times['pyrfm'])} | "
                       f"{ratio(times, 'rkcore', 'pyrfm')} | {ratio(times, 'rkcore', 'floor')} | "
                       f"{ratio(times, 'pyrfm', 'floor')} | {load:.1f}-{os.getloadavg()[0]:.1f} |")
                print(row, flush=True)
                rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2_000)
    ap.add_argument("--d", type=int, nargs="+", default=[64, 78, 512, 1024])
    ap.add_argument("--D-per-d", type=int, nargs="+", default=[1, 4],
                    help="D = 2 d x this (ORF) or 2 p x this (SORF, FastFood; p: d padded to a power of two)")
    ap.add_argument("--maps", nargs="+", default=["ORF", "SORF", "FastFood"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-D", type=int, default=4096, help="skip cells with more features (time)")
    ap.add_argument("--min-sample-ms", type=float, default=30.0,
                    help="contenders faster than this are called several times per sample")
    add_output_arguments(ap, "fourier_vs_pyrfm.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.d, args.D_per_d, args.repeats = 100, [12], [1], 1
    run_info = Run.start(args, None if argv is None else [__file__, *argv])
    with threadpool_limits(limits=1):
        rows = run(args)
    header = ["| data | D | map | rkcore ms | pyrfm ms | rkcore / pyrfm | rkcore / floor | pyrfm / floor | load |",
              "|---|---:|---|---|---|---|---|---|---|"]
    body = "\n".join([
        "One BLAS thread, float64, numpy " + np.__version__ + "; 1-minute load average per cell in the last column "
        f"(absolute times are noisy, the per-repeat ratios are the signal). Each entry: median (min-max) over "
        f"{args.repeats} interleaved repeats after a warm-up (per call; calls under {args.min_sample_ms:g} ms repeated "
        "within a sample). Same weights in rkcore and pyrfm (see the script's "
        "docstring); below 1 means rkcore is faster. *floor*: ORF one (n x d) @ (d x D/2) GEMM; SORF and FastFood "
        "one real FFT over the last axis of the (n, blocks, p) array the map transforms (p = d padded to a power "
        "of two).", "", *header, *rows])
    run_info.write(TITLE, body, level=3, preamble=PREAMBLE)


if __name__ == "__main__":
    main()
