"""Exact variance of the RK estimator, against brute force, quadrature and Monte Carlo."""
from itertools import product

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from rkcore.theory import variance as V
from rkcore.maps.distributions import DISTRIBUTIONS
from rkcore.kernels.itemsets import ItemsetFamily
from rkcore.kernels.exact import itemset_kernel
from rkcore.maps.random_kernel import RandomKernel

KEYS = [k for k, e in DISTRIBUTIONS.items() if e.iid]  # the formulas are for i.i.d. weights (see test_orthogonal)


def named_families(d):
    return [
        ItemsetFamily.anova(d, 1), ItemsetFamily.anova(d, 2), ItemsetFamily.anova(d, 3),
        ItemsetFamily.anova(d, d), ItemsetFamily.up_to(d, 0), ItemsetFamily.up_to(d, 1),
        ItemsetFamily.up_to(d, 2), ItemsetFamily.dot(d), ItemsetFamily.all_subsets(d),
    ]


def brute_force(X, Y, family, mu4):
    """E[(K_S(x,w) K_S(y,w))^2] and K_S(x,y) by summing over all 4-tuples (U1, U2, V1, V2) of S:
    prod_j x_j^{a_j} y_j^{b_j} E[w^{a_j + b_j}], a_j = [j in U1] + [j in U2], b_j likewise for V."""
    S = family.enumerate()
    d = family.d
    incidence = np.zeros((len(S), d), dtype=np.int64)
    for row, itemset in enumerate(S):
        incidence[row, list(itemset)] = 1
    pair_exponents = (incidence[:, None, :] + incidence[None, :, :]).reshape(-1, d)  # (U1, U2) -> a
    moments = np.array([1.0, 0.0, 1.0, 0.0, mu4])  # E[w^k], k = 0..4, symmetric distribution
    expectation = moments[pair_exponents[:, None, :] + pair_exponents[None, :, :]].prod(axis=2)
    second, kernel = [], []
    for x, y in zip(X, Y):
        x_part = np.prod(x ** pair_exponents, axis=1)
        y_part = np.prod(y ** pair_exponents, axis=1)
        second.append(x_part @ expectation @ y_part)
        kernel.append(np.prod((x * y) ** incidence, axis=1).sum())
    return np.array(second), np.array(kernel)


# ------------------------------------------------------------------------- exactness
@pytest.mark.parametrize("d", [4, 5])
@pytest.mark.parametrize("case", range(9))
def test_matches_brute_force_over_itemset_4_tuples(d, case):
    family = named_families(d)[case]
    rng = np.random.RandomState(10 * d + case)
    X, Y = rng.uniform(-1.5, 1.5, (4, d)), rng.uniform(-1.5, 1.5, (4, d))
    X[0, 1] = 0.0  # a zero entry exercises the per-pair compaction
    Y[3] = X[3]  # x = y
    for key in KEYS:
        mu4 = DISTRIBUTIONS[key].fourth_moment
        second, kernel = brute_force(X, Y, family, mu4)
        by_family = V.second_moment(X, Y, kernel=family, distribution=key)
        np.testing.assert_allclose(by_family, second, rtol=1e-10)
        by_name = V.second_moment(X, Y, kernel=family.kind, degree=family.degree, distribution=key)
        np.testing.assert_allclose(by_name, second, rtol=1e-10)
        var = V.rk_variance(X, Y, 7, kernel=family, distribution=key)
        np.testing.assert_allclose(var, (second - kernel**2) / 7, rtol=1e-10, atol=1e-10 * second.max() / 7)


