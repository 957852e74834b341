"""The parts every page is built from: page(), chart(), table(), formula(), notice(), reproduce(),
and the projector rules they share (compact header, formulas that fit, titles that wrap, presenter mode)."""
from __future__ import annotations

import html
import os
import re
import time
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import streamlit as st

from rkcore.figures.alt_text import figure_alt_text
from rkcore.figures.distinguish import without_colour_alone
from rkcore.figures.style import VALIDATE_FIGURES_ENV, check_canonical, enlarged, square_panel_share
from rkcore.teaching.claims import lead_and_rest

from .guard import literal, show_error
from .projector import (FILL_KEY, FILL_SCRIPT, PANEL_LINE, PRESENTER_CSS, TITLE_LINE, over_the_plot,
                        title_at_top)
from .lecture import class_controls, class_expander, class_panel
from .lessons import lesson_expander, lesson_manager, lesson_messages, lesson_panel
from .questions import hide_for_question
from .navigation import page_menu, running_page_file
from .run_context import begin_run, current_run
from .state import FIELDS, file_name_parts, read_url, recorded_settings, stored
from .widgets import persistent_widget

# At 1280x720 the page's first chart must start above the fold: a compact header (Streamlit's own top
# padding is 6rem, its h1 2.75rem), formulas no wider than their column, captions that wrap.
_CSS = """
<style>
  .block-container, [data-testid="stMainBlockContainer"] { padding-top: 3.6rem; padding-bottom: 3rem;
      padding-left: 2.2rem; padding-right: 2.2rem; }
  h1 { font-size: 2.0rem !important; padding-top: 0 !important; padding-bottom: 0.3rem !important; }
  section[data-testid="stSidebar"] label p { font-size: 1.0rem; font-weight: 600; }
  div[data-testid="stCaptionContainer"] { font-size: 0.95rem; overflow-wrap: anywhere; }
  /* captions in a darker grey than Streamlit's (3.8:1 on white and on the sidebar): 6.7:1, WCAG AA's 4.5:1 */
  div[data-testid="stCaptionContainer"], div[data-testid="stCaptionContainer"] p,
  [data-testid="InputInstructions"] { color: #5c5b5a; opacity: 1; }
  div[data-testid="stMetricValue"] { font-size: 1.8rem; }
  div[data-testid="stMetricLabel"] p { white-space: normal; }
  .katex { font-size: 1.1em; }
  /* formulas are broken to fit (fit_formula); a display that scrolled by a pixel or two was a scrollable region
     no keyboard could reach (axe: scrollable-region-focusable) */
  .katex-display { margin: 0.4em 0; overflow: visible !important; }
  div[data-testid="stColumn"] .katex { font-size: 1.0em; }
  /* a button label wraps instead of being cut ("Linear model on RK featu…") */
  div[data-testid="stButton"] button p { white-space: normal; }
  /* a multiselect's chips wrap onto more lines instead of hiding behind a fade (SCRK, d = 1024, 16d at 1280 px) */
  [data-testid="stMultiSelectTagsContainer"] { flex-wrap: wrap !important; overflow: visible !important;
      mask-image: none !important; -webkit-mask-image: none !important; }
  [data-testid="stMultiSelect"] div:has(> [data-testid="stMultiSelectTagsContainer"]) { height: auto !important;
      max-height: none !important; }
  /* the note's lead: a slim box (one or two lines) right above the main chart; the rest is behind "More" */
  .st-key-rk-conclusion [data-testid="stAlertContainer"], .st-key-rk-conclusion [role="alert"] {
      padding-top: 0.4rem !important; padding-bottom: 0.4rem !important; }
  .st-key-rk-conclusion { gap: 0.2rem; }
  /* keyboard focus always visible (WCAG 2.4.7), the scrolling main area included */
  :focus-visible { outline: 3px solid #1f4e9c !important; outline-offset: 2px; }
  /* a chart's text alternative (rkcore.figures.alt_text): read by screen readers, takes no room on screen */
  [data-testid="stElementContainer"]:has(.rk-alt-text), .rk-alt-text { position: absolute !important;
      width: 1px !important; height: 1px !important; overflow: hidden !important; clip-path: inset(50%);
      white-space: nowrap; margin: 0 !important; padding: 0 !important; }
  /* the chart-library preload (see _preload_chart_library): drawn off-screen, takes no space */
  .st-key-chart-preload { position: absolute !important; left: -10000px; top: 0; width: 240px;
      height: 40px; overflow: hidden; }
</style>
"""
#: ``layout.meta`` of the chart-library preload figure: tests and checks that count a page's charts
#: skip it (it shows nothing).
PRELOAD_META = "rkapp-chart-preload"
#: key of the container that holds each page's main chart or run button (class ``st-key-rk-lead``; the
#: browser test measures the first screen by it)
LEAD_KEY = "rk-lead"
#: Plotly font sizes grow by this many px in presenter mode.
PRESENTER_FONT_STEP = 4

