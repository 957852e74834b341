"""The session and URL side of the state table (:mod:`rkcore.views.settings`): the value of every field
persisted in the session, read from a shared link once, written back to the URL, presets, and the
settings one script run drew (for the CSV files it offers).
"""
from __future__ import annotations

import logging

import streamlit as st

from .run_context import current_run
from rkcore.views.settings import (  # noqa: F401 - the table's names, as the frame's modules use them
    ALIASES, DEFAULT_DISTRIBUTION, EPS_GRID, FIELDS, NO_TARGET, QUOTE_LIMIT, TABLE, VIEW_FIELDS, Field, ViewSpec,
    allowed_text, check, choices, file_name_parts, quoted,
)

logger = logging.getLogger("rkapp")

_SHADOW = "_rk_v_"          # session key prefix of the persisted values (a widget's own key is cleared
                            # by Streamlit when a page does not draw it; the shadow survives)
_URL_SEEN = "_rk_url_seen"  # fields already read from the URL in this session


# ============================================================================ session and URL
def stored(name: str):
    """The persisted value of a field (its default when never set)."""
    return st.session_state.get(_SHADOW + name, FIELDS[name].default)


def store(name: str, value) -> None:
    st.session_state[_SHADOW + name] = value


def is_stored(name: str) -> bool:
    return _SHADOW + name in st.session_state


def read_url(f: Field, options, min_value, max_value, label: str, errors: list[str]) -> None:
    """On the first draw of a field in a session, take its value from the URL (its name or an old alias)."""
    seen = st.session_state.setdefault(_URL_SEEN, set())
    if f.name in seen:
        return
    seen.add(f.name)
    key = next((k for k in (f.name, *f.aliases) if k in st.query_params), None)
    if key is None:
        return
    text = st.query_params[key]
    try:
        value = f.parse(text)
    except (ValueError, KeyError, TypeError, OverflowError):
        errors.append(f"{label}: could not read {quoted(text)} from the link{allowed_text(f, options, min_value, max_value)}; "
                      f"using {f.dump(f.default)}.")
        return
    problem = check(value, options, min_value, max_value, label)
    if problem:
        errors.append(f"{problem} (from the link; using {f.dump(f.default)})")
        return
    store(f.name, value)


def write_url(f: Field, value) -> None:
    """Keep the URL equal to the non-default settings (old alias keys are replaced by the field name)."""
    try:
        for alias in f.aliases:
            if alias in st.query_params:
                del st.query_params[alias]
        if value == f.default:
            if f.name in st.query_params:
                del st.query_params[f.name]
        elif st.query_params.get(f.name) != f.dump(value):
            st.query_params[f.name] = f.dump(value)
    except Exception:  # noqa: BLE001 - the URL is a convenience; never break a page over it
        logger.debug("could not write query parameter %s", f.name, exc_info=True)


def apply_preset(values: dict, *, reset: bool = True) -> None:
    """Set settings (field names) after resetting the shared ones to their defaults. Old URL keys are for
    shared links only: a preset written with one is refused, so presets use the table's names."""
    unknown = [key for key in values if key not in FIELDS]
    if unknown:
        old = {key: ALIASES[key] for key in unknown if key in ALIASES}
        raise ValueError(f"Unknown setting {unknown[0]!r}" + (f" (an old URL key: use {old[unknown[0]]!r})" if old
                                                             else f"; known: {', '.join(FIELDS)}") + ".")
    if reset:
        for f in FIELDS.values():
            if f.view:
                st.session_state.pop(_SHADOW + f.name, None)
    for name, value in values.items():
        store(name, tuple(value) if FIELDS[name].multi else value)


# ============================================================================ the settings a run drew
_SETTINGS_KEY = "_rk_page_settings"  # the sidebar's settings, for an st.fragment rerun (it skips the sidebar)


def record_settings(settings: dict) -> None:
    """The settings this run's sidebar drew (rkapp.widgets.sidebar, in drawing order): every CSV of the page
    carries them."""
    current_run().settings = dict(settings)
    st.session_state[_SETTINGS_KEY] = dict(settings)


def recorded_settings() -> dict:
    """The settings recorded in this run; in an st.fragment rerun (a new thread, no sidebar run) the last
    ones of the session."""
    drawn = current_run().settings
    if drawn is not None:
        return dict(drawn)
    return dict(st.session_state.get(_SETTINGS_KEY, {}))




# ============================================================================ a view's settings, as text
#: fields a lesson step or a class never carries: the mode of the screen (each device's own) and the
#: private files (an upload token or a server path names what one person may read, never the class)
NOT_SHARED = ("presenter", "upload", "movielens_path")


def view_settings() -> dict[str, str]:
    """The session's settings that differ from their defaults, written as the URL writes them (field name ->
    text): what a lesson step keeps and a class follows. :func:`apply_view_settings` sets them back."""
    out = {}
    for f in TABLE:
        if f.name in NOT_SHARED or not is_stored(f.name):
            continue
        value = stored(f.name)
        if value != f.default:
            out[f.name] = f.dump(value)
    return out


def read_view_settings(texts: dict) -> tuple[dict, list[str]]:
    """Field name -> text (a lesson file's or a class's settings) as checked values, and a message for each
    entry refused (unknown field, unreadable text, outside the table's choices or bounds: shown literally)."""
    values, problems = {}, []
    if not isinstance(texts, dict):
        return values, ["The settings must be a table of names and values."]
    for name, text in texts.items():
        f = FIELDS.get(ALIASES.get(name, name)) if isinstance(name, str) else None
        if f is None or f.name in NOT_SHARED:
            problems.append(f"Unknown setting {quoted(name)}.")
            continue
        if not isinstance(text, str):
            problems.append(f"{f.label or f.name}: {quoted(text)} must be written as text.")
            continue
        try:
            value = f.parse(text)
        except (ValueError, KeyError, TypeError, OverflowError):
            problems.append(f"{f.label or f.name}: could not read {quoted(text)}.")
            continue
        problem = check(value, f.options() if f.options else None, f.min_value, f.max_value, f.label or f.name)
        if problem:
            problems.append(problem)
            continue
        values[f.name] = value
    return values, problems


def apply_view_settings(texts: dict) -> list[str]:
    """Reset the settings to their defaults, then set ``texts`` (field name -> text, as
    :func:`view_settings` wrote them); the messages for the entries refused (those are left at default)."""
    values, problems = read_view_settings(texts)
    apply_preset(values)
    return problems
