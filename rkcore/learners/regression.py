r"""Learners for a real-valued target (e.g. MovieLens ratings) and for many classes.

* :class:`FactorizationMachineRegressor` - the higher-order factorization machine of
  :class:`~rkcore.learners.FactorizationMachineClassifier` with the squared loss (f(x) - y)^2 / 2, same model,
  same analytic gradients, same L-BFGS-B fit.
* :class:`ExactKernelRidge` - kernel ridge regression on an exact kernel of the registry (the reference the
  random-feature regressors approximate).
* :func:`random_feature_ridge` - linear ridge regression on any registered random feature map.
* :func:`for_many_classes` - kept for old callers: every learner now handles many classes itself (the
  factorization machines and the all-subsets model fit one binary model per class against the rest inside,
  kernel SVM: libsvm one-vs-one; linear SVM: liblinear one-vs-rest; sparse RF), so it returns the estimator.
"""
from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import Ridge
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import Pipeline
from sklearn.utils._param_validation import Interval
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..kernels.itemsets import check_degree_fits
from ..registry import KernelSpec, make_map
from .common import _spec_or_default
from .all_subsets_model import AllSubsetsModelClassifier
from .factorization_machine import FactorizationMachineClassifier
from .lbfgs import _LBFGSBinaryClassifier
from .kernel_svm import exact_gram
from ..base.annotations import fit_context

if TYPE_CHECKING:
    from typing_extensions import Self


#: The classifiers that need a one-vs-rest wrapper for more classes: none since the factorization machine and
#: the all-subsets model fit one model per class themselves.
BINARY_BY_NATURE: tuple = ()


def for_many_classes(estimator, y):
    """``OneVsRestClassifier(estimator)`` if ``estimator`` is binary by nature and y has more than two classes,
    else ``estimator`` itself - which, since every learner handles many classes itself, is always the case
    (kept for old callers).

    Parameters
    ----------
    estimator : estimator instance
        The classifier to wrap if needed.
    y : array-like
        Training labels.

    Returns
    -------
    estimator instance
        ``OneVsRestClassifier(estimator)`` or ``estimator``.
    """
    if isinstance(estimator, BINARY_BY_NATURE) and np.unique(y).size > 2:
        return OneVsRestClassifier(estimator)
    return estimator


