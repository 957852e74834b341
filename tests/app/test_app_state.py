"""The frame's state table and navigation: one name per setting, old links still open the same view,
every page is reachable through st.navigation under its old URL path."""
from __future__ import annotations

import ast
import re
import dataclasses

import pytest

from rkapp.navigation import PAGES
from rkapp.state import ALIASES, FIELDS, VIEW_FIELDS, ViewSpec
from tests.conftest import REPO, error_texts, page_files, plotly_figures

GRAM = "pages/1_Gram_matrices.py"


def _widget_keys(path) -> set[str]:
    """The ``key=`` of every persistent_widget call in a page file."""
    keys = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "persistent_widget":
            keys |= {kw.value.value for kw in node.keywords if kw.arg == "key" and isinstance(kw.value, ast.Constant)}
    return keys


def test_view_spec_is_the_table():
    assert tuple(f.name for f in dataclasses.fields(ViewSpec) if f.name != "upload") == VIEW_FIELDS
    assert {f.name: f.default for f in dataclasses.fields(ViewSpec) if f.name != "upload"} == \
        {name: FIELDS[name].default for name in VIEW_FIELDS}
    assert ViewSpec().query_params() == {}
    assert ViewSpec(degree=3, distributions=("gaussian", "laplace")).query_params() == \
        {"degree": "3", "distributions": "gaussian,laplace"}


def test_old_url_keys_are_aliases_of_fields():
    assert ALIASES == {"ds": "dataset", "mlpath": "movielens_path", "norm": "normalization", "m": "degree",
                       "fam": "family", "dist": "distributions", "tm_d": "tm_sweep_n_features",
                       "tm_Dfix": "tm_at_n_components", "tm_D": "tm_sweep_n_components", "tm_dfix": "tm_at_n_features"}
    assert not set(ALIASES) & set(FIELDS)


def test_no_two_settings_differ_only_by_case():
    names = [*FIELDS, *ALIASES]
    lowered = [n.lower() for n in FIELDS]
    assert len(set(lowered)) == len(lowered), sorted(n for n in FIELDS if lowered.count(n.lower()) > 1)
    assert len(set(names)) == len(names)


def test_old_timing_keys_open_the_renamed_settings(run_page):
    at = run_page("pages/5_Timing.py", tm_maps="rk", tm_d="8,16", tm_Dfix="32", tm_D="16,32", tm_dfix="8", tm_n=10)
    assert not at.exception and not error_texts(at), error_texts(at)
    assert at.selectbox(key="tm_at_n_components").value == "32" and at.selectbox(key="tm_at_n_features").value == "8"
    assert at.multiselect(key="tm_sweep_n_features").value == ["8", "16"]
    assert at.multiselect(key="tm_sweep_n_components").value == ["16", "32"]
    assert "tm_Dfix" not in at.query_params and at.query_params["tm_at_n_components"] == "32"


def _literal_keywords(path) -> list[tuple[str, str]]:
    """(key, keyword) of persistent_widget calls that pass choices or bounds as literal values (a list, tuple or
    number written in the page) for a field whose choices or bounds the table holds."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "persistent_widget":
            kws = {kw.arg: kw.value for kw in node.keywords}
            key = kws.get("key")
            if not isinstance(key, ast.Constant) or key.value not in FIELDS:
                continue
            f = FIELDS[key.value]
            for arg in ("options", "min_value", "max_value"):
                value = kws.get(arg)
                literal = isinstance(value, (ast.List, ast.Tuple, ast.Constant, ast.UnaryOp))
                in_table = f.options is not None if arg == "options" else getattr(f, arg) is not None
                if value is not None and literal and in_table:
                    found.append((key.value, arg))
    return found


@pytest.mark.parametrize("path", page_files()[1:], ids=lambda p: p.name)
def test_page_choices_and_bounds_are_the_tables(path):
    """A page does not restate a choice list or a bound that rkapp/state.py holds for its field."""
    assert not _literal_keywords(path), f"{path.name}: {_literal_keywords(path)} restate the table"


def test_every_choice_field_allows_its_default():
    for f in FIELDS.values():
        if f.options is not None and f.name != "upload":
            allowed = list(f.options())
            assert all(v in allowed for v in (f.default if f.multi else (f.default,))), f.name


def test_presets_use_field_names_not_old_url_keys():
    from rkapp.state import apply_preset

    with pytest.raises(ValueError, match=r"old URL key: use 'degree'"):
        apply_preset({"kernel": "anova", "m": 3})
    home = (REPO / "pages" / "Home.py").read_text()
    preset_keys = {k.value for node in ast.walk(ast.parse(home)) if isinstance(node, ast.Dict)
                   for k in node.keys if isinstance(k, ast.Constant)}
    assert preset_keys and not preset_keys & set(ALIASES), preset_keys & set(ALIASES)


@pytest.mark.parametrize("path", page_files()[1:], ids=lambda p: p.name)
def test_every_page_widget_is_declared_in_the_table(path):
    """No setting is made up at run time: a page's persistent widgets are rows of the table."""
    undeclared = _widget_keys(path) - set(FIELDS)
    assert not undeclared, f"{path.name}: {undeclared} missing from rkapp/state.py"


def test_page_settings_keep_one_meaning():
    owners: dict[str, str] = {}
    for path in page_files()[1:]:
        for key in _widget_keys(path):
            assert FIELDS[key].view or owners.setdefault(key, path.name) == path.name, (key, owners.get(key))


