"""Learners of the accuracy study: exact kernel SVM, linear models on random features,
factorization machines, the all-subsets model and Sparse Random Features.

Math is checked against definitions (brute-force itemset sums, finite differences);
learning is checked on a synthetic task whose labels depend only on pairwise
feature interactions, where a linear model on x is near chance.
"""
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import PolynomialCountSketch
from sklearn.base import clone
from sklearn.multiclass import OneVsRestClassifier
from sklearn.svm import SVC, LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

from rkcore.data.datasets import load_builtin
from rkcore.maps.random_kernel import RandomKernel
from rkcore.learners import (
    AllSubsetsModelClassifier,
    ExactKernelSVC,
    FactorizationMachineClassifier,
    SparseRandomFeatureClassifier,
    exact_gram,
    random_feature_pipeline,
)
from rkcore.registry import KernelSpec

ANOVA2 = KernelSpec("anova", 2)
UP_TO2 = KernelSpec("up_to", 2)


@pytest.fixture(autouse=True)
def one_blas_thread():
    # The objectives do many small GEMMs; on a shared 2-core machine multi-threaded BLAS
    # spends more time synchronising than computing (measured ~25x slower checks).
    with threadpool_limits(1):
        yield


# ----------------------------------------------------------------------------- scikit-learn conformance
# The check instances use kernels with a linear part (up_to: itemsets of size <= 2,
# or fit_linear=True): several checks train on 2-feature blobs, where the pure ANOVA-2
# kernel has the single feature x1*x2 and cannot separate blobs - a property of the
# kernel, not of the estimator. For the same reason FM degree 3 is not run here: the
# checks' 2-feature data has no itemset of size 3, which fit rejects by design
# (test_degree_larger_than_d_is_rejected); degree only changes a loop bound.
CHECK_INSTANCES = [
    ExactKernelSVC(UP_TO2, C=10.0),
    FactorizationMachineClassifier(loss="logistic", fit_linear=True, n_components=5, max_iter=50, tol=1e-4,
                                   random_state=0),
    AllSubsetsModelClassifier(n_components=5, max_iter=50, tol=1e-4, random_state=0),
    SparseRandomFeatureClassifier(spec=UP_TO2, n_iter=3, batch=20, random_state=0),
]
# random_feature_pipeline returns scikit-learn's own Pipeline of a registry map (each map
# runs these checks in its own test file) and LinearSVC / LogisticRegression: nothing of
# ours to check there, and scikit-learn itself marks two Pipeline checks as expected failures.

SKLEARN_VERSION = tuple(int(part) for part in sklearn.__version__.split(".")[:2])
_SAMPLE_WEIGHT_SVM = ("libsvm scales C per sample, which is not equivalent to repeating samples; "
                      "scikit-learn's own SVC is listed with the same expected failure")
_SAMPLE_WEIGHT_NONCONVEX = ("the weighted and repeated objectives are the same function, but the problem is "
                            "non-convex and L-BFGS stops at tol: round-off changes the iterate path, so the "
                            "outputs differ far beyond the check's rtol=1e-7")


def expected_failed_checks(estimator):
    if isinstance(estimator, ExactKernelSVC):
        return {
            "check_sample_weight_equivalence_on_dense_data": _SAMPLE_WEIGHT_SVM,
            "check_sample_weight_equivalence_on_sparse_data": _SAMPLE_WEIGHT_SVM,
            "check_class_weight_classifiers": (
                "the check forces max_iter=1000 on unscaled blobs (std 20) where degree-2 kernel values reach "
                "~1e6; libsvm stops at the cap before the class weights act (with max_iter=-1 every test "
                "point is predicted as the up-weighted class, as the check wants)"),
        }
    # scikit-learn < 1.7 also compares predict_proba, where the FM's L-BFGS stop at tol shows too
    if isinstance(estimator, AllSubsetsModelClassifier) or (
            isinstance(estimator, FactorizationMachineClassifier) and SKLEARN_VERSION < (1, 7)):
        return {"check_sample_weight_equivalence_on_dense_data": _SAMPLE_WEIGHT_NONCONVEX,
                "check_sample_weight_equivalence_on_sparse_data": _SAMPLE_WEIGHT_NONCONVEX}
    return {}


