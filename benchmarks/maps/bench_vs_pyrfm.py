"""rkcore against pyrfm (the paper author's Cython library) and a GEMM/SpMM floor, in one process.

One command from a clean clone:  python benchmarks/maps/bench_vs_pyrfm.py
(it runs benchmarks/maps/setup_pyrfm.sh first when pyrfm is not importable; pass PYRFM_SRC=... to
build from a local checkout instead of GitHub; see that script for what is patched).

Cells (default quick grid; flags widen it):
  * MovieLens shape, synthetic: n = 10,000, d = 78, 7 non-zeros per row at random columns,
    values uniform and L1-normalized per row; dense (the same matrix as an ndarray) and CSR;
    D = 1,248; ANOVA-2, ANOVA-3, all-subsets x Rademacher, Gaussian; SCRK ANOVA-2/3.
  * dense N(0, 1) at d = 1,000 and 4,096 (--n, --D lists; up to n = 100,000, D = 16,384):
    ANOVA-2/3 x Rademacher/Gaussian.
  * exact Gram matrices (--gram-n): all-subsets and ANOVA-2/3 on the MovieLens rows, dense and
    CSR, against pyrfm.kernels (Cython all_subsets, NumPy anova), with tracemalloc peaks.
Every cell times, in each repeat and in this order, rkcore, rkcore at --before (the code before
issue 16, extracted from git into a temporary package), pyrfm, and the floor (one GEMM, or one
SpMM for CSR input, of the map's shape: (n x d) @ (d x D)). Ratios are per-repeat ratios (the
contenders ran seconds apart, under the same load) summarized by their median and min-max.
rkcore's output is checked against pyrfm's on the same weights before timing.
"""
from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[2]  # benchmarks/<subject>/this file
sys.path.insert(0, str(ROOT))
from benchmarks.results_io import Run, add_output_arguments  # noqa: E402
PYRFM_DIR = Path(os.environ.get("PYRFM_DIR", Path.home() / ".cache" / "rkcore-bench" / "pyrfm"))
BEFORE_DEFAULT = "391fe3b"  # main before the map-speed branch (ed00280: before issue 16)


# ---------------------------------------------------------------------- set-up
def import_pyrfm():
    sys.path.insert(0, str(PYRFM_DIR))
    try:
        return importlib.import_module("pyrfm")
    except ImportError:
        print(f"pyrfm not importable from {PYRFM_DIR}: running benchmarks/maps/setup_pyrfm.sh", flush=True)
        subprocess.run(["bash", str(ROOT / "benchmarks" / "maps" / "setup_pyrfm.sh")], check=True,
                       env={**os.environ, "PYRFM_DIR": str(PYRFM_DIR), "PYTHON": sys.executable})
        importlib.invalidate_caches()
        return importlib.import_module("pyrfm")


def import_before(rev: str, tmp: Path):
    """rkcore as of git revision ``rev``, imported as the package ``rkcore_before``."""
    if rev.lower() == "none":
        return None
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "rkcore"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "x", "-C", str(tmp)], input=archive, check=True)
    shutil.move(str(tmp / "rkcore"), str(tmp / "rkcore_before"))
    sys.path.insert(0, str(tmp))
    return importlib.import_module("rkcore_before.maps"), importlib.import_module("rkcore_before.kernels")


def movielens_shaped(n: int, d: int = 78, nnz: int = 7, seed: int = 0) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    cols = np.argsort(rng.random((n, d)), axis=1)[:, :nnz]
    vals = rng.uniform(0.05, 1.0, (n, nnz))
    vals /= vals.sum(axis=1, keepdims=True)
    X = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, d))
    X.sort_indices()
    return X


# ---------------------------------------------------------------------- timing
def seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleave(contenders: dict, repeats: int) -> dict:
    """Each contender once per repeat, in turn (after one warm-up round): lists of seconds.
    Odd repeats run the contenders in reverse order, so that no one always runs first (a
    position bias of up to ~1.5x was seen at load 7-15 in cells whose code had not changed)."""
    for fn in contenders.values():
        fn()
    times = {k: [] for k in contenders}
    for r in range(repeats):
        order = list(contenders.items())
        for k, fn in (order if r % 2 == 0 else order[::-1]):
            times[k].append(seconds(fn))
    return times


def summary(values) -> str:
    v = np.asarray(values)
    return f"{np.median(v):.2f} ({v.min():.2f}-{v.max():.2f})"


def ms(values) -> str:
    v = np.asarray(values) * 1e3
    return f"{np.median(v):.0f} ({v.min():.0f}-{v.max():.0f})"


