"""MovieLens ratings as a regression target: a generated stand-in in the MovieLens 100K format (the built-in, so
nothing outside the repository is read at test time) and the real ratings when a MovieLens folder is given.

The stand-in: n rating rows of d = 78 one-hot / multi-hot features laid out exactly as
:func:`rkcore.data.load_movielens` lays them out (age 7, gender 2, occupation 21, zip prefix 19, release decade
10, genres 19), from 300 simulated users and 400 simulated items, and a rating in {1, ..., 5}: a user bias, an item
bias and user-feature x item-feature interactions (so degree-2 models beat linear ones), rounded and clipped like
real star ratings.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .builtin import Dataset, _check_n_samples, _subsample
from .movielens import (
    ML_AGES, ML_FEATURE_NAMES, ML_GENDERS, ML_GENRES, ML_N_FEATURES, ML_N_USER_FEATURES, ML_OCCUPATIONS, ML_YEARS,
    ML_ZIP_PREFIXES, load_movielens,
)
from ..base.limits import check_allocation

N_USERS, N_ITEMS = 300, 400
ONE_HOT_SIZES = (len(ML_AGES), len(ML_GENDERS), len(ML_OCCUPATIONS), len(ML_ZIP_PREFIXES), len(ML_YEARS))


def make_movielens_ratings(n_samples: int | None = 2000, random_state=0) -> Dataset:
    """The generated stand-in (see the module docstring): X (n, 78) float, y the ratings 1..5 as floats.

    Parameters
    ----------
    n_samples : int or None, default 2000
        Rows; None gives 2000.
    random_state : int, RandomState instance or None, default 0
        Seed.

    Returns
    -------
    Dataset
        The generated features and ratings.
    """
    n = _check_n_samples(n_samples, 2000)
    check_allocation("The ratings data", (n, ML_N_FEATURES), hint="Lower n_samples.")
    rng = np.random.RandomState(random_state)
    offsets = np.cumsum((0,) + ONE_HOT_SIZES)[:-1]
    users = np.column_stack([rng.randint(0, size, N_USERS) for size in ONE_HOT_SIZES[:4]]) + offsets[:4]
    decades = rng.randint(0, ONE_HOT_SIZES[4], N_ITEMS) + offsets[4]
    genres = (rng.rand(N_ITEMS, len(ML_GENRES)) < 0.12).astype(np.float64)
    genres[np.arange(N_ITEMS), rng.randint(0, len(ML_GENRES), N_ITEMS)] = 1.0  # every item has a genre
    u, i = rng.randint(0, N_USERS, n), rng.randint(0, N_ITEMS, n)
    one_hot = np.column_stack([users[u], decades[i]])
    X = sp.hstack([sp.csr_matrix((np.ones(one_hot.size), one_hot.ravel(), np.arange(0, one_hot.size + 1, 5)),
                                 shape=(n, ML_N_USER_FEATURES + len(ML_YEARS))), sp.csr_matrix(genres[i])],
                  format="csr").toarray()
    # user features x item features interactions, low rank, plus biases and noise
    user_factors = rng.normal(0, 0.6, (ML_N_USER_FEATURES, 3))
    item_factors = rng.normal(0, 0.6, (ML_N_FEATURES - ML_N_USER_FEATURES, 3))
    taste = (X[:, :ML_N_USER_FEATURES] @ user_factors * (X[:, ML_N_USER_FEATURES:] @ item_factors)).sum(axis=1)
    score = 3.5 + rng.normal(0, 0.3, N_USERS)[u] + rng.normal(0, 0.4, N_ITEMS)[i] + 0.5 * taste \
        + rng.normal(0, 0.5, n)
    y = np.clip(np.rint(score), 1, 5)
    fields = (tuple(range(ML_N_USER_FEATURES)), tuple(range(ML_N_USER_FEATURES, ML_N_FEATURES)))
    return Dataset(name="movielens_ratings", X=X, y=y, feature_names=ML_FEATURE_NAMES, fields=fields,
                   description=(f"MovieLens-format ratings (generated stand-in): {n} rating rows, d = {ML_N_FEATURES} "
                                "one-hot user and item features as in MovieLens 100K; y = the rating 1-5 "
                                "(a regression target)."))


def load_movielens_ratings(path, n_samples: int | None = None, random_state=None, *, sparse: bool = False) -> Dataset:
    """The real MovieLens 100K rows of :func:`rkcore.data.load_movielens` with y = the rating (1-5, float)
    instead of rating == 5. Reads only the local folder ``path`` (u.data, u.user, u.item).

    Parameters
    ----------
    path : str or path-like
        Folder holding u.data, u.user and u.item.
    n_samples : int or None, optional
        Rating rows to keep; None keeps all.
    random_state : int or None, optional
        Seed of the subsample; None keeps the first rows.
    sparse : bool, default False
        Return X as a CSR matrix.

    Returns
    -------
    Dataset
        The 78 binary features and the ratings as floats.
    """
    data = load_movielens(path, n_samples, random_state, sparse=sparse)
    ratings = pd.read_csv(Path(path) / "u.data", sep="\t", header=None, usecols=[2], dtype=np.int64)[2].to_numpy()
    rows = _subsample(ratings.shape[0], n_samples, random_state)  # the same rows load_movielens kept
    return Dataset(name="movielens100k_ratings", X=data.X, y=ratings[rows].astype(np.float64),
                   feature_names=data.feature_names, fields=data.fields,
                   description=data.description.replace("y = rating == 5", "y = the rating 1-5 (regression)"))


def is_regression_target(y) -> bool:
    """Whether y is a real-valued target rather than class labels: floats (a rating 1.0-5.0 counts as real).

    Parameters
    ----------
    y : array-like or None
        Target values.

    Returns
    -------
    bool
        True for a float target.
    """
    return y is not None and np.asarray(y).dtype.kind == "f"