def presenter() -> bool:
    """Whether presenter mode is on (the ``presenter`` field: URL ``presenter=true``, or its toggle).
    An st.fragment rerun may run in a new thread without page()'s per-run state: read the field then."""
    shown = current_run().presenter
    return _presenter_setting([]) if shown is None else bool(shown)


def _presenter_setting(errors: list[str]) -> bool:
    """The presenter field: from the URL on a session's first page, from the session after (a toggle just
    switched wins over the URL it has not rewritten yet)."""
    f = FIELDS["presenter"]
    read_url(f, None, None, None, f.label, errors)
    return bool(stored("presenter"))


#: the presenter-mode controls beside the title: the pages menu and the way out
PRESENTER_CONTROLS_KEY = "rk-presenter-controls"
#: px the main chart gives up so that the note's one-sentence lead above it fits the first screen
NOTE_ROOM = 104
#: session key: the title of the page the last run drew (a different one means the reader switched pages)
SHOWN_PAGE_KEY = "_rk_shown_page"
#: sent once per page switch: Streamlit switches pages in place and keeps the scroll position of the page before,
#: so a preset clicked at the bottom of Home opened the next page at its bottom (6 of 12 clicks). The page scrolls
#: to the top, again while its first charts arrive (they push the content), until the reader scrolls or 3 s pass
#: (once in 12 preset clicks at 1440x900 the page sat 761 px down after 1.5 s).
_TO_TOP = """<script>(() => {
  const main = () => document.querySelector('[data-testid="stMain"]');
  let stop = false;
  const quit = () => { stop = true; };
  ["wheel", "keydown", "touchstart", "mousedown"].forEach(e => window.addEventListener(e, quit, {once: true}));
  const top = () => { if (stop) return; const m = main(); if (m) m.scrollTop = 0; window.scrollTo(0, 0); };
  [0, 50, 150, 300, 600, 1000, 1500, 2200, 3000].forEach(ms => setTimeout(top, ms));
})();</script>"""




#: the tab's icon, a local file served by the app: a material icon or an emoji is fetched from a font or emoji
#: server, which fails offline (a class behind a firewall) and tells a third party who opened the page
ICON = Path(__file__).with_name("icon.png")