@parametrize_with_checks(CHECK_INSTANCES, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_class_weight_check_passes_without_iteration_cap():
    """Backs the expected failure above: uncapped libsvm honours the class weights."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(centers=3, random_state=0, cluster_std=20)
    model = ExactKernelSVC(UP_TO2, C=10.0, class_weight={0: 1000, 1: 1e-4, 2: 1e-4}).fit(X[:50], y[:50])
    assert np.mean(model.predict(X[50:]) == 0) > 0.87


# ----------------------------------------------------------------------------- helpers
def _small_problem(seed=0, n=30, d=5, sparse=False):
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, d))
    if sparse:
        X[rng.uniform(size=X.shape) < 0.4] = 0.0
        X = sp.csr_matrix(X)
    y = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    return X, y


def _central_differences(fun, theta, eps=1e-6):
    grad = np.empty_like(theta)
    for i in range(theta.size):
        step = np.zeros_like(theta)
        step[i] = eps
        grad[i] = (fun(theta + step) - fun(theta - step)) / (2 * eps)
    return grad


def _anova_brute(p, x, m):
    return sum(np.prod(p[list(v)] * x[list(v)]) for v in itertools.combinations(range(x.size), m))


# ----------------------------------------------------------------------------- factorization machines
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("fit_linear", [False, True])
@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
@pytest.mark.parametrize("degree", [2, 3])
def test_fm_gradient_matches_finite_differences(degree, loss, fit_linear, sparse):
    """The analytic gradient (power sums, d e_m / d p_t = (-1)^(t-1) e_(m-t) / t) equals
    central differences. Central differences have error O(eps^2 f''') + O(u / eps) ~ 1e-9
    here, so a relative error of 1e-6 leaves a wide margin while a wrong sign or a missing
    term (errors of order 1) cannot pass."""
    X, y = _small_problem(seed=degree, sparse=sparse)
    fm = FactorizationMachineClassifier(degree=degree, n_components=3, loss=loss, fit_linear=fit_linear,
                                        alpha=0.05, beta=0.03, init_scale=0.7)
    rng = np.random.RandomState(1)
    theta = fm._initial(rng, X.shape[1], 0.7) + 0.2 * rng.standard_normal(
        int(fm.fit_intercept) + (X.shape[1] if fit_linear else 0) + 3 * X.shape[1])
    data = fm._prepare(X)
    s = np.full(X.shape[0], 1.0 / X.shape[0])
    value, grad, _ = fm._value_and_grad(theta, data, y, s)
    numeric = _central_differences(lambda t: fm._value_and_grad(t, data, y, s)[0], theta)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-6 * np.abs(numeric).max())


@pytest.mark.parametrize("degree", [2, 3])
def test_fm_output_is_the_anova_kernel_sum(degree):
    """f(x) = b + <w, x> + sum_s lambda_s K_A^m(p_s, x) with K_A^m summed over itemsets (paper eq. 5)."""
    X, y = _small_problem(seed=3, n=12, d=5)
    fm = FactorizationMachineClassifier(degree=degree, n_components=3, fit_linear=True, max_iter=5,
                                        init_scale=0.5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fm.fit(X, y)
    expected = [fm.intercept_ + fm.coef_ @ x + sum(lam * _anova_brute(p, x, degree)
                                                    for lam, p in zip(fm.lambdas_, fm.P_)) for x in X]
    np.testing.assert_allclose(fm.decision_function(X), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(fm.decision_function(sp.csr_matrix(X)), expected, rtol=1e-10, atol=1e-12)
    assert set(np.unique(fm.lambdas_)) <= {-1.0, 1.0}


def test_fm_convergence_report():
    X, y = _small_problem(seed=4, n=60, d=6)
    with pytest.warns(ConvergenceWarning, match="did not converge in 3"):
        short = FactorizationMachineClassifier(n_components=4, max_iter=3, init_scale=0.5, random_state=0).fit(X, y)
    assert short.n_iter_ == 3 and not short.converged_
    assert short.objective_history_.shape == (4,)  # initial value + one per iteration
    # L-BFGS-B's line search enforces a sufficient decrease at every iteration
    assert np.all(np.diff(short.objective_history_) < 0)

    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        full = FactorizationMachineClassifier(n_components=4, beta=1e-2, max_iter=2000, tol=1e-5, init_scale=0.5,
                                              random_state=0).fit(X, y)
    assert full.converged_ and full.n_iter_ < 2000
    assert full.objective_ == pytest.approx(full.objective_history_[-1])
    assert full.objective_ < short.objective_


@pytest.mark.parametrize("sparse", [False, True])
def test_auto_init_scale_gives_unit_tenth_projections(sparse):
    """init_scale="auto": std of <p_s, x_i> over components and samples is 0.1.

    With k d = 400 x 20 Gaussian entries and n = 300 rows the empirical std of the
    n k = 120,000 projections (strongly dependent through the 300 rows) is within a
    few percent; 10% tolerance. A missing sqrt or a per-feature instead of per-row
    norm would be off by a factor ~sqrt(d) = 4.5."""
    rng = np.random.RandomState(0)
    X = rng.standard_normal((300, 20)) * 0.05  # small-scale data, like L1-normalised rows
    X[rng.uniform(size=X.shape) < 0.5] = 0.0
    if sparse:
        X = sp.csr_matrix(X)
    for model in (FactorizationMachineClassifier(n_components=400, init_scale="auto"),
                  AllSubsetsModelClassifier(n_components=400, init_scale="auto")):
        theta = model._initial(np.random.RandomState(1), 20, model._init_std(X))
        P = theta[-400 * 20:].reshape(400, 20)
        assert np.std(np.asarray(X @ P.T)) == pytest.approx(0.1, rel=0.1)


def test_auto_init_lets_third_order_fm_leave_the_flat_start():
    """MovieLens-like rows (7 of 40 binary features, L1-normalised): at P ~ N(0, 0.01^2) the
    m = 3 gradient is ~1e-10, below tol, and L-BFGS stops as a constant (as measured on
    MovieLens itself); "auto" starts where the model can fit the training set."""
    rng = np.random.RandomState(0)
    n, d = 400, 40
    X = np.zeros((n, d))
    X[np.arange(n)[:, None], rng.uniform(size=(n, d)).argsort(axis=1)[:, :7]] = 1.0 / 7
    f = np.einsum("ij,jk,ik->i", X, np.triu(rng.standard_normal((d, d)), 1), X)
    y = (f > np.median(f)).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        flat = FactorizationMachineClassifier(degree=3, n_components=10, random_state=0).fit(X, y)
        auto = FactorizationMachineClassifier(degree=3, n_components=10, init_scale="auto", random_state=0).fit(X, y)
    assert flat.converged_ and flat.n_iter_ < 10
    assert np.ptp(flat.decision_function(X)) < 1e-6  # the intercept alone
    assert auto.score(X, y) > 0.9


def test_fm_deterministic_under_random_state():
    X, y = _small_problem(seed=5, n=50, d=6)
    kw = dict(n_components=4, max_iter=20, init_scale=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = FactorizationMachineClassifier(random_state=3, **kw).fit(X, y).decision_function(X)
        b = FactorizationMachineClassifier(random_state=3, **kw).fit(X, y).decision_function(X)
        c = FactorizationMachineClassifier(random_state=4, **kw).fit(X, y).decision_function(X)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_degree_larger_than_d_is_rejected():
    X, y = _small_problem(n=20, d=2)
    with pytest.raises(ValueError, match=r"degree=3 exceeds the number of features: X has 2 feature\(s\)"):
        FactorizationMachineClassifier(degree=3).fit(X, y)


@pytest.mark.parametrize("model", [
    FactorizationMachineClassifier(fit_linear=True, n_components=3, max_iter=50, random_state=0),
    AllSubsetsModelClassifier(n_components=3, max_iter=50, random_state=0),
    FactorizationMachineClassifier(fit_linear=True, n_components=3, max_iter=50, random_state=0, loss="logistic"),
])
def test_many_classes_natively_as_one_vs_rest(model):
    """Three classes without a wrapper: one binary model per class against the rest, the very models
    OneVsRestClassifier fits (same parameters, same seed), so scores, labels and probabilities agree."""
    rng = np.random.RandomState(0)
    X = rng.randn(90, 4)
    y = np.repeat(["a", "b", "c"], 30)
    X[y == "b", 0] += 3.0
    X[y == "c", 1] += 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        native = clone(model).fit(X, y)
        ovr = OneVsRestClassifier(clone(model)).fit(X, y)
    assert list(native.classes_) == ["a", "b", "c"] and len(native.estimators_) == 3
    assert native.decision_function(X).shape == (90, 3) and native.P_.shape[0] == 3
    np.testing.assert_allclose(native.decision_function(X), ovr.decision_function(X), rtol=1e-12, atol=1e-12)
    assert (native.predict(X) == ovr.predict(X)).all() and native.score(X, y) > 0.8
    if model.loss == "logistic":
        np.testing.assert_allclose(native.predict_proba(X), ovr.predict_proba(X), rtol=1e-12, atol=1e-12)
    # a refit on two classes is a binary model again
    binary = native.fit(X[y != "c"], y[y != "c"])
    assert not hasattr(binary, "estimators_") and binary.decision_function(X).shape == (90,)


# ----------------------------------------------------------------------------- all-subsets model
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss", ["logistic", "squared_hinge"])
def test_all_subsets_gradient_matches_finite_differences(loss, sparse):
    X, y = _small_problem(seed=6, sparse=sparse)
    model = AllSubsetsModelClassifier(n_components=3, loss=loss, alpha=0.05, beta=0.03)
    rng = np.random.RandomState(2)
    theta = rng.standard_normal(3 + 3 * X.shape[1]) * 0.6
    data = model._prepare(X)
    s = np.full(X.shape[0], 1.0 / X.shape[0])
    _, grad, f = model._value_and_grad(theta, data, y, s)
    numeric = _central_differences(lambda t: model._value_and_grad(t, data, y, s)[0], theta)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-6 * np.abs(numeric).max())
    lam, P = model._split(theta, X.shape[1])
    Xd = X.toarray() if sparse else X
    np.testing.assert_allclose(f, np.prod(1.0 + Xd[:, None, :] * P[None], axis=2) @ lam, rtol=1e-12)


def test_all_subsets_exact_zero_factors():
    """1 + p_sj x_j = 0 exactly: the product is 0 and the gradient is the leave-one-out
    product (non-zero with one zero factor, zero with two) - no division by zero.
    f is a polynomial in P, so central differences are exact up to round-off there too."""
    X = np.array([[0.5, 0.25, -0.5, 0.0],    # p = (-2, 4, ., .) zeroes factor 0 and factor 1 of s=0
                  [0.5, 0.3, 0.2, 0.1],      # one zero factor (j = 0) for s = 0
                  [0.1, 0.2, 0.3, 0.4]])
    y = np.array([1.0, -1.0, 1.0])
    model = AllSubsetsModelClassifier(n_components=2, alpha=0.0, beta=0.0)
    P = np.array([[-2.0, -4.0, 0.3, 0.7], [0.2, -0.1, 0.5, 0.4]])
    lam = np.array([1.5, -0.7])
    theta = np.concatenate([lam, P.ravel()])
    data = model._prepare(X)
    s = np.full(3, 1.0 / 3)
    value, grad, f = model._value_and_grad(theta, data, y, s)
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(f, np.prod(1.0 + X[:, None, :] * P[None], axis=2) @ lam, rtol=1e-12)
    numeric = _central_differences(lambda t: model._value_and_grad(t, data, y, s)[0], theta, eps=1e-7)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-7)
    grad_P = grad[2:].reshape(2, 4)
    assert grad_P[0, 0] != 0.0  # row 1 has a single zero factor there: its leave-one-out product is not 0


# ----------------------------------------------------------------------------- exact kernel SVM
@pytest.mark.parametrize("spec", [ANOVA2, KernelSpec("anova", 3), KernelSpec("all_subsets"),
                                  KernelSpec("polynomial", 2)])
def test_exact_svc_equals_libsvm_on_full_gram(spec):
    """Blocked Grams and the support-vector-only decision equal SVC on the full precomputed Gram."""
    rng = np.random.RandomState(0)
    X = rng.uniform(-1, 1, size=(80, 6)) / 2
    y = (X[:, 0] * X[:, 1] + 0.3 * X[:, 2] * X[:, 3] > 0).astype(int)
    Xt = rng.uniform(-1, 1, size=(25, 6)) / 2
    model = ExactKernelSVC(spec, C=5.0, block_size=7).fit(X, y)
    ref = SVC(kernel="precomputed", C=5.0).fit(spec.exact(X), y)
    np.testing.assert_allclose(model.decision_function(Xt), ref.decision_function(spec.exact(Xt, X)),
                               rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(model.predict(Xt), ref.predict(spec.exact(Xt, X)))
    np.testing.assert_allclose(model.decision_function(sp.csr_matrix(Xt)), model.decision_function(Xt), rtol=1e-10)
    assert model.support_vectors_.shape[0] == ref.support_.size < X.shape[0]
    np.testing.assert_allclose(exact_gram(spec, X, Xt, block_size=4), spec.exact(X, Xt), rtol=1e-12)


def test_exact_svc_multiclass_matches_libsvm():
    rng = np.random.RandomState(1)
    X = rng.uniform(0, 1, size=(90, 5))
    y = np.argmax(X[:, :3] * X[:, 1:4], axis=1)
    model = ExactKernelSVC(ANOVA2, C=50.0, block_size=11).fit(X, y)
    ref = SVC(kernel="precomputed", C=50.0).fit(ANOVA2.exact(X), y)
    np.testing.assert_array_equal(model.predict(X[:40]), ref.predict(ANOVA2.exact(X[:40], X)))
    np.testing.assert_allclose(model.decision_function(X[:40]), ref.decision_function(ANOVA2.exact(X[:40], X)),
                               rtol=1e-8)


# ----------------------------------------------------------------------------- random-feature pipelines
def test_random_feature_pipeline_builds_registry_maps():
    pipe = random_feature_pipeline("rk", ANOVA2, 64, distribution="gaussian", random_state=0, C=3.0)
    assert isinstance(pipe.named_steps["map"], RandomKernel)
    assert pipe.named_steps["map"].distribution == "gaussian" and pipe.named_steps["map"].n_components == 64
    assert isinstance(pipe.named_steps["clf"], LinearSVC) and pipe.named_steps["clf"].C == 3.0
    ts = random_feature_pipeline("ts", KernelSpec("polynomial", 2), 32, classifier="logistic")
    assert isinstance(ts.named_steps["map"], PolynomialCountSketch)
    with pytest.raises(ValueError, match="does not approximate"):
        random_feature_pipeline("ts", ANOVA2, 32)
    with pytest.raises(ValueError, match="Unknown classifier 'svm'.*'linear_svc'"):
        random_feature_pipeline("rk", ANOVA2, 32, classifier="svm")


# ----------------------------------------------------------------------------- learning interactions
N_TRAIN, N_TEST = 1000, 500
C_SHARED = 1.0  # one C for every learner, as in the paper (SVM: 0.894 here; its best over C = 0.01..100 is 0.906)


@pytest.fixture(scope="module")
def interactions():
    """Labels = sign of a sparse sum of x_j x_k (d = 20, balanced): see rkcore.data.datasets."""
    ds = load_builtin("interactions", n_samples=N_TRAIN + N_TEST, random_state=0)
    X, y = ds.X, ds.y
    return X[:N_TRAIN], y[:N_TRAIN], X[N_TRAIN:], y[N_TRAIN:]


@pytest.fixture(scope="module")
def exact_accuracy(interactions):
    X, y, Xt, yt = interactions
    with threadpool_limits(1):
        return ExactKernelSVC(ANOVA2, C=C_SHARED).fit(X, y).score(Xt, yt)


def test_task_needs_interactions(interactions, exact_accuracy):
    """The thresholds below are meaningful: a linear SVM on x is near chance (0.5), the ANOVA-2 SVM is not."""
    X, y, Xt, yt = interactions
    linear = LinearSVC(C=C_SHARED).fit(X, y).score(Xt, yt)
    assert linear < 0.62
    assert exact_accuracy > 0.85


def test_rk_linear_svm_matches_exact_kernel_svm(interactions, exact_accuracy):
    """Linear SVM on RK-ANOVA-2 features with D = 16 d reaches the exact SVM within 2 points.

    The mean over 4 seeds is used: on this split one seed's accuracy has a std of ~0.009
    (measured over 20 seeds), so the 4-seed mean has a standard error of ~0.0045; the
    20-seed mean was 0.901 against the exact SVM's 0.894, so a shortfall of 0.02 is ~6 SE
    away from what we measured. D = 4 d, which approximates the kernel poorly, gives ~0.69:
    the test can fail.
    """
    X, y, Xt, yt = interactions
    D = 16 * X.shape[1]
    accuracies = [random_feature_pipeline("rk", ANOVA2, D, random_state=seed, C=C_SHARED).fit(X, y).score(Xt, yt)
                  for seed in range(4)]
    assert np.mean(accuracies) >= exact_accuracy - 0.02, (accuracies, exact_accuracy)


def test_fm_matches_exact_kernel_svm(interactions, exact_accuracy):
    """ANOVA-2 FM (rank 30, penalty 1 / (C n) as in the accuracy study) within 3 points."""
    X, y, Xt, yt = interactions
    reg = 1.0 / (C_SHARED * N_TRAIN)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fm = FactorizationMachineClassifier(alpha=reg, beta=reg, max_iter=150, random_state=0).fit(X, y)
    assert fm.objective_history_[-1] < 0.5 * fm.objective_history_[0]
    assert fm.score(Xt, yt) >= exact_accuracy - 0.03


def test_sparse_rf_prunes_and_matches_exact_kernel_svm(interactions, exact_accuracy):
    X, y, Xt, yt = interactions
    # tol=1e-2: liblinear's l1 solver crawls on these correlated features at its default 1e-4
    # (7x slower here, same accuracy to 0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = SparseRandomFeatureClassifier("rk", spec=ANOVA2, C=C_SHARED, n_iter=4, batch=80, tol=1e-2,
                                              random_state=0).fit(X, y)
    assert model.n_features_drawn_ == 320
    assert 0 < model.n_nonzero_ < model.n_features_drawn_
    assert model.n_active_history_.shape == (4,) and model.n_active_history_[-1] == model.n_nonzero_
    assert model.objective_history_.shape == (4,)
    assert model.score(Xt, yt) >= exact_accuracy - 0.03


def test_sparse_rf_predicts_through_kept_features_only():
    X, y = _small_problem(seed=7, n=120, d=5)
    model = SparseRandomFeatureClassifier("rk", spec=UP_TO2, C=0.5, n_iter=3, batch=30, random_state=1).fit(X, y)
    assert sum(c.size for c in model.columns_) == model.n_nonzero_ == model.coef_.shape[1]
    assert np.all(np.any(model.coef_ != 0, axis=0))  # every kept feature has a non-zero weight
    assert len(model.maps_) <= 3 and all(c.size > 0 for c in model.columns_)
    Z = np.hstack([m.transform(X)[:, c] for m, c in zip(model.maps_, model.columns_)])
    np.testing.assert_allclose(model.decision_function(X), Z @ model.coef_[0] + model.intercept_[0], rtol=1e-12)
    # a fully corrective solver on a growing working set does not increase the optimum
    # (liblinear solves to tol=1e-4 relative, hence the small slack)
    assert np.all(np.diff(model.objective_history_) <= 1e-3 * model.objective_history_[:-1])


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
def test_sparse_rf_deterministic(loss):
    X, y = _small_problem(seed=8, n=80, d=5)
    kw = dict(spec=UP_TO2, loss=loss, n_iter=2, batch=20, max_iter=200)
    a = SparseRandomFeatureClassifier(random_state=5, **kw).fit(X, y)
    b = SparseRandomFeatureClassifier(random_state=5, **kw).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.objective_history_, b.objective_history_)


# ----------------------------------------------------------------------------- probabilities
def test_predict_proba_own_for_logistic_and_calibrated_otherwise():
    """loss="logistic": sigma(f(x)) itself. probability=True: sigma(a f(x)) with a fitted on cross-validated
    scores, so the most probable class is the predicted one; on a learnable problem the calibrated
    probabilities beat the constant 1/2 in log loss. The default has no predict_proba."""
    from scipy.special import expit
    from sklearn.metrics import log_loss
    rng = np.random.RandomState(0)
    X = rng.randn(160, 4)
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    fm = FactorizationMachineClassifier(n_components=4, loss="logistic", tol=1e-4, random_state=0).fit(X, y)
    np.testing.assert_allclose(fm.predict_proba(X)[:, 1], expit(fm.decision_function(X)), rtol=1e-12)
    assert not hasattr(FactorizationMachineClassifier(), "predict_proba")
    assert not hasattr(ExactKernelSVC(), "predict_proba")
    for model in (ExactKernelSVC(probability=True, C=10.0),
                  FactorizationMachineClassifier(n_components=4, tol=1e-4, probability=True, random_state=0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y)
        proba = model.predict_proba(X)
        assert model.probability_slope_ > 0 and (proba.argmax(axis=1) == (model.predict(X) == 1)).all()
        assert log_loss(y, proba) < 0.8 * np.log(2)
