"""Datasets: named synthetic generators, scikit-learn's bundled sets, user files, MovieLens 100K.

Every loader returns a :class:`Dataset` (float64 ``X``, optional labels ``y``, readable
feature names, optional feature groups ``fields``). Nothing here downloads anything:
the built-ins are generated or ship with scikit-learn, and MovieLens is read from a
folder the user already has.

The paper (Atarashi, Maji & Oyama, AAAI-19, Section 6) L1-normalizes every feature
vector so that R = max_i ||x_i||_1 = 1; :func:`normalize` does that row-wise.
"""
from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn import datasets as skdatasets
from sklearn.preprocessing import normalize as _sk_normalize
from sklearn.utils import check_random_state

from ..base.limits import check_allocation
from ..base.validation import check_int

NORMALIZATIONS = ("l1", "l2", "none")


@dataclass(frozen=True)
class Dataset:
    """A data matrix with optional labels.

    ``X`` is float64 of shape (n, d), dense or CSR; ``y`` holds integer class labels
    (or floats for a regression target read from a file) or is None; ``fields``
    groups feature indices (e.g. user features vs item features) for cross-field
    itemset families, or is None.
    """

    name: str
    X: np.ndarray | sp.csr_matrix
    y: np.ndarray | None
    feature_names: tuple[str, ...]
    fields: tuple[tuple[int, ...], ...] | None
    description: str

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]


@dataclass(frozen=True)
class BuiltinDataset:
    key: str
    label: str
    description: str
    loader: Callable[..., Dataset]  # (n_samples, random_state) -> Dataset


# ---------------------------------------------------------------------------- helpers
def _is_int(value) -> bool:
    from ..kernels.exact import is_integer
    return is_integer(value)


def normalize(X, norm: str = "l1"):
    """Row-wise normalization x / ||x||_p for p = 1 ("l1") or 2 ("l2"); "none" returns X.

    Sparse input stays sparse (CSR); rows that are all zero stay zero
    (scikit-learn's ``normalize`` leaves them untouched instead of dividing by 0).
    """
    if norm not in NORMALIZATIONS:
        raise ValueError(f"Unknown normalization {norm!r}; allowed: {', '.join(map(repr, NORMALIZATIONS))}.")
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
    if norm == "none":
        return X.copy()
    # Scale each row by a power of two (exact) so its largest entry is in [0.5, 1) first:
    # the norm of a row like [1e308, 1e308, 1] would overflow and the row become zeros.
    from ..kernels.exact import _row_power_of_two_scale
    return _sk_normalize(_row_power_of_two_scale(X)[1], norm=norm, axis=1, copy=True)


def _subsample(n_total: int, n_samples: int | None, random_state) -> np.ndarray:
    """Row indices: all rows, the first n (random_state None) or a seeded sorted subsample."""
    if n_samples is not None:
        check_int(n_samples, "n_samples", expected="a positive integer or None")
    if n_samples is None or n_samples >= n_total:
        return np.arange(n_total)
    if random_state is None:
        return np.arange(n_samples)
    rng = check_random_state(random_state)
    return np.sort(rng.choice(n_total, size=n_samples, replace=False))


def _check_n_samples(n_samples, default: int) -> int:
    if n_samples is None:
        return default
    return check_int(n_samples, "n_samples", expected="a positive integer or None")