def page(title: str, intro: str | None = None, *, icon: str | None = None) -> None:
    """Set up a page: wide layout, projector-friendly CSS, the presenter toggle, title and a compact intro
    (navigation is app.py's), then two places kept for later: the main chart (:func:`lead`) and the page's
    conclusion (:func:`notice`), so both show on the first screen whatever the page computes before them.
    In presenter mode nothing is drawn in the sidebar (its settings keep their values from the session and
    the URL, rkapp.unseen) and it is hidden; the pages menu and the presenter toggle sit beside the title;
    the type is larger and the intro follows the chart."""
    errors: list[str] = []
    page_file = running_page_file()
    on = _presenter_setting(errors)
    icon = icon or (str(ICON) if ICON.exists() else None)  # None: Streamlit's own icon, served locally too
    st.set_page_config(page_title=f"{title} · Random Kernel Explorer", page_icon=icon, layout="wide",
                       initial_sidebar_state="collapsed" if on else "auto")
    run = begin_run(title=title, intro=intro, figures=[], settings={})  # figures: what the export writes
    switched = st.session_state.get(SHOWN_PAGE_KEY) != title
    st.session_state[SHOWN_PAGE_KEY] = title
    st.html(_CSS + (PRESENTER_CSS + FILL_SCRIPT if on else "") + (_TO_TOP if switched else ""),
            unsafe_allow_javascript=switched or on)
    for message in errors:
        show_error(message)
    if on:
        # Pages, Lesson, Class and the toggle (and a held lesson's Previous / step / Next): half the row, in one
        # line (in a third they wrapped to two and the charts below lost the height)
        title_column, controls_column = st.columns([1, 1], vertical_alignment="bottom")
        with controls_column, st.container(horizontal=True, horizontal_alignment="right",
                                           vertical_alignment="center", key=PRESENTER_CONTROLS_KEY):
            page_menu(in_sidebar=False)
            lesson_panel(page_file, presenter=True)
            class_panel(in_sidebar=False)  # issue 39: a student's follow box, the lecturer's class code
            with st.popover("Lecture", icon=":material/school:"):  # the lesson and the class: one control, one line
                lesson_manager(page_file)
                st.divider()
                class_controls()
            run.presenter = bool(persistent_widget(st.toggle, key="presenter"))
        with title_column:
            st.title(title)
    else:
        page_menu()
        lesson_panel(page_file, presenter=False)
        class_panel(in_sidebar=True)
        # the lesson and class expanders go under the page's settings (D and the seed in the first screen)
        run.sidebar_tools = lambda: (lesson_expander(page_file), class_expander())
        run.presenter = bool(persistent_widget(st.sidebar.toggle, key="presenter"))
        st.title(title)
    lesson_messages()
    if intro and not run.presenter:
        st.markdown(intro)
    # the note's lead first, then the chart: both in the first screen (below the chart, the note sat under the
    # fold at 1280x720 on 9 of 11 pages); the chart drawn in lead() gives up NOTE_ROOM of its height for it
    run.conclusion = st.container(key="rk-conclusion")
    run.lead = st.container(key=LEAD_KEY)
    if intro and run.presenter:  # the teacher says it; the chart comes first
        st.markdown(intro)


def _slot(name: str):
    """A slot page() kept in this script run, or None (a fragment rerun runs in a thread of its own, without
    them: lead() and notice() then draw in place)."""
    return getattr(current_run(), name)


@contextmanager
def lead():
    """Draw the page's main chart (or its run button) here: it shows right under the title, above the
    page's settings and formulas, inside the first screen at 1280x720 (the code may compute it last)."""
    slot = _slot("lead")
    run = current_run()
    run.in_lead = True
    try:
        if slot is None:
            yield
            return
        with slot:
            yield
    finally:
        run.in_lead = False


def preload_chart_library() -> None:
    """An empty plotly chart, off-screen, for Home's last element. The browser fetches and compiles
    plotly's JavaScript (Streamlit's 4.7 MB PlotlyChart chunk, most of a chart page's first visit)
    only when a plotly element first arrives. Home draws no chart: with this, the chunk loads after
    Home's content, while the reader reads, and the page they open next draws at once (pages switch
    in place, so the compiled chunk is kept). Sent first on a chart page it did not help: measured,
    the deep-link visits were no faster, since the chunk's compilation then holds up the rest of the
    page (benchmarks/results/browser.md)."""
    import plotly.graph_objects as go

    with st.container(key="chart-preload"):
        st.plotly_chart(go.Figure(layout={"meta": PRELOAD_META, "height": 40, "width": 240,
                                          "margin": {"l": 0, "r": 0, "t": 0, "b": 0}}),
                        config={"staticPlot": True, "displayModeBar": False}, key="chart-preload-figure")


#: Seconds between two updates of a progress bar: each update is a message to the browser and a re-render of
#: the page there (20 updates of a 0.2 s study cost the Distributions page's seed change ~70 ms of browser time).
PROGRESS_INTERVAL_S = 0.25


@contextmanager
def progress_bar(text: str):
    """A progress bar for a long computation; yields ``report(fraction, message)`` for the engine's
    ``progress=`` and empties the bar at the end. Updates at most every PROGRESS_INTERVAL_S, so a
    short computation sends none (inside a cached function it replays as nothing, being emptied)."""
    bar = st.progress(0.0, text=text)
    last = time.monotonic()

    def report(fraction: float, message: str) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= PROGRESS_INTERVAL_S:
            last = now
            bar.progress(float(min(max(fraction, 0.0), 1.0)), text=message)

    try:
        yield report
    finally:
        bar.empty()


def columns(n: int, **kwargs):
    """``st.columns(n)``, or in presenter mode n full-width containers (one chart per row)."""
    if presenter():
        return [st.container() for _ in range(n)]
    return st.columns(n, **kwargs)


