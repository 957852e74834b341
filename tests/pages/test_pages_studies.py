"""App tests of the study pages (Error bounds, Distributions and variance, Timing, Classifiers):
default views draw their figures (log axes where promised), the Timing and Classifiers runs
start on their buttons with tiny sizes, widget changes update the view, and bad inputs or
oversized studies answer with an st.error instead of a traceback."""
from __future__ import annotations

from tests.conftest import error_texts, estimate_texts, plotly_figures, table_values

BOUNDS = "pages/3_Error_bounds.py"
VARIANCE = "pages/4_Distributions_and_variance.py"
TIMING = "pages/5_Timing.py"
CLASSIFIERS = "pages/6_Classifiers.py"


def assert_clean(at):
    assert not at.exception, [e.message for e in at.exception]
    assert not error_texts(at), error_texts(at)


def axis_types(fig: dict, axis: str) -> list[str | None]:
    return [v.get("type") for k, v in fig["layout"].items() if k.startswith(axis)]


def titles(at) -> list[str]:
    return [f["layout"]["title"]["text"] for f in plotly_figures(at)]


# ---------------------------------------------------------------------------- error bounds
def test_bounds_default_view(run_page):
    at = run_page(BOUNDS, n=60)
    assert_clean(at)
    figs = plotly_figures(at)
    assert len(figs) == 2
    for fig in figs:
        assert {t["type"] for t in fig["data"]} == {"scatter"}
        assert axis_types(fig, "xaxis") == ["log"] and axis_types(fig, "yaxis") == ["log"]
    names = {t["name"] for t in figs[0]["data"]}
    assert {"Lemma 1 bound (eq. 8), any S", "Lemma 3 bound (eq. 10), ANOVA",
            "measured P(|E| ≥ ε), mean over pairs"} <= names
    assert "D = 256" in figs[0]["layout"]["title"]["text"] and "ε = 0.001" in figs[1]["layout"]["title"]["text"]
    labels = [m.label for m in at.metric]
    assert "R = max ‖x‖₁ (from the data)" in labels and at.metric[0].value == "1"  # L1-normalized rows
    assert any("Lemma 3" in lab for lab in labels)
    table = table_values(at)[0]
    assert list(table["bound"].str[:7]) == ["Lemma 1", "Lemma 2", "Lemma 3"]


def test_bounds_widget_change_and_no_lemma3_off_anova(run_page):
    at = run_page(BOUNDS, n=40, kernel="all_subsets")
    assert_clean(at)
    names = {t["name"] for t in plotly_figures(at)[0]["data"]}
    assert "Lemma 3 bound (eq. 10), ANOVA" not in names
    at.select_slider(key="eb_eps").set_value(0.01).run()
    assert_clean(at)
    assert "ε = 0.01" in titles(at)[1]
    assert at.query_params["eb_eps"] == "0.01"


def test_bounds_heavy_study_waits_for_its_button_and_bad_degree(run_page):
    at = run_page(BOUNDS, n=400, eb_trials=200)
    assert_clean(at)
    assert any("runs when you press the button" in w for w in estimate_texts(at))
    assert not plotly_figures(at) and at.button(key="eb_run")
    at = run_page(BOUNDS, ds="wine", n=40, kernel="anova", m=14)  # wine has d = 13
    assert not at.exception
    assert any("degree=14" in e and "d=13" in e for e in error_texts(at)), error_texts(at)


