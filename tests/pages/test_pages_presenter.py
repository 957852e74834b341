"""Issue 28 (in front of the room), the parts checked without a browser: honest notes (pure functions),
presenter type never smaller (every font of a figure grows), the story's wording and axes, the Gram page's
opening view, the Classifiers page's opening size and stale results, the PNG export's title and file name,
and the offline HTML export. The browser parts (first screen, cut text, keyboard) are tests/browser."""
from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import plotly.io as pio
import pytest

from tests.conftest import estimate_texts, plotly_figures, warning_texts

GRAM = "pages/1_Gram_matrices.py"
CLASSIFIERS = "pages/6_Classifiers.py"


def note_text(at) -> str:
    """The page's first note: its lead (the info box) and what is behind its "More"."""
    lead = next(i.value for i in at.info if "What to notice" in i.value)
    return " ".join([lead] + [m.value for e in at.expander if e.label == "More" for m in e.markdown][:1])


# ============================================================================ honest notes
def _tidy(means: dict, stds: dict, trials: int = 10) -> pd.DataFrame:
    rows = [{"method": m, "D": D, "mean": mean, "std": stds[m][i], "n_trials": trials}
            for m, values in means.items() for i, (D, mean) in enumerate(values.items())]
    return pd.DataFrame(rows)


def test_separated_is_two_standard_errors_of_the_difference():
    from rkcore.figures.variance import separated

    # std (ddof 0) 1.0 over 5 trials: sample variance 1.25, standard error of each mean 0.5, of the difference
    # sqrt(0.5) = 0.7071; twice that is 1.414
    assert separated(0.0, 1.0, 5, 1.42, 1.0, 5) and not separated(0.0, 1.0, 5, 1.41, 1.0, 5)
    assert not separated(0.0, 0.0, 1, 5.0, 0.0, 1)  # one trial: no spread known, no claim


def test_distribution_note_calls_close_means_a_tie():
    from rkcore.figures.variance import distribution_note, lowest_by_D

    # the case: SCRK and RK-Rademacher agree to 3 significant figures, far inside their spread
    tidy = _tidy({"SCRK": {16: 1.001e-3, 32: 7.101e-4}, "RK (Rademacher)": {16: 1.002e-3, 32: 7.100e-4},
                  "RK (Gaussian)": {16: 1.9e-3, 32: 1.3e-3}},
                 {"SCRK": [1e-4, 1e-4], "RK (Rademacher)": [1e-4, 1e-4], "RK (Gaussian)": [1e-4, 1e-4]})
    lowest = lowest_by_D(tidy)
    assert [set(t) for t in lowest["tied"]] == [{"SCRK", "RK (Rademacher)"}] * 2
    note = distribution_note(lowest, None, 10)
    assert "Lowest mean error" not in note and "they tie" in note and "SCRK and RK (Rademacher)" in note
    # spread small enough: a real winner, named
    tight = tidy.assign(std=1e-7)
    note = distribution_note(lowest_by_D(tight), None, 10)
    assert "Lowest mean error beyond the trials' spread: SCRK at 1 of 2 values of D" in note
    assert "D = 32: RK (Rademacher)" in note and "tie" not in note


def test_distribution_note_says_every_pair_not_100_percent_or_more():
    from rkcore.figures.variance import distribution_note

    summary = pd.DataFrame({"label": ["Rademacher", "Gaussian"], "ratio_to_rademacher": [1.0, 1.8],
                            "at_least_rademacher": [1.0, 1.0]})
    note = distribution_note(None, summary)
    assert "100% or more" not in note and "at every sampled pair" in note
    summary["at_least_rademacher"] = [1.0, 0.75]
    assert "at 75% of the sampled pairs or more" in distribution_note(None, summary)


