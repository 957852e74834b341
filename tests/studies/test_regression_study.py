"""The accuracy study's regression task and many classes: MovieLens-format ratings (generated, no files), the
regression study's protocol and note, and one-vs-rest FMs inside accuracy_study."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rkcore.studies.accuracy import accuracy_study
from rkcore.data.datasets import ML_N_FEATURES, ML_N_USER_FEATURES, load_builtin
from rkcore.data.ratings import is_regression_target, make_movielens_ratings
from rkcore.studies.regression_study import regression_methods, regression_note, regression_study


def test_ratings_stand_in_has_the_movielens_layout():
    data = load_builtin("movielens_ratings", n_samples=300, random_state=1)
    X, y = data.X, data.y
    assert X.shape == (300, ML_N_FEATURES) and set(np.unique(X)) <= {0.0, 1.0}
    assert (X[:, :ML_N_USER_FEATURES].sum(axis=1) == 4).all()  # age, gender, occupation, zip: one each
    assert (X[:, ML_N_USER_FEATURES:ML_N_USER_FEATURES + 10].sum(axis=1) == 1).all()  # release decade
    assert (X[:, ML_N_USER_FEATURES + 10:].sum(axis=1) >= 1).all()  # at least one genre
    assert set(np.unique(y)) <= {1.0, 2.0, 3.0, 4.0, 5.0} and is_regression_target(y)
    assert not is_regression_target(load_builtin("wine").y)
    np.testing.assert_array_equal(make_movielens_ratings(50, 2).y, make_movielens_ratings(50, 2).y)


def test_regression_study_protocol_and_note():
    data = make_movielens_ratings(240, 0)
    df = regression_study(data, ["kernel_ridge", "rk"], [32, 64], 2, split=(120, 40, 80), alpha_grid=(0.1, 10.0))
    assert list(df.columns) == ["method", "label", "kernel", "D", "trial", "seed", "rmse", "r2", "train_seconds",
                                "test_seconds", "alpha", "n_train", "n_test"]
    assert (df["method"] == "kernel_ridge").sum() == 1 and (df["method"] == "rk").sum() == 4
    assert df["alpha"].nunique() == 1 and df["alpha"].iloc[0] in (0.1, 10.0)
    y = data.y
    rmse_of_mean = df.attrs["split"]["mean_rmse"]
    assert 0 < rmse_of_mean < np.ptp(y)
    np.testing.assert_allclose(df["r2"], 1 - (df["rmse"] / np.std(y[np.random.RandomState(0).permutation(240)[160:240]])) ** 2)
    note = regression_note(df)
    assert note.startswith("Lowest test RMSE: ") and f"{rmse_of_mean:.3f}" in note
    with pytest.raises(ValueError, match="Unknown or no regression methods"):
        regression_study(data, ["sparse_rf"], [8], 1)
    assert "rff" not in regression_methods() and "rk" in regression_methods()


def test_regression_note_from_numbers():
    df = pd.DataFrame({"label": ["A", "A", "B"], "rmse": [1.0, 1.2, 2.0]})
    df.attrs["split"] = {"mean_rmse": 1.5}
    assert regression_note(df) == ("Lowest test RMSE: A (1.100); predicting the training mean gives 1.500; "
                                   "no better than that: B.")


def test_accuracy_study_runs_the_fm_one_vs_rest_on_three_classes():
    rng = np.random.RandomState(0)
    X = rng.randn(150, 5)
    y = (X[:, 0] * X[:, 1] > 0).astype(int) + (X[:, 2] > 0.8)
    df = accuracy_study((X, y), ["fm", "kernel_svm"], [8], 1, split=(60, 30, 60), C_grid=(1.0,))
    fm = df[df["method"] == "fm"].iloc[0]
    assert 0 <= fm["accuracy"] <= 1 and fm["model_size"] == 30  # the rank of each per-class model
