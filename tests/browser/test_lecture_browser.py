"""Follow the presenter (issue 39) in real browsers: a lecturer and two students, three browser contexts
(their own cookies), one app server (and, with nginx, ``rkcore-app --processes 2``).

A student follows the lecturer's D change within 1 s of its publish; a student who changes a setting is
"exploring on their own" and "Back to the lecture" brings the class's state back; a student's change never
reaches the class; the pages with the class panel showing pass the axe audit (0 serious or critical).
"""
from __future__ import annotations

import os
import secrets
import time

import pytest

from tests.browser.test_accessibility import audit
from tests.browser.test_browser import CHROMIUM, CHROMIUM_ARGS, assert_no_exception, sync_playwright, wait_until_idle

pytestmark = pytest.mark.browser
KEY = secrets.token_urlsafe(16)
FOLLOW_SECONDS = 1.0
LOADED_SECONDS = 5.0


@pytest.fixture(scope="module", params=[1, 2], ids=["one process", "two processes behind nginx"])
def class_server(request, tmp_path_factory):
    """The app with a lecturer key: one Streamlit process, or ``rkcore-app --processes 2`` behind nginx (the
    three browsers' route cookies are random: they may land on either process; the class store is shared)."""
    if not CHROMIUM.exists() or sync_playwright is None:
        pytest.skip("browser test needs Debian's Chromium at /usr/bin/chromium and playwright")
    from benchmarks.app.streamlit_server import StreamlitServer
    from tests.browser.test_proxy import _nginx

    if request.param > 1 and _nginx() is None:
        pytest.skip("nginx is not installed (apt-get install nginx-light)")

    store = tmp_path_factory.mktemp("class-store")
    previous = os.environ.get("RKCORE_STORE_DIR")
    os.environ["RKCORE_STORE_DIR"] = str(store)  # this process reads the class store the server writes
    try:
        with StreamlitServer(env={"RKCORE_STORE_DIR": str(store), "RKCORE_LECTURER_KEY": KEY},
                             health_timeout=180, processes=request.param) as running:
            yield running.url
    finally:
        if previous is None:
            os.environ.pop("RKCORE_STORE_DIR", None)
        else:
            os.environ["RKCORE_STORE_DIR"] = previous


def _d_field(page):
    return page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"]').filter(
        has_text="D (random features)").locator("input")


def _set_number(page, label: str, value: int) -> None:
    field = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"]').filter(has_text=label).locator("input")
    field.fill(str(value))
    field.press("Enter")


def _class_box(page):
    box = page.locator('[data-testid="stSidebar"] .st-key-rk-class')
    if box.locator("details").get_attribute("open") is None:
        box.locator("summary").click()
    return box


def _wait_d(page, value: int, timeout_ms: float) -> None:
    page.wait_for_function(
        """v => [...document.querySelectorAll('[data-testid="stSidebar"] [data-testid="stNumberInput"]')]
             .some(e => e.innerText.includes('D (random features)') && e.querySelector('input').value === v)""",
        arg=str(value), timeout=timeout_ms)


def _published(code: str, d: int, timeout: float = 60.0) -> float:
    """When (perf_counter) the class store first showed D = d."""
    from rkapp import classroom

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = classroom.state(code)
        if state and state["settings"].get("D") == str(d):
            return time.perf_counter()
        time.sleep(0.01)
    raise AssertionError(f"the lecturer's D = {d} never reached the class store")


def test_students_follow_branch_off_come_back_and_cannot_drive(class_server):
    from rkapp import classroom

    url = class_server
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        lecturer, alice, bob = (browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
                                for _ in range(3))
        lecturer.goto(f"{url}/Gram_matrices?n=60", wait_until="domcontentloaded")
        wait_until_idle(lecturer)
        box = _class_box(lecturer)
        box.locator('input[type="password"]').fill(KEY)
        box.get_by_role("button", name="Start a class").click()
        lecturer.locator(".rk-class-code").wait_for(timeout=30_000)
        code = lecturer.locator(".rk-class-code").inner_text().strip()
        assert classroom.is_code(code) and KEY not in lecturer.inner_text("body")
        assert f"?class={code}" in lecturer.inner_text("body")
        assert not (violations := audit(lecturer, "lecturer with a class")), violations

        for student in (alice, bob):
            student.goto(f"{url}/?class={code}", wait_until="domcontentloaded")
            student.get_by_text("Following the lecture").first.wait_for(timeout=90_000)
            student.locator("h1").filter(has_text="Gram matrices").wait_for(timeout=90_000)
            wait_until_idle(student)

        seen = []
        for d in (192, 384, 320):  # the lecturer's changes
            wait_until_idle(lecturer)
            _set_number(lecturer, "D (random features)", d)
            published = _published(code, d)
            for student in (alice, bob):
                _wait_d(student, d, 30_000)
            seen.append(time.perf_counter() - published)
            for student in (alice, bob):
                wait_until_idle(student)
        print(f"both students showed the lecturer's D after {', '.join(f'{s:.2f}' for s in seen)} s")
        # the fastest of three within 1 s: a follower that polled too slowly, or applied the change only on its
        # own next click, never makes it. On a machine loaded beyond its cores (the browsers and the server
        # share them with other work) every step waits for a core: then only "within LOADED_SECONDS" is asserted
        loaded = os.getloadavg()[0] > (os.cpu_count() or 1)
        assert min(seen) <= (LOADED_SECONDS if loaded else FOLLOW_SECONDS), (seen, os.getloadavg())

        wait_until_idle(alice)
        _set_number(alice, "Seed", 7)  # Alice explores
        alice.get_by_text("You are exploring on your own").wait_for(timeout=30_000)
        assert not (violations := audit(alice, "student exploring")), violations
        _set_number(lecturer, "D (random features)", 448)
        _published(code, 448)
        _wait_d(bob, 448, 30_000)
        alice.wait_for_timeout(1500)
        assert _d_field(alice).input_value() == "320"  # branched: not moved
        alice.get_by_role("button", name="Back to the lecture").click()
        _wait_d(alice, 448, 30_000)
        alice.get_by_text("Following the lecture").first.wait_for(timeout=30_000)

        wait_until_idle(bob)
        _set_number(bob, "D (random features)", 576)  # a student cannot drive the class
        bob.get_by_text("You are exploring on your own").wait_for(timeout=30_000)
        alice.wait_for_timeout(1500)
        assert classroom.state(code)["settings"]["D"] == "448"
        assert _d_field(alice).input_value() == "448" and _d_field(lecturer).input_value() == "448"
        assert "Lecturer key" not in bob.inner_text("body")  # a follower has no lecturer control
        for page, name in ((lecturer, "lecturer"), (alice, "alice"), (bob, "bob")):
            assert_no_exception(page, name)
        browser.close()
