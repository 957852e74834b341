"""Issue 36: every view of the room (rkcore.views.all_views) is pure and picklable, run by a page through
rkapp.views.run_view, and its computation passes through the server's admission (rkapp.guard.heavy_work).

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
RUN_VIEW = re.compile(r"run_view\(\s*(\w+)\.(\w+)")


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


def views_run_by_pages() -> dict[str, str]:
    """view key -> the page file that runs it with run_view."""
    views = all_views()
    by_name = {(view.compute.__module__.rsplit(".", 1)[-1], name): view.key
               for view in views.values() for name in _names_of(view)}
    run = {}
    for page in PAGES:
        modules = _view_modules_of(page)
        for alias, attribute in RUN_VIEW.findall(page.read_text()):
            key = by_name.get((modules.get(alias, alias), attribute))
            if key:
                run.setdefault(key, page.name)
    return run


def _names_of(view) -> list[str]:
    import importlib

    module = importlib.import_module(view.compute.__module__)
    return [name for name, value in vars(module).items() if value is view]


@pytest.mark.parametrize("key", sorted(all_views()))
def test_a_views_compute_is_pure_and_picklable(key):
    view = all_views()[key]
    for function in (view.compute, view.cost, view.reproduce):
        assert "<locals>" not in function.__qualname__ and "<lambda>" not in function.__qualname__, (
            f"{key}: {function.__qualname__} is not a module-level function (a worker process cannot import it)")
        assert function.__module__.startswith("rkcore."), function.__module__
        assert pickle.loads(pickle.dumps(function)) is function
    assert pickle.loads(pickle.dumps(view)) == view


def test_every_view_is_run_by_a_page_through_run_view():
    run = views_run_by_pages()
    missing = sorted(set(all_views()) - set(run))
    assert not missing, f"views no page runs with run_view: {missing}"


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


@pytest.mark.parametrize("key", sorted(views_run_by_pages()))
def test_a_views_computation_passes_through_admission(key, run_page, monkeypatch):
    """Run the page that runs the view (pressing its run button if the view waits for it): every call of the
    view's compute happens inside rkapp.guard.heavy_work, the server's admission."""
    import rkapp.guard
    import rkapp.views

    inside, calls = [], []
    real_heavy_work, real_execute = rkapp.guard.heavy_work, rkapp.views.execute

    from contextlib import contextmanager

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
    monkeypatch.setattr(rkapp.views, "execute", spied_execute)
    page = views_run_by_pages()[key]
    at = run_page(f"pages/{page}", n=40, D=16)
    buttons = [b for b in at.button if b.key == f"{key}_run"]
    if not any(k == key for k, _ in calls) and buttons:
        at = buttons[0].click().run()
    assert not at.exception, at.exception
    mine = [admitted for k, admitted in calls if k == key]
    assert mine, f"{page} did not compute the view {key!r}"
    assert all(mine), f"{page} computed {key!r} outside the server's admission"
