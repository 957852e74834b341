"""App tests: every page runs headless (AppTest) without exceptions, and the Gram page answers a
matrix of sidebar choices (kernels x distributions, maps, families, uploads, bad input) with its
figures or with an st.error -- never a traceback.

Pages are found by globbing pages/*.py, so pages added later are covered automatically.
"""
from __future__ import annotations

import pytest

from rkcore.maps.distributions import DISTRIBUTIONS
from rkcore.registry import ITEMSET_KERNELS, KERNELS, KernelSpec, maps_for
from tests.conftest import (
    estimate_texts,
    REPO, error_texts, page_files, plotly_figures, snippet_of, table_values, warning_texts,
)

GRAM = "pages/1_Gram_matrices.py"
ITEMSETS = "pages/2_Itemsets.py"
SMALL = {"n": 30, "D": 24}  # keep each run fast
UPLOAD_KEY = "_rk_upload"  # rkapp.UPLOAD_STATE_KEY (AppTest cannot drive a file uploader)


def assert_clean(at):
    assert not at.exception, [e.message for e in at.exception]


def trace_types(at) -> list[list[str]]:
    return [[t["type"] for t in fig["data"]] for fig in plotly_figures(at)]


def assert_gram_figures(at):
    """The Gram page drew its default view, one figure: the shared-scale heatmaps (the other views are
    drawn on demand: test_gram_views_one_chart_each)."""
    assert_clean(at)
    assert not error_texts(at), error_texts(at)
    assert trace_types(at) == [["heatmap", "heatmap"]]


def test_gram_views_one_chart_each(run_page):
    """Each view of the Gram page draws its one figure, titled with labelled axes; switching views (a
    fragment rerun) recomputes nothing and keeps the numbers."""
    at = run_page(GRAM, **SMALL)
    assert_gram_figures(at)
    metrics = [(m.label, m.value) for m in at.metric]
    expected = {"difference": [["heatmap"]], "entries": [["scattergl", "scatter"]], "pair": [["heatmap", "heatmap"]]}
    for view, types in expected.items():
        at.radio(key="gram_view").set_value(view).run()
        assert_clean(at)
        assert trace_types(at) == types, (view, trace_types(at))
        (fig,) = plotly_figures(at)
        assert fig["layout"]["title"]["text"], view
        assert fig["layout"]["xaxis"]["title"]["text"] and fig["layout"]["yaxis"]["title"]["text"], view
        assert [(m.label, m.value) for m in at.metric] == metrics


# ---------------------------------------------------------------------------- every page
@pytest.mark.parametrize("path", page_files(), ids=lambda p: p.name)
def test_page_default_view_runs(run_page, path):
    at = run_page(path.relative_to(REPO))
    assert_clean(at)
    assert not error_texts(at), error_texts(at)
    assert at.title, "every page has a title"
    if path.name == "app.py":
        assert len(at.button) >= 3, "the landing page offers one-click presets"
        assert at.get("page_link"), "the landing page links to the pages"
    else:
        run = [b for b in at.button if b.key and b.key.endswith("_run") and not plotly_figures(at)]
        if run:  # the run protocol asks for the button on a slow machine: press it once
            run[0].click().run()
            assert_clean(at)
        assert plotly_figures(at), f"{path.name} draws no plotly chart in its default view"


def test_landing_links_every_page(run_page):
    at = run_page("app.py")
    linked = {el.proto.page for el in at.get("page_link")}  # URL path names, e.g. "Gram_matrices"
    for path in page_files()[1:]:
        url_name = path.stem.split("_", 1)[1] if path.stem[:1].isdigit() else path.stem
        assert url_name in linked, (url_name, linked)


def test_preset_sets_sidebar_and_switches_page(run_page):
    at = run_page("app.py")
    at.button(key="preset_all_subsets_kernel").click().run()
    assert_clean(at)
    assert at.title[0].value == "Gram matrices"
    assert at.selectbox(key="kernel").value == "all_subsets"
    assert at.number_input(key="D").value == 512
    assert at.query_params["kernel"] == "all_subsets"


