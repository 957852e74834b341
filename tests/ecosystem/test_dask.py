"""Dask: the study sweeps give the same results locally and on a cluster (same seeds), their
large inputs are scattered once, and a row-chunked dask.array is transformed out of core."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("dask.distributed")
import dask.array as da  # noqa: E402

from rkcore.studies.accuracy import accuracy_study  # noqa: E402
from rkcore.cli import main  # noqa: E402
from rkcore.studies.distributed import close, connect, graph_bytes, transform_dask  # noqa: E402
from rkcore.studies.errors import _block_rows, _exact_cache, _row_blocks, error_study  # noqa: E402
from rkcore.maps.random_kernel import RandomKernel  # noqa: E402
from rkcore.registry import KernelSpec  # noqa: E402
from rkcore.studies.timing import time_maps  # noqa: E402


@pytest.fixture(scope="module")
def client():
    c = connect("local", n_workers=1, threads_per_worker=2)  # thread workers: fast to start
    yield c
    close(c)


def test_error_study_same_results_on_dask(client):
    X = np.random.RandomState(0).rand(60, 7)
    kwargs = dict(methods=[("rk", "rademacher"), ("rk", "gaussian"), ("scrk", None)], n_components_list=[14, 28],
                  n_trials=3, pairs="nonzero", block_size=16, random_state=5)
    local = error_study(X, KernelSpec("anova", 2), **kwargs)
    spread = error_study(X, KernelSpec("anova", 2), client=client, **kwargs)
    pd.testing.assert_frame_equal(local, spread)


@pytest.fixture(scope="module")
def one_thread_client():
    c = connect("local", n_workers=1, threads_per_worker=1)
    yield c
    close(c)


def test_accuracy_study_same_results_on_dask(one_thread_client):
    # One thread per worker: liblinear (sparse_rf's L1 solver) draws from libc's process-global
    # rand(), so concurrent fits in threads of one process interleave their draws (scikit-learn
    # issue #8410); on a two-thread worker sparse_rf kept 13, 14 or 15 weights from run to run.
    client = one_thread_client
    rng = np.random.RandomState(0)
    X = rng.rand(240, 6)
    y = (X[:, 0] * X[:, 1] > 0.3).astype(int)
    kwargs = dict(n_trials=2, C_grid=[1.0, 10.0], method_params={"fm": {"max_iter": 30, "tol": 1e-3}})
    methods = ["kernel_svm", "rk", "scrk", "fm", "sparse_rf"]
    local = accuracy_study((X, y), methods, [24], **kwargs)
    spread = accuracy_study((X, y), methods, [24], client=client, **kwargs)
    same = [c for c in local.columns if not c.endswith("_seconds")]
    pd.testing.assert_frame_equal(local[same], spread[same])
    assert (spread["train_seconds"] > 0).all()
    assert local.attrs["validation"] == spread.attrs["validation"]


def test_timing_same_cells_on_dask(client):
    local = time_maps(["rk", "scrk"], [8, 16], [32], [20], repeats=2, warmup=0)
    spread = time_maps(["rk", "scrk"], [8, 16], [32], [20], repeats=2, warmup=0, client=client)
    keys = ["map", "d", "D", "n", "repeat", "phase"]
    pd.testing.assert_frame_equal(local[keys], spread[keys])
    assert (spread["seconds"] > 0).all()


def test_scattering_keeps_the_graph_small():
    X = np.random.RandomState(0).rand(300, 10)
    spec = KernelSpec("anova", 2)
    cache = _exact_cache(X, spec, _row_blocks(300, _block_rows(300, None, 2)), 2**30)
    tasks = [(spec, "rk", "rademacher", 20, seed, "all", True, (0.1,), 300) for seed in range(8)]
    shared = {"X": X, "exact_cache": cache}
    inline, scattered = graph_bytes(tasks, shared, scattered=False), graph_bytes(tasks, shared)
    assert inline > 8 * (X.nbytes + 8 * 300 * 300 / 2)  # every task carries X and the strips
    assert scattered < 8 * 2000  # only references


@pytest.mark.slow  # 10 s: a local cluster started by the command; CI's long job runs it (the README suite keeps under 8 minutes)
def test_cli_scheduler_local_gives_the_local_numbers(tmp_path, capsys):
    base = ["timing", "--maps", "rk", "--d", "8", "--D", "16", "--n", "10", "--repeats", "1", "--warmup", "0",
            "--quiet"]
    assert main(base + ["--out", str(tmp_path / "a.csv")]) == 0
    assert main(base + ["--scheduler", "local", "--out", str(tmp_path / "b.csv")]) == 0
    a, b = pd.read_csv(tmp_path / "a.csv"), pd.read_csv(tmp_path / "b.csv")
    pd.testing.assert_frame_equal(a.drop(columns="seconds"), b.drop(columns="seconds"))
    assert '"dask"' in (tmp_path / "b.provenance.json").read_text()
    assert main(["timing", "--scheduler", "tcp://127.0.0.1:9", "--quiet"]) == 2
    assert "cannot reach the Dask scheduler" in capsys.readouterr().err


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_transform_dask_matches_transform(client, dtype):
    X = da.random.default_rng(0).random((1200, 9), chunks=(200, 9)).astype(dtype)
    rk = RandomKernel(32, kernel="anova", degree=2, random_state=0).fit(np.zeros((2, 9)))
    Z = transform_dask(rk, X)
    assert Z.chunks == (X.chunks[0], (32,)) and Z.dtype == dtype
    if dtype == np.float32:
        # chunked and whole float32 transforms round differently (BLAS blocking by row count); both must
        # sit within float32 rounding of the float64 features. With Rademacher weights an ANOVA-2 feature
        # is (P1^2 - P2) / (2 sqrt(D)) with |P1| <= sum_j |x_j|: |error| <= 4 d eps32 (sum_j |x_j|)^2 / (2 sqrt(D)).
        X64 = X.compute().astype(np.float64)
        reference = rk.transform(X64)
        atol = 4 * 9 * np.finfo(np.float32).eps * np.abs(X64).sum(axis=1, keepdims=True) ** 2 / (2 * np.sqrt(32))
        assert (np.abs(Z.compute() - reference) <= atol).all()
        assert (np.abs(rk.transform(X.compute()) - reference) <= atol).all()
    else:
        np.testing.assert_allclose(Z.compute(), rk.transform(X.compute()), rtol=1e-12)
    with pytest.raises(ValueError, match="dask.array"):
        transform_dask(rk, X.compute())


def test_out_of_core_transform_keeps_memory_bounded(client):
    """The n x D output is never held: traced peak memory stays a few chunks' worth.

    Thread workers of this process (fast to start), so tracemalloc sees every numpy buffer
    the workers allocate; benchmarks/studies/bench_dask.py runs 10 million rows on process workers.
    """
    import tracemalloc

    n, d, D, rows_per_chunk = 200_000, 20, 64, 10_000
    X = da.random.default_rng(1).random((n, d), chunks=(rows_per_chunk, d))
    rk = RandomKernel(D, random_state=0).fit(np.zeros((2, d)))
    Z = transform_dask(rk, X, client=client)
    tracemalloc.start()
    try:
        mean, gram = client.compute([Z.mean(axis=0), Z.T @ Z], sync=True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    full_output = n * D * 8  # 98 MiB if it were materialized
    chunk_output = rows_per_chunk * D * 8  # 4.9 MiB
    # measured ~28 MiB: a few chunks in flight per thread plus their temporaries
    assert peak < 0.4 * full_output and peak < 8 * chunk_output + 8 * 2**20, peak / 2**20
    # the reductions are those of the in-memory transform
    Z_ref = rk.transform(X.compute())
    np.testing.assert_allclose(mean, Z_ref.mean(axis=0), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gram, Z_ref.T @ Z_ref, rtol=1e-9, atol=1e-9)


def test_clients_closed_in_opening_order_leave_the_default_scheduler():
    """Each Client restores the scheduler setting it found: closing A then B (B opened while A was open)
    would leave "dask.distributed" with no client, and dask 2024.1's compute() then fails."""
    import dask
    import dask.array as da
    import dask.distributed as distributed

    first = connect("local", n_workers=1, threads_per_worker=1)
    second = connect("local", n_workers=1, threads_per_worker=1)
    close(first)
    close(second)
    try:  # other tests' module-scoped clients may still be open: then "dask.distributed" is right
        distributed.default_client()
    except ValueError:
        assert dask.config.get("scheduler", None) != "dask.distributed"
    assert float(da.ones(4, chunks=2).sum().compute()) == 4.0


def test_transform_dask_scatters_the_estimator_instead_of_sending_it_in_the_graph(client):
    """A fitted RK with D = 4096, d = 1024 weighs 32 MB: inside the graph, distributed warned "Sending large
    graph of size 32.00 MiB" on every compute; scattered once, the graph holds its key only."""
    import warnings

    rk = RandomKernel(4096, random_state=0).fit(np.zeros((2, 1024)))
    X = da.random.default_rng(0).random((64, 1024), chunks=(16, 1024))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        total = client.compute(transform_dask(rk, X, client=client).sum(axis=0), sync=True)
    assert not [w for w in caught if "large graph" in str(w.message)]
    reference = rk.transform(X.compute()).sum(axis=0)
    # sums of 64 rows: chunked (4 partial sums) and whole differ by rounding only
    np.testing.assert_allclose(total, reference, rtol=1e-10, atol=1e-10 * np.abs(reference).max())
