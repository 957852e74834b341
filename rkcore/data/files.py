"""User files: CSV (with a header row) and LIBSVM / svmlight.

Every size is bounded before anything proportional to it is allocated: the file's bytes
(:data:`MAX_FILE_BYTES`, refused from its size), its rows (:data:`MAX_ROWS`, counted in C over the
bytes), its columns (:data:`MAX_FEATURES`, from the header or the largest LIBSVM index), its cells
or non-zeros (:data:`MAX_CELLS`), the header line and each column name. Only then is the file parsed
(pandas' C parser, scikit-learn's svmlight parser). Labels are refused, not cast, when they are not
representable as classes (integers beyond 2**53, where float64 merges neighbours).

The delimiter is found by the standard library's :class:`csv.Sniffer` over the first lines; the
decimal comma ("1,5" in a ';'-separated file), which no parser detects, by the rule in :func:`sniff_csv`.
"""
from __future__ import annotations

import csv
import io
import re
from collections import Counter

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn import datasets as skdatasets

from ..base.validation import file_fix_action
from .builtin import Dataset
from .text import (  # noqa: F401  (re-exported: the face rkcore.data.datasets names them)
    MAX_FILE_BYTES, MAX_HEADER_CHARS, MAX_PATH_LENGTH, Text, count_lines, decode_text, first_line_end, read_text,
    source_name,
)

#: Largest number of feature columns (CSV) or largest feature index (LIBSVM) a file may have.
#: Checked before anything proportional to it is allocated; raise it per call (``max_features=``).
MAX_FEATURES = 10_000
#: Largest number of cells (rows x columns) of a CSV file, or non-zeros of a LIBSVM file (20 million:
#: 160 MB as float64).
MAX_CELLS = 20_000_000
#: Largest number of data rows (lines) a file may have.
MAX_ROWS = 1_000_000
#: Longest column name; a longer one is refused (and shown cut), so a huge header never reaches a page.
MAX_COLUMN_NAME = 200
#: A target column with more distinct integer values than this is not a set of class labels.
MAX_CLASSES = 100
#: Integral labels must be smaller than this in magnitude: float64 holds every integer below 2**53
#: exactly, above it neighbours merge (1e308 and -1e308 would both become one int64).
LABEL_LIMIT = 2.0**53

_CSV_DELIMITERS = ",;\t|"
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "vertical bar"}
_SNIFF_BYTES = 256 * 1024  # the delimiter is sniffed on the first lines, at most this much text
_SNIFF_LINES = 21
_COMMA_DECIMAL = re.compile(r"^\s*[+-]?\d+,\d+(?:[eE][+-]?\d+)?\s*$")
_DOT_DECIMAL = re.compile(r"^\s*[+-]?\d*\.\d+(?:[eE][+-]?\d+)?\s*$")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")


def _cut(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text):,} characters)"


def _too_many_rows(name: str, rows: int, max_rows: int) -> ValueError:
    return ValueError(f"The file {name!r} has about {rows:,} rows; at most {max_rows:,} rows are read. Upload a "
                      "sample of the rows.")


def _split_fields(line: str, sep: str) -> list[str]:
    if '"' not in line:
        return line.split(sep)
    try:
        return next(csv.reader([line], delimiter=sep), [])
    except csv.Error:  # e.g. a field longer than the csv module's limit: count without quoting
        return line.split(sep)


def sniff_csv(text: str) -> tuple[str, str]:
    """(delimiter, decimal mark) of a CSV text, from its first lines.

    The delimiter is :class:`csv.Sniffer`'s choice among , ; tab | (a comma when it finds none:
    one column). A decimal comma is detected when the delimiter is not a comma and the cells that
    look like numbers are written "1,5" (none "1.5").

    Parameters
    ----------
    text : str
        The CSV text (only its head is read).

    Returns
    -------
    tuple of (str, str)
        The delimiter and the decimal mark.
    """
    head = text[:_SNIFF_BYTES]
    lines = head.splitlines()
    if len(head) < len(text) and len(lines) > 1:
        lines = lines[:-1]  # the last line of the head may be cut
    lines = [ln for ln in lines[:_SNIFF_LINES] if ln.strip()]
    try:
        sep = csv.Sniffer().sniff("\n".join(lines), delimiters=_CSV_DELIMITERS).delimiter
    except csv.Error:  # no delimiter is consistent: one column, or ragged lines (the parser will say)
        sep = ","
    decimal = "."
    if sep != ",":
        cells = [c for ln in lines[1:] for c in _split_fields(ln, sep)]
        if any(_COMMA_DECIMAL.match(c) for c in cells) and not any(_DOT_DECIMAL.match(c) for c in cells):
            decimal = ","
    return sep, decimal


