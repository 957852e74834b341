"""What reading an uploaded file costs, from its size alone (the server admits a parse like a run, before it
reads a byte: :func:`parse_cost`, :func:`columns_cost`).

The readers (:func:`rkcore.data.files.load_csv`, :func:`rkcore.data.files.load_libsvm`) hold at their peak the
file's bytes, its decoded text (at most as many bytes again), and the parsed table and the feature matrix, 8
bytes per cell each; a cell takes at least 2 bytes of the file ("1," or "1\\n"), so a file of B bytes has at most
B / 2 cells: 1 + 1 + 2 x 8 / 2 = :data:`PARSE_BYTES_PER_FILE_BYTE` bytes per byte of the file, before
:func:`~rkcore.studies.costs.rates.section`'s overhead. Measured peaks (tests/studies/test_parse_cost.py): 2.5 x
the file for a CSV of 20 float columns, 9.2 x for one-digit cells with pandas 3.1, but 15.2 x with pandas 2.1 (the
declared floor, whose reader keeps more per cell): pandas 3 is priced at 10 x, older releases at 18 x (the floor's
peak with room; releases between were not measured, so they get the larger price). Text cells cost more (a Python string per
cell: 31 x for two-character hex cells, which the reader then refuses): such a file is priced as numbers and
its worker's memory limit ends it when it outgrows that (rkapp.workers).
"""
from __future__ import annotations

import pandas as pd

from .rates import RunCost, section

__all__ = ["COLUMNS_BYTES_PER_FILE_BYTE", "PARSE_BYTES_PER_FILE_BYTE", "PARSE_SECONDS_PER_BYTE", "columns_cost",
           "parse_cost"]

#: Peak bytes of parsing a file, per byte of the file (see the module's docstring).
PARSE_BYTES_PER_FILE_BYTE = 10 if int(pd.__version__.split(".")[0]) >= 3 else 18
#: Peak bytes of reading a CSV's header (the bytes and the decoded text), per byte of the file.
COLUMNS_BYTES_PER_FILE_BYTE = 2
#: Seconds per byte of parsing on one thread (measured 4-6 ns for a CSV of floats on the calibration machine).
PARSE_SECONDS_PER_BYTE = 1e-8


def parse_cost(file_bytes: int) -> RunCost:
    """Seconds and peak bytes of parsing an uploaded file of ``file_bytes`` bytes (CSV or LIBSVM).

    Parameters
    ----------
    file_bytes : int
        The file's size.

    Returns
    -------
    RunCost
        One section, "reading the file".
    """
    size = max(0, int(file_bytes))
    return section("reading the file", PARSE_SECONDS_PER_BYTE * size, PARSE_BYTES_PER_FILE_BYTE * size)


def columns_cost(file_bytes: int) -> RunCost:
    """Seconds and peak bytes of reading a CSV's column names (its encoding and delimiter detected on the
    whole file).

    Parameters
    ----------
    file_bytes : int
        The file's size.

    Returns
    -------
    RunCost
        One section, "reading the columns".
    """
    size = max(0, int(file_bytes))
    return section("reading the columns", PARSE_SECONDS_PER_BYTE / 5 * size, COLUMNS_BYTES_PER_FILE_BYTE * size)
