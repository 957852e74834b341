"""A client's clear-cache message clears its own session, not every user's caches (issue 37, finding 7):
Streamlit answers it by clearing st.cache_data for the whole server whatever client.toolbarMode says
(rkapp.client_messages)."""
from __future__ import annotations

from types import SimpleNamespace

import streamlit as st
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.state import SessionState

from rkapp.client_messages import confine_clear_cache

calls = []


@st.cache_data
def _cached_view(x: int) -> int:
    calls.append(x)
    return x * x


def test_a_clients_clear_cache_message_leaves_everyones_cached_views(clear_streamlit_cache):
    assert confine_clear_cache() and confine_clear_cache()  # in place, idempotent
    calls.clear()
    assert _cached_view(3) == 9 and calls == [3]  # another student's view, cached
    state = SessionState()
    state["_rk_kept"] = "the asking session's own result"
    session = SimpleNamespace(_session_state=state, _handle_backmsg_exception=lambda exc: (_ for _ in ()).throw(exc))
    session._handle_clear_cache_request = lambda: AppSession._handle_clear_cache_request(session)
    message = BackMsg()
    message.clear_cache = True
    AppSession.handle_backmsg(session, message)  # what a client's websocket message reaches
    assert "_rk_kept" not in state, "the asking session's own state is cleared"
    assert _cached_view(3) == 9 and calls == [3], "the other users' cached view survived (no recomputation)"