def test_slope_spread_is_the_per_repeat_fit():
    from rkcore.figures.timing import slope_spread

    d = np.array([128, 256, 512, 1024])
    rows = [{"map": "rk", "repeat": r, "phase": "transform", "d": x, "seconds": 1e-6 * x ** slope}
            for r, slope in enumerate((0.5, 0.9, 0.7)) for x in d]
    spread = slope_spread(pd.DataFrame(rows), "d")
    assert spread.loc[0, "low"] == pytest.approx(0.5) and spread.loc[0, "high"] == pytest.approx(0.9)
    assert spread.loc[0, "repeats"] == 3


def test_timing_note_says_when_a_slope_is_unreliable():
    from rkcore.figures.timing import SLOPE_SPREAD_LIMIT, timing_note

    slopes = pd.DataFrame({"map": ["RK", "SCRK"], "along": ["d", "d"], "exponent": [0.98, 0.80],
                           "low": [0.95, 0.47], "high": [1.02, 0.95]})
    note = timing_note(slopes, load=(0.4, 2))
    assert "SCRK: time ∝ d^0.80 (repeats 0.47 to 0.95)" in note
    assert f"Read these slopes as rough: the repeats disagree by more than {SLOPE_SPREAD_LIMIT:g} for SCRK in d" in note
    assert "for RK in d" not in note and "SCRK in d" in note
    busy = timing_note(slopes.iloc[:1], load=(6.3, 2))
    assert "Read these slopes as rough: the machine was busy (load 6.3 on 2 cores)" in busy
    assert "Unreliable" not in busy and "quieter" not in busy  # plain words, no advice a class cannot follow
    assert "rough" not in timing_note(slopes.iloc[:1], load=(1.0, 2))


def test_classifier_note_claims_faster_only_beyond_the_spread():
    from rkcore.figures.accuracy import classifier_note

    summary = pd.DataFrame({"label": ["Kernel SVM (exact)", "Linear SVM + RK"], "method": ["kernel_svm", "rk"],
                            "D": [np.nan, 320.0], "accuracy": [0.88, 0.87], "train s": [0.2, 0.1],
                            "train s std": [0.01, 0.01], "trials": [3, 3]})
    assert "trains 2× faster, measured this run" in classifier_note(summary, 100)
    summary["train s std"] = [0.2, 0.2]
    note = classifier_note(summary, 100)
    assert "trains about as fast (the 2× ratio is within the spread of 3 trials)" in note
    assert "× faster" not in note
    summary["trials"] = [1, 1]
    assert "in a single trial (no spread to weigh it against)" in classifier_note(summary, 100)


def test_summary_table_carries_the_training_time_spread():
    from rkcore.figures.accuracy import summary_table

    df = pd.DataFrame({"method": ["rk"] * 3, "label": ["RK"] * 3, "D": [64.0] * 3, "trial": [0, 1, 2],
                       "accuracy": [0.8, 0.9, 0.85], "train_seconds": [1.0, 2.0, 3.0], "test_seconds": [0.1] * 3})
    row = summary_table(df).iloc[0]
    assert row["train s"] == pytest.approx(2.0) and row["train s std"] == pytest.approx(np.std([1.0, 2.0, 3.0]))


# ============================================================================ the story
def test_story_duel_sentence_is_true_about_when():
    from rkcore.teaching import story
    from rkcore.teaching.story_speed import SpeedDuel
    from rkcore.studies.speed_accuracy import TimeStudy

    summary = pd.DataFrame([
        {"contender": c, "label": c, "D": D, "seeds": 3, "accuracy_mean": a, "accuracy_std": 0.005,
         "accuracy_se": 0.004, "train_median": t, "train_min": t, "train_max": t, "predict_median": p,
         "predict_min": p, "predict_max": p} for c, D, a, t, p in (("svm_anova", np.nan, 0.915, 1.85, 0.9),
                                                                   ("rk", 320.0, 0.911, 1.20, 0.05))])
    timing = TimeStudy(pd.DataFrame(columns=["model", "n", "phase", "seconds", "source"]),
                       {"train": (1200.0, "measured"), "predict": (None, "already faster")}, 39_746, 320, 4000)
    duel = SpeedDuel(summary, timing, 320)
    now = 1_800_000_000.0
    assert "measured just now" in story.duel_step(duel, 4000, now - 5, now).sentence
    cached = story.duel_step(duel, 4000, now - 600, now).sentence
    assert "just now" not in cached and "10 min ago, kept from an earlier run" in cached


