"""scikit-learn citizenship: check_estimator with default parameters (expected failures declared
with reasons on the class), feature names, set_output and float32 preservation."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

from rkcore.maps.circulant import SignedCirculantRandomKernel
from rkcore.teaching.compositional import CompositionalFeatures
from rkcore.maps.maclaurin import RandomMaclaurin
from rkcore.maps.random_kernel import RandomKernel
from rkcore.learners import (
    AllSubsetsModelClassifier,
    ExactKernelSVC,
    FactorizationMachineClassifier,
    RandomFeatureSGDClassifier,
    SparseRandomFeatureClassifier,
    expected_failed_checks,
)

TRANSFORMERS = [RandomKernel, SignedCirculantRandomKernel, RandomMaclaurin, CompositionalFeatures]
CLASSIFIERS = [ExactKernelSVC, FactorizationMachineClassifier, AllSubsetsModelClassifier,
               SparseRandomFeatureClassifier, RandomFeatureSGDClassifier]


#: the classifiers with predict_proba: the logistic loss's own probability, or the sigmoid calibration
WITH_PROBABILITIES = [ExactKernelSVC(probability=True), FactorizationMachineClassifier(probability=True),
                      FactorizationMachineClassifier(loss="logistic"), AllSubsetsModelClassifier(probability=True),
                      AllSubsetsModelClassifier(loss="logistic"), SparseRandomFeatureClassifier(probability=True),
                      SparseRandomFeatureClassifier(loss="logistic"),
                      RandomFeatureSGDClassifier(loss="modified_huber")]


@parametrize_with_checks([E() for E in TRANSFORMERS + CLASSIFIERS] + WITH_PROBABILITIES,
                         expected_failed_checks=expected_failed_checks)
def test_check_estimator_defaults(estimator, check):
    # one BLAS thread: the checks fit hundreds of tiny models, where OpenBLAS threads only
    # contend (30x slower L-BFGS-B steps on a loaded 2-core machine)
    with threadpool_limits(1):
        check(estimator)


def test_every_expected_failure_has_a_reason():
    for E in TRANSFORMERS + CLASSIFIERS:
        for name, reason in expected_failed_checks(E()).items():
            assert name.startswith("check_") and len(reason) > 40, (E.__name__, name)


def test_sparse_rf_distribution_is_validated():
    X = np.random.RandomState(0).rand(20, 4)
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="distribution"):
        SparseRandomFeatureClassifier(distribution="cauchy").fit(X, y)
    # a distribution the map does not draw from is refused before any feature is drawn
    with pytest.raises(ValueError, match="distribution"):
        SparseRandomFeatureClassifier("scrk", distribution="gaussian").fit(X, y)


def _fitted(E, X):
    return E(n_components=16, random_state=0).fit(X)


@pytest.mark.parametrize("E", TRANSFORMERS)
def test_feature_names_and_pandas_output(E):
    X = np.random.RandomState(0).rand(12, 6)
    est = _fitted(E, X)
    names = est.get_feature_names_out()
    prefix = E.__name__.lower()
    assert list(names) == [f"{prefix}{i}" for i in range(16)]
    frame = clone(est).set_output(transform="pandas").fit(X).transform(X)
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(names)
    np.testing.assert_allclose(frame.to_numpy(), est.transform(X))
    # names flow through a Pipeline with a DataFrame in and out
    Xdf = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    pipe = make_pipeline(StandardScaler(), clone(est)).set_output(transform="pandas")
    assert list(pipe.fit_transform(Xdf).columns) == list(names)


@pytest.mark.parametrize("E", [RandomKernel, SignedCirculantRandomKernel, RandomMaclaurin])
@pytest.mark.parametrize("sparse", [False, True])
def test_float32_in_float32_out(E, sparse):
    X64 = np.random.RandomState(1).rand(30, 8)
    X32 = X64.astype(np.float32)
    est = _fitted(E, X64)
    Z64 = est.transform(sp.csr_matrix(X64) if sparse else X64)
    Z32 = est.transform(sp.csr_matrix(X32) if sparse else X32)
    assert Z64.dtype == np.float64 and Z32.dtype == np.float32
    # the float32 map differs from the float64 one by rounding only: the input rounding
    # (2^-24 relative) propagated through degree-2 features, plus float32 GEMM accumulation
    # over d terms: well inside 1e-5 of the largest feature
    assert np.abs(Z32 - Z64).max() <= 1e-5 * np.abs(Z64).max()


@pytest.mark.parametrize("kernel,degree", [("dot", 1), ("anova", 2), ("anova", 3), ("up_to", 2), ("all_subsets", 2)])
@pytest.mark.parametrize("distribution", ["rademacher", "gaussian"])
def test_random_kernel_float32_every_family(kernel, degree, distribution):
    X64 = np.random.RandomState(2).rand(25, 7)
    est = RandomKernel(32, kernel=kernel, degree=degree, distribution=distribution, random_state=0).fit(X64)
    Z64, Z32 = est.transform(X64), est.transform(X64.astype(np.float32))
    assert Z32.dtype == np.float32
    assert np.abs(Z32 - Z64).max() <= 1e-5 * np.abs(Z64).max()


def test_compositional_features_stay_float64():
    X = np.random.RandomState(0).randn(10, 6).astype(np.float32)
    assert CompositionalFeatures(n_components=8, random_state=0).fit_transform(X).dtype == np.float64
