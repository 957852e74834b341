"""Sparse input read the way the matrix itself reads: a canonical float64 CSR copy, duplicate entries given
the matrix's own value (or refused where that value is ambiguous)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from ..base.annotations import is_sparse


def canonical_csr(X, name: str = "X") -> sp.csr_matrix:
    """A float64 CSR copy of the sparse matrix X in canonical form: duplicates summed, explicit
    zeros dropped, indices sorted. Always a copy: scipy canonicalizes in place (``sum_duplicates``,
    ``sort_indices``, ``max``, ...).

    **Duplicate entries** (one (row, column) stored twice) take the value the matrix itself has
    (``X.toarray()``, duplicates summed in X's own dtype), so that every format agrees (scipy's
    COO-to-CSR conversion sums in the native dtype, a float64 cast of the CSR arrays would sum
    after casting):

    * float: summed in float64 (the matrix's value up to its own rounding);
    * bool: True + True is True (logical or), as ``toarray()`` shows; not 2.0, a value the matrix
      never holds;
    * integers: their sum where it fits the dtype; where it does not (int8: 100 + 100), scipy's
      value is a wrapped-around -56 and the arithmetic sum 200 is not the matrix's value either:
      refused with a clear error (likewise a float16 / float32 sum beyond that type's range).

    Parameters
    ----------
    X : scipy.sparse matrix of shape (n, d)
        Any sparse format and real dtype; not modified.
    name : str, default="X"
        Its name in the error message.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, d)
        A new float64 CSR matrix in canonical form.

    Raises
    ------
    ValueError
        When duplicate entries overflow the matrix's dtype (their value is ambiguous).
    """
    if not is_sparse(X):  # dense input (no duplicates): as before, a float64 CSR copy
        out = sp.csr_matrix(X, dtype=np.float64, copy=True)
        out.eliminate_zeros()
        return out
    dtype = X.dtype
    stored = X.nnz
    if dtype == np.bool_:
        native = sp.csr_matrix(X, copy=True)
        native.sum_duplicates()  # logical or: the matrix's own value
        out = native.astype(np.float64)
    else:
        out = sp.csr_matrix(X.astype(np.float64))  # cast first: COO's conversion would sum in the dtype
        if out is X or out.data is getattr(X, "data", None):
            out = out.copy()
        out.sum_duplicates()
        if dtype != np.float64 and out.nnz < stored:
            _check_duplicates_fit(X, out, name)
    out.eliminate_zeros()
    return out


def _check_duplicates_fit(X, summed: sp.csr_matrix, name: str) -> None:
    """Refuse duplicates whose sum in X's dtype overflows (then their value is ambiguous)."""
    native = sp.csr_matrix(X, copy=True)
    with np.errstate(over="ignore"):
        native.sum_duplicates()
    if np.issubdtype(X.dtype, np.integer):
        fits = (native.astype(np.float64) != summed).nnz == 0
    else:
        fits = bool(np.isfinite(native.data).all())
    if not fits:
        raise ValueError(
            f"{name} stores some entries twice (the same row and column), and their sum does not fit its type "
            f"{X.dtype}: the matrix's own value there (its toarray()) has wrapped around or overflowed, so it is "
            f"ambiguous. Convert {name} to float64 first ({name}.astype(float)) or sum the duplicates yourself.")
