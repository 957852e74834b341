"""The sidebar's upload box: the uploader, the kept file found again after a reload, the share
checkbox, and the target column of a CSV. Private by default (see :mod:`rkapp.uploads`): the URL
carries a random token, and only the uploading browser gets the file back from it, unless the
uploader ticks "Share this file with the link"."""
from __future__ import annotations

import hashlib
import hmac
from typing import Callable

import streamlit as st

from rkcore.data import datasets as rkdata
from rkcore.data.text import too_large
from rkcore.base.limits import format_bytes
from rkcore.spec import is_csv
from rkcore.studies.costs.files import columns_cost

from . import uploads
from .guard import heavy_work, literal, show_error, show_warning
from .identity import owner_id
from .state import FIELDS, NO_TARGET, is_stored, quoted, read_url, store, stored, write_url
from .unseen import is_unseen
from .workers import run_in_worker

UPLOAD_STATE_KEY = "_rk_upload"  # (file name, bytes) of the uploaded file; tests may set it directly
TOKEN_KEY = "_rk_upload_token"  # the token the URL carries for it
FOREIGN_KEY = "_rk_upload_foreign"  # True: the file came from another browser's shared link (not ours to share)
FILE_ID_KEY = "_rk_upload_file_id"  # the uploader's id of the file in UPLOAD_STATE_KEY (a new one replaces it)
SHARE_KEY = "_rk_upload_share"  # the checkbox
MEMO_KEY = "_rk_upload_memo"  # (token, digest, columns or error) so a rerun does not re-read the file
SHOWN_COLUMNS = 30
HOURS = uploads.TTL_SECONDS // 3600


#: the file names the data uploader takes (CSV, or LIBSVM text under its usual names)
DATA_FILE_KINDS = (".csv", ".txt", ".svm", ".libsvm", ".svmlight")


def _take_new_file(file, owner: str) -> bool:
    """Put a newly chosen file in the session (False: refused as too large, the page says why)."""
    ss = st.session_state
    if ss.get(FILE_ID_KEY) == file.file_id and ss.get(UPLOAD_STATE_KEY):
        return True
    if ss.get(TOKEN_KEY) and not ss.get(FOREIGN_KEY):
        uploads.forget(ss[TOKEN_KEY], owner)  # one kept file per upload box: the new one replaces it
    for key in (UPLOAD_STATE_KEY, TOKEN_KEY, FOREIGN_KEY, FILE_ID_KEY, SHARE_KEY, MEMO_KEY):
        ss.pop(key, None)
    if not str(file.name).lower().endswith(DATA_FILE_KINDS):
        show_error(f"{quoted(file.name)} is not a data file this page reads: upload a "
                   f"{', '.join(DATA_FILE_KINDS)} file.")
        return False
    if file.size > rkdata.MAX_FILE_BYTES:  # refused before its bytes are copied into the session
        show_error(str(too_large(file.name, file.size, rkdata.MAX_FILE_BYTES)))
        return False
    ss[UPLOAD_STATE_KEY] = (file.name, file.getvalue())
    ss[FILE_ID_KEY] = file.file_id
    return True


def _find_linked(box, linked: str, owner: str) -> None:
    """A new session (a reload, or someone else's link): the kept file if this browser owns it or it is shared."""
    ss = st.session_state
    kept = uploads.find(linked, owner)
    if kept is None:
        show_warning("This link names an uploaded file that this browser cannot open: an upload is private to the "
                     "browser that uploaded it unless its uploader shares it with the link, and it is kept "
                     f"{HOURS} h after its last use on the server that received it. Upload your own file to use "
                     "this view.")
        return
    ss[UPLOAD_STATE_KEY], ss[TOKEN_KEY] = kept, linked
    ss[FOREIGN_KEY] = not uploads.owns(linked, owner)
    if ss[FOREIGN_KEY]:
        box.caption(f"**{literal(kept[0])}** was shared with this link by whoever uploaded it.")
    else:
        box.caption(f"{literal(kept[0])} found again on the server (kept {HOURS} h after its last use).")


def _revoke(box) -> None:
    """Drop another browser's file from this session: its uploader stopped sharing it (or the server forgot it).
    The page then draws nothing of it (no data, chart or download) and says why."""
    for key in (UPLOAD_STATE_KEY, TOKEN_KEY, FOREIGN_KEY, FILE_ID_KEY, SHARE_KEY, MEMO_KEY):
        st.session_state.pop(key, None)
    box.warning("The file this link shared is no longer shared by whoever uploaded it (or the server no longer "
                "keeps it): its data, charts and downloads were removed from this page. Upload your own file to "
                "use this view.", icon=":material/lock:")


