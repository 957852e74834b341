"""The view's data, loaded once per setting (st.cache_data over rkcore.spec.load_view_data)."""
from __future__ import annotations

import streamlit as st

from rkcore.spec import UPLOAD, load_view_data

from .widgets import UPLOAD_STATE_KEY

_load = st.cache_data(show_spinner="Loading data…", max_entries=32)(load_view_data)


def load_data(view):
    """The view's Dataset: loaded (cached), at most ``view.n`` rows, rows normalized."""
    upload_name = upload_bytes = None
    if view.dataset == UPLOAD:
        upload = st.session_state.get(UPLOAD_STATE_KEY)
        if upload:
            upload_name, upload_bytes = upload
    return _load(view.dataset, view.normalization, int(view.n), target=view.target or None,
                 movielens_path=view.movielens_path, upload_name=upload_name, upload_bytes=upload_bytes)
