"""random_feature_pipeline: a linear SVM or logistic regression on any registered random feature map."""
from __future__ import annotations

from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

from ..registry import KernelSpec, make_map
from .common import CLASSIFIERS, _spec_or_default


# ----------------------------------------------------------------------------- linear models on maps
def random_feature_pipeline(map_key: str, spec: KernelSpec | None = None, n_components: int = 100,
                            distribution: str | None = None, random_state=None,
                            classifier: str = "linear_svc", C: float = 1.0,
                            classifier_params: dict | None = None) -> Pipeline:
    """``Pipeline(map, linear classifier)``: a linear model on the random features of any registered map.

    The map comes from :func:`rkcore.registry.make_map` (so incompatible map/kernel
    pairs raise there); the classifier is ``LinearSVC`` (liblinear, squared hinge,
    as in the paper) or ``LogisticRegression``, both with inverse regularization C.
    Step names: ``"map"`` and ``"clf"``.

    Parameters
    ----------
    map_key : str
        A key of :data:`rkcore.registry.MAPS` ("rk", "scrk", "ts", "rm", "rff", "nystroem").
    spec : KernelSpec, default=None
        The kernel the map approximates; None means second-order ANOVA.
    n_components : int, default=100
        D, the number of random features.
    distribution : str or None, default=None
        Weight distribution of the map (None: the map's default).
    random_state : int, RandomState instance or None, default=None
        Seeds the map and the classifier.
    classifier : {"linear_svc", "logistic"}, default="linear_svc"
        The linear model on the features.
    C : float, default=1.0
        Inverse regularization of the classifier.
    classifier_params : dict or None, default=None
        Further keyword arguments of the classifier.

    Returns
    -------
    pipeline : Pipeline
        Unfitted ``Pipeline([("map", ...), ("clf", ...)])``.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.learners import random_feature_pipeline
    >>> X = np.random.RandomState(0).randn(100, 5); y = (X[:, 0] * X[:, 1] > 0).astype(int)
    >>> pipe = random_feature_pipeline("rk", n_components=200, random_state=0).fit(X, y)
    >>> pipe.score(X, y) > 0.8
    True
    """
    spec = _spec_or_default(spec)
    feature_map = make_map(map_key, spec, n_components, distribution=distribution, random_state=random_state)
    params = dict(classifier_params or {})
    if classifier == "linear_svc":
        clf = LinearSVC(C=C, random_state=random_state, **params)
    elif classifier == "logistic":
        clf = LogisticRegression(C=C, **params)
    else:
        raise ValueError(f"Unknown classifier {classifier!r}; allowed: {', '.join(map(repr, CLASSIFIERS))}.")
    return Pipeline([("map", feature_map), ("clf", clf)])
