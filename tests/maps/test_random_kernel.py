"""RandomKernel (Algorithm 1): unbiasedness, scikit-learn conformance, determinism, errors."""
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from rkcore import ItemsetFamily, RandomKernel, itemset_kernel
from rkcore.maps.distributions import DISTRIBUTIONS

KERNEL_CASES = [
    ("anova", 2, None),
    ("anova", 3, None),
    ("all_subsets", 2, None),
    ("dot", 2, None),
    ("up_to", 2, None),
    ("itemset", 2, [(0,), (1, 2), (0, 3, 4), (2, 5)]),
    ("itemset", 2, ItemsetFamily.cross_fields([(0, 1, 2), (3, 4, 5)], m=2)),
]


@parametrize_with_checks([
    RandomKernel(n_components=20, random_state=0),
    RandomKernel(n_components=20, kernel="all_subsets", random_state=0),
    RandomKernel(n_components=20, kernel="all_subsets", distribution="gaussian", random_state=0),
    RandomKernel(n_components=20, kernel="dot", distribution="laplace", random_state=0),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(seed=0, n=4, d=6):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    return X / np.abs(X).sum(axis=1, keepdims=True) * 1.5  # L1 radius 1.5: large enough to see bias


@pytest.mark.parametrize("distribution", list(DISTRIBUTIONS))
@pytest.mark.parametrize("kernel,degree,itemsets", KERNEL_CASES)
def test_unbiased(kernel, degree, itemsets, distribution):
    """Mean of <Z(x), Z(y)> over independent draws is within 5 standard errors of K_S(x, y).

    One RandomKernel with D features gives D i.i.d. products K_S(x, w_s) K_S(y, w_s)
    whose mean estimates K_S(x, y); the standard error is the sample std / sqrt(D).
    With ~50 (pair, case) tests at 5 SE, a false alarm has probability < 1e-4.
    A wrong scaling (e.g. 1/D instead of 1/sqrt(D), or a missing 1/m in eq. 12) moves
    the mean by O(K), far beyond 5 SE at this D.
    """
    X = _data()
    D = 60_000
    rk = RandomKernel(D, kernel=kernel, degree=degree, itemsets=itemsets,
                      distribution=distribution, random_state=1).fit(X)
    Z = rk.transform(X) * np.sqrt(D)  # per-feature kernel values K_S(x, w_s)
    exact = itemset_kernel(X, family=rk.family_)
    for i, j in [(0, 1), (2, 3), (1, 1)]:
        samples = Z[i] * Z[j]
        se = samples.std(ddof=1) / np.sqrt(D)
        assert abs(samples.mean() - exact[i, j]) <= 5 * se + 1e-12, (kernel, distribution, i, j)


def test_all_subsets_rademacher_fast_path_matches_elementwise_product():
    """The log/sign trick equals prod_j (1 + x_j w_j), including |x_j| = 1 and |x_j| > 1."""
    rng = np.random.RandomState(3)
    X = rng.uniform(-2.5, 2.5, size=(30, 7))
    X[0, 2], X[1, 4], X[2, 0], X[3, 1] = 1.0, -1.0, 1.0, -1.0
    rk = RandomKernel(500, kernel="all_subsets", random_state=0).fit(X)
    W = rk.random_weights_
    expected = np.prod(1.0 + X[:, None, :] * W[None, :, :], axis=2) / np.sqrt(500)
    Z = rk.transform(X)
    np.testing.assert_allclose(Z, expected, rtol=1e-10, atol=1e-13)
    assert (Z[0] == 0).any() and (Z < 0).any()  # the zero and sign branches were exercised


@pytest.mark.parametrize("kernel,degree,itemsets", KERNEL_CASES)
@pytest.mark.parametrize("distribution", ["rademacher", "gaussian"])
def test_transform_equals_kernel_against_weights(kernel, degree, itemsets, distribution):
    """Z(x)_s = K_S(x, w_s) / sqrt(D) exactly (Algorithm 1), on dense and sparse input."""
    X = _data(n=25)
    X[X < -0.1] = 0.0  # some sparsity
    rk = RandomKernel(40, kernel=kernel, degree=degree, itemsets=itemsets,
                      distribution=distribution, random_state=0).fit(X)
    expected = itemset_kernel(X, rk.random_weights_, family=rk.family_) / np.sqrt(40)
    np.testing.assert_allclose(rk.transform(X), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(rk.transform(sp.csr_matrix(X)), expected, rtol=1e-10, atol=1e-12)


def test_row_batching_is_invisible(monkeypatch):
    import rkcore.maps.random_kernel as maps
    X = _data(n=300, d=8)
    full = RandomKernel(64, degree=3, random_state=0).fit(X).transform(X)
    monkeypatch.setattr(maps, "TRANSFORM_BLOCK_BYTES", 1)  # one row per block
    monkeypatch.setattr(maps, "MIN_GEMM_BLOCK_ROWS", 1)
    # BLAS may sum in another order for other block shapes: equal to rounding only
    np.testing.assert_allclose(RandomKernel(64, degree=3, random_state=0).fit(X).transform(X), full, rtol=1e-12, atol=1e-15)


def test_same_seed_same_output_and_shapes():
    X = _data(n=10)
    a = RandomKernel(32, kernel="all_subsets", distribution="uniform", random_state=7).fit(X)
    b = RandomKernel(32, kernel="all_subsets", distribution="uniform", random_state=7).fit(X)
    assert a.random_weights_.shape == (32, X.shape[1])
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    c = RandomKernel(32, kernel="all_subsets", distribution="uniform", random_state=8).fit(X)
    assert not np.array_equal(a.transform(X), c.transform(X))


@pytest.mark.parametrize("distribution,low,high", [("rademacher", -1, 1), ("uniform", -np.sqrt(3), np.sqrt(3))])
def test_weights_support(distribution, low, high):
    W = RandomKernel(2000, distribution=distribution, random_state=0).fit(np.ones((2, 5))).random_weights_
    assert W.min() >= low and W.max() <= high
    if distribution == "rademacher":
        assert set(np.unique(W)) == {-1.0, 1.0}


@pytest.mark.parametrize("distribution", list(DISTRIBUTIONS))
def test_weight_moments(distribution):
    """Mean 0, variance 1 (Proposition 2), fourth moment as tabulated; 5-SE tolerances."""
    n = 400_000
    w = DISTRIBUTIONS[distribution].sample(np.random.RandomState(0), (n,))
    mu4 = DISTRIBUTIONS[distribution].fourth_moment
    assert abs(w.mean()) < 5 / np.sqrt(n)
    assert abs((w**2).mean() - 1) < 5 * np.sqrt(mu4 - 1) / np.sqrt(n) + 1e-12
    assert abs((w**4).mean() - mu4) < 5 * (w**8).std() / np.sqrt(n) + 1e-12


@pytest.mark.parametrize(
    "params,X,match",
    [
        ({}, np.array([[0.0, np.nan, 1.0]]), "NaN"),
        ({}, np.array([[0.0, np.inf, 1.0]]), "infinity"),
        ({"degree": 0}, np.ones((2, 3)), "degree"),
        ({"degree": 4}, np.ones((2, 3)), "degree=4 exceeds"),
        ({"n_components": 0}, np.ones((2, 3)), "n_components"),
        ({"kernel": "polynomial"}, np.ones((2, 3)), "kernel"),
        ({"distribution": "cauchy"}, np.ones((2, 3)), "distribution"),
        ({"kernel": "itemset", "itemsets": [(0, 5)]}, np.ones((2, 3)), "out of range"),
        ({"kernel": "itemset", "itemsets": []}, np.ones((2, 3)), "empty"),
        ({"kernel": "itemset"}, np.ones((2, 3)), "needs itemsets"),
    ],
)
def test_bad_input_raises_clear_value_error(params, X, match):
    with pytest.raises(ValueError, match=match):
        RandomKernel(**params).fit(X)


def test_error_messages_list_allowed_values():
    with pytest.raises(ValueError) as err:
        RandomKernel(distribution="cauchy").fit(np.ones((2, 3)))
    assert "rademacher" in str(err.value) and "laplace" in str(err.value)
    with pytest.raises(ValueError) as err:
        RandomKernel(degree=4).fit(np.ones((2, 3)))
    assert "1 <= degree <= 3" in str(err.value)


def test_different_n_features_at_transform():
    rk = RandomKernel(8, random_state=0).fit(np.ones((2, 4)))
    with pytest.raises(ValueError, match="4 features"):
        rk.transform(np.ones((2, 5)))


@pytest.mark.parametrize("distribution", ["gaussian", "laplace"])
def test_all_subsets_skips_zero_features_exactly(distribution):
    """Rows with few non-zeros multiply only those factors; the map equals the full product."""
    rng = np.random.RandomState(3)
    X = rng.rand(60, 12) * (rng.rand(60, 12) < 0.25)  # sparse rows: the non-zero path
    X[0] = 0.0  # an all-zero row maps to the constant 1/sqrt(D)
    rk = RandomKernel(40, kernel="all_subsets", distribution=distribution, random_state=0).fit(X)
    W = rk.random_weights_
    full = np.prod(1.0 + X[:, None, :] * W[None, :, :], axis=2) / np.sqrt(40)
    np.testing.assert_allclose(rk.transform(X), full, rtol=1e-12, atol=0)
    np.testing.assert_allclose(rk.transform(sp.csr_matrix(X)), full, rtol=1e-12, atol=0)


@pytest.mark.parametrize("distribution", sorted(DISTRIBUTIONS))
def test_weights_drawn_by_a_reseeded_generator_are_those_of_a_new_random_state(distribution):
    """draw_with reuses one RandomState per thread for int seeds: the weights must be bit for bit those of
    RandomState(seed), whatever was drawn before, for numpy ints too; other random_state kinds pass through."""
    import threading

    from rkcore.maps.distributions import draw_with
    from rkcore.maps.random_kernel import draw_weights

    dist = DISTRIBUTIONS[distribution]
    for seed in (0, 1, 7, np.int64(12345), 2**32 - 1):
        expected = dist.sample(np.random.RandomState(seed), (5, 3))
        draw_with(99, lambda rng: rng.standard_normal(7))  # leaves the shared generator mid-stream (and a cached gauss)
        np.testing.assert_array_equal(draw_weights(distribution, 5, 3, seed), expected)
    instance = np.random.RandomState(3)
    np.testing.assert_array_equal(draw_weights(distribution, 4, 2, instance),
                                  dist.sample(np.random.RandomState(3), (4, 2)))
    with pytest.raises(ValueError):
        draw_weights(distribution, 2, 2, -1)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(draw_weights(distribution, 3, 3, 5)))
    thread.start()
    thread.join()
    np.testing.assert_array_equal(seen[0], dist.sample(np.random.RandomState(5), (3, 3)))


def test_float32_dot_map_computes_in_float32():
    """The dot map's one GEMM runs in float32 for float32 input (its contract, and its speed: a float64
    scale once made NumPy 2 promote the weights, so every float32 block ran a float64 GEMM)."""
    from rkcore.maps.rk_blocks import _fast_block_mapper

    X = np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)
    rk = RandomKernel(16, kernel="dot", random_state=0).fit(X)
    W32 = rk.random_weights_.astype(np.float32)
    assert _fast_block_mapper(rk.family_, W32, True).fn(X).dtype == np.float32
    assert rk.transform(X).dtype == np.float32
