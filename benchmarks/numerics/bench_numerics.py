"""Accuracy contract (issue 11): new kernels and maps vs the previous fast path, in one run.

The previous fast path (power sums + Newton's identities, no check, no fallback) is kept
below as a verbatim copy of the old functions (``old_*``), so every ratio new / old is
measured in the same process, interleaved within each repeat (old, new, old, new, ...)
so machine load hits both alike. Reported: median seconds of each, their spread
(min-max over repeats), the median of the per-repeat ratios, and the load average.

Cases:
  * well-conditioned: MovieLens-shaped rows (d = 78: one-hot user/item blocks and genre
    flags, L1-normalized) and dense N(0, 1) rows (d = 78); exact ANOVA m = 2, 3 and up-to
    m = 3 Gram matrices, the RK map (ANOVA m = 2, 3; Rademacher and Gaussian weights,
    D = 16 d) and SCRK (m = 2, 3), plus SCRK / RK at d = 512 (the probabilistic bound);
  * adversarial: the issue's timestamp CSV (a 1.6e9 column beside [0, 1] features,
    L1-normalized) and N(0, 1) rows with one entry scaled by 1e6 (one |z_j| dominates):
    here the fallback runs, and the old values are wrong; the table adds the share of
    entries recomputed and the worst error / contract scale of old and new on a sample,
    against exact rationals.

Usage: python benchmarks/numerics/bench_numerics.py [--repeats 7] [--n 2000] [--only 'RK ' SCRK] [--no-adversarial]
       [--cpu-time] [--quick] [--out FILE]
Writes the section "Accuracy contract vs the previous fast path" of benchmarks/results/numerics.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))  # this checkout's rkcore

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402
from rkcore.kernels import exact as K
from rkcore.kernels import numerics as KN  # the old fast path below uses its private helpers
from rkcore.maps.circulant import SignedCirculantRandomKernel
from rkcore.data.datasets import normalize
from rkcore.maps.random_kernel import RandomKernel

assert K.__file__.startswith(sys.path[0]), K.__file__


# ============================================================================ the previous fast path (verbatim)
def old_power_sums(X, Y, degree, y_is_sign=False):
    P = [None]
    for t in range(1, degree + 1):
        if y_is_sign and t % 2 == 0:
            P.append(np.asarray(KN.elementwise_power(X, t).sum(axis=1), dtype=np.float64).reshape(-1, 1))
        elif y_is_sign:
            P.append(KN.gram_dense(KN.elementwise_power(X, t), Y))
        else:
            P.append(KN.gram_dense(KN.elementwise_power(X, t), KN.elementwise_power(Y, t)))
    return P


def old_elementary_from_power_sums(P, degree):
    shape = np.broadcast_shapes(*(np.shape(p) for p in P[1:degree + 1]))
    e = [1.0]
    scratch = np.empty(shape) if degree >= 2 else None
    for k in range(1, degree + 1):
        acc = np.empty(shape)
        np.multiply(P[1], e[k - 1], out=acc)
        for t in range(2, k + 1):
            term = P[t] if k == t else np.multiply(P[t], e[k - t], out=scratch)
            if t % 2 == 0:
                acc -= term
            else:
                acc += term
        if k > 1:
            acc *= 1.0 / k
        e.append(acc)
    return e


def old_elementary_top(P, degree):
    if degree == 1:
        return P[1]
    if degree not in (2, 3):
        return old_elementary_from_power_sums(P, degree)[degree]
    shape = np.broadcast_shapes(*(np.shape(p) for p in P[1:degree + 1]))
    out = np.multiply(P[1], P[1], out=np.empty(shape))
    if degree == 2:
        out -= P[2]
        out *= 0.5
        return out
    P[2] *= 3.0
    out -= P[2]
    out *= P[1]
    P[3] *= 2.0
    out += P[3]
    out *= 1.0 / 6.0
    return out


def old_anova_kernel(X, Y=None, degree=2):
    X, Y = K._pair(X, Y)
    e_m = old_elementary_top(old_power_sums(X, Y, degree), degree)
    return np.broadcast_to(np.asarray(e_m, dtype=np.float64), (X.shape[0], Y.shape[0])).copy()


def old_up_to_kernel(X, Y=None, degree=2):
    X, Y = K._pair(X, Y)
    e = old_elementary_from_power_sums(old_power_sums(X, Y, degree), degree)
    return np.broadcast_to(np.asarray(sum(e), dtype=np.float64), (X.shape[0], Y.shape[0])).copy()


def old_rk_transform(rk: RandomKernel, X):
    """The old RandomKernel.transform for the ANOVA family (its two Newton paths)."""
    W = rk.random_weights_
    n, D = X.shape[0], W.shape[0]
    signs = rk.distribution == "rademacher"
    m = rk.family_.degree
    scale = 1.0 / np.sqrt(D)
    if m == 2:
        c = np.sqrt(scale / 2.0)
        Wc = W.T * c
        W2c = None if signs else (W * W).T * (c * c)

        def block(Xb):
            Z = np.asarray(Xb @ Wc)
            np.square(Z, out=Z)
            X2 = Xb.multiply(Xb) if sp.issparse(Xb) else Xb * Xb
            if signs:
                Z -= (np.asarray(X2.sum(axis=1)).reshape(-1) * (c * c))[:, None]
            else:
                Z -= np.asarray(X2 @ W2c)
            return Z
        temporaries = 2
    else:
        powers = None if signs else [None] + [W**t for t in range(1, m + 1)]
        x_scale = scale ** (1.0 / m)

        def block(Xb):
            Xb = Xb * x_scale
            if signs:
                P = old_power_sums(Xb, W, m, y_is_sign=True)
            else:
                P = [None] + [KN.gram_dense(Xb**t, powers[t]) for t in range(1, m + 1)]
            return old_elementary_top(P, m)
        temporaries = m + 3
    from rkcore.maps.random_kernel import MIN_GEMM_BLOCK_ROWS, TRANSFORM_BLOCK_BYTES
    out = np.empty((n, D))
    bytes_per_row = min(8 * D * temporaries, max(1, TRANSFORM_BLOCK_BYTES // MIN_GEMM_BLOCK_ROWS))
    for rows in K.row_blocks(n, bytes_per_row, TRANSFORM_BLOCK_BYTES):
        out[rows] = block(X[rows])
    return out


def old_scrk_transform(scrk: SignedCirculantRandomKernel, X):
    """The old SignedCirculantRandomKernel.transform (transform + _transform_block)."""
    from rkcore.maps.circulant import TRANSFORM_BLOCK_BYTES
    n, d = X.shape
    D, T, m = scrk.n_components, scrk.n_blocks_, scrk.degree
    out = np.empty((n, D))
    odd_orders = (m + 1) // 2
    bytes_per_row = 8 * (odd_orders * (2 * d + 3 * T * d) + (m + 1) * D)
    for rows in K.row_blocks(n, bytes_per_row, TRANSFORM_BLOCK_BYTES):
        Xb = X[rows]
        Xb = Xb * D ** (-0.5 / m)
        o = out[rows]
        b = Xb.shape[0]
        if m == 2:
            P1 = scrk._circulant_product(Xb, scrk.weights_spectrum_ * np.sqrt(0.5))
            np.square(P1[:, :D], out=o)
            o -= 0.5 * np.einsum("ij,ij->i", Xb, Xb)[:, None]
            continue
        odd = range(1, m + 1, 2)
        powers = np.concatenate([Xb if t == 1 else Xb**t for t in odd])
        P_odd = scrk._circulant_product(powers, scrk.weights_spectrum_).reshape(len(odd), b, -1)[:, :, :D]
        if m % 2 == 1:
            P_odd *= scrk.random_signs_.reshape(-1)[:D]
        P = [None]
        for t in range(1, m + 1):
            P.append(P_odd[t // 2] if t % 2 else (Xb**t).sum(axis=1, keepdims=True))
        np.copyto(o, old_elementary_top(P, m))
    return out


# ============================================================================ data
def movielens_shaped(n: int, seed: int = 0) -> np.ndarray:
    """d = 78 like the paper's MovieLens rows: gender (2), age (7), occupation (21), zip
    region (10), item year bucket (19) one-hots and 19 genre flags; L1-normalized."""
    rng = np.random.default_rng(seed)
    cols = []
    for size in (2, 7, 21, 10, 19):
        onehot = np.zeros((n, size))
        onehot[np.arange(n), rng.integers(0, size, n)] = 1.0
        cols.append(onehot)
    cols.append((rng.random((n, 19)) < 0.1).astype(float))
    return normalize(np.hstack(cols), "l1")


def timestamp_csv(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return normalize(np.column_stack([1.6e9 + rng.integers(0, 10**7, n), rng.random((n, 5))]), "l1")


def dominant_entry(n: int, d: int = 78, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, 0] *= 1e6
    return X


# ============================================================================ measurement
#: What _seconds measures: wall-clock time (default) or, with --cpu-time, the process's CPU time
#: (with BLAS held to one thread for old and new alike: the work done, which machine load
#: hardly changes, where wall-clock ratios under load measure BLAS threads waiting for a core).
CLOCK = time.perf_counter


def _seconds(fn) -> float:
    t0 = CLOCK()
    fn()
    return CLOCK() - t0


def exact_value(x, y, m):
    z = [Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, y)]
    e = [Fraction(1)] + [Fraction(0)] * m
    ea = list(e)
    for v in z:
        for k in range(m, 0, -1):
            e[k] += e[k - 1] * v
            ea[k] += ea[k - 1] * abs(v)
    return e[m], ea[m]


def worst_error(values, X, Y, m, rng, n_samples=40, scale=1.0):
    """Worst |value - exact| / contract scale over sampled entries (values = K(X, Y) * scale)."""
    worst = 0.0
    for _ in range(n_samples):
        i, j = rng.integers(0, X.shape[0]), rng.integers(0, Y.shape[0])
        exact, s = exact_value(X[i], Y[j], m)
        v = values[i, j] / scale
        if not np.isfinite(v):
            return float("inf")
        if s:
            worst = max(worst, float(abs(Fraction(float(v)) - exact) / s))
    return worst


def run(n: int, repeats: int, only: list | None = None, adversarial_cases: bool = True):
    rng = np.random.default_rng(0)
    ml, gauss = movielens_shaped(n), rng.standard_normal((n, 78))
    D = 16 * 78
    cases = []  # (label, old_fn, new_fn, accuracy_fn or None)

    for data_label, X in (("MovieLens-shaped", ml), ("N(0,1)", gauss)):
        for m in (2, 3):
            cases.append((f"exact ANOVA-{m}, {data_label}, n={n}", lambda X=X, m=m: old_anova_kernel(X, degree=m),
                          lambda X=X, m=m: K.anova_kernel(X, degree=m), None))
        cases.append((f"exact up-to-3, {data_label}, n={n}", lambda X=X: old_up_to_kernel(X, degree=3),
                      lambda X=X: K.up_to_kernel(X, degree=3), None))
        # K(X, Y) with Y != X: the new code computes K(X, X) as an upper triangle, so the
        # general case is measured too
        Yr = X[::-1].copy()
        for m in (2, 3):
            cases.append((f"exact ANOVA-{m} K(X, Y), {data_label}, n={n}",
                          lambda X=X, Y=Yr, m=m: old_anova_kernel(X, Y, degree=m),
                          lambda X=X, Y=Yr, m=m: K.anova_kernel(X, Y, degree=m), None))
        for m in (2, 3):
            for dist in ("rademacher", "gaussian"):
                rk = RandomKernel(D, degree=m, distribution=dist, random_state=0).fit(X)
                cases.append((f"RK ANOVA-{m} {dist}, {data_label}, D={D}", lambda rk=rk, X=X: old_rk_transform(rk, X),
                              lambda rk=rk, X=X: rk.transform(X), None))
            scrk = SignedCirculantRandomKernel(D, degree=m, random_state=0).fit(X)
            cases.append((f"SCRK ANOVA-{m}, {data_label}, D={D}", lambda s=scrk, X=X: old_scrk_transform(s, X),
                          lambda s=scrk, X=X: s.transform(X), None))
    big = rng.standard_normal((n // 4, 512))
    for m in (2, 3):
        scrk = SignedCirculantRandomKernel(8192, degree=m, random_state=0).fit(big)
        cases.append((f"SCRK ANOVA-{m}, N(0,1) d=512, D=8192, n={n // 4}", lambda s=scrk: old_scrk_transform(s, big),
                      lambda s=scrk: s.transform(big), None))
        rk = RandomKernel(8192, degree=m, random_state=0).fit(big)
        cases.append((f"RK ANOVA-{m} rademacher, N(0,1) d=512, D=8192, n={n // 4}", lambda r=rk: old_rk_transform(r, big),
                      lambda r=rk: r.transform(big), None))

    adversarial = []
    ts, dom = timestamp_csv(n), dominant_entry(n // 4)
    for label, X in (("timestamp CSV (d=6)", ts), ("one entry x1e6, N(0,1) d=78", dom)):
        for m in (2, 3):
            adversarial.append((f"exact ANOVA-{m}, {label}", lambda X=X, m=m: old_anova_kernel(X, degree=m),
                                lambda X=X, m=m: K.anova_kernel(X, degree=m), (X, X, m, 1.0)))
            rk = RandomKernel(D, degree=m, random_state=0).fit(X)
            adversarial.append((f"RK ANOVA-{m} rademacher, {label}", lambda rk=rk, X=X: old_rk_transform(rk, X),
                                lambda rk=rk, X=X: rk.transform(X), (X, rk.random_weights_, m, 1 / np.sqrt(D))))

    all_cases = cases + (adversarial if adversarial_cases else [])
    if only:
        all_cases = [c for c in all_cases if any(key in c[0] for key in only)]
    for label, old, new, _ in all_cases:  # warm-up (and the time of one pair, for progress)
        t0 = time.perf_counter()
        old(), new()
        print(f"warm-up {label}: {time.perf_counter() - t0:.2f} s", file=sys.stderr, flush=True)
    times = {c[0]: ([], []) for c in all_cases}
    load_before = os.getloadavg()
    started = time.perf_counter()
    for r in range(repeats):
        for label, old, new, _ in all_cases:
            pair = [(0, old), (1, new)] if r % 2 == 0 else [(1, new), (0, old)]
            for idx, fn in pair:
                times[label][idx].append(_seconds(fn))
        print(f"repeat {r + 1}/{repeats} done at {time.perf_counter() - started:.0f} s, "
              f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    rows = []
    for label, old, new, acc in all_cases:
        t_old, t_new = map(np.asarray, times[label])
        row = {"case": label, "old": np.median(t_old), "old_spread": (t_old.min(), t_old.max()),
               "new": np.median(t_new), "new_spread": (t_new.min(), t_new.max()),
               "ratio": np.median(t_new) / np.median(t_old), "ratio_per_repeat": float(np.median(t_new / t_old)),
               "adversarial": acc is not None}
        if acc is not None:
            X, Y, m, scale = acc
            with np.errstate(all="ignore"):
                row["err_old"] = worst_error(old(), X, Y, m, np.random.default_rng(1), scale=scale)
                row["err_new"] = worst_error(new(), X, Y, m, np.random.default_rng(1), scale=scale)
        rows.append(row)
    return rows, load_before, load_after


TITLE = "Accuracy contract vs the previous fast path (`python benchmarks/numerics/bench_numerics.py`)"


def to_markdown(rows, load_before, load_after) -> str:
    """The section's body (its provenance line is written by benchmarks.results_io)."""
    lines = [
        f"Load average (1, 5, 15 min) before {load_before[0]:.2f} / {load_before[1]:.2f} / {load_before[2]:.2f}, "
        f"after {load_after[0]:.2f} / {load_after[1]:.2f} / {load_after[2]:.2f} (shared machine).",
        "",
        "Old = verbatim copy of the previous fast path inside the script; new = rkcore now (check + fallback).",
        "Interleaved old/new within each repeat; seconds are medians, [min, max] over repeats;",
        "ratio = median(new) / median(old), per-repeat = median of new/old of each repeat,",
        "ratio of minima = min(new) / min(old) (the least disturbed repeat of each; robust under heavy load).",
        "",
        "### Well-conditioned data (target: new within 1.15x of old)",
        "",
        "| case | old s [min, max] | new s [min, max] | ratio | per-repeat | ratio of minima |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r["adversarial"]:
            continue
        lines.append(f"| {r['case']} | {r['old']:.4f} [{r['old_spread'][0]:.4f}, {r['old_spread'][1]:.4f}] | "
                     f"{r['new']:.4f} [{r['new_spread'][0]:.4f}, {r['new_spread'][1]:.4f}] | {r['ratio']:.2f} | "
                     f"{r['ratio_per_repeat']:.2f} | {r['new_spread'][0] / r['old_spread'][0]:.2f} |")
    lines += [
        "",
        "### Adversarial data (the fallback runs; old values are wrong)",
        "",
        "Worst error / contract scale (sum_V |prod z_j|) over 40 sampled entries, against exact rationals",
        "(contract: <= 1e-12).",
        "",
        "| case | old s | new s | ratio | worst err old | worst err new |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if not r["adversarial"]:
            continue
        lines.append(f"| {r['case']} | {r['old']:.4f} [{r['old_spread'][0]:.4f}, {r['old_spread'][1]:.4f}] | "
                     f"{r['new']:.4f} [{r['new_spread'][0]:.4f}, {r['new_spread'][1]:.4f}] | {r['ratio']:.2f} | "
                     f"{r['err_old']:.3g} | {r['err_new']:.3g} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--only", nargs="+", default=None, metavar="TEXT",
                        help="run only the cases whose label contains one of these strings (e.g. 'RK ' 'SCRK' 'exact')")
    parser.add_argument("--no-adversarial", action="store_true", help="skip the adversarial cases")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time CPU seconds with one BLAS thread (old and new alike) instead of wall-clock")
    add_output_arguments(parser, "numerics.md")
    args = parser.parse_args(argv)
    if args.quick:  # the well-conditioned MovieLens-shaped and the timestamp cells (exact rationals are slow)
        args.n, args.repeats, args.only = 40, 1, args.only or ["MovieLens-shaped", "timestamp"]
    run_info = Run.start(args, None if argv is None else [__file__, *argv])
    global CLOCK
    if args.cpu_time:
        from threadpoolctl import threadpool_limits

        CLOCK = time.process_time
        with threadpool_limits(1, user_api="blas"):
            rows, lb, la = run(args.n, args.repeats, args.only, not args.no_adversarial)
    else:
        rows, lb, la = run(args.n, args.repeats, args.only, not args.no_adversarial)
    run_info.write(TITLE, to_markdown(rows, lb, la),
                   preamble="# Numerics (issue 11): accuracy contract vs the previous fast path")
    return 0


if __name__ == "__main__":
    sys.exit(main())
