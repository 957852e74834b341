"""Figure builders of the study pages (bounds, variance, timing, classifiers) and the small
computations behind them: expected traces, log axes, titles and labels, and the data helpers
against their definitions (brute force on small inputs, exact formulas, statistical checks)."""
from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
import pandas as pd
import pytest

from rkcore.theory.bounds import (
    bounds_table, min_components_lemma1, min_components_lemma2, min_components_lemma3,
)
from rkcore.maps.distributions import DISTRIBUTIONS
from rkcore.studies.errors import error_study
from rkcore.figures import accuracy as fa
from rkcore.figures import bounds as fb
from rkcore.figures import timing as ft
from rkcore.figures import variance as fv
from rkcore.theory import measured_tails as mt
from rkcore.studies import table1 as t1
from rkcore.studies import timing as et
from rkcore.studies import variance_study as vs
from rkcore.registry import MAPS, KernelSpec, make_map
from rkcore.theory.variance import rk_variance


def names(fig) -> list[str]:
    return [t.name for t in fig.data]


# ============================================================================ bounds
def fake_study(D_list=(16, 64), eps=(0.01, 0.1), n_pairs=100, seed=0) -> pd.DataFrame:
    """error_study-shaped rows with known values: tail fractions and maxima per trial."""
    rng = np.random.RandomState(seed)
    rows = []
    for D in D_list:
        for t in range(4):
            mx = rng.uniform(0.0, 0.2)
            rows.append(("RK (Rademacher)", "rk", "rademacher", "ANOVA (m=2)", D, t, "max_abs_error", np.nan, mx, n_pairs))
            for e in eps:
                rows.append(("RK (Rademacher)", "rk", "rademacher", "ANOVA (m=2)", D, t, "tail_prob", e,
                             rng.randint(0, 5) / n_pairs * (mx >= e), n_pairs))
    cols = ["method", "map", "distribution", "kernel", "D", "trial", "metric", "eps", "value", "n_pairs"]
    return pd.DataFrame(rows, columns=cols)


def test_measured_tails_against_definitions():
    study = fake_study()
    m = mt.measured_tails(study)
    for (D, e), g in study[study.metric == "tail_prob"].groupby(["D", "eps"]):
        row = m[(m.D == D) & (m.eps == e) & (m.kind == "pair")].iloc[0]
        assert row.prob == pytest.approx(g.value.mean())
        assert row.floor == pytest.approx(1 / (100 * 4))
        maxima = study[(study.metric == "max_abs_error") & (study.D == D)].value
        sup = m[(m.D == D) & (m.eps == e) & (m.kind == "sup")].iloc[0]
        assert sup.prob == pytest.approx(np.mean(maxima >= e))
        assert sup.floor == pytest.approx(1 / 4)
    with pytest.raises(ValueError, match="tail_prob"):
        mt.measured_tails(study[study.metric != "tail_prob"])
    with pytest.raises(ValueError, match="missing columns"):
        mt.measured_tails(study.drop(columns="n_pairs"))


def test_measured_tails_on_a_real_study_sup_dominates_pairs():
    """A pair can reach eps only if the worst pair does, so P(sup) >= mean over pairs, per (D, eps)."""
    X = np.abs(np.random.RandomState(1).rand(15, 5))
    X /= X.sum(axis=1, keepdims=True)
    study = error_study(X, KernelSpec("anova", 2), [("rk", "rademacher")], [8, 32], 6, eps=(1e-4, 1e-3, 1e-2))
    m = mt.measured_tails(study).pivot_table(index=["D", "eps"], columns="kind", values="prob")
    assert (m["sup"] >= m["pair"] - 1e-15).all()
    assert set(m.index.get_level_values("D")) == {8, 32}


