"""The settings a lesson step keeps and a class follows: text as the URL writes it, checked by the table."""
from hypothesis import given, settings, strategies as st

from rkapp.state import NOT_SHARED, read_view_settings
from rkcore.views.settings import TABLE


def test_every_default_round_trips_through_its_text():
    texts = {f.name: f.dump(f.default) for f in TABLE if f.name not in NOT_SHARED}
    values, problems = read_view_settings(texts)
    assert problems == []
    assert values == {f.name: f.default for f in TABLE if f.name not in NOT_SHARED}


def test_refused_entries_are_named_and_left_out():
    values, problems = read_view_settings({"D": "512", "n": "1e99", "bogus": "1", "presenter": "true",
                                           "upload": "abc", "seed": 3, "kernel": "<b>no</b>"})
    assert values == {"D": 512}
    assert len(problems) == 6
    assert any("'bogus'" in p for p in problems) and any("<b>no</b>" in p for p in problems)


def test_not_a_table():
    assert read_view_settings(["D", "512"]) == ({}, ["The settings must be a table of names and values."])


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=20), st.one_of(st.text(max_size=30), st.integers(), st.none()), max_size=8))
def test_hostile_tables_never_raise(texts):
    values, problems = read_view_settings(texts)
    assert len(values) + len(problems) == len(texts)