def _slug(name: str) -> str:
    # case kept: "error vs d" and "error vs D" are different charts and need different keys
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or "data"


def wrap_title(text: str, width: int) -> str:
    """A plot title broken with <br> at spaces so no line is longer than ``width`` characters
    (plotly never wraps a title: it runs off the figure)."""
    lines, line = [], ""
    for word in str(text).replace("<br>", " <br> ").split(" "):
        if word == "<br>":
            lines.append(line)
            line = ""
        elif line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "<br>".join(x for x in lines if x)


#: characters per title line: a full-width chart at 1280x720 (~850 px at 21 px type), half of it, a panel
#: of two beside a legend, a panel of three; in presenter mode (no sidebar) a full-width chart (~1,200 px at 25 px)
#: and a single square heatmap's figure (at least SQUARE_FRAME["least_width"], 740 px; two squares side by side
#: take ~1,000 px at 1280x720, "wide")
TITLE_CHARS = {"full": 64, "half": 30, "panel": 28, "third": 24, "wide": 80, "square": 60}


def fit_for_screen(fig, *, narrow: bool = False):
    """Wrap a long title (more top margin per extra line); larger type in presenter mode."""
    share = square_panel_share(fig)  # presenter mode: one square heatmap is narrower than the screen
    wide = "square" if share and share > 0.5 else "wide"
    width = TITLE_CHARS["half" if narrow else wide if presenter() else "full"]
    title = fig.layout.title.text
    if title:
        wrapped = wrap_title(title, width)
        extra = wrapped.count("<br>")
        if extra:
            top = fig.layout.margin.t if fig.layout.margin.t is not None else 70
            fig.update_layout(title_text=wrapped, margin_t=top + 26 * extra)
    # Panel titles (make_subplots' annotations, or any annotation standing on the plot area) reach up into
    # the top margin; they wrap at the width of their panel (a third, or a half less a legend's share).
    panels = 3 if "xaxis3" in fig.layout else 2 if "xaxis2" in fig.layout else 1
    panel_chars = {3: TITLE_CHARS["third"], 2: TITLE_CHARS["panel"]}.get(panels)
    panel_lines = 0
    for annotation in fig.layout.annotations or ():
        if not annotation.text:
            continue
        if panel_chars and len(annotation.text) > panel_chars:
            annotation.text = wrap_title(annotation.text, panel_chars)
        if over_the_plot(annotation):
            panel_lines = max(panel_lines, 1 + annotation.text.count("<br>"))
    if panel_lines and fig.layout.title.text:
        # plotly centres the title in the top margin: it clears the panel titles below it when the
        # margin is at least the title's height plus twice theirs
        title_lines = 1 + fig.layout.title.text.count("<br>")
        top = fig.layout.margin.t if fig.layout.margin.t is not None else 70
        title_line, panel_line = (TITLE_LINE, PANEL_LINE) if presenter() else (27, 23)  # larger type there
        fig.update_layout(margin_t=max(top, title_line * title_lines + 2 * panel_line * panel_lines + 12))
    if presenter():  # every font, not only the global one (legends, colorbars, panel titles had fixed sizes)
        fig = enlarged(fig, PRESENTER_FONT_STEP)
    return fig


