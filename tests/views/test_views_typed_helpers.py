"""Helpers rewritten for the type check (issue 40): their answers on small hand-built tables, and the refusals
that replaced calls mypy flagged (a free field's choices, a pair of page settings)."""
from __future__ import annotations

import pandas as pd
import pytest

from rkcore.views import distributions, settings, timing


def test_unstable_slopes_lists_the_pairs_not_known_stable(monkeypatch):
    mixed = pd.DataFrame({"map": ["rk", "scrk", "ts"], "along": ["d", "D", "d"], "repeats": [3, 1, 5],
                          "standard_error": [0.01, float("nan"), 0.2], "stable": [True, None, False]})
    monkeypatch.setattr(timing, "slope_errors", lambda times: mixed)
    assert timing.unstable_slopes(pd.DataFrame()) == [("scrk", "D"), ("ts", "d")]  # None: too few to tell


def test_unstable_slopes_reads_a_boolean_column_too(monkeypatch):
    known = pd.DataFrame({"map": ["rk", "scrk"], "along": ["D", "D"], "repeats": [3, 3],
                          "standard_error": [0.01, 0.2], "stable": [True, False]})
    assert known["stable"].dtype == bool  # numpy booleans: `is not True` must still see True
    monkeypatch.setattr(timing, "slope_errors", lambda times: known)
    assert timing.unstable_slopes(pd.DataFrame()) == [("scrk", "D")]


def test_lowest_text_names_the_winner_and_what_ties_with_it():
    lowest = pd.DataFrame({"D": [40, 80], "lowest": ["Rademacher", "Gaussian"],
                           "tied": [("Rademacher", "Gaussian"), ("Gaussian",)], "higher": [(), ("Rademacher",)]})
    assert distributions.lowest_text(lowest) == "D = 40: Rademacher (ties with Gaussian); D = 80: Gaussian"


def test_page_pairs_become_page_fields_with_their_default():
    scrk = settings.FIELDS["dv_scrk"]  # given to _page as the pair ("dv_scrk", True)
    assert (scrk.name, scrk.default, scrk.view, scrk.page) == ("dv_scrk", True, False, "Distributions and variance")


def test_choices_of_a_free_field_is_refused_in_words():
    assert settings.FIELDS["tm_m"].options is None  # bounds only
    with pytest.raises(ValueError, match="'tm_m' takes any value in its bounds") as caught:
        settings.choices("tm_m")
    assert "NoneType" not in str(caught.value)
    assert settings.choices("tm_rep") == (1, 3, 5, 9)
