"""Seeded fuzz of the dashboard: every page of the navigation, random legal and illegal settings drawn
from the state table, garbage URL values and malformed uploads written here. No exception may reach a
page, and every run ends within its AppTest budget (the run protocol keeps long work behind buttons).

About two minutes on a quiet machine; part of the default suite, skipped with ``-m "not fuzz"``.
Set RK_FUZZ_RUNS to change the number of runs (default 48) and RK_FUZZ_SEED the seed.
"""
from __future__ import annotations

import math
import os
import random
import time

import pytest


from rkapp.navigation import PAGES, PAGES_DIR
from rkapp.state import FIELDS
from rkapp.widgets import UPLOAD_STATE_KEY
from tests.conftest import REPO, error_texts

pytestmark = pytest.mark.fuzz

SEED = int(os.environ.get("RK_FUZZ_SEED", "20261123"))
RUNS = int(os.environ.get("RK_FUZZ_RUNS", "33"))  # three per page
#: Seconds one run may take (a cold first run imports scikit-learn and plotly).
BUDGET = 90

LINK = "**Your session expired.** [Click here](https://attacker.invalid/login)"
GARBAGE_TEXT = [LINK, "![img](https://attacker.invalid/p.png)", "nan", "NaN", "inf", "-inf", "-1", "-999999999",
                "0", "1e308", "1e400", "9" * 400, "x" * 10_000, "", " ", ",,,", "; ; {}", "{}", "0-3 | 4-", "a|b",
                "\u202e\u0000\ufeff", "'; DROP TABLE x; --", "%00", "../../etc/passwd", "0,1; 2,3; 999999",
                "true", "1.5", "-0.0", "0x10"]
NUMBER_GARBAGE = [math.nan, math.inf, -math.inf, 1e308, -1e308, 10**30, -(10**30), -1, 0]


def upload_corpus() -> dict[str, bytes]:
    """Malformed (and a few odd but valid) uploads, by file name."""
    rng = random.Random(SEED)
    rows = "\n".join(f"{rng.random():.3f},{rng.random():.3f},{rng.random():.3f},{i % 2}" for i in range(40))
    return {
        "huge_index.svm": b"1 1:1 100000000:2\n",
        "huge_index_1e9.svm": b"1 1:1 1000000000:2\n",
        "nan_values.svm": b"1 1:nan 2:inf\n-1 1:0.5 2:0.25\n",
        "negative_index.svm": b"1 -5:1 2:2\n",
        "utf16.csv": ("a,b,c,target\n" + rows).encode("utf-16"),
        "latin1.csv": ("café,b,c,target\n" + rows).encode("latin-1"),
        "semicolon.csv": ("a;b;c;target\n" + rows.replace(",", ";")).encode(),
        "comma_decimal.csv": ("a;b;c;target\n" + rows.replace(",", ";").replace(".", ",")).encode(),
        "empty.csv": b"",
        "header_only.csv": b"a,b,target\n",
        "garbage.svm": bytes(rng.randrange(256) for _ in range(2000)),
        "garbage.csv": bytes(rng.randrange(256) for _ in range(2000)),
        "wide.csv": (",".join(f"c{i}" for i in range(100_000)) + "\n"
                     + "\n".join(",".join("1" for _ in range(100_000)) for _ in range(3)) + "\n").encode(),
        "none_column.csv": ("(none),b,c,target\n" + rows).encode(),
        "continuous_target.csv": ("a,b,c,target\n" + "\n".join(f"{i},{i * 2},{i % 3},{i * 0.37}" for i in range(40))).encode(),
        "missing.csv": b"a,b,target\n1,,0\n2,3,1\n",
        f"{LINK}.csv": ("a,b,c,target\n" + rows).encode(),
        "valid.csv": ("a,b,c,target\n" + rows).encode(),
    }


def page_paths() -> list:
    """app.py (the navigation, opening Home) and every page of the navigation's list."""
    return [REPO / "app.py", *(PAGES_DIR / e.file for e in PAGES)]


def _legal_value(rng: random.Random, f):
    if f.options is not None:
        opts = list(f.options())
        if f.multi:
            return tuple(rng.sample(opts, rng.randint(1, len(opts))))
        return rng.choice(opts)
    if isinstance(f.default, bool):
        return rng.choice([True, False])
    if isinstance(f.default, int) and f.min_value is not None:
        # mostly small: large legal values are covered by the run protocol's estimate (button or refusal)
        hi = min(f.max_value, f.min_value + rng.choice([10, 100, 1000, 10**6]))
        return rng.randint(f.min_value, hi)
    if isinstance(f.default, float) and f.min_value is not None:
        return rng.uniform(f.min_value, min(f.max_value, 10.0))
    return f.default


