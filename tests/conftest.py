"""Shared fixtures.

The long tests (markers ``browser``, ``fuzz``, ``slow``) are left out of the default run (pyproject's
addopts); run them with ``-m "browser or fuzz or slow"`` (CI does); browser tests need Debian's chromium.

App tests: ``run_page(path, **query)`` runs a page headless with streamlit's AppTest after
clearing st.cache_data (cached results from an earlier test must not hide an error), with
the given URL query parameters; ``plotly_figures(at)`` returns the figure JSON of every
plotly chart on the page (``proto.spec``). Paths are relative to the repository root.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Run estimates follow the machine's speed (rkcore.studies.costs.speed_factor, a probe); the tests pin it to 1,
# the quiet machine the cost models were calibrated on, so which settings auto-run, wait for their
# button or are refused does not move with the load. Servers the tests start inherit it.
os.environ["RKCORE_SPEED_FACTOR"] = "1"
# Figures are built without plotly's validation (rkcore.figures.style.figure); in the tests every figure
# built that way, and every chart a page draws, is checked against its validated form (check_canonical).
os.environ["RKCORE_VALIDATE_FIGURES"] = "1"
if str(REPO) not in sys.path:  # pages import "rkapp" the way `streamlit run app.py` sees it
    sys.path.insert(0, str(REPO))

#: Seconds one AppTest run may take (a cold run imports scikit-learn, plotly, ...).
APP_TIMEOUT = 60


def page_files() -> list[Path]:
    """app.py (the navigation, opening Home) and every page of the navigation, in its order."""
    from rkapp.navigation import page_files as pages_in_order  # 9_x before 10_y

    return [REPO / "app.py", *pages_in_order()]


@pytest.fixture
def clear_streamlit_cache():
    """Clear st.cache_data / st.cache_resource before (and after) a test."""
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture
def run_page(clear_streamlit_cache):
    """Factory: run_page("pages/1_Gram_matrices.py", n=40, session={...}) -> a run AppTest.

    Keyword arguments become URL query parameters (converted to str); ``session`` entries
    are put in st.session_state before the run (e.g. an upload under UPLOAD_STATE_KEY).
    """
    from streamlit.testing.v1 import AppTest

    def run(path: str | Path, *, session: dict | None = None, timeout: float = APP_TIMEOUT, **query):
        at = AppTest.from_file(str(REPO / path), default_timeout=timeout)
        for key, value in query.items():
            at.query_params[key] = ",".join(value) if isinstance(value, (tuple, list)) else str(value)
        for key, value in (session or {}).items():
            at.session_state[key] = value
        return at.run()

    return run


def plotly_figures(at) -> list[dict]:
    """The figure JSON (data + layout) of every plotly chart the page drew (not the off-screen
    chart-library preload, rkapp.layout.PRELOAD_META)."""
    from rkapp.layout import PRELOAD_META

    figures = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    return [f for f in figures if f.get("layout", {}).get("meta") != PRELOAD_META]


def table_values(at) -> list:
    """The data of every table of the page, in page order, with the column names a user reads: short ones
    are st.table, long ones st.dataframe (rkapp.layout.table)."""
    values = []

    def walk(node):
        if getattr(node, "type", None) == "table":  # st.table: column names escaped (Markdown)
            values.append(node.value.rename(columns=shown))
        elif getattr(node, "type", None) == "arrow_data_frame":
            values.append(node.value)
        for child in (getattr(node, "children", None) or {}).values():
            walk(child)

    walk(at._tree)
    return values


def snippet_of(at) -> str:
    """The page's "Reproduce in Python" code: the expander sends it only when open, so open it and rerun."""
    from rkapp.layout import REPRODUCE_KEY

    if not at.code:
        at.session_state[REPRODUCE_KEY] = True
        at.run()
    (code,) = [c.value for c in at.code]
    return code


def shown(markdown: str) -> str:
    """The text a user reads from Markdown the app escaped with rkapp.guard.literal (backslashes gone)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def error_texts(at) -> list[str]:
    """The st.error messages of a run, as read (user text and messages are escaped Markdown)."""
    return [shown(e.value) for e in at.error]


def estimate_texts(at) -> list[str]:
    """The estimates shown before a run waits for its button (rkapp.guard.show_cost: plain text, a timer icon)."""
    return [shown(m.value) for m in at.markdown if m.value.startswith(":material/timer:")]


def warning_texts(at) -> list[str]:
    return [shown(w.value) for w in at.warning]