def test_required_components_matches_the_inverses():
    study = fake_study(D_list=(16, 64, 256))
    m = mt.measured_tails(study)
    out = mt.required_components(0.1, 0.05, 1.0, 10, 2, m).set_index("lemma")
    assert out.loc["lemma1", "D_bound"] == min_components_lemma1(0.1, 0.05, 1.0)
    assert out.loc["lemma2", "D_bound"] == min_components_lemma2(0.1, 0.05, 1.0, 10)
    assert out.loc["lemma3", "D_bound"] == min_components_lemma3(0.1, 0.05, 1.0, 2)
    for lemma, kind in mt.LEMMA_MEASURE.items():
        g = m[(m.kind == kind) & np.isclose(m.eps, 0.1)].sort_values("D")
        ok = g[g.prob <= 0.05]
        expected = ok.D.iloc[0] if len(ok) else np.nan
        np.testing.assert_equal(out.loc[lemma, "D_measured"], expected)
        if len(ok):
            assert out.loc[lemma, "ratio"] == pytest.approx(out.loc[lemma, "D_bound"] / expected)
    assert "lemma3" not in set(mt.required_components(0.1, 0.05, 1.0, 10, None, m).lemma)


def test_bounds_figures_log_axes_traces_and_floors():
    study = fake_study(D_list=(16, 64), eps=(0.001, 0.01, 0.1, 0.5))
    m = mt.measured_tails(study)
    b = bounds_table(16, np.logspace(-3, 0, 30), 1.0, d=10, degree=2)
    fig = fb.bounds_vs_eps_figure(m, b, D=16, R=1.0)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "D = 16" in fig.layout.title.text and "R = 1" in fig.layout.title.text
    assert "ε" in fig.layout.xaxis.title.text and "probability" in fig.layout.yaxis.title.text
    assert all(fb.LEMMA_LABELS[k] in names(fig) for k in ("lemma1", "lemma2", "lemma3"))
    assert fb.MEASURED_LABELS["pair"] in names(fig) and fb.MEASURED_LABELS["sup"] in names(fig)
    assert all(t.type == "scatter" for t in fig.data)
    # zero estimates are drawn at the floor as open down-triangles, never at 0 on a log axis
    for t in fig.data:
        if t.name and "none observed" in t.name:
            assert t.marker.symbol == "triangle-down-open"
            assert np.all(np.asarray(t.y) > 0)
    for t in fig.data:
        assert np.all(np.asarray(t.y, dtype=float) > 0)
    bD = bounds_table(np.logspace(0, 6, 50), 0.1, 1.0, d=10)
    fig2 = fb.bounds_vs_D_figure(m, bD, eps=0.1, R=1.0)
    assert fig2.layout.xaxis.type == "log" and fig2.layout.yaxis.type == "log"
    assert "ε = 0.1" in fig2.layout.title.text and "D (random features" in fig2.layout.xaxis.title.text
    assert fb.LEMMA_LABELS["lemma3"] not in names(fig2)  # no degree: no Lemma 3
    with pytest.raises(ValueError, match="D = 999"):
        fb.bounds_vs_eps_figure(m, b, D=999, R=1.0)


# ============================================================================ variance
@pytest.fixture(scope="module")
def small_data():
    X = np.random.RandomState(3).rand(12, 5)
    return X / X.sum(axis=1, keepdims=True)


