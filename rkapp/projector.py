"""Presenter mode's projector rules (rkapp.layout uses them): the CSS, the script that sizes every chart by the
screen, and the title layout of a screen-sized square heatmap."""
from __future__ import annotations

import json

#: Presenter mode: everything larger (never smaller: metric values keep their own, larger size), one chart
#: per row (see :func:`rkapp.layout.columns`), no sidebar (nothing is drawn there; hidden, with its expand
#: button, should anything of an earlier run linger), a tighter header so the chart starts high.
PRESENTER_CSS = """
<style>
  .block-container, [data-testid="stMainBlockContainer"] { padding-top: 3.2rem; }
  [data-testid="stMain"] { font-size: 1.2rem; }
  [data-testid="stMain"] p, [data-testid="stMain"] li { font-size: 1.2rem; }
  div[data-testid="stCaptionContainer"], div[data-testid="stCaptionContainer"] p { font-size: 1.1rem; }
  div[data-testid="stMetricValue"], div[data-testid="stMetricValue"] p,
  div[data-testid="stMetricValue"] div { font-size: 2.2rem !important; }
  h1 { font-size: 2.4rem !important; }
  .katex { font-size: 1.25em; }
  section[data-testid="stSidebar"], [data-testid="stExpandSidebarButton"] { display: none !important; }
  /* no header bar (its menu is for the app's developer): the title starts at the top, the chart higher */
  header[data-testid="stHeader"] { display: none !important; }
  .block-container, [data-testid="stMainBlockContainer"] { padding-top: 0.6rem; }
  h1 { line-height: 1.15 !important; }
  [data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] { gap: 0.45rem; }
  /* the teacher says it: no grey small print, no CSV buttons (the page's own ones included; the offline
     export stays, for the teacher) */
  [data-testid="stMain"] [data-testid="stElementContainer"]:has([data-testid="stCaptionContainer"]),
  [data-testid="stMain"] [data-testid="stElementContainer"]:has([data-testid="stDownloadButton"]):not(.st-key-export_view):not(.st-key-lesson_save):not(.st-key-lesson_export)
      { display: none !important; }
  /* the note's box (on every page and story step) as slim as the page's own conclusion box */
  [data-testid="stMain"] [data-testid="stAlertContainer"] { padding-top: 0.35rem !important;
      padding-bottom: 0.35rem !important; }
  /* charts as tall as the screen lets them (see FILL_SCRIPT): the element keeps no fixed size of its own,
     plotly's element takes the height, and Streamlit hands plotly the size it measures there */
  [class*="st-key-rkfill-"] { flex: 0 0 auto !important; height: auto !important; }
  [class*="st-key-rkfill-"] [data-testid="stFullScreenFrame"] { height: auto !important; }
  [class*="st-key-rkfill-"] [data-testid="stPlotlyChart"] { height: var(--rk-fill-height, 62vh) !important; }
  /* square heatmaps: no wider than their squares and colour bar need (the bar stays beside the plot) */
  [class*="st-key-rkfill-sq"] { width: var(--rk-fill-width, 100%) !important; max-width: 100%;
      margin-left: auto; margin-right: auto; }
</style>
"""

#: key prefix of a chart sized by the screen in presenter mode (see FILL_SCRIPT); "rkfill-sq45-..." marks square
#: heatmap panels, each 45% of the figure's width
FILL_KEY = "rkfill-"
#: px a square heatmap's figure spends around its squares: above (title, panel titles) and below (x ticks and
#: title); beside them (y ticks and title, colour bar); and the least width, where a title of TITLE_CHARS["square"]
#: characters fits on one line
SQUARE_FRAME = {"vertical": 130, "horizontal": 230, "least_width": 740}
#: Presenter mode: every chart as tall as the screen lets it be. Streamlit 1.67's public API sizes a chart in
#: px only (no viewport in st.context) and plotly's own autosize takes the size of Streamlit's element, so the
#: browser measures: a chart whose top lies in the first screen reaches down to the screen's bottom, a chart
#: further down is 85% of the screen high (one chart per screen as the teacher scrolls). The height goes to
#: the CSS variable --rk-fill-height that the presenter CSS gives plotly's element; Streamlit measures that
#: element and redraws plotly at its size. A square heatmap's element is as wide as its squares (as high as
#: the plot area) and colour bar need, so the bar sits beside the plot, not across the screen. Recomputed
#: when the window is resized or the page's content changes (a chart drawn above moves the ones below).
FILL_SCRIPT = """<script>(() => {
  if (window.__rkFill) { window.__rkFill(); return; }
  const frame = %(frame)s;
  const fit = () => {
    const vh = window.innerHeight, main = document.querySelector('[data-testid="stMain"]');
    const scrolled = main ? main.scrollTop : 0;
    document.querySelectorAll('[class*="st-key-%(prefix)s"]').forEach(el => {
      const top = el.getBoundingClientRect().top + scrolled;
      const height = Math.round(Math.max(320, top < 0.6 * vh ? vh - top - 4 : 0.85 * vh));
      if (el.style.getPropertyValue('--rk-fill-height') !== height + 'px')
        el.style.setProperty('--rk-fill-height', height + 'px');
      const share = (el.className.match(/st-key-%(prefix)ssq(\\d+)-/) || [])[1];
      if (share) {
        const width = Math.round(Math.max(frame.least_width,
                                          (height - frame.vertical) * 100 / share + frame.horizontal));
        if (el.style.getPropertyValue('--rk-fill-width') !== width + 'px')
          el.style.setProperty('--rk-fill-width', width + 'px');
      }
    });
  };
  let queued = false;
  window.__rkFill = () => { if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; fit(); }); } };
  window.addEventListener('resize', window.__rkFill);
  new MutationObserver(window.__rkFill).observe(document.body, {childList: true, subtree: true});
  window.__rkFill();
})();</script>""" % {"frame": json.dumps(SQUARE_FRAME), "prefix": FILL_KEY}

def over_the_plot(annotation) -> bool:
    """Whether an annotation is a panel title: standing on the top edge of the plot area (paper coordinates)
    or of its panel (a y-axis domain: over a square heatmap, whose domain shrinks to the square)."""
    yref = annotation.yref or ""
    return ((yref == "paper" or yref.endswith(" domain")) and (annotation.y or 0) >= 1
            and annotation.yanchor == "bottom")


#: px per line of a presenter-mode figure title (25 px type) and of a panel title (20-22 px type)
TITLE_LINE, PANEL_LINE = 31, 27


def title_at_top(fig) -> None:
    """A heatmap's title pinned to the figure's top edge and the top margin just high enough for it and the
    panel titles under it: plotly centres a title in the top margin, which then had to be twice the panel
    titles' height (85 px of a 720-px screen for one title line over one line of panel titles)."""
    if not fig.layout.title.text:
        return
    title_lines = 1 + fig.layout.title.text.count("<br>")
    panel_lines = max((1 + a.text.count("<br>") for a in fig.layout.annotations or ()
                       if a.text and over_the_plot(a)), default=0)
    # (plotly anchors a title of several lines by its first: the pad moves the others down into the margin)
    pad = dict(t=8 + TITLE_LINE * (title_lines - 1))
    fig.update_layout(title=dict(yref="container", y=1.0, yanchor="top", pad=pad),
                      margin_t=8 + TITLE_LINE * title_lines + PANEL_LINE * panel_lines + 6)
