"""The layers of the code (pyproject.toml [tool.importlinter]) hold, checked by import-linter.

Each contract is run on its own (``lint-imports --contract <id>``). A contract still broken by work in
progress elsewhere is listed in PENDING with the imports that break it: the test is then an expected
failure naming them, fails outright on any other broken import, and fails once the contract holds (so
the entry is removed and the contract is enforced from then on).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO

#: contract id -> the imports known to break it today; empty: every contract holds and is enforced (the
#: engines no longer call the CLI, the kernels <-> fastpaths cycle is gone).
PENDING: dict[str, set[str]] = {
}
CONTRACTS = ("layers", "pages-thin", "no-streamlit", "figures-pure", "acyclic")


def lint_imports(contract: str) -> subprocess.CompletedProcess:
    """``lint-imports`` on this checkout (its root first on the path, not an installed copy), one contract."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
                           "--config", str(REPO / "pyproject.toml"), "--contract", contract, "--no-cache"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def broken_imports(output: str) -> set[str]:
    """The imports a failing run names: "a -> b" of a layers / forbidden contract, "package: .a -> .b" of a
    cycle (the dependency import-linter would remove)."""
    found, package = set(), None
    for line in output.splitlines():
        cycle = re.match(r"No cycles are allowed in (\S+)\.", line.strip())
        if cycle:
            package = cycle.group(1)
        edge = re.match(r"^-\s+(\S+) -> (\S+?)(?: \(.*\))?$", line.strip())
        if edge:
            a, b = edge.groups()
            found.add(f"{package}: {a} -> {b}" if a.startswith(".") else f"{a} -> {b}")
    return found


@pytest.mark.parametrize("contract", CONTRACTS)
def test_import_contract(contract):
    run = lint_imports(contract)
    assert "Contracts:" in run.stdout, run.stdout + run.stderr  # it ran and checked something
    pending = PENDING.get(contract, set())
    if run.returncode == 0:
        assert not pending, f"{contract} holds now: remove it from PENDING so it stays enforced"
        return
    broken = broken_imports(run.stdout)
    assert broken, run.stdout  # broken but no import named: the output format changed, read it
    unexpected = broken - pending
    assert not unexpected, f"{contract} broken by {sorted(unexpected)}:\n{run.stdout}"
    pytest.xfail(f"{contract} still broken by work in progress: {', '.join(sorted(broken))}")


def test_the_contracts_catch_a_broken_layer(tmp_path):
    """The check is not vacuous: a copy of rkcore whose base imports the registry and streamlit breaks
    the layers and the streamlit contract."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(REPO / "rkcore", copy / "rkcore", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "rkapp", copy / "rkapp", ignore=shutil.ignore_patterns("__pycache__", "pages"))
    shutil.copytree(REPO / "pages", copy / "pages", ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "pages" / "1_Gram_matrices.py", "a") as f:  # a page computing on its own
        f.write("\nfrom rkcore.studies.gram import gram_pair\n")
    shutil.copy(REPO / "pyproject.toml", copy / "pyproject.toml")
    with open(copy / "rkcore" / "base" / "arrays.py", "a") as f:
        f.write("\nimport streamlit\nfrom ..registry import MAPS\n")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    out = {}
    for contract in ("layers", "no-streamlit", "pages-thin"):
        out[contract] = subprocess.run(
            [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()", "--contract",
             contract, "--no-cache"], cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    assert out["layers"].returncode != 0 and "rkcore.base.arrays -> rkcore.registry" in broken_imports(
        out["layers"].stdout), out["layers"].stdout
    assert out["no-streamlit"].returncode != 0 and "rkcore.base.arrays -> streamlit" in broken_imports(
        out["no-streamlit"].stdout), out["no-streamlit"].stdout
    assert out["pages-thin"].returncode != 0 and "pages.1_Gram_matrices -> rkcore.studies.gram" in broken_imports(
        out["pages-thin"].stdout), out["pages-thin"].stdout