def ratio(times, a, b) -> str:
    if a not in times or b not in times:
        return "-"
    return summary(np.asarray(times[a]) / np.asarray(times[b]))


# ---------------------------------------------------------------------- cells
def map_cells(args, pyrfm, before):
    from rkcore.maps.circulant import SignedCirculantRandomKernel
    from rkcore.maps.random_kernel import RandomKernel

    rows = []
    ml = movielens_shaped(args.movielens_n)
    datasets = [("MovieLens dense", ml.toarray(), 1248), ("MovieLens CSR", ml, 1248)]
    rng = np.random.default_rng(1)
    for d in args.d:
        for n in args.n:
            X = rng.standard_normal((n, d))
            for D in args.D + [c[2] for c in args.cell]:
                datasets.append((f"N(0,1) n={n:,} d={d:,}", X, D))
    for n, d, D in args.cell:
        datasets.append((f"N(0,1) n={n:,} d={d:,}", rng.standard_normal((n, d)), D))
    for label, X, D in datasets:
        movielens = label.startswith("MovieLens")
        kernels = [(f"ANOVA-{m}", "anova", m) for m in ((2, 3) if movielens else args.n01_degrees)]
        if movielens:
            kernels.append(("all-subsets", "all_subsets", 2))
        W_ref = np.random.default_rng(2).standard_normal((D, X.shape[1]))
        W_ref_T = np.ascontiguousarray(W_ref.T)
        floor = (lambda X=X, Wt=W_ref_T: X @ Wt)
        for name, kernel, degree in kernels:
            for dist in ("rademacher", "gaussian"):
                if not selected(args, label, f"RK {name}", dist):
                    continue
                rk = RandomKernel(D, kernel=kernel, degree=degree, distribution=dist, random_state=0).fit(X)
                W = rk.random_weights_
                py = pyrfm.RandomKernel(D, kernel=kernel, degree=degree, distribution=dist, random_state=0).fit(X)
                py.random_weights_ = np.ascontiguousarray(W.T)  # the same weights: outputs must agree
                head = X[:200]
                np.testing.assert_allclose(rk.transform(head), py.transform(head), rtol=1e-8, atol=1e-12)
                contenders = {"rkcore": lambda: rk.transform(X)}
                if before is not None:
                    old = before[0].RandomKernel(D, kernel=kernel, degree=degree, distribution=dist, random_state=0).fit(X)
                    np.testing.assert_allclose(old.transform(head), rk.transform(head), rtol=1e-9, atol=1e-13)
                    contenders["before"] = lambda: old.transform(X)
                contenders["pyrfm"] = lambda: py.transform(X)
                contenders["floor"] = floor
                rows.append(run_cell(label, X.shape, D, f"RK {name}", dist, contenders, args.repeats))
        if movielens or args.scrk_everywhere:
            for degree in (2, 3):
                if not selected(args, label, f"SCRK ANOVA-{degree}", "rademacher"):
                    continue
                sc = SignedCirculantRandomKernel(D, degree=degree, random_state=0).fit(X)
                pys = pyrfm.SignedCirculantRandomKernel(D, degree=degree, random_state=0).fit(X)
                contenders = {"rkcore": lambda: sc.transform(X)}
                if before is not None:
                    from_before = importlib.import_module("rkcore_before.circulant")
                    old = from_before.SignedCirculantRandomKernel(D, degree=degree, random_state=0).fit(X)
                    contenders["before"] = lambda: old.transform(X)
                contenders["pyrfm"] = lambda: pys.transform(X)
                contenders["floor"] = floor
                rows.append(run_cell(label, X.shape, D, f"SCRK ANOVA-{degree}", "rademacher", contenders, args.repeats))
    return rows


def selected(args, label: str, what: str, dist: str) -> bool:
    """Whether a map cell passes --select: every comma-separated part of one of its
    patterns occurs in "<data> | <map> | <weights>" (no --select: every cell)."""
    text = f"{label} | {what} | {dist}"
    return not args.select or any(all(part in text for part in pat.split(",")) for pat in args.select)


def run_cell(label, shape, D, what, dist, contenders, repeats):
    load0 = os.getloadavg()[0]
    times = interleave(contenders, repeats)
    load1 = os.getloadavg()[0]
    row = dict(data=label, n=shape[0], d=shape[1], D=D, what=what, dist=dist, times=times,
               load=(min(load0, load1), max(load0, load1)))
    print(format_row(row), flush=True)
    return row


