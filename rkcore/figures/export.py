"""A lesson that works offline: a view (or the whole story) as one self-contained HTML file.

The file holds plotly.js itself (inlined once, ~4.6 MB), every chart as an interactive plotly figure, the
sentences shown beside them, the settings behind them and the rkcore version. It loads nothing from the
network: a course page or a lecture hall without network shows it as the dashboard did.

Pure functions (no streamlit): :func:`view_html` from a list of items, :func:`story_html` computes the
five story steps (rkcore.teaching.story) and writes them the same way; the dashboard's export button and the
``rkcore export-story`` command both end here.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from .distinguish import without_colour_alone

#: the id plotly gives each chart's div in the file: ``rk-chart-<i>`` (tests find the charts by it)
CHART_ID = "rk-chart-{}"


@dataclass
class Item:  # numpydoc ignore=PR02
    """One block of an exported view: ``kind`` is "chart" (``figure`` and an optional ``text`` caption),
    "note" (a "what to notice" sentence), "heading" or "text".

    Parameters
    ----------
    kind : str
        Block kind: "chart", "note", "heading" or "text".
    text : str, default ""
        Caption, sentence, heading or paragraph text.
    figure : plotly.graph_objects.Figure or None, optional
        The chart of a "chart" block.
    """
    kind: str
    text: str = ""
    figure: go.Figure | None = None


@dataclass
class Lesson:  # numpydoc ignore=PR02
    """What an export holds: a title, blocks in reading order, and the settings that produced them.

    Parameters
    ----------
    title : str
        Title of the exported document.
    items : list of Item
        Blocks in reading order.
    settings : dict
        Settings that produced the blocks, shown as a table.
    """
    title: str
    items: list[Item] = field(default_factory=list)
    settings: dict = field(default_factory=dict)


#: $...$ (inline) and $$...$$ (display) formulas of the pages' text; a backslash-escaped dollar is a dollar
_MATH = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$|(?<!\\)\$(.+?)(?<!\\)\$", re.S)


def _math_html(latex: str, display: bool) -> str:
    """A formula as MathML, which browsers draw themselves: no script, no font server, works offline (the
    page's KaTeX is part of Streamlit's frontend, absent from an exported file). Without the latex2mathml
    package the formula's source is shown as code, never as text with raw dollars."""
    try:
        from latex2mathml.converter import convert
    except ImportError:  # optional (pip install latex2mathml): the app's fixed install does not bring it
        return f"<code>{html.escape(latex, quote=False)}</code>"
    try:
        return convert(latex, display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - a formula the converter does not know: its source, legibly
        return f"<code>{html.escape(latex, quote=False)}</code>"


def _inline_markdown(text: str) -> str:
    """The sentences' own markup (**bold**, *italic*, `code`, $math$) as HTML; everything else shown literally."""
    pieces, formulas = [], []
    for k, part in enumerate(_MATH.split(str(text))):
        if k % 3 == 0:  # text between formulas (split yields text, display group, inline group)
            pieces.append(part.replace("\\$", "$"))
        elif part is not None:
            formulas.append(_math_html(part, display=k % 3 == 1))
            pieces.append(f"\x00{len(formulas) - 1}\x00")
    out = html.escape("".join(pieces), quote=False)
    out = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", out)
    out = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<i>\1</i>", out)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub("\x00(\\d+)\x00", lambda m: formulas[int(m[1])], out)


_STYLE = """
body { font-family: "Source Sans Pro", Helvetica, Arial, sans-serif; max-width: 1200px; margin: 1.5rem auto;
       padding: 0 1.5rem; color: #222; font-size: 1.15rem; line-height: 1.5; }
h1 { font-size: 2.1rem; margin-bottom: 0.2rem; } h2 { font-size: 1.5rem; margin-top: 2.2rem; }
.note { background: #eaf3fc; color: #1c4f8c; border-radius: 0.5rem; padding: 0.8rem 1rem; margin: 0.8rem 0; }
.caption { color: #666; font-size: 1rem; }
.settings { border-collapse: collapse; font-size: 0.95rem; } .settings td { border: 1px solid #ddd; padding: 2px 8px; }
footer { color: #666; font-size: 0.9rem; margin-top: 2rem; border-top: 1px solid #ddd; padding-top: 0.6rem; }
"""


def _settings_table(settings: dict) -> str:
    if not settings:
        return ""
    rows = "".join(f"<tr><td>{html.escape(str(k))}</td><td>{html.escape(_setting_text(v))}</td></tr>"
                   for k, v in settings.items())
    return f'<h2>Settings</h2><table class="settings">{rows}</table>'


def _setting_text(value) -> str:
    return ", ".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)