@pytest.mark.parametrize("family", named_families(7)[1:4] + named_families(7)[6:])
def test_matches_three_point_quadrature_with_exact_kernels(family):
    """Independent route: only E[w^2] = 1 and E[w^4] = mu4 enter E[f^2], so the symmetric
    three-point law {-a, 0, a} with a^2 = mu4, P(+-a) = 1/(2 mu4) gives the same second moment.
    Enumerate its 3^d points and evaluate f with rkcore.kernels.exact.itemset_kernel."""
    d = family.d
    rng = np.random.RandomState(3)
    X, Y = rng.uniform(-1.2, 1.2, (3, d)), rng.uniform(-1.2, 1.2, (3, d))
    for key in ("rademacher", "gaussian", "laplace"):
        mu4 = DISTRIBUTIONS[key].fourth_moment
        a, p = np.sqrt(mu4), 1.0 / mu4
        support = [(-a, p / 2), (a, p / 2)] + ([(0.0, 1.0 - p)] if p < 1 else [])
        W = np.array([[v for v, _ in point] for point in product(support, repeat=d)])
        prob = np.array([np.prod([q for _, q in point]) for point in product(support, repeat=d)])
        f = itemset_kernel(X, W, family) * itemset_kernel(Y, W, family)  # (pairs, points)
        expected = (f**2 * prob).sum(axis=1)
        np.testing.assert_allclose(V.second_moment(X, Y, kernel=family, distribution=key), expected, rtol=1e-10)


def test_closed_forms_agree_with_the_dynamic_program():
    rng = np.random.RandomState(5)
    X, Y = rng.normal(size=(30, 9)), rng.normal(size=(30, 9))
    for key in KEYS:
        # dot is the ANOVA kernel of order 1: closed form vs dynamic program
        np.testing.assert_allclose(V.rk_variance(X, Y, 3, kernel="dot", distribution=key),
                                   V.rk_variance(X, Y, 3, kernel="anova", degree=1, distribution=key), rtol=1e-10)
        # all subsets is up-to-d: closed product vs dynamic program
        np.testing.assert_allclose(V.second_moment(X, Y, kernel="all_subsets", distribution=key),
                                   V.second_moment(X, Y, kernel="up_to", degree=9, distribution=key), rtol=1e-10)
    # Gaussian dot product: the textbook ||x||^2 ||y||^2 + <x, y>^2
    textbook = (X**2).sum(1) * (Y**2).sum(1) + (X * Y).sum(1) ** 2
    np.testing.assert_allclose(V.rk_variance(X, Y, 1, kernel="dot", distribution="gaussian"), textbook, rtol=1e-12)


def test_known_values():
    e1 = np.array([[1.0, 0.0, 0.0]])
    # K(x, w) = w_1: f = w_1^2, Var f = mu4 - 1
    for key in KEYS:
        assert V.rk_variance(e1, e1, 1, kernel="dot", distribution=key)[0] == pytest.approx(
            DISTRIBUTIONS[key].fourth_moment - 1.0, abs=1e-14)
    # up-to order 0 is the constant kernel 1: zero variance
    assert V.rk_variance(e1, e1, 5, kernel="up_to", degree=0)[0] == 0.0
    # Rademacher, ANOVA of order 2, x = y = (1, 1): K(x, w) = w_1 w_2, so f = 1 and Var = 0
    ones = np.ones((1, 2))
    assert V.rk_variance(ones, ones, 1, kernel="anova", degree=2)[0] == pytest.approx(0.0, abs=1e-14)


# ------------------------------------------------------------------------- Monte Carlo
MC_CASES = [("anova", 2, 14, 1.0), ("anova", 3, 12, 1.0), ("up_to", 2, 14, 0.6), ("dot", 1, 16, 1.0),
            ("all_subsets", 1, 14, 0.35)]