# ---------------------------------------------------------------------------- distributions and variance
def test_variance_default_view_compares_all_distributions(run_page):
    at = run_page(VARIANCE, n=60)
    assert_clean(at)
    if any(b.key == "dv_run" for b in at.button):  # the run protocol's estimate is above the auto-run threshold
        at.button(key="dv_run").click().run()
        assert_clean(at)
    figs = plotly_figures(at)
    assert len(figs) == 3
    err, var, bars = figs
    assert axis_types(err, "xaxis") == ["log"] and axis_types(err, "yaxis") == ["log"]
    legend = [t["name"] for t in err["data"] if t.get("showlegend", True)]
    assert legend == ["RK (Rademacher)", "RK (Gaussian)", "RK (Uniform)", "RK (Laplace)", "SCRK", "∝ 1/√D (guide)"]
    assert set(axis_types(var, "yaxis")) == {"log"} and len(axis_types(var, "yaxis")) == 3
    assert bars["data"][0]["type"] == "bar"
    wide = table_values(at)[0]
    assert list(wide.columns) == ["Method", "D = 2d = 40", "D = 4d = 80", "D = 8d = 160", "D = 16d = 320"]
    assert wide["D = 2d = 40"].str.contains("±").all()
    summary = table_values(at)[1].set_index("distribution")
    assert (summary["fraction of pairs ≥ Rademacher"] == 1.0).all()
    # the exact numbers (one row per method and D): behind a toggle, their CSV always there
    downloads = lambda: [b.proto.label for b in at.get("download_button")]  # noqa: E731
    assert "Download data: Table 1 numbers (CSV)" in downloads() and len(table_values(at)) == 2
    at.toggle(key="dv_exact").set_value(True).run()
    assert_clean(at)
    tidy = table_values(at)[1]
    assert len(tidy) == 5 * 4 and {"method", "D", "mean", "std", "lowest"} <= set(tidy.columns)
    assert "Download data: Table 1 numbers (CSV)" in downloads()


def test_variance_chosen_distributions_and_bad_multiples(run_page):
    at = run_page(VARIANCE, n=40, dist="rademacher,laplace", dv_scrk="false", dv_vtrials=50)
    assert_clean(at)
    legend = [t["name"] for t in plotly_figures(at)[0]["data"] if t.get("showlegend", True)]
    assert legend == ["RK (Rademacher)", "RK (Laplace)", "∝ 1/√D (guide)"]
    at.multiselect(key="dv_mult").set_value([]).run()
    assert not at.exception
    assert any("at least one multiple of d" in e for e in error_texts(at)), error_texts(at)



def test_variance_seed_moves_the_measured_numbers_only(run_page):
    """The seed draws the maps: the measured errors and variances change with it; the exact variances (the lines
    and the bars over a fixed sample of pairs, no random map involved) stay, so a seed change neither recomputes
    nor redraws them."""
    at = run_page(VARIANCE, n=70, dv_vtrials=50)  # 2,415 pairs: the bars use a sample of 2,000
    assert_clean(at)

    def exact_parts():
        err, var, bars = plotly_figures(at)
        lines = [t for t in var["data"] if t.get("mode") == "lines"]
        return err, [t for t in var["data"] if t not in lines], lines, bars, table_values(at)[1]

    before = exact_parts()
    [w for w in at.sidebar.number_input if w.label == "Seed"][0].set_value(7).run()
    assert_clean(at)
    after = exact_parts()
    assert after[0] != before[0] and after[1] != before[1]  # measured: error study, sample variances
    assert after[2] and after[2] == before[2] and after[3] == before[3]  # exact lines, bars
    assert after[4].equals(before[4])

# ---------------------------------------------------------------------------- timing
TINY_TIMING = dict(tm_maps="rk,scrk", tm_d="8,16", tm_Dfix="32", tm_D="16,32", tm_dfix="8", tm_n=10, tm_rep=1)


def test_timing_default_shows_predictions_and_runs_on_the_button(run_page):
    at = run_page(TIMING)
    assert_clean(at)
    figs = plotly_figures(at)
    assert len(figs) == 2 and all(axis_types(f, "yaxis") == ["log"] for f in figs)
    assert [t["name"] for t in figs[0]["data"]] == ["RK: slope 1.00", "SCRK: slope 0.15"]

    at = run_page(TIMING, **TINY_TIMING)
    at.button(key="tm_run").click().run()
    assert_clean(at)
    figs = plotly_figures(at)
    assert len(figs) == 4
    measured = [f for f in figs if f["layout"]["title"]["text"].startswith("Mapping time")]
    assert len(measured) == 2
    for fig in measured:
        assert axis_types(fig, "xaxis") == ["log"] and axis_types(fig, "yaxis") == ["log"]
        legend = [t["name"] for t in fig["data"] if t.get("showlegend", True)]
        assert [n.split(":")[0] for n in legend] == ["RK", "SCRK"] and all("slope" in n for n in legend)
    medians = table_values(at)[0]
    assert {"RK (ms)", "SCRK (ms)"} <= set(medians.columns) and (medians["RK (ms)"] > 0).all()
    # a widget change keeps the last run on screen and says it is stale
    at.select_slider(key="tm_n").set_value(50).run()
    assert_clean(at)
    assert any("settings changed" in i.value for i in at.info)


