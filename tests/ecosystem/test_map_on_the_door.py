"""The map on the door is true and stays true (issue 36): every path and dotted name that a docstring or
comment of the code names exists, and the README's "Module by module" table names existing files in
the room (package) they live in, and every module of rkcore is on it.

A moved module fails here with the stale places listed, instead of leaving a reader to hunt for
``rkcore.fastpaths`` or ``tests/test_fastpaths.py``.
"""
from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

#: a path inside the repository: rkcore/kernels/exact.py, tests/pages/fuzzing.py, benchmarks/results/x.md
PATH = re.compile(r"(?<![\w./-])((?:rkcore|rkapp|tests|benchmarks|pages)/[\w./-]*\w)")
#: a dotted name of the code: rkcore.kernels.exact.anova_kernel, rkapp.guard
DOTTED = re.compile(r"(?<![\w./-])((?:rkcore|rkapp)(?:\.[A-Za-z_]\w*)+)")
#: paths that are not files of the repository: examples of a pattern, folders the code creates, the wheel's layout
NOT_REPOSITORY_PATHS = {"rkapp/pages", "tests/screenshots", "rkapp/rkcore", "pages/x.py", "benchmarks/maps/x.py",
                        "benchmarks/results/a.md", "benchmarks/results/x.md",
                        "rkcore/maps/probe.py"}  # written under tmp_path by test_public_names
SOURCES = sorted(p for pattern in ("rkcore/**/*.py", "rkapp/**/*.py", "pages/*.py", "tests/**/*.py",
                                   "benchmarks/**/*.py", "app.py") for p in REPO.glob(pattern)
                 if p.name != "test_map_on_the_door.py")  # this file names stale references on purpose


def _resolves(name: str) -> bool:
    """A module, or an attribute chain of the longest importable prefix."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attribute in parts[k:]:
            if attribute in ("__name__", "__path__", "__file__", "__version__"):
                return True
            if not hasattr(obj, attribute):
                return False
            obj = getattr(obj, attribute)
        return True
    return False


def stale_references(files: list[Path]) -> list[str]:
    stale = []
    for file in files:
        text = file.read_text(encoding="utf-8")
        where = file.relative_to(REPO).as_posix()
        for match in PATH.finditer(text):
            path = match.group(1).rstrip(".")
            if path not in NOT_REPOSITORY_PATHS and not (REPO / path).exists():
                stale.append(f"{where}: {path}")
        for match in DOTTED.finditer(text):
            name = match.group(1).rstrip(".")
            if not _resolves(name):
                stale.append(f"{where}: {name}")
    return stale


def test_every_path_and_name_the_code_mentions_exists():
    stale = stale_references(SOURCES)
    assert not stale, "stale references:\n" + "\n".join(stale)


def test_the_check_finds_a_stale_reference(tmp_path, monkeypatch):
    """The check itself fails on what it guards: a moved module named in a docstring."""
    probe = REPO / "tests" / "ecosystem" / "_stale_probe.py"
    monkeypatch.setattr("tests.ecosystem.test_map_on_the_door.REPO", REPO)
    try:
        probe.write_text('"""See rkcore.fastpaths and tests/test_fastpaths.py; rkcore.kernels.exact is real."""\n')
        assert stale_references([probe]) == ["tests/ecosystem/_stale_probe.py: tests/test_fastpaths.py",
                                             "tests/ecosystem/_stale_probe.py: rkcore.fastpaths"]
    finally:
        probe.unlink(missing_ok=True)


# ---------------------------------------------------------------------------- the README's module table
def module_table() -> list[tuple[str, str]]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("### Module by module", 1)[1]
    rows = []
    for line in section.splitlines()[1:]:
        if line.startswith(("| room", "|---")):
            continue
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows.append((cells[0], cells[1]))
    return rows


def _paths_of(cell: str) -> list[str]:
    """Every file or folder a module cell names; a bare ``name.py`` is beside the previous path."""
    paths, folder = [], None
    for token in re.findall(r"`([^`]+)`", cell):
        if token.startswith("rkcore/"):
            paths.append(token)
            folder = token if token.endswith("/") else token.rsplit("/", 1)[0] + "/"
        elif re.fullmatch(r"[\w]+\.py", token) and folder:
            paths.append(folder + token)
    return paths


def room_of(path: str) -> str:
    """The room of a path: its package under rkcore (rkcore/kernels/exact.py -> rkcore.kernels), or the
    module itself for a top-level module (rkcore/metrics.py -> rkcore.metrics)."""
    parts = path.strip("/").split("/")
    return "rkcore." + (parts[1][:-3] if parts[1].endswith(".py") else parts[1])


def test_the_module_table_names_existing_files_in_their_rooms():
    rows = module_table()
    assert len(rows) > 20
    wrong = []
    for room, cell in rows:
        paths = _paths_of(cell)
        assert paths, f"a row names no file: {cell[:80]}"
        for path in paths:
            if not (REPO / path).exists():
                wrong.append(f"{path}: no such file")
            elif room_of(path) != room.strip("`"):
                wrong.append(f"{path}: listed under {room}, lives in {room_of(path)}")
    assert not wrong, "\n".join(wrong)


def test_every_module_of_rkcore_is_on_the_table():
    named = {p for _, cell in module_table() for p in _paths_of(cell)}
    folders = {p for p in named if p.endswith("/")}
    missing = []
    for file in sorted((REPO / "rkcore").rglob("*.py")):
        path = file.relative_to(REPO).as_posix()
        if file.name == "__init__.py" and path.count("/") == 1:
            continue
        if file.name == "__init__.py" or path in named or any(path.startswith(f) for f in folders):
            continue
        missing.append(path)
    assert not missing, f"modules the README's table does not name: {missing}"


@pytest.mark.parametrize("path, room", [("rkcore/kernels/exact.py", "rkcore.kernels"), ("rkcore/metrics.py", "rkcore.metrics"),
                                        ("rkcore/studies/costs/", "rkcore.studies")])
def test_room_of(path, room):
    assert room_of(path) == room
