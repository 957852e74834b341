"""MovieLens 100K read from a local folder (the paper's Section 6 data).

On a shared server the folder box is a way to probe the server's files, so the app reads only
under the **data roots** that whoever starts the server sets (:data:`DATA_ROOTS_ENV`,
``RKCORE_DATA_ROOTS=/srv/data:/opt/ml``; unset: ``./data`` if it exists, else nothing). Every path is
resolved (symlinks followed) before it is compared with the roots, and every failure to find a
readable MovieLens folder or file gives one fixed message, whether the path exists, is missing, is
outside the roots or cannot be read. Errors never quote a file's contents (line numbers only).
Each file is read with bounds on its bytes and lines, before it is parsed. A file with more than one hard
link is refused when sealed (issue 37, finding 8): a hard link inside a root to a file outside it cannot be
told from the file itself, so someone with write access to a root could otherwise link any file they can
read into it; a data folder on a deduplicating store (every copy a hard link) must be copied. The library's own calls
(``roots=None``: a script or the command line, on the caller's own machine) are not sealed but are
bounded the same way.
"""
from __future__ import annotations

import io
import os
import re
import stat

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .builtin import Dataset, _subsample
from .text import MAX_PATH_LENGTH
from ..base.limits import format_bytes

#: Environment variable naming the folders the app may read MovieLens from (os.pathsep-separated).
DATA_ROOTS_ENV = "RKCORE_DATA_ROOTS"
#: The data root when the variable is not set: this folder under the server's working directory, if it exists.
DEFAULT_DATA_ROOT = "data"
#: Largest MovieLens file read (ml-100k's u.data is 1.9 MB; a larger file is refused unread).
MAX_MOVIELENS_BYTES = 32 * 2**20
#: Most lines of a MovieLens file (u.data has 100,000).
MAX_MOVIELENS_ROWS = 1_000_000
ML_FILES = ("u.data", "u.user", "u.item")
_SOURCE = "ml-100k.zip (https://grouplens.org/datasets/movielens/100k/)"
_PANDAS_LINE = re.compile(r"line (\d+)")


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



def data_roots(environ=None) -> tuple[str, ...]:
    """The folders MovieLens may be read from, resolved (realpath): ``RKCORE_DATA_ROOTS`` split at
    os.pathsep (empty: none), else ``./data`` if it is a folder, else none. Only existing folders count.

    Parameters
    ----------
    environ : mapping or None, optional
        Environment to read; None uses ``os.environ``.

    Returns
    -------
    tuple of str
        The existing root folders, resolved.
    """
    environ = os.environ if environ is None else environ
    if DATA_ROOTS_ENV in environ:
        listed = [p for p in environ[DATA_ROOTS_ENV].split(os.pathsep) if p.strip()]
    else:
        listed = [DEFAULT_DATA_ROOT]
    roots = [os.path.realpath(p) for p in listed]
    return tuple(dict.fromkeys(r for r in roots if os.path.isdir(r)))


def _inside(real: str, roots: tuple[str, ...]) -> bool:
    return any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def folder_refusal(roots: tuple[str, ...]) -> str:
    """The one answer for every MovieLens folder that cannot be used on a sealed server (it does not
    name the path, and it is the same whether the path exists, is missing, lies outside the roots or
    cannot be read).

    Parameters
    ----------
    roots : tuple of str
        The server's data roots.

    Returns
    -------
    str
        The refusal message.
    """
    where = (f"folders under its data roots ({', '.join(roots)})" if roots else
             f"folders under its data roots, and none are set (whoever starts the server sets {DATA_ROOTS_ENV})")
    return (f"No MovieLens 100K folder can be read at that path. This server reads MovieLens only from {where}; "
            "enter such a folder that holds u.data, u.user and u.item.")


def _file_refusal(name: str) -> str:
    return (f"The MovieLens folder has no readable regular file {name!r}; it must hold u.data, u.user and u.item "
            f"from {_SOURCE}.")


