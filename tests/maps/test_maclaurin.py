"""Random Maclaurin (Kar & Karnick 2012): features from the definition, unbiasedness, estimator checks."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import comb
from sklearn.utils.estimator_checks import parametrize_with_checks

from rkcore.maps import maclaurin
from rkcore.kernels.exact import polynomial_kernel
from rkcore.maps.maclaurin import RandomMaclaurin


def _unit_rows(n, d, seed):
    X = np.random.RandomState(seed).standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def _features_by_definition(rm, X):
    """Z_s(x) = sqrt(a_N / P(N) / D) prod_i <w_i, x~>, one feature at a time from the fitted draws."""
    D, m, c = rm.n_components, rm.degree, rm.c
    fixed = rm.fix_order if rm.fix_order is not None else c == 0
    Xa = np.hstack([X, np.full((X.shape[0], 1), np.sqrt(c))]) if fixed and c > 0 else X
    W = rm.random_weights_
    Z = np.zeros((X.shape[0], D))
    start = 0
    for order in range(0, m + 1):  # groups by ascending order; factor i of the k features is sub-block i
        features = np.flatnonzero(rm.orders_ == order)
        k = features.size
        for j, s in enumerate(features):
            if fixed:
                scale = 1.0
            else:
                prob = (1 - 1 / rm.p) * rm.p ** (-order)
                scale = np.sqrt(comb(m, order) * c ** (m - order) / prob)
            vectors = W[[start + i * k + j for i in range(order)]]
            Z[:, s] = scale * np.prod(Xa @ vectors.T, axis=1) / np.sqrt(D)
        start += order * k
    assert start == W.shape[0]
    return Z


@pytest.mark.parametrize("params", [
    dict(degree=2, c=1.0), dict(degree=3, c=0.5, p=3.0), dict(degree=3, c=0.0),
    dict(degree=2, c=2.0, fix_order=True), dict(degree=2, c=0.0, fix_order=False)])
def test_vectorized_features_equal_the_definition(params):
    X = np.random.RandomState(0).standard_normal((7, 5))
    rm = RandomMaclaurin(300, random_state=1, **params).fit(X)
    np.testing.assert_allclose(rm.transform(X), _features_by_definition(rm, X), rtol=1e-12, atol=1e-12)


def test_sparse_input_and_row_blocking(monkeypatch):
    X = np.random.RandomState(1).standard_normal((30, 6))
    X[X < 0.3] = 0.0
    rm = RandomMaclaurin(50, degree=3, random_state=0).fit(X)
    Z = rm.transform(X)
    np.testing.assert_allclose(rm.transform(sp.csr_matrix(X)), Z, rtol=1e-12, atol=1e-14)
    monkeypatch.setattr(maclaurin, "SCATTER_BLOCK_BYTES", 1)  # one row per scatter sub-block
    np.testing.assert_allclose(rm.transform(X), Z, rtol=1e-12, atol=1e-14)
    monkeypatch.setattr(maclaurin, "TRANSFORM_BLOCK_BYTES", 1)  # one row per GEMM block too
    np.testing.assert_allclose(rm.transform(X), Z, rtol=1e-12, atol=1e-14)


def test_order_distribution_is_geometric():
    """P(N = n) = (1 - 1/p) p^-n; counts within 5 binomial standard errors."""
    D = 20000
    for p in (2.0, 3.0):
        orders = RandomMaclaurin(D, degree=2, c=1.0, p=p, random_state=0).fit(np.ones((1, 3))).orders_
        for n in range(4):
            prob = (1 - 1 / p) * p ** (-n)
            assert abs(np.mean(orders == n) - prob) < 5 * np.sqrt(prob * (1 - prob) / D)


def test_fix_order_default_and_wasted_features():
    X = np.random.RandomState(0).standard_normal((4, 3))
    homogeneous = RandomMaclaurin(64, degree=3, c=0.0, random_state=0).fit(X)
    assert (homogeneous.orders_ == 3).all()
    inhomogeneous = RandomMaclaurin(400, degree=2, c=1.0, random_state=0).fit(X)
    Z = inhomogeneous.transform(X)
    wasted = inhomogeneous.orders_ > 2
    assert wasted.any() and (Z[:, wasted] == 0).all()
    assert inhomogeneous.random_weights_.shape[0] == inhomogeneous.orders_[~wasted].sum()


@pytest.mark.parametrize("c, degree, fix_order", [(1.0, 2, None), (1.0, 3, None), (0.0, 2, None),
                                                  (0.0, 3, None), (1.0, 3, True)])
def test_unbiased_for_polynomial_kernel(c, degree, fix_order):
    """Mean of Z Z^T over seeds equals (c + <x,y>)^m within 5 standard errors per entry.

    Each seed is an independent draw of the estimator; by the CLT the mean over seeds has
    standard error sd / sqrt(seeds), and 5 SE is exceeded by chance with probability < 1e-5
    for the 10 entries. A map missing the sqrt(1/P(N)) reweighting (bias factor P(N) per
    order) would be off by far more than 5 SE (checked below for the random-order case).
    """
    n, d, D, seeds = 4, 5, 40, 1000
    X = _unit_rows(n, d, seed=degree)
    K = polynomial_kernel(X, None, degree, c)
    iu = np.triu_indices(n)
    est = np.empty((seeds, iu[0].size))
    unweighted = np.empty_like(est)
    for s in range(seeds):
        rm = RandomMaclaurin(D, degree=degree, c=c, fix_order=fix_order, random_state=s).fit(X)
        Z = rm.transform(X)
        est[s] = (Z @ Z.T)[iu]
        if rm.orders_.max() != rm.orders_.min():  # random orders: drop the 1/P(N) factor
            prob = (1 - 1 / rm.p) * rm.p ** (-rm.orders_.astype(float))
            Zu = Z * np.sqrt(prob)
            unweighted[s] = (Zu @ Zu.T)[iu]
    se = est.std(axis=0, ddof=1) / np.sqrt(seeds)
    assert (np.abs(est.mean(axis=0) - K[iu]) < 5 * se + 1e-12).all()
    if fix_order is None and c > 0:
        se_u = unweighted.std(axis=0, ddof=1) / np.sqrt(seeds)
        assert (np.abs(unweighted.mean(axis=0) - K[iu]) > 5 * se_u).any()


@parametrize_with_checks([RandomMaclaurin(n_components=20, degree=2, random_state=0),
                          RandomMaclaurin(n_components=10, degree=3, c=0.0, random_state=0),
                          RandomMaclaurin(n_components=10, degree=2, c=1.0, fix_order=True, random_state=0)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("params, X, match", [
    ({"degree": 0}, np.ones((3, 4)), "degree"),
    ({"c": -1.0}, np.ones((3, 4)), "'c'"),
    ({"p": 1.0}, np.ones((3, 4)), "'p'"),
    ({"n_components": 0}, np.ones((3, 4)), "n_components"),
    ({}, np.array([[1.0, np.inf, 2.0]]), "infinity"),
])
def test_bad_input_raises_value_error(params, X, match):
    with pytest.raises(ValueError, match=match):
        RandomMaclaurin(**params).fit(X)


def test_wrong_number_of_features_at_transform():
    rm = RandomMaclaurin(8, random_state=0).fit(np.ones((3, 4)))
    with pytest.raises(ValueError, match="features"):
        rm.transform(np.ones((3, 5)))
