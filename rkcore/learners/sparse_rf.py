"""SparseRandomFeatureClassifier: Sparse Random Features (Yen et al., NIPS 2014) over any registered map."""
from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import LabelEncoder
from sklearn.svm import LinearSVC
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..maps.distributions import DISTRIBUTIONS
from ..kernels.itemsets import check_degree_fits
from ..registry import MAPS, KernelSpec, make_map
from .common import ProbabilityMixin, ScoreClassifierMixin, _loss_and_derivative, LOSSES, _spec_or_default
from ..base.annotations import fit_context

if TYPE_CHECKING:
    from typing_extensions import Self


# ----------------------------------------------------------------------------- sparse random features
class SparseRandomFeatureClassifier(ProbabilityMixin, ScoreClassifierMixin, BaseEstimator):
    r"""Sparse Random Features (Yen, Lin, Lin, Ravikumar & Dhillon, NIPS 2014, Algorithm 1).

    Fully corrective randomized coordinate descent on the l1-regularized problem
    over random features ``phi_h(x)`` of any registered map:

    .. math::
        \min_{\mathbf w}\ \|\mathbf w\|_1 + C \sum_i L\big(y_i, \textstyle\sum_{h \in A} w_h \phi_h(\mathbf x_i) + b\big)

    (Yen et al.'s eq. 9 with lambda = 1 / (N C)). Starting from an empty working set A,
    each of the ``n_iter`` iterations

    1. draws ``batch`` new features: a fresh map from :func:`rkcore.registry.make_map`
       with its own seed and ``n_components=batch``, fitted on X;
    2. adds them to A;
    3. solves the l1 problem on A with liblinear
       (``LinearSVC(penalty="l1", dual=False)`` or ``LogisticRegression(l1_ratio=1,
       solver="liblinear")``, one-vs-rest for more than two classes);
    4. removes the features whose weight is zero (in every class).

    Features are kept as (fitted map, column indices); ``predict`` maps X only
    through the maps that still own a kept column. Note a map evaluates all of its
    ``batch`` columns before the kept ones are selected.

    Parameters
    ----------
    map_key : str, default="rk"
        A key of :data:`rkcore.registry.MAPS`.
    spec : KernelSpec, default=None
        Kernel the map approximates; None means ``KernelSpec()`` (ANOVA, m = 2).
    distribution : str or None, default=None
        Weight distribution of the map (None: the map's default).
    C : float, default=1.0
        Inverse l1 regularization.
    n_iter : int, default=10
        Number of iterations T (features drawn in total: n_iter * batch).
    batch : int, default=100
        Features drawn per iteration R.
    loss : {"squared_hinge", "logistic"}, default="squared_hinge"
        Loss of the l1 sub-problems; with "logistic", ``predict_proba`` is the model's own probability
        sigma(f(x)) (one sigmoid per class normalised to sum 1 for more classes, as ``OneVsRestClassifier``).
    probability : bool, default=False
        With the squared hinge loss, also fit a sigmoid calibration sigma(a f(x)) on 3-fold cross-validated
        decision values (three more fits) so that ``predict_proba`` is available; see
        :class:`~rkcore.learners.common.ProbabilityMixin`. Ignored with ``loss="logistic"``.
    tol : float, default=1e-4
        liblinear's stopping tolerance per sub-problem.
    max_iter : int, default=1000
        liblinear iterations per sub-problem.
    random_state : int, RandomState instance or None, default=None
        Seeds every iteration's map and solver: an int gives the same model on every call.
        See :term:`Glossary <random_state>`.

    Attributes
    ----------
    maps_ : list of fitted maps, those owning at least one kept feature
    columns_ : list of int arrays, the kept columns of each map in ``maps_``
    coef_ : ndarray (1 or n_classes, n_nonzero_)
    intercept_ : ndarray (1 or n_classes,)
    n_features_drawn_ : int
    n_nonzero_ : int, size of the final working set
    objective_history_ : ndarray (n_iter,), ||w||_1 + C sum_i L_i after each sub-problem
    n_active_history_ : ndarray (n_iter,), working-set size after each pruning
    n_iter_ : int, liblinear iterations of the last sub-problem
    probability_slope_ : float, slope a of ``predict_proba`` = sigma(a f(x)) (1 for the logistic loss)
    classes_, n_features_in_

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.learners import SparseRandomFeatureClassifier
    >>> X = np.random.RandomState(0).randn(80, 5); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> clf = SparseRandomFeatureClassifier(n_iter=3, batch=20, random_state=0).fit(X, y)
    >>> clf.n_features_drawn_, clf.n_nonzero_ <= 60
    (60, True)
    """

    _parameter_constraints: dict = {
        "map_key": [StrOptions(set(MAPS))],
        "spec": [KernelSpec, None],
        "distribution": [StrOptions(set(DISTRIBUTIONS)), None],
        "C": [Interval(Real, 0, None, closed="neither")],
        "n_iter": [Interval(Integral, 1, None, closed="left")],
        "batch": [Interval(Integral, 1, None, closed="left")],
        "loss": [StrOptions(set(LOSSES))],
        "probability": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    _expected_failed_checks = {
        "check_classifiers_train": (
            "the default kernel, second-order ANOVA, has no constant or linear term: on the check's "
            "two-feature blobs its features see only x1*x2, so training accuracy stays below 0.83"),
    }

    def __init__(self, map_key="rk", *, spec=None, distribution=None, C=1.0, n_iter=10, batch=100,
                 loss="squared_hinge", probability=False, tol=1e-4, max_iter=1000, random_state=None):
        self.map_key = map_key
        self.spec = spec
        self.distribution = distribution
        self.C = C
        self.n_iter = n_iter
        self.batch = batch
        self.loss = loss
        self.probability = probability
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

    def _l1_model(self, seed: int, multiclass: bool):
        if self.loss == "squared_hinge":
            return LinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=self.C, tol=self.tol,
                             max_iter=self.max_iter, random_state=seed)
        model = LogisticRegression(l1_ratio=1.0, solver="liblinear", C=self.C, tol=self.tol,
                                   max_iter=self.max_iter, random_state=seed)
        return OneVsRestClassifier(model) if multiclass else model

    @staticmethod
    def _coefficients(model):
        if isinstance(model, OneVsRestClassifier):
            return (np.vstack([e.coef_ for e in model.estimators_]),
                    np.concatenate([np.ravel(e.intercept_) for e in model.estimators_]))
        return np.atleast_2d(model.coef_), np.ravel(model.intercept_)

    def _objective(self, Z, y_codes, coef, intercept) -> float:
        """||W||_1 + C sum_i L_i summed over the one-vs-rest problems (liblinear's primal)."""
        F = Z @ coef.T + intercept
        if coef.shape[0] == 1:
            Y = np.where(y_codes == 1, 1.0, -1.0)[:, None]
        else:
            Y = np.where(y_codes[:, None] == np.arange(coef.shape[0])[None, :], 1.0, -1.0)
        losses, _ = _loss_and_derivative(self.loss, Y, F)
        return float(np.abs(coef).sum() + self.C * losses.sum())

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y) -> Self:
        """Run Algorithm 1 of Yen et al. (2014) for ``n_iter`` iterations.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : array-like of shape (n_samples,)
            Class labels (two or more classes).

        Returns
        -------
        self : object
            The fitted classifier.
        """
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        encoder = LabelEncoder().fit(y)
        self.classes_ = encoder.classes_
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes in y; got 1 class "
                             f"({self.classes_[0]!r}).")
        y_codes = encoder.transform(y)
        spec = _spec_or_default(self.spec)
        check_degree_fits(spec.name, spec.degree, X.shape[1], type(self).__name__)
        # map / kernel / distribution compatibility, before any feature is drawn
        make_map(self.map_key, spec, self.batch, distribution=self.distribution)
        multiclass = len(self.classes_) > 2
        rng = check_random_state(self.random_state)

        maps, cols = [], []  # working set: (fitted map, kept column indices)
        Z = np.empty((X.shape[0], 0))
        objective_history, active_history = [], []
        coef = np.zeros((1 if not multiclass else len(self.classes_), 0))
        intercept = np.zeros(coef.shape[0])
        for _ in range(self.n_iter):
            map_seed, solver_seed = rng.randint(np.iinfo(np.int32).max, size=2)
            feature_map = make_map(self.map_key, spec, self.batch, distribution=self.distribution,
                                   random_state=int(map_seed))
            Z_new = np.asarray(feature_map.fit_transform(X))
            maps.append(feature_map)
            cols.append(np.arange(self.batch))
            Z = np.hstack([Z, Z_new])
            model = self._l1_model(int(solver_seed), multiclass).fit(Z, y_codes)
            coef, intercept = self._coefficients(model)
            objective_history.append(self._objective(Z, y_codes, coef, intercept))
            keep = np.any(coef != 0.0, axis=0)
            # step 4: drop zero-weight features from the working set (and maps left with none)
            offsets = np.cumsum([0] + [c.size for c in cols])
            maps_kept, cols_kept = [], []
            for feature_map, c, start in zip(maps, cols, offsets[:-1]):
                k = keep[start:start + c.size]
                if k.any():
                    maps_kept.append(feature_map)
                    cols_kept.append(c[k])
            maps, cols = maps_kept, cols_kept
            Z, coef = Z[:, keep], coef[:, keep]
            active_history.append(int(keep.sum()))

        self.maps_, self.columns_ = maps, cols
        self.coef_, self.intercept_ = coef, intercept
        solvers = model.estimators_ if isinstance(model, OneVsRestClassifier) else [model]
        self.n_iter_ = int(max(np.max(e.n_iter_) for e in solvers))
        self.n_features_drawn_ = self.n_iter * self.batch
        self.n_nonzero_ = int(coef.shape[1])
        self.objective_history_ = np.asarray(objective_history)
        self.n_active_history_ = np.asarray(active_history)
        self._fit_calibration(X, y)
        return self

    def transform_kept(self, X) -> np.ndarray:
        """The kept random features of X, in ``coef_`` column order.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_nonzero_)
            Features of the final working set.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        parts = [np.asarray(m.transform(X))[:, c] for m, c in zip(self.maps_, self.columns_)]
        return np.hstack(parts) if parts else np.empty((X.shape[0], 0))

    def decision_function(self, X):
        """Linear scores of the kept random features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Binary: > 0 predicts ``classes_[1]``; more classes: one column per class.
        """
        scores = self.transform_kept(X) @ self.coef_.T + self.intercept_
        return scores.ravel() if scores.shape[1] == 1 else scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