@pytest.mark.parametrize("kernel, degree, d, scale", MC_CASES)
@pytest.mark.parametrize("key", KEYS)
def test_monte_carlo_variance_of_rk_products(kernel, degree, d, scale, key):
    """N i.i.d. products f_s = K(x, w_s) K(y, w_s) from one RandomKernel with N components
    (f_s = N Z_s(x) Z_s(y) undoes the 1/sqrt(N) scaling). The sample variance s^2 has
    standard error sqrt((m4 - s^4 (N-3)/(N-1)) / N), with m4 the sample fourth central
    moment (exact formula for Var(s^2) with moments replaced by their estimates); we allow
    5 SE. The sample mean is checked against K with SE = sqrt(Var f / N)."""
    N = 40_000
    seed = 1 + 7 * KEYS.index(key) + 101 * [c[0] for c in MC_CASES].index(kernel) + degree
    XY = np.random.RandomState(seed).uniform(-scale, scale, (2, d))
    Z = RandomKernel(n_components=N, kernel=kernel, degree=degree, distribution=key,
                     random_state=seed).fit(XY).transform(XY)
    f = N * Z[0] * Z[1]
    s2 = f.var(ddof=1)
    m4 = np.mean((f - f.mean()) ** 4)
    se = np.sqrt((m4 - s2**2 * (N - 3) / (N - 1)) / N)
    exact = V.rk_variance(XY[:1], XY[1:], 1, kernel=kernel, degree=degree, distribution=key)[0]
    assert abs(s2 - exact) <= 5 * se, (s2, exact, se)
    value = V.variance_table(XY[:1], XY[1:], 1, kernel, degree, [key]).kernel_value[0]
    assert abs(f.mean() - value) <= 5 * np.sqrt(exact / N)


def test_monte_carlo_check_has_power():
    """The Monte Carlo test above distinguishes distributions: with Rademacher draws, the
    exact Gaussian and Laplace variances lie far outside 5 SE of the sample variance."""
    N, d = 40_000, 14
    XY = np.random.RandomState(0).uniform(-1, 1, (2, d))
    Z = RandomKernel(n_components=N, kernel="anova", degree=2, random_state=0).fit(XY).transform(XY)
    f = N * Z[0] * Z[1]
    s2, m4 = f.var(ddof=1), np.mean((f - f.mean()) ** 4)
    se = np.sqrt((m4 - s2**2 * (N - 3) / (N - 1)) / N)
    assert abs(s2 - V.rk_variance(XY[:1], XY[1:], 1, distribution="rademacher")[0]) <= 5 * se
    for other in ("gaussian", "laplace"):
        assert abs(s2 - V.rk_variance(XY[:1], XY[1:], 1, distribution=other)[0]) > 10 * se


# ------------------------------------------------------------------------- Lemma 4
@pytest.mark.parametrize("kernel, degree", [("anova", 2), ("anova", 3), ("up_to", 2), ("dot", 1), ("all_subsets", 1)])
def test_lemma4_pointwise_and_monotone_in_mu4(kernel, degree):
    """Var is a polynomial in (mu4 - 1) with non-negative coefficients (module docstring), so it
    increases with mu4 at every pair and Rademacher (mu4 = 1) is smallest pointwise, not only in
    the sup of Lemma 4. Checked on random pairs with mixed signs, by exact interpolation."""
    rng = np.random.RandomState(11)
    d = 8
    X, Y = rng.normal(size=(300, d)), rng.normal(size=(300, d))
    Y[:50] = X[:50]
    variances = {key: V.rk_variance(X, Y, 10, kernel=kernel, degree=degree, distribution=key) for key in KEYS}
    order = sorted(KEYS, key=lambda k: DISTRIBUTIONS[k].fourth_moment)  # rademacher, uniform, gaussian, laplace
    assert order[0] == "rademacher"
    scale = np.abs(variances["laplace"]) + 1e-300
    for low, high in zip(order, order[1:]):
        assert (variances[low] <= variances[high] + 1e-12 * scale).all()
    assert (variances["rademacher"] < variances["laplace"]).mean() > 0.9  # strictly, for generic pairs

    degree_in_mu4 = d if kernel == "all_subsets" else degree  # at most this many features carry w^4
    t = np.arange(degree_in_mu4 + 2.0)  # one point more than the degree
    second = np.stack([V.second_moment(X, Y, kernel=kernel, degree=degree, distribution=1.0 + ti) for ti in t], 1)
    coef = np.linalg.solve(np.vander(t, increasing=True), second.T).T  # in powers of (mu4 - 1)
    size = np.abs(second).max(axis=1, keepdims=True)
    assert (coef >= -1e-9 * size).all()
    assert (np.abs(coef[:, -1]) <= 1e-9 * size[:, 0]).all()  # degree as claimed
    # monotone on a fine grid
    grid = np.linspace(1.0, 8.0, 15)
    var_grid = np.stack([V.rk_variance(X[:40], Y[:40], 1, kernel=kernel, degree=degree, distribution=g) for g in grid])
    assert (np.diff(var_grid, axis=0) >= -1e-12 * np.abs(var_grid).max(axis=0)).all()