def _story_trials(errors: dict) -> pd.DataFrame:
    """error_vs_D's rows from {distribution: {D: [error of each trial]}}."""
    return pd.DataFrame([{"distribution": dist, "D": D, "trial": t, "seed": t, "rel_fro": e}
                         for dist, by_D in errors.items() for D, values in by_D.items() for t, e in enumerate(values)])


def test_story_distribution_sentence_says_tie_within_the_spread():
    from rkcore.teaching import story

    # Gaussian's medians are all higher (the old sentence: "Rademacher is lower at 2 of 2 values of D, as
    # Lemma 4 predicts"), but by far less than the spread of 3 trials: a tie
    tied = _story_trials({"rademacher": {16: [0.50, 0.70, 0.60], 64: [0.25, 0.35, 0.30]},
                          "gaussian": {16: [0.52, 0.72, 0.62], 64: [0.26, 0.36, 0.31]}})
    sentence = story.distribution_sentence(tied)
    assert sentence.startswith("Rademacher and Gaussian weights tie: at every D their errors differ by less than "
                               "2 standard errors of the difference over 3 trials"), sentence
    assert "as Lemma 4 predicts" not in sentence and "lower at" not in sentence


def test_story_distribution_sentence_claims_only_beyond_the_spread():
    from rkcore.teaching import story

    # D = 16: 0.1 apart, 2 SE of the difference = 2 * sqrt(2 * 0.1^2 / 2) = 0.2: a tie; D = 64, 256: clear
    trials = _story_trials({"rademacher": {16: [0.5, 0.7], 64: [0.30, 0.31], 256: [0.15, 0.16]},
                            "gaussian": {16: [0.6, 0.8], 64: [0.40, 0.41], 256: [0.20, 0.21]}})
    sentence = story.distribution_sentence(trials)
    assert ("beyond the trials' spread (2 standard errors of the difference over 2 trials) Rademacher is lower at "
            "2 of 3 values of D, as Lemma 4 predicts; they tie at D = 16.") in sentence, sentence
    # Gaussian clearly lower at one D: no "as Lemma 4 predicts"
    mixed = _story_trials({"rademacher": {16: [0.9, 0.91], 64: [0.30, 0.31], 256: [0.15, 0.16]},
                           "gaussian": {16: [0.6, 0.61], 64: [0.40, 0.41], 256: [0.20, 0.21]}})
    sentence = story.distribution_sentence(mixed)
    assert "Rademacher is lower at 2 of 3 values of D, Gaussian at 1" in sentence and "does not show" in sentence


def test_story_module_imports_time_at_the_top():
    import ast
    import inspect

    from rkcore.teaching import story

    tree = ast.parse(inspect.getsource(story))
    nested = [node.lineno for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef) for node in ast.walk(fn)
              if isinstance(node, ast.Import) and any(a.name == "time" for a in node.names)]
    assert not nested, f"import time inside functions at lines {nested}"
    assert any(isinstance(n, ast.Import) and any(a.name == "time" for a in n.names) for n in tree.body)


def test_story_error_axis_ticks_cover_every_D():
    from rkcore.teaching import story
    from rkcore.figures.story import error_curve_figure

    trials = pd.DataFrame([{"distribution": "rademacher", "D": D, "trial": 0, "seed": 0, "rel_fro": 4 / np.sqrt(D)}
                           for D in story.STORY_D_GRID])
    fig = error_curve_figure(trials, story.median_error(trials), "t")
    assert list(fig.layout.xaxis.tickvals) == list(story.STORY_D_GRID)  # 16 … 4096, not only 100 and 1000
    assert fig.layout.xaxis.ticktext[0] == "16" and fig.layout.xaxis.ticktext[-1] == "4,096"


