"""The reproduce box's notebook: rkcore.notebooks writes a valid nbformat 4.5 document of the view's code
(checked against nbformat's own schema), and every page's reproduce box offers it for download. That each
page's notebook runs and prints the page's numbers: tests/pages/test_notebooks.py (slow)."""
from __future__ import annotations

import json

import pytest

from rkcore.notebooks import code_cells, notebook_json, view_notebook
from rkcore.spec import reproduce_code

nbformat = pytest.importorskip("nbformat")


def test_a_views_code_becomes_a_valid_notebook_that_gives_the_code_back():
    code = reproduce_code(dataset="digits", n=200, normalization="l1", kernel="anova", degree=2,
                          extra_lines=["", "for D in [16, 32]:", "    Z = D", "", "    print(Z)", "print('done')"])
    notebook = nbformat.reads(notebook_json(view_notebook(code, title="Gram matrices", settings={"n": 200})),
                              as_version=4)
    nbformat.validate(notebook)  # raises on anything the schema refuses (ids, metadata, outputs)
    title, *cells = notebook.cells
    assert title.cell_type == "markdown" and title.source.startswith("# Gram matrices")
    assert "- `n` = `200`" in title.source
    assert all(cell.cell_type == "code" and cell.outputs == [] for cell in cells)
    assert len({cell.id for cell in notebook.cells}) == len(notebook.cells)
    # the cells hold the code, every line once and in order; a loop's blank line does not split it
    assert [line for cell in cells for line in cell.source.splitlines() if line.strip()] == \
        [line for line in code.splitlines() if line.strip()]
    assert any(cell.source.startswith("for D in") and "\n\n    print(Z)\nprint('done')" in cell.source
               for cell in cells)


def test_comment_lines_join_the_code_they_describe():
    assert code_cells("# load\n\nx = 1\n\n# and print\nprint(x)\n\n# trailing") == \
        ["# load\nx = 1", "# and print\nprint(x)", "# trailing"]


def test_a_title_with_markdown_characters_is_text():
    source = view_notebook("x = 1", title="K_S *and* [links]", version="0")["cells"][0]["source"]
    assert source.startswith(r"# K\_S \*and\* \[links\]")
    assert json.loads(notebook_json(view_notebook("", title="t", version="0")))["cells"][1:] == []


def test_the_reproduce_box_offers_the_notebook(run_page):
    from rkapp.layout import REPRODUCE_KEY

    closed = run_page("pages/1_Gram_matrices.py", n=40)
    assert "reproduce_notebook" not in [b.key for b in closed.download_button]  # nothing sent while closed
    opened = run_page("pages/1_Gram_matrices.py", n=40, session={REPRODUCE_KEY: True})
    (button,) = [b for b in opened.download_button if b.key == "reproduce_notebook"]
    assert button.proto.label == "Download as a notebook (.ipynb)"
