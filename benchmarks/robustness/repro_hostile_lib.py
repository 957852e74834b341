"""Reproduce the library-side hostile-input cases of issue 12 / issue 11 item 8.

Each case runs in a fresh subprocess with a time limit and an address-space cap (so a
runaway case cannot take the shared machine down). Reports wall time (after
importing rkcore, ~180 MB RSS) and peak RSS (resource.getrusage ru_maxrss of the child) and the first line of the outcome.

    python benchmarks/robustness/repro_hostile_lib.py [--timeout 60] [--cap-gb 3] [--quick] [--out FILE] [case ...]

Writes the section "Hostile input to the library" of benchmarks/results/hostile_lib_after.md (every case; a
run of chosen cases writes a section named after them).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "Hostile input to the library (`python benchmarks/robustness/repro_hostile_lib.py`)"
QUICK_CASES = ["libsvm_1e8", "libsvm_nan", "csv_utf16"]

CASES = {
    "libsvm_1e8": """
        import io
        from rkcore.data.datasets import load_libsvm
        b = io.BytesIO(b"1 1:1 100000000:2\\n"); b.name = "bomb.svm"
        d = load_libsvm(b); print("loaded", d.X.shape, len(d.feature_names))
    """,
    "libsvm_nan": """
        import io
        from rkcore.data.datasets import load_libsvm
        b = io.BytesIO(b"1 1:nan 2:inf\\n0 1:1\\n"); b.name = "nan.svm"
        d = load_libsvm(b); print("loaded", d.X.toarray().tolist())
    """,
    "csv_100k_cols": """
        import io
        import numpy as np
        from rkcore.data.datasets import load_csv
        cols = 100_000
        text = ",".join(f"c{j}" for j in range(cols)) + "\\n" + "\\n".join(",".join(["1"] * cols) for _ in range(20)) + "\\n"
        b = io.BytesIO(text.encode()); b.name = "wide.csv"
        d = load_csv(b); print("loaded", d.X.shape)
    """,
    "csv_utf16": """
        import io
        from rkcore.data.datasets import load_csv
        b = io.BytesIO("a,b,label\\n1,2,0\\n3,4,1\\n".encode("utf-16")); b.name = "u16.csv"
        d = load_csv(b, target="label"); print("loaded", d.X.tolist(), d.y.tolist())
    """,
    "csv_latin1": """
        import io
        from rkcore.data.datasets import load_csv
        b = io.BytesIO("größe,b,label\\n1,2,0\\n3,4,1\\n".encode("latin-1")); b.name = "l1.csv"
        d = load_csv(b, target="label"); print("loaded", d.feature_names, d.X.tolist())
    """,
    "csv_semicolon": """
        import io
        from rkcore.data.datasets import load_csv
        b = io.BytesIO(b"a;b;label\\n1;2;0\\n3;4;1\\n"); b.name = "semi.csv"
        d = load_csv(b, target="label"); print("loaded", d.X.tolist())
    """,
    "csv_comma_decimal": """
        import io
        from rkcore.data.datasets import load_csv
        b = io.BytesIO(b"a;b;label\\n1,5;2,25;0\\n3,0;4,75;1\\n"); b.name = "dec.csv"
        d = load_csv(b, target="label"); print("loaded", d.X.tolist())
    """,
    "csv_continuous_target": """
        import io
        import numpy as np
        from rkcore.data.datasets import load_csv
        rng = np.random.RandomState(0)
        rows = "\\n".join(f"{a:.3f},{b:.3f},{t:.4f}" for a, b, t in rng.rand(40, 3))
        b = io.BytesIO(("a,b,target\\n" + rows + "\\n").encode()); b.name = "reg.csv"
        d = load_csv(b, target="target"); print("loaded", d.y[:3], "distinct", len(set(d.y.tolist())))
    """,
    "csv_nan_message": """
        import io
        from rkcore.data.datasets import load_csv
        b = io.BytesIO(b"a,b\\n1,\\n3,4\\n"); b.name = "nan.csv"
        d = load_csv(b); print("loaded", d.X.tolist())
    """,
    "movielens_long_path": """
        from rkcore.data.datasets import load_movielens
        load_movielens("a" * 10_000)
    """,
    "parse_fields_huge_range": """
        from rkcore.data.textformats import parse_fields
        f = parse_fields("0-30000000 | 30000001"); print("parsed", len(f[0]))
    """,
    "parse_itemsets_many": """
        from rkcore.data.textformats import parse_itemsets
        text = "; ".join(str(i) for i in range(2_000_000))
        f = parse_itemsets(text); print("parsed", len(f))
    """,
    "cross_m_message": """
        from rkcore.kernels.itemsets import ItemsetFamily
        ItemsetFamily.cross_fields([(0, 1), (2, 3)], 20)
    """,
    "random_kernel_1e9": """
        import numpy as np
        from rkcore.maps.random_kernel import RandomKernel
        RandomKernel(n_components=10**9, random_state=0).fit_transform(np.ones((3, 10)))
    """,
    "load_builtin_1e9": """
        from rkcore.data.datasets import load_builtin
        load_builtin("gaussian", n_samples=10**9)
    """,
    "polynomial_features_5000": """
        import numpy as np
        from rkcore.teaching.kernel_trick import polynomial_features
        F = polynomial_features(np.ones((10, 5000)), 2); print("shape", F.shape)
    """,
    "kernel_trick_timing_1e6": """
        from rkcore.teaching.kernel_trick import kernel_trick_timing
        kernel_trick_timing(n=10**6, d_list=(2,), repeats=1)
    """,
    "all_subsets_20000_describe": """
        from rkcore.kernels.itemsets import ItemsetFamily
        print(ItemsetFamily.all_subsets(20000).describe()[:200])
    """,
    "all_subsets_200000_n": """
        from rkcore.kernels.itemsets import ItemsetFamily
        n = ItemsetFamily.all_subsets(200000).n_itemsets; print("n_itemsets bits", n.bit_length() if isinstance(n, int) else n)
    """,
    "up_to_1e6_1e5_n": """
        from rkcore.kernels.itemsets import ItemsetFamily
        n = ItemsetFamily.up_to(10**6, 10**5).n_itemsets; print("n_itemsets", type(n).__name__, str(n)[:60])
    """,
    "family_counts_2000": """
        from rkcore.kernels.itemsets import ItemsetFamily
        from rkcore.studies.family_views import family_counts
        df = family_counts(ItemsetFamily.all_subsets(2000)); print("rows", len(df), "max", df['count'].max())
    """,
}

CHILD = """
import resource, sys, time, traceback
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
import rkcore.data.datasets, rkcore.teaching.kernel_trick, rkcore.kernels.itemsets, rkcore.maps.random_kernel  # not timed
t0 = time.perf_counter()
try:
{body}
    outcome = "ok"
