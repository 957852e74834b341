"""RandomFeatureSGDClassifier: partial_fit learns from chunks, its memory does not grow with the rows, and
predict_proba is the SGD model's own."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from rkcore.learners import RandomFeatureSGDClassifier


def _stream(n, seed=0, d=6):
    X = np.random.default_rng(seed).standard_normal((n, d))
    return X, (X[:, 0] * X[:, 1] > 0).astype(int)


def test_partial_fit_learns_the_product_from_chunks():
    X, y = _stream(6000)
    clf = RandomFeatureSGDClassifier(n_components=300, batch_size=256, random_state=0)
    for _ in range(3):
        for start in range(0, 6000, 1000):
            clf.partial_fit(X[start:start + 1000], y[start:start + 1000], classes=[0, 1])
    X_test, y_test = _stream(2000, seed=1)
    assert clf.score(X_test, y_test) > 0.85  # chance is 0.5; the exact ANOVA-2 SVM reaches about 0.95
    proba = clf.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    assert (proba.argmax(axis=1) == clf.predict(X_test)).all()


def _peak_bytes(n):
    X, y = _stream(n)
    clf = RandomFeatureSGDClassifier(n_components=500, batch_size=200, random_state=0)
    clf.partial_fit(X[:200], y[:200], classes=[0, 1])  # map and model allocated before measuring
    tracemalloc.start()
    clf.partial_fit(X, y)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_memory_of_partial_fit_does_not_grow_with_the_rows():
    """Ten times the rows, the same peak: one batch of features (200 x 500 x 8 = 0.8 MB) at a time. Building
    the features of all rows at once would take 8 n D bytes: 16 MB and 160 MB here."""
    small, large = _peak_bytes(4000), _peak_bytes(40000)
    assert large < 1.5 * small + 2**20 and large < 8 * 40000 * 500 / 20


def test_partial_fit_refuses_a_stream_without_classes_and_unknown_labels():
    X, y = _stream(50)
    with pytest.raises(ValueError, match="classes must be given"):
        RandomFeatureSGDClassifier().partial_fit(X, y)
    clf = RandomFeatureSGDClassifier().partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="not in classes"):
        clf.partial_fit(X, y + 5)


def test_hinge_loss_has_no_probability():
    assert not hasattr(RandomFeatureSGDClassifier(loss="hinge"), "predict_proba")
    assert hasattr(RandomFeatureSGDClassifier(loss="log_loss"), "predict_proba")
