"""Fail when the built site would load anything from the network: a script, style sheet, font, image or
frame whose src/href (or a CSS url()) is http(s):// or protocol-relative. Plain links (<a href>) to the
paper or other sites are fine: they are navigation, not resources.

Usage: python docs/check_offline.py docs/_build/html
"""
from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

REMOTE = re.compile(r"^\s*(https?:)?//", re.IGNORECASE)
CSS_URL = re.compile(r"""url\(\s*['"]?((?:https?:)?//[^'")]+)""", re.IGNORECASE)
#: tag -> the attributes that make the browser fetch something (<link> only for these rel values)
FETCHING = {"script": ("src",), "img": ("src", "srcset"), "iframe": ("src",), "source": ("src", "srcset"),
            "video": ("src", "poster"), "audio": ("src",), "embed": ("src",), "object": ("data",)}
FETCHING_LINK_RELS = {"stylesheet", "preload", "modulepreload", "icon", "shortcut", "apple-touch-icon", "prefetch",
                      "manifest"}


class _Resources(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.remote: list[str] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        names = FETCHING.get(tag, ())
        if tag == "link" and FETCHING_LINK_RELS & set((values.get("rel") or "").lower().split()):
            names = ("href",)
        for name in names:
            if values.get(name) and REMOTE.match(values[name]):
                self.remote.append(f"<{tag} {name}={values[name]!r}>")
        self.remote += [f"<{tag} style> url({url})" for url in CSS_URL.findall(values.get("style") or "")]


def remote_resources(site: Path) -> list[str]:
    """Every network resource the pages and style sheets of ``site`` would load, as "file: what" lines."""
    found = []
    for page in sorted(site.rglob("*.html")):
        parser = _Resources()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        found += [f"{page.relative_to(site)}: {item}" for item in parser.remote]
    for sheet in sorted(site.rglob("*.css")):
        found += [f"{sheet.relative_to(site)}: url({url})"
                  for url in CSS_URL.findall(sheet.read_text(encoding="utf-8", errors="replace"))]
    return found


def main(argv: list[str]) -> int:
    site = Path(argv[1] if len(argv) > 1 else "docs/_build/html")
    if not (site / "index.html").is_file():
        print(f"no built site at {site} (index.html missing)", file=sys.stderr)
        return 2
    found = remote_resources(site)
    for line in found:
        print(f"loads from the network: {line}", file=sys.stderr)
    print(f"{site}: {len(list(site.rglob('*.html')))} pages, {len(found)} network resources")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
