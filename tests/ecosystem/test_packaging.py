"""The install stays lean and honest: the library needs neither streamlit nor plotly, the app's command
says what to install when they are missing, and the packaging metadata is the current standard."""
from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest

from tests.conftest import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]


def _run_without(blocked: list[str], code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter where importing any of ``blocked`` fails as if not installed."""
    prelude = "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in blocked)
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, cwd=REPO,
                          timeout=300)


def test_library_dependencies_leave_out_the_app_and_the_figures():
    names = {req.split(">")[0].split("<")[0].split("=")[0].split("[")[0].strip() for req in PYPROJECT["dependencies"]}
    assert not names & {"streamlit", "plotly", "pytest", "dask", "pyarrow"}, names
    extras = PYPROJECT["optional-dependencies"]
    assert any(r.startswith("plotly") for r in extras["figures"])
    assert any(r.startswith("streamlit") for r in extras["app"]) and "rkcore[figures]" in extras["app"]


def test_library_works_without_plotly_and_streamlit():
    code = """
import importlib, pkgutil, rkcore
skipped = ("rkcore.figures", "rkcore.views")  # the views draw: they need the figures extra
names = [m.name for m in pkgutil.walk_packages(rkcore.__path__, prefix="rkcore.") if not m.name.startswith(skipped)]
for name in names:
    importlib.import_module(name)
import numpy as np
from rkcore import RandomKernel
Z = RandomKernel(16, random_state=0).fit_transform(np.random.RandomState(0).rand(5, 4))
assert Z.shape == (5, 16)
try:
    import rkcore.figures
except ModuleNotFoundError as exc:
    print(exc)
print("ok", len(names))
"""
    done = _run_without(["plotly", "streamlit"], code)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0] == ("rkcore.figures draws with plotly, which is not installed: pip install 'rkcore[figures]'")
    assert lines[-1].startswith("ok") and int(lines[-1].split()[1]) > 20


@pytest.mark.parametrize("blocked,missing", [(["streamlit"], "streamlit"), (["streamlit", "plotly"], "streamlit and plotly")])
def test_app_command_without_the_app_extra_says_what_to_install(blocked, missing):
    done = _run_without(blocked, "from rkapp.cli import main; main([])")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"rkcore-app needs {missing}: pip install 'rkcore[app]'\n"  # one line, no traceback


def test_licence_is_an_spdx_expression_without_classifiers():
    assert PYPROJECT["license"] == "MIT" and PYPROJECT["license-files"] == ["LICENSE"]
    assert not [c for c in PYPROJECT["classifiers"] if c.startswith("License ::")]
    assert (REPO / "rkcore" / "py.typed").is_file()


def test_requirements_files_are_the_readme_commands():
    readme = (REPO / "README.md").read_text()
    assert "pip install -r requirements.txt && streamlit run app.py" in readme
    assert "pip install -r requirements-test.txt && python -m pytest -q" in readme
    assert (REPO / "requirements.txt").read_text().split("\n# ")[-1].strip().endswith("-e .[app]")
    test_reqs = [line for line in (REPO / "requirements-test.txt").read_text().splitlines() if not line.startswith("#")]
    assert test_reqs == ["-r requirements.txt", "-e .[test]"]
    ci = (REPO / ".ci" / "run").read_text()
    assert "pip install -r requirements-test.txt && python -m pytest -q" in ci


def test_version_is_written_once():
    """pyproject takes the version from rkcore.__version__ (setuptools reads the literal statically), so a
    release bumps one line; importlib.metadata is not used at run time, where an editable install in another
    checkout would answer for that checkout."""
    import ast
    import tomllib

    import rkcore
    from tests.conftest import REPO

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "rkcore.__version__"}
    tree = ast.parse((REPO / "rkcore" / "__init__.py").read_text(encoding="utf-8"))
    literal = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
               and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__version__"]]
    assert literal == [rkcore.__version__]
