"""Datasets: named synthetic generators, scikit-learn's bundled sets, user files, MovieLens 100K.

Every loader returns a :class:`Dataset` (float64 ``X``, optional labels ``y``, readable
feature names, optional feature groups ``fields``). Nothing here downloads anything:
the built-ins are generated or ship with scikit-learn, and MovieLens is read from a
folder the user already has (on a server: only under its data roots).

It gathers the data room's modules: :mod:`rkcore.data.builtin` (the Dataset type,
:func:`normalize`, the built-in sets), :mod:`rkcore.data.files` (CSV and LIBSVM, bounded
while reading, over :mod:`rkcore.data.text`) and :mod:`rkcore.data.movielens` (MovieLens
100K, sealed to data roots).
"""
from __future__ import annotations

from .builtin import (  # noqa: F401
    NORMALIZATIONS, REFERENCE_ROWS, BuiltinDataset, Dataset, make_gaussian, make_interactions, normalize,
)
from .catalog import BUILTIN, load_builtin  # noqa: F401
from .files import (  # noqa: F401
    MAX_CELLS, MAX_CLASSES, MAX_COLUMN_NAME, MAX_FEATURES, MAX_FILE_BYTES, MAX_HEADER_CHARS, MAX_PATH_LENGTH,
    MAX_ROWS, csv_columns, decode_text, load_csv, load_libsvm, sniff_csv,
)
from .movielens import (  # noqa: F401
    DATA_ROOTS_ENV, ML_AGES, ML_FEATURE_NAMES, ML_GENDERS, ML_GENRES, ML_N_FEATURES, ML_N_USER_FEATURES,
    ML_OCCUPATIONS, ML_YEARS, ML_ZIP_PREFIXES, data_roots, load_movielens,
)

__all__ = [
    "BUILTIN", "NORMALIZATIONS", "BuiltinDataset", "Dataset", "load_builtin", "make_gaussian", "make_interactions",
    "normalize", "MAX_CELLS", "MAX_CLASSES", "MAX_FEATURES", "MAX_FILE_BYTES", "MAX_ROWS", "csv_columns",
    "decode_text", "load_csv", "load_libsvm", "sniff_csv", "DATA_ROOTS_ENV", "data_roots", "load_movielens",
    "ML_FEATURE_NAMES", "ML_N_FEATURES", "ML_N_USER_FEATURES",
]
