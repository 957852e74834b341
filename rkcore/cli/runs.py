"""The work behind ``rkcore timing``, ``table1`` and ``accuracy``: data, engines, tables and provenance.

Imported only once the arguments have parsed (numpy, pandas, scikit-learn and the engines load here),
so that ``--help`` and ``--version`` answer at once. Each ``*_command`` takes the parsed arguments, a
:class:`~rkcore.cli.progress.Progress` and an optional Dask client, prints its report on stdout and
returns ``({tag: table}, extra provenance)``; the tag "" is the main table (``--out``), others go to
sibling files (``--out`` ``results.csv`` -> ``results.<tag>.csv``).
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pandas as pd
from threadpoolctl import threadpool_info, threadpool_limits

from .. import __version__
from ..base.limits import require_memory
from ..base.validation import file_fix_action_set
from ..data.datasets import Dataset, load_builtin, load_csv, load_libsvm, load_movielens, normalize
from ..registry import KernelSpec
from ..registry.methods import default_methods
from ..studies.accuracy import PAPER_SPLIT, accuracy_study, check_study, format_table
from ..studies.table1 import TABLE1_KERNELS
from ..studies.table1 import format_tables, run_table1
from ..studies.timing import render_report, time_maps
from . import names
from .options import MAX_SEED, parse_Ds, parse_params, split_of
from .outputs import input_files, provenance_path, sha256, sibling
from .progress import Progress

#: columns holding counts, sizes or seeds: written as (nullable) integers, never "40.0"
INTEGER_COLUMNS = ("D", "d", "n", "trial", "seed", "repeat", "model_size", "n_train", "n_test", "n_pairs",
                   "n_trials", "multiple", "trials")
#: extra tables each command writes beside --out
SIBLING_TABLES = {"timing": (), "table1": (), "accuracy": ("validation",)}


# ----------------------------------------------------------------------------- outputs
def output_paths(args: argparse.Namespace) -> list[Path]:
    """Every file the command will write: --out, its sibling tables and provenance, --raw.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the command.

    Returns
    -------
    list[Path]
        The output files, empty when nothing is written.
    """
    paths = []
    if args.out is not None:
        paths += [args.out, *(sibling(args.out, tag) for tag in SIBLING_TABLES[args.command]),
                  provenance_path(args.out)]
    if getattr(args, "raw", None) is not None:
        paths.append(args.raw)
    return paths


def typed_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Counts, sizes and seeds as integers (nullable Int64 where a value is missing).

    Parameters
    ----------
    df : pandas.DataFrame
        A result table.

    Returns
    -------
    pandas.DataFrame
        A copy with whole-valued float columns of ``INTEGER_COLUMNS`` as Int64.
    """
    out = df.copy()
    for col in INTEGER_COLUMNS:
        if col in out.columns and pd.api.types.is_float_dtype(out[col]):
            values = out[col].dropna()
            if (values == values.round()).all():
                out[col] = out[col].astype("Int64")
    return out


def table_writer(df: pd.DataFrame, suffix: str) -> Callable[[Path], object]:
    """A writer ``(path) -> None`` of ``df`` as CSV or Parquet (by the target's ``suffix``), integers kept.

    Parameters
    ----------
    df : pandas.DataFrame
        The table to write.
    suffix : str
        The target file's suffix: ``.parquet`` writes Parquet, anything else CSV.

    Returns
    -------
    Callable[[Path], None]
        Function writing the table, without index, to the path it is given.
    """
    df = typed_frame(df)
    if suffix.lower() == ".parquet":
        return lambda path: df.to_parquet(path, index=False)
    return lambda path: df.to_csv(path, index=False)


