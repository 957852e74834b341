"""Input checks shared by the teaching engines (kernel trick, random Fourier features, random projections).

Each names the argument and shows the value it refuses.
"""
from __future__ import annotations

import numpy as np

from ..base.arrays import dense
from ..base.validation import check_int
from ..kernels.exact import check_array


def check_dense(X) -> np.ndarray:
    """X validated (finite, 2-D, bounded) and as a dense float64 array.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The data.

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_features)
        X, dense.
    """
    return dense(check_array(X))


def check_positive(value, name: str) -> float:
    """``float(value)`` if it is a positive finite number, else a ValueError naming ``name``.

    Parameters
    ----------
    value : object
        The argument.
    name : str
        Its name, for the message.

    Returns
    -------
    float
        The value.
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}.") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}.")
    return v


def check_positive_ints(values, name: str) -> list[int]:
    """A non-empty sequence of integers >= 1 as a list of ints (in the given order), else a ValueError.

    Parameters
    ----------
    values : sequence of int
        The argument.
    name : str
        Its name, for the message.

    Returns
    -------
    list of int
        The values.
    """
    try:
        out = [check_int(v, f"each value of {name}") for v in values]
    except TypeError:
        raise ValueError(f"{name} must be a list of positive integers, got {values!r}.") from None
    if not out:
        raise ValueError(f"{name} is empty; give at least one value.")
    return out
