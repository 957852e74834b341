"""Real browsers, real server: an upload is found again by a reload of the uploader's browser and by no
other browser, unless shared (issue 26, item 1). AppTest has no cookies, so this is the test that the
owner check (the app's own HttpOnly owner cookie, rkapp.identity, set by serve.py's middleware and read
with st.context.cookies) works as deployed: two Playwright browser contexts are two browsers with their
own cookies."""
from __future__ import annotations

import re

import pytest

from tests.browser.test_browser import (  # noqa: F401  (server: a fixture)
    CHROMIUM, CHROMIUM_ARGS, body_text, server, sync_playwright, upload_data_file, wait_for_text, wait_until_idle,
)

pytestmark = pytest.mark.browser
SECRET = "secret_grades.csv"
CSV = b"grade_of_alice,b,c,target\n" + b"".join(f"{i % 7},{(3 * i) % 5},{i % 3},{i % 2}\n".encode() for i in range(40))


def _remasked(cookie: str) -> str:
    """Streamlit's XSRF cookie ``2|mask|masked token|time`` with the same token under another mask."""
    version, mask, masked, when = cookie.split("|")
    token = bytes(b ^ bytes.fromhex(mask)[k % 4] for k, b in enumerate(bytes.fromhex(masked)))
    new_mask = bytes((b + 1) % 256 for b in bytes.fromhex(mask))
    return "|".join([version, new_mask.hex(), bytes(b ^ new_mask[k % 4] for k, b in enumerate(token)).hex(), when])


def test_a_reload_finds_the_upload_and_another_browser_does_not(server, tmp_path):  # noqa: F811 (the fixture)
    path = tmp_path / SECRET
    path.write_bytes(CSV)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        alice_context = browser.new_context()
        alice = alice_context.new_page()
        alice.goto(f"{server}/Gram_matrices?dataset=upload&n=30&D=32")
        wait_until_idle(alice)
        upload_data_file(alice, path)
        wait_until_idle(alice)
        link = alice.url
        assert re.search(r"upload=[A-Za-z0-9_-]{22}", link), link

        alice.reload()  # F5: a new Streamlit session of the same browser
        wait_until_idle(alice)
        wait_for_text(alice, "found again on the server")
        assert SECRET in body_text(alice)

        (owner,) = [c for c in alice_context.cookies() if c["name"] == "rkcore_owner"]
        assert owner["httpOnly"] and owner["sameSite"] == "Strict", owner
        assert "rkcore_owner" not in alice.evaluate("document.cookie")  # no page script reads it (issue 37, 4)

        bob_context = browser.new_context()  # another browser: its own cookies
        xsrf = [dict(c, value=_remasked(c["value"])) for c in alice_context.cookies() if c["name"] == "_streamlit_xsrf"]
        bob_context.add_cookies(xsrf)  # Alice's XSRF token, stolen and re-masked: no owner any more
        bob = bob_context.new_page()
        bob.goto(link)
        wait_until_idle(bob)
        wait_for_text(bob, "cannot open")
        assert SECRET not in body_text(bob) and "grade_of_alice" not in bob.content()

        alice.get_by_role("checkbox", name="Share this file with the link").check(force=True)
        wait_for_text(alice, "anyone with this page's link can use")
        bob.goto(link)
        wait_until_idle(bob)
        wait_for_text(bob, "was shared with this link")
        assert SECRET in body_text(bob)
        browser.close()


PUT_MADE_UP_IDS = """async ([base, count, size]) => {
    const xsrf = document.cookie.split('; ').find(c => c.startsWith('_streamlit_xsrf='))?.split('=')[1] ?? '';
    const statuses = [];
    for (let k = 0; k < count; k++) {
        const form = new FormData();
        form.append('file', new Blob([new Uint8Array(size)]), 'made_up.csv');
        const r = await fetch(`${base}/made-up-id-${k}`, {method: 'PUT', body: form, headers: {'X-Xsrftoken': xsrf},
                                                            credentials: 'same-origin'});
        statuses.push(r.status);
    }
    return statuses;
}"""


def test_uploads_to_made_up_file_ids_are_bounded(server, tmp_path):  # noqa: F811 (the fixture)
    """Issue 37, finding 1: Streamlit answered 204 to every upload to a file id it never issued, holding each
    in memory; through serve.py's middleware a page holds at most MAX_SESSION_FILES uploads (413 after)."""
    from rkapp.upload_limits import MAX_SESSION_FILES

    path = tmp_path / "small.csv"
    path.write_bytes(CSV)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_context().new_page()
        urls = []
        page.on("request", lambda r: urls.append(r.url) if "/_stcore/upload_file/" in r.url and r.method == "PUT" else None)
        page.goto(f"{server}/Gram_matrices?dataset=upload&n=30&D=32")
        wait_until_idle(page)
        upload_data_file(page, path)
        assert urls, "the page's own upload went through the middleware"
        base = urls[0].rsplit("/", 1)[0]  # .../_stcore/upload_file/<this session>
        statuses = page.evaluate(PUT_MADE_UP_IDS, [base, MAX_SESSION_FILES + 3, 2**20])
        browser.close()
    assert statuses[:MAX_SESSION_FILES - 1] == [204] * (MAX_SESSION_FILES - 1), statuses  # the page holds one already
    assert statuses[-3:] == [413] * 3, statuses
