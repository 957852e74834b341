"""The registry is the one place a map is declared: a toy map registered at run time, with no other
change anywhere, runs through every engine that lists maps (error study, Table 1 view, timing,
accuracy) and every page that lists maps (Gram matrices, Timing, Classifiers), and is drawn by
the figures in its registry colour.

The toy map is Algorithm 1 (RK, Rademacher weights) for the ANOVA kernel written from the
definition, Z_s(x) = e_m(w_s * x) / sqrt(D) with e_m from power sums (Newton's identities), so
it is also checked to be unbiased: a map that the engines merely "ran" could be anything.
"""
from __future__ import annotations

from dataclasses import fields, replace

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from tests.conftest import error_texts, plotly_figures, table_values
from rkcore.studies.accuracy import METHODS, accuracy_study, estimate_seconds, total_seconds
from rkcore.base.arrays import dense
from rkcore.base.limits import nbytes
from rkcore.studies.errors import error_study
from rkcore.figures.accuracy import accuracy_figure
from rkcore.figures.timing import predicted_figure, timing_figure
from rkcore.figures.variance import error_vs_D_figure
from rkcore.studies import costs
from rkcore.registry import (
    MAPS, CostModel, KernelSpec, MapEntry, make_map, maps_for, register_map, same_kernel, unregister_map,
)
from rkcore.studies.table1 import table1_view
from rkcore.studies.timing import growth_exponent, median_table, predicted_operations, time_maps, timing_kernel

TOY = "toy"
TOY_COLOR = "#117733"


class ToyAnovaMap(TransformerMixin, BaseEstimator):
    def __init__(self, n_components=8, degree=2, random_state=None):
        self.n_components = n_components
        self.degree = degree
        self.random_state = random_state

    def fit(self, X, y=None):
        d = dense(X).shape[1]
        if self.degree > d:
            raise ValueError(f"degree={self.degree} exceeds the number of features d={d}.")
        self.weights_ = check_random_state(self.random_state).choice([-1.0, 1.0], size=(self.n_components, d))
        return self

    def transform(self, X):
        X, W, m = dense(X), self.weights_, self.degree
        power_sums = [None] + [(X ** t) @ (W ** t).T for t in range(1, m + 1)]
        e = [np.ones((X.shape[0], W.shape[0]))]
        for k in range(1, m + 1):
            e.append(sum((-1) ** (i - 1) * e[k - i] * power_sums[i] for i in range(1, k + 1)) / k)
        return e[m] / np.sqrt(self.n_components)


# The toy map's own cost model, deliberately unlike RK's (no matrix product, a flat 10^6 random numbers, a
# large scratch buffer), so an estimate that fell back to RK's model would show it.
TOY_COST = CostModel(random_numbers=lambda d, D, m: 1e6, gemm_flops=lambda n, d, D, m: 0.0,
                     elements=lambda n, d, D, m: 1e3 * n * D, stored_floats=lambda d, D, m: 7 * d * D,
                     scratch_floats=lambda n, d, D, m: 50 * n * D, fit_seconds=lambda n, d, D, m: 1e-5 * n * D + 0.5)
TOY_ENTRY = MapEntry(
    key=TOY, label="Toy ANOVA map (TOY)", short_label="TOY", kernels=("anova",), distributions=("rademacher",),
    time_complexity=r"O(D\,d\,m)", memory_complexity=r"O(D\,d)",
    build=lambda spec, D, distribution, seed: ToyAnovaMap(D, spec.degree, seed),
    timing_kernel="anova", operations=lambda d, D, m: D * d * m, cost=TOY_COST, unbiased=True, color=TOY_COLOR,
    classifier_kernel=same_kernel, reference="a test of the registry")


@pytest.fixture
def toy_map():
    register_map(TOY_ENTRY)
    try:
        yield TOY_ENTRY
    finally:
        unregister_map(TOY)
    assert TOY not in MAPS


@pytest.fixture
def data():
    X = np.abs(np.random.RandomState(0).standard_normal((40, 6)))
    X /= X.sum(axis=1, keepdims=True)  # L1-normalized, as the paper's data
    y = (X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3] > np.median(X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3])).astype(int)
    return X, y


# ---------------------------------------------------------------------------- the registry
def test_register_and_unregister(toy_map):
    spec = KernelSpec("anova", 2)
    assert TOY in maps_for(spec) and TOY not in maps_for(KernelSpec("all_subsets"))
    assert TOY in METHODS and METHODS[TOY].label == "Linear SVM + TOY" and METHODS[TOY].color == TOY_COLOR
    assert timing_kernel(TOY, 3) == KernelSpec("anova", 3)
    with pytest.raises(ValueError, match="already registered"):
        register_map(TOY_ENTRY)
    with pytest.raises(ValueError, match="does not approximate"):
        make_map(TOY, KernelSpec("dot"), 8)