def _head_text(data: bytes, header_end: int) -> str:
    """The header and the next lines, at most _SNIFF_BYTES after the header (decoded for sniffing)."""
    stop = min(len(data), header_end + 1 + _SNIFF_BYTES)
    return data[:stop].decode("utf-8", errors="replace")


def _header_names(fields: list[str], name: str) -> list[str]:
    """Column names as load_csv reads them (pandas' "Unnamed: k" for empty ones); repeated names and names
    longer than MAX_COLUMN_NAME are refused (pandas would silently rename the second "a" to "a.1")."""
    names = [f.strip().strip('"').strip() or f"Unnamed: {k}" for k, f in enumerate(fields)]
    long = next((k for k, c in enumerate(names) if len(c) > MAX_COLUMN_NAME), None)
    if long is not None:
        raise ValueError(f"Column {long + 1} of {name!r} has a name of {len(names[long]):,} characters (it begins "
                         f"{names[long][:40]!r}); column names may have at most {MAX_COLUMN_NAME} characters. "
                         f"Shorten it in your file and {file_fix_action()}.")
    if len(set(names)) != len(names):
        dup = [c for c, times in Counter(names).items() if times > 1]
        raise ValueError(f"The CSV file {name!r} repeats the column name(s) {', '.join(map(repr, dup[:5]))}; "
                         f"give every column a different name and {file_fix_action()}.")
    return names


def _prepare_csv(path_or_buffer, max_features: int, max_cells: int, max_rows: int, max_bytes: int):
    """Read, decode, sniff and bound a CSV before parsing it: (text, sep, decimal, column names)."""
    text = read_text(path_or_buffer, source_name(path_or_buffer, "csv"), max_bytes)
    name, data = text.name, text.data
    if not data.strip():
        raise ValueError("The CSV file is empty: it needs a header row and at least one data row.")
    header_end = first_line_end(data, name)
    sep, decimal = sniff_csv(_head_text(data, header_end))
    header = data[:header_end].rstrip(b"\r").decode("utf-8", errors="replace")
    if header.count(sep) > max_features + 1 and '"' not in header:  # refused before splitting
        raise _too_many_columns(name, header.count(sep) + 1, max_features)
    columns = _split_fields(header, sep)
    if len(columns) > max_features + 1:  # + 1: the target column
        raise _too_many_columns(name, len(columns), max_features)
    names = _header_names(columns, name)
    rows = count_lines(data, header_end + 1)
    if rows > max_rows:
        raise _too_many_rows(name, rows, max_rows)
    if rows * len(columns) > max_cells:
        raise ValueError(f"The CSV file {name!r} has about {rows:,} rows x {len(columns):,} columns = "
                         f"{rows * len(columns):,} cells; at most {max_cells:,} cells are allowed. "
                         "Upload a sample of the rows or fewer columns.")
    return text, sep, decimal, names


def _too_many_columns(name: str, n_columns: int, max_features: int) -> ValueError:
    return ValueError(f"The CSV file {name!r} has {n_columns:,} columns; at most {max_features:,} feature "
                      "columns are allowed. Keep fewer columns in the file (e.g. select the ones you need in a "
                      f"spreadsheet) and {file_fix_action()}.")