def _keep_and_share(box, name: str, content: bytes, owner: str) -> None:
    """Keep the session's own file under its token (a new one for a new file), and draw the share checkbox."""
    ss = st.session_state
    token = ss.get(TOKEN_KEY)
    if ss.get(FOREIGN_KEY):
        write_url(FIELDS["upload"], token or "")
        return
    if not uploads.owns(token, owner):  # a new file, or the store forgot it (TTL, restart): keep it again
        try:
            token = uploads.keep(name, content, owner, token=token, shared=bool(ss.get(SHARE_KEY, False)))
        except uploads.StoreFull as full:  # the file works on this page; it is asked for again at each rerun
            ss.pop(TOKEN_KEY, None)
            write_url(FIELDS["upload"], "")
            box.warning(literal(str(full)), icon=":material/inventory_2:")
            return
        ss[TOKEN_KEY] = token
    write_url(FIELDS["upload"], token or "")
    if token is None:
        box.caption(f"Too large to keep for a reload (over {format_bytes(uploads.MAX_ENTRY_BYTES)}): after F5, "
                    "upload it again. It cannot be shared with a link.")
        return
    if is_unseen(box):  # presenter mode: no checkbox; the file stays as shared as it was
        return
    if SHARE_KEY not in ss:
        ss[SHARE_KEY] = uploads.is_shared(token)
    shared = box.checkbox("Share this file with the link", key=SHARE_KEY,
                          help="Off: the page's link carries your settings but not your file; whoever opens it "
                               "is asked to upload their own. On: anyone who opens the link can use this file.")
    uploads.set_shared(token, owner, shared)
    if shared:
        box.warning(f"Shared: anyone with this page's link can use **{literal(name)}**: its name, its columns "
                    "and its data.", icon=":material/public:")
    else:
        box.caption(f":material/lock: Private: the page's link does not give **{literal(name)}** to anyone else.")


def upload_digest(content: bytes, owner: str) -> str:
    """The file's key in every cache (the view's ``upload``): an HMAC of its bytes keyed by the owner id, so
    that two browsers uploading the same bytes share no cache entry, and a cache hit cannot answer "did
    someone upload this file?" (issue 37, finding 7); the same browser's reruns and reloads do share."""
    return hmac.new(owner.encode(), content, hashlib.sha256).hexdigest()


def _memo(content: bytes, token: str | None, csv: bool, owner: str) -> tuple:
    """(key, the owner's digest of the bytes, the CSV's column names or the reason there are none):
    computed once per file and session, so a rerun does not hash or re-read a large file."""
    ss = st.session_state
    memo = ss.get(MEMO_KEY)
    if memo is None or memo[0] != (token, len(content), owner):
        columns: list[str] | str = []
        if csv:
            try:  # same encoding / delimiter detection and size limits as load_csv (UTF-16, ';', tabs, ...), in a
                with heavy_work(columns_cost(len(content))):  # worker process when the server has them, admitted
                    columns = run_in_worker(rkdata.csv_columns, (content,), what="the file's columns",
                                            doing="reading the file's columns", hint="upload a smaller file")
            except ValueError as exc:  # load_data shows the same message in place of the page
                columns = str(exc)
        memo = ((token, len(content), owner), upload_digest(content, owner), columns)
        ss[MEMO_KEY] = memo
    return memo


def _target_widget(box, name: str, columns: list[str], persistent_widget: Callable) -> None:
    guess = next((c for c in columns if c.strip().lower() in ("target", "label", "class", "y")), NO_TARGET)
    errors: list[str] = []
    read_url(FIELDS["target"], None, None, None, FIELDS["target"].label, errors)
    wanted = stored("target")
    if wanted != NO_TARGET and wanted not in columns:
        shown = ", ".join(map(repr, columns[:SHOWN_COLUMNS])) + (
            f", ... ({len(columns):,} columns)" if len(columns) > SHOWN_COLUMNS else "")
        show_error(f"Target column {wanted[:80]!r} is not in {name}; its columns are: {shown}. Using no target.")
        store("target", NO_TARGET)
    elif wanted == NO_TARGET and not is_stored("target"):
        store("target", guess)
    persistent_widget(box.selectbox, key="target", options=[NO_TARGET, *columns],
                      format_func=lambda c: c or "(none)")


def upload_section(box, persistent_widget: Callable) -> tuple[str, str] | None:
    """File uploader + share checkbox + target column; returns the upload reference (name, the owner's digest of the bytes).

    ``persistent_widget`` is the sidebar's widget drawer (:func:`rkapp.widgets.persistent_widget`), passed in by
    the sidebar that draws this section, so that this module does not import the one importing it.
    """

    ss = st.session_state
    box = box or st.sidebar
    # no type= for Streamlit to enforce: a client that bypasses the browser's file picker got Streamlit's own
    # exception, with its traceback, instead of a message; the kinds are checked here (DATA_FILE_KINDS)
    file = box.file_uploader("CSV (header row) or LIBSVM file", key="upload_file",
                             help="CSV: numeric feature columns plus an optional target column. LIBSVM: 'label "
                             "index:value ...' lines. Private to you unless you share it.")
    owner = owner_id()
    linked = str(st.query_params.get("upload", ""))
    if file is not None:
        if not _take_new_file(file, owner):
            return None
    elif ss.get(FOREIGN_KEY) and not uploads.readable(ss.get(TOKEN_KEY), owner):
        _revoke(box)  # its uploader stopped sharing it (or it expired): gone at this rerun
    elif not ss.get(UPLOAD_STATE_KEY) and linked:
        _find_linked(box, linked, owner)
    upload = ss.get(UPLOAD_STATE_KEY)
    if not upload:
        box.info("Upload a file to use it; until then the page explains what is missing.")
        return None
    name, content = upload
    _keep_and_share(box, name, content, owner)
    box.caption(f"Using **{literal(name)}** ({format_bytes(len(content))}).")
    _, digest, columns = _memo(content, ss.get(TOKEN_KEY), is_csv(name), owner)
    if is_csv(name):
        if isinstance(columns, str):
            box.caption(literal(f"No target column to choose: {columns}"))
        else:
            _target_widget(box, name, columns, persistent_widget)
    return name, digest
