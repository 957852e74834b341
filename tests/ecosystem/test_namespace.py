"""One public namespace: every map from ``rkcore.maps``, every learner from ``rkcore.learners``, the main names
from ``rkcore`` (loaded on first use, so ``import rkcore`` stays cheap), and no public class reachable only
through a private-looking path."""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest
from sklearn.base import BaseEstimator

import rkcore

#: the package a user imports from -> where its classes are implemented
PUBLIC_PACKAGES = ("rkcore.maps", "rkcore.learners")
TOP_LEVEL = ("RandomKernel", "SignedCirculantRandomKernel", "RandomMaclaurin", "OrthogonalRandomFeatures",
             "StructuredOrthogonalRandomFeatures", "FastFood", "RandomFourierPairs", "ExactKernelSVC",
             "FactorizationMachineClassifier", "AllSubsetsModelClassifier", "SparseRandomFeatureClassifier",
             "RandomFeatureSGDClassifier", "FactorizationMachineRegressor", "ExactKernelRidge", "ItemsetFamily",
             "KernelSpec", "anova_kernel", "all_subsets_kernel", "itemset_kernel")


def _modules(package: str):
    pkg = importlib.import_module(package)
    yield pkg
    for info in pkgutil.walk_packages(pkg.__path__, package + "."):
        yield importlib.import_module(info.name)


def _public_classes(module):
    return [(name, obj) for name, obj in vars(module).items()
            if inspect.isclass(obj) and obj.__module__ == module.__name__ and not name.startswith("_")]


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_every_estimator_of_a_package_is_importable_from_it(package):
    pkg = importlib.import_module(package)
    hidden = [f"{module.__name__}.{name}" for module in _modules(package) for name, cls in _public_classes(module)
              if issubclass(cls, BaseEstimator) and getattr(pkg, name, None) is not cls]
    assert not hidden, f"importable only from a sub-module, not from {package}: {hidden}"
    assert all(getattr(pkg, name) is not None for name in pkg.__all__)


def test_no_public_class_only_behind_a_private_path():
    """A public class defined in a module with a private-looking path (a component starting with "_") must
    also be exported by a public module."""
    exported = {id(obj) for module in _modules("rkcore") if not any(p.startswith("_") for p in module.__name__.split("."))
                for obj in vars(module).values() if inspect.isclass(obj)}
    private_only = [f"{module.__name__}.{name}" for module in _modules("rkcore")
                    if any(p.startswith("_") for p in module.__name__.split(".")[1:])
                    for name, cls in _public_classes(module) if id(cls) not in exported]
    assert not private_only, private_only


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_main_names_from_the_top_level(name):
    assert name in rkcore.__all__ and name in dir(rkcore)
    obj = getattr(rkcore, name)
    assert obj.__name__ == name


def test_import_rkcore_stays_cheap():
    """The top level loads its names on first use: ``import rkcore`` (and with it the CLI's --version)
    does not import numpy, SciPy or scikit-learn."""
    code = "import sys, rkcore; print(sorted(m for m in ('numpy', 'scipy', 'sklearn') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"