def csv_columns(path_or_buffer, *, max_features: int = MAX_FEATURES, max_cells: int = MAX_CELLS,
                max_rows: int = MAX_ROWS, max_bytes: int = MAX_FILE_BYTES) -> list[str]:
    """The column names of a CSV file (header row), with the same encoding and delimiter
    detection and size limits as :func:`load_csv`; raises ValueError with a message otherwise.

    Parameters
    ----------
    path_or_buffer : str, path-like, bytes or file-like
        The CSV file.
    max_features : int, default MAX_FEATURES
        Most feature columns accepted.
    max_cells : int, default MAX_CELLS
        Most cells accepted.
    max_rows : int, default MAX_ROWS
        Most rows accepted.
    max_bytes : int, default MAX_FILE_BYTES
        Most bytes read.

    Returns
    -------
    list of str
        The column names.
    """
    return _prepare_csv(path_or_buffer, max_features, max_cells, max_rows, max_bytes)[3]


def _check_labels_representable(values: np.ndarray, what: str) -> None:
    """Refuse integral labels at or beyond 2**53 in magnitude (float64 merges neighbours there)."""
    big = np.flatnonzero(np.abs(values) >= LABEL_LIMIT)
    if big.size:
        raise ValueError(f"{what} has the label {values[big[0]]:g} (row {int(big[0]) + 1}); class labels must be "
                         "integers of magnitude below 2^53 = 9,007,199,254,740,992, where every integer is exact "
                         "(larger ones would merge into one class). Renumber the classes in your file.")


def _encode_target(values: pd.Series, max_classes: int = MAX_CLASSES) -> tuple[np.ndarray, str]:
    """Integer class labels for a categorical / integer target, with a note on text classes.

    A continuous target (non-integral numbers, or more distinct integers than
    ``max_classes``, or one distinct value per row) is refused: the studies need class labels.
    """
    if values.isna().any():
        raise ValueError(f"The target column {values.name!r} has missing values in {int(values.isna().sum())} "
                         "row(s). Fill them in or delete those rows in the file, or choose no target.")
    n_distinct = int(values.nunique())
    if pd.api.types.is_bool_dtype(values):
        return values.to_numpy().astype(np.int64), ""
    if pd.api.types.is_numeric_dtype(values):
        v = values.to_numpy(dtype=np.float64)
        if not np.isfinite(v).all():
            raise ValueError(f"The target column {values.name!r} has infinite values; class labels must be finite.")
        integral = bool(np.all(v == np.round(v)))
        continuous = (not integral or n_distinct > max_classes
                      or (n_distinct == len(v) and len(v) > 10))
        if continuous:
            sample = ", ".join(f"{x:g}" for x in pd.unique(v)[:4])
            raise ValueError(
                f"The target column {values.name!r} looks continuous ({n_distinct:,} distinct values in "
                f"{len(v):,} rows, e.g. {sample}), not a set of class labels; the studies here classify. "
                "Choose no target (or another column) as the target, or turn the values into classes "
                "in your file (e.g. 1 if above a threshold, else 0).")
        _check_labels_representable(v, f"The target column {values.name!r}")
        return v.astype(np.int64), ""
    if n_distinct > max_classes:
        raise ValueError(f"The target column {values.name!r} has {n_distinct:,} distinct values, more than "
                         f"{max_classes} classes; choose no target or a column of class labels.")
    # text classes -> 0..k-1 in sorted order of the class names
    names, codes = np.unique(values.astype(str).to_numpy(), return_inverse=True)
    return codes.astype(np.int64), " (classes: " + ", ".join(f"{_cut(c, 30)}={k}" for k, c in enumerate(names[:20])) + ")"


