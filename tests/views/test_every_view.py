"""Issue 36: every view of the room (rkcore.views.all_views) is pure and picklable, computed by a page through
rkapp.views (run_view, view_result), and its computation passes through the server's admission
(rkapp.guard.heavy_work).

The walk is generic: a view added to rkcore/views and a page calling ``run_view(module.VIEW, ...)`` is
checked with no edit here.
"""
from __future__ import annotations

import ast
import pickle
import re

import pytest

from rkcore.views import VIEW_MODULES, all_views
from tests.conftest import REPO

PAGES = sorted(p for p in (REPO / "pages").glob("*.py") if not p.name.startswith("_"))


def _view_modules_of(page) -> dict[str, str]:
    """alias -> rkcore.views module the page imports (``from rkcore.views import gram``)."""
    tree = ast.parse(page.read_text())
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "rkcore.views":
            for alias in node.names:
                if alias.name in VIEW_MODULES:
                    found[alias.asname or alias.name] = alias.name
    return found


@pytest.mark.parametrize("key", sorted(all_views()))
def test_a_views_compute_is_pure_and_picklable(key):
    view = all_views()[key]
    for function in (view.compute, view.cost, view.reproduce):
        assert "<locals>" not in function.__qualname__ and "<lambda>" not in function.__qualname__, (
            f"{key}: {function.__qualname__} is not a module-level function (a worker process cannot import it)")
        assert function.__module__.startswith("rkcore."), function.__module__
        assert pickle.loads(pickle.dumps(function)) is function
    assert pickle.loads(pickle.dumps(view)) == view


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_no_page_calls_a_views_computation_itself(page):
    """A page that called ``view.compute(...)`` or ``view.run(...)`` would skip the price, the admission and
    the cache."""
    modules = _view_modules_of(page)
    calls = [ast.unparse(node.func) for node in ast.walk(ast.parse(page.read_text()))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr in ("compute", "run", "execute")
             and ast.unparse(node.func).split(".")[0] in modules]
    assert not calls, f"{page.name} computes outside run_view: {calls}"


#: Every page, and the story's later steps (each step computes its own view).
VISITS = ([(f"pages/{page.name}", {}) for page in PAGES if page.name != "Home.py"] + [("app.py", {})]
          + [("pages/0_Story.py", {"story_step": step}) for step in range(2, 6)]
          + [("pages/6_Classifiers.py", {"dataset": "movielens_ratings"}),  # a real-valued target: regression
             ("pages/8_Random_Fourier_features.py", {"rff_struct": "true", "rff_mult": "1", "rff_strials": 5})])


@pytest.mark.slow  # every page and story step once (~30 s): CI's long job; the per-view admission spies run here
def test_every_view_is_computed_by_a_page_inside_the_servers_admission(run_page, monkeypatch):
    """Run every page (pressing a view's run button where the view waits for it): every call of a view's
    compute happens inside rkapp.guard.heavy_work, the server's admission, and every view of the room is
    computed by some page."""
    from contextlib import contextmanager

    import rkapp.guard
    import rkapp.views

    inside, calls = [], []
    real_heavy_work, real_execute = rkapp.guard.heavy_work, rkapp.views.execute

    @contextmanager
    def spied_heavy_work(*args, **kwargs):
        with real_heavy_work(*args, **kwargs):
            inside.append(True)
            try:
                yield
            finally:
                inside.pop()

    def spied_execute(view, *args, **kwargs):
        calls.append((view.key, bool(inside)))
        return real_execute(view, *args, **kwargs)

    monkeypatch.setattr(rkapp.guard, "heavy_work", spied_heavy_work)
    monkeypatch.setattr(rkapp.views, "heavy_work", spied_heavy_work, raising=False)
    monkeypatch.setattr(rkapp.views, "execute", spied_execute)
    views = all_views()
    for page, query in VISITS:
        at = run_page(page, n=40, D=16, timeout=180, **query)
        for button in [b for b in at.button if b.key and b.key.removesuffix("_run") in views]:
            at = button.click().run()
        assert not at.exception, (page, at.exception)
    outside = sorted({key for key, admitted in calls if not admitted})
    assert not outside, f"computed outside the server's admission: {outside}"
    missing = sorted(set(views) - {key for key, _ in calls})
    assert not missing, f"views no page computes: {missing}"