def gram_cells(args, pyrfm, before):
    from rkcore.kernels.exact import all_subsets_kernel, anova_kernel

    rows = []
    for n in args.gram_n:
        ml = movielens_shaped(n, seed=3)
        for label, X in (("MovieLens dense", ml.toarray()), ("MovieLens CSR", ml)):
            floor = (lambda X=X: X @ X.T)
            cases = [("all-subsets", lambda X=X: all_subsets_kernel(X),
                      (lambda X=X: before[1].all_subsets_kernel(X)) if before else None,
                      lambda X=X: pyrfm.kernels.all_subsets(X, X))]
            for m in (2, 3):
                cases.append((f"ANOVA-{m}", lambda X=X, m=m: anova_kernel(X, degree=m),
                              (lambda X=X, m=m: before[1].anova_kernel(X, degree=m)) if before else None,
                              lambda X=X, m=m: pyrfm.kernels.anova(X, X, m)))
            for name, ours, old, theirs in cases:
                np.testing.assert_allclose(ours(), theirs(), rtol=1e-9, atol=1e-12)
                contenders = {"rkcore": ours}
                if old is not None:
                    contenders["before"] = old
                contenders["pyrfm"] = theirs
                contenders["floor"] = floor
                row = run_cell(label, X.shape, n, f"exact Gram {name}", "-", contenders, args.repeats)
                row["peak"] = {k: peak_bytes(fn) for k, fn in contenders.items() if k != "floor"}
                row["out_bytes"] = 8 * n * n
                print("   peak MB:", {k: round(v / 2**20) for k, v in row["peak"].items()}, flush=True)
                rows.append(row)
    return rows


def peak_bytes(fn) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


# ---------------------------------------------------------------------- report
def format_row(r) -> str:
    t = r["times"]
    cells = [r["data"], f"{r['n']:,} x {r['d']:,}", f"{r['D']:,}", r["what"], r["dist"], ms(t["rkcore"]),
             ms(t["before"]) if "before" in t else "-", ms(t["pyrfm"]), ms(t["floor"]),
             ratio(t, "rkcore", "pyrfm"), ratio(t, "before", "pyrfm"), ratio(t, "rkcore", "floor"),
             ratio(t, "before", "floor"), f"{r['load'][0]:.1f}-{r['load'][1]:.1f}"]
    if "peak" in r:
        p = r["peak"]
        cells.append(" / ".join(f"{k} {p[k] / 2**20:.0f}" for k in p) + f" (output {r['out_bytes'] / 2**20:.0f})")
    return "| " + " | ".join(cells) + " |"


HEADER = ("| data | n x d | D (Gram: m) | map | weights | rkcore ms | before ms | pyrfm ms | floor ms "
          "| rkcore / pyrfm | before / pyrfm | rkcore / floor | before / floor | load (1 min) |")


def summary_lines(map_rows, args, loads) -> list[str]:
    """The compact table (the one the README shows from the flagged section of vs_pyrfm.md)."""
    if not map_rows:
        return []
    lines = [
        "### RK and SCRK maps against pyrfm: ratios",
        "",
        f"Medians (min-max) of per-repeat ratios over {args.repeats} interleaved repeats on the shared 2-core "
        f"machine at 1-minute load average {min(loads):.1f}-{max(loads):.1f}; below 1 means faster. "
        "*floor*: one (n x d) @ (d x D) GEMM (dense) or SpMM (CSR) of the same shape. *before*: "
        f"rkcore at `{args.before}`.",
        "",
        "| data | D | map | weights | rkcore / pyrfm | before / pyrfm | rkcore / floor | load |",
        "|---|---:|---|---|---|---|---|---|",
    ]
    for r in map_rows:
        t = r["times"]
        lines.append(f"| {r['data']} | {r['D']:,} | {r['what']} | {r['dist']} | {ratio(t, 'rkcore', 'pyrfm')} "
                     f"| {ratio(t, 'before', 'pyrfm')} | {ratio(t, 'rkcore', 'floor')} "
                     f"| {r['load'][0]:.1f}-{r['load'][1]:.1f} |")
    return lines + [""]


TITLE = "rkcore against pyrfm and the floor (`python benchmarks/maps/bench_vs_pyrfm.py`)"


