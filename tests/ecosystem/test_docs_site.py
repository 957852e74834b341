"""The documentation site's pieces that run without building it (the build itself, with warnings as errors
and the gallery executed, is .ci/docs.sh): the offline check finds network resources, the docs extra leaves
the app's install alone, and the API reference and the gallery list what exists."""
from __future__ import annotations

import importlib
import re
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "docs"))
from check_offline import main, remote_resources  # noqa: E402


def _site(tmp_path: Path, body: str, css: str = "") -> Path:
    (tmp_path / "index.html").write_text(f"<html><head></head><body>{body}</body></html>")
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "theme.css").write_text(css)
    return tmp_path


@pytest.mark.parametrize("resource", [
    '<script src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-chtml.js"></script>',
    '<link rel="stylesheet" href="//fonts.googleapis.com/css?family=Lato">',
    '<img src="http://example.org/logo.png">',
    '<div style="background: url(https://example.org/a.png)"></div>',
])
def test_the_offline_check_finds_what_a_page_would_fetch(tmp_path, resource):
    site = _site(tmp_path, resource)
    assert len(remote_resources(site)) == 1
    assert main(["check", str(site)]) == 1


def test_the_offline_check_passes_links_and_local_files_and_reads_style_sheets(tmp_path):
    site = _site(tmp_path, '<a href="https://hdl.handle.net/2115/73469">paper</a><script src="_static/a.js"></script>'
                           '<link rel="canonical" href="https://example.org/">',
                 css="@font-face { src: url('../fonts/x.woff2') }")
    assert remote_resources(site) == []
    (site / "_static" / "theme.css").write_text("@import url('https://fonts.example.org/x.css');")
    assert len(remote_resources(site)) == 1


def test_the_docs_extra_is_bounded_and_the_app_install_gains_nothing():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    names = [re.split(r"[<>=\[;]", requirement)[0].strip().lower() for requirement in extras["docs"]]
    assert {"sphinx", "numpydoc", "sphinx-gallery", "pydata-sphinx-theme"} <= set(names)
    assert all(re.search(r"[<>]=?", r) for r in extras["docs"] if not r.startswith("rkcore[")), extras["docs"]
    app_side = " ".join(project["dependencies"] + extras["app"] + extras["figures"]).lower()
    assert not [name for name in names if name != "rkcore" and name in app_side]
    for tool in ("nbformat", "nbclient", "ipykernel"):  # the notebook test's tools are test tools
        assert any(r.startswith(tool) for r in extras["test"]) and tool not in app_side


def test_the_api_reference_names_modules_that_import():
    modules = re.findall(r"^   (rkcore(?:\.\w+)+)$", (REPO / "docs" / "api.rst").read_text(), re.M)
    assert len(modules) > 30
    for module in modules:
        importlib.import_module(module)


def test_the_gallery_has_the_examples_the_site_promises():
    examples = {p.stem for p in (REPO / "examples").glob("plot_*.py")}
    assert {"plot_rk_vs_exact_anova", "plot_rademacher_vs_gaussian", "plot_scrk_vs_rk_timing",
            "plot_accuracy_vs_exact_svm", "plot_orf_vs_rff", "plot_out_of_core_dask"} <= examples
    for path in (REPO / "docs").rglob("*.md"):  # every {doc}`auto_examples/...` link names an example
        for target in re.findall(r"\{doc\}`auto_examples/(\w+)`", path.read_text()):
            assert target in examples, (path, target)
