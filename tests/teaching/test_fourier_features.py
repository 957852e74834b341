"""Random Fourier features (rkcore.teaching.fourier_features): the Gaussian kernel, its bandwidths, RFF.

Statistical checks compare a mean over independent repetitions with its expectation within
Z_TOL = 4.5 standard errors (SE = sample std / sqrt(repetitions)); false-alarm probability
per compared quantity ~7e-6.
"""
import numpy as np
import pytest
from sklearn.kernel_approximation import RBFSampler

from rkcore.teaching.fourier_features import (
    gamma_from_sigma,
    gaussian_kernel,
    kernel_errors,
    median_heuristic_gamma,
    rff_error_curve,
    rff_features,
)

Z_TOL = 4.5


@pytest.fixture(scope="module")
def XY():
    rng = np.random.RandomState(0)
    return rng.randn(7, 5), rng.randn(6, 5)


def test_gaussian_kernel_and_bandwidths(XY):
    X, _ = XY
    sigma = 1.7
    K = gaussian_kernel(X, gamma=gamma_from_sigma(sigma))
    brute = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / (2 * sigma**2))
    np.testing.assert_allclose(K, brute, rtol=1e-12)
    g = median_heuristic_gamma(X)
    d = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))[np.triu_indices(7, 1)]
    assert g == pytest.approx(1 / (2 * np.median(d) ** 2))
    with pytest.raises(ValueError):
        gaussian_kernel(X, gamma=0.0)


def test_rff_features_are_sklearn_rbf_sampler(XY):
    X, _ = XY
    Z = rff_features(X, gamma=0.3, n_components=50, random_state=4)
    np.testing.assert_allclose(Z, RBFSampler(gamma=0.3, n_components=50, random_state=4).fit_transform(X))


def test_rff_is_unbiased(XY):
    X, _ = XY
    gamma, S = 0.2, 300
    iu = np.triu_indices(7, 1)
    est = np.array([(lambda Z: (Z @ Z.T)[iu])(rff_features(X, gamma, 8, random_state=s)) for s in range(S)])
    z = (est.mean(0) - gaussian_kernel(X, gamma=gamma)[iu]) / (est.std(0, ddof=1) / np.sqrt(S))
    assert np.all(np.abs(z) < Z_TOL), z


def test_rff_error_curve_shrinks_like_inverse_sqrt_D(XY):
    X = np.random.RandomState(1).randn(40, 5)
    df = rff_error_curve(X, gamma=0.1, D_list=[64, 1024], trials=8, seed=0)
    assert set(df.columns) == {"D", "trial", "metric", "value"}
    assert len(df) == 2 * 8 * 3
    rel = df[df.metric == "rel_fro"].groupby("D")["value"].mean()
    # the error ~ c / sqrt(D): 16x more features, ~4x smaller (loose range for 8 trials)
    assert 2.5 < rel[64] / rel[1024] < 6.5
    errs = kernel_errors(np.eye(2), np.eye(2) + 0.1)
    assert errs["max_abs_error"] == pytest.approx(0.1) and errs["mean_abs_error"] == pytest.approx(0.1)
