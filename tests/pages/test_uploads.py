"""Uploads survive a reload: the file is kept on the server under the first 16 hex digits of its SHA-256,
the URL carries that key (``upload=...``), and a new session (F5) finds the file again; a link whose file
the server does not hold says to upload it again. The store is bounded (entries, bytes, TTL)."""
from __future__ import annotations

import pytest

from rkapp import uploads
from tests.conftest import shown, warning_texts

GRAM = "pages/1_Gram_matrices.py"
CSV = b"a,b,c,target\n" + b"".join(f"{i % 7},{(3 * i) % 5},{i % 3},{i % 2}\n".encode() for i in range(40))


@pytest.fixture(autouse=True)
def empty_store():
    uploads.clear()
    yield
    uploads.clear()


def test_a_new_session_finds_the_upload_from_the_url(run_page):
    key = uploads.keep("mine.csv", CSV)
    assert key == uploads.upload_key(CSV) and len(key) == 16
    at = run_page(GRAM, dataset="upload", upload=key, n=30, D=32)  # a new session: nothing in session_state
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("found again on the server" in c.value for c in at.sidebar.caption)
    assert any("mine.csv" in shown(c.value) for c in at.sidebar.caption)
    assert len(at.metric) == 4  # the Gram page drew its numbers from the file
    assert at.query_params["upload"] == [key] or at.query_params["upload"] == key


def test_an_upload_in_the_session_puts_its_key_in_the_url(run_page):
    from rkapp.widgets import UPLOAD_STATE_KEY

    at = run_page(GRAM, dataset="upload", n=30, D=32, session={UPLOAD_STATE_KEY: ("mine.csv", CSV)})
    assert not at.exception and not at.error
    key = uploads.upload_key(CSV)
    assert uploads.find(key) == ("mine.csv", CSV)
    assert key in str(at.query_params["upload"])


@pytest.mark.parametrize("linked", ["0123456789abcdef", "../../etc/passwd" + "x" * 200])
def test_a_link_whose_file_is_gone_says_to_upload_it_again(run_page, linked):
    at = run_page(GRAM, dataset="upload", upload=linked, n=30)
    assert not at.exception
    (warning,) = [w for w in warning_texts(at) if "no longer holds" in w]
    assert "Upload the file again" in warning
    assert linked[:40] in warning  # shown literally (cut when long)
    assert len(at.metric) == 0


def test_the_store_is_bounded():
    # a file over the per-entry limit is not kept (it still works in its session)
    assert uploads.keep("big.csv", b"x" * (uploads.MAX_ENTRY_BYTES + 1)) is None
    # at most MAX_ENTRIES files; the least recently used goes first, a use renews
    keys = [uploads.keep(f"f{i}.csv", f"{i}".encode(), now=0.0) for i in range(uploads.MAX_ENTRIES)]
    assert uploads.find(keys[0], now=1.0) is not None
    extra = uploads.keep("extra.csv", b"extra", now=2.0)
    assert uploads.find(keys[1], now=3.0) is None and uploads.find(keys[0], now=3.0) is not None
    assert uploads.find(extra, now=3.0) == ("extra.csv", b"extra")
    # total bytes: four entries of a third of the total cannot all stay
    uploads.clear()
    third = uploads.MAX_TOTAL_BYTES // 3
    if third <= uploads.MAX_ENTRY_BYTES:
        big = [uploads.keep(f"b{i}", bytes([i]) * third, now=0.0) for i in range(4)]
        assert uploads.find(big[0], now=0.0) is None and uploads.find(big[3], now=0.0) is not None
    else:  # entries are capped below a third of the total: the entry cap bounds the total
        assert uploads.MAX_ENTRIES * uploads.MAX_ENTRY_BYTES >= uploads.MAX_TOTAL_BYTES
    # expiry after TTL_SECONDS without use
    key = uploads.keep("old.csv", b"old", now=0.0)
    assert uploads.find(key, now=uploads.TTL_SECONDS - 1) is not None
    assert uploads.find(key, now=2 * uploads.TTL_SECONDS) is None
    # not a key: refused without a lookup
    assert uploads.find("../etc") is None and not uploads.is_key("ABCDEF0123456789")
