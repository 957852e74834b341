"""A vertical axis title fits along its plot in presenter type at 1280x720 (issue 38, finding 4: the y-axis title
ran up into the figure title on Timing and Kernel trick). The plot's height is the figure's less its margins and
a legend below it; a character of the title's font is taken as 0.6 of its size (measured on the screenshots)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rkcore.figures.style import enlarged

PRESENTER_STEP = 4
CHAR_WIDTH = 0.6


def _legend_rows(fig) -> int:
    return sum(1 for t in fig.data if t.showlegend is not False and t.name)


def y_titles_fit(fig) -> list[str]:
    """The y titles longer than their axis (a legend below takes one row per entry when vertical)."""
    layout = fig.layout
    font = float(layout.font.size or 14)
    rows = _legend_rows(fig) if layout.legend.orientation != "h" else 1
    below = (rows * 1.4 * font + 20) if layout.legend.y is not None and layout.legend.y < 0 else 0
    top = layout.margin.t if layout.margin.t is not None else 100
    bottom = layout.margin.b if layout.margin.b is not None else 80
    along = (layout.height or 450) - top - bottom - below
    bad = []
    for name in [k for k in layout if k.startswith("yaxis")]:
        text = layout[name].title.text or ""
        size = float(layout[name].title.font.size or font)
        if max((len(line) for line in text.split("<br>")), default=0) * CHAR_WIDTH * size > along:
            bad.append(f"{name}: {text!r} ({along:.0f} px)")
    return bad


def kernel_trick_frame() -> pd.DataFrame:
    rows = [(method, d, 100, "polynomial", r, 1e-4 * d, d * d if method == "explicit" else d)
            for method in ("explicit", "kernel") for d in (2, 4, 8, 16, 32, 64) for r in range(3)]
    return pd.DataFrame(rows, columns=["method", "d", "n", "kind", "repeat", "seconds", "n_features"])


def timing_frame() -> pd.DataFrame:
    rows = [(m, d, 1024, 100, r, "transform", 1e-4 * d) for m in ("rk", "scrk") for d in (64, 128, 256, 512)
            for r in range(3)]
    return pd.DataFrame(rows, columns=["map", "d", "D", "n", "repeat", "phase", "seconds"])


def figures():
    from rkcore.figures.foundations import kernel_trick_figure
    from rkcore.figures.timing import timing_figure

    yield "kernel trick", kernel_trick_figure(kernel_trick_frame())
    yield "timing", timing_figure(timing_frame(), "d")


@pytest.mark.parametrize("name", ["kernel trick", "timing"])
def test_y_titles_fit_along_the_plot_in_presenter_type(name):
    fig = dict(figures())[name]
    assert not y_titles_fit(enlarged(fig, PRESENTER_STEP)), name
    assert np.isfinite(fig.layout.height)
