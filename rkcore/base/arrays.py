"""Small array helpers shared by the engines: one densify, one seeded row subsample, rows of any matrix a
user passes (pandas, any scipy sparse format), and scikit-learn's data check in the user's words."""
from __future__ import annotations

import re

import numpy as np
from sklearn.utils import validation as _sklearn_validation

from .validation import check_int, numeric_matrix_message
from .annotations import is_sparse

#: numpy's wording when an array cannot be built from the data (ragged rows, text), which users do not speak.
_NUMPY_ARRAY_ERRORS = re.compile(r"inhomogeneous shape|setting an array element with a sequence|"
                                 r"could not convert|invalid literal for|must be a real number|not a number",
                                 re.IGNORECASE)


def validate_data(estimator, X, **kwargs):
    """scikit-learn's ``validate_data``, with numpy's wording for ragged or non-numeric rows replaced by
    :func:`rkcore.base.validation.numeric_matrix_message` (every estimator of rkcore checks its data here).

    Parameters
    ----------
    estimator : estimator instance
        The estimator (its ``n_features_in_`` is set or checked).
    X : array-like or sparse matrix
        The data.
    **kwargs
        Passed to :func:`sklearn.utils.validation.validate_data`.

    Returns
    -------
    ndarray or sparse matrix
        The validated data.
    """
    try:
        return _sklearn_validation.validate_data(estimator, X, **kwargs)
    except (ValueError, TypeError) as err:
        if _NUMPY_ARRAY_ERRORS.search(str(err)):
            raise ValueError(numeric_matrix_message("X")) from None
        raise


def row_indexable(X):
    """X in a form whose rows ``X[rows]`` select by position and whose ``shape`` is known: a pandas frame or
    series as its numpy values, a sparse matrix in a row-indexable format (COO and DIA are not subscriptable:
    CSR), a list as a numpy array; anything else as it is.

    Parameters
    ----------
    X : array-like, pandas DataFrame or Series, or scipy.sparse matrix
        The data.

    Returns
    -------
    array-like or scipy.sparse matrix
        X, indexable by an array of row positions.
    """
    if hasattr(X, "to_numpy"):
        return X.to_numpy()
    if is_sparse(X):
        return X if X.format in ("csr", "csc", "lil", "dok") else X.tocsr()
    if isinstance(X, (list, tuple)):
        try:
            return np.asarray(X)
        except ValueError:
            raise ValueError(numeric_matrix_message("X")) from None
    return X


def take_rows(X, rows: np.ndarray):
    """The rows of X at these positions, in X's own kind (a pandas frame or series stays one, by position
    whatever its index holds; a COO matrix comes back as CSR).

    Parameters
    ----------
    X : array-like, pandas DataFrame or Series, or scipy.sparse matrix
        The data.
    rows : ndarray of int
        Row positions.

    Returns
    -------
    array-like or scipy.sparse matrix
        The selected rows.
    """
    return X.iloc[rows] if hasattr(X, "iloc") else row_indexable(X)[rows]


def dense(X, dtype=np.float64) -> np.ndarray:
    """X as a numpy array (sparse matrices are densified): the one densify of the house.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix
        The data.
    dtype : numpy dtype or None, default=numpy.float64
        The dtype of array input; None keeps X's own dtype and an array is returned as it is, no copy (the
        kernels' long double paths keep their precision).

    Returns
    -------
    numpy.ndarray
        X as a dense array: ``dtype`` for array input, the matrix's own dtype for sparse input.
    """
    return X.toarray() if is_sparse(X) else np.asarray(X, dtype=dtype)


def subsample_rows(X, y=None, n: int | None = None, random_state: int = 0):
    """At most n rows of (X, y): a seeded sorted subsample, or everything when n >= rows.

    Parameters
    ----------
    X : array-like, pandas DataFrame or scipy.sparse matrix of shape (n_samples, n_features)
        The rows to draw from (by position, whatever a frame's index holds).
    y : array-like or pandas Series of shape (n_samples,), optional
        Labels subsampled with the same rows.
    n : int, optional
        Rows to keep; None (or n >= n_samples) keeps every row.
    random_state : int, default=0
        Seed of the draw.

    Returns
    -------
    X_sub : array-like or scipy.sparse matrix
        The kept rows.
    y_sub : array-like or None
        Their labels (None when ``y`` is None).
    """
    n_total = row_indexable(X).shape[0] if not hasattr(X, "shape") else X.shape[0]
    if n is None or n >= n_total:
        return X, y
    n = check_int(n, "n (the number of points)", expected="a positive integer")
    rows = np.sort(np.random.RandomState(random_state).choice(n_total, size=n, replace=False))
    return take_rows(X, rows), (None if y is None else take_rows(y if hasattr(y, "iloc") else np.asarray(y), rows))
