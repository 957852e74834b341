"""What every view of rkcore.views promises (issue 36), as checks the per-page tests call: its functions
pickle (a worker process can run them), its compute runs on the default settings and its result pickles,
and on the page every call of its compute happens inside the server's admission (rkapp.guard.heavy_work)."""
from __future__ import annotations

import contextlib
import pickle
from pathlib import Path

from rkcore.spec import load_view_data
from rkcore.views import View, ViewSpec
from rkcore.views.settings import FIELDS

REPO = Path(__file__).resolve().parents[2]


def default_settings(view: View) -> dict:
    """The view's page settings at the state table's defaults."""
    return {name: FIELDS[name].default for name in view.settings}


def assert_functions_pickle(view: View) -> None:
    """compute, cost and reproduce go to a worker process by reference and come back the same functions."""
    for function in (view.compute, view.cost, view.reproduce):
        assert pickle.loads(pickle.dumps(function)) is function, function


def small_data(spec: ViewSpec):
    """The view's data as the page loads it (uncached): a small built-in set."""
    return load_view_data(spec.dataset, spec.normalization, spec.n)


def run_and_pickle(view: View, spec: ViewSpec, **settings):
    """The view's compute on ``spec`` and the settings (defaults for the ones not given); its result
    survives pickling (it comes back from a worker process), and the cost model prices the same settings."""
    settings = {**default_settings(view), **settings}
    data = small_data(spec) if view.needs_data else None
    result = view.run(spec, data, **settings)
    again = pickle.loads(pickle.dumps(result))
    assert type(again) is type(result)
    n, d = data.X.shape if data is not None else (int(settings[view.size]) if view.size else 0, 0)
    cost = view.cost(spec, n, d, **settings)
    assert cost.seconds > 0 and cost.bytes > 0, cost
    assert isinstance(view.reproduce(spec, **settings), str)
    return result


@contextlib.contextmanager
def admission_spy(monkeypatch, views_and_modules):
    """Record, for every call of the views' computes (through the View or the module's function), whether it
    ran inside rkapp.guard.heavy_work. Yields the list of (view key, inside) pairs."""
    from rkapp import guard

    depth, calls = [0], []
    real_heavy_work = guard.heavy_work

    @contextlib.contextmanager
    def counted(*args, **kwargs):
        with real_heavy_work(*args, **kwargs):
            depth[0] += 1
            try:
                yield
            finally:
                depth[0] -= 1

    monkeypatch.setattr(guard, "heavy_work", counted)
    restore = []
    for view, module in views_and_modules:
        real = view.compute

        def spy(*args, _real=real, _key=view.key, **kwargs):
            calls.append((_key, depth[0] > 0))
            return _real(*args, **kwargs)

        name = real.__name__
        monkeypatch.setattr(module, name, spy)  # a page calling the module's function directly
        object.__setattr__(view, "compute", spy)  # run_view calls the View's (a frozen dataclass)
        restore.append((view, real))
    try:
        yield calls
    finally:
        for view, real in restore:
            object.__setattr__(view, "compute", real)


def assert_computes_admitted(calls, keys) -> None:
    """Every view in ``keys`` computed, and every compute call ran inside the server's admission."""
    assert {key for key, _ in calls} >= set(keys), calls
    outside = [key for key, inside in calls if not inside]
    assert not outside, f"computed outside the server's admission: {outside}"
