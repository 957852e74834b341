"""The Classifiers views (rkcore/views/classifiers.py): the classifier study (a measurement) and the regression
study; their computes are pure and picklable, run on the default settings on a small built-in dataset, and the
page's studies pass through the server's admission."""
from __future__ import annotations

import pickle

import pytest

from rkapp import guard
from rkcore.base.admission import Admission
from rkcore.views import FIELDS, ViewSpec, all_views, classifiers

PAGE = "pages/6_Classifiers.py"
DEFAULTS = {name: FIELDS[name].default for name in classifiers.SETTINGS}


def _data(spec: ViewSpec):
    from rkapp.data import load_data

    return load_data(spec)


def test_the_views_are_registered_and_their_functions_pickle():
    views = all_views()
    assert views["cl"] is classifiers.CLASSIFIERS and classifiers.CLASSIFIERS.measure
    assert views["cl_reg"] is classifiers.REGRESSION and not classifiers.REGRESSION.measure
    for view in (classifiers.CLASSIFIERS, classifiers.REGRESSION):
        for function in (view.compute, view.cost, view.reproduce):
            assert pickle.loads(pickle.dumps(function)) is function


def test_compute_on_the_defaults_returns_a_picklable_result():
    spec = ViewSpec(n=100)
    result = classifiers.CLASSIFIERS.run(spec, _data(spec), **DEFAULTS)
    back = pickle.loads(pickle.dumps(result))
    assert back.table.equals(result.table) and back.convergence_warnings == result.convergence_warnings
    assert set(result.table["method"]) == set(DEFAULTS["cl_methods"])
    assert result.summary()["accuracy"].between(0, 1).all() and result.note()


def test_regression_compute_returns_a_picklable_result():
    spec = ViewSpec(dataset="movielens_ratings", n=80)
    data = _data(spec)
    assert classifiers.is_regression_target(data.y)
    result = classifiers.REGRESSION.run(spec, data, cl_methods=("kernel_svm", "rk"), cl_mult=("1",), cl_trials=1)
    back = pickle.loads(pickle.dumps(result))
    assert back.table.equals(result.table) and back.table.attrs == result.table.attrs
    assert (result.summary()["rmse"] > 0).all()


def test_business_rules_live_in_the_view():
    assert "scrk" in classifiers.methods_for("anova") and "scrk" not in classifiers.methods_for("polynomial")
    assert classifiers.without_fm(("fm", "rk"), 1) == (("rk",), True)
    assert classifiers.without_fm(("fm", "rk"), 2) == (("fm", "rk"), False)
    with pytest.raises(ValueError, match="at least one method"):
        classifiers.cost(ViewSpec(), 100, 10, **{**DEFAULTS, "cl_methods": ()})
    with pytest.raises(ValueError, match="no labels"):
        classifiers.check_labels(_data(ViewSpec(dataset="gaussian", n=50)))


def _spied(monkeypatch, name: str) -> tuple[Admission, list[int]]:
    admission = Admission(slots=1, budget=2**40)
    monkeypatch.setattr(guard, "ADMISSION", admission)
    monkeypatch.setattr(guard, "LIGHT_SECONDS", 0.0)
    running, real = [], getattr(classifiers, name)

    def spy(*args, **kwargs):
        running.append(admission.state()["running"])
        return real(*args, **kwargs)

    monkeypatch.setattr(classifiers, name, spy)
    return admission, running


def test_the_page_study_passes_through_admission(run_page, monkeypatch):
    """The study runs only inside a server slot: a page calling compute directly, bypassing run_view, fails this."""
    admission, running = _spied(monkeypatch, "accuracy_study")
    at = run_page(PAGE, n=80, cl_methods="kernel_svm,rk", cl_mult="1,2", cl_trials=1)
    assert not running, "a measurement runs only on its button"
    at.button(key="cl_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert running == [1] and admission.state()["running"] == 0


def test_the_page_regression_passes_through_admission(run_page, monkeypatch):
    admission, running = _spied(monkeypatch, "regression_study")
    at = run_page(PAGE, dataset="movielens_ratings", n=80, cl_methods="kernel_svm,rk", cl_mult="1", cl_trials=1,
                  timeout=300)
    for button in [b for b in at.button if b.key == "cl_reg_run"]:
        button.click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert running == [1] and admission.state()["running"] == 0
