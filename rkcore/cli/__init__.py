"""The ``rkcore`` command: paper studies from the shell.

``rkcore timing`` (Figure 1), ``rkcore table1`` (Table 1) and ``rkcore accuracy`` (Figures 2
and 3); ``rkcore --version``. ``python -m rkcore`` is the same command.

- Every argument is bounded and checked before any work starts (exit code 2 with a one-line
  message, never a traceback); a choice that cannot work is never offered.
- Every output is checked before any work too (:mod:`rkcore.cli.outputs`): an input is never
  overwritten, an existing file only with ``--overwrite``, a pipe or device never; results are
  written atomically (a temporary file in the same folder, then ``os.replace``).
- Progress goes to stderr (tqdm: a bar per section on a terminal, plain lines otherwise), nothing
  with ``--quiet`` (warnings included). Results are written with ``--out FILE.csv`` or
  ``FILE.parquet`` (integer columns stay integers), with ``FILE.provenance.json`` beside them:
  arguments, versions, seed, SHA-256 of every input file, the BLAS libraries and their threads,
  machine, start and end time. ``--scheduler ADDRESS`` runs the study on a Dask cluster.

Layers: this package imports the engines' public API (in :mod:`rkcore.cli.runs`, loaded only after
the arguments parse, so that ``--help`` and ``--version`` answer at once); no engine imports it.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from typing import NoReturn

from .. import __version__
from .outputs import check_input, check_outputs, input_files, provenance_path, sibling, write_atomically
from .parsers import COMMANDS

__all__ = ["EXIT_OK", "EXIT_USAGE", "EXIT_FAILED", "build_parser", "main"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class Parser(argparse.ArgumentParser):
    """argparse's parser with a one-line error (the usage block is one ``--help`` away)."""

    def error(self, message: str) -> NoReturn:
        """Exit with status EXIT_USAGE after one line: the program, the message and where help is.

        Parameters
        ----------
        message : str
            argparse's description of what was wrong with the command line.
        """
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``rkcore`` argument parser (standard library only: no study module is imported).

    Returns
    -------
    argparse.ArgumentParser
        The parser with one subcommand per entry of ``COMMANDS`` and ``--version``.
    """
    parser = Parser(
        prog="rkcore", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Random feature maps for the itemset kernel (Atarashi, Maji & Oyama, AAAI-19): the paper's "
                    "studies.",
        epilog="examples:\n  rkcore timing --figure1 --out figure1.csv\n"
               "  rkcore table1 --data ml-100k --n 3000 --trials 10\n"
               "  rkcore accuracy --data builtin:interactions --methods kernel_svm,rk --D 2d,8d\n\n"
               "rkcore COMMAND --help lists a command's options, their defaults and the built-in datasets.")
    parser.add_argument("--version", action="version", version=f"rkcore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    for add in COMMANDS.values():
        add(sub)
    return parser


def _error(command: str, message: object) -> None:
    lines = str(message).strip().splitlines()
    print(f"rkcore {command}: error: {lines[0] if lines else type(message).__name__}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run ``rkcore COMMAND [options]``; returns the exit code (0 ok, 2 bad arguments or input, 1 failure).

    Parameters
    ----------
    argv : list[str] or None, default None
        The command-line arguments after the program name; None reads ``sys.argv[1:]``.

    Returns
    -------
    int
        The exit code: 0 ok, 2 bad arguments or input, 1 failure, 130 interrupted.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help / --version (0) or a usage error (2, message already printed)
        return int(exc.code or 0)
    try:
        if getattr(args, "data", None):
            check_input(args.data)
        if args.command == "export-story":
            return _export_story(args)
        from . import runs  # deferred: numpy, scikit-learn and the engines load only for real work

        outputs = check_outputs(runs.output_paths(args), input_files(getattr(args, "data", None)), args.overwrite)
        with warnings.catch_warnings():
            if args.quiet:  # "nothing on stderr": the learners' ConvergenceWarning included
                warnings.simplefilter("ignore")
            tables, record = _run(runs, args, argv)
        if outputs:
            print("wrote " + ", ".join(map(str, _write(runs, args, tables, record))))
    except (ValueError, FileNotFoundError, ImportError, MemoryError) as exc:
        _error(args.command, exc)
        return EXIT_USAGE
    except KeyboardInterrupt:
        _error(args.command, "interrupted; nothing written")
        return 130
    except Exception as exc:  # noqa: BLE001 - one line, not a traceback, unless asked for
        if os.environ.get("RKCORE_TRACEBACK"):
            raise
        _error(args.command, f"{type(exc).__name__}: {exc} (set RKCORE_TRACEBACK=1 to see where)")
        return EXIT_FAILED
    return EXIT_OK


def _export_story(args: argparse.Namespace) -> int:
    """Compute the story and write it as one HTML file, under the same output rules as the studies."""
    check_outputs([args.out], [], args.overwrite)
    from ..figures.export import story_html  # deferred like the engines: plotly and the story load only now

    def say(message: str) -> None:
        if not args.quiet:
            print(f"rkcore export-story: {message}", file=sys.stderr, flush=True)

    with warnings.catch_warnings():
        if args.quiet:  # "nothing on stderr": the duel's ConvergenceWarning included
            warnings.simplefilter("ignore")
        text = story_html(args.duel_n, progress=say)
    write_atomically({args.out: lambda path: path.write_text(text, encoding="utf-8")})
    print(f"wrote {args.out} ({len(text.encode()) / 1e6:.1f} MB)")
    return EXIT_OK


def _run(runs, args: argparse.Namespace, argv: list[str]) -> tuple[dict, dict]:
    """Run the command (on a Dask cluster with --scheduler); returns its tables and provenance record."""
    from .progress import Progress

    progress = Progress(quiet=args.quiet)
    started = time.time()
    client = None
    try:
        if args.scheduler:
            from ..studies.distributed import connect

            client = connect(args.scheduler)
            assert client.scheduler is not None  # connect() returns a connected client, never a closed one
            progress.note(f"Dask scheduler: {client.scheduler.address} "
                          f"({len(client.scheduler_info()['workers'])} worker(s))")
        tables, extra = runs.RUNS[args.run](args, progress, client)
    finally:
        progress.close()
        if client is not None:
            from ..studies.distributed import close

            close(client)
    written = [str(p) for p in runs.output_paths(args) if p.suffix != ".json"]
    return tables, runs.provenance(args.command, argv, args, started, outputs=written, **extra)


def _write(runs, args: argparse.Namespace, tables: dict, record: dict) -> list:
    """Every table and the provenance record, all written or none (see :mod:`rkcore.cli.outputs`)."""
    import json

    targets = {"raw": getattr(args, "raw", None)}
    writers = {}
    for tag, df in tables.items():
        path = targets.get(tag) if tag in targets else (args.out if tag == "" else
                                                         (sibling(args.out, tag) if args.out else None))
        if path is not None:
            writers[path] = runs.table_writer(df, path.suffix)
    if args.out is not None:
        text = json.dumps(record, indent=2, default=str) + "\n"
        writers[provenance_path(args.out)] = lambda path: path.write_text(text)
    return write_atomically(writers)