def test_every_preset_opens_a_page_without_errors(run_page):
    keys = [b.key for b in run_page("app.py").button if (b.key or "").startswith("preset_")]
    assert len(keys) >= 3
    for key in keys:
        at = run_page("app.py")
        at.button(key=key).click().run()
        assert_clean(at)
        assert not error_texts(at), (key, error_texts(at))
        assert at.title[0].value != "Random Kernel Explorer", f"{key} did not switch page"


def test_settings_follow_across_pages_and_into_the_url(run_page):
    at = run_page("app.py", **SMALL)
    at.switch_page(GRAM).run()
    at.selectbox(key="kernel").set_value("up_to").run()
    at.number_input(key="degree").set_value(3).run()
    assert at.query_params["kernel"] == "up_to" and at.query_params["degree"] == "3"
    at.switch_page(ITEMSETS).run()
    assert_clean(at)
    assert at.selectbox(key="kernel").value == "up_to"
    assert at.number_input(key="degree").value == 3
    # a copied link reproduces the view in a fresh session
    fresh = run_page(GRAM, **{k: at.query_params[k] for k in at.query_params})
    assert fresh.selectbox(key="kernel").value == "up_to"
    assert fresh.number_input(key="degree").value == 3
    assert fresh.number_input(key="n").value == SMALL["n"]


# ---------------------------------------------------------------------------- Gram page matrix
@pytest.mark.parametrize("distribution", list(DISTRIBUTIONS))
@pytest.mark.parametrize("kernel", [k for k in ITEMSET_KERNELS if k != "itemset"])
def test_gram_itemset_kernels_by_distribution(run_page, kernel, distribution):
    at = run_page(GRAM, kernel=kernel, dist=distribution, **SMALL)
    assert_gram_figures(at)
    assert at.selectbox(key="distributions").value == distribution


@pytest.mark.parametrize("kernel", [k for k in KERNELS if k not in ITEMSET_KERNELS])
def test_gram_other_kernels_with_each_map(run_page, kernel):
    for map_key in maps_for(KernelSpec(kernel)):
        at = run_page(GRAM, kernel=kernel, map=map_key, **SMALL)
        assert_gram_figures(at)
        assert at.selectbox(key="map").value == map_key


def test_gram_custom_family(run_page):
    at = run_page(GRAM, kernel="itemset", fam="custom", itemsets="0,1; 2,3; 1,2,4; {}", **SMALL)
    assert_gram_figures(at)


@pytest.mark.parametrize("fields", ["0-4 | 5-9", ""])
def test_gram_cross_field_family(run_page, fields):
    at = run_page(GRAM, kernel="itemset", fam="cross", fields=fields, **SMALL)
    assert_gram_figures(at)


@pytest.mark.parametrize("itemsets, message", [
    ("0,a; 1", "Could not read the itemset"),
    ("0,1; 1,0", "more than once"),
    ("0,99", "out of range"),
    ("; ;", "No itemsets given"),
])
def test_gram_malformed_custom_itemsets(run_page, itemsets, message):
    at = run_page(GRAM, kernel="itemset", fam="custom", itemsets=itemsets, **SMALL)
    assert_clean(at)
    assert any(message in e for e in error_texts(at)), error_texts(at)
    assert not plotly_figures(at)


@pytest.mark.parametrize("fields, message", [("0-4 | x", "Could not read"), ("0-4 | 3-9", "overlap"), ("0-19", "two")])
def test_gram_malformed_fields(run_page, fields, message):
    at = run_page(GRAM, kernel="itemset", fam="cross", fields=fields, **SMALL)
    assert_clean(at)
    assert any(message in e for e in error_texts(at)), error_texts(at)


def test_gram_degree_above_d(run_page):
    at = run_page(GRAM, ds="wine", kernel="anova", m=14, **SMALL)  # wine has d = 13
    assert_clean(at)
    assert any("degree=14" in e and "d=13" in e for e in error_texts(at)), error_texts(at)


