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
