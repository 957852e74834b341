"""Small helpers on a matrix that may be dense or sparse (element-wise power, Gram product,
largest entry, widest row), shared by the kernels, the maps, the learners and the variance formulas."""
from __future__ import annotations

from typing import cast

import numpy as np
import scipy.sparse as sp

from ..base.annotations import is_sparse
from ..base.arrays import dense

__all__ = ["abs_max", "elementwise_power", "gram_dense", "max_nnz_per_row"]


def elementwise_power(A, t: int):
    """Element-wise t-th power, keeping sparsity.

    Parameters
    ----------
    A : numpy.ndarray or scipy.sparse matrix
        The matrix.
    t : int
        The power (1: A itself).

    Returns
    -------
    numpy.ndarray or scipy.sparse matrix
        A**t, sparse when A is.
    """
    if t == 1:
        return A
    return A.power(t) if is_sparse(A) else A**t


def gram_dense(A, B) -> np.ndarray:
    """A @ B.T as a dense float64 array (A, B dense or sparse).

    Parameters
    ----------
    A, B : numpy.ndarray or scipy.sparse matrix
        Matrices with the same number of columns.

    Returns
    -------
    numpy.ndarray
        The dense product.
    """
    out = A @ B.T
    return dense(out, dtype=None)


def abs_max(A) -> float:
    """The largest |entry| of A (0.0 when empty); a sparse matrix's stored entries only.

    Parameters
    ----------
    A : numpy.ndarray or scipy.sparse matrix
        The matrix.

    Returns
    -------
    float
        max |A_ij|.
    """
    data = cast("sp.csr_matrix", A).data if is_sparse(A) else A  # canonical CSR here: the engines' inputs pass canonical_csr
    return float(np.abs(data).max(initial=0.0))


def max_nnz_per_row(A) -> int:
    """The most non-zeros in one row of A (stored entries for a sparse matrix).

    Parameters
    ----------
    A : numpy.ndarray or scipy.sparse matrix
        The matrix.

    Returns
    -------
    int
        Largest number of non-zeros of a row.
    """
    if is_sparse(A):
        return int(np.diff(cast("sp.csr_matrix", A).indptr).max(initial=0))  # canonical CSR here: the engines' inputs pass canonical_csr
    return int(np.count_nonzero(A, axis=1).max(initial=0))
