"""The accuracy study engine (paper Figures 2 and 3) and its command line: small, deterministic runs."""
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from rkcore.studies.accuracy import (
    COLUMNS,
    METHODS,
    accuracy_study,
    format_table,
    summarize,
    validate_C_kernel_svm,
)
from rkcore.studies.splits import split_sizes
from rkcore.cli import main as cli_main
from rkcore.data.datasets import load_builtin
from rkcore.registry import KernelSpec

FAST = {"fm": {"max_iter": 30}, "all_subsets_model": {"max_iter": 30}, "sparse_rf": {"n_iter": 2, "tol": 1e-2}}


@pytest.fixture(autouse=True)
def quiet_and_single_threaded():
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


@pytest.fixture(scope="module")
def data():
    return load_builtin("interactions", n_samples=500, random_state=1)


@pytest.fixture(scope="module")
def study(data):
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return accuracy_study(data, ["kernel_svm", "fm", "rk", "ts", "sparse_rf"], [40, 80], 2,
                              split=(250, 100, 150), C_grid=(0.1, 1.0, 10.0), method_params=FAST, random_state=3)


def test_rows_are_tidy(study):
    assert list(study.columns) == COLUMNS
    counts = study.groupby("method", sort=False).size().to_dict()
    # deterministic exact SVM once; FM once per trial; random-feature methods per D and trial
    assert counts == {"kernel_svm": 1, "fm": 2, "rk": 4, "ts": 4, "sparse_rf": 4}
    assert study.loc[study.method.isin(["kernel_svm", "fm"]), "D"].isna().all()
    assert set(study.loc[study.method == "rk", "D"]) == {40.0, 80.0}
    assert study["accuracy"].between(0, 1).all() and study["balanced_accuracy"].between(0, 1).all()
    assert (study["train_seconds"] > 0).all() and (study["test_seconds"] > 0).all()
    assert (study["n_train"] == 250).all() and (study["n_test"] == 150).all()
    assert study.attrs["split"]["n_val"] == 100
    rk = study[study.method == "rk"]
    assert (rk["model_size"] == rk["D"]).all()
    srf = study[study.method == "sparse_rf"]
    assert (srf["model_size"] <= srf["D"]).all()  # non-zero features of D drawn
    assert study.loc[study.method == "ts", "kernel"].unique().tolist() == ["Polynomial (m=2)"]


def test_shared_C_is_the_kernel_svms_best(study, data):
    """One C per kernel, from the exact SVM's validation accuracy (paper, Section 6); ties -> smaller C."""
    val = pd.DataFrame(study.attrs["validation"])
    assert set(val["selection"]) == {"kernel_svm"}
    assert set(val["kernel"]) == {"ANOVA (m=2)", "Polynomial (m=2)"}
    for kernel_label, methods in {"ANOVA (m=2)": ["kernel_svm", "fm", "rk", "sparse_rf"],
                                  "Polynomial (m=2)": ["ts"]}.items():
        table = val[val["kernel"] == kernel_label]
        best = table.loc[table["val_accuracy"] == table["val_accuracy"].max(), "C"].min()
        assert set(study.loc[study.method.isin(methods), "C"]) == {best}


def test_validation_table_matches_an_independent_split(data):
    """validate_C_kernel_svm scores SVC on precomputed Grams; compare to ExactKernelSVC directly."""
    from rkcore.learners import ExactKernelSVC

    X, y = data.X, data.y
    spec = KernelSpec("anova", 2)
    table = validate_C_kernel_svm(spec, X[:200], y[:200], X[200:300], y[200:300], [0.1, 10.0])
    for C, acc in zip(table["C"], table["val_accuracy"]):
        assert acc == pytest.approx(ExactKernelSVC(spec, C=C).fit(X[:200], y[:200]).score(X[200:300], y[200:300]))


def test_accuracies_are_deterministic(data, study):
    again = accuracy_study(data, ["kernel_svm", "fm", "rk", "ts", "sparse_rf"], [40, 80], 2,
                           split=(250, 100, 150), C_grid=(0.1, 1.0, 10.0), method_params=FAST, random_state=3)
    pd.testing.assert_series_equal(again["accuracy"], study["accuracy"])
    other = accuracy_study(data, ["rk"], [40], 1, split=(250, 100, 150), C_grid=(1.0,), random_state=4)
    assert other["seed"].iloc[0] == 4  # trial t uses random_state + t


def test_per_method_C(data):
    df = accuracy_study(data, ["rk", "all_subsets_model"], [40], 1, split=(200, 100, 100), C_grid=(0.1, 10.0),
                        shared_C=False, method_params=FAST, random_state=0)
    val = pd.DataFrame(df.attrs["validation"])
    assert set(val["selection"]) == {"rk", "all_subsets_model"}
    assert len(val) == 4  # two C values for each (method, D)
    for method, table in val.groupby("selection"):
        best = table.loc[table["val_accuracy"] == table["val_accuracy"].max(), "C"].min()
        assert df.loc[df.method == method, "C"].iloc[0] == best


def test_select_C_by_balanced_accuracy(data):
    """On unbalanced labels the paper's accuracy criterion can tie at a constant classifier;
    balanced accuracy (mean per-class recall) picks the C that best separates the classes."""
    X, y = data.X, data.y.copy()
    y[np.flatnonzero(y == 1)[::3]] = 0  # ~2/3 of one class relabelled: 67/33 labels
    df = accuracy_study((X, y), ["kernel_svm"], [], 1, split=(250, 100, 150), C_grid=(0.01, 1.0, 10.0),
                        select_by="balanced_accuracy", random_state=0)
    val = pd.DataFrame(df.attrs["validation"])
    best = val.loc[val["val_balanced_accuracy"] == val["val_balanced_accuracy"].max(), "C"].min()
    assert df["C"].iloc[0] == best
    assert val["val_balanced_accuracy"].between(0, 1).all()
    with pytest.raises(ValueError, match="select_by must be one of 'accuracy', 'balanced_accuracy'"):
        accuracy_study(data, ["rk"], [10], 1, select_by="auc")