def test_a_missing_field_is_refused_not_filled_in():
    unpriced = replace(TOY_COST, fit_seconds=None)
    with pytest.raises(ValueError, match="no fit_seconds"):
        replace(TOY_ENTRY, key="bad", cost=unpriced)
    replace(TOY_ENTRY, key="bad", cost=unpriced, classifier_kernel=None)  # not offered to the study: fine
    with pytest.raises(ValueError, match="timing_kernel"):
        replace(TOY_ENTRY, key="bad", timing_kernel="rbf")
    with pytest.raises(ValueError, match="cost must be a CostModel"):
        replace(TOY_ENTRY, key="bad", cost=None)
    with pytest.raises(TypeError, match="unbiased"):  # no default: every map says whether it is unbiased
        MapEntry(**{f.name: getattr(TOY_ENTRY, f.name) for f in fields(MapEntry) if f.name != "unbiased"})
    with pytest.raises(TypeError):  # keyword-only: no positional entries
        MapEntry(TOY, "Toy", "TOY", ("anova",), ("rademacher",), "", "", TOY_ENTRY.build, "anova",
                 TOY_ENTRY.operations, TOY_COST, True, TOY_COLOR)
    with pytest.raises(ValueError, match="Unknown map 'toy'"):
        predicted_operations([TOY], "d", [4, 8])  # not registered here: no fallback to RK's formula


def test_toy_map_is_unbiased(toy_map, data):
    """Mean of Z Z^T over 300 seeds within 5 standard errors of the exact ANOVA Gram (CLT)."""
    X = data[0][:4]
    spec = KernelSpec("anova", 2)
    est = np.stack([(lambda Z: Z @ Z.T)(make_map(TOY, spec, 16, random_state=s).fit(X).transform(X))
                    for s in range(300)])
    se = est.std(axis=0, ddof=1) / np.sqrt(len(est))
    assert (np.abs(est.mean(axis=0) - spec.exact(X)) <= 5 * se + 1e-15).all()


# ---------------------------------------------------------------------------- cost model
def test_run_estimates_use_the_toy_maps_own_cost_model(toy_map, monkeypatch):
    """Every estimate of rkcore.studies.costs that prices a map prices the toy with the toy's model, not RK's."""
    monkeypatch.setenv(costs.SPEED_FACTOR_ENV, "1")
    n, d, D, m = 200, 20, 256, 2
    toy = (costs.RNG_SECONDS * 1e6 + costs.ELEMENT_SECONDS * 1e3 * n * D)  # from TOY_COST by hand
    assert costs.map_transform_seconds(n, d, D, m, TOY) == pytest.approx(toy, rel=1e-12)
    assert costs.map_transform_seconds(n, d, D, m, TOY) > 3 * costs.map_transform_seconds(n, d, D, m, "rk")
    gram_toy, gram_rk = costs.gram_view_cost(n, d, D, "anova", m, TOY), costs.gram_view_cost(n, d, D, "anova", m, "rk")
    assert gram_toy.seconds - gram_rk.seconds == pytest.approx(
        toy - costs.map_transform_seconds(n, d, D, m, "rk"), rel=1e-9)
    errors_toy = costs.error_study_cost(n, d, "anova", m, [D], [(TOY, None)], 3)
    errors_rk = costs.error_study_cost(n, d, "anova", m, [D], [("rk", "rademacher")], 3)
    assert errors_toy.seconds - errors_rk.seconds == pytest.approx(
        3 * (toy - costs.map_transform_seconds(n, d, D, m, "rk")), rel=1e-9)
    # the timing page's peak holds the toy's 7 d D stored and 50 n D scratch floats
    timing = costs.timing_cost([TOY], [d], D, [D], d, n, m, 1)
    assert timing.bytes >= (nbytes((n, d), (n, D), (7 * d * D + 50 * n * D,)) * costs.OVERHEAD)
    assert timing.bytes > costs.timing_cost(["rk"], [d], D, [D], d, n, m, 1).bytes
    # the classifier's fit estimate is the toy's fit_seconds (0.5 s a fit, RK's about 0.008 s)
    fit = costs.classifier_fit_seconds([TOY, "rk"], 100, 50, d, [D], m).set_index("method")["seconds"]
    expected = (TOY_COST.fit_seconds(100, d, D, m) + 0.1 * TOY_COST.fit_seconds(50, d, D, m))
    assert fit[TOY] == pytest.approx(costs.CLASSIFIER_SCALE * expected + costs.FIT_SECONDS
                                     + costs.FIT_SECONDS_PER_FEATURE * D)
    assert fit[TOY] > 10 * fit["rk"]