def test_timing_bad_inputs(run_page):
    at = run_page(TIMING, tm_d="64")
    assert not at.exception
    assert any("two values of d" in e for e in error_texts(at)), error_texts(at)
    at = run_page(TIMING, tm_d="4,8", tm_m=5)
    assert any("Degree m = 5" in e for e in error_texts(at)), error_texts(at)
    at = run_page(TIMING, tm_maps="rk,rm,nystroem", tm_d="4096,8192", tm_Dfix="16384", tm_n=2000, tm_rep=9)
    assert any("more than the" in e and "GB allowed" in e for e in error_texts(at)), error_texts(at)
    at = run_page(TIMING, tm_maps="rk", tm_d="4096,8192", tm_Dfix="16384", tm_n=2000, tm_rep=9)  # ~20 min estimated
    assert any("minutes" in e for e in error_texts(at)), error_texts(at)
    assert not plotly_figures(at)


# ---------------------------------------------------------------------------- classifiers
def test_classifiers_estimate_then_run_on_the_button(run_page):
    at = run_page(CLASSIFIERS)
    assert_clean(at)
    figs = plotly_figures(at)
    assert len(figs) == 1 and figs[0]["layout"]["title"]["text"].startswith("Estimated")
    assert axis_types(figs[0], "yaxis") == ["log"]

    at = run_page(CLASSIFIERS, n=80, cl_methods="kernel_svm,rk", cl_mult="1,2", cl_trials=1)
    at.button(key="cl_run").click().run()
    assert_clean(at)
    figs = plotly_figures(at)
    assert [f["layout"]["title"]["text"].split(" (")[0] for f in figs] == ["Test accuracy vs D",
                                                                          "Training and testing time vs D"]
    acc, tim = figs
    svm = next(t for t in acc["data"] if t["name"] == "Kernel SVM (exact), no D")
    assert svm["y"][0] == svm["y"][1]  # a horizontal reference line
    assert axis_types(tim, "yaxis") == ["log", "log"]
    summary = table_values(at)[0]
    assert set(summary["method"]) == {"kernel_svm", "rk"} and summary["accuracy"].between(0, 1).all()
    at.radio(key="cl_xaxis").set_value("log2").run()
    assert_clean(at)
    assert axis_types(plotly_figures(at)[0], "xaxis") == ["log"]


def test_classifiers_bad_inputs(run_page):
    at = run_page(CLASSIFIERS, ds="gaussian", n=50)
    assert not at.exception
    assert any("no labels" in e for e in error_texts(at)), error_texts(at)
    # 20,000 points with d = 200 (a small LIBSVM file): the exact SVMs alone would take well over 10 minutes
    wide = "\n".join(f"{i % 2} 1:{i % 7 / 7} {2 + i % 150}:0.5 200:0.25" for i in range(20000)).encode()
    at = run_page(CLASSIFIERS, ds="upload", n=20000, cl_methods="kernel_svm,poly_svm,all_subsets_model,rk",
                  session={"_rk_upload": ("wide.svm", wide)})
    refusals = [e for e in error_texts(at) if "allowed per view" in e]
    assert refusals and "fits" in refusals[0], error_texts(at)
    assert "cl_run" not in [b.key for b in at.button], "a refused study offers no run button"
    at = run_page(CLASSIFIERS, ds="wine", n=100, cl_methods="fm,rk")
    # issue 31: the binary-by-nature FM runs one-vs-rest on many classes (said on the page), no longer refused
    assert not error_texts(at) and any("3 classes" in c.value and "one-vs-rest" in c.value for c in at.caption)