def load_csv(path_or_buffer, target: str | None = None, *, dropna: bool = False,
             max_features: int = MAX_FEATURES, max_cells: int = MAX_CELLS, max_rows: int = MAX_ROWS,
             max_bytes: int = MAX_FILE_BYTES) -> Dataset:
    """Read a CSV file with a header row (path, bytes, or file-like such as streamlit's UploadedFile).

    ``target`` names the label column (None: no labels); it must hold class labels (a
    continuous target is refused with a message). All other columns must be numeric
    (booleans count as 0/1). Missing values raise a ValueError naming the columns, unless
    ``dropna=True``, which drops the incomplete rows.

    The encoding (UTF-8, UTF-16 / UTF-32 with or without BOM, else Windows-1252 / Latin-1), the
    delimiter (comma, semicolon, tab, vertical bar), a decimal comma ("1,5") and CR-only line ends
    are detected. Files over ``max_bytes`` bytes, ``max_rows`` rows, ``max_features`` feature columns
    or ``max_cells`` cells are refused from their size, line count and header, before parsing.

    Parameters
    ----------
    path_or_buffer : str, path-like, bytes or file-like
        The CSV file.
    target : str or None, optional
        Label column; None for no labels.
    dropna : bool, default False
        Drop rows with missing values instead of refusing them.
    max_features : int, default MAX_FEATURES
        Most feature columns accepted.
    max_cells : int, default MAX_CELLS
        Most cells accepted.
    max_rows : int, default MAX_ROWS
        Most rows accepted.
    max_bytes : int, default MAX_FILE_BYTES
        Most bytes read.

    Returns
    -------
    Dataset
        The features, and the labels when ``target`` is given.
    """
    text, sep, decimal, header = _prepare_csv(path_or_buffer, max_features, max_cells, max_rows, max_bytes)
    name, encoding = text.name, text.encoding
    try:
        frame = pd.read_csv(io.BytesIO(text.data), sep=sep, decimal=decimal, skipinitialspace=True, encoding="utf-8")
    except pd.errors.EmptyDataError:
        raise ValueError("The CSV file is empty: it needs a header row and at least one data row.") from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise ValueError(f"The file {name!r} could not be read as CSV ({_DELIMITER_NAMES[sep]}-separated): "
                         f"{str(exc).strip()[:300]}") from None
    del text  # the parsed frame replaces the bytes
    if frame.shape[0] == 0:
        raise ValueError(f"The CSV file {name!r} has a header but no data rows.")
    columns = [str(c).strip() for c in frame.columns]
    frame.columns = columns
    if target is not None and target not in columns:
        shown = ", ".join(repr(_cut(c)) for c in columns[:30]) + (f", ... ({len(columns):,} columns)" if len(columns) > 30 else "")
        raise ValueError(f"Target column {_cut(target)!r} is not in the file; its columns are: {shown}.")
    features = [c for c in columns if c != target]
    if not features:
        raise ValueError(f"The CSV file {name!r} has no feature columns besides the target {target!r}.")
    frame = _comma_decimal_columns(frame, features)
    _check_numeric(frame, features, sep, encoding)
    X, frame = _finite_matrix(frame, features, target, dropna)
    y, classes = (None, "") if target is None else _encode_target(frame[target])
    read_as = "" if (sep, decimal, encoding) == (",", ".", "UTF-8") else (
        f" (read as {_DELIMITER_NAMES[sep]}-separated, decimal {'comma' if decimal == ',' else 'point'}, {encoding})")
    return Dataset(name=name, X=X, y=y, feature_names=tuple(features), fields=None,
                   description=f"CSV {name}: {X.shape[0]} rows, {X.shape[1]} features"
                               + (f", target {target!r}{classes}" if target else ", no target") + read_as + ".")


def _check_numeric(frame: pd.DataFrame, features: list[str], sep: str, encoding: str) -> None:
    """Refuse non-numeric feature columns, with an example value of each (cut) and the reading used."""
    kinds = frame.dtypes  # one Series for the whole frame: per-column frame[c] is slow on wide files
    non_numeric = [c for c in features if not _is_number_kind(kinds[c])]
    if not non_numeric:
        return
    examples = []
    for c in non_numeric[:5]:
        values = frame[c].dropna().astype(str)
        comma, point = values.str.match(_COMMA_DECIMAL.pattern), values.str.match(_DOT_DECIMAL.pattern)
        if comma.any() and point.any():
            examples.append(f"{c!r} (it mixes decimal commas like {values[comma].iloc[0][:20]!r} and decimal "
                            f"points like {values[point].iloc[0][:20]!r}: use one decimal mark)")
            continue
        bad = values[pd.to_numeric(values, errors="coerce").isna()]
        examples.append(f"{c!r} (e.g. {str(bad.iloc[0])[:40]!r})" if len(bad) else repr(c))
    more = f" and {len(non_numeric) - 5:,} more" if len(non_numeric) > 5 else ""
    raise ValueError(
        f"Feature columns must be numeric; these are not: {', '.join(examples)}{more}. "
        f"(The file was read as {_DELIMITER_NAMES[sep]}-separated, {encoding}.) Choose such a column as the "
        f"target, or encode it as numbers or delete it in your file and {file_fix_action()}.")


