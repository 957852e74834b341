"""The shared class store (rkapp.classroom): every connection and process sees one class; only the lecturer's
token publishes; the version moves only on a change; idle classes expire; everything is bounded."""
from __future__ import annotations

import multiprocessing
import secrets

import pytest

from rkapp import classroom


@pytest.fixture(autouse=True)
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("RKCORE_STORE_DIR", str(tmp_path))
    monkeypatch.setattr(classroom, "VERSION_CACHE_S", 0.0)  # every read goes to the file
    classroom.clear()
    yield tmp_path
    classroom.clear()


def _token() -> str:
    return secrets.token_urlsafe(32)


def _read_in_child(folder, code, queue):
    import os

    os.environ["RKCORE_STORE_DIR"] = folder
    from rkapp import classroom as child_store

    queue.put(child_store.state(code))


def test_another_process_sees_the_published_state(store):
    token = _token()
    code = classroom.start_class(token)
    classroom.publish(code, token, "Gram_matrices", {"D": "512"}, {"id": "q1", "text": "Which?", "choices": ["a"]})
    queue = multiprocessing.get_context("spawn").Queue()
    child = multiprocessing.get_context("spawn").Process(target=_read_in_child, args=(str(store), code, queue))
    child.start()
    seen = queue.get(timeout=60)
    child.join(timeout=60)
    assert seen == {"page": "Gram_matrices", "settings": {"D": "512"},
                    "question": {"id": "q1", "text": "Which?", "choices": ["a"]}, "version": 2}


def test_two_connections_see_one_class(store):
    import sqlite3

    token = _token()
    code = classroom.start_class(token, page="Error_bounds")
    other = sqlite3.connect(classroom.class_store_path())
    assert other.execute("SELECT page, version FROM classes WHERE code = ?", (code,)).fetchone() == ("Error_bounds", 1)
    classroom.publish(code, token, "Timing", {})
    assert other.execute("SELECT page, version FROM classes WHERE code = ?", (code,)).fetchone() == ("Timing", 2)


def test_only_the_lecturer_token_publishes_or_ends():
    token = _token()
    code = classroom.start_class(token)
    for wrong in (_token(), "", token[:-1], None, token + "x"):
        assert classroom.publish(code, wrong, "Timing", {"D": "64"}) is None
        assert classroom.end_class(code, wrong) is False
    assert classroom.state(code)["page"] == "" and classroom.state(code)["version"] == 1
    assert classroom.end_class(code, token) is True
    assert classroom.state(code) is None and classroom.version(code) is None


def test_the_token_is_not_stored():
    token = _token()
    classroom.start_class(token)
    assert token.encode() not in classroom.class_store_path().read_bytes()


def test_version_moves_only_on_a_change():
    token = _token()
    code = classroom.start_class(token)
    assert classroom.publish(code, token, "Timing", {"D": "64"}) == 2
    assert classroom.publish(code, token, "Timing", {"D": "64"}) == 2
    assert classroom.publish(code, token, "Timing", {"D": "128"}) == 3
    assert classroom.publish(code, token, "Timing", {"D": "128"}, {"id": "q", "text": "?", "choices": []}) == 4
    assert classroom.publish(code, token, "Timing", {"D": "128"}, None) == 5
    assert classroom.version(code) == 5


def test_idle_classes_expire(monkeypatch):
    now = [1_000_000.0]
    monkeypatch.setattr(classroom, "_clock", lambda: now[0])
    token = _token()
    code = classroom.start_class(token)
    now[0] += classroom.IDLE_SECONDS - 1
    assert classroom.publish(code, token, "Timing", {}) == 2  # a change renews the idle clock
    now[0] += classroom.IDLE_SECONDS - 1
    assert classroom.version(code) == 2
    now[0] += 2
    assert classroom.version(code) is None and classroom.state(code) is None
    assert classroom.publish(code, token, "Timing", {"D": "64"}) is None
    assert classroom.live_classes() == 0


def test_bounds():
    token = _token()
    code = classroom.start_class(token)
    with pytest.raises(classroom.ClassError, match="too long"):
        classroom.publish(code, token, "Timing", {"itemsets": "0,1;" * classroom.MAX_SETTINGS_BYTES})
    with pytest.raises(classroom.ClassError, match="too long"):
        classroom.publish(code, token, "Timing", {}, {"text": "x" * classroom.MAX_QUESTION_BYTES})
    with pytest.raises(classroom.ClassError, match="names and texts"):
        classroom.publish(code, token, "Timing", {"D": 64})
    assert classroom.publish(code, token, "p" * 1000, {}) == 2
    assert len(classroom.state(code)["page"]) == classroom.MAX_PAGE_CHARS


def test_the_number_of_live_classes_is_bounded(monkeypatch):
    monkeypatch.setattr(classroom, "MAX_CLASSES", 3)
    codes = [classroom.start_class(_token()) for _ in range(3)]
    with pytest.raises(classroom.ClassError, match="3 classes already"):
        classroom.start_class(_token())
    assert len(set(codes)) == 3 and all(classroom.is_code(c) for c in codes)


def test_codes_and_typing():
    assert classroom.normal_code(" ab-cd 34 ") == "ABCD34"
    assert not classroom.is_code("ABCD3")
    assert not classroom.is_code("ABCD30")  # 0 is not in the alphabet (read as O)
    assert not classroom.is_code("' OR 1")
    assert classroom.state("' OR 1=1 --") is None and classroom.version("x" * 10_000) is None


def test_failures_are_counted_per_who_and_window(monkeypatch):
    now = [5_000_000.0]
    monkeypatch.setattr(classroom, "_clock", lambda: now[0])
    for _ in range(3):
        classroom.note_failure("key", "browser:a")
    classroom.note_failure("key", "browser:b")
    assert classroom.failures("key", "browser:a") == 3 and classroom.failures("join", "browser:a") == 0
    now[0] += classroom.ATTEMPT_WINDOW_S + 1
    assert classroom.failures("key", "browser:a") == 0
