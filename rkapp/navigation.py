"""The one page list: st.navigation over pages/*.py (Home first), presets that switch page."""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitAPIException

from .client_messages import confine_clear_cache
from .state import apply_preset

_HERE = Path(__file__).resolve().parent
#: The page scripts: rkapp/pages in an installed wheel, the repository's pages/ in a checkout.
PAGES_DIR = _HERE / "pages" if (_HERE / "pages").is_dir() else _HERE.parent / "pages"
HOME = "Home.py"


@dataclass(frozen=True)
class PageEntry:
    file: str       # "1_Gram_matrices.py"
    title: str      # "Gram matrices"
    url_path: str   # "Gram_matrices" (as Streamlit named it before st.navigation: deep links keep working)

    @property
    def path(self) -> str:
        """The page as st.switch_page / st.page_link / AppTest.switch_page take it."""
        return f"pages/{self.file}"


def _order(path: Path) -> tuple[float, str]:
    """By the number prefix ("10_x" after "9_y"), then by name."""
    prefix = re.match(r"^(\d+)", path.stem)
    return (int(prefix.group(1)) if prefix else float("inf"), path.stem)


def page_label(path: str | Path) -> str:
    """"3_Error_bounds.py" -> "Error bounds"."""
    stem = Path(path).stem
    stem = stem.split("_", 1)[1] if stem[:1].isdigit() and "_" in stem else stem
    return stem.replace("_", " ")


def page_files() -> list[Path]:
    """The study pages (every pages/*.py but Home and the package's ``__init__.py``), in navigation order."""
    return sorted((p for p in PAGES_DIR.glob("*.py") if p.name != HOME and not p.name.startswith("_")), key=_order)


PAGES: list[PageEntry] = [PageEntry(p.name, page_label(p), page_label(p).replace(" ", "_")) for p in page_files()]


def running_page_file() -> str:
    """The file name of the page script running now ("1_Gram_matrices.py", "Home.py"; "" outside a page),
    found on the call stack: Streamlit runs a page through app.py's st.navigation or, for a deep link into the
    pages/ folder, directly, and offers no public way to ask which; either way the page file is a caller."""
    frame = sys._getframe(1)
    while frame is not None:
        path = Path(frame.f_code.co_filename)
        if path.parent == PAGES_DIR and path.suffix == ".py":
            return path.name
        frame = frame.f_back
    return ""


def find_page(*fragments: str) -> str | None:
    """The first page whose file name contains one of the fragments (case-insensitive), as "pages/x.py"."""
    for fragment in fragments:
        for entry in PAGES:
            if fragment.lower() in entry.file.lower():
                return entry.path
    return None


def run() -> None:
    """The app: Home and every page in the sidebar navigation; runs the chosen page."""
    confine_clear_cache()  # a client's clear-cache message clears its own session only (idempotent)
    home = st.Page(str(PAGES_DIR / HOME), title="Home", icon=":material/home:", default=True)
    pages = [st.Page(str(PAGES_DIR / e.file), title=e.title, url_path=e.url_path) for e in PAGES]
    # Streamlit's own page list is hidden (position "top" is overridden by the pages/ folder's sidebar list,
    # which pushed the settings 500 px down): page_menu() lists the pages in one collapsed row instead
    st.navigation([home, *pages], position="hidden").run()


def page_menu(*, in_sidebar: bool = True) -> None:
    """The pages as links in a collapsed "Pages" menu at the top of the sidebar (one row tall, so the
    settings a page needs, D and the seed included, sit near the top of the sidebar), or, in presenter mode
    (no sidebar), in a "Pages" popover where it is called. Only in a run of the app: through st.navigation
    (:func:`run`), or the pages/ folder's pages when a deep link runs a page directly (Streamlit then runs
    the page without app.py). A page script run alone (AppTest on one file) has no other pages to link to:
    st.page_link refuses them, and the menu is taken back."""
    slot = st.sidebar.empty() if in_sidebar else st.empty()
    try:
        with slot.container(width="stretch" if in_sidebar else "content"), (st.expander("Pages", icon=":material/menu:") if in_sidebar else
                                st.popover("Pages", icon=":material/menu:")):
            st.page_link(str(PAGES_DIR / HOME), label="Home", icon=":material/home:")
            for entry in PAGES:
                st.page_link(str(PAGES_DIR / entry.file), label=entry.title)
    except StreamlitAPIException:  # the pages are not registered in this run (see above)
        slot.empty()


# ============================================================================ presets
#: session key: the page file name whose study a preset asked to start on arrival
RUN_REQUEST_KEY = "_rk_run_on_arrival"


def _apply_preset_and_request(values: dict, page: str, run: bool) -> None:
    apply_preset(values)
    if run:
        st.session_state[RUN_REQUEST_KEY] = Path(page).name


def preset_button(label: str, page: str, values: dict, *, help: str | None = None, key: str | None = None,
                  run: bool = False) -> None:
    """One click: reset the shared settings, apply ``values`` (field names) and switch to ``page``
    ("pages/x.py"); with ``run`` the page also starts its study (the click is the user's go)."""
    key = key or "preset_" + re.sub(r"\W+", "_", label).strip("_").lower()
    if st.button(label, key=key, help=help, on_click=_apply_preset_and_request, args=(values, page, run),
                 width="stretch"):
        st.switch_page(page)


def run_requested(page_file: str) -> bool:
    """True once, on the page a preset with ``run=True`` opened (``page_file``: that page's ``__file__``)."""
    if st.session_state.get(RUN_REQUEST_KEY) == Path(page_file).name:
        del st.session_state[RUN_REQUEST_KEY]
        return True
    return False