@pytest.mark.parametrize("D", ["0", "-5", "abc"])
def test_gram_bad_D_from_link(run_page, D):
    at = run_page(GRAM, n=30, D=D)
    assert_clean(at)
    assert any("D (random features)" in e for e in error_texts(at)), error_texts(at)
    # the page goes on with the default D
    assert at.number_input(key="D").value == 256
    assert len(plotly_figures(at)) == 1  # the default view (one chart)


def test_gram_too_big_is_refused_with_the_size_that_fits(run_page, monkeypatch):
    import rkapp.guard as guard

    monkeypatch.setattr(guard, "MEMORY_BUDGET", 2 * 2**20)  # 2 MB: n = 300 needs ~3 MB
    at = run_page(GRAM, n=300, D=24)
    assert_clean(at)
    errors = error_texts(at)
    assert any("more than the" in e and "n up to" in e for e in errors), errors


# ---------------------------------------------------------------------------- uploads
def _csv(text: str) -> tuple[str, bytes]:
    return ("data.csv", text.encode())


GOOD_CSV = "a,b,c,label\n" + "\n".join(f"{i % 7 / 7},{i % 5 / 5},{i % 3 / 3},{i % 2}" for i in range(40))


def test_gram_good_csv_upload(run_page):
    at = run_page(GRAM, ds="upload", session={UPLOAD_KEY: _csv(GOOD_CSV)}, **SMALL)
    assert_gram_figures(at)
    assert at.selectbox(key="target").value == "label"  # guessed from the column name


def test_gram_libsvm_upload(run_page):
    text = "\n".join(f"{i % 2} 1:{i % 3 + 1} 3:{i % 5 / 5} 4:0.5" for i in range(30))
    at = run_page(GRAM, ds="upload", session={UPLOAD_KEY: ("data.svm", text.encode())}, **SMALL)
    assert_gram_figures(at)


@pytest.mark.parametrize("content, query, message", [
    ("a,b,label\n1,2,0\n,3,1\n4,5,0\n", {}, "Missing values"),
    ("a,b,label\n1,x,0\n3,4,1\n", {}, "must be numeric"),
    (GOOD_CSV, {"target": "nope"}, "Target column 'nope' is not in data.csv"),
    ("a,b,label\n", {}, "no data rows"),
])
def test_gram_bad_csv_upload_shows_error(run_page, content, query, message):
    at = run_page(GRAM, ds="upload", session={UPLOAD_KEY: _csv(content)}, **SMALL, **query)
    assert_clean(at)
    assert any(message in e for e in error_texts(at)), error_texts(at)


def test_gram_upload_missing_file_explains(run_page):
    at = run_page(GRAM, ds="upload", **SMALL)
    assert_clean(at)
    assert any("No file uploaded" in e for e in error_texts(at)), error_texts(at)


def test_gram_degree_above_d_on_upload(run_page):
    at = run_page(GRAM, ds="upload", kernel="anova", m=3, target="label",
                  session={UPLOAD_KEY: _csv("a,b,label\n1,2,0\n3,4,1\n5,6,0\n")}, **SMALL)
    assert_clean(at)
    assert any("degree=3" in e for e in error_texts(at)), error_texts(at)


def test_movielens_without_folder_explains(run_page):
    at = run_page(GRAM, ds="movielens", **SMALL)
    assert_clean(at)
    assert any("MovieLens" in e for e in error_texts(at)), error_texts(at)


def test_movielens_missing_folder(run_page, tmp_path):
    at = run_page(GRAM, ds="movielens", mlpath=str(tmp_path / "nowhere"), **SMALL)
    assert_clean(at)
    assert any("No MovieLens 100K folder can be read at that path" in e for e in error_texts(at)), error_texts(at)


