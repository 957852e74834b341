"""The Itemsets view (rkcore.views.itemsets): its compute is pure and picklable, and the page runs it through the
server's admission (rkapp.views.run_view), never beside it."""
from __future__ import annotations

import contextlib
import pickle

import numpy as np

from rkcore.spec import load_view_data
from rkcore.views import ViewSpec, itemsets
from tests.conftest import error_texts, plotly_figures

PAGE = "pages/2_Itemsets.py"


def _data(spec: ViewSpec):
    return load_view_data(spec.dataset, spec.normalization, spec.n, target=None, movielens_path="",
                          upload_name=None, upload_bytes=None, movielens_roots=None)


def test_the_compute_pickles_as_itself():
    assert pickle.loads(pickle.dumps(itemsets.ITEMSETS.compute)) is itemsets.compute


def test_the_compute_runs_on_the_defaults_and_its_result_pickles():
    spec = ViewSpec(n=30)
    result = itemsets.ITEMSETS.run(spec, _data(spec))
    again = pickle.loads(pickle.dumps(result))
    assert again.family.describe() == result.family.describe()
    assert again.counts.equals(result.counts) and again.check.equals(result.check)
    # the fast formula against the explicit inner product: rounding error of sums of ~|S| terms of size <= 1
    check = again.check
    assert np.all(np.abs(check["difference"]) <= 64 * np.finfo(float).eps * np.maximum(1.0, np.abs(check["kernel"])))


def test_the_compute_is_pure():
    """The same settings and data give the same tables, and the data is left as it was."""
    spec = ViewSpec(n=30)
    data = _data(spec)
    before = data.X.copy()
    first, second = itemsets.compute(spec, data), itemsets.compute(spec, data)
    assert np.array_equal(data.X, before)
    assert first.listing.equals(second.listing) and first.features.equals(second.features)


def test_the_page_computes_inside_the_servers_admission(run_page, monkeypatch):
    """A spy on rkapp.guard.heavy_work: every call of the view's computation (seen through family_counts,
    which only compute calls) happens while a run slot is held."""
    from rkapp import guard

    inside, calls = [False], []
    real_counts = itemsets.family_counts

    @contextlib.contextmanager
    def spy_heavy_work(cost=None):
        inside[0] = True
        try:
            yield
        finally:
            inside[0] = False

    def spy_counts(family):
        calls.append(inside[0])
        return real_counts(family)

    monkeypatch.setattr(guard, "heavy_work", spy_heavy_work)
    monkeypatch.setattr(itemsets, "family_counts", spy_counts)
    at = run_page(PAGE, n=30)
    assert not at.exception and not error_texts(at) and plotly_figures(at)
    assert calls and all(calls), f"the view's compute ran outside the admission: {calls}"
