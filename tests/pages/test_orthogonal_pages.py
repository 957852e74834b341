"""The Distributions page takes the block-orthogonal RK weights from the distribution table with no page list of
its own: chosen beside i.i.d. ones, they get measured variances (no exact line: the formula is for i.i.d.
weights) and a ratio table against i.i.d. weights of the same law with its note."""
from __future__ import annotations

from tests.conftest import error_texts, plotly_figures, table_values

VARIANCE = "pages/4_Distributions_and_variance.py"


def test_orthogonal_rows_beside_iid_distributions(run_page):
    at = run_page(VARIANCE, n=40, dist="rademacher,gaussian-orthogonal,rademacher-hadamard", dv_scrk="false",
                  dv_vtrials=50, dv_trials=5, dv_mult="1,2", timeout=240)
    assert not at.exception and not error_texts(at), error_texts(at)
    ratio = next(t for t in table_values(at) if "median Var / i.i.d. Var" in t.columns)
    assert set(ratio["distribution"]) == {"gaussian-orthogonal", "rademacher-hadamard"}
    assert (ratio["median Var / i.i.d. Var"] > 0).all()
    variance = next(f for f in plotly_figures(at) if any("empirical" in (t.get("name") or "") for t in f["data"]))
    exact_names = {t["name"] for t in variance["data"] if "exact" in (t.get("name") or "")}
    assert exact_names == {"Rademacher: exact Var/D"}  # no exact line for the dependent rows
    assert any("Hadamard rows: variance" in m.value for m in at.markdown) or \
        any("Hadamard rows: variance" in str(getattr(e, "body", "")) for e in at.main)


def test_only_orthogonal_rows_chosen(run_page):
    at = run_page(VARIANCE, n=30, dist="gaussian-orthogonal,rademacher-hadamard", dv_scrk="false",
                  dv_vtrials=50, dv_trials=5, dv_mult="1", timeout=240)
    assert not at.exception and not error_texts(at), error_texts(at)
    assert any("median Var / i.i.d. Var" in t.columns for t in table_values(at))


RFF = "pages/8_Random_Fourier_features.py"


def test_rff_page_compares_the_registry_fourier_maps(run_page):
    at = run_page(RFF, n=40, rff_Dmax=256, rff_trials=2, rff_mult="1,4", rff_strials=5, rff_struct="true",
                  timeout=300)
    assert not at.exception and not error_texts(at), error_texts(at)
    for button in [b for b in at.button if b.key in ("rff_struct_run", "rff_time_run")]:
        button.click().run()
    assert not at.exception and not error_texts(at), error_texts(at)
    mse = next(f for f in plotly_figures(at) if "mean squared error" in f["layout"]["title"]["text"])
    assert {t["name"] for t in mse["data"]} == {"RFF", "RFF (cos/sin)", "ORF", "SORF", "FastFood"}
    summary = next(t for t in table_values(at) if "MSE ORF" in t.columns)
    assert list(summary["D"]) == [20, 80] and "ORF / RFF (cos/sin)" in summary.columns
    timing = next(f for f in plotly_figures(at) if f["layout"]["title"]["text"].startswith("Mapping time"))
    assert any(t["name"].startswith("FastFood: slope") for t in timing["data"])


def test_rff_page_refuses_an_empty_choice(run_page):
    at = run_page(RFF, n=40, rff_Dmax=256, rff_trials=2, rff_mult="1", rff_strials=5, rff_struct="true",
                  timeout=300)
    at.multiselect(key="rff_maps").set_value([]).run()
    assert not at.exception
    assert any("at least one map" in e for e in error_texts(at)), error_texts(at)


CLASSIFIERS = "pages/6_Classifiers.py"


def test_classifiers_page_regression_on_movielens_ratings(run_page):
    at = run_page(CLASSIFIERS, dataset="movielens_ratings", n=120, cl_methods="kernel_svm,fm,rk", cl_mult="1",
                  cl_trials=1, timeout=300)
    for button in [b for b in at.button if b.key == "cl_reg_run"]:
        button.click().run()
    assert not at.exception and not error_texts(at), error_texts(at)
    summary = next(t for t in table_values(at) if "rmse" in t.columns)
    assert set(summary["label"]) == {"Kernel ridge (exact)", "Factorization machine (regression)", "Ridge + RK"}
    assert (summary["rmse"] > 0).all()
    assert any(f["layout"]["title"]["text"].startswith("Regression: test RMSE") for f in plotly_figures(at))


def test_classifiers_page_runs_the_binary_models_one_vs_rest_on_many_classes(run_page):
    at = run_page(CLASSIFIERS, dataset="wine", n=150, cl_methods="kernel_svm,fm", cl_mult="1", cl_trials=1,
                  timeout=300)
    assert not at.exception and not error_texts(at), error_texts(at)
    assert any("one-vs-rest" in c.value for c in at.caption)
    at.button(key="cl_run").click().run()
    assert not at.exception and not error_texts(at), error_texts(at)
    summary = table_values(at)[0]
    assert set(summary["method"]) == {"kernel_svm", "fm"} and summary["accuracy"].between(0, 1).all()
