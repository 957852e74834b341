"""A chart's text alternative says what the chart shows, in its own numbers (issue 39: every chart has a text
alternative a screen reader reads)."""
import numpy as np
import plotly.graph_objects as go
from hypothesis import given, settings, strategies as st

from rkcore.figures.alt_text import MAX_CHARS, MAX_SERIES, figure_alt_text

finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300)


@settings(max_examples=60, deadline=None)
@given(st.lists(finite, min_size=2, max_size=40), st.text(min_size=1, max_size=30))
def test_a_line_is_told_by_its_name_ends_and_range(ys, name):
    xs = list(range(1, len(ys) + 1))
    fig = go.Figure(go.Scatter(x=xs, y=ys, name=name), layout={"title": {"text": "Error vs D"},
                                                               "xaxis": {"title": {"text": "D"}}})
    text = figure_alt_text(fig)
    assert text.startswith("Chart: Error vs D.") and "x axis: D" in text
    assert f"{len(ys)} points" in text and f"from {ys[0]:.3g} at 1 to {ys[-1]:.3g} at {len(ys)}" in text
    if len(ys) > 2:
        assert f"values from {min(ys):.3g} to {max(ys):.3g}" in text
    assert len(text) <= MAX_CHARS


def test_a_heatmap_is_told_by_its_size_and_value_range():
    z = np.arange(12.0).reshape(3, 4) - 5
    text = figure_alt_text(go.Figure(go.Heatmap(z=z, name="Exact K")))
    assert "Exact K: a heatmap of 3 x 4 cells, values from -5 to 6" in text


def test_many_series_are_counted_and_hidden_ones_left_out():
    fig = go.Figure([go.Scatter(y=[1, 2], name=f"s{k}") for k in range(MAX_SERIES + 3)]
                    + [go.Scatter(y=[9, 9], name="hidden", visible="legendonly")])
    text = figure_alt_text(fig)
    assert "And 3 more series." in text and "hidden" not in text


def test_every_chart_of_a_page_has_its_text_alternative(run_page):
    at = run_page("pages/1_Gram_matrices.py", n=30, D=16)
    charts = [el for el in at.get("plotly_chart")]
    alts = [m.value for m in at.markdown if 'class="rk-alt-text"' in m.value]
    visible = [c for c in charts if '"meta":"rkapp-chart-preload"' not in c.proto.spec.replace(" ", "")]
    assert visible and len(alts) == len(visible), (len(alts), len(visible))
    assert "Chart: Gram matrices" in alts[0] and "heatmap" in alts[0]