def chart(fig, data: pd.DataFrame, name: str, *, caption: str | None = None, key: str | None = None,
          narrow: bool = False, main: bool | None = None) -> None:
    """The figure, an optional caption, and a CSV download of the data behind it. ``narrow``: the chart
    sits in a half-width column (its title wraps sooner). ``main``: the page's main chart, which leaves
    NOTE_ROOM of its height to the note's lead above it (None: whether it is drawn inside :func:`lead`; a
    fragment's rerun does not know, so a fragment drawing the main chart says so)."""
    if hide_for_question():  # predict, then reveal (issue 39): the question box stands in until the reveal
        return
    slug = key or _slug(name)
    # never by colour alone; in place: the page hands chart() a figure of its own (a copy rebuilt every trace)
    fig = without_colour_alone(fit_for_screen(fig, narrow=narrow and not presenter()), copy=False)
    if presenter():  # the height follows the screen (FILL_SCRIPT); a square heatmap's width its height
        share = square_panel_share(fig)
        chart_key = f"{FILL_KEY}{f'sq{round(100 * share)}-' if share else ''}{slug}"
        if share:
            title_at_top(fig)
    else:
        chart_key = f"chart_{slug}"
        if (current_run().in_lead if main is None else main) and fig.layout.height:
            fig.update_layout(height=max(fig.layout.height - NOTE_ROOM, 240))
    if os.environ.get(VALIDATE_FIGURES_ENV):  # the test suite: the figure as sent is plotly-valid
        check_canonical(fig)
    settings = {"page": name, **recorded_settings()}
    # the PNG's name names the view (plotly's default, the title, was cut mid-word)
    st.plotly_chart(fig, theme=None, key=chart_key,
                    config={"displaylogo": False, "toImageButtonOptions": {
                        "format": "png", "scale": 2, "filename": png_file_name(slug, settings)}})
    alt_text(fig)
    shown = not presenter()  # on a projector the teacher says it: no grey small print, no download buttons
    if caption and shown:
        st.caption(caption)
    figures = current_run().figures
    if figures is not None:
        figures.append(("chart", fig, caption or ""))  # the export keeps the caption
    _download(data, name, slug)


def alt_text(fig) -> None:
    """The chart's text alternative (rkcore.figures.alt_text), visually hidden next to it: a screen reader
    reads the chart's title, axes and series in numbers. Escaped: titles and series names may hold user
    text (an uploaded file's column names); "$" would start math in Streamlit's markdown."""
    text = html.escape(figure_alt_text(fig)).replace("$", "&#36;")
    st.markdown(f'<div class="rk-alt-text" role="note">{text}</div>', unsafe_allow_html=True)


def png_file_name(slug: str, settings: dict) -> str:
    """The PNG export's file name (plotly adds ".png"): the CSV's name, whole words only."""
    return csv_file_name(slug, settings).removesuffix(".csv")


def export_button(lesson=None, slug: str | None = None, *,
                  label: str = "Export this view (one HTML file, works offline)") -> None:
    """One button: the view as a single self-contained HTML file (interactive charts with plotly.js inside,
    the sentences, the settings, the rkcore version; rkcore.figures.export). ``lesson``: a callable
    returning the :class:`~rkcore.figures.export.Lesson` to write (the story's five steps); by default what
    this run drew, in order. Built only when clicked (a 4.6 MB file)."""
    from rkcore.figures.export import Item, Lesson, view_html

    title, intro = current_run().title, current_run().intro
    shown = list(current_run().figures or ())
    settings = dict(recorded_settings())

    def build() -> bytes:
        if lesson is not None:
            return view_html(lesson()).encode()
        items = [Item("text", intro)] if intro else []
        for entry in shown:
            items.append(Item("chart", entry[2], entry[1]) if entry[0] == "chart" else Item("note", entry[1]))
        return view_html(Lesson(title, items, settings)).encode()

    name = re.sub(r"[^A-Za-z0-9_+.-]+", "-", slug or _slug(title).lower())[:120]
    st.download_button(label, data=build, file_name=f"{name}.html", mime="text/html", on_click="ignore",
                       icon=":material/school:", key="export_view")


#: tables up to this many rows are drawn as HTML (st.table), longer ones in the scrolling grid (st.dataframe)
HTML_TABLE_ROWS = 60


def _compact(value: float) -> str:
    """Like the grid's "compact" number format: 3 significant digits with K/M/B/T."""
    for step, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(value) >= step:
            return f"{value / step:.3g}{suffix}" if abs(value) < 1000 * step or suffix != "T" else f"{value:.3g}"
    return f"{value:.3g}"


def _number_format(fmt: str):
    def show(value) -> str:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            return "" if value is None or (isinstance(value, float) and value != value) else literal(value)
        return _compact(float(value)) if fmt == "compact" else fmt % value
    return show


