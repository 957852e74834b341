"""Helpers that let the type checker follow the code: a sparse test that narrows to scipy's sparse base class
and scikit-learn's fit decorator with the decorated method's signature kept.

Why: scipy-stubs types ``scipy.sparse.issparse`` as narrowing to an abstract class that declares no methods,
so ``X.toarray()`` after it is an error; and ``sklearn.base._fit_context`` is untyped (scikit-learn ships no
annotations), so a method it decorates becomes ``Any`` and ``fit(...)`` would lose its ``Self`` return.
At run time both are exactly scipy's and scikit-learn's functions.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, TypeVar

import scipy.sparse as sp
from sklearn.base import _fit_context

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from typing_extensions import TypeAlias, TypeIs

    #: what the random feature maps' transform returns: float64 features, float32 for float32 input
    Features: TypeAlias = NDArray[np.float64] | NDArray[np.float32]

    #: every scipy sparse format, matrix and array (scipy-stubs' common base class declares neither ``dtype``
    #: nor a usable ``tocsr``, so the union of the concrete classes is what the checker can follow)
    SparseMatrix: TypeAlias = (sp.csr_matrix | sp.csr_array | sp.csc_matrix | sp.csc_array | sp.coo_matrix
                               | sp.coo_array | sp.bsr_matrix | sp.bsr_array | sp.dia_matrix | sp.dia_array
                               | sp.lil_matrix | sp.lil_array | sp.dok_matrix | sp.dok_array)

_Method = TypeVar("_Method", bound=Callable[..., Any])


def is_sparse(x: object) -> TypeIs[SparseMatrix]:
    """Whether ``x`` is a scipy sparse matrix or array (``scipy.sparse.issparse``), typed so that the checker
    knows a sparse ``x`` has the sparse methods.

    Parameters
    ----------
    x : object
        Any object.

    Returns
    -------
    bool
        True for a scipy sparse matrix or array of any format.
    """
    return sp.issparse(x)


if TYPE_CHECKING:
    def fit_context(*, prefer_skip_nested_validation: bool) -> Callable[[_Method], _Method]:
        """scikit-learn's ``_fit_context`` as the checker sees it: the decorated method keeps its type."""
        ...
else:
    fit_context = _fit_context
