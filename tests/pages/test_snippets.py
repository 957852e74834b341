"""The "Reproduce in Python" snippets run as they are shown and print the page's numbers, without warnings:
each snippet runs in a fresh interpreter (stdout and stderr captured) and its printed table is compared
with the table the page shows, formatted the same way."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rkapp.layout import REPRODUCE_KEY
from tests.conftest import snippet_of, table_values

REPO = Path(__file__).resolve().parents[2]


_RUNNER = """
import sys
for name, code in CODES:
    print(f"=== {name}", flush=True)
    print(f"=== {name}", file=sys.stderr, flush=True)
    exec(compile(code, name, "exec"), {"__name__": "__main__"})
"""


def run_snippets(codes: dict[str, str], timeout: float = 240) -> dict[str, str]:
    """Each snippet's stdout, all run in one fresh python (one import of rkcore and scikit-learn for all:
    the test stays short), each in its own namespace; figures are built but not opened (``.show()`` would
    start a browser). Fails on a non-zero exit or on anything written to stderr (a warning)."""
    items = [(name, code.replace(".show()", "")) for name, code in codes.items()]
    env = {**os.environ, "PYTHONWARNINGS": "default", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", f"CODES = {items!r}\n" + _RUNNER], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    noise = [line for line in done.stderr.splitlines() if not line.startswith("=== ")]
    assert not noise, done.stderr[-3000:]
    parts = done.stdout.split("=== ")[1:]
    return {part.split("\n", 1)[0]: part.split("\n", 1)[1] for part in parts}


def page_table(at, column: str):
    return next(v for v in table_values(at) if column in v.columns)


#: page -> (its settings in the URL, a button to press first): small views, each page's snippet
VIEWS = {
    "rff": ("pages/8_Random_Fourier_features.py", dict(n=50, rff_Dmax=256, rff_trials=2, seed=3), None),
    "projections": ("pages/9_Random_projections.py",
                    dict(n=40, dataset="wine", rp_vec="raw", rp_mmax=64, rp_trials=3), None),
    "compositional": ("pages/10_Compositional_kernels.py", dict(n=40, ck_Dmax=64, ck_trials=2, ck_Dgram=16), None),
    "classifiers": ("pages/6_Classifiers.py", dict(n=120, cl_methods="kernel_svm,rk", cl_mult="1,2", cl_trials=1),
                    "cl_run"),
}


@pytest.fixture(scope="module")
def pages_and_outputs():
    """Every page of VIEWS run in AppTest, and every page's snippet's stdout (one interpreter for all)."""
    from streamlit.testing.v1 import AppTest
    import streamlit as st

    pages = {}
    for name, (path, query, button) in VIEWS.items():
        st.cache_data.clear()
        at = AppTest.from_file(str(REPO / path), default_timeout=240)
        at.session_state[REPRODUCE_KEY] = True  # the snippet is sent only while its expander is open
        for key, value in query.items():
            at.query_params[key] = str(value)
        at.run()
        if button:
            at.button(key=button).click().run()
        assert not at.exception and not at.error, (name, [e.value for e in at.error])
        pages[name] = at
    st.cache_data.clear()
    codes = {}
    for name, at in pages.items():
        codes[name] = snippet_of(at)
    return pages, run_snippets(codes)


pytestmark = pytest.mark.slow


def test_rff_snippet_prints_the_page_table(pages_and_outputs):
    pages, outputs = pages_and_outputs
    at, out = pages["rff"], outputs["rff"]
    table = page_table(at, "median error × √D")
    assert table.to_string(index=False, float_format="%.4g") in out
    gamma = next(c.value for c in at.caption if "γ = " in c.value).split("γ = ")[1].split(" ")[0]
    assert f"gamma = {gamma}" in out


def test_projection_snippet_prints_the_page_table(pages_and_outputs):
    pages, outputs = pages_and_outputs
    table = page_table(pages["projections"], "outside band")
    assert table.to_string(index=False, float_format="%.4g") in outputs["projections"]


def test_compositional_snippet_prints_the_page_numbers(pages_and_outputs):
    pages, outputs = pages_and_outputs
    at, out = pages["compositional"], outputs["compositional"]
    table = page_table(at, "error ratio (none / de-dup)")
    assert table.to_string(index=False, float_format="%.4g") in out
    caption = next(c.value for c in at.caption if "Relative Frobenius error" in c.value)
    error = caption.split("Relative Frobenius error ")[1].split(";")[0]
    assert f"relative Frobenius error {error}" in out


def test_classifiers_snippet_prints_the_accuracies_without_warnings(pages_and_outputs):
    pages, outputs = pages_and_outputs
    out = outputs["classifiers"]
    summary = page_table(pages["classifiers"], "accuracy std")
    assert "accuracy_mean" in out  # the column is printed, not hidden behind "..."
    for label, D, acc in zip(summary["label"], summary["D"], summary["accuracy"]):
        D_text = "NaN" if D != D else f"{D:.1f}"
        rows = [line.split() for line in out.splitlines() if label in line]
        assert any(D_text in row and f"{acc:.6f}" in row for row in rows), (label, D, acc, rows)
