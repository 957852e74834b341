"""A view's settings as rkcore objects: data loading, the kernel spec built from typed text, the
"reproduce in Python" code, and memory accounting. Pure (no streamlit): the dashboard's frame
(rkapp) calls these with the values of its state table, a script can call them directly.
"""
from __future__ import annotations

import dataclasses
import io
from typing import Sequence

from .data import datasets as rkdata
from .kernels.itemsets import ItemsetFamily
from .registry import KernelSpec, get_kernel
from .base.arrays import subsample_rows
from .data.textformats import parse_fields, parse_itemsets

#: Data sources beside the built-in datasets: a file the user uploaded, a local MovieLens 100K folder.
UPLOAD = "upload"
MOVIELENS = "movielens"
DATASET_KEYS = (*rkdata.BUILTIN, UPLOAD, MOVIELENS)
#: How an itemset kernel's family is given: a typed list of itemsets, or cross-field itemsets of size m.
FAMILY_SOURCES = {"custom": "Custom list of itemsets", "cross": "Cross-field"}


def dataset_label(key: str) -> str:
    """The name of a dataset key in the sidebar.

    Parameters
    ----------
    key : str
        A dataset key.

    Returns
    -------
    str
        Its label (the key itself when unknown).
    """
    if key in rkdata.BUILTIN:
        return rkdata.BUILTIN[key].label
    return {UPLOAD: "Upload a file (CSV / LIBSVM)", MOVIELENS: "MovieLens 100K (local folder)"}.get(key, key)


def is_csv(name) -> bool:
    """Whether a file name is read as CSV (``.csv``, ``.tsv``) rather than LIBSVM.

    Parameters
    ----------
    name : str or None
        The file name.

    Returns
    -------
    bool
        True for CSV.
    """
    return str(name).lower().endswith((".csv", ".tsv"))


# ---------------------------------------------------------------------------- data
def load_view_data(dataset: str, normalization: str, n: int, *, target: str | None = None, movielens_path: str = "",
                   upload_name: str | None = None, upload_bytes: bytes | None = None,
                   movielens_roots: tuple[str, ...] | None = None) -> rkdata.Dataset:
    """The dataset of a view: loaded, at most ``n`` rows (seeded subsample), rows normalized.

    Parameters
    ----------
    dataset : str
        A built-in key, the upload key or the MovieLens key.
    normalization : str
        Row normalization (see :func:`rkcore.data.normalize`).
    n : int
        Most rows kept.
    target : str, optional
        Label column of an uploaded CSV.
    movielens_path : str, default=""
        Folder of MovieLens 100K.
    upload_name : str, optional
        Name of the uploaded file.
    upload_bytes : bytes, optional
        Its content.
    movielens_roots : tuple of str, optional
        The folders MovieLens may be read from (the app passes the server's data roots,
        :func:`rkcore.data.datasets.data_roots`); None reads any folder.

    Returns
    -------
    Dataset
        The data, subsampled and normalized.
    """
    if dataset in rkdata.BUILTIN:
        data = rkdata.load_builtin(dataset, n_samples=n, random_state=0)
    elif dataset == UPLOAD:
        if upload_bytes is None:
            raise ValueError("No file uploaded yet: upload a CSV or LIBSVM file in the sidebar, "
                             "or choose a built-in dataset.")
        buffer = io.BytesIO(upload_bytes)
        buffer.name = upload_name
        data = rkdata.load_csv(buffer, target=target) if is_csv(upload_name) else rkdata.load_libsvm(buffer)
    elif dataset == MOVIELENS:
        if not movielens_path.strip():
            raise ValueError("Enter the MovieLens 100K folder (holding u.data, u.user, u.item) in the sidebar, "
                             "or choose a built-in dataset.")
        data = rkdata.load_movielens(movielens_path.strip(), n_samples=n, random_state=0, roots=movielens_roots)
    else:
        raise ValueError(f"Unknown dataset {dataset!r}; allowed: {', '.join(DATASET_KEYS)}.")
    X, y = subsample_rows(data.X, data.y, n, random_state=0)
    return dataclasses.replace(data, X=rkdata.normalize(X, normalization), y=y)


# ---------------------------------------------------------------------------- kernel
def cross_fields(fields_text: str, d: int,
                 data_fields: Sequence[Sequence[int]] | None = None) -> tuple[tuple[int, ...], ...]:
    """The fields of a cross-field family: typed ones, else the dataset's, else the two halves.

    Parameters
    ----------
    fields_text : str
        Typed fields (may be blank).
    d : int
        Number of features.
    data_fields : sequence of sequence of int, optional
        The dataset's own fields.

    Returns
    -------
    tuple of tuple of int
        The fields.
    """
    if fields_text.strip():
        return parse_fields(fields_text)
    if data_fields:
        return tuple(tuple(f) for f in data_fields)
    if d < 2:
        raise ValueError(f"A cross-field family needs at least 2 features; the data has d={d}.")
    half = d // 2
    return (tuple(range(half)), tuple(range(half, d)))