# ---------------------------------------------------------------------------- built-ins
def make_interactions(n_samples: int | None = 1000, n_features: int = 20, n_interactions: int = 12,
                      noise: float = 0.1, random_state=0) -> Dataset:
    r"""Synthetic binary task whose label is a sparse pairwise-interaction function.

    x ~ N(0, I_d); f(x) = \sum_{j<k} A_{jk} x_j x_k with ``n_interactions`` non-zero
    A_{jk} ~ N(0, 1); y = [f(x) + noise * std(f) * eps > median(f + noise)], so the classes are
    balanced. f is even (f(-x) = f(x)) and x is symmetric, so every linear function
    of x is uncorrelated with y: a linear model on x is near chance while a model on
    the pairwise products (a degree-2 ANOVA / polynomial kernel) can fit it.

    One fixed dataset per seed, whatever ``n_samples``: the function f, std(f) and the label
    threshold come from their own random stream (std and median over a fixed reference sample of
    :data:`REFERENCE_ROWS` points), and row i (features and noise) depends only on the seed and i,
    so the first 200 rows at ``n_samples=300`` are the rows at ``n_samples=200``.
    """
    n = _check_n_samples(n_samples, 1000)
    if not _is_int(n_features):
        raise ValueError(f"n_features must be an integer, got {n_features!r}.")
    if not _is_int(n_interactions) or n_interactions < 0:
        raise ValueError(f"n_interactions must be an integer >= 0, got {n_interactions!r}.")
    d = int(n_features)
    if d < 2:
        raise ValueError(f"n_features must be at least 2 for pairwise interactions, got {n_features!r}.")
    check_allocation("The synthetic data", (n, d), hint="Lower n_samples.")
    function_rng, rows_rng, noise_rng = _streams(random_state, 3)
    rows, cols = np.triu_indices(d, k=1)
    n_pairs = min(int(n_interactions), rows.size)
    chosen = np.sort(function_rng.choice(rows.size, size=n_pairs, replace=False))
    weights = function_rng.standard_normal(n_pairs)
    left, right = rows[chosen], cols[chosen]
    # the reference sample needs only the columns f reads (they are i.i.d. N(0, 1) like all others)
    used, position = np.unique(np.concatenate([left, right]), return_inverse=True)
    reference = function_rng.standard_normal((REFERENCE_ROWS, used.size))
    f_reference = (reference[:, position[:n_pairs]] * reference[:, position[n_pairs:]]) @ weights
    scale = noise * f_reference.std()
    threshold = np.median(f_reference + scale * function_rng.standard_normal(REFERENCE_ROWS))
    X = rows_rng.standard_normal((n, d))  # row-major: rows 0..n-1 are the same for every n
    f = (X[:, left] * X[:, right]) @ weights + scale * noise_rng.standard_normal(n)
    y = (f > threshold).astype(np.int64)
    return Dataset(
        name="interactions", X=X, y=y,
        feature_names=tuple(f"x{j}" for j in range(d)), fields=None,
        # short: pages quote it above their charts (f's terms are rkcore code, not a caption)
        description=(f"Synthetic: {n} samples, {d} N(0,1) features; label = [f(x) + noise > median], f a fixed "
                     f"sum of {n_pairs} pairwise feature products (seed {random_state}, the same f for every n)."),
    )


#: Rows of the fixed reference sample that sets std(f) and the label threshold of make_interactions.
REFERENCE_ROWS = 20_000


def _streams(random_state, k: int) -> list[np.random.Generator]:
    """k independent generators from one seed (an int, None for fresh entropy, or a RandomState /
    Generator, which gives the seed): each part of a synthetic set draws from its own stream."""
    if random_state is None or _is_int(random_state):
        seed = random_state
    elif isinstance(random_state, np.random.Generator):
        seed = int(random_state.integers(2**63))
    else:
        seed = int(check_random_state(random_state).randint(2**31 - 1))
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(k)]


def make_gaussian(n_samples: int | None = 1000, n_features: int = 50, random_state=0) -> Dataset:
    """N(0, 1) features without labels (the synthetic data of the paper's Figure 1)."""
    n = _check_n_samples(n_samples, 1000)
    if not _is_int(n_features):
        raise ValueError(f"n_features must be an integer, got {n_features!r}.")
    d = int(n_features)
    if d < 1:
        raise ValueError(f"n_features must be at least 1, got {n_features!r}.")
    check_allocation("The synthetic data", (n, d), hint="Lower n_samples.")
    X = check_random_state(random_state).standard_normal((n, d))
    return Dataset(name="gaussian", X=X, y=None, feature_names=tuple(f"x{j}" for j in range(d)),
                   fields=None, description=f"Synthetic: {n} x {d} i.i.d. N(0, 1) features, no labels.")


def _sklearn_loader(key: str, fetch: Callable, text: str):
    def load(n_samples=None, random_state=0) -> Dataset:
        bunch = fetch()
        X = np.asarray(bunch.data, dtype=np.float64)
        rows = _subsample(X.shape[0], n_samples, random_state)
        return Dataset(name=key, X=X[rows], y=np.asarray(bunch.target, dtype=np.int64)[rows],
                       feature_names=tuple(str(f) for f in bunch.feature_names), fields=None,
                       description=f"{text} ({rows.size} of {X.shape[0]} samples, {X.shape[1]} features; bundled with scikit-learn).")
    return load