class FactorizationMachineRegressor(RegressorMixin, FactorizationMachineClassifier):
    r"""Higher-order factorization machine for regression: the model f(x) of
    :class:`~rkcore.learners.FactorizationMachineClassifier` (ANOVA order m, rank k, fixed signs lambda_s) with
    the squared loss,

    .. math:: \min_{b, \mathbf w, \mathbf P}\ \sum_i \tilde s_i\, \tfrac12 (f(\mathbf x_i) - y_i)^2
              + \tfrac{\alpha}{2}\|\mathbf w\|^2 + \tfrac{\beta}{2}\|\mathbf P\|_F^2,

    fitted by L-BFGS-B on the same analytic gradients. ``fit_linear`` defaults to True here (ratings have
    strong per-feature effects); the intercept starts at the weighted mean of y.

    Parameters
    ----------
    degree : int, default=2
        Order m >= 2 of the ANOVA kernel.
    n_components : int, default=30
        Rank k of the factors.
    alpha : float, default=1e-4
        L2 penalty of the linear term w.
    beta : float, default=1e-4
        L2 penalty of the factors P.
    fit_linear : bool, default=True
        Add the linear term <w, x>.
    fit_intercept : bool, default=True
        Add an unpenalised bias b.
    lambdas : {"random_signs", "ones"}, default="random_signs"
        Fixed signs lambda_s: i.i.d. +-1 or all +1.
    max_iter : int, default=200
        L-BFGS-B iterations.
    tol : float, default=1e-6
        Stop when the largest gradient entry is below ``tol``.
    init_scale : float or "auto", default=0.01
        Standard deviation of the initial factors ("auto": scaled to the data).
    random_state : int, RandomState instance or None, default=None
        Seeds the initial factors and the signs lambda_s.

    Attributes
    ----------
    P_, lambdas_, coef_, intercept_, n_iter_, converged_, objective_, objective_history_, n_features_in_

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.learners import FactorizationMachineRegressor
    >>> X = np.random.RandomState(0).randn(200, 5); y = 3 + X[:, 0] * X[:, 1]
    >>> FactorizationMachineRegressor(n_components=4, random_state=0).fit(X, y).score(X, y) > 0.9
    True
    """

    _parameter_constraints: dict = {k: v for k, v in FactorizationMachineClassifier._parameter_constraints.items()
                                    if k not in ("loss", "probability")}

    def __init__(self, degree=2, *, n_components=30, alpha=1e-4, beta=1e-4, fit_linear=True, fit_intercept=True,
                 lambdas="random_signs", max_iter=200, tol=1e-6, init_scale=0.01, random_state=None):
        super().__init__(degree, n_components=n_components, alpha=alpha, beta=beta, fit_linear=fit_linear,
                         fit_intercept=fit_intercept, lambdas=lambdas, max_iter=max_iter, tol=tol,
                         init_scale=init_scale, random_state=random_state)
        del self.loss, self.probability  # not parameters here: the loss is squared, the output a number

    loss = "squared"  # read by the classifier's machinery; a class constant, not a parameter
    probability = False

    def _targets(self, y):
        y = np.asarray(y, dtype=np.float64)
        if not np.isfinite(y).all():
            raise ValueError("y must be finite numbers (a regression target); found NaN or infinity.")
        return y

    def _loss(self, y, f):
        residual = f - y
        return 0.5 * residual * residual, residual

    def _initial(self, rng, d, scale):
        theta = super()._initial(rng, d, scale)
        if self.fit_intercept:
            theta[0] = self._y_mean  # start at the mean: the factors then fit the variation
        return theta

    def _optimize(self, X, y, sample_weight):
        y = self._targets(y)
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64)  # (the parent refuses bad values)
        self._y_mean = float(weights @ y / weights.sum()) if (weights >= 0).all() and weights.sum() > 0 else 0.0
        return super()._optimize(X, y, sample_weight)

    def predict(self, X) -> np.ndarray:
        """f(x) for each row.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        return _LBFGSBinaryClassifier.decision_function(self, X)

    @available_if(lambda self: False)
    def decision_function(self, X):
        """Not offered: a regressor's output is :meth:`predict`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Unused: the method is hidden (``hasattr(model, "decision_function")`` is False).
        """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.classifier_tags = None  # set by the classifier's machinery this reuses; a regressor has none
        return tags


class ExactKernelRidge(RegressorMixin, BaseEstimator):
    r"""Kernel ridge regression with an unpenalised intercept on an exact kernel of the registry:
    f = b + K(., X) c with c = (K + alpha I)^{-1} (y - b 1), b = 1'(K + alpha I)^{-1} y / 1'(K + alpha I)^{-1} 1,
    the exact counterpart of Ridge (with its intercept) on random features of the same kernel; K from
    ``spec.exact`` in row blocks. Memory 8 n^2 bytes; prediction evaluates K(X_new, X_train).

    Parameters
    ----------
    spec : KernelSpec, default=None
        The kernel; None means second-order ANOVA.
    alpha : float, default=1.0
        Ridge penalty.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (n_train,)
    intercept_ : float
    X_fit_ : ndarray or sparse matrix of shape (n_train, n_features)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.learners import ExactKernelRidge
    >>> X = np.random.RandomState(0).randn(60, 4); y = X[:, 0] * X[:, 1]
    >>> ExactKernelRidge(alpha=1e-3).fit(X, y).score(X, y) > 0.99
    True
    """

    _parameter_constraints: dict = {"spec": [KernelSpec, None], "alpha": [Interval(Real, 0, None, closed="neither")]}

    #: scikit-learn checks expected to fail with the default parameters, and why (see expected_failed_checks)
    _expected_failed_checks = {
        "check_regressors_train": (
            "the default kernel, second-order ANOVA, has no linear term: the check's target is linear in one "
            "feature, which sums of products x_i x_j cannot fit (R^2 stays below the check's 0.5)"),
    }

    def __init__(self, spec=None, *, alpha=1.0):
        self.spec = spec
        self.alpha = alpha

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None) -> Self:
        """Solve (K + alpha I) c = y on the exact training Gram matrix.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Regression targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative sample weights; a zero weight drops the sample. None weighs all equally.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, y_numeric=True)
        spec = _spec_or_default(self.spec)
        check_degree_fits(spec.name, spec.degree, X.shape[1], type(self).__name__)
        weights = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        keep = weights > 0  # a zero weight removes the sample
        if not keep.any():
            raise ValueError("sample_weight must have a positive entry.")
        X, y, weights = X[keep], y[keep], weights[keep]
        # An unpenalised intercept b, as Ridge's on features: min sum_i s_i (y_i - b - f(x_i))^2 + alpha ||f||^2
        # gives c = M^-1 (y - b 1) with M = K + alpha S^-1 and b = 1' M^-1 y / 1' M^-1 1 (the residual is
        # alpha S^-1 M^-1 (y - b 1), whose weighted sum must vanish).
        M = exact_gram(spec, X)
        M[np.diag_indices_from(M)] += self.alpha / weights
        solved = scipy.linalg.solve(M, np.column_stack([y, np.ones_like(y)]), assume_a="pos")
        self.intercept_ = float(solved[:, 0].sum() / solved[:, 1].sum())
        self.dual_coef_ = solved[:, 0] - self.intercept_ * solved[:, 1]
        self.X_fit_ = X
        return self

    def predict(self, X) -> np.ndarray:
        """Predictions K(X, X_fit_) dual_coef_.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            intercept_ + K(X, X_fit_) dual_coef_.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return exact_gram(_spec_or_default(self.spec), X, self.X_fit_) @ self.dual_coef_ + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def random_feature_ridge(map_key: str, spec: KernelSpec | None = None, n_components: int = 100,
                         distribution: str | None = None, random_state=None, alpha: float = 1.0) -> Pipeline:
    """``Pipeline([("map", the registry map), ("reg", Ridge(alpha))])``: linear ridge regression on random
    features, the random-feature counterpart of :class:`ExactKernelRidge` on the kernel the map approximates.

    >>> import numpy as np
    >>> from rkcore.learners import random_feature_ridge
    >>> X = np.random.RandomState(0).randn(300, 4); y = X[:, 0] * X[:, 1]
    >>> random_feature_ridge("rk", n_components=400, random_state=0, alpha=1e-3).fit(X, y).score(X, y) > 0.9
    True

    Parameters
    ----------
    map_key : str
        Registry key of the feature map.
    spec : KernelSpec or None, optional
        The kernel; None means second-order ANOVA.
    n_components : int, default 100
        Number of random features D.
    distribution : str or None, optional
        Weight distribution key; None uses the map's default.
    random_state : int, RandomState instance or None, optional
        Seeds the map.
    alpha : float, default 1.0
        Ridge penalty.

    Returns
    -------
    sklearn.pipeline.Pipeline
        The unfitted pipeline.
    """
    spec = _spec_or_default(spec)
    feature_map = make_map(map_key, spec, n_components, distribution=distribution, random_state=random_state)
    return Pipeline([("map", feature_map), ("reg", Ridge(alpha=alpha))])
