"""Helpers shared by the learners: losses and their derivatives, label checks, products with sparse X."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit
from sklearn.base import ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..base.limits import check_allocation, nbytes
from ..registry import KernelSpec
from ..base.annotations import is_sparse


LOSSES = ("squared_hinge", "logistic")
CLASSIFIERS = ("linear_svc", "logistic")


# ----------------------------------------------------------------------------- the learners' predict
class ScoreClassifierMixin(ClassifierMixin):
    """``predict`` from ``decision_function``, once for every learner: two classes, a score > 0 predicts
    ``classes_[1]``; more classes, :meth:`_predict_multiclass` (the largest of one score per class, unless
    the learner votes otherwise)."""

    def predict(self, X) -> np.ndarray:
        """Predict class labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels, taken from ``classes_``.
        """
        check_is_fitted(self)
        if len(self.classes_) > 2:
            return self._predict_multiclass(X)
        return self.classes_[(self.decision_function(X) > 0).astype(np.intp)]

    def _predict_multiclass(self, X) -> np.ndarray:
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]


# ----------------------------------------------------------------------------- probabilities
#: folds of the cross-validated decision values the sigmoid calibration is fitted on
CALIBRATION_FOLDS = 3
#: smallest calibrated slope: keeps sigma(a f) increasing in f, so the most probable class stays the predicted one
MIN_SLOPE = 1e-12


def _has_probability(estimator) -> bool:
    return getattr(estimator, "loss", None) == "logistic" or bool(getattr(estimator, "probability", False))


class ProbabilityMixin:
    """``predict_proba`` for the score classifiers: with ``loss="logistic"`` the model's own probability
    sigma(f(x)); otherwise (``probability=True``) a sigmoid calibration sigma(a f(x)) of the decision
    function, a > 0 fitted by scikit-learn's ``LogisticRegression`` (Platt scaling without intercept) on
    decision values cross-validated over ``CALIBRATION_FOLDS`` stratified folds (in-sample when a class
    has fewer members than that). Without an intercept the threshold f = 0 stays at probability 1/2, so
    the most probable class is always the predicted one and the probabilities rank like the scores.
    More than two classes: one sigmoid per class against the rest, normalised to sum 1 (as
    ``OneVsRestClassifier``)."""

    if TYPE_CHECKING:  # provided by the estimator the mixin is combined with
        classes_: np.ndarray

        def decision_function(self, X) -> np.ndarray: ...

    def _own_probability(self) -> bool:
        return getattr(self, "loss", None) == "logistic"

    def _fit_calibration(self, X, y, sample_weight=None) -> None:
        """Set ``probability_slope_``: 1 for the logistic loss, the fitted a with ``probability=True``."""
        if self._own_probability() or not getattr(self, "probability", False):
            self.probability_slope_ = 1.0
            return
        _, counts = np.unique(y, return_counts=True)
        folds = min(CALIBRATION_FOLDS, int(counts.min()))
        if folds >= 2:
            plain = clone(self).set_params(probability=False)
            params = {} if sample_weight is None else {"sample_weight": sample_weight}
            scores = cross_val_predict(plain, X, y, cv=StratifiedKFold(folds), method="decision_function",
                                       params=params)
        else:
            scores = self.decision_function(X)
        if scores.ndim == 1:
            scores, targets = scores, (y == self.classes_[1])
        else:
            targets = (y[:, None] == self.classes_[None, :]).ravel()
            scores = scores.ravel()
        if targets.all() or not targets.any():
            self.probability_slope_ = MIN_SLOPE
            return
        platt = LogisticRegression(fit_intercept=False, C=1e6).fit(scores[:, None], targets)
        self.probability_slope_ = max(float(platt.coef_[0, 0]), MIN_SLOPE)

    @available_if(_has_probability)
    def predict_proba(self, X):
        """Class probabilities: sigma(f(x)) for the logistic loss, else the sigmoid calibration fitted
        with ``probability=True`` (see :class:`ProbabilityMixin`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            One column per class of ``classes_``; rows sum to 1.
        """
        check_is_fitted(self, "probability_slope_")
        p = expit(self.probability_slope_ * self.decision_function(X))
        if p.ndim == 1:
            return np.column_stack([1.0 - p, p])
        total = p.sum(axis=1, keepdims=True)
        return np.divide(p, total, out=np.full_like(p, 1.0 / p.shape[1]), where=total > 0)

    @available_if(_has_probability)
    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            ``log(predict_proba(X))``.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


# ----------------------------------------------------------------------------- helpers
def _fit_one_vs_rest(estimator, X, y, sample_weight) -> None:
    """One binary model per class (labels 1 for the class, 0 for the rest), each a clone with the same
    parameters and seed - the models ``OneVsRestClassifier`` fits; their attributes stacked per class."""
    estimator.classes_ = np.unique(y)
    binary = clone(estimator).set_params(probability=False)
    estimator.estimators_ = [clone(binary).fit(X, (y == c).astype(np.intp), sample_weight=sample_weight)
                        for c in estimator.classes_]
    for name in estimator._per_class_attributes:
        setattr(estimator, name, np.array([getattr(e, name) for e in estimator.estimators_]))
    estimator.n_iter_ = np.array([e.n_iter_ for e in estimator.estimators_])
    estimator.converged_ = all(e.converged_ for e in estimator.estimators_)
    estimator.objective_ = np.array([e.objective_ for e in estimator.estimators_])
    estimator.objective_history_ = [e.objective_history_ for e in estimator.estimators_]
    estimator.optimizer_message_ = [e.optimizer_message_ for e in estimator.estimators_]


def _spec_or_default(spec) -> KernelSpec:
    return KernelSpec() if spec is None else spec


def _loss_and_derivative(loss: str, y: np.ndarray, f: np.ndarray):
    """Per-sample loss L(y, f) and dL/df for labels y in {-1, +1}.

    logistic: log(1 + exp(-y f)); squared hinge: max(0, 1 - y f)^2.
    """
    z = y * f
    if loss == "logistic":
        return np.logaddexp(0.0, -z), -y * expit(-z)
    margin = np.maximum(0.0, 1.0 - z)
    return margin * margin, -2.0 * y * margin


def _rmatmul(X, M: np.ndarray) -> np.ndarray:
    """X^T @ M as a dense array (X dense or sparse)."""
    out = X.T @ M
    return out.toarray() if is_sparse(out) else np.asarray(out)


def _binary_labels(estimator, y) -> np.ndarray:
    """Set ``classes_`` and return y as -1/+1 (one binary problem; more classes are fitted one against the rest)."""
    check_classification_targets(y)
    encoder = LabelEncoder().fit(y)
    estimator.classes_ = encoder.classes_
    if len(estimator.classes_) != 2:
        raise ValueError(
            f"{type(estimator).__name__} needs at least 2 classes; y has {len(estimator.classes_)} class(es) "
            f"({', '.join(map(str, estimator.classes_[:10]))})."
        )
    return 2.0 * encoder.transform(y) - 1.0


def _check_finite_decision(f: np.ndarray, name: str) -> None:
    """Refuse decision values that overflowed float64 instead of predicting from NaN or inf."""
    bad = ~np.isfinite(f)
    if bad.any():
        raise ValueError(
            f"{name}: the decision value of {int(bad.sum())} of {f.size} sample(s) overflows float64 "
            f"(first: sample {int(np.flatnonzero(bad)[0])}); their feature values are too large in "
            "magnitude for this model. Rescale X, e.g. rkcore.data.datasets.normalize(X, 'l1')."
        )


def expected_failed_checks(estimator) -> dict[str, str]:
    """The scikit-learn estimator checks this estimator is expected to fail with its default
    parameters, each with the reason: ``check_estimator(est, expected_failed_checks=...)``.

    Parameters
    ----------
    estimator : estimator instance
        The estimator to look up.

    Returns
    -------
    dict of str to str
        Check name to the reason it fails; empty when none are expected to fail.
    """
    return dict(getattr(estimator, "_expected_failed_checks", {}))


#: k x d arrays a factorization model's fit holds: P, its gradient, L-BFGS-B's 10 correction pairs and their
#: temporaries (priced before the first is drawn: n_components = 1e9 asked numpy for 29.8 GiB)
FACTOR_COPIES = 24


def check_factor_memory(n_components: int, d: int) -> None:
    """Refuse a factorization model whose factors would not fit the memory budget, naming the largest
    n_components that fits (:func:`rkcore.base.limits.check_allocation`).

    Parameters
    ----------
    n_components : int
        Rank k of the factors P (k x d).
    d : int
        Number of features.
    """
    check_allocation("The factors P and L-BFGS-B's copies of them", (FACTOR_COPIES, n_components, d),
                     hint="Lower n_components.", largest={"n_components": lambda k: nbytes((FACTOR_COPIES, k, d))})