def provenance(command: str, argv: list[str], args: argparse.Namespace, started: float, **extra) -> dict:
    """What produced a result: arguments, versions, seed, input checksums, BLAS and threads, machine, time.

    Parameters
    ----------
    command : str
        The subcommand's name.
    argv : list[str]
        The command-line arguments as given.
    args : argparse.Namespace
        The parsed options.
    started : float
        Start time of the run (``time.time()``).
    **extra
        Further entries added to the record.

    Returns
    -------
    dict
        The provenance record, JSON-serializable.
    """
    import numpy
    import scipy
    import sklearn

    versions = {"rkcore": __version__, "python": platform.python_version(), "numpy": numpy.__version__,
                "scipy": scipy.__version__, "scikit-learn": sklearn.__version__, "pandas": pd.__version__}
    if getattr(args, "scheduler", None):
        import dask
        import distributed

        versions.update({"dask": dask.__version__, "distributed": distributed.__version__})
    arguments = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "run"}
    return {
        "command": f"rkcore {command}",
        "argv": list(argv),
        "arguments": arguments,
        "seed": getattr(args, "seed", None),
        "inputs": {str(p): {"sha256": sha256(p), "bytes": p.stat().st_size}
                   for p in input_files(getattr(args, "data", None))},
        "versions": versions,
        # the thread count changes results in the last digits (summation order): recorded with the library
        "blas": [{k: info.get(k) for k in ("user_api", "internal_api", "version", "num_threads", "filepath",
                                           "threading_layer", "architecture")} for info in threadpool_info()],
        "machine": {"system": platform.system(), "release": platform.release(), "machine": platform.machine(),
                    "processor": platform.processor(), "cpu_count": os.cpu_count(),
                    "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None},
        "started": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(time.time() - started, 3),
        **extra,
    }


# ----------------------------------------------------------------------------- timing
def timing_command(args, progress: Progress, client) -> tuple[dict, dict]:
    """Run ``rkcore timing``: time the maps and print the report.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the command.
    progress : Progress
        Where progress and notes are reported.
    client : distributed.Client or None
        Dask client to run the work on (``--scheduler``), None to run locally.

    Returns
    -------
    tables : dict
        Output tag -> DataFrame (tag "" for ``--out``, others for its sibling tables).
    extra : dict
        Further entries of the provenance record.
    """
    preset = names.FIGURE1 if args.figure1 else names.TIMING_DEFAULTS
    maps = [k for group in (args.maps or [preset["maps"]]) for k in group]
    repeats = args.repeats if args.repeats is not None else (3 if args.figure1 else 5)
    d, D, n = args.d or preset["d"], args.D or preset["D"], args.n or preset["n"]
    if args.seed + repeats - 1 > MAX_SEED:
        raise ValueError(f"--seed {args.seed} + {repeats} repeats exceeds the largest seed {MAX_SEED}.")
    require_memory({"data X": (max(n), max(d)), "features": (max(n), max(D)),
                    "weights": (args.degree, max(d), max(D))}, what="This timing run",
                   hint="Choose smaller --n, --d or --D.")
    progress.section("timing")
    df = time_maps(maps, d, D, n, kernel_degree=args.degree, repeats=repeats, warmup=args.warmup,
                   random_state=args.seed, progress=progress, client=client)
    print(render_report(df, args.degree))
    return {"": df}, {}


# ----------------------------------------------------------------------------- table1
def table1_command(args, progress: Progress, client) -> tuple[dict, dict]:
    """Run ``rkcore table1``: one Table 1 study per kernel on MovieLens 100K, printed as tables.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the command.
    progress : Progress
        Where progress and notes are reported.
    client : distributed.Client or None
        Dask client to run the work on (``--scheduler``), None to run locally.

    Returns
    -------
    tables : dict
        Output tag -> DataFrame (tag "" for ``--out``, others for its sibling tables).
    extra : dict
        Further entries of the provenance record.
    """
    data = load_movielens(args.data, n_samples=args.n, random_state=args.seed if args.sample == "random" else None,
                          sparse=True)
    X = normalize(data.X, "l1")
    progress.note(f"MovieLens 100K: n = {X.shape[0]}, d = {X.shape[1]}, L1-normalized; {args.trials} trials; "
                  f"pairs = {args.pairs}")
    summaries, raws = [], []
    for kernel in args.kernels:  # one progress section per kernel (the paper's sub-tables)
        progress.section(TABLE1_KERNELS[kernel][1])
        summary, raw = run_table1(X, kernels=[kernel], multiples=args.multiples, n_trials=args.trials,
                                  pairs=args.pairs, random_state=args.seed, n_jobs=args.n_jobs,
                                  progress=progress, log=progress.note, client=client)
        summaries.append(summary)
        raws.append(raw)
    summary, raw = pd.concat(summaries, ignore_index=True), pd.concat(raws, ignore_index=True)
    print(f"Table 1 reproduction: MovieLens 100K, n = {X.shape[0]} ({args.sample} rows), L1-normalized, "
          f"{args.trials} trials, pairs = {args.pairs}, seed = {args.seed}")
    print(format_tables(summary))
    tables = {"": summary}
    if args.raw:
        tables["raw"] = raw
    return tables, {"n": int(X.shape[0]), "d": int(X.shape[1])}


# ----------------------------------------------------------------------------- accuracy
def load_data(data: str, target: str | None, n_samples: int | None, seed: int) -> Dataset:
    """The dataset of ``--data``: builtin:KEY, a MovieLens folder, a .csv file or a LIBSVM file.

    Parameters
    ----------
    data : str
        The ``--data`` value.
    target : str or None
        Name of the label column of a .csv file.
    n_samples : int or None
        Rows to sample (builtin and MovieLens data); None for all.
    seed : int
        Random seed of the sampling.

    Returns
    -------
    Dataset
        The loaded data, with ``X``, ``y`` and ``name``.
    """
    if data.startswith("builtin:"):
        return load_builtin(data.split(":", 1)[1], n_samples=n_samples, random_state=seed)
    path = Path(data)
    if path.is_dir():
        return load_movielens(path, n_samples=n_samples, random_state=seed if n_samples else None, sparse=True)
    # the readers' advice in command-line words, and the file named (they name columns and lines)
    with file_fix_action_set("run the command again"):
        try:
            return load_csv(path, target=target) if path.suffix.lower() == ".csv" else load_libsvm(path)
        except ValueError as err:
            raise ValueError(f"--data {data}: {err}") from None


def _accuracy_plan(args, d: int, n: int) -> dict:
    """Kernel, methods, D values, split and overrides of the study, all checked before any fit."""
    kernel = KernelSpec(args.kernel, degree=args.degree)
    if args.methods:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    else:
        methods = default_methods(kernel)
    Ds = parse_Ds(args.D, d)
    split = split_of(n, args.n_train, args.n_val, args.n_test, PAPER_SPLIT)
    params = parse_params(args.param)
    check_study(methods, kernel, d, Ds, params)
    n_rows = n if split == PAPER_SPLIT or max(split) < 1 else min(n, sum(int(p) for p in split if p >= 1))
    require_memory({"random features": (n_rows, max(Ds)), "exact Gram": (n_rows, n_rows)},
                   what="This study", hint="Choose smaller --D or fewer rows (--n-samples, --n-train).")
    return {"kernel": kernel, "methods": methods, "Ds": Ds, "split": split, "params": params}


def accuracy_command(args, progress: Progress, client) -> tuple[dict, dict]:
    """Run ``rkcore accuracy``: the accuracy study on ``--data``, printed with its validation table.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options of the command.
    progress : Progress
        Where progress and notes are reported.
    client : distributed.Client or None
        Dask client to run the work on (``--scheduler``), None to run locally.

    Returns
    -------
    tables : dict
        Output tag -> DataFrame (tag "" for ``--out``, others for its sibling tables).
    extra : dict
        Further entries of the provenance record.
    """
    data = load_data(args.data, args.target, args.n_samples, args.seed)
    X = normalize(data.X, args.normalize)
    plan = _accuracy_plan(args, X.shape[1], X.shape[0])
    kernel = plan["kernel"]
    progress.section("accuracy study")
    with threadpool_limits(args.blas_threads):
        df = accuracy_study((X, data.y), plan["methods"], plan["Ds"], args.trials, kernel=kernel,
                            split=plan["split"], C_grid=args.C_grid, shared_C=not args.per_method_C,
                            select_by=args.select_by, method_params=plan["params"], random_state=args.seed,
                            progress=progress.counts, stratify=not args.no_stratify, client=client)
    sizes = df.attrs["split"]
    print(f"{data.name}: d = {X.shape[1]}, train/val/test = {sizes['n_train']}/{sizes['n_val']}/{sizes['n_test']} "
          f"({'stratified' if sizes['stratified'] else 'random'}), kernel = {kernel.label()}, "
          f"normalization = {args.normalize}; majority-class test accuracy = {sizes['majority_accuracy']:.4f}")
    validation = pd.DataFrame(df.attrs["validation"])
    if not validation.empty:
        print(f"validation {args.select_by.replace('_', ' ')} by C:")
        print(validation.pivot_table(index=["selection", "kernel", "D"], columns="C", values=f"val_{args.select_by}",
                                     dropna=False).to_string())
    print(format_table(df))
    return {"": df, "validation": validation}, {"split": sizes, "dataset": data.name}


RUNS = {"timing": timing_command, "table1": table1_command, "accuracy": accuracy_command}
