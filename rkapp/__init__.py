"""rkapp: the Streamlit frame of the Random Kernel Explorer (the pages live in pages/).

A page reads top to bottom::

    from rkapp import page, sidebar, load_data, guarded, chart, formula, notice, reproduce

    page("Gram matrices", "Exact versus random-feature Gram matrices.")
    view = sidebar(maps=True, distributions="single")   # a ViewSpec: the shared settings
    with guarded("the Gram matrices"):                   # errors -> st.error, the page goes on
        data = load_data(view)
        chart(my_figure(df), df, "my figure")
    notice("..."); reproduce(view.code("Z = ..."))

Modules: state (the one state table, ViewSpec, URL and session), widgets (sidebar, persistent_widget),
data (cached loading, figures shared by every session), guard (guarded, errors, user text, memory budget), layout (page parts),
navigation (the page list, presets), cli (the ``rkcore-app`` command).
"""
from importlib.util import find_spec as _find_spec

#: What the dashboard needs beyond the library; without it only ``rkapp.cli`` (the ``rkcore-app``
#: command, which says what to install) is importable.
APP_EXTRA_MISSING = [name for name in ("streamlit", "plotly") if _find_spec(name) is None]

if APP_EXTRA_MISSING:
    def __getattr__(name):
        raise ModuleNotFoundError(f"rkapp.{name} needs {' and '.join(APP_EXTRA_MISSING)}: "
                                  "pip install 'rkcore[app]'", name=APP_EXTRA_MISSING[0])
else:
    from .data import load_data, shared_figure
    from .guard import (
        MEMORY_BUDGET, estimate_cost, guarded, kept_measurement, largest_fitting, literal, max_size_within,
        measure_on_press, refuse_beyond_limits, require_memory, run_or_wait, show_error, show_measurement, show_warning,
    )
    from .layout import (
        chart, columns, export_button, formula, lead, notice, page, preload_chart_library, presenter, progress_bar,
        reproduce, table,
    )
    from . import question_box  # noqa: F401 - the hidden charts' placeholder is its question box (issue 39)
    from .run_context import draw_sidebar_tools as lecture_tools
    from .navigation import PAGES, RUN_REQUEST_KEY, find_page, page_files, page_label, preset_button, run_requested
    from .state import FIELDS, ViewSpec, apply_preset, choices
    from .widgets import UPLOAD_STATE_KEY, persistent_widget, sidebar

    escape_markdown = literal  # the name the pages use

    __all__ = [
        "FIELDS", "MEMORY_BUDGET", "columns", "presenter", "PAGES", "RUN_REQUEST_KEY", "UPLOAD_STATE_KEY", "ViewSpec", "apply_preset", "chart", "choices",
        "escape_markdown", "export_button", "lead", "estimate_cost", "find_page", "formula", "guarded", "kept_measurement", "largest_fitting", "lecture_tools", "literal", "load_data", "max_size_within", "measure_on_press",
        "notice", "page", "page_files", "page_label", "persistent_widget", "preload_chart_library", "preset_button", "progress_bar", "reproduce",
        "refuse_beyond_limits", "require_memory", "run_or_wait", "run_requested", "shared_figure", "show_error", "show_measurement", "show_warning", "sidebar", "table",
    ]
