"""Render time of the default view of the dashboard pages (AppTest, headless), and of widget changes.

Usage: python benchmarks/app/app_render_times.py [page ...] [--quick] [--out FILE]   (default: app.py and every page)
Writes the section "Render times of the default views" of benchmarks/results/app-frame.md.

Each page is run once to import everything, then timed with st.cache_data cleared ("cold":
data loading and engines run) and as a plain rerun ("warm": caches hit). The machine is
shared, so each time is also given as a ratio to a fixed numpy reference workload timed in
the same process (a 400x400 matrix product repeated 20 times).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]  # benchmarks/<subject>/this file
sys.path.insert(0, str(REPO))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "Render times of the default views (`python benchmarks/app/app_render_times.py`)"


def reference_seconds() -> float:
    A = np.random.RandomState(0).rand(400, 400)
    best = np.inf
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(20):
            A @ A
        best = min(best, time.perf_counter() - t)
    return best


def best_of(fn, repeat: int = 3) -> float:
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def page_times(path: str, repeat: int) -> tuple[float, float, str]:
    """Cold (cache cleared), warm rerun and one widget change of a page, best of ``repeat``."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    AppTest.from_file(path, default_timeout=120).run()  # imports

    def cold():
        st.cache_data.clear()
        at = AppTest.from_file(path, default_timeout=120).run()
        assert not at.exception, at.exception

    t_cold = best_of(cold, repeat)
    at = AppTest.from_file(path, default_timeout=120).run()
    t_warm = best_of(lambda: at.run(), repeat)
    change = "–"
    if path.endswith("Gram_matrices.py"):
        values = iter([512, 256, 384])
        change = f"{best_of(lambda: at.number_input(key='D').set_value(next(values)).run(), repeat):.2f} (D)"
    elif path.endswith("Itemsets.py"):
        values = iter(["up_to", "anova", "all_subsets"])
        change = f"{best_of(lambda: at.selectbox(key='kernel').set_value(next(values)).run(), repeat):.2f} (kernel)"
    elif any(w.key == "seed" for w in at.number_input):  # every other page with the sidebar: a new seed
        values = iter([1, 2, 3])
        change = f"{best_of(lambda: at.number_input(key='seed').set_value(next(values)).run(), repeat):.2f} (seed)"
    return t_cold, t_warm, change


def main(argv=None) -> None:
    from rkapp.navigation import page_files

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pages", nargs="*", help="app.py and pages/<file>.py (default: all)")
    add_output_arguments(ap, "app-frame.md")
    args = ap.parse_args(argv)
    pages = args.pages or (["app.py"] if args.quick else ["app.py", *(f"pages/{p.name}" for p in page_files())])
    repeat = 1 if args.quick else 3
    run = Run.start(args, None if argv is None else [__file__, *argv])
    ref = reference_seconds()
    lines = [f"Best of {repeat}; widget change: D on the Gram page, kernel on Itemsets, the sidebar seed elsewhere "
             f"(a new seed misses every cache). Reference workload (twenty 400x400 products): {ref * 1e3:.1f} ms.", "",
             "| page | cold (cache cleared) s | warm rerun s | widget change s | cold / ref |", "|---|---|---|---|---|"]
    for page in pages:
        t_cold, t_warm, change = page_times(str(REPO / page), repeat)
        lines.append(f"| {page} | {t_cold:.2f} | {t_warm:.2f} | {change} | {t_cold / ref:.2f} |")
        print(lines[-1], flush=True)
    run.write(TITLE, "\n".join(lines), preamble="# Dashboard frame: render times of the pages (AppTest)")


if __name__ == "__main__":
    main()