# ------------------------------------------------------------------------- API
def test_scales_as_one_over_D_and_sparse_equals_dense():
    rng = np.random.RandomState(2)
    X = rng.uniform(-1, 1, (20, 12)) * (rng.rand(20, 12) < 0.3)  # sparse-ish: compaction kicks in
    Y = rng.uniform(-1, 1, (20, 12)) * (rng.rand(20, 12) < 0.3)
    for kernel in V.VARIANCE_KERNELS:
        v1 = V.rk_variance(X, Y, 1, kernel=kernel, degree=3, distribution="gaussian")
        np.testing.assert_allclose(V.rk_variance(X, Y, 64, kernel=kernel, degree=3, distribution="gaussian"), v1 / 64)
        vs = V.rk_variance(sp.csr_matrix(X), sp.csr_matrix(Y), 1, kernel=kernel, degree=3, distribution="gaussian")
        np.testing.assert_allclose(vs, v1, rtol=1e-12, atol=1e-300)
        assert v1.shape == (20,) and v1.dtype == np.float64


def test_block_boundaries_do_not_matter(monkeypatch):
    rng = np.random.RandomState(4)
    X, Y = rng.normal(size=(50, 6)), rng.normal(size=(50, 6))
    full = V.rk_variance(X, Y, 1, degree=3)
    monkeypatch.setattr(V, "PAIR_BLOCK_BYTES", 1)  # one pair per block
    np.testing.assert_allclose(V.rk_variance(X, Y, 1, degree=3), full, rtol=1e-13)


@pytest.mark.parametrize("kernel", V.VARIANCE_KERNELS)
def test_gram_matches_paired_variance(kernel):
    rng = np.random.RandomState(6)
    X, Y = rng.normal(size=(7, 5)), rng.normal(size=(4, 5))
    G = V.rk_variance_gram(X, 3, kernel=kernel, degree=2, distribution="uniform")
    i, j = np.meshgrid(np.arange(7), np.arange(7), indexing="ij")
    paired = V.rk_variance(X[i.ravel()], X[j.ravel()], 3, kernel=kernel, degree=2, distribution="uniform")
    np.testing.assert_allclose(G, paired.reshape(7, 7), rtol=1e-10, atol=1e-14)
    np.testing.assert_array_equal(G, G.T)
    GY = V.rk_variance_gram(X, 3, Y=sp.csr_matrix(Y), kernel=kernel, degree=2, distribution="uniform")
    i, j = np.meshgrid(np.arange(7), np.arange(4), indexing="ij")
    paired = V.rk_variance(X[i.ravel()], Y[j.ravel()], 3, kernel=kernel, degree=2, distribution="uniform")
    np.testing.assert_allclose(GY, paired.reshape(7, 4), rtol=1e-10, atol=1e-14)


