"""Jargon gets a short definition where a page first uses it (issue 38, finding 8): the Timing and Classifiers
intros define their terms inline, the Gram page's error metric has it as hover help."""
from __future__ import annotations

import pytest

from rkcore.teaching.glossary import GLOSSARY, defined

PAGES = {
    "pages/5_Timing.py": ("signed circulant blocks", "O(m D log d)"),
    "pages/6_Classifiers.py": ("TS / RM features", "sparse random features", "factorization machine",
                               "C is chosen on the validation set"),
}


@pytest.mark.parametrize("path", PAGES)
def test_terms_are_defined_at_their_first_use(run_page, path):
    at = run_page(path, n=60)
    text = " ".join(m.value for m in at.markdown)
    for term in PAGES[path]:
        first = text.find(term)
        assert first >= 0, term
        assert text.startswith(defined(term), first), (term, text[first:first + 120])


def test_gram_error_metric_explains_itself_on_hover(run_page):
    at = run_page("pages/1_Gram_matrices.py", n=40, D=16)
    helps = {m.label: m.help for m in at.metric}
    assert helps["relative Frobenius error"] == GLOSSARY["relative Frobenius error"]


def test_every_definition_is_short_and_unknown_terms_are_refused():
    assert all(len(text) <= 90 for text in GLOSSARY.values())
    with pytest.raises(ValueError, match="glossary defines"):
        defined("kernel magic")


def _csv_buttons(at) -> list[str]:
    return [b.proto.label for b in at.get("download_button") if b.proto.label.startswith("Download data")]


def test_presenter_mode_draws_no_captions_or_csv_buttons_under_charts(run_page):
    """Issue 38, finding 4: grey captions and download buttons stayed on the projector."""
    normal = run_page("pages/2_Itemsets.py", n=40)
    shown = run_page("pages/2_Itemsets.py", n=40, presenter="true")
    assert _csv_buttons(normal) and not _csv_buttons(shown)
    caption = "Counts are exact (combinatorial, never enumerated)."
    assert caption in [c.value for c in normal.caption] and caption not in [c.value for c in shown.caption]