def test_story_bar_labels_stay_inside_their_bars():
    from rkcore.figures.story import STORY_HEIGHT, duel_figure

    summary = pd.DataFrame({"label": ["Kernel SVM (exact)", "Linear SVM + RK"], "accuracy_mean": [0.999, 0.91],
                            "train_seconds": [1.85, 1.2]})
    fig = duel_figure(summary)
    assert {t.textposition for t in fig.data} == {"inside"}  # "auto" put a 99.9% label above the frame
    assert fig.layout.height == STORY_HEIGHT <= 400


# ============================================================================ presenter type
def test_enlarged_grows_every_font_and_keeps_the_original():
    from rkcore.figures.style import FONT_SIZE, enlarged, figure

    fig = figure([dict(type="bar", x=[1], y=[2], textfont=dict(size=12),
                       marker=dict(colorbar=dict(tickfont=dict(size=13))))],
                 dict(annotations=[dict(text="panel", font=dict(size=16))], legend=dict(font=dict(size=15))))
    big = json.loads(pio.to_json(enlarged(fig, 4), validate=False))
    assert big["layout"]["font"]["size"] == FONT_SIZE + 4
    assert big["layout"]["annotations"][0]["font"]["size"] == 20 and big["layout"]["legend"]["font"]["size"] == 19
    assert big["data"][0]["textfont"]["size"] == 16 and big["data"][0]["marker"]["colorbar"]["tickfont"]["size"] == 17
    template = big["layout"]["template"]["layout"]
    assert template["legend"]["font"]["size"] == FONT_SIZE - 1 + 4  # the template's fixed sizes grow too
    assert template["coloraxis"]["colorbar"]["tickfont"]["size"] == FONT_SIZE - 2 + 4
    assert fig.layout.annotations[0].font.size == 16  # a copy: a shared (cached) figure is not changed


def test_presenter_mode_keeps_formulas_collapsed_and_fonts_large(run_page):
    at = run_page("pages/3_Error_bounds.py", presenter="true", n=40, eb_trials=5, timeout=180)
    assert not at.exception and not at.error, [e.value for e in at.error]
    formulas = [e for e in at.expander if "Formulas" in e.label]
    assert formulas and not any(e.proto.expanded for e in formulas)
    for fig in plotly_figures(at):
        template = fig["layout"]["template"]["layout"]
        assert template["legend"]["font"]["size"] >= 16 + 4 and fig["layout"]["font"]["size"] >= 17 + 4


# ============================================================================ the PNG export
def test_png_title_has_a_left_pad_and_the_file_name_whole_words():
    from rkapp.layout import png_file_name
    from rkcore.figures.style import TEMPLATE

    assert TEMPLATE.layout.title.pad.l >= 8 and TEMPLATE.layout.title.xanchor == "left"
    name = png_file_name("Gram_matrices_exact_and_approximate", {"dataset": "digits", "D": 1024, "seed": 0})
    assert name == "Gram_matrices_exact_and_approximate_digits_D1024_seed0"


# ============================================================================ the Gram page's opening view
def test_gram_opens_on_digits_sorted_by_label_with_visible_structure(run_page):
    at = run_page(GRAM, timeout=180)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.query_params["dataset"] in (["digits"], "digits") and at.query_params["D"] in (["1024"], "1024")
    rel = float(next(m.value for m in at.metric if "relative" in m.label.lower()))
    assert rel < 0.3  # the synthetic default at D = 256 was 0.61
    (fig,) = plotly_figures(at)
    assert "((" not in fig["layout"]["title"]["text"] and ") (" not in fig["layout"]["title"]["text"]


def test_gram_link_naming_D_keeps_its_own(run_page):
    at = run_page(GRAM, D=64, n=40, timeout=120)
    assert not at.exception and not at.error
    assert at.query_params["D"] in (["64"], "64") and "dataset" not in at.query_params  # the shared default