BUILTIN: dict[str, BuiltinDataset] = {
    b.key: b
    for b in (
        BuiltinDataset("interactions", "Synthetic pairwise interactions",
                       "Binary labels from a sparse sum of pairwise feature products: linear models fail, degree-2 kernels succeed.",
                       lambda n_samples=None, random_state=0: make_interactions(n_samples, random_state=random_state)),
        BuiltinDataset("gaussian", "Gaussian N(0, 1)",
                       "i.i.d. standard normal features, no labels (for timing, as in the paper's Figure 1).",
                       lambda n_samples=None, random_state=0: make_gaussian(n_samples, random_state=random_state)),
        BuiltinDataset("breast_cancer", "Breast cancer (Wisconsin)", "569 x 30, binary.",
                       _sklearn_loader("breast_cancer", skdatasets.load_breast_cancer, "Breast cancer Wisconsin, binary")),
        BuiltinDataset("wine", "Wine", "178 x 13, 3 classes.",
                       _sklearn_loader("wine", skdatasets.load_wine, "Wine recognition, 3 classes")),
        BuiltinDataset("digits", "Digits (8x8)", "1797 x 64, 10 classes.",
                       _sklearn_loader("digits", skdatasets.load_digits, "Handwritten digits 8x8, 10 classes")),
    )
}


def load_builtin(key: str, n_samples: int | None = None, random_state: int = 0) -> Dataset:
    """A built-in dataset by key (see :data:`BUILTIN`); ``n_samples`` caps / sets the size.

    Synthetic sets generate ``n_samples`` rows (default 1000); bundled sets take a
    seeded subsample of ``n_samples`` rows (all rows when None).
    """
    try:
        entry = BUILTIN[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown built-in dataset {key!r}; allowed: {', '.join(map(repr, BUILTIN))}.") from None
    return entry.loader(n_samples=n_samples, random_state=random_state)


# ---------------------------------------------------------------------------- files
#: Largest number of feature columns (CSV) or largest feature index (LIBSVM) a file may have.
#: Checked before anything proportional to it is allocated; raise it per call (``max_features=``).
MAX_FEATURES = 10_000
#: Largest number of cells (rows x columns) a CSV file may have (20 million: 160 MB as float64).
MAX_CELLS = 20_000_000
#: A target column with more distinct integer values than this is not a set of class labels.
MAX_CLASSES = 100
#: Longest folder path accepted for MovieLens (Linux's PATH_MAX is 4096; real paths are far shorter).
MAX_PATH_LENGTH = 1024

_CSV_DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "vertical bar"}
_COMMA_DECIMAL = re.compile(r"^\s*[+-]?\d+,\d+(?:[eE][+-]?\d+)?\s*$")
_DOT_DECIMAL = re.compile(r"^\s*[+-]?\d*\.\d+(?:[eE][+-]?\d+)?\s*$")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")


def _source_name(path_or_buffer, default: str) -> str:
    name = getattr(path_or_buffer, "name", None) if not isinstance(path_or_buffer, (str, os.PathLike)) else path_or_buffer
    return Path(str(name)).name if name else default


def _rewind(buffer) -> None:
    if hasattr(buffer, "seek"):
        buffer.seek(0)


def _read_bytes(path_or_buffer) -> bytes:
    """The raw bytes of a path, a bytes object, or a binary / text file-like object."""
    if isinstance(path_or_buffer, (bytes, bytearray)):
        return bytes(path_or_buffer)
    if isinstance(path_or_buffer, (str, os.PathLike)):
        path = str(path_or_buffer)
        if len(path) > MAX_PATH_LENGTH:
            raise ValueError(f"The file path is {len(path):,} characters long, more than the {MAX_PATH_LENGTH:,} allowed.")
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise ValueError(f"The file {path[:200]!r} could not be read: {exc.strerror or exc}.") from None
    _rewind(path_or_buffer)
    raw = path_or_buffer.read()
    return raw.encode("utf-8") if isinstance(raw, str) else bytes(raw)


