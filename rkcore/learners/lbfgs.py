"""The binary classifier fitted by L-BFGS-B on analytic gradients that the factorization machine and the all-subsets
model share: loss, penalty, one-vs-rest for many classes, probabilities, the fit loop."""
from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, is_classifier
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..kernels.numerics import canonical_csr
from .common import (
    ProbabilityMixin, ScoreClassifierMixin, _binary_labels, _check_finite_decision, _fit_one_vs_rest,
    _loss_and_derivative, check_factor_memory,
)
from ..base.annotations import fit_context, is_sparse

if TYPE_CHECKING:
    from typing_extensions import Self


class _LBFGSBinaryClassifier(ProbabilityMixin, ScoreClassifierMixin, BaseEstimator):
    """Shared machinery: labels, sample weights, L-BFGS-B with history and convergence report; more than
    two classes, one binary model per class against the rest (``estimators_``), fitted as
    ``OneVsRestClassifier`` would (each a clone with the same parameters and seed).

    Subclasses provide ``_prepare(X)`` (data in the form the model needs), ``_initial(rng, d, scale)`` (flat
    parameter vector), ``_value_and_grad(theta, data, y, s)`` returning (objective, gradient, decision values),
    ``_store(theta, d)`` and ``_decision(data)``.
    """

    _expected_failed_checks = {
        name: ("the weighted and the repeated-samples objectives have the same minimiser, but L-BFGS-B stops at "
               "tolerance tol along different paths, so the fitted models agree to about tol, not to the check's rtol=1e-7")
        for name in ("check_sample_weight_equivalence_on_dense_data",
                     "check_sample_weight_equivalence_on_sparse_data")
    }

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None) -> Self:
        """Minimise the regularized objective with L-BFGS-B (see the class docstring).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels (two or more classes; more than two are fitted one against the rest).
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights in the mean loss (weight 2 counts a sample twice); None weighs every sample 1.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        X = canonical_csr(X) if is_sparse(X) else X  # a copy: the caller's matrix is never changed
        self._check_features(X)
        check_factor_memory(self.n_components, X.shape[1])
        self.__dict__.pop("estimators_", None)  # a refit on two classes drops the per-class models
        if not is_classifier(self):
            return self._optimize(X, y, sample_weight)
        check_classification_targets(y)
        if np.unique(y).size > 2:
            _fit_one_vs_rest(self, X, y, sample_weight)
        else:
            self._optimize(X, y, sample_weight)
        self._fit_calibration(X, y, sample_weight)
        return self

    def _check_features(self, X) -> None:
        """Refuse training data the model cannot use (a hook; nothing to check by default)."""

    def _targets(self, y):
        """The targets the loss sees: -1/+1 labels here (sets ``classes_``); a regressor returns y itself."""
        return _binary_labels(self, y)

    def _loss(self, y, f):
        """Per-sample loss and its derivative in f (a regressor overrides it with the squared loss)."""
        return _loss_and_derivative(self.loss, y, f)

    def _optimize(self, X, y, sample_weight):
        y_pm = self._targets(y)
        s = _check_sample_weight(sample_weight, X, dtype=np.float64)
        if (s < 0).any():
            raise ValueError(f"sample_weight must be >= 0; got {int((s < 0).sum())} negative weight(s) (smallest {s.min()!r}).")
        if s.sum() <= 0:
            raise ValueError("sample_weight must have a positive sum; got all zeros.")
        s = s / s.sum()  # weighted mean loss: weight 2 == the sample twice
        rng = check_random_state(self.random_state)
        data = self._prepare(X)
        theta0 = self._initial(rng, X.shape[1], self._init_std(X))

        def fun(theta):
            value, grad, _ = self._value_and_grad(theta, data, y_pm, s)
            return value, grad

        history = [fun(theta0)[0]]
        if not np.isfinite(history[0]):
            raise ValueError(
                f"{type(self).__name__}: the objective at the starting point is not a finite number: "
                "the model's values overflow float64 on this data (feature values too large in "
                "magnitude). Rescale X, e.g. rkcore.data.datasets.normalize(X, 'l1')."
            )
        res = minimize(fun, theta0, jac=True, method="L-BFGS-B",
                       callback=lambda intermediate_result: history.append(float(intermediate_result.fun)),
                       options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": self.tol * 1e-3})
        self.n_iter_ = int(res.nit)
        self.converged_ = bool(res.status == 0)
        self.objective_ = float(res.fun)
        self.objective_history_ = np.asarray(history)
        self.optimizer_message_ = str(res.message)
        self._store(res.x, X.shape[1])
        if not self.converged_:
            warnings.warn(
                f"{type(self).__name__} did not converge in {self.n_iter_} L-BFGS-B iterations "
                f"(max_iter={self.max_iter}, tol={self.tol}): {res.message}. Increase max_iter or tol.",
                ConvergenceWarning,
            )
        return self

    def _init_std(self, X) -> float:
        """Standard deviation of the initial factors; "auto" makes std <p_s, x> = 0.1 on average.

        For p with i.i.d. N(0, s^2) entries, Var <p, x> = s^2 ||x||^2, so
        s = 0.1 / sqrt(mean_i ||x_i||^2).
        """
        if not isinstance(self.init_scale, str):
            return float(self.init_scale)
        mean_sq_norm = float(X.multiply(X).sum() if is_sparse(X) else np.sum(X * X)) / X.shape[0]
        return 0.1 / np.sqrt(mean_sq_norm) if mean_sq_norm > 0 else 0.1

    def decision_function(self, X):
        """Real-valued model output f(x).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        f : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Two classes: f > 0 predicts ``classes_[1]``; more: one column per class (its model against the rest).
        """
        check_is_fitted(self)
        if hasattr(self, "estimators_"):
            X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
            return np.column_stack([e.decision_function(X) for e in self.estimators_])
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        X = canonical_csr(X) if is_sparse(X) else X  # a copy: the caller's matrix is never changed
        f = self._decision(self._prepare(X))
        _check_finite_decision(f, type(self).__name__)
        return f

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