def test_variance_table_is_tidy():
    rng = np.random.RandomState(8)
    X, Y = rng.normal(size=(5, 6)), rng.normal(size=(5, 6))
    df = V.variance_table(X, Y, [10, 100], kernel="anova", degree=2)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == ["pair", "distribution", "n_components", "kernel_value", "variance", "std"]
    assert len(df) == 5 * len(KEYS) * 2 and set(df.distribution) == set(KEYS)
    for key in KEYS:
        rows = df[(df.distribution == key) & (df.n_components == 10)].sort_values("pair")
        np.testing.assert_allclose(rows.variance, V.rk_variance(X, Y, 10, distribution=key))
    np.testing.assert_allclose(df["std"], np.sqrt(df.variance))
    np.testing.assert_allclose(df.kernel_value[:5], [itemset_kernel(X[i:i + 1], Y[i:i + 1], ItemsetFamily.anova(6, 2))[0, 0]
                                                     for i in range(5)])
    only = V.variance_table(X, Y, 1, "dot", distributions=["rademacher"])
    assert len(only) == 5 and set(only.distribution) == {"rademacher"}



@pytest.mark.parametrize("kernel, degree, X, Y", [
    # dot: x^2 overflows (1e200^2) unless each pair is balanced by a power of two, as rk_variance does
    ("dot", 1, np.array([[1e200, 3e199, 0.0], [1.0, 2.0, 3.0]]), np.array([[1e-200, 2e-200, 5e-201], [0.5, 0.1, 0.3]])),
    # one non-zero feature per row, ANOVA m = 1 under Rademacher weights: f = x^2 y^2 w^4 is constant, the
    # variance exactly 0, and E f^2 - K^2 rounds either way; a variance below 0 is not a variance
    ("anova", 1, np.eye(5)[np.arange(300) % 5] * np.exp(np.random.RandomState(1).uniform(-5, 5, (300, 1))),
     np.eye(5)[np.arange(300) % 5] * np.random.RandomState(2).uniform(0.1, 3, (300, 1))),
])
def test_variance_table_is_rk_variance_at_the_edges(kernel, degree, X, Y):
    """The table's variance is rk_variance's, to the bit, where a second formula would differ (the one place that
    forms a feature's variance): finite where the unbalanced dot form overflows, never below 0."""
    table = V.variance_table(X, Y, 3, kernel, degree, ["rademacher", "gaussian"])
    for key in ("rademacher", "gaussian"):
        rows = table[table.distribution == key].sort_values("pair")
        expected = V.rk_variance(X, Y, 3, kernel=kernel, degree=degree, distribution=key)
        assert np.all(np.isfinite(expected)) and np.all(expected >= 0)
        np.testing.assert_array_equal(rows.variance.to_numpy(), expected)

@pytest.mark.parametrize("call, match", [
    (lambda X: V.rk_variance(X, X, 10, kernel="rbf"), "kernel must be one of"),
    (lambda X: V.rk_variance(X, X, 10, kernel=ItemsetFamily.custom(4, [(0, 1)])), "supports the families"),
    (lambda X: V.rk_variance(X, X, 10, distribution="cauchy"), "Unknown distribution"),
    (lambda X: V.rk_variance(X, X, 10, distribution=0.5), "fourth moment must be a finite number >= 1"),
    (lambda X: V.rk_variance(X, X, 0), "n_components"),
    (lambda X: V.rk_variance(X, X, 2.5), "n_components"),
    (lambda X: V.rk_variance(X, X, True), "n_components"),
    (lambda X: V.rk_variance(X, X[:2], 10), "same shape"),
    (lambda X: V.rk_variance(X, X, 10, degree=5), "degree"),
    (lambda X: V.second_moment(X, np.full_like(X, np.nan)), "NaN"),
    (lambda X: V.rk_variance_gram(X, 10, Y=X[:, :2]), "features"),
    (lambda X: V.variance_table(X, X, 10, distributions=[]), "distributions is empty"),
    (lambda X: V.variance_table(X, X, 10, distributions=["nope"]), "Unknown distribution"),
])
def test_bad_input(call, match):
    X = np.random.RandomState(0).normal(size=(3, 4))
    with pytest.raises(ValueError, match=match):
        call(X)