def _resolve_folder(path: str, roots: tuple[str, ...] | None) -> str:
    """The real path of the MovieLens folder: any folder when ``roots`` is None, else one under the
    roots (a relative path is looked up under each root), with the one refusal otherwise."""
    if roots is None:
        if len(path) > MAX_PATH_LENGTH:
            raise ValueError(f"The MovieLens folder path is {len(path):,} characters long, more than the "
                             f"{MAX_PATH_LENGTH:,} allowed; enter the folder that holds u.data, u.user and u.item.")
        try:
            real = os.path.realpath(path)
            if os.path.isdir(real):
                return real
        except (OSError, ValueError):
            pass
        raise ValueError(f"MovieLens folder {path[:200]!r} does not exist or cannot be opened; it must hold u.data, "
                         "u.user and u.item.")
    if len(path) <= MAX_PATH_LENGTH and "\x00" not in path:
        candidates = [path] if os.path.isabs(path) else [os.path.join(r, path) for r in roots]
        for candidate in candidates:
            try:
                real = os.path.realpath(candidate)
                if _inside(real, roots) and os.path.isdir(real) and os.access(real, os.R_OK | os.X_OK):
                    return real
            except (OSError, ValueError):
                pass
    raise ValueError(folder_refusal(roots))


def _read_bounded(folder: str, name: str, roots: tuple[str, ...] | None) -> bytes:
    """The bytes of ``folder/name``: a regular file (under the roots when sealed), at most
    MAX_MOVIELENS_BYTES (refused from its size), opened without following a swapped-in link."""
    real = os.path.realpath(os.path.join(folder, name))
    if roots is not None and not _inside(real, roots):
        raise ValueError(_file_refusal(name))
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, ValueError):
        raise ValueError(_file_refusal(name)) from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):  # a FIFO would block, a device never end
            raise ValueError(_file_refusal(name))
        if roots is not None and info.st_nlink > 1:  # maybe a hard link to a file outside the roots
            raise ValueError(_file_refusal(name))
        if info.st_size > MAX_MOVIELENS_BYTES:
            raise _ml_too_large(name)
        raw = f.read(MAX_MOVIELENS_BYTES + 1)  # files that report size 0 (/proc) are bounded here
    if len(raw) > MAX_MOVIELENS_BYTES:
        raise _ml_too_large(name)
    lines = raw.count(b"\n")
    if lines > MAX_MOVIELENS_ROWS:
        raise ValueError(f"MovieLens file {name!r} has {lines:,} lines, more than the {MAX_MOVIELENS_ROWS:,} read "
                         f"(MovieLens 100K's u.data has 100,000); use the files of {_SOURCE}.")
    return raw


def _ml_too_large(name: str) -> ValueError:
    return ValueError(f"MovieLens file {name!r} is larger than {format_bytes(MAX_MOVIELENS_BYTES)}, the most read "
                      f"(MovieLens 100K's largest, u.data, is 1.9 MB); use the files of {_SOURCE}.")


def _table(raw: bytes, name: str, sep: str, columns: int, layout: str, encoding: str = "utf-8") -> pd.DataFrame:
    """The file as a frame of ``columns`` text columns; a line with another number of fields is refused
    by its line number (pandas' own message would quote the line)."""
    wrong = f"{name} line {{line}} is not {layout}."
    try:
        frame = pd.read_csv(io.BytesIO(raw), sep=sep, header=None, dtype=str, keep_default_na=False,
                            skip_blank_lines=False, encoding=encoding, encoding_errors="replace", quoting=3)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{name} is empty; use the files of {_SOURCE}.") from None
    except (pd.errors.ParserError, ValueError) as exc:
        line = _PANDAS_LINE.search(str(exc))
        raise ValueError(wrong.format(line=line.group(1) if line else "?")) from None
    if frame.shape[1] != columns:
        raise ValueError(wrong.format(line=1))
    short = frame.isna().any(axis=1).to_numpy()  # fewer fields, or a blank line
    if short.any():
        raise ValueError(wrong.format(line=int(np.argmax(short)) + 1))
    return frame