# ---------------------------------------------------------------------------- Itemsets page
def test_itemsets_counts_listing_and_check(run_page):
    at = run_page(ITEMSETS, kernel="itemset", fam="custom", itemsets="0,1; 2,3; 1,2,4", n=30)
    assert_clean(at)
    figs = plotly_figures(at)
    assert figs[0]["data"][0]["type"] == "bar"
    frames = table_values(at)
    listing, phi, check = frames[0], frames[1], frames[2]
    assert list(listing["itemset"]) == ["{0, 1}", "{2, 3}", "{1, 2, 4}"]
    assert list(phi.columns[1:]) == ["x0·x1", "x2·x3", "x1·x2·x4"]
    assert (check["difference"].abs() <= 1e-12 * (1 + check["kernel"].abs())).all()


def test_itemsets_all_subsets_is_restricted_and_log_scaled(run_page):
    at = run_page(ITEMSETS, kernel="all_subsets", n=30)  # d = 20: 2^20 itemsets
    assert_clean(at)
    assert any("restricted" in w for w in warning_texts(at))
    fig = plotly_figures(at)[0]
    assert fig["layout"]["yaxis"]["type"] == "log"
    check = table_values(at)[-1]
    assert (check["difference"].abs() <= 1e-10 * (1 + check["kernel"].abs())).all()


def test_itemsets_cross_fields_and_bad_input(run_page):
    at = run_page(ITEMSETS, kernel="itemset", fam="cross", fields="0-2 | 3-5 | 6-8", m=3, n=30)
    assert_clean(at)
    assert not error_texts(at), error_texts(at)
    at = run_page(ITEMSETS, kernel="anova", m=21, n=30)
    assert_clean(at)
    assert any("out of range" in e for e in error_texts(at)), error_texts(at)


# ---------------------------------------------------------------------------- frame helpers
FRAME_SCRIPT = '''
import streamlit as st
from rkapp import guarded, persistent_widget, require_memory
from rkapp.state import FIELDS, Field

# a page declares its settings in the state table (rkapp/state.py); this test script declares its own
FIELDS.setdefault("trials", Field("trials", 20, view=False))
FIELDS.setdefault("kinds", Field("kinds", ("a",), view=False))
trials = persistent_widget(st.slider, "Trials", key="trials", min_value=5, max_value=100)
kinds = persistent_widget(st.multiselect, "Kinds", key="kinds", options=["a", "b", "c"])
st.write(f"trials={trials} kinds={kinds}")

@guarded("the decorated part")
def broken():
    raise RuntimeError("boom")

broken()
with guarded("the value part") as g:
    raise ValueError("m must be at most d")
st.write(f"failed={g.failed}")
with guarded("the memory part"):
    require_memory({"Gram (n x n)": (100_000, 100_000)}, hint="Reduce n.")
st.write("page goes on")
'''


def test_frame_helpers_show_errors_and_go_on(clear_streamlit_cache):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(FRAME_SCRIPT, default_timeout=30)
    at.query_params["trials"] = "40"
    at.query_params["kinds"] = "b,c"
    at.run()
    assert_clean(at)
    texts = [m.value for m in at.markdown]
    assert "trials=40 kinds=('b', 'c')" in texts and "failed=True" in texts and "page goes on" in texts
    errors = error_texts(at)
    assert any("RuntimeError: boom" in e and "the decorated part" in e for e in errors)
    assert "m must be at most d" in errors
    assert any("74.5 GB" in e and "Gram (n x n)" in e and "Reduce n." in e for e in errors), errors
    at.slider(key="trials").set_value(60).run()
    assert at.query_params["trials"] == "60"
    at.multiselect(key="kinds").set_value(["a"]).run()
    assert "kinds" not in at.query_params  # back to the default: the URL stays clean


def test_frame_rejects_out_of_range_link_values(clear_streamlit_cache):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_string(FRAME_SCRIPT, default_timeout=30)
    at.query_params["trials"] = "1000"
    at.query_params["kinds"] = "a,z"
    at.run()
    assert_clean(at)
    errors = error_texts(at)
    assert any("Trials = 1000 is out of range" in e for e in errors), errors
    assert any("'z' is not an allowed choice" in e for e in errors), errors
    assert at.slider(key="trials").value == 20


