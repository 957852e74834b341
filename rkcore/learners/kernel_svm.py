"""ExactKernelSVC: a kernel SVM on any exact kernel of the registry (precomputed Gram matrices in row blocks)."""
from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..kernels.itemsets import check_degree_fits
from ..base.arrays import row_indexable
from ..kernels.exact import BLOCK_BYTES, row_blocks
from ..kernels.numerics import check_gram_fits, row_batches
from ..registry import KernelSpec
from .common import ProbabilityMixin, ScoreClassifierMixin, _spec_or_default
from ..base.annotations import fit_context

if TYPE_CHECKING:
    from typing_extensions import Self


# ----------------------------------------------------------------------------- kernel SVM
def _gram_blocks(spec: KernelSpec, n_rows: int, n_cols: int, block_size: int | None):
    if block_size is not None:
        return row_batches(n_rows, block_size)
    # a few (rows x n_cols) temporaries per row (power sums, Newton's identities)
    return row_blocks(n_rows, 8 * n_cols * (2 * spec.degree + 2), BLOCK_BYTES)


def exact_gram(spec: KernelSpec, A, B=None, block_size: int | None = None) -> np.ndarray:
    """The exact Gram matrix ``spec.exact(A, B)``, computed in row blocks of A.

    Parameters
    ----------
    spec : KernelSpec
        The kernel.
    A : {array-like, sparse matrix} of shape (n_A, n_features)
        Rows of the Gram matrix.
    B : {array-like, sparse matrix} of shape (n_B, n_features), default=None
        Columns; None means A.
    block_size : int or None, default=None
        Rows of A per block, or None for blocks of about 64 MB of temporaries.

    Returns
    -------
    K : ndarray of shape (n_A, n_B)
        K[i, j] = K(a_i, b_j).

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.learners import exact_gram
    >>> from rkcore.registry import KernelSpec
    >>> exact_gram(KernelSpec("dot"), np.eye(2)).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    A = row_indexable(A)  # any sparse format (COO is not subscriptable), a DataFrame; B as spec.exact takes it
    B = A if B is None else B
    check_gram_fits(A.shape[0], B.shape[0], 1)  # the result; each block prices its own temporaries
    out = np.empty((A.shape[0], B.shape[0]))
    for rows in _gram_blocks(spec, A.shape[0], B.shape[0], block_size):
        out[rows] = spec.exact(A[rows], B)
    return out


class ExactKernelSVC(ProbabilityMixin, ScoreClassifierMixin, BaseEstimator):
    r"""Kernel SVM on an exact kernel of the registry (libsvm, precomputed Gram matrices).

    .. math::
        f(\mathbf x) = \sum_{i \in SV} \alpha_i y_i K(\mathbf x_i, \mathbf x) + b

    with K given by ``spec.exact`` (ANOVA, all-subsets, itemset, polynomial, ...).
    ``fit`` computes the (n, n) training Gram matrix in row blocks and hands it to
    ``SVC(kernel="precomputed")``; memory is 8 n^2 bytes, as for any libsvm kernel SVM.
    Only the support vectors are kept, so prediction evaluates K(X, SV) (in row
    blocks) - the O(n_SV) evaluation cost of kernel methods the paper contrasts
    with random features.

    Parameters
    ----------
    spec : KernelSpec, default=None
        The kernel; None means ``KernelSpec()`` (second-order ANOVA).
    C : float, default=1.0
        SVM regularization: minimise C sum_i hinge_i + ||w||^2 / 2.
    block_size : int or None, default=None
        Rows per Gram block; None sizes blocks to about 64 MB of temporaries.
    probability : bool, default=False
        Also fit a sigmoid calibration sigma(a f(x)) of the decision function on 3-fold cross-validated
        decision values (three more SVM fits), which makes ``predict_proba`` available; see
        :class:`~rkcore.learners.common.ProbabilityMixin`. Not libsvm's own Platt scaling: that one has an
        intercept, so its most probable class can differ from ``predict``.
    tol, cache_size, class_weight, max_iter :
        Passed to :class:`sklearn.svm.SVC`.

    Attributes
    ----------
    svc_ : SVC
        The fitted libsvm model (on the precomputed kernel).
    probability_slope_ : float
        Slope a of ``predict_proba`` = sigma(a f(x)) (fitted with ``probability=True``; 1 otherwise, unused).
    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
    classes_, support_, n_support_, dual_coef_, intercept_, n_iter_, n_features_in_

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.learners import ExactKernelSVC
    >>> from rkcore.registry import KernelSpec
    >>> X = np.random.RandomState(0).randn(40, 5); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> ExactKernelSVC(KernelSpec("anova", 2), C=10.0).fit(X, y).score(X, y) > 0.8
    True
    """

    _parameter_constraints: dict = {
        "spec": [KernelSpec, None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "block_size": [Interval(Integral, 1, None, closed="left"), None],
        "probability": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "max_iter": [Interval(Integral, -1, None, closed="left")],
    }

    #: scikit-learn checks expected to fail with the default parameters, and why
    #: (pass to ``check_estimator(..., expected_failed_checks=...)``; see :func:`expected_failed_checks`).
    _expected_failed_checks = {
        "check_classifiers_train": (
            "the default kernel, second-order ANOVA, has no constant or linear term: on the check's "
            "two-feature blobs it sees only x1*x2, so training accuracy stays below the check's 0.83"),
        "check_sample_weight_equivalence_on_dense_data": (
            "libsvm's sample_weight rescales C per sample, which is not equivalent to removing or "
            "repeating samples (scikit-learn declares the same for SVC)"),
        "check_sample_weight_equivalence_on_sparse_data": (
            "libsvm's sample_weight rescales C per sample, which is not equivalent to removing or "
            "repeating samples (scikit-learn declares the same for SVC)"),
    }

    def __init__(self, spec=None, *, C=1.0, block_size=None, probability=False, tol=1e-3, cache_size=200,
                 class_weight=None, max_iter=-1):
        self.spec = spec
        self.C = C
        self.block_size = block_size
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.max_iter = max_iter

    def _gram(self, A, B) -> np.ndarray:
        return exact_gram(_spec_or_default(self.spec), A, B, block_size=self.block_size)

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None) -> Self:
        """Fit the SVM on the exact training Gram matrix K(X, X).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels (two or more classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights (libsvm rescales C per sample); None weighs every sample 1.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        spec = _spec_or_default(self.spec)
        check_degree_fits(spec.name, spec.degree, X.shape[1], type(self).__name__)
        svc = SVC(kernel="precomputed", C=self.C, tol=self.tol, cache_size=self.cache_size,
                  class_weight=self.class_weight, max_iter=self.max_iter)
        svc.fit(self._gram(X, X), y, sample_weight=sample_weight)
        self.svc_ = svc
        self.classes_ = svc.classes_
        self.support_ = svc.support_
        self.n_support_ = svc.n_support_
        self.dual_coef_ = svc.dual_coef_
        self.intercept_ = svc.intercept_
        self.n_iter_ = svc.n_iter_
        self.support_vectors_ = X[svc.support_]
        self._n_train = X.shape[0]
        self._fit_calibration(X, y, sample_weight)
        return self

    def _blockwise(self, X, fn):
        """Apply fn to K(X_block, SV) for row blocks of X; returns the list of results."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        n_sv = self.support_vectors_.shape[0]
        return [fn(self._gram(X[rows], self.support_vectors_))
                for rows in _gram_blocks(_spec_or_default(self.spec), X.shape[0], n_sv, self.block_size)]

    def _full_columns(self, K_sv: np.ndarray) -> np.ndarray:
        """libsvm's precomputed interface wants all n_train columns; it reads only the SV ones."""
        K = np.zeros((K_sv.shape[0], self._n_train))
        K[:, self.support_] = K_sv
        return K

    def decision_function(self, X):
        """Signed distance to the separating surface in the kernel's feature space.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: sum_i dual_coef_i K(sv_i, x) + intercept (> 0 means ``classes_[1]``);
            more classes: SVC's one-vs-one scores.
        """
        check_is_fitted(self)
        if len(self.classes_) == 2:
            coef, b = self.dual_coef_[0], self.intercept_[0]
            parts = self._blockwise(X, lambda K: K @ coef + b)
        else:
            parts = self._blockwise(X, lambda K: self.svc_.decision_function(self._full_columns(K)))
        return np.concatenate(parts)

    def _predict_multiclass(self, X) -> np.ndarray:
        # more classes: SVC's one-vs-one vote (ScoreClassifierMixin.predict handles two)
        return np.concatenate(self._blockwise(X, lambda K: self.svc_.predict(self._full_columns(K))))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