def test_gram_title_has_one_parenthesis():
    from rkcore.figures.gram import gram_title

    assert gram_title(200, 2, (1, 99)) == "Gram matrices, n = 200 (2×2 block averages; colors: 1st–99th percentile)"
    assert gram_title(100, 1) == "Gram matrices, n = 100"


# ============================================================================ Classifiers
GOOD = b"a,b,c,target\n" + b"".join(f"{i % 7},{(3 * i) % 5},{i % 3},{i % 2}\n".encode() for i in range(60))
BAD = b"a,b\n1,x\n"


def test_classifiers_open_large_enough_without_an_about_0_s_estimate(run_page):
    at = run_page(CLASSIFIERS, timeout=180)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.query_params["n"] in (["1000"], "1000")
    assert estimate_texts(at) and not any("about 0 s" in w for w in estimate_texts(at))
    button = next(b for b in at.button if b.key == "cl_run")
    assert "(0 s)" not in button.label


def test_classifiers_default_runs_with_the_fm_and_no_convergence_warning(run_page):
    from rkcore.registry import METHODS

    at = run_page(CLASSIFIERS, timeout=400)
    methods = next(m for m in at.multiselect if m.key == "cl_methods").value
    assert "fm" in methods, methods  # the factorization machine is back among the opening methods
    next(b for b in at.button if b.key == "cl_run").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    captions = " ".join(c.value for c in at.caption)
    assert "Times are wall-clock" in captions and "iteration limit" not in captions, captions
    traces = {t.get("name") for f in plotly_figures(at) for t in f["data"]}
    assert METHODS["fm"].label in " ".join(map(str, traces)), traces


def test_classifiers_hide_stale_results_after_a_bad_upload(run_page):
    from rkapp import uploads
    from rkapp.widgets import UPLOAD_STATE_KEY

    uploads.clear()
    at = run_page(CLASSIFIERS, dataset="upload", target="target", n=60, cl_methods="rk", cl_mult="1", cl_trials=1,
                  session={UPLOAD_STATE_KEY: ("good.csv", GOOD)}, timeout=180)
    next(b for b in at.button if b.key == "cl_run").click()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Test accuracy" in json.dumps(f["layout"].get("title", {})) for f in plotly_figures(at))
    at.session_state[UPLOAD_STATE_KEY] = ("bad.csv", BAD)
    at.query_params.pop("upload", None)
    at.run()
    assert at.error  # the bad file's message
    assert any("results of the last run are hidden" in w for w in warning_texts(at))
    assert not any("Test accuracy" in json.dumps(f["layout"].get("title", {})) for f in plotly_figures(at))
    uploads.clear()


# ============================================================================ the offline export
def test_view_html_is_self_contained_and_literal():
    from plotly.offline import get_plotlyjs

    from rkcore.figures.export import Item, Lesson, view_html
    from rkcore.figures.style import figure

    fig = figure([dict(type="scatter", x=[1, 2], y=[3, 4])], dict(title=dict(text="t")))
    text = view_html(Lesson("A <b>view</b>", [Item("note", "**Bold** <script>alert(1)</script>"),
                                              Item("chart", "caption", fig)], {"D": 256, "dist": ("a", "b")}),
                     version="9.9")
    assert get_plotlyjs()[:200] in text and "<script src=" not in text  # plotly.js inlined, nothing fetched
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "<b>Bold</b>" in text
    assert "A &lt;b&gt;view&lt;/b&gt;" in text and "rkcore 9.9" in text and "<td>a, b</td>" in text
    assert 'id="rk-chart-0"' in text


# ============================================================================ presenter mode: no sidebar
#: pages and links that draw every kind of sidebar section: the map and one distribution (Gram), several
#: distributions (Distributions), the itemset family (Itemsets), an upload with its target column (Classifiers);
#: old URL keys (dist, norm, fam) that both modes must rewrite to the field names alike
NO_SIDEBAR_CASES = [
    (GRAM, dict(n=40, D=64, seed=3, dist="gaussian", map="rk")),
    ("pages/4_Distributions_and_variance.py", dict(n=30, distributions="rademacher,gaussian", norm="l2",
                                                   dv_mult="2", dv_trials=5, dv_vtrials=50)),
    ("pages/2_Itemsets.py", dict(n=30, kernel="itemset", fam="custom", itemsets="0,1; 2,3")),
    (CLASSIFIERS, dict(dataset="upload", target="target", n=60, cl_methods="rk", cl_mult="1", cl_trials=1)),
]