# ---------------------------------------------------------------------------- reproduce in Python
@pytest.mark.parametrize("query", [
    {"kernel": "anova", "m": 2},
    {"kernel": "itemset", "fam": "custom", "itemsets": "0,1; 2,3; 1,2,4"},
    {"kernel": "itemset", "fam": "cross", "fields": "0-4 | 5-9", "dist": "gaussian"},
    {"kernel": "polynomial", "m": 3, "map": "ts", "ds": "wine", "norm": "l2"},
])
def test_gram_reproduce_code_runs_and_matches_the_page(run_page, query):
    at = run_page(GRAM, **SMALL, **query)
    assert_gram_figures(at)
    code = snippet_of(at)
    namespace: dict = {}
    exec(compile(code.replace("print(", "(lambda *a: None)("), "<reproduce>", "exec"), namespace)
    shown = {m.label: m.value for m in at.metric}
    from rkcore.studies.gram import gram_error_stats

    stats = gram_error_stats(namespace["K"], namespace["K_hat"]).set_index("metric")["value"]
    assert f"{stats['relative Frobenius error']:.3g}" == shown["relative Frobenius error"]
    assert namespace["X"].shape == (SMALL["n"], namespace["d"])


def test_itemsets_reproduce_code_runs(run_page):
    at = run_page(ITEMSETS, kernel="up_to", m=3, n=30)
    assert_clean(at)
    code = snippet_of(at)
    namespace: dict = {}
    exec(compile(code.replace("print(", "(lambda *a: None)("), "<reproduce>", "exec"), namespace)
    assert namespace["family"].n_itemsets == 1 + 20 + 190 + 1140


# ---------------------------------------------------------------------------- every page x sidebar matrix
STUDY_PAGES = [p for p in page_files() if p.name != "app.py"]
BAD_UPLOAD = _csv("a,b,label\n1,2,0\n,3,1\n4,5,0\n")


def assert_figures_or_message(at, where: str):
    """A page either draws its figures or says in place why it cannot; never a traceback."""
    assert_clean(at)
    assert plotly_figures(at) or error_texts(at) or at.warning or at.info or estimate_texts(at), (
        f"{where}: neither figure nor message")


@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("path", STUDY_PAGES, ids=lambda p: p.name)
def test_every_page_with_every_kernel(run_page, path, kernel):
    at = run_page(path.relative_to(REPO), kernel=kernel, **SMALL)
    assert_figures_or_message(at, f"{path.name} kernel={kernel}")


@pytest.mark.parametrize("path", STUDY_PAGES, ids=lambda p: p.name)
def test_every_page_with_a_custom_family_and_a_laplace_map(run_page, path):
    at = run_page(path.relative_to(REPO), kernel="itemset", fam="custom", itemsets="0,1; 2,3; 1,2,4",
                  dist="laplace", **SMALL)
    assert_figures_or_message(at, f"{path.name} custom family")


@pytest.mark.parametrize("path", STUDY_PAGES, ids=lambda p: p.name)
def test_every_page_with_a_bad_upload(run_page, path):
    at = run_page(path.relative_to(REPO), ds="upload", session={UPLOAD_KEY: BAD_UPLOAD}, **SMALL)
    assert_clean(at)
    reads_data = any(box.key == "dataset" for box in at.selectbox)
    if reads_data:  # pages without the data sidebar (e.g. Timing's own N(0,1) data) ignore the upload
        assert any("Missing values" in e for e in error_texts(at)), (path.name, error_texts(at))


def test_classifier_preset_runs_its_study_once_on_arrival(run_page):
    """The demo's last preset opens the Classifiers page with results, not a second button to press."""
    at = run_page("app.py")
    at.button(key="preset_linear_model_on_rk_features_vs_kernel_svm").click().run()
    assert_clean(at)
    assert at.title[0].value == "Classifiers"
    assert any(h.value == "Results" for h in at.subheader), [h.value for h in at.subheader]
    assert "_rk_run_on_arrival" not in at.session_state  # consumed: a rerun does not start it again
    # other presets do not start a study
    at = run_page("app.py")
    at.button(key="preset_all_subsets_kernel").click().run()
    assert "_rk_run_on_arrival" not in at.session_state
