"""Real browsers, real server: an upload is found again by a reload of the uploader's browser and by no
other browser, unless shared (issue 26, item 1). AppTest has no cookies, so this is the test that the
owner check (the app's own HttpOnly owner cookie, rkapp.identity, set by serve.py's middleware and read
with st.context.cookies) works as deployed: two Playwright browser contexts are two browsers with their
own cookies."""
from __future__ import annotations

import re

import pytest

from tests.browser.test_browser import (  # noqa: F401  (server: a fixture)
    CHROMIUM, CHROMIUM_ARGS, body_text, server, sync_playwright, wait_until_idle,
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


def _wait_for(page, text: str, timeout_ms: int = 90_000) -> None:
    page.wait_for_function("t => document.body.innerText.includes(t)", arg=text, timeout=timeout_ms)


def test_a_reload_finds_the_upload_and_another_browser_does_not(server, tmp_path):  # noqa: F811 (the fixture)
    path = tmp_path / SECRET
    path.write_bytes(CSV)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        alice_context = browser.new_context()
        alice = alice_context.new_page()
        alice.goto(f"{server}/Gram_matrices?dataset=upload&n=30&D=32")
        wait_until_idle(alice)
        alice.set_input_files('[data-testid="stFileUploaderDropzoneInput"]', str(path))
        _wait_for(alice, "Private: the page's link does not give")
        wait_until_idle(alice)
        link = alice.url
        assert re.search(r"upload=[A-Za-z0-9_-]{22}", link), link

        alice.reload()  # F5: a new Streamlit session of the same browser
        wait_until_idle(alice)
        _wait_for(alice, "found again on the server")
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
        _wait_for(bob, "cannot open")
        assert SECRET not in body_text(bob) and "grade_of_alice" not in bob.content()

        alice.get_by_role("checkbox", name="Share this file with the link").check(force=True)
        _wait_for(alice, "anyone with this page's link can use")
        bob.goto(link)
        wait_until_idle(bob)
        _wait_for(bob, "was shared with this link")
        assert SECRET in body_text(bob)
        browser.close()
