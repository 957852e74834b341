"""Render time of the default view of the dashboard pages (AppTest, headless), and of widget changes.

Usage: python benchmarks/app/app_render_times.py [page ...]   (default: app.py and every page)

Each page is run once to import everything, then timed with st.cache_data cleared ("cold":
data loading and engines run) and as a plain rerun ("warm": caches hit). The machine is
shared, so each time is also given as a ratio to a fixed numpy reference workload timed in
the same process (a 400x400 matrix product repeated 20 times).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]  # benchmarks/<subject>/this file
sys.path.insert(0, str(REPO))


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


def main(pages: list[str]) -> None:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    ref = reference_seconds()
    print(f"reference workload: {ref * 1e3:.1f} ms\n")
    print("| page | cold (cache cleared) s | warm rerun s | widget change s | cold / ref |")
    print("|---|---|---|---|---|")
    for page in pages:
        path = str(REPO / page)
        AppTest.from_file(path, default_timeout=120).run()  # imports

        def cold():
            st.cache_data.clear()
            at = AppTest.from_file(path, default_timeout=120).run()
            assert not at.exception, at.exception

        t_cold = best_of(cold)
        at = AppTest.from_file(path, default_timeout=120).run()
        t_warm = best_of(lambda: at.run())
        change = "–"
        if page.endswith("Gram_matrices.py"):
            values = iter([512, 256, 384])
            change = f"{best_of(lambda: at.number_input(key='D').set_value(next(values)).run()):.2f} (D)"
        elif page.endswith("Itemsets.py"):
            values = iter(["up_to", "anova", "all_subsets"])
            change = f"{best_of(lambda: at.selectbox(key='kernel').set_value(next(values)).run()):.2f} (kernel)"
        elif any(w.key == "seed" for w in at.number_input):  # every other page with the sidebar: a new seed
            values = iter([1, 2, 3])
            change = f"{best_of(lambda: at.number_input(key='seed').set_value(next(values)).run()):.2f} (seed)"
        print(f"| {page} | {t_cold:.2f} | {t_warm:.2f} | {change} | {t_cold / ref:.2f} |")


if __name__ == "__main__":
    from rkapp.navigation import page_files

    main(sys.argv[1:] or ["app.py", *(f"pages/{p.name}" for p in page_files())])