def random_query(rng: random.Random, page_title: str) -> dict[str, str]:
    """A URL: some fields of the table (shared ones and this page's), legal or garbage, under a name or alias."""
    fields = [f for f in FIELDS.values() if f.view or f.page == page_title]
    query = {"n": str(rng.choice([10, 30, 60]))}  # small data; larger legal n comes from the table
    for f in rng.sample(fields, rng.randint(1, min(8, len(fields)))):
        key = rng.choice([f.name, *f.aliases])
        if rng.random() < 0.5:
            query[key] = f.dump(_legal_value(rng, f))
        else:
            query[key] = rng.choice(GARBAGE_TEXT)
    return query


def _enabled(widgets) -> list:
    return [w for w in widgets if not getattr(w.proto, "disabled", False)]


def _poke_widgets(rng: random.Random, at) -> int:
    """Set a few widgets to random legal or illegal values; returns how many were set."""
    changed = 0
    for widget in rng.sample(_enabled(at.number_input), min(2, len(_enabled(at.number_input)))):
        if rng.random() < 0.5:
            value = rng.choice(NUMBER_GARBAGE)
        else:
            lo = widget.min if widget.min is not None else 0
            hi = widget.max if widget.max is not None else lo + 100
            value = rng.uniform(lo, min(hi, lo + 100))
            value = int(value) if isinstance(widget.value, int) else value
        widget.set_value(value)
        changed += 1
    for widget in rng.sample(_enabled(at.text_input), min(1, len(_enabled(at.text_input)))):
        widget.set_value(rng.choice(GARBAGE_TEXT))
        changed += 1
    # selectboxes: their choices come from the table; illegal ones arrive through the URL above
    for widget in rng.sample(_enabled(at.checkbox), min(1, len(_enabled(at.checkbox)))):
        widget.set_value(not widget.value)
        changed += 1
    return changed


def _assert_clean(at, where: str) -> None:
    assert not at.exception, (where, [e.value for e in at.exception][:3])
    for text in error_texts(at):
        assert "Traceback" not in text, (where, text[:500])


def test_fuzz_every_page(run_page):
    rng = random.Random(SEED)
    uploads = upload_corpus()
    paths = page_paths()
    counts = {"runs": 0, "widget_reruns": 0, "uploads": 0, "errors_shown": 0, "exceptions": 0}
    slowest = (0.0, "")
    for i in range(RUNS):
        path = paths[i % len(paths)]  # every page equally often, in navigation order
        title = next((e.title for e in PAGES if e.file == path.name), "Home")
        query = random_query(rng, title)
        session = {}
        if rng.random() < 0.4:
            name = rng.choice(sorted(uploads))
            session[UPLOAD_STATE_KEY] = (name, uploads[name])
            query["dataset"] = "upload"
            counts["uploads"] += 1
        upload_name = session[UPLOAD_STATE_KEY][0][:60] if session else None
        where = f"run {i}: {path.name} {dict((k, v[:60]) for k, v in query.items())} upload={upload_name!r}"
        started = time.perf_counter()
        try:
            at = run_page(path, session=session, timeout=BUDGET, **query)
        except RuntimeError as exc:  # AppTest's timeout: the run protocol let a run exceed its budget
            pytest.fail(f"{where}: {exc}")
        counts["runs"] += 1
        _assert_clean(at, where)
        if _poke_widgets(rng, at):
            try:
                at.run(timeout=BUDGET)
            except RuntimeError as exc:
                pytest.fail(f"{where} after widget changes: {exc}")
            counts["widget_reruns"] += 1
            _assert_clean(at, where + " after widget changes")
        counts["errors_shown"] += len(at.error)
        elapsed = time.perf_counter() - started
        slowest = max(slowest, (elapsed, where))
    print(f"\nfuzz: seed {SEED}, {counts}, {len(uploads)} upload kinds"
          ", "
          f"slowest run {slowest[0]:.1f} s ({slowest[1][:200]})")
    assert counts["runs"] == RUNS and counts["exceptions"] == 0
