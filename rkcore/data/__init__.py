"""Datasets: built-in generators, user files (CSV, LIBSVM) and MovieLens 100K, each a :class:`Dataset`."""
from .datasets import Dataset, load_builtin, load_csv, load_libsvm, load_movielens, normalize  # noqa: F401

__all__ = ["Dataset", "load_builtin", "load_csv", "load_libsvm", "load_movielens", "normalize"]
