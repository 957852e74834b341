"""One vocabulary: every error metric an engine reports is a key of rkcore.metrics.METRICS, and the labels
the figures and the Gram table show are that table's."""
from __future__ import annotations

import numpy as np

from rkcore.figures.foundations import METRIC_LABELS
from rkcore.metrics import CURVE_METRICS, GRAM_METRICS, METRICS
from rkcore.studies import errors
from rkcore.studies.gram import gram_error_stats, gram_errors
from rkcore.teaching.fourier_features import kernel_errors


def test_every_reported_metric_is_in_the_table():
    K = np.array([[1.0, 0.5], [0.5, 1.0]])
    K_hat = K + np.array([[0.1, -0.3], [0.2, 0.0]])
    assert set(gram_errors(K, K_hat)) == set(GRAM_METRICS) <= set(METRICS)
    assert tuple(kernel_errors(K, K_hat)) == CURVE_METRICS
    assert set(errors.METRICS) <= set(METRICS)
    # the numbers are the definitions: E = K̂ − K
    E = K_hat - K
    values = gram_errors(K, K_hat)
    assert values["mean_abs_error"] == np.abs(E).mean() and values["max_abs_error"] == np.abs(E).max()
    assert np.isclose(values["rel_fro"], np.linalg.norm(E) / np.linalg.norm(K))


def test_labels_come_from_the_table():
    assert METRIC_LABELS == {k: METRICS[k].axis_label for k in CURVE_METRICS}
    stats = gram_error_stats(np.eye(2), np.eye(2) * 1.5)
    assert list(stats["metric"]) == [METRICS[k].name for k in GRAM_METRICS]
    assert list(stats["definition"]) == [METRICS[k].definition for k in GRAM_METRICS]


def test_one_predict_for_the_classifiers():
    from rkcore.learners import (
        AllSubsetsModelClassifier, ExactKernelSVC, FactorizationMachineClassifier, SparseRandomFeatureClassifier,
    )
    from rkcore.learners.common import ScoreClassifierMixin

    for cls in (AllSubsetsModelClassifier, ExactKernelSVC, FactorizationMachineClassifier,
                SparseRandomFeatureClassifier):
        assert cls.predict is ScoreClassifierMixin.predict, cls.__name__
