"""RandomFeatureSGDClassifier: a linear model on random features trained batch by batch (``partial_fit``).

The random features of a batch are computed, used for one stochastic-gradient pass of scikit-learn's
``SGDClassifier.partial_fit`` and dropped, so memory is O(batch_size x n_components), independent of the
number of rows - the streaming training pyrfm offers, on scikit-learn's SGD engine.
"""
from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import SGDClassifier
from sklearn.utils import check_random_state, gen_batches
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..maps.distributions import DISTRIBUTIONS
from ..registry import MAPS, KernelSpec, make_map
from .common import _spec_or_default
from ..base.annotations import fit_context

if TYPE_CHECKING:
    from typing_extensions import Self


#: losses of SGDClassifier offered here; the first two give probabilities
SGD_LOSSES = ("log_loss", "modified_huber", "hinge", "squared_hinge")


class RandomFeatureSGDClassifier(ClassifierMixin, BaseEstimator):
    """A linear classifier on the random features of any registered map, trained by stochastic gradient
    descent one batch of rows at a time.

    ``partial_fit(X, y)`` maps X in batches of ``batch_size`` rows and hands each batch's features to
    ``SGDClassifier.partial_fit``; ``fit`` does ``max_iter`` such passes over X (rows shuffled per pass).
    The n x D feature matrix is never built: peak memory is about ``8 * batch_size * n_components`` bytes
    beside X itself (and X can arrive in chunks through ``partial_fit``). The map is fitted on the first
    batch it sees (RK, SCRK, TS and RM use only its number of features).

    Parameters
    ----------
    map_key : str, default="rk"
        A key of :data:`rkcore.registry.MAPS`.
    spec : KernelSpec, default=None
        Kernel the map approximates; None means second-order ANOVA.
    n_components : int, default=100
        D, the number of random features.
    distribution : str or None, default=None
        Weight distribution of the map (None: the map's default).
    loss : {"log_loss", "modified_huber", "hinge", "squared_hinge"}, default="log_loss"
        Loss of ``SGDClassifier``; "log_loss" gives the model's own probability (logistic regression),
        "modified_huber" SGDClassifier's probability estimate; the hinge losses have no ``predict_proba``.
    alpha : float, default=1e-4
        L2 penalty of ``SGDClassifier``.
    batch_size : int, default=1024
        Rows mapped at once.
    max_iter : int, default=5
        Passes over X in ``fit`` (``partial_fit`` makes one).
    random_state : int, RandomState instance or None, default=None
        Seeds the map, the SGD and the shuffling.

    Attributes
    ----------
    map_ : transformer
        The fitted random feature map.
    sgd_ : SGDClassifier
        The linear model on the features.
    classes_ : ndarray of shape (n_classes,)
    n_iter_ : int
        Passes over the data: ``max_iter`` after ``fit``, one per ``partial_fit`` call since the first.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.learners import RandomFeatureSGDClassifier
    >>> X = np.random.RandomState(0).randn(400, 5); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = RandomFeatureSGDClassifier(n_components=200, batch_size=100, max_iter=20, random_state=0)
    >>> clf.fit(X, y).score(X, y) > 0.8
    True
    """

    _parameter_constraints: dict = {
        "map_key": [StrOptions(set(MAPS))],
        "spec": [KernelSpec, None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "distribution": [StrOptions(set(DISTRIBUTIONS)), None],
        "loss": [StrOptions(set(SGD_LOSSES))],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    _expected_failed_checks = {
        "check_classifiers_train": (
            "the default kernel, second-order ANOVA, has no constant or linear term: on the check's "
            "two-feature blobs its features see only x1*x2, so training accuracy stays below 0.83"),
        "check_sample_weight_equivalence_on_dense_data": (
            "stochastic gradient descent visits a repeated sample twice and a weighted one once: the "
            "paths differ (scikit-learn declares the same for SGDClassifier)"),
        "check_sample_weight_equivalence_on_sparse_data": (
            "stochastic gradient descent visits a repeated sample twice and a weighted one once: the "
            "paths differ (scikit-learn declares the same for SGDClassifier)"),
    }

    def __init__(self, map_key="rk", *, spec=None, n_components=100, distribution=None, loss="log_loss",
                 alpha=1e-4, batch_size=1024, max_iter=5, random_state=None):
        self.map_key = map_key
        self.spec = spec
        self.n_components = n_components
        self.distribution = distribution
        self.loss = loss
        self.alpha = alpha
        self.batch_size = batch_size
        self.max_iter = max_iter
        self.random_state = random_state

    def _start(self, X, classes) -> None:
        """Fresh map and SGD model: the first ``partial_fit`` or every ``fit``."""
        rng = check_random_state(self.random_state)
        map_seed, sgd_seed = (int(s) for s in rng.randint(np.iinfo(np.int32).max, size=2))
        spec = _spec_or_default(self.spec)
        self.map_ = make_map(self.map_key, spec, self.n_components, distribution=self.distribution,
                             random_state=map_seed).fit(X[: self.batch_size])
        self.sgd_ = SGDClassifier(loss=self.loss, alpha=self.alpha, random_state=sgd_seed)
        self.classes_ = np.asarray(classes)
        self._shuffle_rng = np.random.RandomState(sgd_seed)

    def _learn(self, X, y, sample_weight, rows=None) -> None:
        """One SGD pass over X in batches (in the order ``rows`` when given)."""
        rows = np.arange(X.shape[0]) if rows is None else rows
        for batch in gen_batches(rows.size, self.batch_size):
            take = rows[batch]
            self.sgd_.partial_fit(self.map_.transform(X[take]), y[take], classes=self.classes_,
                                  sample_weight=sample_weight[take])

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None) -> Self:
        """Train from scratch: ``max_iter`` passes over X, batch by batch, rows shuffled per pass.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels (two or more classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights of the SGD loss.

        Returns
        -------
        self : object
            The fitted classifier.
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes in y; got 1 class ({classes[0]!r}).")
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        self._start(X, classes)
        for _ in range(self.max_iter):
            self._learn(X, y, sample_weight, self._shuffle_rng.permutation(X.shape[0]))
        self.n_iter_ = self.max_iter
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None) -> Self:
        """One SGD pass over this chunk of rows, batch by batch; the model keeps what it learnt before.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A chunk of training data.
        y : array-like of shape (n_samples,)
            Its class labels.
        classes : array-like of shape (n_classes,), default=None
            Every class of the whole stream; required on the first call, ignored afterwards.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights of the SGD loss.

        Returns
        -------
        self : object
            The updated classifier.
        """
        first_call = not hasattr(self, "sgd_")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, reset=first_call)
        check_classification_targets(y)
        if first_call:
            if classes is None:
                raise ValueError("classes must be given on the first call to partial_fit (every class of the "
                                 "stream, e.g. classes=[0, 1]).")
            self._start(X, np.unique(classes))
            self.n_iter_ = 0
        unknown = np.setdiff1d(y, self.classes_)
        if unknown.size:
            raise ValueError(f"y has label(s) {', '.join(map(repr, unknown[:5].tolist()))} not in classes "
                             f"{self.classes_.tolist()!r} given on the first call to partial_fit.")
        self._learn(X, y, _check_sample_weight(sample_weight, X, dtype=np.float64))
        self.n_iter_ += 1
        return self

    def _blockwise(self, X, method: str) -> np.ndarray:
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        parts = [getattr(self.sgd_, method)(self.map_.transform(X[rows]))
                 for rows in gen_batches(X.shape[0], self.batch_size)]
        return np.concatenate(parts) if parts else getattr(self.sgd_, method)(self.map_.transform(X))

    def decision_function(self, X):
        """Linear scores of the random features, computed batch by batch.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Two classes: > 0 predicts ``classes_[1]``; more: one column per class.
        """
        return self._blockwise(X, "decision_function")

    def predict(self, X) -> np.ndarray:
        """Predict class labels, batch by batch.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        return self._blockwise(X, "predict")

    @available_if(lambda self: self.loss in ("log_loss", "modified_huber"))
    def predict_proba(self, X):
        """Class probabilities of ``SGDClassifier``: the logistic model's own for "log_loss", SGDClassifier's
        estimate (clipped (f + 1) / 2, normalised) for "modified_huber".

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            One column per class of ``classes_``.
        """
        return self._blockwise(X, "predict_proba")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
