"""Issue 26 items 2-3: time and peak memory of reading a large upload / MovieLens file.

Each case runs in a fresh subprocess (address space capped, time limited) that builds the file's
bytes in memory (as the app holds an upload), then calls the loader. Reported: wall time of the
load call, the child's peak RSS (ru_maxrss, which includes the ~200 MB of the file's bytes and the
imported libraries) and the peak increase over the RSS just before the call (what the loader
itself allocated), and the first line of the outcome.

    python benchmarks/robustness/repro_upload_bounds.py [--timeout 120] [--cap-gb 4] [--repeats 3] [--quick] [--out F]
        [case ...]

Writes the section "Large uploads and server files" of benchmarks/results/upload_bounds.md.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "Large uploads and server files (`python benchmarks/robustness/repro_upload_bounds.py`)"

MB = 2**20
PRELUDE = """
import io, json, os, resource, sys, time
def rss_mb():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) / 1024
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
import numpy, pandas, scipy.sparse, sklearn.datasets  # imported before the clock starts
import rkcore.data.datasets as ds
"""
CASES = {
    "libsvm_198MB": "raw = b'1 1:1\\n' * ({mb} * 2**20 // 6); name = 'big.svm'; load = lambda b: ds.load_libsvm(b)",
    "libsvm_30MB": "raw = b'1 1:1\\n' * (30 * 2**20 // 6); name = 'mid.svm'; load = lambda b: ds.load_libsvm(b)",
    "csv_198MB": ("row = b'0.5,1.25,3,4.75,5,6.5,7,8.125\\n'; raw = b'a,b,c,d,e,f,g,h\\n' + row * ({mb} * 2**20 // len(row)); "
                  "name = 'big.csv'; load = lambda b: ds.load_csv(b)"),
    "csv_wide_60MB": ("row = (','.join(['1.5'] * 2000) + '\\n').encode(); "
                      "raw = (','.join(f'c{{j}}' for j in range(2000)) + '\\n').encode() + row * (60 * 2**20 // len(row)); "
                      "name = 'wide.csv'; load = lambda b: ds.load_csv(b)"),
    "header_20MB": ("raw = b'a' * (20 * 2**20) + b',b\\n1,2\\n'; name = 'header.csv'; "
                    "load = lambda b: ds.csv_columns(b)"),
    "movielens_1GB": ("import tempfile, pathlib; d = pathlib.Path(tempfile.mkdtemp()); "
                      "f = open(d / 'u.data', 'wb'); [f.write(b'1\\t1\\t5\\t881250949\\n' * (2**26 // 20)) for _ in range(16)]; f.close(); "
                      "(d / 'u.user').write_text('1|24|M|technician|85711\\n'); "
                      "(d / 'u.item').write_text('1|Toy Story (1995)|01-Jan-1995||http://x' + '|0' * 19 + '\\n'); "
                      "raw = None; name = str(d); load = lambda b: ds.load_movielens(name)"),
}
BODY = """
{setup}
buffer = None
if raw is not None:
    buffer = io.BytesIO(raw); buffer.name = name
before = rss_mb(); peak_before = peak_mb()
t0 = time.perf_counter()
try:
    out = load(buffer)
    shape = out.X.shape if hasattr(out, "X") else len(out)
    outcome = f"loaded {{type(out).__name__}} {{shape}}"
except Exception as exc:
    outcome = f"{{type(exc).__name__}}: {{str(exc)[:300]}}"
elapsed = time.perf_counter() - t0
print(json.dumps({{"seconds": elapsed, "peak_rss_mb": peak_mb(), "rss_before_mb": before,
                  "increase_mb": max(peak_mb() - max(before, 0), 0.0) if peak_mb() > peak_before else 0.0,
                  "outcome": outcome}}))
"""


def run_case(case: str, mb: int, timeout: float, cap_gb: float) -> dict:
    setup = CASES[case].format(mb=mb)
    script = textwrap.dedent(PRELUDE) + f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({int(cap_gb * 2**30)}, {int(cap_gb * 2**30)}))\n" \
        + BODY.format(setup=setup)
    try:
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": timeout, "outcome": f"timeout after {timeout:.0f} s"}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"outcome": "crashed: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(lines[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=None)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--cap-gb", type=float, default=4)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--mb", type=int, default=198)
    add_output_arguments(parser, "upload_bounds.md")
    args = parser.parse_args(argv)
    cases = args.cases or (["libsvm_30MB", "header_20MB"] if args.quick else list(CASES))
    run = Run.start(args, None if argv is None else [__file__, *argv])
    lines = [f"Each case in a fresh subprocess holding the file's bytes in memory (as the app holds an upload), "
             f"{args.repeats} round(s); time of the loader call, median (min-max); peak RSS of the child (the file's "
             "bytes and the imported libraries included); the loader's growth over the RSS just before the call.", "",
             "| case | time s | peak RSS MB | loader's growth MB | outcome |", "|---|---|---:|---:|---|"]
    for case in cases:
        runs = [run_case(case, args.mb, args.timeout, args.cap_gb) for _ in range(args.repeats)]
        secs = [r.get("seconds", float("nan")) for r in runs]
        peaks = [r.get("peak_rss_mb", float("nan")) for r in runs]
        incs = [r.get("increase_mb", float("nan")) for r in runs]
        outcome = runs[-1].get("outcome", "")[:160].replace("|", "/")
        lines.append(f"| {case} | {statistics.median(secs):.2f} ({min(secs):.2f}-{max(secs):.2f}) | "
                     f"{statistics.median(peaks):.0f} | {statistics.median(incs):.0f} | {outcome} |")
        print(lines[-1], flush=True)
    title = TITLE if not args.cases else f"Large uploads, cases {', '.join(args.cases)}"
    run.write(title, "\n".join(lines),
              preamble="# Large uploads and server files: time and memory of a refusal (issue 26, items 2-3)")


if __name__ == "__main__":
    main()
