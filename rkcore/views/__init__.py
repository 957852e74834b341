"""Views: one module per dashboard view, each declaring what the view computes, what it costs, and the
code that reproduces it (:class:`~rkcore.views.base.View`), next to the figures and notes it shows.

The pages (``pages/*.py``) import only ``rkapp`` and ``rkcore.views``: a view module re-exports the
figure builders and notes its page draws, so a page is the layout and nothing else. Every view's
computation is pure and picklable; ``rkapp.views.run_view`` prices it, admits it to the server's run
slots, caches it and may run it in a worker process. :mod:`rkcore.views.settings` is the state table
(every setting, its default, choices and bounds) and :class:`~rkcore.views.settings.ViewSpec`.

Registration is explicit: :data:`VIEW_MODULES` names the modules, :func:`all_views` imports them.
"""
from __future__ import annotations

from importlib import import_module

from .base import View
from .settings import FIELDS, ViewSpec

#: The view modules, one per page that computes (imported by :func:`all_views`, not at import time).
VIEW_MODULES: tuple[str, ...] = (
    "classifiers", "compositional", "distributions", "error_bounds", "fourier", "gram", "home", "itemsets",
    "kernel_trick", "projections", "speed_accuracy", "story", "timing",
)


def all_views() -> dict[str, View]:
    """Every view of the dashboard, by key.

    Returns
    -------
    dict
        View key -> :class:`View` (a module may declare several: ``VIEWS``).
    """
    views: dict[str, View] = {}
    for name in VIEW_MODULES:
        module = import_module(f"{__name__}.{name}")
        for view in module.VIEWS:
            if view.key in views:
                raise ValueError(f"Two views named {view.key!r}.")
            views[view.key] = view
    return views


__all__ = ["FIELDS", "VIEW_MODULES", "View", "ViewSpec", "all_views"]
