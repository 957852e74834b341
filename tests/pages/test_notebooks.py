"""Every page's default view downloads as a notebook (rkcore.notebooks) that reproduces its numbers: the
notebook of each page's reproduce code is validated against nbformat's schema, executed in a fresh Jupyter
kernel (nbclient) and its printed numbers are compared with the numbers the page shows.

Numbers are compared to the precision the notebook prints them with (half a unit of the last printed digit):
both sides compute the same seeded study, so they agree to rounding; timings are measurements (two runs
never agree), so on the Timing and Kernel trick pages the notebook's grid and its exact identity are checked
instead."""
from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import snippet_of, table_values

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from rkcore.notebooks import view_notebook  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
NUMBER_TOKEN = re.compile(rf"(?<![\w.]){NUMBER}(?![\w.])")
NUMERIC_TEXT = re.compile(rf"^\s*({NUMBER})(?:\s*±\s*({NUMBER}))?\s*$")

#: page -> (a column naming the table the notebook prints, its columns to compare, a button to press first)
COMPARED = {
    "1_Gram_matrices.py": ("definition", ["value"], None),
    "2_Itemsets.py": ("metric", ["largest itemset", "|S| (itemsets)"], None),  # metrics beside the chart
    "3_Error_bounds.py": ("D (lemma)", ["D (lemma)", "D (measured)", "lemma / measured"], None),
    "4_Distributions_and_variance.py": ("Method", None, None),
    "6_Classifiers.py": ("accuracy std", ["D", "accuracy"], "cl_run"),
    "8_Random_Fourier_features.py": ("median error × √D", None, None),
    "9_Random_projections.py": ("outside band", None, None),
    "10_Compositional_kernels.py": ("error ratio (none / de-dup)", None, None),
}
MEASURED = {"5_Timing.py": "tm_run", "7_Kernel_trick.py": None}  # timings: not the same in two runs


def printed_numbers(text: str) -> list[tuple[float, float]]:
    """Each number printed in ``text``, in order, with half a unit of its last printed digit."""
    numbers = []
    for token in NUMBER_TOKEN.findall(text):
        mantissa, _, exponent = token.lower().partition("e")
        decimals = len(mantissa.partition(".")[2])
        numbers.append((float(token), 0.5 * 10.0 ** (int(exponent or 0) - decimals)))
    return numbers


def shown_numbers(table, columns) -> list[float]:
    """The table's numbers row by row (numeric cells, and text cells such as "3.13e-04 ± 1.09e-05"); NaN
    cells (no D for the exact SVM) are left out."""
    values = []
    for row in table[list(columns) if columns else table.columns].itertuples(index=False):
        for cell in row:
            if isinstance(cell, str):
                match = NUMERIC_TEXT.match(cell)
                values += [float(part) for part in match.groups() if part] if match else []
            elif isinstance(cell, (int, float)) and not isinstance(cell, bool) and not math.isnan(cell):
                values.append(float(cell))
    return values


def appear_in_order(shown: list[float], printed: list[tuple[float, float]]) -> list[float]:
    """The shown numbers that are not printed, in the same order, to the printed precision (empty: all are)."""
    position, missing = 0, []
    for value in shown:
        for i in range(position, len(printed)):
            number, half_unit = printed[i]
            if abs(number - value) <= half_unit + 1e-9 * abs(value):
                position = i + 1
                break
        else:
            missing.append(value)
    return missing


def run_page(name: str, button: str | None):
    from streamlit.testing.v1 import AppTest
    import streamlit as st

    st.cache_data.clear()
    at = AppTest.from_file(str(REPO / "pages" / name), default_timeout=600)
    at.run()
    if button:
        at.button(key=button).click().run()
    assert not at.exception and not at.error, (name, [e.value for e in at.error])
    return at


def executed_notebook(code: str, title: str, monkeypatch) -> str:
    """The notebook of ``code``, schema-checked and executed in a new kernel; its printed text."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the kernel imports this checkout's rkcore
    notebook = nbformat.from_dict(view_notebook(code, title=title, settings={"page": title}))
    nbformat.validate(notebook)
    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(REPO)}}).execute()
    outputs = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    return "".join(o.get("text", "") for o in outputs if o.output_type == "stream" and o.name == "stdout")


@pytest.mark.parametrize("name", sorted(COMPARED))
def test_notebook_prints_the_numbers_of_the_page(name, monkeypatch):
    column, columns, button = COMPARED[name]
    at = run_page(name, button)
    printed = executed_notebook(snippet_of(at), name, monkeypatch)
    if column == "metric":
        table = pd.DataFrame([{m.label: m.value for m in at.metric}])
    else:
        table = next(t for t in table_values(at) if column in t.columns)
    shown = shown_numbers(table, columns)
    assert len(shown) >= 2, (name, table)
    assert appear_in_order(shown, printed_numbers(printed)) == [], (name, table.to_string(), printed)
    if name == "2_Itemsets.py":  # the explicit features reproduce the kernel (paper eq. 4) in the notebook too
        check = next(t for t in table_values(at) if "inner_product" in t.columns)
        residual = float(printed.strip().splitlines()[-1])
        assert residual <= 1e-12 * check["kernel"].abs().max()


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_notebook_of_a_timing_page_measures_the_same_grid(name, monkeypatch):
    at = run_page(name, MEASURED[name])
    printed = executed_notebook(snippet_of(at), name, monkeypatch)
    if name == "7_Kernel_trick.py":
        table = next(t for t in table_values(at) if "kernel trick (ms)" in t.columns)
        assert appear_in_order(shown_numbers(table, ["d"]), printed_numbers(printed)) == []
        assert float(printed.strip().splitlines()[-1]) <= 1e-12  # <phi(x), phi(y)> = (1 + <x, y>)^2 exactly
    else:
        exponents = re.findall(rf"^\d+\s+(rk|scrk)\s+transform(?:\s+{NUMBER}){{2}}\s+({NUMBER})", printed, re.M)
        assert sorted({key for key, _ in exponents}) == ["rk", "scrk"], printed
        assert all(math.isfinite(float(value)) for _, value in exponents), printed  # measured: any finite slope


def test_printed_numbers_carry_their_precision():
    """The comparison's own yardstick: 0.000058 covers 5.8e-5 +- 5e-7, "1.27" covers 1.265-1.275."""
    assert printed_numbers("x 0.000058 and 1.27, 3e+08") == [(5.8e-05, 5e-07), (1.27, 0.005), (3e8, 5e7)]
    assert appear_in_order([1.2701, 5.81e-5], printed_numbers("1.27 0.000058")) == []
    assert appear_in_order([1.2801], printed_numbers("1.27")) == [1.2801]
    assert appear_in_order([2.0, 1.0], printed_numbers("1 2")) == [1.0]  # order matters