# ---------------------------------------------------------------------------- engines and figures
def test_error_study_and_table1_view(toy_map, data):
    X = data[0]
    study = error_study(X, KernelSpec("anova", 2), [(TOY, None), ("rk", "rademacher")], [16, 64], 4,
                        random_state=1)
    mae = study[study.metric == "mean_abs_error"].groupby(["method", "D"])["value"].mean().unstack("D")
    assert set(mae.index) == {"TOY", "RK (Rademacher)"}
    # the same estimator in distribution as RK with Rademacher weights: errors of the same size,
    # and shrinking with D
    assert (mae[64] < mae[16]).all()
    assert 1 / 3 < mae.loc["TOY", 64] / mae.loc["RK (Rademacher)", 64] < 3
    wide, tidy = table1_view(study, d=X.shape[1])
    assert "TOY" in set(wide["Method"]) and (tidy.loc[tidy.method == "TOY", "n_trials"] == 4).all()
    fig = error_vs_D_figure(study)
    toy = next(t for t in fig.data if t.name == "TOY")
    assert toy.line.dash == "dash"  # draws its own weights: set apart from the distributions' colours


def test_timing_engine_and_figures(toy_map):
    df = time_maps([TOY, "rk"], [8, 16], [32], [10], repeats=1, warmup=0)
    assert set(df["map"]) == {TOY, "rk"} and (df["seconds"] > 0).all()
    assert "TOY (ms)" in median_table(df).columns
    fig = timing_figure(df, "d", slopes=growth_exponent(df, "d"))
    toy = next(t for t in fig.data if t.name.startswith("TOY: slope"))
    assert toy.line.color == TOY_COLOR
    pred = predicted_operations([TOY], "D", [64, 256])
    np.testing.assert_allclose(pred["operations"], 256 * np.array([64, 256]) * 2)
    assert predicted_figure(pred, "D").data[0].line.color == TOY_COLOR


def test_accuracy_engine_and_figure(toy_map, data):
    df = accuracy_study(data, ["kernel_svm", TOY], [8, 16], 2, split=(20, 8, 12), C_grid=(1.0, 10.0))
    toy = df[df["method"] == TOY]
    assert len(toy) == 4 and toy["accuracy"].between(0, 1).all() and set(toy["model_size"]) == {8, 16}
    est = estimate_seconds([TOY], 20, 12, 6, [8, 16], 2)
    assert list(est["D"]) == [8, 16] and (est["seconds"] > 0).all()
    assert total_seconds(est, 2, 20, 6, KernelSpec("anova", 2)) > est["seconds"].sum()
    fig = accuracy_figure(df)
    assert any(getattr(t.line, "color", None) == TOY_COLOR for t in fig.data)


# ---------------------------------------------------------------------------- pages
def test_gram_page_offers_and_draws_the_toy_map(toy_map, run_page):
    at = run_page("pages/1_Gram_matrices.py", map=TOY, n=30, D=32)
    assert not at.exception and not error_texts(at), error_texts(at)
    assert TOY in at.selectbox(key="map").options or "Toy ANOVA map (TOY)" in at.selectbox(key="map").options
    assert at.selectbox(key="map").value == TOY
    assert [[t["type"] for t in f["data"]] for f in plotly_figures(at)] == [["heatmap", "heatmap"]]  # default view


def test_timing_page_times_the_toy_map(toy_map, run_page):
    at = run_page("pages/5_Timing.py", tm_maps=f"rk,{TOY}", tm_sweep_n_features="8,16", tm_at_n_components="32",
                  tm_sweep_n_components="16,32", tm_at_n_features="8",
                  tm_n=10, tm_rep=1)
    assert not at.exception and not error_texts(at), error_texts(at)
    at.button(key="tm_run").click().run()
    assert not at.exception and not error_texts(at), error_texts(at)
    measured = [f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Mapping time")]
    assert len(measured) == 2
    for fig in measured:
        assert any(t["name"].startswith("TOY: slope") for t in fig["data"])


def test_classifiers_page_trains_on_the_toy_map(toy_map, run_page):
    at = run_page("pages/6_Classifiers.py", n=80, cl_methods=f"kernel_svm,{TOY}", cl_mult="1,2", cl_trials=1)
    assert not at.exception and not error_texts(at), error_texts(at)
    at.button(key="cl_run").click().run()
    assert not at.exception and not error_texts(at), error_texts(at)
    summary = table_values(at)[0]
    assert set(summary["method"]) == {"kernel_svm", TOY}
    assert isinstance(summary, pd.DataFrame) and summary["accuracy"].between(0, 1).all()
