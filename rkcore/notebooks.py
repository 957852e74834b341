"""A dashboard view as a Jupyter notebook: the view's "reproduce in Python" code (rkcore.spec.reproduce_code
and each page's own lines) in cells under a title cell, as an nbformat 4 document.

Pure (no streamlit, no nbformat): the app's install does not bring nbformat, and a notebook is a small,
fully specified JSON document (nbformat 4.5: cells with ids, kernelspec and language metadata), so it is
written here as a dict; the test suite validates every page's notebook against nbformat's own schema and
executes it with nbclient (tests/pages/test_notebooks.py).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping

#: the nbformat version written (4.5: every cell has an id)
NBFORMAT, NBFORMAT_MINOR = 4, 5


def code_cells(code: str) -> list[str]:
    """Split Python code into notebook cells at blank lines between top-level statements.

    A blank line followed by an indented line (inside a function, loop or ``with``) does not split; a
    block of comment lines joins the statement under it.

    Parameters
    ----------
    code : str
        Python source, as the dashboard's reproduce box shows it.

    Returns
    -------
    list of str
        The cells' sources, none empty, in order; joined with blank lines they give the code back
        (up to the blank lines themselves).

    Examples
    --------
    >>> code_cells("import numpy as np\\n\\nx = np.arange(3)\\nprint(x)")
    ['import numpy as np', 'x = np.arange(3)\\nprint(x)']
    >>> code_cells("for i in range(2):\\n    a = i\\n\\n    print(a)")
    ['for i in range(2):\\n    a = i\\n\\n    print(a)']
    """
    cells: list[list[str]] = [[]]
    lines = code.splitlines()
    for i, line in enumerate(lines):
        if line.strip():
            cells[-1].append(line)
            continue
        following = next((nxt for nxt in lines[i + 1:] if nxt.strip()), "")
        if following[:1].isspace():  # still inside an indented block: keep the blank line
            cells[-1].append(line)
        elif cells[-1]:
            cells.append([])
    sources = ["\n".join(cell).strip("\n") for cell in cells if any(line.strip() for line in cell)]
    return _join_comment_blocks(sources)


def _join_comment_blocks(sources: list[str]) -> list[str]:
    """A cell of comments only belongs to the cell under it (a comment says what the next lines do)."""
    joined: list[str] = []
    pending = ""
    for source in sources:
        if all(line.lstrip().startswith("#") for line in source.splitlines()):
            pending = f"{pending}{source}\n"
            continue
        joined.append(pending + source)
        pending = ""
    if pending:
        joined.append(pending.rstrip("\n"))
    return joined


def view_notebook(code: str, *, title: str, settings: Mapping[str, object] | None = None,
                  version: str | None = None) -> dict:
    """A notebook (nbformat 4.5, as a dict) that reproduces a dashboard view with rkcore.

    Parameters
    ----------
    code : str
        The view's "reproduce in Python" code.
    title : str
        The page's title (the notebook's first heading).
    settings : mapping of str to object, optional
        The view's non-default settings (its URL parameters), listed under the title.
    version : str, optional
        The rkcore version that made it (default: this one).

    Returns
    -------
    dict
        The notebook; :func:`notebook_json` writes it as an ``.ipynb`` file's text.

    Examples
    --------
    >>> nb = view_notebook("import numpy as np\\n\\nprint(np.arange(3))", title="A view", version="0.1")
    >>> [cell["cell_type"] for cell in nb["cells"]]
    ['markdown', 'code', 'code']
    >>> nb["cells"][2]["source"]
    'print(np.arange(3))'
    """
    if version is None:
        from rkcore import __version__ as version
    lines = [f"# {_markdown_text(title)}", "",
             f"The rkcore calls behind this view of the Random Kernel Explorer (rkcore {version}). "
             "Run the cells in order: they print the page's numbers and draw its charts "
             "(plotly figures need `pip install \"rkcore[figures]\"`)."]
    if settings:
        lines += ["", "Settings of the view:", ""]
        lines += [f"- `{name}` = `{value}`" for name, value in settings.items()]
    cells = [_cell("markdown", "\n".join(lines), 0)]
    cells += [_cell("code", source, i) for i, source in enumerate(code_cells(code), start=1)]
    return {"cells": cells,
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                         "language_info": {"name": "python"}},
            "nbformat": NBFORMAT, "nbformat_minor": NBFORMAT_MINOR}


def notebook_json(notebook: dict) -> str:
    """The text of an ``.ipynb`` file (JSON, indented as Jupyter writes it).

    Parameters
    ----------
    notebook : dict
        A notebook from :func:`view_notebook`.

    Returns
    -------
    str
        JSON text, ending with a newline.

    Examples
    --------
    >>> notebook_json(view_notebook("x = 1", title="t", version="0.1")).startswith('{\\n "cells"')
    True
    """
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def _cell(kind: str, source: str, index: int) -> dict:
    cell: dict[str, object] = {"cell_type": kind, "id": f"rkcore-{index}", "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def _markdown_text(text: str) -> str:
    """A title as Markdown text: characters Markdown would read as markup are escaped."""
    return re.sub(r"([\\`*_{}\[\]<>#|])", r"\\\1", text)
