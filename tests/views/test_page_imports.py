"""Converted pages import only streamlit, rkapp and rkcore.views (issue 36): everything else of rkcore reaches them
through their view module. The pages not yet converted are listed by the lead when the contract covers them all."""
from __future__ import annotations

import ast

import pytest

from tests.conftest import REPO

CONVERTED = ["pages/Home.py", "pages/0_Story.py", "pages/1_Gram_matrices.py", "pages/11_Speed_and_accuracy.py"]
ALLOWED = ("streamlit", "rkapp", "rkcore.views")


def imported_modules(path) -> list[str]:
    tree = ast.parse((REPO / path).read_text(encoding="utf-8"))
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return names


@pytest.mark.parametrize("page", CONVERTED)
def test_page_imports_only_the_frame_and_its_views(page):
    outside = [m for m in imported_modules(page) if not any(m == a or m.startswith(a + ".") for a in ALLOWED)]
    assert not outside, f"{page} imports {outside}"