def report_body(args, map_rows, gram_rows, loads) -> str:
    """The section's body: what ran against what, the ratio table, the full tables (### subsections)."""
    lines = [
        f"float64, numpy {np.__version__}, 1-minute load average {min(loads):.1f}-{max(loads):.1f} over the cells "
        "(per cell in the last column): absolute times are noisy; the ratios are per-repeat ratios of runs made "
        f"seconds apart and are the signal. Each entry: median (min-max) over {args.repeats} interleaved repeats "
        "after a warm-up.",
        "",
        "- *rkcore*: this checkout; *before*: rkcore at `" + args.before + "` (imported from git into the same "
        "process); *pyrfm*: "
        "github.com/neonnnnn/pyrfm at e88fe8c, built by benchmarks/maps/setup_pyrfm.sh (no source change; "
        "Cython 3 directives `cpow=True`, `legacy_implicit_noexcept=True`; setuptools instead of the "
        "removed numpy.distutils). Its RK map is NumPy for ANOVA and Cython for all-subsets; the "
        "exact ANOVA Gram is `pyrfm.kernels.anova` (NumPy), the all-subsets Gram its Cython loop.",
        "- *floor*: one (n x d) @ (d x D) GEMM with dense input, one SpMM with CSR input "
        "(for Gram cells: X @ X^T).",
        "- Ratios below 1 in *rkcore / pyrfm* mean rkcore is faster.",
        "",
        *summary_lines(map_rows, args, loads),
    ]
    if map_rows:
        lines += ["### Random feature maps (transform only; same weights in rkcore and pyrfm, outputs checked equal)",
                  "", HEADER, "|" + "---|" * 14, *[format_row(r) for r in map_rows]]
    if gram_rows:
        lines += ["", "### Exact Gram matrices K(X, X) (peak: tracemalloc MB of NumPy allocations)", "",
                  HEADER + " peak MB |", "|" + "---|" * 15, *[format_row(r) for r in gram_rows]]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--movielens-n", type=int, default=10_000)
    p.add_argument("--n", type=int, nargs="*", default=[2_000], help="rows of the N(0,1) cells (up to 100000)")
    p.add_argument("--d", type=int, nargs="*", default=[1_000, 4_096], help="features of the N(0,1) cells")
    p.add_argument("--D", type=int, nargs="*", default=[2_048], help="D of the N(0,1) cells (up to 16384)")
    p.add_argument("--cell", type=lambda v: tuple(int(x) for x in v.split(",")), nargs="*", default=[],
                   metavar="n,d,D", help="extra N(0,1) cells, each n,d,D (no cross product)")
    p.add_argument("--n01-degrees", type=int, nargs="*", default=[2, 3],
                   help="ANOVA orders on the N(0,1) cells (at d >= ~300 the contract sends every "
                        "ANOVA-3 feature to the stable recursion: minutes per cell)")
    p.add_argument("--gram-n", type=int, nargs="*", default=[2_000], help="n of the exact Gram cells (e.g. 5000)")
    p.add_argument("--scrk-everywhere", action="store_true", help="SCRK cells on the N(0,1) data too")
    p.add_argument("--before", default=BEFORE_DEFAULT, help="git revision for the 'before' column, or none")
    p.add_argument("--only", choices=["maps", "gram"], default=None)
    p.add_argument("--select", nargs="*", default=[], metavar="PATTERN",
                   help="map cells to run: each PATTERN is comma-separated substrings that must all occur in "
                        "'<data> | <map> | <weights>', e.g. 'MovieLens CSR,all-subsets' 'd=1,000,RK ANOVA-2'")
    add_output_arguments(p, "vs_pyrfm.md")
    args = p.parse_args(argv)
    if args.quick:
        args.repeats, args.movielens_n, args.n, args.d, args.D, args.cell = 1, 200, [100], [32], [64], []
        args.gram_n, args.n01_degrees, args.before = [100], [2], "none"
    run = Run.start(args, None if argv is None else [__file__, *argv])
    for n in args.n + args.gram_n + [args.movielens_n] + [c[0] for c in args.cell]:
        if not 1 <= n <= 100_000:
            p.error(f"n={n} is outside 1..100,000")
    for D in args.D + [c[2] for c in args.cell]:
        if not 1 <= D <= 16_384:
            p.error(f"D={D} is outside 1..16,384")

    loads = [os.getloadavg()[0]]
    pyrfm = import_pyrfm()
    import pyrfm.kernels  # noqa: F401
    with tempfile.TemporaryDirectory() as tmp:
        before = import_before(args.before, Path(tmp))
        map_rows = map_cells(args, pyrfm, before) if args.only in (None, "maps") else []
        gram_rows = gram_cells(args, pyrfm, before) if args.only in (None, "gram") else []
    loads += [r["load"][i] for r in map_rows + gram_rows for i in (0, 1)]
    run.write(TITLE, report_body(args, map_rows, gram_rows, loads),
              preamble="# rkcore against pyrfm and the GEMM/SpMM floor")


if __name__ == "__main__":
    main()
