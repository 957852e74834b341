"""Helpers shared by the learners: losses and their derivatives, label checks, products with sparse X."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import ClassifierMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from ..registry import KernelSpec


LOSSES = ("squared_hinge", "logistic")
CLASSIFIERS = ("linear_svc", "logistic")


# ----------------------------------------------------------------------------- the learners' predict
class ScoreClassifierMixin(ClassifierMixin):
    """``predict`` from ``decision_function``, once for every learner: two classes, a score > 0 predicts
    ``classes_[1]``; more classes, :meth:`_predict_multiclass` (the largest of one score per class, unless
    the learner votes otherwise)."""

    def predict(self, X):
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


# ----------------------------------------------------------------------------- helpers
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
    return out.toarray() if sp.issparse(out) else np.asarray(out)


def _binary_labels(estimator, y) -> np.ndarray:
    """Set ``classes_`` and return y as -1/+1; these models are binary classifiers."""
    check_classification_targets(y)
    encoder = LabelEncoder().fit(y)
    estimator.classes_ = encoder.classes_
    if len(estimator.classes_) != 2:
        raise ValueError(
            f"Only binary classification is supported. {type(estimator).__name__} needs exactly 2 classes; "
            f"y has {len(estimator.classes_)} class(es) ({', '.join(map(str, estimator.classes_[:10]))}). For more classes, "
            "wrap it in sklearn.multiclass.OneVsRestClassifier."
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