def _integers(column: pd.Series, name: str, layout: str) -> np.ndarray:
    """The column as int64; a cell that is not a plain integer is refused by its line number."""
    ok = column.str.fullmatch(r"\d{1,12}").to_numpy(dtype=bool)
    if not ok.all():
        raise ValueError(f"{name} line {int(np.argmin(ok)) + 1} is not {layout}.")
    return column.to_numpy().astype(np.int64)


def _round_to_ten(values: np.ndarray) -> np.ndarray:
    """Nearest multiple of 10, ties to even (numpy / Python 3 ``round(v, -1)``: 25 -> 20, 35 -> 40)."""
    return (np.round(np.asarray(values, dtype=np.float64) / 10.0) * 10.0).astype(np.int64)


def _codes(values, categories, what: str, file: str) -> np.ndarray:
    """Index of each value in ``categories``; an unknown value is refused by its line number, not quoted."""
    codes = pd.Index(categories).get_indexer(pd.Index(values))
    if (codes < 0).any():
        raise ValueError(f"{file} line {int(np.argmax(codes < 0)) + 1} has an unknown {what} (not one of the "
                         f"{len(categories)} of MovieLens 100K: {', '.join(map(str, categories))}).")
    return codes


_DATA_LAYOUT = "'user item rating timestamp' (four tab-separated integers)"
_USER_LAYOUT = "'user|age|gender|occupation|zip code'"
_ITEM_LAYOUT = f"'id|title|release date|video date|URL|' and {len(ML_GENRES)} genre flags 0 or 1"


def _read_ratings(raw: bytes) -> pd.DataFrame:
    frame = _table(raw, "u.data", "\t", 4, _DATA_LAYOUT)
    ratings = pd.DataFrame({col: _integers(frame[k], "u.data", _DATA_LAYOUT)
                            for k, col in enumerate(("user", "item", "rating", "time"))})
    if ratings.shape[0] == 0:
        raise ValueError("u.data has no ratings.")
    return ratings


def _user_columns(raw: bytes) -> pd.DataFrame:
    """Per user, the indices of its age, gender, occupation and zip-prefix features (0..48)."""
    users = _table(raw, "u.user", "|", 5, _USER_LAYOUT)
    user_cols = pd.DataFrame({"user": _integers(users[0], "u.user", _USER_LAYOUT)})
    ages = _integers(users[1], "u.user", _USER_LAYOUT)
    offset = 0
    for col, codes, size in (
        ("c_age", _codes(_round_to_ten(ages), ML_AGES, "age", "u.user"), len(ML_AGES)),
        ("c_gender", _codes(users[2].str.upper(), ML_GENDERS, "gender", "u.user"), len(ML_GENDERS)),
        ("c_occ", _codes(users[3].str.strip(), ML_OCCUPATIONS, "occupation", "u.user"), len(ML_OCCUPATIONS)),
        ("c_zip", _codes(users[4].str.strip().str[:1].str.upper(), ML_ZIP_PREFIXES, "zip code prefix", "u.user"),
         len(ML_ZIP_PREFIXES)),
    ):
        user_cols[col] = codes + offset
        offset += size
    return user_cols


def _item_columns(raw: bytes) -> tuple[pd.DataFrame, np.ndarray]:
    """(per item its release-decade feature index 49..58, the items' genre flags)."""
    items = _table(raw, "u.item", "|", 5 + len(ML_GENRES), _ITEM_LAYOUT, encoding="latin-1")
    ids = _integers(items[0], "u.item", _ITEM_LAYOUT)
    flags = items.iloc[:, 5:]
    ok = flags.isin(["0", "1"]).all(axis=1).to_numpy()
    if not ok.all():
        raise ValueError(f"u.item line {int(np.argmin(ok)) + 1} is not {_ITEM_LAYOUT}.")
    years = pd.to_datetime(items[2], format="%d-%b-%Y", errors="coerce").dt.year
    decade = np.where(years.isna(), 0, _round_to_ten(years.fillna(0).to_numpy()))
    item_cols = pd.DataFrame({"item": ids, "c_year": _codes(decade, ML_YEARS, "release year", "u.item")
                              + ML_N_USER_FEATURES})
    return item_cols, flags.to_numpy(dtype=np.float64)


