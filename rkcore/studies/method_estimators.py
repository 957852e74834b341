"""The methods of the accuracy study (:data:`rkcore.registry.METHODS`) as unfitted estimators.

A method's registry entry names its kind of learner (``MethodEntry.learner``); :func:`build_estimator`
turns the entry, the study kernel, D, C and a seed into the scikit-learn estimator that is fitted, and
:func:`model_size` reads the size of the fitted model (support vectors, rank, D or kept features).
For the factorized models the SVM's ``C sum_i loss_i + ||.||^2 / 2`` becomes the penalty
``alpha = beta = 1 / (C n_train)`` of their mean-loss objective.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from sklearn.base import BaseEstimator

from ..learners import (
    AllSubsetsModelClassifier,
    ExactKernelSVC,
    FactorizationMachineClassifier,
    SparseRandomFeatureClassifier,
    random_feature_pipeline,
)
from ..registry import FM_MAX_ITER, KernelSpec, MethodEntry

__all__ = ["FM_RANK", "SPARSE_RF_ITERATIONS", "build_estimator", "model_size"]

FM_RANK = 30
SPARSE_RF_ITERATIONS = 4


def _svm(spec, D, C, n_train, seed, params):
    return ExactKernelSVC(spec, C=C, **params)


def _fm(spec, D, C, n_train, seed, params):
    reg = 1.0 / (C * n_train)
    return FactorizationMachineClassifier(**{"degree": spec.degree, "n_components": FM_RANK, "alpha": reg,
                                             "beta": reg, "init_scale": "auto", "max_iter": FM_MAX_ITER,
                                             "random_state": seed, **params})


def _all_subsets_model(spec, D, C, n_train, seed, params):
    reg = 1.0 / (C * n_train)
    return AllSubsetsModelClassifier(**{"n_components": FM_RANK, "alpha": reg, "beta": reg, "init_scale": "auto",
                                        "random_state": seed, **params})


def _linear_on(map_key):
    def build(spec, D, C, n_train, seed, params):
        pipe = random_feature_pipeline(map_key, spec, D, random_state=seed, C=C)
        return pipe.set_params(**params) if params else pipe
    return build


def _sparse_rf(spec, D, C, n_train, seed, params):
    params = dict(params)
    n_iter = int(params.pop("n_iter", SPARSE_RF_ITERATIONS))
    batch = int(params.pop("batch", math.ceil(D / n_iter)))
    return SparseRandomFeatureClassifier("rk", spec=spec, C=C, n_iter=n_iter, batch=batch,
                                         random_state=seed, **params)


def _support_vectors(est, D) -> int:
    return int(est.support_.size)


def _rank(est, D) -> int:
    return int(est.n_components)


def _n_features(est, D) -> int:
    return int(D)


def _nonzero_features(est, D) -> int:
    return int(est.n_nonzero_)


#: The kinds of learner (MethodEntry.learner) as estimators: (build, model size).
_LEARNERS: dict[str, tuple[Callable, Callable]] = {
    "kernel_svm": (_svm, _support_vectors),
    "factorization_machine": (_fm, _rank),
    "all_subsets_model": (_all_subsets_model, _rank),
    "sparse_random_features": (_sparse_rf, _nonzero_features),
}


def build_estimator(method: MethodEntry, spec: KernelSpec, D: int | None, C: float, n_train: int, seed: int,
                    params: dict) -> BaseEstimator:
    """Build the unfitted estimator of a method (a linear SVM on a map's features from the map's key).

    Parameters
    ----------
    method : MethodEntry
        The method's registry entry (:func:`rkcore.registry.get_method`).
    spec : KernelSpec
        The kernel the method targets (``method.kernel_of(study kernel)``).
    D : int or None
        Number of random features; None for methods without them.
    C : float
        Regularization of the SVM's objective; the factorized models take alpha = beta = 1 / (C n_train).
    n_train : int
        Number of training rows (scales the factorized models' penalty).
    seed : int
        ``random_state`` of the estimator.
    params : dict
        Estimator parameter overrides (for a pipeline, ``step__name`` keys), applied last.

    Returns
    -------
    estimator
        An unfitted scikit-learn classifier (a Pipeline for the linear SVMs on random features).

    Examples
    --------
    >>> from rkcore.registry import KernelSpec, get_method
    >>> from rkcore.studies.method_estimators import build_estimator
    >>> est = build_estimator(get_method("fm"), KernelSpec("anova", 2), None, 10.0, 100, 0, {})
    >>> type(est).__name__, est.alpha
    ('FactorizationMachineClassifier', 0.001)
    """
    if method.learner == "linear_svm_on_map":
        return _linear_on(method.key)(spec, D, C, n_train, seed, params)
    return _LEARNERS[method.learner][0](spec, D, C, n_train, seed, params)


def model_size(method: MethodEntry, est, D: int | None) -> int:
    """Size of a fitted model: support vectors, rank, number of random features or kept features.

    Parameters
    ----------
    method : MethodEntry
        The method's registry entry.
    est : estimator
        The fitted estimator of :func:`build_estimator` (or its one-vs-rest wrapper: its first binary
        model is read).
    D : int or None
        Number of random features the estimator was built with.

    Returns
    -------
    int
        The model size the study reports in its ``model_size`` column.
    """
    est = getattr(est, "estimators_", [est])[0]  # one-vs-rest (for_many_classes): one fitted binary model
    if method.learner == "linear_svm_on_map":
        return _n_features(est, D)
    return _LEARNERS[method.learner][1](est, D)
