"""Uploads held per page, per browser and for the server are bounded (issue 37, finding 1): Streamlit keeps
every PUT to /_stcore/upload_file/<session>/<file id> in memory until the session ends, made-up ids included
(it answers 204); its only public bound is server.maxUploadSize per file. rkapp.upload_limits.UploadLimits
(serve.py's middleware) refuses, before the body is read, what would pass a bound."""
from __future__ import annotations

import asyncio
import uuid

import pytest

from rkapp import identity, upload_limits
from rkapp.upload_limits import MAX_OWNER_BYTES, MAX_SESSION_BYTES, MAX_SESSION_FILES, UploadLimits

MB = 2**20


class FakeStreamlit:
    """Streamlit's upload route as far as the middleware sees it: 204 for every PUT (made-up ids too)."""

    def __init__(self):
        self.kept = 0

    async def __call__(self, scope, receive, send):
        self.kept += 1
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})


def put(limits, session: str, size: int, *, cookie: str | None = None, method: str = "PUT",
        file_id: str | None = None) -> int:
    headers = [(b"content-length", str(size).encode())]
    if cookie:
        headers.append((b"cookie", f"{identity.OWNER_COOKIE}={cookie}".encode()))
    scope = {"type": "http", "method": method, "headers": headers,
             "path": f"/_stcore/upload_file/{session}/{file_id or uuid.uuid4()}"}
    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(limits(scope, None, send))
    return sent[0]["status"]


def test_ten_uploads_to_made_up_ids_are_bounded_per_page():
    """The finding: ten 15 MB uploads to ids the page never issued each answered 204 and held 150 MB."""
    app = FakeStreamlit()
    limits = UploadLimits(app, server_bytes=10**12)
    statuses = [put(limits, "session-a", 15 * MB) for _ in range(10)]
    assert statuses.count(204) == MAX_SESSION_FILES and statuses[MAX_SESSION_FILES:] == [413] * (10 - MAX_SESSION_FILES)
    assert limits.held_bytes() == MAX_SESSION_FILES * 15 * MB <= MAX_SESSION_BYTES
    assert app.kept == MAX_SESSION_FILES, "a refused upload never reaches Streamlit"
    big = [put(limits, "session-b", 60 * MB) for _ in range(3)]
    assert big == [204, 204, 413]  # bytes: two of the largest files per page


def test_a_browsers_tabs_together_and_the_server_are_bounded():
    limits = UploadLimits(FakeStreamlit(), server_bytes=500 * MB)
    cookie = identity.issue_cookie()
    tabs = [put(limits, f"tab-{k}", 60 * MB, cookie=cookie) for k in range(5)]
    assert tabs.count(204) * 60 * MB <= MAX_OWNER_BYTES and tabs[-1] == 413
    others = [put(limits, f"student-{k}", 60 * MB, cookie=identity.issue_cookie()) for k in range(8)]
    assert limits.held_bytes() <= 500 * MB and others[-1] == 413


def test_deleted_files_and_ended_sessions_free_their_share():
    active = {"s"}
    limits = UploadLimits(FakeStreamlit(), server_bytes=10**12, is_active=lambda s: s in active)
    ids = [str(uuid.uuid4()) for _ in range(MAX_SESSION_FILES)]
    assert [put(limits, "s", MB, file_id=i) for i in ids] == [204] * MAX_SESSION_FILES
    assert put(limits, "s", MB) == 413
    assert put(limits, "s", 0, method="DELETE", file_id=ids[0]) == 204
    assert put(limits, "s", MB) == 204  # the deleted file's place
    active.clear()  # the page closed: Streamlit dropped its files
    assert put(limits, "t", MB) == 204 and limits.held_bytes() == MB


def test_an_upload_without_its_size_is_refused_and_other_requests_pass():
    limits = UploadLimits(FakeStreamlit(), server_bytes=10**12)
    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(limits({"type": "http", "method": "PUT", "headers": [], "path": "/_stcore/upload_file/s/f"}, None, send))
    assert sent[0]["status"] == 413 and b"Content-Length" in sent[1]["body"]
    sent.clear()
    asyncio.run(limits({"type": "http", "method": "GET", "headers": [], "path": "/"}, None, send))
    assert sent[0]["status"] == 204  # passed through to Streamlit


def test_the_servers_upload_memory_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv(upload_limits.UPLOAD_MEMORY_ENV, "3e8")
    assert upload_limits.server_upload_bytes() == 300_000_000
    monkeypatch.delenv(upload_limits.UPLOAD_MEMORY_ENV)
    monkeypatch.setenv("RKCORE_SERVER_MEMORY", "1e9")
    assert upload_limits.server_upload_bytes() == 250_000_000
    monkeypatch.setenv(upload_limits.UPLOAD_MEMORY_ENV, "lots")
    with pytest.raises(ValueError, match="RKCORE_UPLOAD_MEMORY must be a positive number"):
        upload_limits.server_upload_bytes()