def kernel_spec_from_text(kernel: str, d: int, *, degree: int = 2, family: str = "custom", itemsets: str = "",
                          fields: str = "", c: float = 1.0, gamma: float = 1.0,
                          data_fields: Sequence[Sequence[int]] | None = None) -> KernelSpec:
    """The KernelSpec over d features; itemset families come from typed text. Raises ValueError if invalid.

    Parameters
    ----------
    kernel : str
        A kernel key, or "itemset".
    d : int
        Number of features.
    degree : int, default=2
        The order m.
    family : str, default="custom"
        "custom" (typed itemsets) or "cross" (fields).
    itemsets : str, default=""
        Typed itemsets (see :func:`rkcore.data.textformats.parse_itemsets`).
    fields : str, default=""
        Typed fields (see :func:`cross_fields`).
    c : float, default=1.0
        Polynomial offset.
    gamma : float, default=1.0
        RBF width.
    data_fields : sequence of sequence of int, optional
        The dataset's own fields.

    Returns
    -------
    KernelSpec
        The validated spec.
    """
    if get_kernel(kernel).takes_family:
        if family == "cross":
            itemset_family = ItemsetFamily.cross_fields(cross_fields(fields, d, data_fields), degree, d)
        else:
            itemset_family = ItemsetFamily.custom(d, parse_itemsets(itemsets))
        return KernelSpec(kernel, degree=degree, itemsets=itemset_family)
    spec = KernelSpec(kernel, degree=int(degree), c=float(c), gamma=float(gamma))
    spec.family(d)  # itemset kernels: validates 1 <= m <= d now, with a message naming both
    return spec


# ---------------------------------------------------------------------------- reproduce in Python
def reproduce_code(*, dataset: str, n: int, normalization: str, kernel: str, degree: int = 2, family: str = "custom",
                   itemsets: str = "", fields: str = "", c: float = 1.0, gamma: float = 1.0, target: str | None = None,
                   movielens_path: str = "", upload_name: str | None = None, extra_lines: Sequence[str] = ()) -> str:
    """Python lines that rebuild the view's data (X, y, d) and kernel (spec) with rkcore, then ``extra_lines``.

    Parameters
    ----------
    dataset : str
        Dataset key.
    n : int
        Most rows.
    normalization : str
        Row normalization.
    kernel : str
        Kernel key or "itemset".
    degree : int, default=2
        The order m.
    family : str, default="custom"
        Itemset family kind.
    itemsets : str, default=""
        Typed itemsets.
    fields : str, default=""
        Typed fields.
    c : float, default=1.0
        Polynomial offset.
    gamma : float, default=1.0
        RBF width.
    target : str, optional
        Label column of an uploaded CSV.
    movielens_path : str, default=""
        MovieLens folder.
    upload_name : str, optional
        Name of the uploaded file.
    extra_lines : sequence of str, default=()
        Lines appended (the page's own computation).

    Returns
    -------
    str
        The Python code.
    """
    lines = ["import warnings", "import numpy as np", "import pandas as pd",
             "from sklearn.exceptions import ConvergenceWarning", "from rkcore import data as datasets",
             "from rkcore.registry import KernelSpec, make_map", "from rkcore.base.arrays import subsample_rows",
             "",
             "pd.set_option('display.width', 200)  # print whole tables: no column hidden behind '...'",
             "pd.set_option('display.max_columns', None)",
             "# fits that stop at their iteration limit: the page counts them under its results",
             "warnings.simplefilter('ignore', ConvergenceWarning)"]
    if get_kernel(kernel).takes_family:
        lines.append("from rkcore.kernels.itemsets import ItemsetFamily")
    lines.append("")
    lines += _data_code(dataset, n, normalization, target=target, movielens_path=movielens_path,
                        upload_name=upload_name)
    lines += _kernel_code(kernel, degree, family=family, itemsets=itemsets, fields=fields, c=c, gamma=gamma)
    return "\n".join(lines + list(extra_lines))


def _data_code(dataset: str, n: int, normalization: str, *, target: str | None, movielens_path: str,
               upload_name: str | None) -> list[str]:
    """The lines of :func:`reproduce_code` that load the data and define X, y and d."""
    if dataset in rkdata.BUILTIN:
        lines = [f"data = datasets.load_builtin({dataset!r}, n_samples={n}, random_state=0)"]
    elif dataset == UPLOAD:
        name = upload_name or "your_file.csv"
        if is_csv(name):
            lines = [f"data = datasets.load_csv({name!r}, target={target!r})"]
        else:
            lines = [f"data = datasets.load_libsvm({name!r})"]
    else:
        lines = [f"data = datasets.load_movielens({movielens_path or 'path/to/ml-100k'!r}, "
                 f"n_samples={n}, random_state=0)"]
    return lines + [f"X, y = subsample_rows(data.X, data.y, n={n}, random_state=0)",
                    f"X = datasets.normalize(X, {normalization!r})",
                    "d = X.shape[1]"]


def _kernel_code(kernel: str, degree: int, *, family: str, itemsets: str, fields: str, c: float,
                 gamma: float) -> list[str]:
    """The lines of :func:`reproduce_code` that define the kernel ``spec`` (and its itemset ``family``)."""
    entry = get_kernel(kernel)
    if not entry.takes_family:
        args = [repr(kernel)]
        if entry.uses_degree:
            args.append(f"degree={degree}")
        if entry.uses_offset:
            args.append(f"c={c}")
        if entry.uses_gamma:
            args.append(f"gamma={gamma}")
        return [f"spec = KernelSpec({', '.join(args)})"]
    if family == "cross":
        fields_code = "data.fields or (tuple(range(d // 2)), tuple(range(d // 2, d)))"
        if fields.strip():
            try:
                fields_code = repr(parse_fields(fields))
            except ValueError:  # the page shows the error; the code keeps a valid example
                fields_code = "((0, 1, 2, 3, 4), (5, 6, 7, 8, 9))  # your fields"
        family_line = f"family = ItemsetFamily.cross_fields({fields_code}, {degree}, d)"
    else:
        try:
            sets = repr(list(parse_itemsets(itemsets)))
        except ValueError:
            sets = "[(0, 1), (2, 3)]  # your itemsets"
        family_line = f"family = ItemsetFamily.custom(d, {sets})"
    return [family_line, f"spec = KernelSpec({kernel!r}, itemsets=family)"]
