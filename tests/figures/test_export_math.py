"""The offline export draws the pages' formulas (issue 38, finding 6: every exported page showed raw LaTeX,
`$\\hat K = ZZ^\\top$`, `$e^{4R}$`, `$\\binom{d+2}{2}$`): as MathML, which the browser draws with no script and no
network, and the text around them unchanged."""
from __future__ import annotations

import re

import pytest

from rkcore.figures.export import Item, Lesson, view_html

# MathML needs the optional latex2mathml package (not in the app's install, which is fixed: see the README);
# without it every formula is shown as its source in <code>, never as text with raw dollars (tested below).
latex2mathml = pytest.importorskip("latex2mathml")

INTRO = (r"The exact Gram matrix $K$ next to its random-feature estimate $\hat K = ZZ^\top$, on one color scale; "
         r"a bound grows like $e^{4R}$ and listing costs $\binom{d+2}{2}$ numbers. **Bold** stays, \$5 is a dollar.")


def test_exported_text_has_mathml_and_no_raw_latex():
    page = view_html(Lesson("Gram matrices", [Item("text", INTRO), Item("note", r"At $D = 1{,}024$ the error halves.")]))
    body = page.split("<body", 1)[1]
    assert body.count("<math") == 5
    assert not re.search(r"\$[^$<]*\\(hat|binom|top)", body) and "\\binom" not in body and "\\hat" not in body
    assert "<b>Bold</b> stays, $5 is a dollar." in body
    assert "<mover" in body and "<msup>" in body  # the hat and the exponent are drawn, not spelled
