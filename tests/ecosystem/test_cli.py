"""The rkcore command: entry points, validation before work, one progress style, typed outputs
and provenance."""
from __future__ import annotations

import io
import json
import subprocess
import sys
import tomllib
from importlib import import_module

import pandas as pd
import pytest

from rkcore import __version__
from rkcore.cli import main
from rkcore.cli.progress import Progress
from rkcore.cli.runs import typed_frame
from tests.conftest import REPO

SMALL_ACCURACY = ["accuracy", "--data", "builtin:interactions", "--n-samples", "300", "--normalize", "none",
                  "--methods", "kernel_svm,rk", "--D", "40", "--trials", "2", "--C-grid", "1,10",
                  "--n-train", "150", "--n-val", "50", "--n-test", "100", "--blas-threads", "1"]


def test_console_script_is_declared_and_resolves():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    module, func = scripts["rkcore"].split(":")
    assert getattr(import_module(module), func) is main


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"rkcore {__version__}"


def test_python_dash_m_is_the_same_command():
    done = subprocess.run([sys.executable, "-m", "rkcore", "--version"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0 and done.stdout.strip() == f"rkcore {__version__}"
    done = subprocess.run([sys.executable, "-m", "rkcore", "nope"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 2 and "invalid choice: 'nope'" in done.stderr


@pytest.mark.parametrize("argv,message", [
    (["timing", "--repeats", "0"], "--repeats: must be an integer from 1 to 1000, got 0"),
    (["timing", "--degree", "0"], "--degree: must be an integer from 1 to 20, got 0"),
    (["timing", "--maps", "rk,nope"], "unknown map 'nope'"),
    (["timing", "--out", "results.txt"], "must end in .csv or .parquet"),
    (["timing", "--out", "/no/such/folder/t.csv"], "does not exist"),
    (["accuracy", "--data", "builtin:interactions", "--kernel", "rbf"], "unknown kernel 'rbf'; allowed: anova, all_subsets, dot, up_to"),
    (["accuracy", "--data", "builtin:interactions", "--kernel", "itemset"], "unknown kernel 'itemset'"),
    (["accuracy", "--data", "builtin:interactions", "--trials", "0"], "must be an integer from 1 to 10000, got 0"),
    (["accuracy", "--data", "builtin:interactions", "--kernel", "dot", "--methods", "scrk"], "needs the anova"),
    (["accuracy", "--data", "builtin:interactions", "--methods", "fm", "--param", "fm.nope=1"], "nope"),
    (["accuracy", "--data", "builtin:interactions", "--methods", "rk", "--param", "fm.max_iter=5"], "not in the study"),
    (["accuracy", "--data", "builtin:interactions", "--methods", "fm", "--degree", "1"], "degree"),
    (["accuracy", "--data", "builtin:interactions", "--D", "0"], "--D entries must give a number of random features"),
])
def test_bad_arguments_exit_2_before_any_work(argv, message, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert "%]" not in captured.err  # no progress: refused before the study started


def test_itemset_and_rbf_are_not_offered(capsys):
    assert main(["accuracy", "--help"]) == 0
    text = capsys.readouterr().out
    assert "study kernel: anova, all_subsets, dot, up_to" in " ".join(text.split()) and "rbf" not in text


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_accuracy_outputs_typed_tables_and_provenance(tmp_path, suffix, capsys):
    out = tmp_path / f"acc{suffix}"
    assert main(SMALL_ACCURACY + ["--out", str(out), "--quiet"]) == 0
    # CSV has no dtypes: integer columns must at least parse as integers (no "40.0")
    read = (lambda f: pd.read_csv(f, dtype={"D": "Int64", "seed": "Int64"})) if suffix == ".csv" else pd.read_parquet
    df, validation = read(out), read(tmp_path / f"acc.validation{suffix}")
    assert len(df) == 1 + 2 and set(validation["C"]) == {1.0, 10.0}
    assert pd.api.types.is_integer_dtype(df["D"]) and pd.api.types.is_integer_dtype(df["seed"])
    assert df["D"].isna().sum() == 1  # the exact SVM has no D
    if suffix == ".csv":
        text = out.read_text()
        assert ",40," in text and "40.0" not in text
    record = json.loads((tmp_path / "acc.provenance.json").read_text())
    assert record["command"] == "rkcore accuracy" and record["seed"] == 0
    assert record["arguments"]["trials"] == 2 and record["argv"][:2] == ["accuracy", "--data"]
    assert {"rkcore", "numpy", "scikit-learn"} <= set(record["versions"])
    assert record["split"]["stratified"] is True and record["split"]["n_train"] == 150
    assert record["machine"]["cpu_count"] >= 1 and record["finished"] >= record["started"]
    assert str(out) in record["outputs"]


def test_one_progress_style():
    """Plain lines (a log) at most every 10% of a section with elapsed<remaining time; a bar on a terminal;
    a new section when the engine's fraction goes back (table1's kernels); nothing when quiet."""
    plain = io.StringIO()
    progress = Progress(stream=plain)
    progress.section("anova2")
    for i in range(1, 101):
        progress(i / 100, f"step {i}")
    for i in range(1, 11):  # the next kernel: the fraction starts again
        progress(i / 10, f"next {i}")
    lines = plain.getvalue().splitlines()
    first = [line for line in lines if "step" in line]
    assert 5 <= len(first) <= 11 and first[-1].startswith("anova2: 100.0% | ") and first[-1].endswith("| step 100")
    assert "<" in first[0] and lines[-1].startswith("anova2: 100.0% | ") and lines[-1].endswith("next 10")
    quiet = io.StringIO()
    Progress(quiet=True, stream=quiet)(0.5, "x")
    assert quiet.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty = Terminal()
    bar = Progress(stream=tty)
    bar(0.5, "half")
    bar(1.0, "done")
    text = tty.getvalue()
    assert "100.0%|##########|" in text and "done" in text and text.endswith("\n")  # tqdm throttles the 50%


def test_typed_frame_keeps_floats_that_are_not_counts():
    df = typed_frame(pd.DataFrame({"D": [40.0, None], "accuracy": [1.0, 0.5], "seed": [1.0, 2.0]}))
    assert str(df["D"].dtype) == "Int64" and df["accuracy"].dtype == float and str(df["seed"].dtype) == "Int64"