def decode_text(raw: bytes, name: str = "the file") -> tuple[str, str]:
    """(text, encoding) of a text file: UTF-8 (with or without BOM), UTF-16 (BOM, or NUL-byte
    pattern), else Windows-1252 / Latin-1 (which decode any byte). Refuses binary files."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8", errors="strict"), "UTF-8 (with BOM)"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return raw.decode("utf-16"), "UTF-16"
        except UnicodeDecodeError:
            raise ValueError(f"{name} starts like a UTF-16 text file but is not valid UTF-16; save it as UTF-8 "
                             "(in a spreadsheet: 'CSV UTF-8') and upload it again.") from None
    head = raw[:4096]
    if len(head) >= 4 and head.count(b"\x00") >= len(head) // 4:  # UTF-16 without BOM: every other byte NUL
        encoding = "utf-16-le" if head[1:2] == b"\x00" else "utf-16-be"
        try:
            return raw.decode(encoding), "UTF-16"
        except UnicodeDecodeError:
            pass
    if b"\x00" in head:
        raise ValueError(f"{name} looks like a binary file (it contains NUL bytes), not text. Upload a CSV or "
                         "LIBSVM text file.")
    try:
        return raw.decode("utf-8"), "UTF-8"
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("cp1252"), "Windows-1252"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "Latin-1"


def _split_fields(line: str, sep: str) -> list[str]:
    if '"' not in line:
        return line.split(sep)
    try:
        return next(csv.reader([line], delimiter=sep), [])
    except csv.Error:  # e.g. a field longer than the csv module's limit: count without quoting
        return line.split(sep)


def sniff_csv(text: str) -> tuple[str, str]:
    """(delimiter, decimal mark) of a CSV text, from its first lines.

    The delimiter is the one of , ; tab | that splits the header and the first data lines
    into the same number (> 1) of fields, preferring the most fields; one column only
    means ",". A decimal comma is detected when the delimiter is not a comma and the
    cells that look like numbers are written "1,5" (none "1.5").
    """
    head = text[:1_000_000]  # a header of 100,000 columns fits; the rest of a big file is never split
    lines = head.splitlines()
    if len(head) < len(text) and len(lines) > 1:
        lines = lines[:-1]  # the last line of the head may be cut
    lines = [ln for ln in lines[:21] if ln.strip()]
    best, best_fields = ",", 1
    for sep in _CSV_DELIMITERS:
        counts = {len(_split_fields(ln, sep)) for ln in lines}
        if len(counts) == 1 and (k := counts.pop()) > best_fields:
            best, best_fields = sep, k
    decimal = "."
    if best != ",":
        cells = [c for ln in lines[1:] for c in _split_fields(ln, best)]
        if any(_COMMA_DECIMAL.match(c) for c in cells) and not any(_DOT_DECIMAL.match(c) for c in cells):
            decimal = ","
    return best, decimal


def _prepare_csv(path_or_buffer, max_features: int, max_cells: int):
    """Decode, sniff and bound a CSV before parsing it: (text, sep, decimal, encoding, columns)."""
    name = _source_name(path_or_buffer, "csv")
    text, encoding = decode_text(_read_bytes(path_or_buffer), repr(name))
    if not text.strip():
        raise ValueError("The CSV file is empty: it needs a header row and at least one data row.")
    sep, decimal = sniff_csv(text)
    header = text.split("\n", 1)[0].rstrip("\r")
    columns = _split_fields(header, sep)
    if len(columns) > max_features + 1:  # + 1: the target column
        raise ValueError(f"The CSV file {name!r} has {len(columns):,} columns; at most {max_features:,} feature "
                         "columns are allowed. Keep fewer columns in the file (e.g. select the ones you need in a "
                         "spreadsheet) and upload it again.")
    n_lines = text.count("\n") + 1
    if n_lines * len(columns) > max_cells:
        raise ValueError(f"The CSV file {name!r} has about {n_lines:,} rows x {len(columns):,} columns = "
                         f"{n_lines * len(columns):,} cells; at most {max_cells:,} cells are allowed. "
                         "Upload a sample of the rows or fewer columns.")
    return name, text, sep, decimal, encoding, columns


def csv_columns(path_or_buffer, *, max_features: int = MAX_FEATURES, max_cells: int = MAX_CELLS) -> list[str]:
    """The column names of a CSV file (header row), with the same encoding and delimiter
    detection and size limits as :func:`load_csv`; raises ValueError with a message otherwise."""
    name, text, sep, decimal, encoding, columns = _prepare_csv(path_or_buffer, max_features, max_cells)
    return _header_names(columns, name)


def _header_names(fields: list[str], name: str) -> list[str]:
    """Column names as load_csv reads them (pandas' "Unnamed: k" for empty ones); repeated names are refused
    (pandas would silently rename the second "a" to "a.1")."""
    names = [f.strip().strip('"').strip() or f"Unnamed: {k}" for k, f in enumerate(fields)]
    if len(set(names)) != len(names):
        seen: set[str] = set()
        dup = [c for c in names if c in seen or seen.add(c)]
        raise ValueError(f"The CSV file {name!r} repeats the column name(s) {', '.join(map(repr, dup[:5]))}; "
                         "give every column a different name and upload it again.")
    return names


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
        return v.astype(np.int64), ""
    if n_distinct > max_classes:
        raise ValueError(f"The target column {values.name!r} has {n_distinct:,} distinct values, more than "
                         f"{max_classes} classes; choose no target or a column of class labels.")
    # text classes -> 0..k-1 in sorted order of the class names
    names, codes = np.unique(values.astype(str).to_numpy(), return_inverse=True)
    return codes.astype(np.int64), " (classes: " + ", ".join(f"{c}={k}" for k, c in enumerate(names[:20])) + ")"


def load_csv(path_or_buffer, target: str | None = None, *, dropna: bool = False,
             max_features: int = MAX_FEATURES, max_cells: int = MAX_CELLS) -> Dataset:
    """Read a CSV file with a header row (path, bytes, or file-like such as streamlit's UploadedFile).

    ``target`` names the label column (None: no labels); it must hold class labels (a
    continuous target is refused with a message). All other columns must be numeric
    (booleans count as 0/1). Missing values raise a ValueError naming the columns, unless
    ``dropna=True``, which drops the incomplete rows.

    The encoding (UTF-8, UTF-16 with BOM, Windows-1252 / Latin-1), the delimiter (comma,
    semicolon, tab, vertical bar) and a decimal comma ("1,5") are detected. Files with more
    than ``max_features`` feature columns or ``max_cells`` cells are refused from their
    header and line count, before the file is parsed.
    """
    name, text, sep, decimal, encoding, header = _prepare_csv(path_or_buffer, max_features, max_cells)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, decimal=decimal, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise ValueError("The CSV file is empty: it needs a header row and at least one data row.") from None
    except (pd.errors.ParserError, ValueError) as exc:
        raise ValueError(f"The file {name!r} could not be read as CSV ({_DELIMITER_NAMES[sep]}-separated): "
                         f"{str(exc).strip()[:300]}") from None
    if frame.shape[0] == 0:
        raise ValueError(f"The CSV file {name!r} has a header but no data rows.")
    _header_names(header, name)  # refuses repeated names, which pandas would rename
    columns = [str(c).strip() for c in frame.columns]
    frame.columns = columns
    if target is not None and target not in columns:
        shown = ", ".join(map(repr, columns[:30])) + (f", ... ({len(columns):,} columns)" if len(columns) > 30 else "")
        raise ValueError(f"Target column {target!r} is not in the file; its columns are: {shown}.")
    features = [c for c in columns if c != target]
    if not features:
        raise ValueError(f"The CSV file {name!r} has no feature columns besides the target {target!r}.")
    frame = _comma_decimal_columns(frame, features)
    kinds = frame.dtypes  # one Series for the whole frame: per-column frame[c] is slow on wide files
    non_numeric = [c for c in features if not _is_number_kind(kinds[c])]
    if non_numeric:
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
            "target, or encode it as numbers or delete it in your file and upload it again.")
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
            f"{' ...' if len(with_nan) > 10 else ''}. Fill them in or delete those rows in your file and upload "
            "it again.")
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
                         "are allowed. Replace them in your file and upload it again.")
    y, classes = (None, "") if target is None else _encode_target(frame[target])
    read_as = "" if (sep, decimal, encoding) == (",", ".", "UTF-8") else (
        f" (read as {_DELIMITER_NAMES[sep]}-separated, decimal {'comma' if decimal == ',' else 'point'}, {encoding})")
    return Dataset(name=name, X=X, y=y, feature_names=tuple(features), fields=None,
                   description=f"CSV {name}: {X.shape[0]} rows, {X.shape[1]} features"
                               + (f", target {target!r}{classes}" if target else ", no target") + read_as + ".")


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
    """(index, as text) of a feature index above ``max_features``, or None; scans the bytes with
    two regular expressions and converts only indices as long as ``max_features`` (never a list of
    every index, never int() of a huge digit string)."""
    if b"#" in raw:
        raw = _LIBSVM_COMMENT.sub(b"", raw)
    k = len(str(int(max_features)))
    longer = re.search(rb"(?<![\w.])0*([1-9]\d{%d,}):" % k, raw)  # more digits than the limit: too large
    if longer:
        digits = longer.group(1).decode()
        text = f"{int(digits):,}" if len(digits) <= 30 else f"{digits[:20]}… ({len(digits):,} digits)"
        return (int(digits) if len(digits) <= 30 else -1), text
    same = [int(m) for m in re.findall(rb"(?<![\w.])0*([1-9]\d{%d}):" % (k - 1), raw)]
    largest = max(same, default=0)
    return (largest, f"{largest:,}") if largest > max_features else None


def load_libsvm(path_or_buffer, *, max_features: int = MAX_FEATURES) -> Dataset:
    """Read a LIBSVM / svmlight file (``label index:value ...``) as CSR; labels become ints when integral.

    The largest feature index is read from the text first: a file whose index exceeds
    ``max_features`` is refused before anything of that size is allocated. NaN and
    infinite values (labels or features) are refused, as in :func:`load_csv`.
    """
    name = _source_name(path_or_buffer, "libsvm")
    raw = _read_bytes(path_or_buffer)
    if raw.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")) or b"\x00" in raw[:4096]:
        raw = decode_text(raw, repr(name))[0].encode("utf-8")  # sklearn's parser reads ASCII bytes
    too_large = _libsvm_largest_index(raw, max_features)
    if too_large:
        raise ValueError(f"The LIBSVM file {name!r} uses feature index {too_large[1]}; at most {max_features:,} "
                         "features are allowed (the index sets the number of columns). Renumber the features "
                         "from 1 in your file and upload it again.")
    try:
        X, y = skdatasets.load_svmlight_file(io.BytesIO(raw), dtype=np.float64)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"The file {name!r} is not valid LIBSVM format (label index:value ...): "
                         f"{str(exc)[:300]}") from None
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"The LIBSVM file {name!r} is empty: it has no samples or no features.")
    X = sp.csr_matrix(X)
    bad_rows = np.unique(np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))[~np.isfinite(X.data)])
    bad_rows = np.union1d(bad_rows, np.flatnonzero(~np.isfinite(y)))
    if bad_rows.size:
        raise ValueError(f"The LIBSVM file {name!r} has NaN or infinite values on {bad_rows.size:,} line(s) "
                         f"(line {', '.join(str(int(r) + 1) for r in bad_rows[:5])}{' ...' if bad_rows.size > 5 else ''}); only finite numbers "
                         "are allowed. Fix those lines in your file and upload it again.")
    y = y.astype(np.int64) if np.all(y == np.round(y)) else y
    return Dataset(name=name, X=X, y=y, feature_names=tuple(f"f{j + 1}" for j in range(X.shape[1])), fields=None,
                   description=f"LIBSVM {name}: {X.shape[0]} rows, {X.shape[1]} features, {X.nnz} non-zeros.")


# ---------------------------------------------------------------------------- MovieLens 100K
# Category sets of the d = 78 MovieLens 100K features, as they occur in the real files
# (u.user, u.item, u.occupation, u.genre); fixed here so that d and the feature names
# do not depend on which rows are loaded.
ML_AGES = (10, 20, 30, 40, 50, 60, 70)  # ages 7..73 rounded to the nearest 10
ML_GENDERS = ("M", "F")
ML_OCCUPATIONS = ("administrator", "artist", "doctor", "educator", "engineer", "entertainment", "executive",
                  "healthcare", "homemaker", "lawyer", "librarian", "marketing", "none", "other", "programmer",
                  "retired", "salesman", "scientist", "student", "technician", "writer")
# First character of the zip code: the 10 digits of US zip codes plus the 9 letters that
# begin the 18 Canadian postal codes in u.user (E, K, L, M, N, R, T, V, Y) = 19 values.
ML_ZIP_PREFIXES = tuple("0123456789") + tuple("EKLMNRTVY")
ML_YEARS = (0, 1920, 1930, 1940, 1950, 1960, 1970, 1980, 1990, 2000)  # 0 = release date missing
ML_GENRES = ("unknown", "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary",
             "Drama", "Fantasy", "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller",
             "War", "Western")
ML_N_USER_FEATURES = len(ML_AGES) + len(ML_GENDERS) + len(ML_OCCUPATIONS) + len(ML_ZIP_PREFIXES)  # 49
ML_N_FEATURES = ML_N_USER_FEATURES + len(ML_YEARS) + len(ML_GENRES)  # 78

ML_FEATURE_NAMES = (
    tuple(f"age={a}" for a in ML_AGES) + tuple(f"gender={g}" for g in ML_GENDERS)
    + tuple(f"occupation={o}" for o in ML_OCCUPATIONS) + tuple(f"zip={z}" for z in ML_ZIP_PREFIXES)
    + tuple(f"year={y}" if y else "year=missing" for y in ML_YEARS) + tuple(f"genre={g}" for g in ML_GENRES)
)


def _round_to_ten(values: np.ndarray) -> np.ndarray:
    """Nearest multiple of 10, ties to even (numpy / Python 3 ``round(v, -1)``: 25 -> 20, 35 -> 40)."""
    return (np.round(np.asarray(values, dtype=np.float64) / 10.0) * 10.0).astype(np.int64)


def _codes(values, categories, what: str, file: str) -> np.ndarray:
    """Index of each value in ``categories``; unknown values raise a ValueError naming them."""
    index = pd.Index(categories)
    codes = index.get_indexer(pd.Index(values))
    if (codes < 0).any():
        unknown = sorted({str(v) for v in np.asarray(values, dtype=object)[codes < 0]})[:10]
        raise ValueError(f"{file}: unexpected {what} value(s) {', '.join(unknown)}; allowed: {', '.join(map(str, categories))}.")
    return codes


def _ml_file(folder: Path, name: str) -> Path:
    path = folder / name
    if not path.is_file():
        raise ValueError(f"MovieLens 100K file {name!r} not found in {str(folder)!r}; expected u.data, u.user and u.item "
                         "from ml-100k.zip (https://grouplens.org/datasets/movielens/100k/).")
    return path


def load_movielens(path, n_samples: int | None = None, random_state=None, *, sparse: bool = False) -> Dataset:
    """MovieLens 100K rating rows as d = 78 binary feature vectors (the paper's Section 6).

    Each row of u.data (user, item, rating) becomes the one-hot / multi-hot vector

    ========================  ====  ==================================================
    user age, nearest 10       7    10..70, ties to even (25 -> 20, 35 -> 40)
    user gender                2    M, F
    user occupation           21    the list in u.occupation
    zip code, 1st character   19    0-9 and the letters of Canadian codes E K L M N R T V Y
    item release decade       10    year of u.item's date rounded to 10 (1920..2000); 0 = missing
    item genres               19    multi-hot, u.item's last 19 columns
    ========================  ====  ==================================================

    with label y = 1 if the rating is 5 else 0. ``fields`` = (user features 0..48,
    item features 49..77). ``n_samples`` with ``random_state=None`` keeps the first n
    rating rows of u.data (already randomly ordered by GroupLens); with an integer
    seed it takes a seeded subsample (sorted row order). Reads only local files.

    ``sparse=True`` returns X as a CSR matrix: about 8 of the 78 entries of a row are
    non-zero (5 one-hot fields and the genres), so it is ~6x smaller than the dense
    array, and the maps' and kernels' sparse paths take it as is.
    """
    if len(str(path)) > MAX_PATH_LENGTH:
        raise ValueError(f"The MovieLens folder path is {len(str(path)):,} characters long, more than the "
                         f"{MAX_PATH_LENGTH:,} allowed; enter the folder that holds u.data, u.user and u.item.")
    folder = Path(path)
    try:
        exists = folder.is_dir()
    except (OSError, ValueError) as exc:  # e.g. a name longer than the file system allows, or a NUL byte
        raise ValueError(f"The MovieLens folder {str(folder)[:200]!r} cannot be opened ({exc}); enter the folder "
                         "that holds u.data, u.user and u.item.") from None
    if not exists:
        raise ValueError(f"MovieLens folder {str(folder)!r} does not exist; it must hold u.data, u.user and u.item.")
    f_data, f_user, f_item = (_ml_file(folder, n) for n in ("u.data", "u.user", "u.item"))
    ratings = pd.read_csv(f_data, sep="\t", header=None, names=["user", "item", "rating", "time"],
                          dtype={"user": np.int64, "item": np.int64, "rating": np.int64})
    if ratings.shape[0] == 0:
        raise ValueError(f"{f_data.name} has no ratings.")
    users = pd.read_csv(f_user, sep="|", header=None, names=["user", "age", "gender", "occupation", "zip"],
                        dtype={"zip": str, "gender": str, "occupation": str})
    items = pd.read_csv(f_item, sep="|", header=None, encoding="latin-1", dtype={2: str})
    if items.shape[1] != 5 + len(ML_GENRES):
        raise ValueError(f"u.item must have {5 + len(ML_GENRES)} '|'-separated columns "
                         f"(id, title, release date, video date, URL, 19 genres); found {items.shape[1]}.")
    rows = _subsample(ratings.shape[0], n_samples, random_state)
    ratings = ratings.iloc[rows].reset_index(drop=True)

    # per-user / per-item column indices into the 78 features, then join onto the ratings
    user_cols = pd.DataFrame({"user": users["user"].to_numpy()})
    offset = 0
    for col, codes, size in (
        ("c_age", _codes(_round_to_ten(users["age"]), ML_AGES, "age", "u.user"), len(ML_AGES)),
        ("c_gender", _codes(users["gender"].str.upper(), ML_GENDERS, "gender", "u.user"), len(ML_GENDERS)),
        ("c_occ", _codes(users["occupation"].str.strip(), ML_OCCUPATIONS, "occupation", "u.user"), len(ML_OCCUPATIONS)),
        ("c_zip", _codes(users["zip"].str.strip().str[0].str.upper(), ML_ZIP_PREFIXES, "zip code prefix", "u.user"), len(ML_ZIP_PREFIXES)),
    ):
        user_cols[col] = codes + offset
        offset += size
    years = pd.to_datetime(items[2], format="%d-%b-%Y", errors="coerce").dt.year
    decade = np.where(years.isna(), 0, _round_to_ten(years.fillna(0).to_numpy()))
    item_cols = pd.DataFrame({"item": items[0].to_numpy(), "c_year": _codes(decade, ML_YEARS, "release year", "u.item") + offset})
    genres = items.iloc[:, 5:].to_numpy(dtype=np.float64)

    merged = ratings.merge(user_cols, on="user", how="left", validate="many_to_one")
    merged = merged.merge(item_cols, on="item", how="left", validate="many_to_one")
    if merged["c_age"].isna().any():
        missing = sorted(merged.loc[merged["c_age"].isna(), "user"].unique())[:10]
        raise ValueError(f"u.data refers to user id(s) {missing} that are not in u.user.")
    if merged["c_year"].isna().any():
        missing = sorted(merged.loc[merged["c_year"].isna(), "item"].unique())[:10]
        raise ValueError(f"u.data refers to item id(s) {missing} that are not in u.item.")

    n = merged.shape[0]
    # CSR from the start: 5 one-hot columns per row, then the item's genre row (multi-hot)
    one_hot = merged[["c_age", "c_gender", "c_occ", "c_zip", "c_year"]].to_numpy(dtype=np.intp)
    n_one_hot = ML_N_USER_FEATURES + len(ML_YEARS)
    fields_part = sp.csr_matrix((np.ones(one_hot.size), one_hot.ravel(), np.arange(0, one_hot.size + 1, 5)),
                                shape=(n, n_one_hot))
    item_row = pd.Index(items[0].to_numpy()).get_indexer(merged["item"].to_numpy())
    X = sp.hstack([fields_part, sp.csr_matrix(genres)[item_row]], format="csr")
    X.sort_indices()
    X = X if sparse else X.toarray()
    y = (merged["rating"].to_numpy() == 5).astype(np.int64)
    fields = (tuple(range(ML_N_USER_FEATURES)), tuple(range(ML_N_USER_FEATURES, ML_N_FEATURES)))
    return Dataset(
        name="movielens100k", X=X, y=y, feature_names=ML_FEATURE_NAMES, fields=fields,
        description=(f"MovieLens 100K (GroupLens; Harper & Konstan 2015): {n} rating rows, d = {ML_N_FEATURES} "
                     "(age 7, gender 2, occupation 21, zip prefix 19, release decade 10, genres 19); y = rating == 5."),
    )
