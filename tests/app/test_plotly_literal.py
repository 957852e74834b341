"""User text reaches plotly figures literally: plotly reads <a href>, <b>, <br> in titles, legends and
annotations as markup, so rkcore.figures.style.plotly_text writes < > & as entities (plotly decodes
them back to the characters a user typed). Fed here: an HTML link as a title, a label, a node name, and
as a column and a file name of an upload on the pages that draw the uploaded data."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rkapp.widgets import UPLOAD_STATE_KEY
from rkcore.figures.accuracy import accuracy_figure, time_figure
from rkcore.figures.gram import gram_heatmaps
from rkcore.figures.itemsets import family_counts_figure
from rkcore.figures.style import plotly_text
from rkcore.figures.variance import variance_by_distribution_figure
from tests.conftest import error_texts, plotly_figures

LINK = '<a href="https://x.invalid">x</a>'


def _strings(obj):
    """Every string in a figure's JSON (data and layout, nested)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for value in obj.values():
            yield from _strings(value)
    elif isinstance(obj, (list, tuple)):
        for value in obj:
            yield from _strings(value)


def _markup_from_user(fig_json: dict) -> list[str]:
    return [s for s in _strings(fig_json) if "<a" in s or "x.invalid\">" in s or "<b>" in s]


def test_plotly_text_leaves_no_tag_and_round_trips():
    text = plotly_text(LINK + " <b>bold</b> & <br> a<b")
    assert "<" not in text and ">" not in text
    # plotly decodes &lt; &gt; &amp; back: the user reads what was typed
    assert text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == LINK + " <b>bold</b> & <br> a<b"
    assert plotly_text("n = 5, K̂ − K") == "n = 5, K̂ − K"


def test_figure_titles_labels_and_names_are_literal():
    from rkcore.teaching.compositional import preset_skeleton
    from rkcore.figures.compositional import skeleton_figure

    K = np.eye(3)
    counts = pd.DataFrame({"size": [1, 2], "count": [3.0, 3.0], "log10_count": np.log10([3.0, 3.0]),
                           "count_text": ["3", "3"]})
    summary = pd.DataFrame({"distribution": ["rademacher", "gaussian"], "label": ["Rademacher", "Gaussian"],
                            "fourth_moment": [1.0, 3.0], "mean": [1.0, 2.0], "ratio_to_rademacher": [1.0, 2.0],
                            "n_pairs": [10, 10]})
    skeleton, _ = preset_skeleton("shallow", np.random.default_rng(0).standard_normal((8, 3)))
    skeleton = type(skeleton)(skeleton.nodes, name=LINK)
    study = pd.DataFrame({"method": ["rk", "rk"], "label": ["Linear SVM + RK"] * 2, "D": [8.0, 16.0], "trial": [0, 0],
                          "accuracy": [0.7, 0.8], "train_seconds": [0.1, 0.2], "test_seconds": [0.01, 0.02]})
    figures = [accuracy_figure(study, title=LINK), time_figure(study, title=LINK), family_counts_figure(counts, title=LINK),
               gram_heatmaps(K, K, titles=(LINK, LINK)), variance_by_distribution_figure(summary, LINK),
               skeleton_figure(skeleton)]
    for fig in figures:
        shown = fig.to_plotly_json()
        assert not _markup_from_user(shown), _markup_from_user(shown)
        assert any("x.invalid" in s for s in _strings(shown)), "the text is still shown"


@pytest.mark.parametrize("path", ["pages/1_Gram_matrices.py", "pages/2_Itemsets.py", "pages/3_Error_bounds.py"])
def test_column_and_file_names_never_become_markup(run_page, path):
    header = f'a,"{LINK.replace(chr(34), chr(34) * 2)}",c,target\n'
    rows = "".join(f"{i % 7 / 7},{i % 5 / 5},{i % 3 / 3},{i % 2}\n" for i in range(40))
    at = run_page(path, dataset="upload", n=40, target="target", kernel="all_subsets",
                  session={UPLOAD_STATE_KEY: (LINK + ".csv", (header + rows).encode())})
    assert not at.exception
    figures = plotly_figures(at)
    assert figures, error_texts(at)
    for fig in figures:
        assert not _markup_from_user(fig), _markup_from_user(fig)