def _join(ratings: pd.DataFrame, user_cols: pd.DataFrame, item_cols: pd.DataFrame) -> pd.DataFrame:
    """The ratings with their users' and items' feature indices; unknown ids refused by line."""
    for frame, key, file in ((user_cols, "user", "u.user"), (item_cols, "item", "u.item")):
        if frame[key].duplicated().any():
            raise ValueError(f"{file} line {int(np.argmax(frame[key].duplicated().to_numpy())) + 1} repeats an id.")
    merged = ratings.merge(user_cols, on="user", how="left").merge(item_cols, on="item", how="left")
    for column, key, file in (("c_age", "user", "u.user"), ("c_year", "item", "u.item")):
        unknown = merged[column].isna().to_numpy()
        if unknown.any():
            raise ValueError(f"u.data refers to {key} ids that are not in {file} ({int(unknown.sum()):,} rating(s); "
                             f"the first on line {int(np.argmax(unknown)) + 1} of the rows read).")
    return merged


def load_movielens(path, n_samples: int | None = None, random_state=None, *, sparse: bool = False,
                   roots: tuple[str, ...] | None = None) -> Dataset:
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

    ``roots``: None reads any folder (a script or the command line, on the caller's machine); a
    tuple of real paths (:func:`data_roots`, as the app passes) reads only under them, with one
    fixed answer for every other path. Every file is bounded (:data:`MAX_MOVIELENS_BYTES`,
    :data:`MAX_MOVIELENS_ROWS`) before it is parsed, and no error quotes a file's contents.

    ``sparse=True`` returns X as a CSR matrix: about 8 of the 78 entries of a row are
    non-zero (5 one-hot fields and the genres), so it is ~6x smaller than the dense
    array, and the maps' and kernels' sparse paths take it as is.

    Parameters
    ----------
    path : str or path-like
        Folder holding u.data, u.user and u.item.
    n_samples : int or None, optional
        Rating rows to keep; None keeps all.
    random_state : int or None, optional
        Seed of the subsample; None keeps the first rows.
    sparse : bool, default False
        Return X as a CSR matrix.
    roots : tuple of str or None, optional
        Folders ``path`` must lie under; None allows any.

    Returns
    -------
    Dataset
        The 78 binary features and the label rating == 5.
    """
    folder = _resolve_folder(str(path), None if roots is None else tuple(roots))
    raw = {name: _read_bounded(folder, name, roots) for name in ML_FILES}
    ratings = _read_ratings(raw["u.data"])
    user_cols = _user_columns(raw["u.user"])
    item_cols, genres = _item_columns(raw["u.item"])
    rows = _subsample(ratings.shape[0], n_samples, random_state)
    merged = _join(ratings.iloc[rows].reset_index(drop=True), user_cols, item_cols)

    n = merged.shape[0]
    # CSR from the start: 5 one-hot columns per row, then the item's genre row (multi-hot)
    one_hot = merged[["c_age", "c_gender", "c_occ", "c_zip", "c_year"]].to_numpy(dtype=np.intp)
    n_one_hot = ML_N_USER_FEATURES + len(ML_YEARS)
    fields_part = sp.csr_matrix((np.ones(one_hot.size), one_hot.ravel(), np.arange(0, one_hot.size + 1, 5)),
                                shape=(n, n_one_hot))
    item_row = pd.Index(item_cols["item"].to_numpy()).get_indexer(merged["item"].to_numpy())
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