def styled_table(data: pd.DataFrame, column_config: dict | None = None):
    """``data`` as a pandas Styler for st.table, which renders headers and cells as Markdown (with math) and
    takes its headers from the frame's columns (a Styler formats only the cells): column names and text cells
    are escaped (shown literally), numbers get the printf (or "compact") formats of ``column_config``
    (``st.column_config.NumberColumn(format=...)``). The cells keep their values (what tests and the CSV read)."""
    formats = {}
    for column, config in (column_config or {}).items():
        fmt = (config.get("type_config") or {}).get("format") if isinstance(config, dict) else None
        if column in data.columns and fmt:
            formats[literal(column)] = _number_format(fmt)
    shown = data.rename(columns=lambda c: literal(c))
    for column in shown.columns:
        if column in formats:
            continue
        if pd.api.types.is_float_dtype(shown[column]):
            # pandas' Styler shows every float with six decimals ("40.000000", "nan"): 6 significant
            # digits, integral values as integers, missing values blank
            formats[column] = _number_format("%.6g")
        elif not pd.api.types.is_numeric_dtype(shown[column]):
            formats[column] = literal
    return shown.style.format(formats) if formats else shown.style


def table(data: pd.DataFrame, name: str, *, caption: str | None = None, download: bool = True, show: bool = True,
          **dataframe_kwargs) -> None:
    """A table, an optional caption, and its CSV download. Up to :data:`HTML_TABLE_ROWS` rows it is an HTML
    table (st.table): its headers are text in the page, so nothing is cut (the grid of st.dataframe draws
    headers on a canvas at a fixed column width, and makes a first visit load ~0.6 MB more JavaScript);
    longer tables scroll in the grid. ``download=False``: no CSV button (the numbers are downloadable elsewhere).
    ``show=False``: the CSV button only, for a detail table the reader opens with a toggle (an HTML table renders
    every cell as Markdown in the browser, on every rerun, even inside a collapsed expander)."""
    dataframe_kwargs.setdefault("hide_index", True)
    labels = {c: config["label"] for c, config in (dataframe_kwargs.get("column_config") or {}).items()
              if isinstance(config, dict) and config.get("label")}
    if labels:  # the shown names are the data's names (table, CSV and tests agree)
        data = data.rename(columns=labels)
        dataframe_kwargs["column_config"] = {labels.get(c, c): config
                                             for c, config in dataframe_kwargs["column_config"].items()}
    if show:
        if len(data) <= HTML_TABLE_ROWS:
            st.table(styled_table(data, dataframe_kwargs.get("column_config")),
                     hide_index=dataframe_kwargs["hide_index"])
        else:
            st.dataframe(data, **dataframe_kwargs)
        if caption:
            st.caption(caption)
    if download:
        _download(data, name, _slug(name))


def csv_with_settings(data: pd.DataFrame, settings: dict) -> bytes:
    """The CSV with its settings as "# key = value" header lines (pandas: ``read_csv(f, comment="#")``)."""
    header = "".join(f"# {k} = {','.join(map(str, v)) if isinstance(v, tuple) else v}\n" for k, v in settings.items())
    return (header + data.to_csv(index=False)).encode()


def csv_file_name(slug: str, settings: dict) -> str:
    """``gram_difference_interactions_n200_anova_m2_rk_D256_seed0.csv``: the file name names the view with the
    settings the table tags for file names (:func:`rkapp.state.file_name_parts`)."""
    return re.sub(r"[^A-Za-z0-9_+.-]+", "-", "_".join([slug, *file_name_parts(settings)]))[:150] + ".csv"


def _download(data: pd.DataFrame, name: str, slug: str) -> None:
    if presenter():  # a projector shows no buttons nobody in the room can press
        return
    settings = {"page": name, **recorded_settings()}
    st.download_button(f"Download data: {name} (CSV)", icon=":material/download:",
                       data=lambda: csv_with_settings(data, settings), file_name=csv_file_name(slug, settings),
                       mime="text/csv", key=f"download_{slug}", on_click="ignore")


_INVISIBLE = re.compile(r"\\(mathbf|boldsymbol|mathcal|mathbb|mathrm|text|operatorname|displaystyle|textstyle|"
                        r"bigg|Bigg|big|Big|left|right|[,;:! ])")
#: a display formula longer than this (visible symbols) is broken into lines at its top-level spaces
FORMULA_CHARS = 50


def visible_length(latex: str) -> int:
    """Roughly how many symbols a formula shows (commands count as one, styling and braces as none)."""
    s = _INVISIBLE.sub("", latex)
    s = re.sub(r"\\[A-Za-z]+", "X", s)
    return len(re.sub(r"[{}^_\s&]", "", s))


