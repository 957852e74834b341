"""The notes say what the screen shows: "what to notice" sentences are computed from the page's numbers
(AppTest reads the note, the metrics and the figure JSON and compares them), formulas keep their
degree in braces, and long formulas / titles are broken to fit a projector."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.conftest import error_texts, plotly_figures, table_values

GRAM = "pages/1_Gram_matrices.py"
STORY = "pages/0_Story.py"


def note_text(at) -> str:
    notes = [i.value for i in at.info if "What to notice" in i.value]
    assert len(notes) == 1, [i.value for i in at.info]
    lead = notes[0].removeprefix("**What to notice.** ")
    assert len(lead) <= 160, lead  # one breath on screen; the rest is behind "More"
    return " ".join([notes[0]] + [m.value for e in at.expander if e.label == "More" for m in e.markdown])


@pytest.mark.parametrize("D", [32, 1024])
def test_gram_note_numbers_are_the_metrics(run_page, D):
    at = run_page(GRAM, n=60, D=D)
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    note = note_text(at)
    assert f"relative Frobenius error {metrics['relative Frobenius error']}" in note
    assert f"largest {metrics['max absolute error']}" in note
    assert f"at D = {D:,}" in note
    rel = float(metrics["relative Frobenius error"])
    assert f"D = {4 * D:,} brings it to about {rel / 2:.3g}" in note


def test_gram_note_follows_the_distribution(run_page):
    at = run_page(GRAM, n=60, distributions="gaussian")
    assert "Gaussian weights" in note_text(at)


def test_degree_20_formula_keeps_its_braces(run_page):
    at = run_page(GRAM, n=30, degree=20, D=16)
    formulas = [el.value for el in at.get("latex")] if at.get("latex") else [
        el.proto.body for el in at.markdown if "K_A" in el.proto.body]
    text = " ".join(map(str, formulas))
    assert "K_A^{20}" in text and "K_A^20" not in text


def test_long_formulas_break_and_titles_wrap():
    from rkapp.layout import fit_formula, wrap_title

    short = r"K(\mathbf{x},\mathbf{y}) = \langle\mathbf{x},\mathbf{y}\rangle"
    assert fit_formula(short) == short
    long = (r"Z(\mathbf{x}) = \tfrac{1}{\sqrt{D}}\big(K(\mathbf{x}, \boldsymbol\omega_1), \dots, K(\mathbf{x}, "
            r"\boldsymbol\omega_D)\big),\quad \hat K(\mathbf{x}, \mathbf{y}) = \langle Z(\mathbf{x}), "
            r"Z(\mathbf{y})\rangle,\quad \mathbb{E}\,\hat K = K")
    fitted = fit_formula(long, max_chars=30)
    assert fitted.startswith(r"\begin{gathered}") and fitted.count(r" \\ ") == 2
    # a \quad inside braces is not a place to break
    assert fit_formula(r"\text{a}\ {x \quad y}" * 20, max_chars=5).count(r"\\") == 0
    title = "Approximate vs exact entries (4,000 of 20,100 entries, a seeded subsample)"
    lines = wrap_title(title, 30).split("<br>")
    assert all(len(line) <= 30 for line in lines) and " ".join(lines) == title


@pytest.mark.parametrize("cols", [2, 3])
def test_panel_titles_wrap_and_the_top_margin_holds_them_under_the_title(cols):
    """Seen on Classifiers and Distributions at 1280x720: panel titles ran into each other and into the
    wrapped figure title. Plotly centres the title in the top margin and stands the panel titles on the
    plot area, so the margin must hold the title's lines plus twice the panel titles' lines."""
    from plotly.subplots import make_subplots

    from rkapp.layout import TITLE_CHARS, fit_for_screen

    long = "training time (fit, mapping included) per fit"
    fig = make_subplots(rows=1, cols=cols, subplot_titles=[long] * cols)
    fig.update_layout(title_text="A figure title long enough to need two lines at the width of a full chart, "
                                 "like the variance figure's")
    fit_for_screen(fig)
    width = TITLE_CHARS["third" if cols == 3 else "panel"]
    panel_lines = 0
    for annotation in fig.layout.annotations:
        lines = annotation.text.split("<br>")
        assert all(len(line) <= width for line in lines) and " ".join(lines) == long
        panel_lines = max(panel_lines, len(lines))
    title_lines = 1 + fig.layout.title.text.count("<br>")
    assert title_lines == 2 and panel_lines >= 2
    assert fig.layout.margin.t >= 27 * title_lines + 2 * 23 * panel_lines


def values(array) -> list:
    """A plotly JSON array: a list, or a typed array {"dtype", "bdata"} (base64)."""
    if isinstance(array, dict) and "bdata" in array:
        import base64

        import numpy as np

        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=np.dtype(array["dtype"])).tolist()
    return list(array)


def _story(run_page, step):
    at = run_page(STORY, story_step=step, timeout=240)
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at, note_text(at), plotly_figures(at)


def test_story_convergence_sentence_is_the_curve(run_page):
    at, note, (fig,) = _story(run_page, 3)
    line = next(t for t in fig["data"] if t.get("mode") == "lines+markers")
    x, y = values(line["x"]), values(line["y"])
    assert f"from {y[0]:.2f} at D = {int(x[0]):,}" in note
    assert f"to {y[-1]:.3f} at D = {int(x[-1]):,}" in note


def test_story_distribution_sentence_is_the_curves(run_page):
    from rkcore.metrics import separated

    at, note, (fig,) = _story(run_page, 4)
    lines = {t["name"]: values(t["y"]) for t in fig["data"] if t.get("mode") == "lines+markers"}
    ratios = sorted(g / r for g, r in zip(lines["Gaussian"], lines["Rademacher"]))
    median = (ratios[len(ratios) // 2] if len(ratios) % 2 else
              (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2)
    assert f"give {median:.2f}× the error" in note
    # the claim counts only the D where the dots of the trials (drawn) are apart beyond their spread
    dots = {t["name"].split(":")[0]: (values(t["x"]), values(t["y"])) for t in fig["data"] if t.get("mode") == "markers"}

    def trials_at(name, D):
        x, y = dots[name]
        return np.array([e for xi, e in zip(x, y) if xi == D])

    lower = 0
    for D in sorted(set(dots["Rademacher"][0])):
        r, g = trials_at("Rademacher", D), trials_at("Gaussian", D)
        lower += bool(r.mean() < g.mean() and separated(r.mean(), r.std(), r.size, g.mean(), g.std(), g.size))
    assert f"Rademacher is lower at {lower} of {len(ratios)} values of D" in note, note
    assert ("as Lemma 4 predicts" in note) == (lower > len(ratios) / 2)


def test_story_gram_sentence_numbers(run_page):
    import numpy as np

    from rkcore.teaching import story

    at, note, _ = _story(run_page, 2)
    X, y = story.story_data()
    K, K_hat = story.gram_for(X, 256)
    rel = np.linalg.norm(K_hat - K) / np.linalg.norm(K)
    assert f"relative error {rel:.2f}" in note
    assert re.search(r"average \d\.\d\d× the kernel value", note)


def test_kernel_trick_note_numbers_are_the_metrics(run_page):
    at = run_page("pages/7_Kernel_trick.py", kt_dmax=16, kt_n=40, timeout=120)
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    note = note_text(at)
    ratio = next(v for k, v in metrics.items() if k.startswith("explicit / kernel"))
    assert f"takes {ratio} the time" in note
    slope = metrics["log-log slope of the explicit time (last 3 d)"]
    assert f"last three d is {slope}" in note
    features = next(v for k, v in metrics.items() if k.startswith("explicit features at d"))
    assert f"builds {features} features" in note


def test_timing_note_reports_the_measured_exponents():
    import pandas as pd

    from rkcore.figures.timing import timing_note

    slopes = pd.DataFrame({"map": ["RK", "RK", "SCRK"], "along": ["d", "D", "d"], "exponent": [0.41, 0.72, 0.12]})
    note = timing_note(slopes)
    assert "RK: time ∝ d^0.41, time ∝ D^0.72" in note and "SCRK: time ∝ d^0.12" in note


def test_distributions_note_is_the_table(run_page):
    """The note names a winner only where the caption's table shows one beyond the trials' spread; the
    caption lists the lowest mean per D and the methods that tie with it."""
    at = run_page("pages/4_Distributions_and_variance.py", n=40, dv_mult="2,4", dv_trials=5, dv_vtrials=50,
                  timeout=180)
    assert not at.exception and not at.error, [e.value for e in at.error]
    note = note_text(at)
    lowest = next(c.value for c in at.caption if c.value.startswith("Lowest mean per D"))
    parts = lowest.split(". Study")[0].removeprefix("Lowest mean per D: ").split("; ")
    clear = [p.split(": ", 1)[1] for p in parts if "ties with" not in p]
    if not clear:
        assert "they tie" in note and "Lowest mean error" not in note, note
    else:
        most = max(map(clear.count, clear))
        top = {w for w in clear if clear.count(w) == most}
        assert any(f"Lowest mean error beyond the trials' spread: {w} at {most} of {len(parts)} values of D" in note
                   for w in top), note


def test_csv_carries_its_settings():
    import io

    import pandas as pd

    from rkapp.layout import csv_file_name, csv_with_settings

    settings = {"page": "Gram difference", "dataset": "interactions", "kernel": "anova", "degree": 2,
                "distributions": ("rademacher", "gaussian"), "D": 256, "seed": 7}
    df = pd.DataFrame({"i": [0, 1], "value": [0.5, -1.25]})
    raw = csv_with_settings(df, settings).decode()
    assert "# seed = 7\n" in raw and "# distributions = rademacher,gaussian\n" in raw
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(raw), comment="#"), df)
    name = csv_file_name("Gram_difference", settings)
    assert name == "Gram_difference_interactions_anova_m2_rademacher+gaussian_D256_seed7.csv"


def test_csv_settings_are_the_fields_the_sidebar_drew(run_page):
    """The CSV settings are the sidebar's own record of what it drew: m for a cross-field itemset kernel (drawn,
    though the itemset kernel has no degree of its own), nothing a page does not draw (Itemsets: no D)."""
    from rkapp.layout import csv_file_name

    at = run_page("pages/1_Gram_matrices.py", kernel="itemset", family="cross", degree=2, n=30, D=24, seed=4)
    assert not at.exception and not error_texts(at), error_texts(at)
    settings = at.session_state["_rk_page_settings"]
    assert at.number_input(key="degree").value == 2 and settings["degree"] == 2
    assert {"dataset", "normalization", "n", "kernel", "family", "fields", "degree", "map", "distributions", "D",
            "seed"} == set(settings)
    assert csv_file_name("Gram", settings) == "Gram_interactions_n30_itemset_m2_rk_rademacher_D24_seed4.csv"
    at = run_page("pages/2_Itemsets.py", n=30)
    assert not at.exception and not error_texts(at), error_texts(at)
    assert not {"D", "map", "distributions", "seed"} & set(at.session_state["_rk_page_settings"])


def test_classifier_note_says_slower_when_it_is_slower():
    import numpy as np
    import pandas as pd

    from rkcore.figures.accuracy import classifier_note

    summary = pd.DataFrame({"label": ["Kernel SVM (exact)", "Linear SVM + RK", "Linear SVM + RK", "FM"],
                            "method": ["kernel_svm", "rk", "rk", "fm"], "D": [np.nan, 64.0, 320.0, np.nan],
                            "accuracy": [0.88, 0.80, 0.87, 0.91], "train s": [0.2, 0.1, 0.34, 1.0]})
    note = classifier_note(summary, 100)
    assert "(Linear SVM + RK, D = 320) scores 87.0%, -1.0 points against the kernel SVM's 88.0%" in note
    assert "trains 1.7× slower" in note and "faster (measured" not in note
    assert "Most accurate here: FM (91.0%)" in note
    summary.loc[2, "train s"] = 0.05
    assert "trains 4× faster" in classifier_note(summary, 100)


def _table(at, column: str):
    """The first st.dataframe of the page that has ``column``."""
    return next(v for v in table_values(at) if column in v.columns)


@pytest.mark.parametrize("query", [dict(rff_Dmax=256, rff_trials=2), dict(rff_Dmax=1024, rff_trials=3, seed=5)])
def test_rff_note_numbers_are_the_table(run_page, query):
    import numpy as np

    at = run_page("pages/8_Random_Fourier_features.py", n=60, timeout=120, **query)
    assert not at.exception and not at.error, [e.value for e in at.error]
    note = note_text(at)
    summary = _table(at, "median error × √D")
    first, last = summary.iloc[0], summary.iloc[-1]
    assert int(last["D"]) == query["rff_Dmax"]
    assert f"from {first['median error']:.3g} at D = {int(first.D):,} to {last['median error']:.3g} at D = " \
           f"{int(last.D):,}" in note
    slope = np.polyfit(np.log(summary["D"]), np.log(summary["median error"]), 1)[0]
    assert "log-log slope is " + f"{slope:.2f}".replace("-", "−") in note
    scaled = summary["median error × √D"]
    assert f"between {scaled.min():.3g} and {scaled.max():.3g}" in note


@pytest.mark.parametrize("query", [dict(rp_vec="raw", rp_mmax=64, rp_trials=3),
                                   dict(rp_vec="phi", rp_mmax=128, rp_trials=2, rp_delta=0.1)])
def test_projection_note_numbers_are_the_table(run_page, query):
    at = run_page("pages/9_Random_projections.py", n=40, dataset="wine", timeout=120, **query)
    assert not at.exception and not at.error, [e.value for e in at.error]
    note = note_text(at)
    summary = _table(at, "outside band")
    share = next(m.value for m in at.metric if m.label.startswith("median share"))
    assert f"median largest-coordinate share {share}" in note
    delta = query.get("rp_delta", 0.05)
    for kind, sub in summary.groupby("kind", sort=False):
        sub = sub.sort_values("m")
        q_low, q_high = f"q {100 * delta / 2:g}%", f"q {100 - 100 * delta / 2:g}%"
        w0 = sub.iloc[0][q_high] - sub.iloc[0][q_low]
        w1 = sub.iloc[-1][q_high] - sub.iloc[-1][q_low]
        assert f"shrinks from {w0:.3g} at m = {int(sub.iloc[0].m):,} to {w1:.3g} at m = {int(sub.iloc[-1].m):,}" in note
        worst = sub["outside band"].max()
        assert f"at most {worst:.1%} of the ratios fall outside Theorem 1's band, " \
               f"{'within' if worst <= delta else 'more than'} the δ = {delta:g}" in note


def test_compositional_note_numbers_are_the_table(run_page):
    at = run_page("pages/10_Compositional_kernels.py", n=40, ck_Dmax=64, ck_trials=2, ck_Dgram=16, timeout=180)
    assert not at.exception and not at.error, [e.value for e in at.error]
    note = note_text(at)
    summary = _table(at, "error ratio (none / de-dup)")
    last = summary.iloc[-1]
    assert int(last["D"]) == 64
    assert f"de-duplication gives median error {last['unbiased']:.3g} against {last['none']:.3g}" in note
    assert f"(at D = 16: ratio {summary.iloc[0]['error ratio (none / de-dup)']:.3g})" in note
    # the draws chart's last point is the number the note quotes
    draws = next(f for f in plotly_figures(at) if "Draws of Algorithm 1" in str(f["layout"]["title"]["text"]))
    (ys,) = [values(t["y"]) for t in draws["data"] if "Des Raj" in t.get("name", "")]
    assert f"{ys[-1]:.3g} times per stored feature" in note


@pytest.mark.parametrize("query", [dict(eb_D=64), dict(eb_D=256, distributions="gaussian")])
def test_error_bounds_note_numbers_are_the_metrics(run_page, query):
    at = run_page("pages/3_Error_bounds.py", n=30, eb_trials=5, timeout=180, **query)
    assert not at.exception and not at.error, [e.value for e in at.error]
    note = note_text(at)
    metrics = {m.label: m.value for m in at.metric}
    D = query["eb_D"]
    largest = metrics[f"largest |E| seen at D = {D}"]
    assert f"At D = {D:,} the largest |E| any pair reached in 5 random maps is {largest}" in note
    # the tightest lemma's D and ratio are the ones its metric shows
    asks = {k.split(" bound")[0]: (m.value, m.delta) for k, m in ((m.label, m) for m in at.metric) if "asks for D" in k}
    named = next(name for name in asks if f"tightest here, {name}," in note)
    value, delta = asks[named]
    assert f"asks for D = {value}, {delta.removeprefix('≥ ').split('×')[0]}×" in note
    assert ("assume Rademacher weights" in note) == ("distributions" in query)
