"""Write a benchmark's table into its results file as one dated section, replacing that section's previous run.

Every script with a results file uses it the same way::

    from benchmarks.results_io import add_output_arguments, Run

    add_output_arguments(parser, "float32.md")          # --out (default: the results file) and --quick
    args = parser.parse_args(argv)
    run = Run.start(args)                               # reads the machine load before the measurement
    ...                                                 # measure; build a markdown table
    run.write("float32 vs float64 transform, every registry map", table)   # load after; section written

A section is a heading (``## title``) followed by one provenance line (date, command, commit, machine
load before and after) and the body. Writing replaces the section whose heading has the same title (a
trailing ``<!-- readme -->`` flag on the old heading is kept, so a README-fed section is regenerated in
place), or appends the section when there is none; every other section of the file stays as it is.

``--quick`` runs a benchmark at tiny sizes (seconds) to check that it works. A quick run writes only
where ``--out`` points (so a smoke run never replaces a finding in ``benchmarks/results``); without
``--out`` it prints the section. ``--out ''`` prints and writes nothing for a full run too.
"""
from __future__ import annotations

import argparse
import datetime
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
README_FLAG = "<!-- readme -->"
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")


def add_output_arguments(parser: argparse.ArgumentParser, results_file: str) -> None:
    """Add ``--out`` (default ``benchmarks/results/<results_file>``) and ``--quick`` to a script's parser."""
    parser.add_argument("--out", default=None,
                        help=f"results file to write the section into (default: benchmarks/results/{results_file}; "
                             "with --quick: print only); '' prints only")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, seconds: a smoke run of the script")
    parser.set_defaults(results_file=results_file)


def output_path(args: argparse.Namespace) -> Path | None:
    """Where the section goes: ``--out`` if given ('' = nowhere), else the results file unless ``--quick``."""
    if args.out is not None:
        return Path(args.out) if args.out else None
    return None if args.quick else RESULTS / args.results_file


def machine_load() -> float:
    """The 1-minute load average (0.0 where the OS has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:  # pragma: no cover - not on Linux
        return 0.0


def commit() -> str:
    """The short commit of the repository, with ``+changes`` when the code measured (rkcore/, rkapp/, pages/, the
    scripts; not the results files) differs from it."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "rkcore", "rkapp", "pages", "app.py", "benchmarks",
                                ":(exclude)benchmarks/results"], cwd=REPO,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + (" +changes" if dirty else "")


def command_line(argv: list[str] | None = None) -> str:
    """The command that ran, relative to the repository root."""
    argv = sys.argv if argv is None else argv
    script = Path(argv[0]).resolve()
    try:
        script_text = script.relative_to(REPO).as_posix()
    except ValueError:
        script_text = argv[0]
    return shlex.join(["python", script_text, *argv[1:]])


def replace_section(text: str, title: str, section: str, level: int = 2) -> str:
    """``text`` with the section headed ``title`` (at ``level``) replaced by ``section``, or with it appended.

    A section runs to the next heading of the same or a higher level. A README flag on the old heading
    is carried to the new one.
    """
    lines = text.splitlines()
    for start, line in enumerate(lines):
        match = _HEADING.match(line)
        if not match or len(match.group(1)) != level:
            continue
        old_title = match.group(2)
        flagged = old_title.endswith(README_FLAG)
        if (old_title[: -len(README_FLAG)].rstrip() if flagged else old_title) != title:
            continue
        end = start + 1
        while end < len(lines):
            nxt = _HEADING.match(lines[end])
            if nxt and len(nxt.group(1)) <= level:
                break
            end += 1
        new = section.rstrip("\n").splitlines()
        if flagged and not new[0].endswith(README_FLAG):
            new[0] = f"{new[0]} {README_FLAG}"
        tail = lines[end:]
        return "\n".join(lines[:start] + new + ([""] if tail else []) + tail).rstrip("\n") + "\n"
    head = text.rstrip("\n")
    return (head + "\n\n" if head else "") + section.rstrip("\n") + "\n"


@dataclass
class Run:
    """One measurement: what ran, when, on which commit, and the load before it (the load after is read at
    :meth:`write`)."""

    args: argparse.Namespace
    command: str
    started: datetime.datetime
    load_before: float

    @classmethod
    def start(cls, args: argparse.Namespace, argv: list[str] | None = None) -> "Run":
        return cls(args, command_line(argv), datetime.datetime.now(datetime.timezone.utc), machine_load())

    def provenance(self, load_after: float) -> str:
        return (f"Run {self.started:%Y-%m-%d %H:%M} UTC{' (quick smoke run: tiny sizes)' if self.args.quick else ''}, "
                f"`{self.command}`, commit {commit()}; machine: {os.cpu_count()} cores, shared, load average (1 min) "
                f"{self.load_before:.2f} before, {load_after:.2f} after.")

    def section(self, title: str, body: str, level: int = 2) -> str:
        return "\n".join([f"{'#' * level} {title}", "", self.provenance(machine_load()), "", body.strip("\n"), ""])

    def write(self, title: str, body: str, level: int = 2, preamble: str | None = None) -> Path | None:
        """Print the section and write it into the output file; returns the file written (None: printed only).

        ``preamble`` is the file's first lines when the file does not exist yet (default: ``# title``).
        """
        section = self.section(title, body, level)
        print(section)
        path = output_path(self.args)
        if path is None:
            return None
        text = path.read_text(encoding="utf-8") if path.exists() else (preamble or f"# {title}") + "\n"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(replace_section(text, title, section, level), encoding="utf-8")
        print(f"wrote the section {title!r} of {path}")
        return path
