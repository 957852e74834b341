"""The tally of a class's question (rkcore.figures.questions): the counts on the bars as given, titled and labelled,
user text shown literally, malformed counts refused."""
from __future__ import annotations

import pytest

from rkcore.figures.alt_text import figure_alt_text
from rkcore.figures.questions import tally_figure


def test_the_bars_are_the_counts_in_choice_order():
    fig = tally_figure(["uniform", "Rademacher", "same"], [3, 0, 5], "Which weights?")
    bar = fig.data[0]
    assert list(bar.x) == [3, 0, 5] and list(bar.text) == ["3", "0", "5"]
    assert list(bar.y) == ["1. uniform", "2. Rademacher", "3. same"]
    assert fig.layout.title.text == "Which weights? (8 answered)"
    assert fig.layout.xaxis.title.text == "students who chose it" and fig.layout.yaxis.title.text == "answer"
    assert "Which weights? (8 answered)" in figure_alt_text(fig)


def test_user_text_is_shown_literally_and_long_choices_are_cut_on_the_axis():
    fig = tally_figure(['<a href="x">click</a>', "b" * 80], [1, 1], "<b>bold?</b>")
    assert "<" not in fig.layout.title.text and "<a" not in fig.data[0].y[0]
    assert len(fig.data[0].y[1]) == len("2. ") + 40 and fig.data[0].customdata[1] == "b" * 80


@pytest.mark.parametrize("counts", [[1], [1, -1], [1, 0.5], [True, 1], [1, 2, 3]])
def test_malformed_counts_are_refused(counts):
    with pytest.raises(ValueError, match="one count \\(a whole number, 0 or more\\) per choice"):
        tally_figure(["a", "b"], counts)