def test_progress_and_summary(data):
    calls = []
    df = accuracy_study((data.X, data.y), ["kernel_svm", "rk"], [40], 2, split=(0.4, 0.2, 0.4), C_grid=(1.0,),
                        random_state=0, progress=lambda done, total, text: calls.append((done, total, text)))
    assert calls[-1][:2] == (3, 3) and calls[-1][2] == "done"
    assert [c[0] for c in calls] == sorted(c[0] for c in calls)
    s = summarize(df)
    assert s.set_index("method").loc["rk", "trials"] == 2
    text = format_table(df)
    assert "kernel_svm" in text and "+-" in text


def test_split_fractions_sum_to_n_and_stay_within_one_of_their_share():
    """Issue 27 item 10: rounding each part alone asked for n + 1 at every n = 7, 15, 19 (mod 20). Checked
    against exact rational shares for every n up to 5000 and a few uneven splits."""
    from fractions import Fraction

    for split in [(0.5, 0.1, 0.4), (0.6, 0.2, 0.2), (0.7, 0.15, 0.15), (1 / 3, 1 / 3, 1 / 3)]:
        for n in range(20, 5001):
            sizes = split_sizes(n, split)
            assert sum(sizes) == n, (split, n, sizes)
            for size, part in zip(sizes, split):
                assert abs(size - Fraction(part) * n) < 1, (split, n, sizes)
    # fractions summing below 1 leave rows out; counts mixed with fractions keep the counts
    assert split_sizes(1000, (0.25, 0.25, 0.25)) == (250, 250, 250)
    assert split_sizes(135, (50, 0.1, 0.4)) == (50, 14, 54)


def test_split_sizes_refuse_huge_and_non_finite_parts():
    for bad in [(1e308, 0.1, 0.4), (10**400, 0.1, 0.4), (float("inf"), 0.1, 0.4), (float("nan"), 0.1, 0.4),
                (True, 0.1, 0.4), (0.5, 0.1)]:
        with pytest.raises(ValueError, match="split"):
            split_sizes(1000, bad)


def test_split_sizes():
    assert split_sizes(1000, (0.5, 0.1, 0.4)) == (500, 100, 400)
    assert split_sizes(1000, (600, 100, 300)) == (600, 100, 300)
    with pytest.raises(ValueError, match="asks for 1100 samples but the dataset has only 1000"):
        split_sizes(1000, (700, 100, 300))
    with pytest.raises(ValueError, match="positive counts or fractions"):
        split_sizes(1000, (0.5, 0, 0.4))


def test_bad_input_is_rejected(data):
    with pytest.raises(ValueError, match="Unknown method 'svm'.*'kernel_svm'"):
        accuracy_study(data, ["svm"], [10], 1)
    with pytest.raises(ValueError, match="Method 'scrk' needs the anova kernel.*allowed methods"):
        accuracy_study(data, ["scrk"], [10], 1, kernel=KernelSpec("all_subsets"))
    with pytest.raises(ValueError, match="needs labels"):
        accuracy_study((data.X, None), ["rk"], [10], 1)
    with pytest.raises(ValueError, match="single class"):
        accuracy_study((data.X, np.zeros(data.X.shape[0])), ["rk"], [10], 1)
    with pytest.raises(ValueError, match="n_trials"):
        accuracy_study(data, ["rk"], [10], 0)
    with pytest.raises(ValueError, match="C_grid"):
        accuracy_study(data, ["rk"], [10], 1, C_grid=(-1.0,))


def test_every_method_is_registered_with_a_kernel():
    anova = KernelSpec("anova", 3)
    assert METHODS["rk"].kernel_of(anova) == anova
    assert METHODS["ts"].kernel_of(anova) == KernelSpec("polynomial", 3)
    assert METHODS["fm"].kernel_of(KernelSpec("anova", 3)).degree == 3
    assert METHODS["all_subsets_model"].kernel_of(anova).name == "all_subsets"


def main(argv):
    """``rkcore accuracy ...`` (the engine has no command line of its own: rkcore.cli imports it, never the
    other way round)."""
    return cli_main(["accuracy", *argv])


def test_cli_writes_csv_and_prints_table(tmp_path, capsys):
    out = tmp_path / "results.csv"
    code = main(["--data", "builtin:interactions", "--n-samples", "300", "--normalize", "none",
                 "--methods", "kernel_svm,rk,fm", "--D", "2d,40", "--trials", "2", "--C-grid", "1,10",
                 "--n-train", "150", "--n-val", "50", "--n-test", "100", "--param", "fm.max_iter=20",
                 "--out", str(out), "--quiet", "--blas-threads", "1"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "majority-class test accuracy" in printed and "+-" in printed and "validation accuracy by C" in printed
    df = pd.read_csv(out)
    assert len(df) == 1 + 2 + 2 * 2
    assert sorted(df.loc[df.method == "rk", "D"].unique()) == [40.0]  # 2d = 2 * 20 = 40 and 40


def test_cli_reports_bad_arguments(capsys):
    assert main(["--data", "builtin:interactions", "--methods", "nope", "--quiet"]) == 2
    assert "Unknown method 'nope'" in capsys.readouterr().err
    assert main(["--data", "/no/such/path", "--quiet"]) == 2