def test_select_pairs_by_definition():
    K = np.array([[5.0, 0.1, -3.0, 0.2], [0.1, 1.0, 0.5, 0.0], [-3.0, 0.5, 2.0, 0.3], [0.2, 0.0, 0.3, 9.0]])
    pairs = vs.select_pairs(K)
    assert (pairs.i[0], pairs.j[0]) == (0, 2)  # largest |K| off the diagonal: |-3|
    assert (pairs.i[2], pairs.j[2]) == (3, 3)  # largest K(x, x)
    off = np.abs(K[np.triu_indices(4, 1)])
    assert abs(pairs.kernel_value[1]) == np.sort(off)[off.size // 2]
    assert pairs.label.str.startswith("pair (").all()


@pytest.mark.parametrize("kernel, degree", [("anova", 2), ("all_subsets", 2)])
def test_empirical_pair_variance_matches_exact(small_data, kernel, degree):
    """Unbiased means, and Rademacher variances matching rk_variance, each within 5 standard errors.

    Mean of T estimates: SE = sqrt(Var / T) with the exact Var. Sample variance of T estimates:
    SE = Var sqrt((kurt_est - 1) / T), where an estimate is a mean of D i.i.d. products f, so
    kurt_est = 3 + (kurt_f - 3) / D, with kurt_f measured on 200,000 independent features.
    (Checked over 60 seeds: worst |z| 3.4.) Gaussian weights make f so heavy-tailed (kurtosis
    ~170 here) that a sample variance is not a useful check; their means are."""
    spec = KernelSpec(kernel, degree)
    pairs = vs.select_pairs(spec.exact(small_data))
    T = 400
    emp = vs.empirical_pair_variance(small_data, pairs, spec, ["rademacher", "gaussian"], [10, 40], T, random_state=7)
    assert len(emp) == len(pairs) * 2 * 2
    big = 200_000
    Z = make_map("rk", spec, big, "rademacher", 12345).fit(small_data).transform(small_data) * np.sqrt(big)
    kurt_f = {}
    for p in pairs.itertuples():
        f = Z[p.i] * Z[p.j]
        kurt_f[p.label] = np.mean((f - f.mean()) ** 4) / f.var() ** 2
    for row in emp.itertuples():
        exact = rk_variance(small_data[[row.i]], small_data[[row.j]], row.D, kernel=kernel, degree=degree,
                            distribution=row.distribution)[0]
        assert row.var_low <= row.variance <= row.var_high
        assert abs(row.mean_estimate - row.kernel_value) <= 5 * np.sqrt(exact / T)
        if row.distribution == "rademacher":
            kurt_est = 3 + (kurt_f[row.pair] - 3) / row.D
            assert abs(row.variance - exact) <= 5 * exact * np.sqrt((kurt_est - 1) / T)


def test_empirical_pair_variance_is_reproducible_and_validates(small_data):
    spec = KernelSpec("anova", 2)
    pairs = vs.select_pairs(spec.exact(small_data))
    a = vs.empirical_pair_variance(small_data, pairs, spec, ["rademacher"], [8], 20, random_state=1)
    b = vs.empirical_pair_variance(small_data, pairs, spec, ["rademacher"], [8], 20, random_state=1)
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(ValueError, match="n_trials"):
        vs.empirical_pair_variance(small_data, pairs, spec, ["rademacher"], [8], 1)
    with pytest.raises(ValueError, match="Unknown distribution"):
        vs.empirical_pair_variance(small_data, pairs, spec, ["cauchy"], [8], 5)


def test_exact_pair_variance_and_by_distribution(small_data):
    spec = KernelSpec("anova", 2)
    pairs = vs.select_pairs(spec.exact(small_data))
    ex = vs.exact_pair_variance(small_data, pairs, spec, ["gaussian"], [10.0, 100.0])
    ref = rk_variance(small_data[pairs.i], small_data[pairs.j], 1, kernel="anova", degree=2, distribution="gaussian")
    np.testing.assert_allclose(ex[ex.D == 10.0].variance.to_numpy(), ref / 10, rtol=1e-12)
    np.testing.assert_allclose(ex[ex.D == 100.0].variance.to_numpy(), ref / 100, rtol=1e-12)
    s = vs.variance_by_distribution(small_data, spec, list(DISTRIBUTIONS)).set_index("distribution")
    assert s.loc["rademacher", "ratio_to_rademacher"] == pytest.approx(1.0)
    assert (s["at_least_rademacher"] == 1.0).all()  # Lemma 4, pointwise
    assert list(s.sort_values("fourth_moment").index) == list(s.sort_values("mean").index)
    assert s["n_pairs"].iloc[0] == 12 * 11 // 2
    with pytest.raises(ValueError, match="exact variance covers"):
        vs.exact_pair_variance(small_data, pairs, KernelSpec("itemset", itemsets=((0, 1),)), ["gaussian"], [10])


def study_frame(small_data) -> pd.DataFrame:
    return error_study(small_data, KernelSpec("anova", 2), [("rk", "rademacher"), ("rk", "laplace"), ("scrk", None)],
                       [10, 20], 4)


def test_table1_view_cells_and_numbers(small_data):
    study = study_frame(small_data)
    wide, tidy = t1.table1_view(study, d=5)
    assert list(wide.columns) == ["Method", "D = 2d = 10", "D = 4d = 20"]
    assert list(wide["Method"]) == ["RK (Rademacher)", "RK (Laplace)", "SCRK"]
    vals = study[(study.metric == "mean_abs_error") & (study.method == "RK (Laplace)") & (study.D == 20)].value
    row = tidy[(tidy.method == "RK (Laplace)") & (tidy.D == 20)].iloc[0]
    assert row["mean"] == pytest.approx(vals.mean()) and row["std"] == pytest.approx(np.std(vals))  # ddof = 0
    assert wide.loc[1, "D = 4d = 20"] == f"{vals.mean():.2e} ± {np.std(vals):.2e}"
    assert tidy.groupby("D")["lowest"].sum().eq(1).all()


def test_error_vs_D_figure_log_log_with_bands_and_guide(small_data):
    fig = fv.error_vs_D_figure(study_frame(small_data))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert "D (random features" in fig.layout.xaxis.title.text and "mean |" in fig.layout.yaxis.title.text
    visible = [t.name for t in fig.data if t.showlegend is not False]
    assert visible == ["RK (Rademacher)", "RK (Laplace)", "SCRK", "∝ 1/√D (guide)"]
    bands = [t for t in fig.data if t.fill == "toself"]
    assert len(bands) == 3
    scrk = next(t for t in fig.data if t.name == "SCRK")
    assert scrk.line.dash == "dash" and scrk.line.color == fv.OWN_WEIGHTS_COLOR
    with pytest.raises(ValueError, match="metric"):
        fv.error_vs_D_figure(study_frame(small_data), metric="nope")


def test_variance_figures(small_data):
    spec = KernelSpec("anova", 2)
    pairs = vs.select_pairs(spec.exact(small_data))
    emp = vs.empirical_pair_variance(small_data, pairs, spec, ["rademacher", "laplace"], [8, 16], 10)
    ex = vs.exact_pair_variance(small_data, pairs, spec, ["rademacher", "laplace"], np.logspace(np.log10(8), np.log10(16), 5))
    fig = fv.variance_figure(emp, ex)
    layout = fig.to_plotly_json()["layout"]
    for k in ("xaxis", "xaxis2", "xaxis3"):
        assert layout[k]["type"] == "log"
    for k in ("yaxis", "yaxis2", "yaxis3"):
        assert layout[k]["type"] == "log"
    assert [a.text for a in fig.layout.annotations] == list(pairs.label)
    markers = [t for t in fig.data if t.mode == "markers"]
    assert len(markers) == 3 * 2 and all(t.error_y.array is not None for t in markers)
    assert sum(1 for t in fig.data if t.showlegend) == 4  # exact + empirical per distribution, once
    bars = fv.variance_by_distribution_figure(vs.variance_by_distribution(small_data, spec, ["laplace", "rademacher"]))
    assert bars.data[0].type == "bar" and bars.data[0].text == ("×1.00", bars.data[0].text[1])
    assert bars.data[0].x[0].startswith("Rademacher")  # sorted by the fourth moment
    assert "D · Var" in bars.layout.yaxis.title.text


# ============================================================================ timing
def timing_frame() -> pd.DataFrame:
    """Synthetic timings: RK ~ d^1, SCRK ~ d^0.5 (no noise), 3 repeats."""
    rows = []
    for d in (64, 128, 256, 512):
        for r in range(3):
            rows.append(("rk", d, 1024, 100, r, "transform", 1e-5 * d))
            rows.append(("scrk", d, 1024, 100, r, "transform", 1e-4 * np.sqrt(d)))
            rows.append(("rk", d, 1024, 100, r, "fit", 1e-6))
            rows.append(("scrk", d, 1024, 100, r, "fit", 1e-6))
    return pd.DataFrame(rows, columns=["map", "d", "D", "n", "repeat", "phase", "seconds"])


def test_timing_figure_slopes_in_legend_and_log_axes():
    fig = ft.timing_figure(timing_frame(), "d", slopes=et.growth_exponent(timing_frame(), "d"))
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert legend == ["RK: slope 1.00", "SCRK: slope 0.50"]
    assert "ms" in fig.layout.yaxis.title.text and "d (input features" in fig.layout.xaxis.title.text
    assert "D = 1,024" in fig.layout.title.text and "n = 100" in fig.layout.title.text
    rk = next(t for t in fig.data if t.name == "RK: slope 1.00")
    np.testing.assert_allclose(rk.y, 1e-2 * np.array([64, 128, 256, 512]))  # milliseconds
    with pytest.raises(ValueError, match="along"):
        ft.timing_figure(timing_frame(), "x")


def test_predicted_operations_and_figure():
    pred = et.predicted_operations(["rk", "scrk", "ts"], "d", [64, 256, 1024], D=1024, degree=2)
    rk = pred[pred["map"] == "rk"]
    np.testing.assert_allclose(rk.operations, 1024 * np.array([64, 256, 1024]) * 2)
    np.testing.assert_allclose(rk.slope, 1.0)
    scrk = pred[pred["map"] == "scrk"]
    assert (scrk.slope < 0.3).all()  # log d growth
    along_D = et.predicted_operations(["rk"], "D", [128, 1024], d=100)
    np.testing.assert_allclose(along_D.slope, 1.0)
    fig = ft.predicted_figure(pred, "d")
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    assert names(fig)[0] == "RK: slope 1.00"
    with pytest.raises(ValueError, match="Unknown map 'nope'"):
        et.predicted_operations(["nope"], "d", [1, 2])


def test_timing_legends_stand_below_the_plot():
    """Inside the plot (top left) the rising RK line ran through the legend's text at 1280x720 (both
    Predicted cost charts): the legends stand below the plot, anchored to the figure's bottom."""
    pred = et.predicted_operations(["rk", "scrk"], "d", [128, 256, 512, 1024], D=1024, degree=2)
    measured = ft.timing_figure(timing_frame(), "d", slopes=et.growth_exponent(timing_frame(), "d"))
    for fig in (ft.predicted_figure(pred, "d"), measured):
        legend = fig.layout.legend
        assert legend.yref == "container" and legend.y == 0, legend
        assert legend.title.text in ("slope at the right end", "fitted slope")


def test_median_table_and_short_labels():
    med = et.median_table(timing_frame())
    assert list(med.columns) == ["d", "D", "n", "RK (ms)", "SCRK (ms)"]
    np.testing.assert_allclose(med["RK (ms)"], 1e-2 * med["d"])
    assert MAPS["rk"].short_label == "RK" and MAPS["nystroem"].short_label == "Nystroem"


# ============================================================================ classifiers
def accuracy_frame() -> pd.DataFrame:
    rows = []
    for t in range(3):
        rows.append(("kernel_svm", "Kernel SVM (exact)", np.nan, 0, 0.80, 0.5, 0.1))
        rows.append(("fm", "Factorization machine", np.nan, t, 0.78 + 0.01 * t, 0.8 + 0.3 * t, 0.01))
        for D in (40, 80, 160):
            rows.append(("rk", "Linear SVM + RK", float(D), t, 0.6 + D / 1000 + 0.01 * t, 1e-4 * D, 1e-5 * D))
    df = pd.DataFrame(rows, columns=["method", "label", "D", "trial", "accuracy", "train_seconds", "test_seconds"])
    df = df.drop_duplicates(subset=["method", "D", "trial"])
    df["n_test"] = 80
    df["C"] = 1.0
    return df


def test_accuracy_figure_reference_lines_and_axes():
    fig = fa.accuracy_figure(accuracy_frame())
    svm = next(t for t in fig.data if t.name == "Kernel SVM (exact), no D")
    assert list(svm.x) == [40.0, 160.0] and list(svm.y) == [0.8, 0.8]  # spans the D range
    rk = next(t for t in fig.data if t.name == "Linear SVM + RK")
    np.testing.assert_allclose(rk.y, 0.6 + np.array([40, 80, 160]) / 1000 + 0.01)
    assert fig.layout.xaxis.type is None or fig.layout.xaxis.type == "linear"
    assert fig.layout.yaxis.tickformat == ".0%" and "80 test points" in fig.layout.title.text
    log2 = fa.accuracy_figure(accuracy_frame(), log2_x=True)
    assert log2.layout.xaxis.type == "log" and "log₂" in log2.layout.xaxis.title.text
    assert list(log2.layout.xaxis.tickvals) == [40, 80, 160]


def test_time_figure_two_log_panels():
    fig = fa.time_figure(accuracy_frame())
    layout = fig.to_plotly_json()["layout"]
    assert layout["yaxis"]["type"] == "log" and layout["yaxis2"]["type"] == "log"
    assert "training" in layout["yaxis"]["title"]["text"] and "testing" in layout["yaxis2"]["title"]["text"]
    legend = [t.name for t in fig.data if t.showlegend is not False]
    assert legend == ["Kernel SVM (exact), no D", "Factorization machine, no D", "Linear SVM + RK"]
    fm_band = next(t for t in fig.data if t.name == "Factorization machine ± std" and t.xaxis == "x")
    assert np.all(np.asarray(fm_band.y) > 0)  # bands stay positive on the log axis


def test_estimate_figure_and_summary_table():
    est = pd.DataFrame({"method": ["kernel_svm", "rk", "rk"], "label": ["Kernel SVM (exact)", "Linear SVM + RK"] * 1
                        + ["Linear SVM + RK"], "D": [np.nan, 40.0, 80.0], "seconds": [0.5, 0.01, 0.02]})
    fig = fa.estimate_figure(est)
    assert fig.layout.yaxis.type == "log" and not any(t.fill == "toself" for t in fig.data)
    s = fa.summary_table(accuracy_frame())
    assert list(s.columns) == ["label", "method", "D", "accuracy", "accuracy std", "train s", "train s std", "test s", "C",
                               "trials"]
    fm = s[s.method == "fm"].iloc[0]
    assert fm["accuracy"] == pytest.approx(0.79) and fm["trials"] == 3
    assert fm["accuracy std"] == pytest.approx(np.std([0.78, 0.79, 0.80]))


def test_unvalidated_figures_are_checked_against_plotly_validation():
    """style.figure skips plotly's validation (a per-rerun cost); check_canonical, on in the test suite, is
    what still catches a property plotly.js would drop: a raw nested magic-underscore name or a misspelling."""
    from rkcore.figures.style import check_canonical, figure

    good = figure([dict(type="scatter", x=[1, 2], y=[3, 4], line=dict(dash=None))],
                  dict(title_text="t", xaxis=dict(title=dict(text="x"))))
    check_canonical(good)  # a top-level magic name is split by plotly; a None counts as unset
    assert json.loads(pio.to_json(good))["layout"]["xaxis"]["title"]["text"] == "x"
    with pytest.raises(ValueError, match=r"layout\.xaxis\.title"):
        figure([], dict(xaxis=dict(title_text="x")))  # plotly.js would ignore "title_text" here
    with pytest.raises(ValueError):
        figure([dict(type="scatter", x=[1], y=[1], marker=dict(colour="red"))])  # misspelt


def test_accuracy_figure_pairs_each_D_with_its_own_mean_whatever_the_row_order():
    """Seen converting the builder: the means were taken in the study's row order and drawn against the sorted
    D, so a study listed by decreasing D drew D = 40 with D = 160's accuracy."""
    study = accuracy_frame()
    reversed_D = study.sort_values("D", ascending=False, kind="stable", na_position="last")
    for frame in (study, reversed_D):
        line = next(t for t in fa.accuracy_figure(frame).data if t.name == "Linear SVM + RK")
        drawn = dict(zip(np.asarray(line.x, float), np.asarray(line.y, float)))
        assert list(drawn) == [40.0, 80.0, 160.0]
        for D, accuracy in drawn.items():
            assert accuracy == pytest.approx(study[study.D == D].accuracy.mean())
