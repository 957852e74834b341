"""Uploads are private by default (issue 26, item 1).

An upload is kept on the server under a random token (128 bits, not derived from the content) that the
URL carries, so a reload of the uploader's own browser finds the file again; another browser opening the
same link gets nothing of it (no name, no columns, no data) unless the uploader ticks "Share this file
with the link". Two AppTest sessions stand for two browsers: AppTest sends no cookies, so each test sets
the cookies a browser's websocket handshake would carry (what the public ``st.context.cookies`` gives a
real session): Streamlit's XSRF cookie and the app's own owner cookie (:mod:`rkapp.identity`), whose
middleware a real server runs (tests/browser/test_upload_privacy.py). Files go through the real uploader
widget."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from rkapp import identity, upload_section, uploads
from tests.conftest import shown, warning_texts

REPO = Path(__file__).resolve().parents[2]

GRAM = "pages/1_Gram_matrices.py"
SECRET_NAME = "secret_grades.csv"
SECRET_COLUMN = "grade_of_alice"
CSV = (f"{SECRET_COLUMN},b,c,target\n".encode()
       + b"".join(f"{i % 7},{(3 * i) % 5},{i % 3},{i % 2}\n".encode() for i in range(40)))


def xsrf_cookie(token: bytes) -> str:
    """A cookie as Streamlit's server writes it (``2|mask|masked token|time``, a fresh mask each time)."""
    from streamlit.web.server.starlette.starlette_app_utils import generate_xsrf_token_string

    return generate_xsrf_token_string(token, 1_700_000_000)


ALICE, BOB = os.urandom(16), os.urandom(16)
#: Each browser's owner cookie, as rkapp.identity.OwnerCookie issues it (one per browser, for the test run).
OWNER_COOKIES = {ALICE: identity.issue_cookie(), BOB: identity.issue_cookie()}


@pytest.fixture(autouse=True)
def empty_store():
    uploads.clear()
    yield
    uploads.clear()


@pytest.fixture
def browser(monkeypatch):
    """``browser.use(token)``: the next sessions run in the browser holding that XSRF token and its owner
    cookie (None: no cookie); ``browser.use_cookies(dict)``: exactly these cookies (a forger's)."""
    import streamlit as st

    current = {"cookies": {}}
    monkeypatch.setattr(type(st.context), "cookies", property(lambda self: dict(current["cookies"])))

    class Browser:
        @staticmethod
        def use(token: bytes | None) -> None:
            current["cookies"] = {} if token is None else {
                "_streamlit_xsrf": xsrf_cookie(token), identity.OWNER_COOKIE: OWNER_COOKIES[token]}

        @staticmethod
        def use_cookies(cookies: dict) -> None:
            current["cookies"] = dict(cookies)

    return Browser()


