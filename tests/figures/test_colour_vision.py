"""Colours for every student (issue 39): the palette stays distinguishable under the common colour-vision
deficiencies (a simulation), and no chart tells two series apart by colour alone (line style or marker)."""
import itertools
import json

import numpy as np
import plotly.graph_objects as go
import pytest

from rkcore.figures.distinguish import SYMBOLS, alike_series, without_colour_alone
from rkcore.figures.style import PALETTE
from tests.conftest import page_files, plotly_figures

# Machado, Oliveira & Fernandes (2009), severity 1.0, applied to linear RGB.
CVD = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}


def _linear(hex_color: str) -> np.ndarray:
    c = np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)]) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb: np.ndarray) -> np.ndarray:
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear_rgb
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


#: CIE76 distance below which two colours read as one on a projector (a just-noticeable difference is ~2.3;
#: 10 leaves room for a washed-out projector).
MIN_DELTA_E = 10.0


@pytest.mark.parametrize("deficiency", sorted(CVD))
def test_the_first_colours_of_the_palette_stay_apart_under_colour_vision_deficiencies(deficiency):
    """The first six colours (what a chart of up to six series uses) stay apart when simulated; beyond them
    and where two come close, markers tell the series apart (test below)."""
    colours = PALETTE[:6]
    seen = {c: _lab(np.clip(CVD[deficiency] @ _linear(c), 0, 1)) for c in colours}
    close = [(a, b, round(float(np.linalg.norm(seen[a] - seen[b])), 1)) for a, b in itertools.combinations(colours, 2)
             if np.linalg.norm(seen[a] - seen[b]) < MIN_DELTA_E]
    assert not close, close


def test_series_that_look_alike_get_markers_of_their_own():
    fig = go.Figure([go.Scatter(x=list(range(40)), y=np.arange(40.0) * k, name=f"map {k}", mode="lines")
                     for k in range(len(SYMBOLS))])
    assert len(alike_series(fig)) == len(SYMBOLS) * (len(SYMBOLS) - 1) // 2
    fixed = without_colour_alone(fig)
    assert alike_series(fixed) == [] and alike_series(fig), "the input figure is left as it was"
    assert all(t.marker.maxdisplayed in (None, 12) for t in fixed.data)


def test_a_series_drawn_in_two_panels_keeps_one_look():
    fig = go.Figure([go.Scatter(y=[1, 2, 3] * 10, name="RK", legendgroup="rk", mode="lines"),
                     go.Scatter(y=[1, 2, 3] * 10, name="RK", legendgroup="rk", mode="lines", showlegend=False),
                     go.Scatter(y=[3, 2, 1] * 10, name="SCRK", legendgroup="scrk", mode="lines")])
    fixed = without_colour_alone(fig)
    assert fixed.data[0].marker.symbol == fixed.data[1].marker.symbol or fixed.data[1].showlegend is False
    assert alike_series(fixed) == []


PAGES = [p for p in page_files() if p.name != "app.py"]


@pytest.mark.slow  # every page once (~25 s): CI's long job
@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_no_chart_of_a_page_tells_series_apart_by_colour_alone(run_page, path):
    at = run_page(path.relative_to(path.parents[1]), timeout=180)
    assert not at.exception
    for spec in plotly_figures(at):
        fig = go.Figure(spec, _validate=False)
        assert alike_series(fig) == [], (path.name, fig.layout.title.text, alike_series(fig))


def _studies_figures() -> list[go.Figure]:
    """Charts of the study pages with many alike series (error bounds, variance by distribution)."""
    from rkcore.figures import bounds as fb
    from rkcore.theory.bounds import bounds_table
    from rkcore.theory import measured_tails as mt
    from tests.figures.test_figures_studies import fake_study

    measured = mt.measured_tails(fake_study(D_list=(16, 64), eps=(0.001, 0.01, 0.1, 0.5)))
    return [fb.bounds_vs_eps_figure(measured, bounds_table(16, np.logspace(-3, 0, 30), 1.0, d=10, degree=2), D=16,
                                    R=1.0),
            fb.bounds_vs_D_figure(measured, bounds_table(np.logspace(0, 6, 50), 0.1, 1.0, d=10), eps=0.1, R=1.0),
            go.Figure([go.Scatter(x=np.arange(40), y=np.linspace(0, 1, 40) * k, name=f"map {k}", mode="lines")
                       for k in range(len(SYMBOLS))])]


@pytest.mark.parametrize("index", range(3))
def test_restyling_in_place_sends_the_same_chart_as_the_copy(index):
    """The app's chart() restyles its own figure in place (a copy rebuilt every trace): the JSON sent to the
    browser is the copy's, and the copy leaves its input as it was. The values are copied, never computed,
    so the JSON texts are equal."""
    fig = _studies_figures()[index]
    before = fig.to_json()
    copied = without_colour_alone(fig)
    assert fig.to_json() == before, "the copy leaves its input as it was"
    in_place = without_colour_alone(fig, copy=False)
    assert in_place is fig
    assert json.loads(in_place.to_json()) == json.loads(copied.to_json())
    assert alike_series(in_place) == [] and (index == 1 or copied is not fig)
