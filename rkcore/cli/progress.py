"""Progress of the ``rkcore`` command, drawn by tqdm: one bar per section, with the time left.

On a terminal each section (a kernel of Table 1, the fits of the accuracy study, ...) gets a tqdm bar;
elsewhere (a log file, CI) plain lines at most every 10% of a section, formatted by tqdm too
(``tqdm.format_meter``), so a log stays short and still shows the elapsed and remaining time. A section
starts with :meth:`Progress.section` or when an engine's fraction goes back (a new loop of its own).
Nothing is written with ``quiet=True``.
"""
from __future__ import annotations

import sys
import time

from tqdm import tqdm

LINE_FORMAT = "{desc}{percentage:5.1f}% | {elapsed}<{remaining}"
BAR_FORMAT = "{desc}{percentage:5.1f}%|{bar}| {elapsed}<{remaining} {postfix}"


class Progress:
    """Callable ``(fraction, message)``; :meth:`counts` adapts ``(done, total, message)`` engines.

    Parameters
    ----------
    quiet : bool, default False
        Write nothing.
    stream : file-like or None, default None
        Where progress is written; None for ``sys.stderr``. A terminal gets bars, anything else plain lines.
    """

    def __init__(self, quiet: bool = False, stream=None):
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._title = ""
        self._bar: tqdm | None = None
        self._started = 0.0
        self._last = -1.0  # fraction last shown (plain lines) or reached (bar); -1: section not started

    def section(self, title: str) -> None:
        """End the current section; the next update starts a new one under ``title``.

        Parameters
        ----------
        title : str
            Name shown before the next section's progress.
        """
        self._end()
        self._title = title

    def __call__(self, fraction: float, message: str) -> None:
        if self.quiet:
            return
        fraction = min(max(float(fraction), 0.0), 1.0)
        if 0.0 <= fraction < self._last:  # the engine began a new loop: a new section
            self._end()
        if self._last < 0:
            self._begin()
        if self._bar is not None:
            self._bar.set_postfix_str(message[:60], refresh=False)
            self._bar.update(fraction - self._bar.n)
        elif fraction >= 1.0 or fraction - self._last >= 0.1:
            line = tqdm.format_meter(fraction, 1.0, time.monotonic() - self._started, prefix=self._prefix(),
                                     bar_format=LINE_FORMAT)
            self.stream.write(f"{line} | {message}\n")
            self.stream.flush()
        else:
            return
        self._last = fraction
        if fraction >= 1.0:
            self._end()

    def counts(self, done: int, total: int, message: str) -> None:
        """Adapter for engines reporting (done, total, message).

        Parameters
        ----------
        done : int
            Steps done.
        total : int
            Steps in all (0 counts as finished).
        message : str
            What is being done, shown next to the progress.
        """
        self(done / total if total else 1.0, message)

    def note(self, message: str) -> None:
        """A one-off status line (not a fraction), written above a running bar.

        Parameters
        ----------
        message : str
            The line to write (nothing is written when quiet).
        """
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.write(message, file=self.stream)
        else:
            self.stream.write(message + "\n")
            self.stream.flush()

    def close(self) -> None:
        """End the current section, closing its bar if one is drawn."""
        self._end()

    def _prefix(self) -> str:
        return f"{self._title}: " if self._title else ""

    def _begin(self) -> None:
        self._started = time.monotonic()
        self._last = 0.0
        if self.tty:
            self._bar = tqdm(total=1.0, desc=self._prefix(), file=self.stream, bar_format=BAR_FORMAT,
                             dynamic_ncols=True, leave=True)

    def _end(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._last = -1.0
