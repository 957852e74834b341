"""Write the benchmark page's tables (docs/benchmarks/index.md, which the README links) from
benchmarks/results, so the tables are never hand copies.

Every section of ``benchmarks/results/*.md`` whose heading line ends with ``<!-- readme -->`` is
copied (its heading as ``##``, text and tables up to the next heading of the same or a higher level,
their headings one level up) between the page's markers::

    <!-- BEGIN generated benchmarks ... -->
    ...
    <!-- END generated benchmarks -->

Files are read in name order and sections in file order. ``python benchmarks/make_readme_tables.py``
rewrites the page; ``--check`` exits 1 (and changes nothing) when it is out of date, which is what
tests/ecosystem/test_readme.py asserts.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
README = REPO / "docs" / "benchmarks" / "index.md"  # the benchmark page of the documentation
FLAG = "<!-- readme -->"
BEGIN = "<!-- BEGIN generated benchmarks: python benchmarks/make_readme_tables.py; do not edit by hand -->"
END = "<!-- END generated benchmarks -->"
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")


def flagged_sections(text: str, source: str) -> list[str]:
    """The flagged sections of one results file, each as markdown with a ``##`` heading and its source."""
    lines = text.splitlines()
    sections = []
    i = 0
    while i < len(lines):
        match = _HEADING.match(lines[i])
        if not (match and match.group(2).endswith(FLAG)):
            i += 1
            continue
        level, title = len(match.group(1)), match.group(2)[: -len(FLAG)].rstrip()
        j = i + 1
        while j < len(lines):
            nxt = _HEADING.match(lines[j])
            if nxt and len(nxt.group(1)) <= level:
                break
            j += 1
        body = "\n".join(_promoted(line) for line in lines[i + 1:j]).strip()
        sections.append(f"## {title}\n\n{body}\n\n(from `{source}`)")
        i = j
    return sections


def _promoted(line: str) -> str:
    """A heading of a copied section one level up (the page's sections are ``##``, under its ``#`` title)."""
    match = _HEADING.match(line)
    return line[1:] if match and len(match.group(1)) > 2 else line


def generated_block(results: Path = RESULTS) -> str:
    """Everything between (and including) the markers."""
    sections = []
    for path in sorted(results.glob("*.md")):
        sections += flagged_sections(path.read_text(encoding="utf-8"), path.relative_to(results.parent.parent).as_posix())
    if not sections:
        raise ValueError(f"No section of {results} is flagged with {FLAG}.")
    return "\n\n".join([BEGIN, *sections, END])


def render(readme: str, results: Path = RESULTS) -> str:
    """The README text with the generated block replaced (the markers must be there, once each)."""
    if readme.count(BEGIN) != 1 or readme.count(END) != 1 or readme.index(BEGIN) > readme.index(END):
        raise ValueError("The benchmark page must hold the BEGIN and END markers of the generated benchmarks once each.")
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + generated_block(results) + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is out of date; write nothing")
    args = parser.parse_args(argv)
    current = README.read_text(encoding="utf-8")
    wanted = render(current)
    if args.check:
        if wanted != current:
            print("The benchmark page's tables are out of date: run python benchmarks/make_readme_tables.py",
                  file=sys.stderr)
            return 1
        return 0
    if wanted != current:
        README.write_text(wanted, encoding="utf-8")
        print(f"{README.relative_to(REPO)} updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