def test_old_link_opens_the_same_view(run_page):
    """A link shared before the keys were renamed (ds, norm, m, dist) opens the same view; the URL is
    rewritten to the field names."""
    old = run_page(GRAM, ds="wine", norm="l2", m=3, dist="gaussian", n=30, D=24)
    new = run_page(GRAM, dataset="wine", normalization="l2", degree=3, distributions="gaussian", n=30, D=24)
    for at in (old, new):
        assert not at.exception and not error_texts(at), error_texts(at)
        assert at.selectbox(key="dataset").value == "wine"
        assert at.radio(key="normalization").value == "l2"
        assert at.number_input(key="degree").value == 3
        assert at.selectbox(key="distributions").value == "gaussian"
    assert plotly_figures(old) == plotly_figures(new)
    assert {k: old.query_params[k] for k in old.query_params} == {
        "dataset": "wine", "normalization": "l2", "degree": "3", "distributions": "gaussian", "n": "30", "D": "24"}


def test_old_link_to_a_custom_family(run_page):
    at = run_page(GRAM, kernel="itemset", fam="cross", fields="0-4 | 5-9", n=30, D=24)
    assert not at.exception and not error_texts(at), error_texts(at)
    assert at.radio(key="family").value == "cross"
    assert at.query_params["family"] == "cross" and "fam" not in at.query_params


def test_preset_with_a_page_setting_needs_no_earlier_visit(run_page):
    """Presets may set any declared setting, page-specific ones included, in a fresh session."""
    from streamlit.testing.v1 import AppTest

    script = ("from rkapp import apply_preset, persistent_widget\nimport streamlit as st\n"
              "apply_preset({'kernel': 'up_to', 'degree': 3, 'eb_trials': 20})\n"
              "st.write(f\"trials={persistent_widget(st.select_slider, 'Trials', key='eb_trials', options=[5, 10, 20])}\")\n")
    at = AppTest.from_string(script, default_timeout=30).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.markdown[0].value == "trials=20"
    assert at.session_state["_rk_v_degree"] == 3


def test_navigation_keeps_the_old_url_paths():
    assert [p.url_path for p in PAGES] == [
        "Story", "Gram_matrices", "Itemsets", "Error_bounds", "Distributions_and_variance", "Timing", "Classifiers",
        "Kernel_trick", "Random_Fourier_features", "Random_projections", "Compositional_kernels", "Speed_and_accuracy"]


def _page_title(file: str) -> str:
    """The title a page script gives itself: its page("...") call."""
    return re.search(r'^page\(\s*"([^"]+)"', (REPO / "pages" / file).read_text(), re.M).group(1)


def test_page_switching_through_the_navigation(run_page):
    """app.py runs st.navigation: Home first, then each page by its path, settings carried along."""
    at = run_page("app.py", n=30, D=24)
    assert at.title[0].value == "Random Kernel Explorer"
    for entry in [e for e in PAGES if e.url_path != "Story"][:3]:  # the story has no sidebar settings
        at.switch_page(entry.path).run()
        assert not at.exception, [e.message for e in at.exception]
        assert at.title[0].value == _page_title(entry.file)
        assert at.number_input(key="n").value == 30


# ---------------------------------------------------------------------------- non-finite values
@pytest.mark.parametrize("page, query, label", [
    (GRAM, {"kernel": "polynomial", "c": "nan"}, "Offset c"),
    (GRAM, {"kernel": "rbf", "map": "rff", "gamma": "nan"}, "Width γ"),
    (GRAM, {"kernel": "rbf", "map": "rff", "gamma": "-inf"}, "Width γ"),
    (GRAM, {"n": "inf"}, "n (points)"),
    (GRAM, {"n": "1e400"}, "n (points)"),
    (GRAM, {"D": "9" * 5000}, "D (random features)"),
    ("pages/9_Random_projections.py", {"rp_delta": "nan"}, "δ (failure probability)"),
])
def test_non_finite_url_values_are_refused_and_reset(run_page, page, query, label):
    at = run_page(page, **{"n": 30, **query})
    assert not at.exception, [e.value for e in at.exception]
    assert any(label in e and "using" in e.lower() for e in error_texts(at)), error_texts(at)
    name = next(k for k in query if k not in ("kernel", "map"))
    assert at.session_state["_rk_v_" + name] == FIELDS[name].default if name in FIELDS and FIELDS[name].view \
        else True


def test_nan_widget_value_is_refused_reset_and_gone_on_the_next_run(run_page):
    at = run_page(GRAM, n=30)
    at.number_input(key="n").set_value(float("nan")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("n (points)" in e and "not a finite number" in e for e in error_texts(at)), error_texts(at)
    assert at.session_state["_rk_v_n"] == FIELDS["n"].default
    at.run()  # the bad value does not stay in the session
    assert not at.exception and not error_texts(at), error_texts(at)
    at.session_state["_rk_v_seed"] = float("inf")  # a stored non-finite value is refused too
    at.run()
    assert not at.exception
    assert any("Seed" in e for e in error_texts(at)) and at.session_state["_rk_v_seed"] == FIELDS["seed"].default


def test_page_menu_links_every_page_in_the_app_and_none_when_a_page_runs_alone(run_page):
    """The menu comes from st.navigation's run (public API), not Streamlit's internal page registry."""
    app = run_page("app.py")
    assert not app.exception, [e.message for e in app.exception]
    links = [el.proto.label for el in app.sidebar.get("page_link")]
    assert links == ["Home", *[e.title for e in PAGES]]
    alone = run_page(GRAM, n=30, D=24)
    assert not alone.exception and not alone.sidebar.get("page_link")


def test_rkapp_uses_no_private_streamlit_navigation():
    source = "\n".join(p.read_text() for p in (REPO / "rkapp").glob("*.py"))
    assert "pages_manager" not in source and "get_script_run_ctx" not in source
