"""The notes say what the screen shows: "what to notice" sentences are computed from the page's numbers
(AppTest reads the note, the metrics and the figure JSON and compares them), formulas keep their
degree in braces, and long formulas / titles are broken to fit a projector."""
from __future__ import annotations

import re

import pytest

from tests.conftest import plotly_figures

GRAM = "pages/1_Gram_matrices.py"
STORY = "pages/0_Story.py"


def note_text(at) -> str:
    notes = [i.value for i in at.info if "What to notice" in i.value]
    assert len(notes) == 1, [i.value for i in at.info]
    return notes[0]


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
    at, note, (fig,) = _story(run_page, 4)
    lines = {t["name"]: values(t["y"]) for t in fig["data"] if t.get("mode") == "lines+markers"}
    ratios = sorted(g / r for g, r in zip(lines["Gaussian"], lines["Rademacher"]))
    median = (ratios[len(ratios) // 2] if len(ratios) % 2 else
              (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2)
    assert f"give {median:.2f}× the error" in note
    lower = sum(r > 1 for r in ratios)
    assert f"lower at {lower} of {len(ratios)} values of D" in note
    assert ("as Lemma 4 predicts" in note) == (lower > len(ratios) / 2)


def test_story_gram_sentence_numbers(run_page):
    import numpy as np

    from rkcore import story

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
    at = run_page("pages/4_Distributions_and_variance.py", n=40, dv_mult="2,4", dv_trials=5, dv_vtrials=50,
                  timeout=180)
    assert not at.exception and not at.error, [e.value for e in at.error]
    note = note_text(at)
    lowest = next(c.value for c in at.caption if c.value.startswith("Lowest mean per D"))
    winners = [part.split(": ", 1)[1].rstrip(".") for part in lowest.split(". Study")[0]
               .removeprefix("Lowest mean per D: ").split("; ")]
    top = max(set(winners), key=winners.count)
    assert f"Lowest mean error: {top} at {winners.count(top)} of {len(winners)} values of D" in note


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


def test_csv_settings_are_the_sections_the_sidebar_drew():
    from rkapp.widgets import _shown_settings

    values = {"dataset": "wine", "normalization": "l1", "n": 100, "kernel": "anova", "degree": 3, "map": "rk",
              "distributions": ("gaussian",), "D": 512, "seed": 4, "upload": None}
    everything = _shown_settings(values, data=True, n=True, kernel=True, maps=True, distributions="single",
                                 D=True, seed=True)
    assert everything == {"dataset": "wine", "normalization": "l1", "n": 100, "kernel": "anova", "degree": 3,
                          "map": "rk", "distributions": ("gaussian",), "D": 512, "seed": 4}
    # a page without D or distributions (Itemsets) does not label its files with them
    assert _shown_settings(values, data=True, n=True, kernel=True, maps=False, distributions=None, D=False,
                           seed=False) == {"dataset": "wine", "normalization": "l1", "n": 100, "kernel": "anova",
                                           "degree": 3}


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