def _finite_matrix(frame: pd.DataFrame, features: list[str], target: str | None, dropna: bool):
    """(X, frame): the features as float64, rows with missing values refused (or dropped), infinities refused."""
    X = frame[features].to_numpy(dtype=np.float64)
    missing = np.isnan(X)
    na_counts = dict(zip(features, missing.sum(axis=0).tolist()))
    if target is not None:
        na_counts[target] = int(frame[target].isna().sum())
    with_nan = [c for c in (features + ([target] if target is not None else [])) if na_counts[c]]
    if with_nan and not dropna:
        raise ValueError(
            f"Missing values (NaN or empty cells) in column(s): "
            f"{', '.join(f'{c!r} ({int(na_counts[c])} row(s))' for c in with_nan[:10])}"
            f"{' ...' if len(with_nan) > 10 else ''}. Fill them in or delete those rows in your file and "
            f"{file_fix_action()}.")
    if with_nan:
        keep = ~missing.any(axis=1)
        if target is not None:
            keep &= frame[target].notna().to_numpy()
        frame, X = frame[keep], X[keep]
        if frame.shape[0] == 0:
            raise ValueError("Every row has a missing value; nothing is left after dropping incomplete rows.")
    finite = np.isfinite(X)
    if not finite.all():
        bad = [c for c, ok in zip(features, finite.all(axis=0)) if not ok]
        raise ValueError(f"Infinite values in column(s): {', '.join(map(repr, bad[:10]))}; only finite numbers "
                         "are allowed (a number beyond about 1.8e308 is read as infinite). Replace them in your "
                         f"file and {file_fix_action()}.")
    return X, frame


def _is_number_kind(kind) -> bool:
    return pd.api.types.is_numeric_dtype(kind) or pd.api.types.is_bool_dtype(kind)


def _comma_decimal_columns(frame: pd.DataFrame, features: list[str]) -> pd.DataFrame:
    """Text columns whose every value is a decimal-comma number ("1,5", quoted in a comma-separated
    file) become numbers; anything else is left for the non-numeric check to report."""
    kinds = frame.dtypes
    for c in features:
        if not _is_number_kind(kinds[c]):
            col = frame[c]
            values = col.dropna().astype(str)
            comma = values.str.match(_COMMA_DECIMAL.pattern)
            if len(values) and comma.any() and (comma | values.str.match(_INTEGER.pattern)).all():
                frame[c] = pd.to_numeric(col.astype(str).str.replace(",", ".", regex=False).where(col.notna()))
    return frame


_LIBSVM_COMMENT = re.compile(rb"#[^\n]*")


def _libsvm_largest_index(raw: bytes, max_features: int) -> tuple[int, str] | None:
    """(index, as text) of a feature index with more digits than ``max_features`` (so certainly too
    large), or None; one regular-expression search over the bytes, never int() of a huge digit string.
    Indices as long as ``max_features`` are checked after parsing, from the matrix's width."""
    if b"#" in raw:
        raw = _LIBSVM_COMMENT.sub(b"", raw)
    k = len(str(int(max_features)))
    longer = re.search(rb"(?<![\w.])0*([1-9]\d{%d,}):" % k, raw)
    if not longer:
        return None
    digits = longer.group(1).decode()
    text = f"{int(digits):,}" if len(digits) <= 30 else f"{digits[:20]}… ({len(digits):,} digits)"
    return (int(digits) if len(digits) <= 30 else -1), text


def _index_too_large(name: str, index_text: str, max_features: int) -> ValueError:
    return ValueError(f"The LIBSVM file {name!r} uses feature index {index_text}; at most {max_features:,} "
                      "features are allowed (the index sets the number of columns). Renumber the features "
                      f"from 1 in your file and {file_fix_action()}.")


