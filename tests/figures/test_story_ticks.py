"""The story's heatmap ticks never run into each other (issue 38, finding 4: "digit 4" and "digit 5" collided
at 230 px in presenter mode): one short label per block, at least MIN_TICK_SHARE of the rows apart."""
from __future__ import annotations

import numpy as np
import pytest

from rkcore.figures.story import MIN_TICK_SHARE, matrix_figure


@pytest.mark.parametrize("seed", range(40))
def test_tick_labels_are_short_and_far_enough_apart(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 40, size=rng.integers(2, 12))  # blocks as small as one row
    labels = np.repeat(np.arange(len(sizes)), sizes)
    fig = matrix_figure(np.eye(len(labels)), labels, "t")
    values, texts = np.asarray(fig.layout.yaxis.tickvals, dtype=float), list(fig.layout.yaxis.ticktext)
    assert len(values) >= 1 and all(len(t) <= 3 for t in texts)
    assert np.all(np.diff(values) >= MIN_TICK_SHARE * len(labels) - 1e-9)
    assert set(texts) <= {str(v) for v in labels}


def test_story_digits_keep_most_labels():
    from rkcore.teaching.story import story_data

    _, y = story_data()
    fig = matrix_figure(np.eye(len(y)), y, "t")
    assert len(fig.layout.yaxis.ticktext) >= 8  # of 10 digits: at most the smallest blocks lose their label
