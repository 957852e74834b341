"""Small array helpers shared by the engines: one densify, one seeded row subsample."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .validation import check_int


def dense(X) -> np.ndarray:
    """X as a float64 numpy array (sparse matrices are densified)."""
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


def subsample_rows(X, y=None, n: int | None = None, random_state: int = 0):
    """At most n rows of (X, y): a seeded sorted subsample, or everything when n >= rows."""
    n_total = X.shape[0]
    if n is None or n >= n_total:
        return X, y
    n = check_int(n, "n (the number of points)", expected="a positive integer")
    rows = np.sort(np.random.RandomState(random_state).choice(n_total, size=n, replace=False))
    return X[rows], (None if y is None else np.asarray(y)[rows])
