"""What a view declares: its computation, its cost, the settings it reads and the code that reproduces it.

A view's ``compute`` is pure and picklable: a module-level function of the view's settings (a
:class:`~rkcore.views.settings.ViewSpec` and the page's own fields of the state table) and the data,
returning the tidy tables and small arrays its figures need. It never touches streamlit, a session or a
global: the dashboard's frame (``rkapp.views.run_view``) prices it with ``cost``, admits it to the
server's run slots, caches it, and may run it in a worker process; a script calls it directly.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from rkcore.studies.costs.rates import RunCost

from .settings import FIELDS, ViewSpec, check_field


@dataclass(frozen=True, kw_only=True)
class View:
    """One computation of a dashboard page.

    Parameters
    ----------
    key : str
        Unique name: it keys the run button, the cache and the measurements of the view.
    what : str
        What the view computes, as messages name it ("the Gram matrices").
    compute : callable
        ``compute(spec, data, **settings) -> result``: pure and picklable (defined at module level).
        ``data`` is the view's :class:`~rkcore.data.datasets.Dataset` (None when ``needs_data`` is False).
    cost : callable
        ``cost(spec, n, d, **settings) -> RunCost``: seconds and peak bytes of ``compute`` for n points
        of d features (n = d = 0 when ``needs_data`` is False).
    reproduce : callable
        ``reproduce(spec, **settings) -> str``: Python code that reproduces the result with rkcore.
    settings : tuple of str, default=()
        The page's own fields of the state table (:data:`~rkcore.views.settings.FIELDS`) that ``compute``
        reads, beside the shared ``spec``.
    needs_data : bool, default=True
        Whether ``compute`` reads the view's dataset.
    measure : bool, default=False
        A measurement (wall-clock times): never cached, run only when the user asks.
    progress : str, default=""
        The text of a progress bar the dashboard shows while ``compute`` runs; ``compute`` then takes a
        ``progress`` keyword, ``report(fraction, message)`` or None (a script, a worker process).
    """

    key: str
    what: str
    compute: Callable[..., Any]
    cost: Callable[..., RunCost]
    reproduce: Callable[..., str]
    settings: tuple[str, ...] = ()
    needs_data: bool = True
    measure: bool = False
    progress: str = ""

    def __post_init__(self) -> None:
        unknown = [name for name in self.settings if name not in FIELDS or FIELDS[name].view]
        if unknown:
            raise ValueError(f"View {self.key!r}: {unknown} are not page fields of the state table.")

    def checked(self, settings: Mapping[str, Any]) -> dict[str, Any]:
        """The page's settings, checked against the state table (choices, bounds).

        Parameters
        ----------
        settings : mapping
            Field name -> value, exactly the view's ``settings``.

        Returns
        -------
        dict
            The same settings.

        Raises
        ------
        ValueError
            Naming a missing, unknown or refused setting in the user's words.
        """
        missing = [name for name in self.settings if name not in settings]
        unknown = [name for name in settings if name not in self.settings]
        if missing or unknown:
            raise ValueError(f"View {self.key!r} reads the settings {list(self.settings)}; "
                             f"missing {missing}, unknown {unknown}.")
        for name, value in settings.items():
            problem = check_field(name, value)
            if problem:
                raise ValueError(problem)
        return dict(settings)

    def run(self, spec: ViewSpec, data=None, **settings) -> Any:
        """``compute`` with checked settings: what a script (or a worker process) calls.

        Parameters
        ----------
        spec : ViewSpec
            The shared settings.
        data : Dataset, optional
            The view's data (when ``needs_data``).
        **settings
            The page's own settings.

        Returns
        -------
        object
            The view's result.
        """
        return self.compute(spec, data, **self.checked(settings))
