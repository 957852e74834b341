"""Sphinx configuration of rkcore's documentation site (build: ``bash .ci/docs.sh`` or
``sphinx-build -W --keep-going -b html docs docs/_build/html``).

Why these tools: Sphinx with numpydoc and sphinx-gallery is what scikit-learn, NumPy and SciPy build their
sites with, and rkcore's docstrings are already numpydoc (tests/ecosystem checks them), so the API reference
is generated from them as they are; sphinx-gallery runs every script of ``examples/`` at build time and
offers each as ``.py`` and ``.ipynb``. The theme is pydata-sphinx-theme, the one those three projects use;
its fonts and icons ship inside the package. The site opens offline: MathJax is served from ``_static``
(the MathJax 3.2.2 copy that the ``django-static-mathjax`` package ships, no dependencies), not from a CDN,
and the gallery draws with matplotlib (static PNGs, no JavaScript).
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
REPO = DOCS.parent
sys.path.insert(0, str(REPO))  # document this checkout's rkcore, not another installed copy
os.environ.setdefault("MPLBACKEND", "Agg")

import rkcore  # noqa: E402

project = "rkcore"
author = "rkcore developers"
copyright = "rkcore developers, MIT licence"
version = release = rkcore.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",  # the benchmark results and the guide pages are Markdown (benchmarks/results/*.md as written)
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "README.md", "auto_examples/*.ipynb", "auto_examples/*.py", "**.zip",
                    "auto_examples/*.md5", "auto_examples/*.codeobj.json"]
templates_path = ["_templates"]
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3
# The results files start at level 1 and some skip a level (## then ####): fine to read, not an error.
suppress_warnings = ["myst.header"]

# ---------------------------------------------------------------- API reference (docstrings -> pages)
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": False}
autodoc_typehints = "none"  # numpydoc's Parameters sections say the types, in the reader's words
numpydoc_show_class_members = False  # autodoc lists the members once; numpydoc's tables would repeat them
numpydoc_class_members_toctree = False

# ---------------------------------------------------------------- the executed gallery
sphinx_gallery_conf = {
    "examples_dirs": [str(REPO / "examples")],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",  # every plot_*.py runs at build time
    "download_all_examples": True,
    "remove_config_comments": True,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "reset_modules": ("matplotlib",),
    "abort_on_example_error": True,
    "show_memory": False,
    "min_reported_time": 1,
    # the timing tables pages load jQuery DataTables from a CDN: the site must open offline
    "write_computation_times": False,
}

# ---------------------------------------------------------------- HTML, offline
html_theme = "pydata_sphinx_theme"
html_title = f"rkcore {release}"
html_static_path = ["_static"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": [],
    "secondary_sidebar_items": ["page-toc", "sourcelink"],
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
html_show_sourcelink = True


def _local_mathjax() -> str:
    """Copy MathJax 3 (tex + SVG output, all TeX extensions in one file: nothing is fetched later) into
    ``_static/mathjax/`` and return its path relative to the HTML root."""
    spec = importlib.util.find_spec("mathjax")  # the django-static-mathjax package; nothing is imported
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the docs need MathJax served locally: pip install 'rkcore[docs]'")
    source = Path(next(iter(spec.submodule_search_locations))) / "static" / "mathjax" / "es5" / "tex-svg-full.js"
    target = DOCS / "_static" / "mathjax" / "tex-svg-full.js"
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists() or target.stat().st_size != source.stat().st_size:
        shutil.copyfile(source, target)
    return "mathjax/tex-svg-full.js"


mathjax_path = _local_mathjax()
mathjax3_config = {"svg": {"fontCache": "global"}}


def _benchmark_pages() -> None:
    """One page per ``benchmarks/results/*.md`` (an include of the file as the scripts wrote it), so a new
    results file is on the site without editing the docs; generated, not committed (docs/benchmarks/results/)."""
    pages = DOCS / "benchmarks" / "results"
    pages.mkdir(parents=True, exist_ok=True)
    wanted = {}
    for result in sorted((REPO / "benchmarks" / "results").glob("*.md")):
        wanted[result.name] = (f"```{{include}} ../../../benchmarks/results/{result.name}\n```\n\n"
                               f"*This page is `benchmarks/results/{result.name}` as the benchmark wrote it.*\n")
    for stale in pages.glob("*.md"):
        if stale.name not in wanted:
            stale.unlink()
    for name, text in wanted.items():
        page = pages / name
        if not page.exists() or page.read_text() != text:  # unchanged pages keep their time: no rebuild
            page.write_text(text)


_benchmark_pages()


# ---------------------------------------------------------------- docstrings as the site reads them
# rkcore's docstrings are numpydoc written to be read as plain text too (help(), the IDE): |x| is an
# absolute value and names ending in "_" are fitted attributes. reStructuredText reads |x| as a
# substitution and name_ as a link, so outside literals, math and doctest lines both are escaped here.
_LITERAL = re.compile(r"(``.+?``|:[a-z:]+:`[^`]*`|`[^`]*`_?_?|\$[^$]+\$)")
_ATTRIBUTE = re.compile(r"\b([A-Za-z][A-Za-z0-9_]*[A-Za-z0-9])_(?=\W|$)")


def _escape_plain_text(text: str) -> str:
    parts = _LITERAL.split(text)
    for i in range(0, len(parts), 2):  # even parts are outside literals and roles
        parts[i] = _ATTRIBUTE.sub(r"\1\\_", parts[i].replace("|", r"\|"))
    return "".join(parts)


def _escape_docstring(app, what, name, obj, options, lines: list[str]) -> None:
    literal_indent = None  # indentation of the line that opened a literal block or directive
    for i, line in enumerate(lines):
        stripped, indent = line.strip(), len(line) - len(line.lstrip())
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if stripped.startswith((">>>", "... ")) or stripped == "...":
            continue
        if stripped.endswith("::") or stripped.startswith(".. "):
            literal_indent = indent
        if stripped.startswith(".. "):
            continue
        lines[i] = _escape_plain_text(line)


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Members scikit-learn's mixins add (set_output, set_fit_request, ...) are documented by scikit-learn."""
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", "") or ""
    if module.startswith("sklearn") or qualname.startswith("RequestMethod"):
        return True
    return None


def setup(app):
    app.connect("autodoc-process-docstring", _escape_docstring, priority=400)  # before numpydoc (500)
    app.connect("autodoc-skip-member", _skip_foreign_members)
