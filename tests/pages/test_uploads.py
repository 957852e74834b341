"""Uploads are private by default (issue 26, item 1).

An upload is kept on the server under a random token (128 bits, not derived from the content) that the
URL carries, so a reload of the uploader's own browser finds the file again; another browser opening the
same link gets nothing of it (no name, no columns, no data) unless the uploader ticks "Share this file
with the link". Two AppTest sessions stand for two browsers: AppTest sends no cookies, so each test sets
the browser's XSRF cookie (what ``st.context.cookies`` gives a real session) through
``rkapp.upload_section.browser_cookie``. Files go through the real uploader widget."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from rkapp import upload_section, uploads
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


@pytest.fixture(autouse=True)
def empty_store():
    uploads.clear()
    yield
    uploads.clear()


@pytest.fixture
def browser(monkeypatch):
    """``browser.use(token)``: the next sessions run in the browser holding that XSRF token (None: no cookie)."""
    current = {"cookie": None}
    monkeypatch.setattr(upload_section, "browser_cookie", lambda: current["cookie"])

    class Browser:
        @staticmethod
        def use(token: bytes | None) -> None:
            current["cookie"] = None if token is None else xsrf_cookie(token)

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


# ============================================================================ the store
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


def test_owner_id_is_stable_across_remasked_cookies():
    a1, a2, b = xsrf_cookie(ALICE), xsrf_cookie(ALICE), xsrf_cookie(BOB)
    assert a1 != a2  # the server masks the token afresh each time it sets the cookie
    assert uploads.owner_from_cookie(a1) == uploads.owner_from_cookie(a2) != uploads.owner_from_cookie(b)
    assert uploads.owner_from_cookie(None) is None and uploads.owner_from_cookie("garbage") is None
    assert ALICE.hex() not in uploads.owner_from_cookie(a1)  # only a hash is kept


def test_the_store_is_bounded_in_bytes_and_time(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(uploads, "_clock", lambda: now[0])
    assert uploads.keep("big.csv", b"x" * (uploads.MAX_ENTRY_BYTES + 1), "o") is None  # works in its session only
    # per owner: the owner's own least recently used files go first
    size = uploads.MAX_ENTRY_BYTES // 2
    fit = uploads.OWNER_BYTES // (size + uploads._ENTRY_OVERHEAD)
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
    assert uploads.owner_bytes("o") <= uploads.OWNER_BYTES
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


def test_one_owner_cannot_evict_another_owners_file(monkeypatch):
    """Issue 37, item 6: one browser with many tabs uploading large files pushed other students' files out
    of the shared store. Now an owner's uploads push out only that owner's files; a full store keeps no
    new file (it still works in its session) and drops nobody's."""
    monkeypatch.setattr(uploads, "MAX_TOTAL_BYTES", 3 * (uploads.MAX_ENTRY_BYTES + uploads._ENTRY_OVERHEAD) + 4096)
    alice = uploads.keep("alice.csv", b"a" * 1000, "browser:alice")
    big = uploads.MAX_ENTRY_BYTES
    mallory = [uploads.keep(f"m{i}.csv", bytes([i]) * big, "browser:mallory") for i in range(5)]
    assert uploads.find(alice, "browser:alice") == ("alice.csv", b"a" * 1000)
    assert sum(t is not None and uploads.owns(t, "browser:mallory") for t in mallory) == 2  # OWNER_BYTES
    bob = [uploads.keep(f"b{i}.csv", b"b" * big, "browser:bob") for i in range(2)]
    assert bob[0] is not None and bob[1] is None and uploads.is_full(big)  # full: not kept, nobody evicted
    assert uploads.find(alice, "browser:alice") is not None
    assert uploads.total_bytes() <= uploads.MAX_TOTAL_BYTES


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
