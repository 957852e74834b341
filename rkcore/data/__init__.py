"""Datasets: built-in generators, user files (CSV, LIBSVM) and MovieLens 100K, each a :class:`Dataset`."""
from .datasets import (  # noqa: F401
    BUILTIN, Dataset, csv_columns, data_roots, load_builtin, load_csv, load_libsvm, load_movielens, make_gaussian,
    make_interactions, normalize,
)

__all__ = ["BUILTIN", "Dataset", "csv_columns", "data_roots", "load_builtin", "load_csv", "load_libsvm",
           "load_movielens", "make_gaussian", "make_interactions", "normalize"]