def _split_top_level(latex: str) -> list[str]:
    """Parts of a formula separated by ``\\qquad`` or ``\\quad`` outside braces, \\left..\\right and environments."""
    parts, start, depth, i = [], 0, 0, 0
    while i < len(latex):
        if latex.startswith(r"\begin", i) or latex.startswith(r"\left", i):
            depth += 1
        elif latex.startswith(r"\end", i) or latex.startswith(r"\right", i):
            depth -= 1
        elif latex[i] == "{":
            depth += 1
        elif latex[i] == "}":
            depth -= 1
        for sep in (r"\qquad", r"\quad"):
            if depth == 0 and latex.startswith(sep, i) and not latex[i + len(sep):i + len(sep) + 1].isalpha():
                parts.append(latex[start:i].rstrip().rstrip(",").rstrip())
                i += len(sep)
                start = i
                break
        else:
            i += 1
            continue
    parts.append(latex[start:])
    return [p.strip() for p in parts if p.strip()]


def fit_formula(latex: str, max_chars: int = FORMULA_CHARS) -> str:
    """A display formula that fits a 1280-px screen: when it is long, its top-level parts (separated by
    \\quad / \\qquad) go on separate lines of a ``gathered`` block."""
    if visible_length(latex) <= max_chars:
        return latex
    parts = _split_top_level(latex)
    if len(parts) < 2:
        return latex
    return r"\begin{gathered}" + r" \\ ".join(parts) + r"\end{gathered}"


def formula(latex: str, caption: str | None = None) -> None:
    """A display formula (broken into lines when long) and its caption, inside the page's one
    "Formulas" expander, collapsed in both modes (one click away): the chart, not the math, is what fits above
    the fold (opened in presenter mode it pushed the main chart below the first screen)."""
    run = current_run()
    box = run.formulas
    if box is None:
        box = run.formulas = st.expander("Formulas (from the paper)", icon=":material/function:", expanded=False)
    with box:
        st.latex(fit_formula(latex))
        if caption:
            st.caption(caption)


def notice(text: str, *, here: bool = False, into=None) -> None:
    """The "what to notice" box of a view: the note's first sentence (:func:`rkcore.teaching.claims.lead_and_rest`)
    in the first screen, right above the main chart (the slot :func:`page` keeps), the rest behind "More" where
    the code is (under the chart). ``here``: the lead where the code is too; ``into``: the lead in that
    container (the story keeps one above its chart and calls this after drawing it)."""
    slot = into if into is not None else None if here else _slot("conclusion")
    target = slot if slot is not None else st
    lead, rest = lead_and_rest(text)  # one breath on screen, the rest behind "More"
    target.info(f"**What to notice.** {lead}", icon=":material/visibility:")
    if rest:  # in place (under the chart, where the page's code is): the lead's slot stays one box high
        st.expander("More", icon=":material/notes:").markdown(rest)
    figures = current_run().figures
    if figures is not None:
        figures.append(("note", text))


#: session key of the "Reproduce in Python" expander (open/closed); tests set it to read the snippet
REPRODUCE_KEY = "_rk_reproduce_open"


def reproduce(code: str) -> None:
    """An expander with the rkcore calls that reproduce the view. The code is sent only while the expander
    is open: st.code makes the browser load and evaluate a 1.5 MB syntax-highlighting chunk, about a fifth
    of a first visit's JavaScript work (benchmarks/results/browser.md), for a box most visits never open."""
    export_button()
    box = st.expander("Reproduce in Python", icon=":material/code:", key=REPRODUCE_KEY, on_change="rerun")
    if box.open:
        with box:
            st.code(code, language="python")
            notebook_button(code)


def notebook_button(code: str) -> None:
    """The reproduce code as a Jupyter notebook to download (rkcore.notebooks): the page's title and
    settings in a first cell, the code in cells. Built only when clicked."""
    from rkcore.notebooks import notebook_json, view_notebook

    title = current_run().title
    settings = dict(recorded_settings())

    def build() -> bytes:
        return notebook_json(view_notebook(code, title=title, settings=settings)).encode()

    name = re.sub(r"[^A-Za-z0-9_+.-]+", "-", _slug(title).lower())[:120]
    st.download_button("Download as a notebook (.ipynb)", data=build, file_name=f"{name}.ipynb",
                       mime="application/x-ipynb+json", on_click="ignore", icon=":material/download:",
                       key="reproduce_notebook")
