"""Tests for the Table 1 command line (on a MovieLens fixture written by the test, never /work/shared)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rkcore import table1
from rkcore.__main__ import main as rkcore_main
from rkcore.datasets import load_movielens, normalize
from rkcore.experiments import error_study, summarize_errors
from rkcore.registry import KernelSpec
from tests.test_datasets import write_movielens


def test_paper_values_embedded():
    paper = table1.paper_frame()
    assert len(paper) == (5 + 5 + 4) * 4
    cell = paper.set_index(["kernel_key", "method", "multiple"])
    assert cell.loc[("anova2", "RK (Rademacher)", 2), "paper_mean"] == 6.53e-4
    assert cell.loc[("anova3", "SCRK", 16), "paper_std"] == 6.73e-7
    assert cell.loc[("all_subsets", "RK (Laplace)", 8), "paper_mean"] == 2.00e-2
    # the paper's errors shrink with D in every row
    for _, rows in paper.groupby(["kernel_key", "method"]):
        assert rows.sort_values("multiple")["paper_mean"].is_monotonic_decreasing


def test_cli_on_fixture(tmp_path, capsys):
    folder = write_movielens(tmp_path / "ml-100k")
    out, raw = tmp_path / "summary.csv", tmp_path / "raw.csv"
    code = rkcore_main(["table1", "--data", str(folder), "--n", "15", "--trials", "3", "--multiples", "2,16",
                        "--out", str(out), "--raw", str(raw), "--seed", "4", "--quiet"])
    assert code == 0
    printed = capsys.readouterr().out
    for text in ("(a) Second-order ANOVA kernel", "(b) Third-order ANOVA kernel", "(c) All-subsets kernel",
                 "6.53e-04", "2.33e-04", "SCRK", "RK (Laplace)", "n = 15"):
        assert text in printed
    summary = pd.read_csv(out)
    assert len(summary) == (5 + 5 + 4) * 2
    assert set(summary["D"]) == {2 * 78, 16 * 78}
    assert (summary["n_trials"] == 3).all()
    np.testing.assert_allclose(summary["ratio"], summary["mean"] / summary["paper_mean"])
    assert (summary["mean"] > 0).all()

    # the CLI's numbers are the engine's numbers on the first 15 L1-normalized rows
    X = normalize(load_movielens(folder, n_samples=15).X, "l1")
    direct = summarize_errors(error_study(X, KernelSpec("anova", 3), [("rk", "gaussian")], [156], 3,
                                          pairs="nonzero", random_state=4))
    expected = direct.loc[direct.metric == "mean_abs_error", "mean"].iloc[0]
    cell = summary[(summary.kernel_key == "anova3") & (summary.method == "RK (Gaussian)") & (summary.D == 156)]
    np.testing.assert_allclose(cell["mean"].iloc[0], expected, rtol=1e-12)

    per_trial = pd.read_csv(raw)
    assert set(per_trial["trial"]) == {0, 1, 2}


def test_cli_options_change_the_protocol(tmp_path, capsys):
    folder = write_movielens(tmp_path / "ml-100k")
    base = ["--data", str(folder), "--n", "12", "--trials", "2", "--kernels", "anova2", "--multiples", "2", "--quiet"]
    results = {}
    for extra in ([], ["--pairs", "all"], ["--sample", "random"]):
        out = tmp_path / f"s{len(results)}.csv"
        assert table1.main(base + extra + ["--out", str(out)]) == 0
        results[tuple(extra)] = pd.read_csv(out).set_index("method")["mean"]
    capsys.readouterr()
    assert len(results[()]) == 5
    # with pairs = all, the many zero-kernel pairs dilute the mean absolute error
    assert (results[("--pairs", "all")] < results[()]).all()
    assert not np.allclose(results[("--sample", "random")], results[()])


def test_cli_errors(tmp_path, capsys):
    assert table1.main(["--data", str(tmp_path / "absent"), "--quiet"]) == 2
    assert "does not exist" in capsys.readouterr().err
    # usage errors: exit code 2 with the reason, before any data is read
    assert table1.main(["--data", str(tmp_path), "--kernels", "rbf"]) == 2
    assert "unknown kernel(s) ['rbf']" in capsys.readouterr().err
    assert table1.main(["--data", str(tmp_path), "--trials", "0"]) == 2
    assert "must be an integer >= 1, got 0" in capsys.readouterr().err
