"""The parts every page is built from: page(), chart(), table(), formula(), notice(), reproduce()."""
from __future__ import annotations

import re

import pandas as pd
import streamlit as st

_CSS = """
<style>
  /* projector: larger widget labels, captions and tables */
  section[data-testid="stSidebar"] label p { font-size: 1.0rem; font-weight: 600; }
  div[data-testid="stCaptionContainer"] { font-size: 0.95rem; }
  div[data-testid="stMetricValue"] { font-size: 2.0rem; }
  .katex { font-size: 1.25em; }
</style>
"""


def page(title: str, intro: str | None = None, *, icon: str = ":material/scatter_plot:") -> None:
    """Set up a page: wide layout, projector-friendly CSS, title and intro (navigation is app.py's)."""
    st.set_page_config(page_title=f"{title} · Random Kernel Explorer", page_icon=icon, layout="wide")
    st.html(_CSS)
    st.title(title)
    if intro:
        st.markdown(intro)


def _slug(name: str) -> str:
    # case kept: "error vs d" and "error vs D" are different charts and need different keys
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or "data"


def chart(fig, data: pd.DataFrame, name: str, *, caption: str | None = None, key: str | None = None) -> None:
    """The figure, an optional caption, and a CSV download of the data behind it."""
    slug = key or _slug(name)
    st.plotly_chart(fig, theme=None, key=f"chart_{slug}",
                    config={"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}})
    if caption:
        st.caption(caption)
    _download(data, name, slug)


def table(data: pd.DataFrame, name: str, *, caption: str | None = None, **dataframe_kwargs) -> None:
    """A table, an optional caption, and its CSV download."""
    dataframe_kwargs.setdefault("hide_index", True)
    st.dataframe(data, **dataframe_kwargs)
    if caption:
        st.caption(caption)
    _download(data, name, _slug(name))


def _download(data: pd.DataFrame, name: str, slug: str) -> None:
    st.download_button(f"Download data: {name} (CSV)", icon=":material/download:",
                       data=lambda: data.to_csv(index=False).encode(), file_name=f"{slug}.csv", mime="text/csv",
                       key=f"download_{slug}", on_click="ignore")


def formula(latex: str, caption: str | None = None) -> None:
    st.latex(latex)
    if caption:
        st.caption(caption)


def notice(text: str) -> None:
    """The "what to notice" box of a view."""
    st.info(f"**What to notice.** {text}", icon=":material/visibility:")


def reproduce(code: str) -> None:
    """An expander with the rkcore calls that reproduce the view."""
    with st.expander("Reproduce in Python"):
        st.code(code, language="python")