def _check_libsvm_size(text: Text, max_features: int, max_rows: int, max_nonzeros: int) -> None:
    """Rows (lines), non-zeros (':' separators) and the largest index, counted over the bytes in C."""
    name, data = text.name, text.data
    rows = count_lines(data)
    if rows > max_rows:
        raise _too_many_rows(name, rows, max_rows)
    pairs = data.count(b":")
    if pairs > max_nonzeros:
        raise ValueError(f"The LIBSVM file {name!r} has about {pairs:,} index:value pairs; at most {max_nonzeros:,} "
                         "non-zeros are read. Upload a sample of the rows.")
    too_large = _libsvm_largest_index(data, max_features)
    if too_large:
        raise _index_too_large(name, too_large[1], max_features)


def load_libsvm(path_or_buffer, *, max_features: int = MAX_FEATURES, max_rows: int = MAX_ROWS,
                max_nonzeros: int = MAX_CELLS, max_bytes: int = MAX_FILE_BYTES) -> Dataset:
    """Read a LIBSVM / svmlight file (``label index:value ...``) as CSR; labels become ints when integral.

    The file's bytes, lines, non-zeros and largest feature index are bounded from the text
    first: a file beyond ``max_bytes``, ``max_rows``, ``max_nonzeros`` or ``max_features`` is
    refused before it is parsed. NaN and infinite values (labels or features) are refused, as in
    :func:`load_csv`, and so are integral labels beyond 2**53 in magnitude (not cast).

    Parameters
    ----------
    path_or_buffer : str, path-like, bytes or file-like
        The LIBSVM file.
    max_features : int, default MAX_FEATURES
        Largest feature index accepted.
    max_rows : int, default MAX_ROWS
        Most rows accepted.
    max_nonzeros : int, default MAX_CELLS
        Most non-zero entries accepted.
    max_bytes : int, default MAX_FILE_BYTES
        Most bytes read.

    Returns
    -------
    Dataset
        X as CSR and the labels.
    """
    text = read_text(path_or_buffer, source_name(path_or_buffer, "libsvm"), max_bytes)
    name = text.name
    _check_libsvm_size(text, max_features, max_rows, max_nonzeros)
    try:
        X, y = skdatasets.load_svmlight_file(io.BytesIO(text.data), dtype=np.float64)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"The file {name!r} is not valid LIBSVM format (label index:value ...): "
                         f"{_libsvm_reason(exc)}.") from None
    del text
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"The LIBSVM file {name!r} is empty: it has no samples or no features.")
    if X.shape[1] > max_features:  # a CSR matrix's width costs nothing: checked now, before any use
        raise _index_too_large(name, f"{X.shape[1]:,}", max_features)
    X = sp.csr_matrix(X)
    bad_rows = np.unique(np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[~np.isfinite(X.data)])
    bad_rows = np.union1d(bad_rows, np.flatnonzero(~np.isfinite(y)))
    if bad_rows.size:
        raise ValueError(f"The LIBSVM file {name!r} has NaN or infinite values on {bad_rows.size:,} line(s) "
                         f"(line {', '.join(str(int(r) + 1) for r in bad_rows[:5])}{' ...' if bad_rows.size > 5 else ''}); only finite numbers "
                         "are allowed (a number beyond about 1.8e308 is read as infinite). Fix those lines in your "
                         f"file and {file_fix_action()}.")
    if np.all(y == np.round(y)):
        _check_labels_representable(y, f"The LIBSVM file {name!r}")
        y = y.astype(np.int64)
    return Dataset(name=name, X=X, y=y, feature_names=tuple(f"f{j + 1}" for j in range(X.shape[1])), fields=None,
                   description=f"LIBSVM {name}: {X.shape[0]} rows, {X.shape[1]} features, {X.nnz} non-zeros.")


def _libsvm_reason(exc: Exception) -> str:
    """scikit-learn's parser error in the format's own words (its messages name its internals: "SVMlight",
    "qid", C-level conversions), so a user reads what is wrong with the line, not with the parser."""
    text = str(exc)
    index = re.search(r"[Ii]nvalid index (-?\d+)", text)
    if index:
        return f"feature index {index.group(1)} is not allowed: indices are whole numbers from 1 (or from 0)"
    if "decreasing" in text or "sorted" in text:
        return "the feature indices of a line must increase from left to right"
    if isinstance(exc, UnicodeDecodeError):
        return "it is not text"
    return ("a line is not 'label index:value index:value ...' with a numeric label, whole-number indices and "
            "numeric values")

