"""The kernel trick (rkcore.teaching.kernel_trick): explicit features against the kernels they realize
(identities), and the timing table."""
from itertools import combinations
from math import comb, sqrt

import numpy as np
import pytest

from rkcore.kernels.exact import anova_kernel, up_to_kernel
from rkcore.teaching.kernel_trick import (
    EXPANSIONS,
    MAX_SUBSETS_D,
    all_subsets_features,
    interaction_features,
    kernel_trick_timing,
    n_explicit_features,
    polynomial_feature_names,
    polynomial_features,
)


@pytest.fixture(scope="module")
def XY():
    rng = np.random.RandomState(0)
    return rng.randn(7, 5), rng.randn(6, 5)


@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("c", [1.0, 0.5, 0.0])
def test_polynomial_features_inner_product(XY, degree, c):
    X, Y = XY
    P, Q = polynomial_features(X, degree, c), polynomial_features(Y, degree, c)
    assert P.shape[1] == comb(5 + degree, degree)
    np.testing.assert_allclose(P @ Q.T, (c + X @ Y.T) ** degree, rtol=1e-10, atol=1e-10)


def test_degree2_features_are_the_notes_features():
    # notes, Section 1.1: (1, sqrt2 x_i, x_i^2, sqrt2 x_i x_j for i < j), 1 + 2d + C(d, 2) of them
    x = np.array([0.3, -1.2, 2.0])
    notes = [1.0] + [sqrt(2) * v for v in x] + [v * v for v in x] + [sqrt(2) * x[i] * x[j] for i, j in combinations(range(3), 2)]
    ours = polynomial_features(x[None, :], 2, 1.0)[0]
    assert ours.size == 1 + 2 * 3 + comb(3, 2)
    np.testing.assert_allclose(np.sort(ours), np.sort(notes), rtol=1e-12)
    names = polynomial_feature_names(3)
    assert names[0] == "1" and "1.414*x0*x1" in names and "1*x0^2" in names


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_interaction_features_inner_products(XY, degree):
    X, Y = XY
    A = interaction_features(X, degree)
    assert A.shape[1] == comb(5, degree)
    np.testing.assert_allclose(A @ interaction_features(Y, degree).T, anova_kernel(X, Y, degree), rtol=1e-10, atol=1e-12)
    U = interaction_features(X, degree, lower_orders=True)
    assert U.shape[1] == sum(comb(5, k) for k in range(degree + 1))
    np.testing.assert_allclose(U @ interaction_features(Y, degree, lower_orders=True).T, up_to_kernel(X, Y, degree),
                               rtol=1e-10, atol=1e-12)


def test_all_subsets_features_inner_product(XY):
    X, Y = XY
    F = all_subsets_features(X)
    assert F.shape == (7, 2**5)
    brute = np.prod(1.0 + X[:, None, :] * Y[None, :, :], axis=2)
    np.testing.assert_allclose(F @ all_subsets_features(Y).T, brute, rtol=1e-10)
    with pytest.raises(ValueError, match="too many"):
        all_subsets_features(np.ones((2, MAX_SUBSETS_D + 1)))


@pytest.mark.parametrize("kind", list(EXPANSIONS))
def test_expansion_registry_is_consistent(kind, XY):
    X, Y = XY
    e = EXPANSIONS[kind]
    F = e.features(X, 2)
    assert F.shape[1] == n_explicit_features(kind, 5, 2) == e.n_features(5, 2)
    np.testing.assert_allclose(F @ e.features(Y, 2).T, e.kernel(X, Y, 2), rtol=1e-10, atol=1e-12)
    assert e.label and e.feature_latex and e.kernel_latex


def test_kernel_trick_timing_is_tidy():
    df = kernel_trick_timing("polynomial", [2, 8], n=20, repeats=2)
    assert set(df.columns) == {"kind", "d", "method", "n_features", "n", "repeat", "seconds"}
    assert len(df) == 2 * 2 * 2
    assert (df["seconds"] > 0).all()
    explicit = df[df.method == "explicit features"].groupby("d")["n_features"].first()
    assert explicit[8] == comb(10, 2)
    with pytest.raises(ValueError, match="allowed d <="):
        kernel_trick_timing("all_subsets", [MAX_SUBSETS_D + 1])
    with pytest.raises(ValueError, match="MB"):
        kernel_trick_timing("polynomial", [2000], n=5000)
    with pytest.raises(ValueError, match="Unknown expansion"):
        kernel_trick_timing("cubic", [2])
