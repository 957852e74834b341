"""Public means public (issue 36): no module imports a private name (``_name``) from another package of the
house, and scikit-learn's private API is used only where the list below says why.

A helper that another package needs has a public name in the module that owns it; a private name stays
inside its package (its siblings may share it). scikit-learn offers no public way to declare an estimator's
parameter constraints or to wrap ``fit`` in its validation context, so the estimators use the same private
helpers its own estimators do: pinned by ``scikit-learn>=1.6,<2`` in pyproject.toml and checked at both ends
of that range by CI's floors job (.ci/floors.sh) and the main run.
"""
from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

#: scikit-learn's private names the estimators may import, and why
SKLEARN_EXCEPTIONS = {
    ("sklearn.base", "_fit_context"): "fit under scikit-learn's parameter validation and config context",
    ("sklearn.utils._param_validation", "Interval"): "declarative parameter constraints (_parameter_constraints)",
    ("sklearn.utils._param_validation", "StrOptions"): "declarative parameter constraints (_parameter_constraints)",
    ("sklearn.utils.validation", "_check_sample_weight"): "sample_weight validated as scikit-learn's estimators do",
}


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def private_imports(root: Path = REPO) -> list[tuple[str, str, str]]:
    """(file, source module, name) of every import of a private name across packages or from scikit-learn."""
    found = []
    for file in sorted([*(root / "rkcore").rglob("*.py"), *(root / "rkapp").rglob("*.py")]):
        parts = list(file.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        module_parts = parts[:-1] if is_package else parts
        module = ".".join(module_parts)
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = module_parts if is_package else module_parts[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                private_module = any(p.startswith("_") and not p.startswith("__") for p in source.split("."))
                where = file.relative_to(root).as_posix()
                if source.startswith(("rkcore", "rkapp")) and private and _package(source) != _package(module):
                    found.append((where, source, alias.name))
                elif source.startswith("sklearn") and (private or private_module):
                    if (source, alias.name) not in SKLEARN_EXCEPTIONS:
                        found.append((where, source, alias.name))
    return found


def test_no_private_name_crosses_a_package():
    assert not private_imports(), "\n".join(f"{f}: from {s} import {n}" for f, s, n in private_imports())


def test_the_check_sees_a_private_import(tmp_path):
    (tmp_path / "rkcore" / "maps").mkdir(parents=True)
    (tmp_path / "rkapp").mkdir()
    (tmp_path / "rkcore" / "maps" / "probe.py").write_text(
        "from rkcore.kernels.numerics import _dense\nfrom ..kernels.exact import _hidden\n"
        "from .circulant import _sibling\nfrom sklearn.utils._testing import ignore_warnings\n")
    assert private_imports(tmp_path) == [
        ("rkcore/maps/probe.py", "rkcore.kernels.numerics", "_dense"),
        ("rkcore/maps/probe.py", "rkcore.kernels.exact", "_hidden"),
        ("rkcore/maps/probe.py", "sklearn.utils._testing", "ignore_warnings")]


def private_reexports(root: Path = REPO) -> list[tuple[str, str]]:
    """(package __init__, name) of every private name a package's ``__init__`` imports (re-exports) from its
    modules: a package's face shows its public API only."""
    found = []
    for file in sorted([*(root / "rkcore").rglob("__init__.py"), *(root / "rkapp").rglob("__init__.py")]):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                found += [(file.relative_to(root).as_posix(), alias.name) for alias in node.names
                          if alias.name.startswith("_") and not alias.name.startswith("__")]
    return found


def test_no_package_re_exports_a_private_name():
    assert not private_reexports(), "\n".join(f"{f}: re-exports {n}" for f, n in private_reexports())


def test_the_check_sees_a_private_re_export(tmp_path):
    (tmp_path / "rkcore" / "learners").mkdir(parents=True)
    (tmp_path / "rkapp").mkdir()
    (tmp_path / "rkcore" / "learners" / "__init__.py").write_text(
        "from .common import (LOSSES,\n    _binary_labels)\nfrom . import ratings as _ratings\n"
        "from .fit import _Fit as Fit\n")
    assert private_reexports(tmp_path) == [("rkcore/learners/__init__.py", "_binary_labels"),
                                           ("rkcore/learners/__init__.py", "_Fit")]
