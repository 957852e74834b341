"""rkcore.maps.random_kernel.stacked_features: several seeds' RK maps computed as one map (the error engine's
trials at small n) give each map's own features."""
import numpy as np
import pytest
import scipy.sparse as sp

from rkcore.maps.random_kernel import RandomKernel, stacked_features

CASES = [("anova", 2, None), ("anova", 3, None), ("anova", 4, None), ("all_subsets", 2, None), ("up_to", 3, None),
         ("dot", 1, None), ("itemset", 2, [(0, 1), (2, 3, 4)])]


@pytest.mark.parametrize("kernel, degree, itemsets", CASES)
@pytest.mark.parametrize("distribution", ["rademacher", "gaussian", "laplace", "uniform"])
@pytest.mark.parametrize("sparse", [False, True])
def test_stacked_features_are_each_seeds_map(kernel, degree, itemsets, distribution, sparse):
    rng = np.random.RandomState(0)
    X = rng.rand(40, 9) * np.logspace(-3, 3, 9)  # spread magnitudes: the checks and repairs run too
    X[rng.rand(*X.shape) < 0.5] = 0.0
    X = sp.csr_matrix(X) if sparse else X
    seeds, D = [3, 5, 8], 7
    got = stacked_features(X, kernel, degree, itemsets, distribution, D, seeds)
    assert got.shape == (40, len(seeds) * D)
    for t, seed in enumerate(seeds):
        want = RandomKernel(D, kernel=kernel, degree=degree, itemsets=itemsets, distribution=distribution,
                            random_state=seed).fit(X).transform(X)
        # same weights; a wider GEMM may sum in another order
        np.testing.assert_allclose(got[:, t * D:(t + 1) * D], want, rtol=1e-12, atol=1e-14 * np.abs(want).max())
