"""Documentation is checked, not hoped for: numpydoc sections of the public API, and every
doctest in the rkcore package runs with the suite."""
from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import warnings

import pytest
from numpydoc.validate import validate

import rkcore

#: the public API: estimators (with their public methods) and study engines
PUBLIC = {
    "rkcore.maps.random_kernel": ["RandomKernel"],
    "rkcore.maps.circulant": ["SignedCirculantRandomKernel"],
    "rkcore.maps.maclaurin": ["RandomMaclaurin"],
    "rkcore.teaching.compositional": ["CompositionalFeatures"],
    "rkcore.learners": ["ExactKernelSVC", "FactorizationMachineClassifier", "AllSubsetsModelClassifier",
                      "SparseRandomFeatureClassifier", "random_feature_pipeline", "exact_gram"],
    "rkcore.studies.errors": ["error_study"],
    "rkcore.studies.accuracy": ["accuracy_study"],
    "rkcore.studies.timing": ["time_maps"],
}
METHODS = ("fit", "transform", "predict", "decision_function", "predict_proba", "kernel_estimate",
           "transform_kept", "projection_matrix")
#: numpydoc codes that must not occur: undocumented / unknown / undescribed parameters,
#: missing Returns, missing docstring
REQUIRED = {"PR01", "PR02", "PR07", "RT01", "GL08"}


def _targets():
    for module, names in PUBLIC.items():
        mod = importlib.import_module(module)
        for name in names:
            obj = getattr(mod, name)
            yield f"{module}.{name}", True
            if inspect.isclass(obj):
                for meth in METHODS:
                    if meth in obj.__dict__:
                        yield f"{module}.{name}.{meth}", False


@pytest.mark.parametrize("path,needs_example", list(_targets()))
def test_numpydoc_sections(path, needs_example):
    codes = REQUIRED | ({"EX01"} if needs_example else set())
    errors = [(code, msg) for code, msg in validate(path)["errors"] if code in codes]
    assert not errors, f"{path}: {errors}"


def _modules():
    names = [rkcore.__name__]
    names += [m.name for m in pkgutil.walk_packages(rkcore.__path__, prefix="rkcore.")]
    return sorted(names)


def test_doctests_exist():
    total = sum(len(t.examples) for name in _modules()
                for t in doctest.DocTestFinder().find(importlib.import_module(name)))
    assert total >= 30


@pytest.mark.parametrize("module", _modules())
def test_doctests(module):
    mod = importlib.import_module(module)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an example must run cleanly (no convergence warnings)
        result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {module}"