def view_html(lesson: Lesson, *, version: str | None = None, when: datetime | None = None) -> str:
    """The lesson as one HTML document with plotly.js inlined: charts stay interactive (zoom, hover),
    nothing is fetched from the network.

    Parameters
    ----------
    lesson : Lesson
        What to export.
    version : str or None, optional
        rkcore version named in the footer; None uses the installed one.
    when : datetime.datetime or None, optional
        Export time named in the footer; None is now (UTC).

    Returns
    -------
    str
        The self-contained HTML document.
    """
    if version is None:
        from .. import __version__ as version
    when = when or datetime.now(timezone.utc)
    parts, n_chart = [], 0
    for item in lesson.items:
        if item.kind == "chart" and item.figure is not None:
            div = pio.to_html(without_colour_alone(item.figure), include_plotlyjs=False, full_html=False, div_id=CHART_ID.format(n_chart),
                              config={"displaylogo": False, "responsive": True})
            n_chart += 1
            caption = f'<p class="caption">{_inline_markdown(item.text)}</p>' if item.text else ""
            parts.append(f'<figure class="chart">{div}{caption}</figure>')
        elif item.kind == "note":
            parts.append(f'<div class="note"><b>What to notice.</b> {_inline_markdown(item.text)}</div>')
        elif item.kind == "heading":
            parts.append(f"<h2>{_inline_markdown(item.text)}</h2>")
        elif item.text:
            parts.append(f"<p>{_inline_markdown(item.text)}</p>")
    title = html.escape(lesson.title)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"<style>{_STYLE}</style><script>{get_plotlyjs()}</script></head><body>"
            f"<h1>{title}</h1>{''.join(parts)}{_settings_table(lesson.settings)}"
            f"<footer>Random Kernel Explorer (rkcore {html.escape(str(version))}), exported "
            f"{when.strftime('%Y-%m-%d %H:%M UTC')}. Self-contained: plotly.js is inside this file; it needs no "
            "network.</footer></body></html>\n")


def story_lesson(duel_n: int = 8000, *, progress=None) -> Lesson:
    """The five story steps computed now (the duel is measured now; its caption says when and where).

    Parameters
    ----------
    duel_n : int, default 8000
        Training points of the classifier duel.
    progress : callable or None, optional
        Called with a message as each step is computed.

    Returns
    -------
    Lesson
        The story's headings, notes and charts.
    """
    from ..teaching import story
    from .story import STEP_BUILDERS

    def say(message: str) -> None:  # numpydoc ignore=GL08
        if progress is not None:
            progress(message)

    lesson = Lesson("The story in five screens", settings={"story kernel": story.STORY_KERNEL.label(),
                                                           "story data": f"{story.STORY_DATASET} (n = {story.STORY_N})",
                                                           "speed duel n": int(duel_n)})
    for step in story.story_steps(duel_n, progress=say):
        lesson.items += [Item("heading", step.heading), Item("note", step.sentence)]
        lesson.items.append(Item("chart", step.caption, STEP_BUILDERS[step.kind](*step.figure_args)))
    return lesson


def story_html(duel_n: int = 8000, *, progress=None) -> str:
    """The whole story as one offline HTML file (what ``rkcore export-story`` writes).

    Parameters
    ----------
    duel_n : int, default 8000
        Training points of the classifier duel.
    progress : callable or None, optional
        Called with a message as each step is computed.

    Returns
    -------
    str
        The story as one HTML document.
    """
    return view_html(story_lesson(duel_n, progress=progress))
