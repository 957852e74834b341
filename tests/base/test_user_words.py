"""Errors in the user's words (issue 35, item 4): each case once gave numpy's, scipy's or pandas' internals, or
the dashboard's wording on the command line. The fixes live in the shared checks (base.validation,
base.arrays), so each test goes through a public entry that uses them."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from rkcore.base.arrays import subsample_rows
from rkcore.learners import exact_gram
from rkcore.maps import RandomKernel, RandomMaclaurin, SignedCirculantRandomKernel
from rkcore.maps.structured import OrthogonalRandomFeatures
from rkcore.registry import KernelSpec
from rkcore.teaching.compositional import CompositionalFeatures

REPO = Path(__file__).resolve().parents[2]
RAGGED = [[1.0, 2.0], [3.0]]
#: words of numpy's, scipy's and pandas' internals that a user never wrote
INTERNALS = ("inhomogeneous", "setting an array element", "subscriptable", "unhashable", "could not convert",
             "None of [", "KeyError", "Traceback")

ESTIMATORS = {
    "RandomKernel": lambda: RandomKernel(n_components=4, random_state=0),
    "RandomMaclaurin": lambda: RandomMaclaurin(n_components=4, random_state=0),
    "SignedCirculantRandomKernel": lambda: SignedCirculantRandomKernel(n_components=4, random_state=0),
    "OrthogonalRandomFeatures": lambda: OrthogonalRandomFeatures(n_components=4, random_state=0),
    "CompositionalFeatures": lambda: CompositionalFeatures(n_components=4, random_state=0),
}


def _plain(message: str) -> None:
    assert not any(word in message for word in INTERNALS), message


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("data", [RAGGED, [[1.0, "x"], [2.0, 3.0]]], ids=["ragged", "text"])
def test_estimators_word_ragged_or_text_rows(name, data):
    with pytest.raises(ValueError, match="must be a numeric matrix with rows of equal length") as info:
        ESTIMATORS[name]().fit(data)
    _plain(str(info.value))


def test_exact_kernels_and_exact_gram_word_ragged_rows():
    for call in (lambda: KernelSpec().exact(RAGGED), lambda: exact_gram(KernelSpec(), RAGGED),
                 lambda: subsample_rows(RAGGED, n=1)):
        with pytest.raises(ValueError, match="must be a numeric matrix with rows of equal length"):
            call()


@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("flag", [True, False, np.True_])
def test_sizes_refuse_bools(name, flag):
    """bool is an Integral to Python and to scikit-learn's Interval: True was taken for n_components = 1."""
    with pytest.raises(ValueError, match=r"n_components.*not True or False"):
        ESTIMATORS[name]().set_params(n_components=flag).fit(np.ones((3, 4)))


@pytest.mark.parametrize("estimator", [lambda: RandomKernel(degree=True), lambda: RandomMaclaurin(degree=True),
                                       lambda: SignedCirculantRandomKernel(degree=True)])
def test_degree_refuses_bools(estimator):
    with pytest.raises(ValueError, match=r"degree.*not True or False"):
        estimator().fit(np.ones((3, 4)))


@pytest.mark.parametrize("name", [["anova"], {"anova": 1}, None, 3])
def test_kernel_spec_names_the_allowed_kernels(name):
    with pytest.raises(ValueError, match=r"Unknown kernel .*allowed: 'anova'") as info:
        KernelSpec(name)
    _plain(str(info.value))


@pytest.mark.parametrize("fmt", ["coo", "dia", "csc", "lil", "dok", "bsr"])
def test_exact_gram_takes_every_sparse_format(fmt):
    X = np.random.RandomState(0).rand(5, 3) * (np.arange(15).reshape(5, 3) % 3 > 0)
    expected = exact_gram(KernelSpec("anova", 2), X)
    got = exact_gram(KernelSpec("anova", 2), sp.csr_matrix(X).asformat(fmt), sp.csr_matrix(X).asformat(fmt))
    # the same rows through CSR or dense: within the accuracy contract of a 3-term sum (a few ulps)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)


def test_subsample_rows_of_a_dataframe_by_position():
    frame = pd.DataFrame(np.arange(20.0).reshape(10, 2), index=range(100, 110), columns=["a", "b"])
    labels = pd.Series(np.arange(10), index=frame.index)
    X, y = subsample_rows(frame, labels, n=3, random_state=0)
    assert isinstance(X, pd.DataFrame) and X.shape == (3, 2) and list(X.columns) == ["a", "b"]
    assert list(X.index) == list(y.index)  # rows and labels stay paired
    assert (X["a"].to_numpy() // 2 == y.to_numpy()).all()
    Xs, _ = subsample_rows(sp.coo_matrix(frame.to_numpy()), n=3, random_state=0)
    np.testing.assert_array_equal(Xs.toarray(), X.to_numpy())  # COO: the same rows, as CSR


def test_cli_file_errors_speak_command_line_words(tmp_path):
    data = tmp_path / "scores.csv"
    data.write_text("age,colour,label\n1,red,0\n2,blue,1\n3,green,0\n4,red,1\n")
    run = subprocess.run([sys.executable, "-m", "rkcore", "accuracy", "--data", str(data), "--target", "label"],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode != 0
    message = run.stderr.strip().splitlines()[-1]
    assert "upload" not in message.lower(), message  # the dashboard's wording
    assert "scores.csv" in message and "'colour'" in message and "run the command again" in message, message


def test_the_dashboard_keeps_its_wording():
    from rkcore.data import load_csv
    import io

    buffer = io.BytesIO(b"age,colour,label\n1,red,0\n2,blue,1\n")
    buffer.name = "scores.csv"
    with pytest.raises(ValueError, match="upload it again"):
        load_csv(buffer, target="label")
