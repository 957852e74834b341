"""Tests for the Table 1 command line (on a MovieLens fixture written by the test, never /work/shared)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rkcore.studies import table1
from rkcore.__main__ import main as rkcore_main
from rkcore.data.datasets import load_movielens, normalize
from rkcore.studies.errors import method_label, trial_seed
from rkcore.kernels.exact import anova_newton_float
from rkcore.registry import KernelSpec, make_map


def test_paper_table_joins_the_engine_rows():
    """The embedded paper rows must carry the labels the engine gives its methods (else the
    comparison silently drops them), one cell per multiple, and a plausible transcription:
    positive numbers whose means shrink with D in every row, as the paper's do."""
    paper = table1.paper_frame()
    for kernel_key in table1.TABLE1_KERNELS:
        engine_labels = {method_label(key, dist) for key, dist in table1.methods_for(kernel_key)}
        assert set(paper.loc[paper.kernel_key == kernel_key, "method"]) == engine_labels
    for _, rows in paper.groupby(["kernel_key", "method"]):
        assert sorted(rows["multiple"]) == list(table1.MULTIPLES)
        assert (rows[["paper_mean", "paper_std"]] > 0).all().all()
        assert rows.sort_values("multiple")["paper_mean"].is_monotonic_decreasing


def test_cli_on_fixture(tmp_path, capsys, movielens):
    folder = movielens.write(tmp_path / "ml-100k")
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

    # one cell by brute force: the first 15 L1-normalized rows, each trial's map built from its
    # seed, the full n x n matrices, mean |E| over the pairs with a non-zero exact kernel
    X = normalize(load_movielens(folder, n_samples=15).X, "l1")
    spec = KernelSpec("anova", 3)
    K = spec.exact(X)
    errors = []
    for trial in range(3):
        Z = make_map("rk", spec, 156, "gaussian", trial_seed(4, "rk", "gaussian", 156, trial)).fit_transform(X)
        # the CLI default pairs='nonzero_float': the paper's floating-point mask (eq. 12 in plain floats)
        errors.append(np.abs(Z @ Z.T - K)[anova_newton_float(X, X, 3) != 0.0].mean())
    cell = summary[(summary.kernel_key == "anova3") & (summary.method == "RK (Gaussian)") & (summary.D == 156)]
    np.testing.assert_allclose(cell["mean"].iloc[0], np.mean(errors), rtol=1e-9)
    np.testing.assert_allclose(cell["std"].iloc[0], np.std(errors), rtol=1e-6)

    per_trial = pd.read_csv(raw)
    assert set(per_trial["trial"]) == {0, 1, 2}


def test_cli_options_change_the_protocol(tmp_path, capsys, movielens):
    folder = movielens.write(tmp_path / "ml-100k")
    base = ["--data", str(folder), "--n", "12", "--trials", "2", "--kernels", "anova2", "--multiples", "2", "--quiet"]
    results = {}
    for extra in ([], ["--pairs", "all"], ["--sample", "random"]):
        out = tmp_path / f"s{len(results)}.csv"
        assert rkcore_main(["table1", *base, *extra, "--out", str(out)]) == 0
        results[tuple(extra)] = pd.read_csv(out).set_index("method")["mean"]
    capsys.readouterr()
    assert len(results[()]) == 5
    # with pairs = all, the many zero-kernel pairs dilute the mean absolute error
    assert (results[("--pairs", "all")] < results[()]).all()
    assert not np.allclose(results[("--sample", "random")], results[()])


def test_cli_errors(tmp_path, capsys):
    assert rkcore_main(["table1", "--data", str(tmp_path / "absent"), "--quiet"]) == 2
    assert "does not exist" in capsys.readouterr().err
    # usage errors: exit code 2 with the reason, before any data is read
    assert rkcore_main(["table1", "--data", str(tmp_path), "--kernels", "rbf"]) == 2
    assert "unknown kernel 'rbf'" in capsys.readouterr().err
    assert rkcore_main(["table1", "--data", str(tmp_path), "--trials", "0"]) == 2
    assert "must be an integer from 1 to 10000, got 0" in capsys.readouterr().err
