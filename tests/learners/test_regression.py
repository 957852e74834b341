"""Regression learners and many classes (rkcore.learners.regression): scikit-learn citizenship, the FM regressor's
gradient against finite differences and its fit, kernel ridge on random features converging to exact kernel
ridge, and one-vs-rest only where the model is binary by nature."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import check_grad
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

from rkcore.learners import (
    AllSubsetsModelClassifier, ExactKernelRidge, ExactKernelSVC, FactorizationMachineClassifier,
    FactorizationMachineRegressor, expected_failed_checks, for_many_classes, random_feature_ridge,
)
from rkcore.registry import KernelSpec


@parametrize_with_checks([FactorizationMachineRegressor(max_iter=50, tol=1e-4), ExactKernelRidge()],
                         expected_failed_checks=expected_failed_checks)
def test_check_estimator(estimator, check):
    with threadpool_limits(1):
        check(estimator)


def test_fm_regressor_gradient_matches_finite_differences():
    rng = np.random.RandomState(0)
    X, y = rng.randn(30, 5), rng.randn(30) + 2.0
    for degree in (2, 3):
        fm = FactorizationMachineRegressor(degree, n_components=3, alpha=0.1, beta=0.2, random_state=0)
        fm._y_mean = 0.0
        Xp = fm._prepare(X)
        theta = fm._initial(rng, 5, 0.3)
        s = np.full(30, 1 / 30)
        err = check_grad(lambda t: fm._value_and_grad(t, Xp, y, s)[0],
                         lambda t: fm._value_and_grad(t, Xp, y, s)[1], theta)
        assert err < 1e-6 * max(1.0, np.linalg.norm(fm._value_and_grad(theta, Xp, y, s)[1]))
        value = fm._value_and_grad(theta, Xp, y, s)[0]
        f = fm._value_and_grad(theta, Xp, y, s)[2]
        b, w, P = fm._split(theta, 5)
        assert value == pytest.approx(0.5 * np.mean((f - y) ** 2) + 0.05 * w @ w + 0.1 * np.sum(P * P))


def test_fm_regressor_fits_a_pairwise_target_and_predicts_numbers():
    rng = np.random.RandomState(1)
    X = rng.randn(300, 6)
    y = 3.5 + X[:, 0] * X[:, 1] - 0.5 * X[:, 2] * X[:, 3] + 0.3 * X[:, 4]
    fm = FactorizationMachineRegressor(n_components=4, random_state=0).fit(X[:200], y[:200])
    assert fm.score(X[200:], y[200:]) > 0.95
    assert not hasattr(fm, "classes_") and not hasattr(fm, "predict_proba")
    with pytest.raises(ValueError, match="NaN"):
        FactorizationMachineRegressor().fit(X[:10], np.r_[np.nan, y[1:10]])


def test_random_feature_ridge_approaches_exact_kernel_ridge():
    """Ridge on D random features of the ANOVA-2 kernel converges to exact kernel ridge (same alpha, intercept):
    the prediction gap shrinks as D grows (Monte Carlo error ~ 1/sqrt(D))."""
    rng = np.random.RandomState(2)
    X = rng.uniform(-1, 1, (150, 6))
    y = 2.0 + X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3]
    spec = KernelSpec("anova", 2)
    exact = ExactKernelRidge(spec, alpha=0.1).fit(X[:100], y[:100]).predict(X[100:])
    gaps = []
    for D in (64, 4096):
        pred = np.mean([random_feature_ridge("rk", spec, D, random_state=s, alpha=0.1).fit(X[:100], y[:100])
                        .predict(X[100:]) for s in range(3)], axis=0)
        gaps.append(np.sqrt(np.mean((pred - exact) ** 2)))
    assert gaps[1] < 0.5 * gaps[0] and gaps[1] < 0.1 * np.std(y)
    assert ExactKernelRidge(spec, alpha=1e-3).fit(X, y).score(X, y) > 0.99


def test_for_many_classes_leaves_every_learner_as_it_is():
    """Every learner handles many classes itself now (the factorized models one-vs-rest inside), so the
    helper kept for old callers wraps nothing."""
    rng = np.random.RandomState(3)
    X = rng.randn(120, 4)
    y3 = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    for model in (FactorizationMachineClassifier(random_state=0, tol=1e-3), AllSubsetsModelClassifier(random_state=0),
                  ExactKernelSVC()):
        assert for_many_classes(model, y3) is model
    fitted = FactorizationMachineClassifier(random_state=0, tol=1e-3).fit(X, y3)
    assert set(fitted.predict(X)) <= {0, 1, 2} and len(fitted.estimators_) == 3


def test_exact_kernel_ridge_is_ridge_on_the_explicit_features():
    """For the dot kernel the feature map is x itself: kernel ridge with an unpenalised intercept must equal
    scikit-learn's Ridge (which centres X and y), weighted or not."""
    from sklearn.linear_model import Ridge

    rng = np.random.RandomState(4)
    X, y = rng.randn(40, 5), rng.randn(40) + 3.0
    w = rng.uniform(0.2, 2.0, 40)
    for weights in (None, w):
        ours = ExactKernelRidge(KernelSpec("dot"), alpha=0.7).fit(X, y, sample_weight=weights)
        theirs = Ridge(alpha=0.7).fit(X, y, sample_weight=weights)
        np.testing.assert_allclose(ours.predict(X[:7]), theirs.predict(X[:7]), rtol=1e-9, atol=1e-9)
