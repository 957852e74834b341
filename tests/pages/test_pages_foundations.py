"""App tests of the foundations pages (kernel trick, RFF, random projections, compositional kernels):
default view and a few widget changes run without exceptions and draw the expected plotly traces;
bad input is answered with st.error in place."""
from __future__ import annotations

import pytest

from tests.conftest import error_texts, plotly_figures

KT = "pages/7_Kernel_trick.py"
RFF = "pages/8_Random_Fourier_features.py"
RP = "pages/9_Random_projections.py"
CK = "pages/10_Compositional_kernels.py"
SMALL = {"n": 40}


def assert_clean(at):
    assert not at.exception, [e.message for e in at.exception]
    assert not error_texts(at), error_texts(at)


def traces(at) -> list[tuple[str, list[str]]]:
    return [(fig["layout"]["title"]["text"], [t["type"] for t in fig["data"]]) for fig in plotly_figures(at)]


def axis_types(fig: dict) -> tuple[str | None, str | None]:
    return fig["layout"].get("xaxis", {}).get("type"), fig["layout"].get("yaxis", {}).get("type")


# ---------------------------------------------------------------------------- kernel trick
def test_kernel_trick_default(run_page):
    at = run_page(KT, kt_n=30, kt_dmax=16)
    assert_clean(at)
    figs = plotly_figures(at)
    assert len(figs) == 2
    assert all(t == "scatter" for t in (tr["type"] for tr in figs[0]["data"]))
    assert axis_types(figs[0]) == ("log", "log") and axis_types(figs[1]) == ("log", "log")
    names = {tr["name"] for tr in figs[0]["data"]}
    assert {"time: explicit features", "time: kernel trick", "explicit feature count"} <= names
    assert at.latex, "the page shows its formulas"


def test_kernel_trick_all_subsets(run_page):
    at = run_page(KT, kt_n=20)
    at.selectbox(key="kt_kind").set_value("all_subsets").run()
    at.select_slider(key="kt_dmax").set_value(8).run()
    assert_clean(at)
    assert "all_subsets" in plotly_figures(at)[0]["layout"]["title"]["text"]


# ---------------------------------------------------------------------------- RFF
def test_rff_default_and_changes(run_page):
    at = run_page(RFF, rff_Dmax=256, rff_trials=3, **SMALL)
    assert_clean(at)
    (title, types), = traces(at)
    assert types == ["scatter", "scatter", "scatter"] and "Random Fourier" in title
    fig = plotly_figures(at)[0]
    assert axis_types(fig) == ("log", "log")
    # ticks at the D values used and labelled steps on y: no 2, 3, 4 ... minor-tick clutter
    assert fig["layout"]["xaxis"]["tickvals"] == [16, 32, 64, 128, 256]
    assert len(fig["layout"]["yaxis"]["ticktext"]) >= 2
    at.radio(key="rff_bw").set_value("manual").run()
    at.number_input(key="rff_gamma").set_value(5.0).run()
    at.radio(key="rff_metric").set_value("max_abs_error").run()
    assert_clean(at)
    assert "max" in plotly_figures(at)[0]["layout"]["yaxis"]["title"]["text"]


# ---------------------------------------------------------------------------- random projections
def test_projections_default_and_changes(run_page):
    at = run_page(RP, rp_mmax=128, rp_trials=3, **SMALL)
    assert_clean(at)
    (t1, types1), (t2, types2) = traces(at)
    assert types1.count("scatter") == 8  # 2 kinds x (band + median) + theorem band (2) + chi2 band (2)
    assert types2 == ["bar", "bar", "scatter"]  # one bar per kind + the delta line
    at.radio(key="rp_vec").set_value("raw").run()
    at.multiselect(key="rp_kinds").set_value(["sparse"]).run()
    assert_clean(at)
    assert traces(at)[1][1] == ["bar", "scatter"]


def test_projections_bad_input_is_an_error_in_place(run_page):
    at = run_page(RP, rp_mmax=64, rp_trials=2, **SMALL)
    at.multiselect(key="rp_kinds").set_value([]).run()
    assert not at.exception
    assert any("at least one projection" in e for e in error_texts(at))
    at = run_page(RP, rp_delta="2.0", rp_mmax=64, rp_trials=2, **SMALL)  # out of range in the URL
    assert not at.exception
    assert any("δ" in e for e in error_texts(at))


# ---------------------------------------------------------------------------- compositional kernels
def test_compositional_default(run_page):
    at = run_page(CK, ck_Dmax=64, ck_trials=2, ck_Dgram=32, **SMALL)
    assert_clean(at)
    kinds = traces(at)  # the error curve first (the main chart, which the note describes), then the skeleton
    assert kinds[0][1].count("scatter") == 5  # 2 modes x (band + median) + guide
    assert kinds[1][1] == ["scatter"] * 3  # skeleton: edges, input nodes, activation nodes
    assert kinds[2][1] == ["heatmap", "heatmap"]
    assert axis_types(plotly_figures(at)[0]) == ("log", "log")
    assert plotly_figures(at)[0]["layout"]["xaxis"]["tickvals"] == [16, 32, 64]


@pytest.mark.parametrize("preset", ["deep", "gaussian", "mixed"])
def test_compositional_presets(run_page, preset):
    at = run_page(CK, ck_Dmax=64, ck_trials=2, ck_Dgram=16, **SMALL)
    at.selectbox(key="ck_preset").set_value(preset).run()
    assert_clean(at)
    assert preset in plotly_figures(at)[1]["layout"]["title"]["text"]  # the skeleton's


def test_compositional_modes(run_page):
    at = run_page(CK, ck_Dmax=64, ck_trials=2, ck_Dgram=16, **SMALL)
    at.multiselect(key="ck_modes").set_value(["none", "unbiased", "counts"]).run()
    assert_clean(at)
    assert traces(at)[0][1].count("scatter") == 7
    at.multiselect(key="ck_modes").set_value([]).run()
    assert not at.exception
    assert any("de-duplication mode" in e for e in error_texts(at))