def _sidebar_elements(at) -> int:
    return len(at.sidebar.children)


def _urls(at) -> dict:
    return {k: (v if isinstance(v, str) else ",".join(v)) for k, v in dict(at.query_params).items()}


@pytest.mark.parametrize("path, query", NO_SIDEBAR_CASES, ids=lambda v: v if isinstance(v, str) else "")
def test_presenter_mode_draws_no_sidebar_and_keeps_the_url(run_page, path, query):
    from rkapp import uploads
    from rkapp.widgets import UPLOAD_STATE_KEY

    uploads.clear()
    session = {UPLOAD_STATE_KEY: ("good.csv", GOOD)} if query.get("dataset") == "upload" else None
    normal = run_page(path, session=session, timeout=180, **query)
    assert not normal.exception and not normal.error, [e.value for e in normal.error]
    assert _sidebar_elements(normal) > 0
    shown = run_page(path, session=session, timeout=180, presenter="true", **query)
    assert not shown.exception and not shown.error, [e.value for e in shown.error]
    assert _sidebar_elements(shown) == 0  # not collapsed: nothing drawn there at all
    assert [t.value for t in shown.toggle if t.key == "presenter"] == [True]  # the way out, in the main area
    expected = _urls(normal) | {"presenter": "true"}
    if "upload" in expected:  # each run kept the file under a token of its own
        assert _urls(shown)["upload"]
        expected["upload"] = _urls(shown)["upload"]
    assert _urls(shown) == expected
    shown.run()  # a rerun in presenter mode changes nothing
    assert not shown.exception and _sidebar_elements(shown) == 0 and _urls(shown) == expected
    uploads.clear()


def test_leaving_presenter_mode_shows_the_same_settings_in_the_sidebar(run_page):
    at = run_page(GRAM, presenter="true", n=40, D=64, seed=3, distributions="gaussian", timeout=180)
    assert not at.exception and _sidebar_elements(at) == 0
    before = _urls(at)
    next(t for t in at.toggle if t.key == "presenter").set_value(False)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert _sidebar_elements(at) > 0
    numbers = {n.label: n.value for n in at.sidebar.number_input}
    assert numbers["D (random features)"] == 64 and numbers["Seed"] == 3 and numbers["n (points)"] == 40
    assert next(s for s in at.sidebar.selectbox if s.key == "distributions").value == "gaussian"
    assert [t.value for t in at.sidebar.toggle if t.key == "presenter"] == [False]
    assert _urls(at) == {k: v for k, v in before.items() if k != "presenter"}


# ============================================================================ estimates: never "about 0 s"
def _page_text(at) -> str:
    texts = [e.value for kind in ("warning", "caption", "info", "markdown") for e in at.get(kind)]
    return " | ".join(map(str, texts + [b.label for b in at.button]))


@pytest.mark.parametrize("path, query", [
    (CLASSIFIERS, dict(n=60, cl_methods="rk", cl_mult="1", cl_trials=1)),  # its estimate waits for the button
    ("pages/3_Error_bounds.py", dict(n=12, eb_trials=5)),
    ("pages/4_Distributions_and_variance.py", dict(n=12, dv_trials=5, dv_vtrials=50, dv_mult="1")),
])
def test_sub_second_estimates_say_under_1_s(run_page, path, query):
    at = run_page(path, timeout=180, **query)
    assert not at.exception and not at.error, [e.value for e in at.error]
    text = _page_text(at)
    assert "under 1 s" in text, text
    assert not re.search(r"(about|cost) 0(\.0+)? s|\(0 s\)|\b0\.0 s\b", text), text
