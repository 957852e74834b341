"""Everything a user typed is shown literally: a Markdown link and an image sent through every URL key
of the state table (names and old aliases) and as an uploaded file's name, on every page, never render
as a link or an image, and the text is still shown."""
from __future__ import annotations

import re

import pytest

from rkapp.guard import literal
from rkapp.state import FIELDS
from rkapp.widgets import UPLOAD_STATE_KEY
from tests.conftest import page_files, shown

LINK = "**Your session expired.** [Click here](https://attacker.invalid/login)"
IMAGE = "![img](https://attacker.invalid/p.png)"
#: Element types whose text Streamlit renders as Markdown (Latex, Code and our own CSS Html are not).
MARKDOWN_FIELDS = ("body", "label")
NOT_MARKDOWN = {"Latex", "Code", "Html", "UnknownElement", "Dataframe", "Json"}


def _walk(node):
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def markdown_texts(at) -> list[tuple[str, str]]:
    """(element type, Markdown source) of every element that renders Markdown, sidebar included."""
    texts = []
    for node in _walk(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None or type(node).__name__ in NOT_MARKDOWN:
            continue
        for name in MARKDOWN_FIELDS:
            value = getattr(proto, name, None) if name in [f.name for f, _ in proto.ListFields()] else None
            if isinstance(value, str) and value:
                texts.append((type(node).__name__, value))
    return texts


def _unescaped(markdown: str) -> str:
    """The Markdown with every backslash-escaped character removed: what could still parse as syntax."""
    return re.sub(r"\\.", "", markdown)


def live_syntax(markdown: str) -> list[str]:
    """Link / image / autolink syntax that would render (empty for literal text)."""
    bare = _unescaped(markdown)
    return [token for token in ("](", "![", "://", "www.", "<http") if token in bare]


def assert_literal(at, payloads: tuple[str, ...], where: str) -> None:
    if not at.sidebar.selectbox:  # the landing page draws no settings: nothing of the URL is echoed
        payloads = ()
    assert not at.exception, (where, [e.value for e in at.exception])
    texts = markdown_texts(at)
    live = [(kind, text[:200]) for kind, text in texts if live_syntax(text)]
    assert not live, (where, live)
    readable = " ".join(shown(text) for _, text in texts)
    for payload in payloads:
        # the text is still there for the user to read (refused values are quoted in the message; a path
        # may come back normalized, "//" as "/")
        words = ("Click here", "attacker.invalid/login") if payload == LINK else ("[img]", "attacker.invalid/p.png")
        assert all(w in readable for w in words), (where, payload, readable[:3000])


def test_literal_escapes_every_markdown_trick():
    for text in (LINK, IMAGE, "www.attacker.invalid", "a@b.example", ":red[x] :material/home:", "$x$", "<b>x</b>",
                 "# heading\n\n- list", "x_j * y_j"):
        assert not live_syntax(literal(text)), text
        assert shown(literal(text)) == text.replace("\n", " ").replace("  ", " ") or "\n" in text
    assert "\n" not in literal("a\n\nb")


PAGES = page_files()


def _run(run_page, path, query, session=None):
    return run_page(path, session=session, **query)


@pytest.mark.parametrize("path", PAGES, ids=[p.stem for p in PAGES])
def test_url_values_and_file_names_are_shown_literally(run_page, path):
    # 1. every field under its own name gets the link (n = 30 keeps the run short: it gets the image in
    # the next run, with every old alias key)
    names = {name: LINK for name in FIELDS}
    at = _run(run_page, path, {**names, "n": 30})
    assert_literal(at, (LINK,), f"{path.name}: every field = link")
    aliases = {alias: IMAGE for f in FIELDS.values() for alias in f.aliases}
    at = _run(run_page, path, {**aliases, "n": IMAGE})
    assert_literal(at, (IMAGE,), f"{path.name}: every alias = image")
    # 2. the free-text fields where they are drawn: itemsets, fields, the MovieLens path, a file name
    at = _run(run_page, path, {"dataset": "movielens", "movielens_path": IMAGE, "kernel": "itemset",
                               "family": "cross", "fields": LINK, "n": 30})
    # the MovieLens refusal names no path (one answer for every path outside the data roots, issue 26) and
    # comes before the fields are read: nothing of the two is echoed, and nothing may render as a link
    assert_literal(at, (), f"{path.name}: MovieLens path and fields")
    upload = (f"{IMAGE}.csv", b"a,b,c,target\n0.1,0.2,0.3,0\n0.3,0.1,0.2,1\n0.2,0.2,0.1,0\n0.5,0.1,0.1,1\n")
    at = _run(run_page, path, {"dataset": "upload", "kernel": "itemset", "family": "custom", "itemsets": LINK,
                               "target": LINK, "n": 30}, session={UPLOAD_STATE_KEY: upload})
    assert_literal(at, (IMAGE,), f"{path.name}: file name")


# ---------------------------------------------------------------------------- HTML tables (st.table)
def test_html_table_shows_user_text_literally_and_formats_numbers():
    """st.table renders headers and cells as Markdown and takes headers from the frame: rkapp's table
    escapes both (a column named like a link stays text), applies the number formats, keeps the values."""
    import pandas as pd
    import streamlit as st

    from rkapp.layout import styled_table
    from tests.conftest import shown

    link = "[click](http://example.com) **b** $x$"
    data = pd.DataFrame({link: ["*it*", "<b>x</b>"], "value": [0.000123456, -12345.678], "n": [1, 2]})
    styler = styled_table(data, {"value": st.column_config.NumberColumn(format="%.3g")})
    shown_frame = styler.data
    assert [shown(c) for c in shown_frame.columns] == list(data.columns)
    assert "[" not in shown_frame.columns[0].replace("\\[", "")  # every bracket escaped
    html = styler.to_html()
    assert "0.000123" in html and "-1.23e+04" in html
    assert "\\*it\\*" in html
    pd.testing.assert_series_equal(shown_frame.iloc[:, 1], data["value"], check_names=False)


def test_html_table_shows_floats_without_pandas_six_decimals():
    """Float columns without a configured format: integral values as integers, missing values blank, six
    significant digits (pandas' Styler default showed the Classifiers table's D as "40.000000" and "nan")."""
    import pandas as pd

    from rkapp.layout import styled_table

    data = pd.DataFrame({"D": [float("nan"), 40.0], "C": [1000.0, 0.1234567891], "trials": [1, 3]})
    html = styled_table(data).to_html()
    assert "nan" not in html and "40.000000" not in html and "1000.000000" not in html
    cells = [c.strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", html, flags=re.S)]
    assert cells == ["", "1000", "1", "40", "0.123457", "3"], cells
