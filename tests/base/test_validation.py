"""rkcore.base.validation: one rule for integer arguments, and byte sizes read the way they are printed."""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, strategies as st

from rkcore.base.limits import format_bytes, memory_budget
from rkcore.base.validation import check_int, check_int_list, entry_of, parse_byte_size


@pytest.mark.parametrize("text,expected", [
    ("2GiB", 2 * 2**30), ("2 GiB", 2 * 2**30), ("2gb", 2 * 2**30), ("1.5G", 3 * 2**29), ("512M", 2**29),
    ("500MB", 500 * 2**20), ("1,024 KB", 2**20), ("1_000", 1000), ("12345", 12345), ("12345 B", 12345),
    ("1e9", 10**9), ("2.5e3", 2500), ("1 TiB", 2**40), ("0.5 p", 2**49), (" 7 k ", 7168),
])
def test_byte_sizes(text, expected):
    assert parse_byte_size(text, "size") == expected


@pytest.mark.parametrize("text", ["lots", "", "G", "-1", "2 GiBs", "2 XB", "1..5G", "2 G B", "1e400", None, 12])
def test_bad_byte_sizes_are_refused_with_the_name(text):
    with pytest.raises(ValueError, match=r"^budget (must be a size such as 2GiB|is too large)"):
        parse_byte_size(text, "budget")


@given(st.integers(min_value=0, max_value=2**60))
def test_printed_sizes_read_back_within_their_rounding(n):
    """format_bytes prints one decimal of its unit; reading the text back is off by at most half of it."""
    text = format_bytes(n)
    unit = 1024 ** ["B", "KB", "MB", "GB", "TB", "PB"].index(text.split()[-1])
    assert abs(parse_byte_size(text, "size") - n) <= (0.05 * unit if unit > 1 else 0) + 1


def test_memory_budget_takes_human_sizes(monkeypatch):
    monkeypatch.setenv("RKCORE_MEMORY_BUDGET", "2GiB")
    assert memory_budget() == 2 * 2**30
    monkeypatch.setenv("RKCORE_MEMORY_BUDGET", "2 gigabytes")
    with pytest.raises(ValueError, match="RKCORE_MEMORY_BUDGET must be a size such as 2GiB"):
        memory_budget()


def test_check_int_rejects_bools_and_floats_and_names_the_argument():
    assert check_int(np.int64(3), "n") == 3 and type(check_int(np.int64(3), "n")) is int
    for bad in (True, 2.0, 0, "3"):
        with pytest.raises(ValueError, match=r"^n must be an integer >= 1, got"):
            check_int(bad, "n")
    with pytest.raises(ValueError, match="between 1 and 4"):
        check_int(5, "n", 1, 4)
    assert check_int_list(3, "D") == [3] and check_int_list((1, np.int32(2)), "D") == [1, 2]
    with pytest.raises(ValueError, match="D is empty"):
        check_int_list([], "D")


def test_entry_of_returns_the_entry_and_refuses_any_other_key_by_name():
    table = {"gaussian": 1, "sparse": 2}
    assert entry_of(table, "sparse", "projection kind") == 2
    # an unknown key, and an unhashable one (a TypeError inside the lookup), read the same to the user
    for key in ("nope", ["gaussian"], None):
        with pytest.raises(ValueError, match=rf"^Unknown projection kind {re.escape(repr(key))}; "
                                             r"allowed: 'gaussian', 'sparse'\.$"):
            entry_of(table, key, "projection kind")