def everything_sent(at) -> str:
    """The text of every element the page sent to the browser (sidebar included), as protobuf text."""
    out = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in (getattr(node, "children", None) or {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


def upload_as_alice(run_page, browser, *, share: bool = False):
    browser.use(ALICE)
    at = run_page(GRAM, dataset="upload", n=30, D=32)
    at.file_uploader(key="upload_file").set_value((SECRET_NAME, CSV, "text/csv")).run()
    if share:
        at.checkbox(key=upload_section.SHARE_KEY).check().run()
    assert not at.exception, at.exception
    token = at.query_params["upload"]
    token = token[0] if isinstance(token, list) else token
    assert uploads.is_token(token)
    return at, token


# ============================================================================ two sessions
def test_a_link_to_an_unshared_upload_reveals_nothing_to_another_browser(run_page, browser):
    alice, token = upload_as_alice(run_page, browser)
    assert len(alice.metric) == 4  # Alice's page drew its numbers from her file
    assert any("Private" in shown(c.value) for c in alice.sidebar.caption)
    browser.use(BOB)
    bob = run_page(GRAM, dataset="upload", upload=token, n=30, D=32)
    assert not bob.exception
    sent = everything_sent(bob)
    assert SECRET_NAME not in sent and "secret" not in sent and SECRET_COLUMN not in sent
    assert len(bob.metric) == 0 and not bob.get("plotly_chart") or all(
        SECRET_COLUMN not in str(c.proto) for c in bob.get("plotly_chart"))
    (warning,) = [w for w in warning_texts(bob) if "cannot open" in w]
    assert "private to the browser that uploaded it" in warning and "Upload your own file" in warning


def test_a_shared_upload_is_given_to_the_link_and_the_page_says_so(run_page, browser):
    alice, token = upload_as_alice(run_page, browser, share=True)
    assert any("anyone with this page's link can use" in shown(w.value) for w in alice.sidebar.warning)
    browser.use(BOB)
    bob = run_page(GRAM, dataset="upload", upload=token, n=30, D=32)
    assert not bob.exception and not bob.error, [e.value for e in bob.error]
    assert any(SECRET_NAME in shown(c.value) and "shared with this link" in shown(c.value) for c in bob.sidebar.caption)
    assert SECRET_COLUMN in everything_sent(bob)  # the target choice lists the file's columns
    assert len(bob.metric) == 4
    assert not bob.get("checkbox") or all(c.key != upload_section.SHARE_KEY for c in bob.checkbox)  # not Bob's to share


def test_unsharing_takes_the_file_back_from_new_sessions(run_page, browser):
    alice, token = upload_as_alice(run_page, browser, share=True)
    alice.checkbox(key=upload_section.SHARE_KEY).uncheck().run()
    assert not uploads.is_shared(token)
    browser.use(BOB)
    bob = run_page(GRAM, dataset="upload", upload=token, n=30, D=32)
    assert SECRET_NAME not in everything_sent(bob) and len(bob.metric) == 0


def test_unsharing_revokes_a_tab_already_open_at_its_next_rerun(run_page, browser):
    """Issue 37, finding 5: Bob opened the shared link; Alice stops sharing; Bob's next rerun has nothing of
    the file left (no data, charts or download buttons) and says why."""
    alice, token = upload_as_alice(run_page, browser, share=True)
    browser.use(BOB)
    bob = run_page(GRAM, dataset="upload", upload=token, n=30, D=32)
    assert len(bob.metric) == 4 and SECRET_COLUMN in everything_sent(bob)
    downloads_before = {b.key for b in bob.get("download_button")}
    browser.use(ALICE)
    alice.checkbox(key=upload_section.SHARE_KEY).uncheck().run()
    browser.use(BOB)
    bob.run()
    assert not bob.exception
    sent = everything_sent(bob)
    assert SECRET_NAME not in sent and SECRET_COLUMN not in sent, "nothing of the file on Bob's page"
    assert len(bob.metric) == 0 and not bob.get("plotly_chart")
    # only the view's export is left, which holds what this run drew (no chart, no table of the file)
    downloads_after = {b.key for b in bob.get("download_button")}
    assert downloads_after <= {"export_view"} and downloads_before > downloads_after, (downloads_before, downloads_after)
    assert any("no longer shared" in w for w in warning_texts(bob)), warning_texts(bob)
    bob.run()  # and it stays gone
    assert SECRET_NAME not in everything_sent(bob) and len(bob.metric) == 0


def test_a_reload_in_the_uploaders_browser_finds_the_file(run_page, browser):
    _, token = upload_as_alice(run_page, browser)
    browser.use(ALICE)  # F5: a new session of the same browser
    again = run_page(GRAM, dataset="upload", upload=token, n=30, D=32)
    assert not again.exception and not again.error, [e.value for e in again.error]
    assert any("found again on the server" in shown(c.value) and SECRET_NAME in shown(c.value)
               for c in again.sidebar.caption)
    assert len(again.metric) == 4
    assert again.query_params["upload"] in (token, [token])  # the same token: the link stays valid
    assert again.checkbox(key=upload_section.SHARE_KEY).value is False  # still private


def test_without_a_browser_cookie_the_file_is_private_to_its_session(run_page, browser):
    browser.use(None)  # XSRF protection off: no per-browser secret, so the session is the owner
    at = run_page(GRAM, dataset="upload", n=30, D=32)
    at.file_uploader(key="upload_file").set_value((SECRET_NAME, CSV, "text/csv")).run()
    token = at.query_params["upload"]
    at.run()  # its own reruns keep the file
    assert len(at.metric) == 4
    other = run_page(GRAM, dataset="upload", upload=token, n=30, D=32)
    assert SECRET_NAME not in everything_sent(other) and len(other.metric) == 0


@pytest.mark.parametrize("linked", ["0123456789abcdef", "A" * 22, "../../etc/passwd" + "x" * 200])
def test_an_unknown_link_gets_the_same_answer_as_a_private_one(run_page, browser, linked):
    browser.use(BOB)
    at = run_page(GRAM, dataset="upload", upload=linked, n=30)
    assert not at.exception
    (warning,) = [w for w in warning_texts(at) if "cannot open" in w]
    assert linked[:10] not in warning  # one fixed answer, whatever the link holds
    assert len(at.metric) == 0


def test_the_caches_cannot_answer_whether_a_file_was_uploaded(run_page, browser, monkeypatch):
    """Issue 37, finding 7: Mallory uploads a candidate copy of Alice's file with Alice's settings; her page
    computes everything afresh (no cache entry of Alice's answers it), while Alice's own rerun is a hit."""
    import rkcore.views.gram

    computed = []
    real_pair = rkcore.views.gram.gram_pair  # the view's compute calls it on every cache miss
    monkeypatch.setattr(rkcore.views.gram, "gram_pair", lambda *a, **k: computed.append(1) or real_pair(*a, **k))
    alice, _ = upload_as_alice(run_page, browser)
    before = len(computed)
    assert before
    alice.run()
    assert len(computed) == before, "the uploader's own rerun is served from the caches"
    browser.use(BOB)
    mallory = run_page(GRAM, dataset="upload", n=30, D=32)
    mallory.file_uploader(key="upload_file").set_value((SECRET_NAME, CSV, "text/csv")).run()
    assert not mallory.exception and len(mallory.metric) == 4
    assert len(computed) > before, "the same bytes from another browser were computed afresh, not a cache hit"
    assert upload_section.upload_digest(CSV, "browser:a") != upload_section.upload_digest(CSV, "browser:b")


# ============================================================================ the store
def test_one_student_cannot_evict_another_students_upload(monkeypatch):
    """Issue 37, finding 6: one browser uploading file after file (5 tabs of 31 MB files) evicts only its own
    older files; once the store is full of other students' files, a new student's file is refused with a
    message, not kept by evicting someone's (the global bound holds)."""
    size = 31 * 2**20
    each = size + uploads._ENTRY_OVERHEAD
    monkeypatch.setattr(uploads, "MAX_TOTAL_BYTES", 5 * each)  # Alice, Mallory's share, two more students
    per_owner = uploads.MAX_OWNER_BYTES // each
    assert per_owner == 2
    alice = uploads.keep("alice.csv", b"a" * size, "browser:alice")
    tabs = [uploads.keep(f"tab{k}.csv", bytes([k]) * size, "browser:mallory") for k in range(5)]
    assert uploads.find(alice, "browser:alice") == ("alice.csv", b"a" * size), "Alice's file is still there"
    assert [uploads.find(t, "browser:mallory") is not None for t in tabs] == [False] * 3 + [True] * per_owner
    others = [uploads.keep(f"{k}.csv", b"s" * size, f"browser:student{k}") for k in range(2)]
    assert uploads.total_bytes() <= uploads.MAX_TOTAL_BYTES
    with pytest.raises(uploads.StoreFull, match="other students' files fill it now"):
        uploads.keep("late.csv", b"l" * size, "browser:late")
    assert all(uploads.find(t, f"browser:student{k}") is not None for k, t in enumerate(others))
    assert uploads.find(alice, "browser:alice") is not None and uploads.total_bytes() <= uploads.MAX_TOTAL_BYTES


def test_a_full_store_says_so_and_the_file_still_works_on_its_page(run_page, browser, monkeypatch):
    monkeypatch.setattr(uploads, "MAX_TOTAL_BYTES", len(CSV) + uploads._ENTRY_OVERHEAD + 10)
    uploads.keep("someone.csv", CSV, "browser:someone")
    browser.use(ALICE)
    at = run_page(GRAM, dataset="upload", n=30, D=32)
    at.file_uploader(key="upload_file").set_value((SECRET_NAME, CSV, "text/csv")).run()
    assert not at.exception and len(at.metric) == 4  # her page uses it
    assert any("other students' files fill it now" in w for w in warning_texts(at)), warning_texts(at)
    assert not at.query_params.get("upload")  # no link to a file the server does not keep



def test_tokens_are_random_not_derived_from_the_content():
    import hashlib

    tokens = {uploads.keep("a.csv", CSV, "browser:x") for _ in range(5)}
    assert len(tokens) == 5 and all(uploads.is_token(t) and len(t) == 22 for t in tokens)  # 16 bytes = 128 bits
    assert not any(t in hashlib.sha256(CSV).hexdigest() for t in tokens)


def test_only_the_owner_or_a_share_opens_a_kept_file():
    token = uploads.keep("mine.csv", CSV, "browser:alice")
    assert uploads.find(token, "browser:alice") == ("mine.csv", CSV)
    assert uploads.find(token, "browser:bob") is None and uploads.find(token, None) is None
    assert uploads.set_shared(token, "browser:bob", True) is False  # only the owner shares
    assert uploads.keep("evil.csv", b"x", "browser:bob", token=token) != token  # no take-over of a token
    assert uploads.find(token, "browser:alice") == ("mine.csv", CSV)
    assert uploads.set_shared(token, "browser:alice", True) is True
    assert uploads.find(token, "browser:bob") == ("mine.csv", CSV)
    uploads.forget(token, "browser:bob")  # not Bob's to drop
    assert uploads.find(token, "browser:alice") is not None
    uploads.forget(token, "browser:alice")
    assert uploads.find(token, "browser:alice") is None


def _forgeries(cookie: str) -> list[str]:
    """Values a forger could try from a seen or guessed owner cookie: each one a character off, re-encoded,
    padded, re-cased, truncated, or a fresh id under the same signature."""
    version, ident, signature = cookie.split(".")
    flip = {c: ("A" if c != "A" else "B") for c in set(cookie)}
    return [cookie[:k] + flip[cookie[k]] + cookie[k + 1:] for k in range(len(cookie))] + [
        cookie + "=", cookie + " ", cookie.upper(), cookie[:-1], f"{version}.{identity.issue_cookie().split('.')[1]}.{signature}",
        f"v2.{ident}.{signature}", f'"{cookie}"', ""]


def test_the_owner_cookie_is_verified_exactly():
    """Issue 37, finding 4: the owner is the app's own signed cookie, checked exactly: no altered value, no
    other mask of Streamlit's XSRF token, no cookie signed with another server's secret is an owner."""
    alice = OWNER_COOKIES[ALICE]
    assert identity.owner_from_cookie(alice) == identity.owner_from_cookie(alice) != identity.owner_from_cookie(
        OWNER_COOKIES[BOB])
    assert identity.owner_from_cookie(alice).startswith("browser:") and alice.split(".")[1] not in identity.owner_from_cookie(alice)
    assert [f for f in _forgeries(alice) if identity.owner_from_cookie(f) is not None] == []
    for xsrf in (xsrf_cookie(ALICE), xsrf_cookie(ALICE)):  # Streamlit's cookie, any mask: no owner at all
        assert identity.owner_from_cookie(xsrf) is None


def test_another_servers_cookie_is_no_owner(monkeypatch):
    monkeypatch.setenv(identity.COOKIE_SECRET_ENV, "11" * 32)
    other_server = identity.issue_cookie()
    assert identity.owner_from_cookie(other_server) is not None
    monkeypatch.setenv(identity.COOKIE_SECRET_ENV, "22" * 32)
    assert identity.owner_from_cookie(other_server) is None
    monkeypatch.setenv(identity.COOKIE_SECRET_ENV, "not hex")
    with pytest.raises(ValueError, match="must be hexadecimal"):
        identity.issue_cookie()


def test_a_stolen_xsrf_token_under_another_mask_opens_nothing(run_page, browser):
    """Issue 37, finding 4: another app on the host read Alice's XSRF cookie; a browser presenting her token
    (any mask) and forged owner cookies gets nothing of her private upload."""
    _, token = upload_as_alice(run_page, browser)
    for forged in [xsrf_cookie(ALICE), *_forgeries(OWNER_COOKIES[ALICE])[::7]]:
        browser.use_cookies({"_streamlit_xsrf": xsrf_cookie(ALICE), identity.OWNER_COOKIE: forged})
        mallory = run_page(GRAM, dataset="upload", upload=token, n=30, D=32)
        assert not mallory.exception
        assert SECRET_NAME not in everything_sent(mallory) and len(mallory.metric) == 0, forged


def test_the_middleware_sets_an_httponly_samesite_cookie_once():
    import asyncio

    async def streamlit_app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": b"ok"})

    def respond(cookie_header: bytes | None, scheme: str = "http") -> list:
        sent = []

        async def send(message):
            sent.append(message)

        headers = [(b"cookie", cookie_header)] if cookie_header is not None else []
        asyncio.run(identity.OwnerCookie(streamlit_app)({"type": "http", "scheme": scheme, "headers": headers},
                                                         None, send))
        return [v.decode() for k, v in sent[0]["headers"] if k == b"set-cookie"]

    (first,) = respond(None)
    value = first.split(";")[0].split("=", 1)[1]
    assert identity.owner_from_cookie(value) is not None
    assert {"HttpOnly", "SameSite=Strict", "Path=/"} <= {p.strip() for p in first.split(";")} and "Secure" not in first
    assert "Secure" in respond(None, scheme="https")[0]
    assert respond(f"a=1; {identity.OWNER_COOKIE}={value}".encode()) == []  # a valid cookie is kept
    (renewed,) = respond(f"{identity.OWNER_COOKIE}={_forgeries(value)[5]}".encode())  # a forged one is replaced
    assert renewed.split(";")[0].split("=", 1)[1] != value


def test_the_store_is_bounded_in_bytes_and_time(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(uploads, "_clock", lambda: now[0])
    assert uploads.keep("big.csv", b"x" * (uploads.MAX_ENTRY_BYTES + 1), "o") is None  # works in its session only
    # per owner: the owner's own least recently used files go first
    size = uploads.MAX_ENTRY_BYTES // 2
    fit = uploads.MAX_OWNER_BYTES // (size + uploads._ENTRY_OVERHEAD)
    tokens = []
    for i in range(fit):
        now[0] += 1
        tokens.append(uploads.keep(f"f{i}", bytes([i]) * size, "o"))
    assert all(uploads.owns(t, "o") for t in tokens)  # all fit (looked up without a use)
    now[0] += 1
    assert uploads.find(tokens[0], "o") is not None  # a use makes it the most recent
    now[0] += 1
    extra = uploads.keep("extra", b"e" * size, "o")
    assert uploads.find(tokens[1], "o") is None and uploads.find(tokens[0], "o") is not None
    assert uploads.find(extra, "o") is not None
    assert uploads.owner_bytes("o") <= uploads.MAX_OWNER_BYTES
    # expiry TTL_SECONDS after the last use; a use renews
    uploads.clear()
    token = uploads.keep("old.csv", b"old", "o")
    now[0] = uploads.TTL_SECONDS - 1
    assert uploads.find(token, "o") is not None
    now[0] = 2 * uploads.TTL_SECONDS - 2
    assert uploads.find(token, "o") is not None
    now[0] = 3 * uploads.TTL_SECONDS
    assert uploads.find(token, "o") is None
    assert uploads.find("../etc", "o") is None and not uploads.is_token("ABCDEF0123456789")


def test_the_store_is_shared_by_processes(tmp_path, monkeypatch):
    """Several app processes (rkcore-app --processes N) share one store: a file kept by one process is found
    by another (a link opened on another process), with the same privacy rules."""
    import subprocess
    import sys

    monkeypatch.setenv(uploads.STORE_DIR_ENV, str(tmp_path))
    token = uploads.keep("mine.csv", CSV, "browser:alice")
    script = ("import sys; from rkapp import uploads; "
              "print(uploads.find(sys.argv[1], 'browser:alice') is not None, (uploads.find(sys.argv[1], 'browser:bob') or ['-'])[0])")
    def other_process():
        done = subprocess.run([sys.executable, "-c", script, token], capture_output=True, text=True, timeout=60,
                              env={**os.environ, uploads.STORE_DIR_ENV: str(tmp_path)}, cwd=REPO)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()
    assert other_process() == ["True", "-"]
    uploads.set_shared(token, "browser:alice", True)
    assert other_process() == ["True", "mine.csv"]


@pytest.mark.parametrize("name", ["evil.exe", "data.csv.exe", "<b>x</b>.json", "no_extension"])
def test_a_file_of_another_kind_is_refused_in_place_without_an_exception(run_page, browser, name):
    """A client that bypasses the browser's file picker sends any name: Streamlit's own type check raised
    (an exception with its traceback); the page checks the kind itself and says so, the name shown literally."""
    browser.use(ALICE)
    at = run_page(GRAM, dataset="upload", n=30, D=32)
    at.file_uploader(key="upload_file").set_value((name, CSV, "application/octet-stream")).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any("is not a data file this page reads" in e for e in errors), errors
    assert "upload" not in at.query_params  # nothing kept


def test_the_lesson_uploader_reads_any_name_and_refuses_what_is_not_a_lesson(run_page):
    at = run_page(GRAM)
    at.file_uploader(key="lesson_file").set_value(("lesson.exe", b"\x00\xffnot json", "application/octet-stream")).run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["lesson\\.exe\\: not a lesson file\\: byte 1 is not UTF\\-8 text\\."]
