"""Tests for the approximation-error engine rkcore.studies.errors (small, deterministic)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rkcore.studies import errors as ex
from rkcore.registry import KernelSpec, make_map

ANOVA2 = KernelSpec("anova", 2)


def binary_data(n=11, d=7, density=0.4, seed=0):
    """0/1 rows: power sums are exact integers, so the exact kernel is exactly 0.0 on the
    pairs sharing fewer than m features and the nonzero-pair set is known by counting."""
    X = (np.random.default_rng(seed).random((n, d)) < density).astype(np.float64)
    X[0] = 0.0  # a zero row: all its pairs have kernel 0
    return X


def brute_force(X, spec, key, dist, D, seed, pairs, include_diagonal, eps):
    """All metrics from the full n x n matrices."""
    Z = make_map(key, spec, D, dist, seed).fit(X).transform(X)
    K = spec.exact(X)
    E = Z @ Z.T - K
    keep = np.ones(K.shape, dtype=bool) if pairs == "all" else K != 0.0
    if not include_diagonal:
        np.fill_diagonal(keep, False)
    e = E[keep]
    out = {"mean_abs_error": np.abs(e).mean(), "rms_error": np.sqrt((e**2).mean()),
           "max_abs_error": np.abs(e).max(), "mean_error": e.mean()}
    out.update({("tail_prob", t): np.mean(np.abs(e) >= t) for t in eps})
    return out, keep.sum()


def as_dict(df):
    out = {}
    for row in df.itertuples():
        out[row.metric if row.metric != "tail_prob" else ("tail_prob", row.eps)] = row.value
    return out


@pytest.mark.parametrize("pairs", ["all", "nonzero"])
@pytest.mark.parametrize("include_diagonal", [True, False])
@pytest.mark.parametrize("cache", [0, 1, 10**9])  # no cache, the first block only, everything
def test_blocked_engine_matches_brute_force(pairs, include_diagonal, cache):
    X = binary_data()
    n = X.shape[0]
    eps = (0.5, 1.0, 2.0)
    block = 3  # 11 rows: blocks of 3, 3, 3, 2
    cache_bytes = cache * 8 * n * block if cache == 1 else cache
    df = ex.error_study(X, ANOVA2, [("rk", "gaussian")], [5, 9], 2, eps=eps, pairs=pairs,
                        include_diagonal=include_diagonal, block_size=block, exact_cache_bytes=cache_bytes,
                        random_state=7)
    assert set(df["metric"]) == set(ex.METRICS)
    assert len(df) == 2 * 2 * (4 + len(eps))
    for (D, t), group in df.groupby(["D", "trial"]):
        seed = ex.trial_seed(7, "rk", "gaussian", D, t)
        expected, n_pairs = brute_force(X, ANOVA2, "rk", "gaussian", D, seed, pairs, include_diagonal, eps)
        got = as_dict(group)
        assert set(got) == set(expected)
        for k in expected:  # same numbers up to the summation order of the blocked sums
            np.testing.assert_allclose(got[k], expected[k], rtol=1e-12, atol=1e-15, err_msg=str(k))
        assert (group["n_pairs"] == n_pairs).all()


def test_nonzero_pairs_are_the_pairs_sharing_m_features():
    X = binary_data(n=12, d=8, density=0.35, seed=3)
    shared = X @ X.T  # number of common features: K_A^m(x, y) = C(shared, m) for 0/1 data
    for m in (2, 3):
        df = ex.error_study(X, KernelSpec("anova", m), [("rk", "rademacher")], [4], 1, pairs="nonzero")
        assert df["n_pairs"].iloc[0] == np.count_nonzero(shared >= m)
        expected = np.count_nonzero(shared >= m) - np.count_nonzero(np.diag(shared) >= m)
        if expected == 0:  # no usable pair: a clear error, not NaN metrics
            with pytest.raises(ValueError, match="no pair of rows is selected"):
                ex.error_study(X, KernelSpec("anova", m), [("rk", "rademacher")], [4], 1, pairs="nonzero",
                               include_diagonal=False)
            continue
        df = ex.error_study(X, KernelSpec("anova", m), [("rk", "rademacher")], [4], 1, pairs="nonzero",
                            include_diagonal=False)
        assert df["n_pairs"].iloc[0] == expected
    # all-subsets: K >= 1 for every pair, so "nonzero" keeps all n^2 pairs
    df = ex.error_study(X, KernelSpec("all_subsets"), [("rk", "rademacher")], [4], 1, pairs="nonzero")
    assert df["n_pairs"].iloc[0] == X.shape[0] ** 2


def test_diagonal_exclusion_counts_and_changes_errors():
    X = np.random.default_rng(1).random((9, 5))
    with_diag = ex.error_study(X, ANOVA2, [("rk", "rademacher")], [6], 1, block_size=4)
    without = ex.error_study(X, ANOVA2, [("rk", "rademacher")], [6], 1, block_size=4, include_diagonal=False)
    assert with_diag["n_pairs"].iloc[0] == 81 and without["n_pairs"].iloc[0] == 72
    mae = lambda df: df.loc[df.metric == "mean_abs_error", "value"].iloc[0]  # noqa: E731
    assert mae(with_diag) != mae(without)


def test_reproducible_and_independent_of_other_methods():
    X = np.random.default_rng(2).random((10, 6))
    one = ex.error_study(X, ANOVA2, [("rk", "rademacher")], [8, 16], 3, random_state=5)
    again = ex.error_study(X, ANOVA2, [("rk", "rademacher")], [8, 16], 3, random_state=5)
    pd.testing.assert_frame_equal(one, again)
    both = ex.error_study(X, ANOVA2, [("rk", "gaussian"), ("rk", "rademacher")], [16, 8], 3, random_state=5)
    rad = both[both["map"].eq("rk") & both["distribution"].eq("rademacher")]
    key = ["D", "trial", "metric", "eps"]
    pd.testing.assert_frame_equal(one.sort_values(key).reset_index(drop=True),
                                  rad.sort_values(key).reset_index(drop=True))
    other_seed = ex.error_study(X, ANOVA2, [("rk", "rademacher")], [8, 16], 3, random_state=6)
    assert not np.allclose(one["value"], other_seed["value"])
    # trials are different draws
    mae = one[one.metric == "mean_abs_error"].groupby("D")["value"].nunique()
    assert (mae == 3).all()


def test_mean_error_is_unbiased():
    # E<Z(x), Z(y)> = K(x, y) (Proposition 1), so the signed mean error averaged over trials
    # is 0 up to its standard error std/sqrt(T); allow 5 SE.
    X = np.random.default_rng(4).random((6, 5))
    df = ex.error_study(X, ANOVA2, [("rk", "laplace")], [10], 300)
    signed = df.loc[df.metric == "mean_error", "value"].to_numpy()
    se = signed.std(ddof=1) / np.sqrt(signed.size)
    assert abs(signed.mean()) < 5 * se
    # and the error shrinks with D like 1/sqrt(D): MAE(4D)/MAE(D) ~ 1/2
    mae = ex.summarize_errors(ex.error_study(X, ANOVA2, [("rk", "rademacher")], [10, 160], 40))
    m = mae[mae.metric == "mean_abs_error"].set_index("D")["mean"]
    assert 0.15 < m[160] / m[10] < 0.35  # 1/sqrt(16) = 0.25


def test_progress_monotone_to_one():
    X = np.random.default_rng(0).random((5, 4))
    seen = []
    ex.error_study(X, ANOVA2, [("rk", "rademacher"), ("rk", "uniform")], [4, 8], 2,
                   progress=lambda f, msg: seen.append((f, msg)))
    fractions = [f for f, _ in seen]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0
    assert all(b >= a for a, b in zip(fractions, fractions[1:]))
    assert len(seen) == 1 + 2 * 2  # at n = 5 the two trials of a (method, D) are one task
    assert all(isinstance(msg, str) and msg for _, msg in seen)


@pytest.mark.parametrize("methods", [[("rk", "gaussian"), ("rk", "rademacher")], [("scrk", None)]])
def test_trials_stacked_in_one_task_give_the_per_trial_results(monkeypatch, methods):
    """Small n: a task computes several RK trials as one stacked map; the numbers are those of one
    map per trial (one task per trial when the stacking budget is 0), up to BLAS summation order."""
    X = binary_data()
    spec = KernelSpec("anova", 2)
    kwargs = dict(pairs="nonzero", random_state=3, eps=(0.1,))
    stacked = ex.error_study(X, spec, methods, [6, 12], 4, **kwargs)
    seen = []
    monkeypatch.setattr(ex, "STACKED_FEATURES_BYTES", 0)
    single = ex.error_study(X, spec, methods, [6, 12], 4, progress=lambda f, m: seen.append(f), **kwargs)
    assert len(seen) == 1 + len(methods) * 2 * 4  # one task (and report) per trial
    pd.testing.assert_frame_equal(stacked.drop(columns="value"), single.drop(columns="value"))
    np.testing.assert_allclose(stacked["value"], single["value"], rtol=1e-12, atol=1e-15)


def test_summarize_errors():
    X = np.random.default_rng(0).random((6, 4))
    df = ex.error_study(X, ANOVA2, [("rk", "rademacher")], [4, 8], 4, eps=(0.01,))
    summary = ex.summarize_errors(df)
    assert len(summary) == 2 * 5
    for row in summary.itertuples():
        values = df[(df.D == row.D) & (df.metric == row.metric)]["value"].to_numpy()
        assert row.n_trials == 4
        np.testing.assert_allclose(row.mean, values.mean())
        np.testing.assert_allclose(row.std, values.std())
    with pytest.raises(ValueError, match="missing"):
        ex.summarize_errors(pd.DataFrame({"x": [1]}))


def test_method_labels_and_scrk():
    assert ex.method_label("rk", "rademacher") == "RK (Rademacher)"
    assert ex.method_label("scrk") == "SCRK"
    X = np.random.default_rng(0).random((6, 8))
    df = ex.error_study(X, KernelSpec("anova", 3), [("scrk", None), ("rk", "gaussian")], [8], 1)
    assert set(df["method"]) == {"SCRK", "RK (Gaussian)"}
    assert set(df["distribution"]) == {"rademacher", "gaussian"}


@pytest.mark.parametrize("kwargs,match", [
    ({"methods": [("nope", None)]}, "Unknown map"),
    ({"methods": [("rk", "cauchy")]}, "cauchy|distribution"),
    ({"methods": [("ts", None)]}, "does not approximate"),
    ({"methods": []}, "at least one"),
    ({"n_components_list": [0]}, "D"),
    ({"n_components_list": []}, "at least one"),
    ({"n_trials": 0}, "n_trials"),
    ({"eps": (0.1, 0.0)}, "eps"),
    ({"eps": (-1.0,)}, "eps"),
    ({"pairs": "some"}, "pairs"),
    ({"block_size": 0}, "block_size"),
    ({"random_state": -1}, "random_state"),
    ({"spec": "anova"}, "KernelSpec"),
    ({"X": np.ones((3,))}, "2-D"),
])
def test_validation(kwargs, match):
    args = {"X": np.ones((4, 3)), "spec": ANOVA2, "methods": [("rk", "rademacher")], "n_components_list": [4],
            "n_trials": 1}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        ex.error_study(args.pop("X"), args.pop("spec"), args.pop("methods"), args.pop("n_components_list"),
                       args.pop("n_trials"), **args)


def test_dask_backend_matches_sequential():
    distributed = pytest.importorskip("dask.distributed")
    from joblib import parallel_config

    X = np.random.default_rng(3).random((12, 5))
    kwargs = dict(methods=[("rk", "rademacher"), ("rk", "gaussian")], n_components_list=[4, 8], n_trials=2,
                  pairs="nonzero", block_size=5, exact_cache_bytes=8 * 12 * 5)
    sequential = ex.error_study(X, ANOVA2, **kwargs)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster):
        with parallel_config(backend="dask"):
            spread = ex.error_study(X, ANOVA2, n_jobs=2, **kwargs)
    pd.testing.assert_frame_equal(sequential, spread)
