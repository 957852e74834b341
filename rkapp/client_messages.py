"""What a browser may ask of the whole server: not to clear every user's caches.

Streamlit answers a client's "clear cache" message (the developer menu's "Clear cache", or a message any
client can send on its websocket) by clearing ``st.cache_data`` and ``st.cache_resource`` for the whole
server ("Because this cache is global, it will be cleared for all users", streamlit.runtime.app_session),
whatever ``client.toolbarMode`` says: ``viewer`` (this app's .streamlit/config.toml) only hides the menu item,
and no public option turns the message off (Streamlit 1.67). One student could so wipe the class's cached
views (issue 37, finding 7). :func:`confine_clear_cache` makes the message clear the asking session's own
state only (what a user can legitimately reset); caches expire by their own bounds (max_entries, ttl).

The hook is Streamlit's ``AppSession._handle_clear_cache_request`` (not public API): when a Streamlit
upgrade renames it, :func:`confine_clear_cache` says so in the log and the test of this module fails.
"""
from __future__ import annotations

import logging

__all__ = ["confine_clear_cache"]

logger = logging.getLogger("rkapp")


def _clear_own_session_only(self) -> None:
    """The asking session's state (its widgets and kept results), not the server's caches."""
    self._session_state.clear()


def confine_clear_cache() -> bool:
    """Make a client's clear-cache message clear only its own session's state (idempotent).

    Returns
    -------
    bool
        Whether the hook is in place (False: this Streamlit has no such handler; logged).
    """
    from streamlit.runtime.app_session import AppSession

    handler = getattr(AppSession, "_handle_clear_cache_request", None)
    if handler is None:
        logger.warning("Streamlit has no AppSession._handle_clear_cache_request: a client's clear-cache message "
                       "may clear every user's caches (rkapp.client_messages)")
        return False
    if handler is not _clear_own_session_only:
        AppSession._handle_clear_cache_request = _clear_own_session_only
    return True