except BaseException as exc:
    outcome = type(exc).__name__ + ": " + str(exc).replace("\\n", " ")
t = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
import json; print("RESULT" + json.dumps(dict(seconds=t, rss_mb=rss, outcome=outcome[:400])))
"""


def run(name: str, timeout: float, cap: int) -> dict:
    body = textwrap.indent(textwrap.dedent(CASES[name]).strip(), "    ")
    code = CHILD.format(cap=cap, body=body)
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return dict(case=name, seconds=timeout, rss_mb=float("nan"), outcome=f"TIMEOUT after {timeout:.0f} s")
    for line in p.stdout.splitlines():
        if line.startswith("RESULT"):
            return dict(case=name, **json.loads(line[6:]))
    return dict(case=name, seconds=float("nan"), rss_mb=float("nan"),
                outcome=("crashed: " + (p.stderr.strip().splitlines() or ["?"])[-1])[:400])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--cap-gb", type=float, default=3)
    add_output_arguments(ap, "hostile_lib_after.md")
    a = ap.parse_args(argv)
    names = a.cases or (QUICK_CASES if a.quick else list(CASES))
    run_info = Run.start(a, None if argv is None else [__file__, *argv])
    lines = [f"Each case in a fresh subprocess (time limit {a.timeout:g} s, address space capped at {a.cap_gb:g} GB); "
             "seconds after importing rkcore, peak RSS of the child, the first 400 characters of the outcome.", "",
             "| case | seconds | peak RSS MB | outcome |", "|---|---:|---:|---|"]
    for name in names:
        r = run(name, a.timeout, int(a.cap_gb * 2**30))
        lines.append(f"| {r['case']} | {r['seconds']:.2f} | {r['rss_mb']:.0f} | {r['outcome'].replace('|', '/')} |")
        print(lines[-1], flush=True)
    title = TITLE if not a.cases else f"Hostile input to the library, cases {', '.join(a.cases)}"
    run_info.write(title, "\n".join(lines), preamble="# Hostile files and arguments to the library (issues 11, 12)")


if __name__ == "__main__":
    main()
