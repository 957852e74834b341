"""The view's data, loaded once per setting (st.cache_data over rkcore.spec.load_view_data), and the
figures built from it, built once per input for every session of the server (:func:`shared_figure`)."""
from __future__ import annotations

from typing import Callable, Hashable

import plotly.graph_objects as go
import streamlit as st

from rkcore.data.datasets import data_roots
from rkcore.spec import MOVIELENS, UPLOAD, load_view_data
from rkcore.studies.costs.files import parse_cost

from .guard import heavy_work
from .identity import owner_id
from .upload_section import UPLOAD_STATE_KEY, upload_digest
from .workers import run_in_worker


@st.cache_data(show_spinner="Loading data…", max_entries=32)
def _load(dataset, normalization, n: int, *, target, movielens_path, upload, movielens_roots, _upload_bytes=None):
    """load_view_data, cached by the view's settings; an upload by ``upload`` (its name and its owner's digest,
    rkapp.upload_section.upload_digest), not by its bytes (not hashed: ``_upload_bytes``): per owner, so the
    cache cannot tell anyone whether a file was uploaded by someone else. An upload is parsed by a worker process
    when the server has them (rkapp.workers), admitted like a run at its price (:func:`parse_cost`: the
    memory budget counts parsing); built-in data sets and MovieLens are read here."""
    name = upload[0] if upload else None
    arguments = dict(target=target, movielens_path=movielens_path, upload_name=name, upload_bytes=_upload_bytes,
                     movielens_roots=movielens_roots)
    if _upload_bytes is None:
        return load_view_data(dataset, normalization, n, **arguments)
    with heavy_work(parse_cost(len(_upload_bytes))):
        return run_in_worker(load_view_data, (dataset, normalization, n), arguments, what=f"the file {name}",
                             doing=f"reading {name}", hint="upload a sample of its rows (or fewer columns)")


#: Built figures kept for the whole server, so a class opening the same views builds each figure once
#: (building a plotly figure, with its validation, was about half of a Gram page's rerun). Bounded on
#: purpose: the largest figure (the Gram heatmaps, 2 × 250² cells) is about 1 MB, so 128 entries hold at
#: most ~130 MB, and an hour without use frees an entry.
FIGURE_CACHE_ENTRIES = 128
FIGURE_CACHE_TTL = "1h"


def load_data(view):
    """The view's Dataset: loaded (cached), at most ``view.n`` rows, rows normalized. MovieLens is read
    only under the server's data roots (RKCORE_DATA_ROOTS); an upload only from this session's state."""
    upload_ref = upload_bytes = None
    if view.dataset == UPLOAD:
        upload = st.session_state.get(UPLOAD_STATE_KEY)
        if upload:  # the view carries its reference; a view built by hand gets the owner's digest here
            upload_ref = view.upload or (upload[0], upload_digest(upload[1], owner_id()))
            upload_bytes = upload[1]
    return _load(view.dataset, view.normalization, int(view.n), target=view.target or None,
                 movielens_path=view.movielens_path, upload=upload_ref, movielens_roots=data_roots()
                 if view.dataset == MOVIELENS else None, _upload_bytes=upload_bytes)


@st.cache_data(max_entries=FIGURE_CACHE_ENTRIES, ttl=FIGURE_CACHE_TTL, show_spinner=False)
def _figure_spec(name: str, key, _args: tuple, _kwargs: dict, _build: Callable[..., go.Figure]) -> dict:
    """The figure's JSON (data + layout), keyed by the builder's name and ``key`` (the underscored
    arguments are not hashed: ``name`` and ``key`` stand for them)."""
    return _build(*_args, **_kwargs).to_plotly_json()


def shared_figure(build: Callable[..., go.Figure], *args, cache_key: Hashable = None, **kwargs) -> go.Figure:
    """``build(*args, **kwargs)``, a pure function from data to a plotly figure (:mod:`rkcore.figures`),
    built once per distinct input for every session, then handed out as a new figure each time (the
    page may still adjust it: titles wrapped, presenter mode). ``cache_key``: settings that determine
    every input (e.g. the page's ViewSpec, which carries an upload's digest), so large inputs are not
    hashed on every rerun; without it the inputs themselves are the key. The spec was validated when it
    was built, so the copy skips plotly's validation (most of the cost of building a figure)."""
    key = ("inputs", args, kwargs) if cache_key is None else ("settings", cache_key)
    if st.session_state.get(UPLOAD_STATE_KEY):  # figures of a session holding an upload are its owner's only:
        key = (*key, owner_id())  # a hit must not tell anyone that the same data was charted by someone else
    spec = _figure_spec(f"{build.__module__}.{build.__qualname__}", key, args, kwargs, build)
    return go.Figure(spec, _validate=False)
