"""The ``rkcore`` command: paper studies from the shell.

``rkcore timing`` (Figure 1), ``rkcore table1`` (Table 1) and ``rkcore accuracy`` (Figures 2
and 3); ``rkcore --version``. Every argument is checked before any work starts (exit code 2
with a one-line message); a choice that cannot work is never offered. Progress goes to
stderr: a bar on a terminal, plain lines otherwise, nothing with ``--quiet``. Results are
written with ``--out FILE.csv`` or ``FILE.parquet`` (integer columns stay integers), and a
provenance record ``FILE.provenance.json`` beside them: arguments, versions, seed,
machine, start and end time. ``--scheduler ADDRESS`` runs the study on a Dask cluster
(``local`` starts one on this machine). ``python -m rkcore`` is the same command.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pandas as pd

from . import __version__
from .registry import KERNELS, MAPS

EXIT_OK, EXIT_USAGE = 0, 2
OUTPUT_SUFFIXES = (".csv", ".parquet")
#: columns holding counts, sizes or seeds: written as (nullable) integers, never "40.0"
INTEGER_COLUMNS = ("D", "d", "n", "trial", "seed", "repeat", "model_size", "n_train", "n_test", "n_pairs",
                   "n_trials", "multiple", "trials")


# ----------------------------------------------------------------------------- argument types
def _int_at_least(minimum: int, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= {minimum}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {value}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (no silent replacement of 0 by a default)."""
    return _int_at_least(1, text)


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    return _int_at_least(0, text)


def output_path(text: str) -> Path:
    """argparse type: a .csv or .parquet file in an existing folder."""
    path = Path(text)
    if path.suffix.lower() not in OUTPUT_SUFFIXES:
        raise argparse.ArgumentTypeError(f"output file must end in {' or '.join(OUTPUT_SUFFIXES)}, got {text!r}")
    if not path.parent.is_dir():
        raise argparse.ArgumentTypeError(f"folder {str(path.parent)!r} of the output file does not exist")
    if path.suffix.lower() == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise argparse.ArgumentTypeError("Parquet output needs pyarrow: pip install 'rkcore[parquet]'") from None
    return path


def map_list(text: str) -> list[str]:
    """argparse type: comma-separated keys of rkcore.registry.MAPS."""
    keys = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in keys if k not in MAPS]
    if not keys or unknown:
        raise argparse.ArgumentTypeError(f"Unknown map {', '.join(map(repr, unknown)) or repr(text)}; "
                                         f"allowed: {', '.join(MAPS)}")
    return keys


# ----------------------------------------------------------------------------- progress
class Progress:
    """One progress style for every command: a bar on a terminal, plain lines otherwise.

    Plain lines are written at most every 10% (and at the end), so a log stays short.
    """

    def __init__(self, quiet: bool = False, stream=None):
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = -1.0

    def __call__(self, fraction: float, message: str) -> None:
        if self.quiet:
            return
        fraction = min(max(float(fraction), 0.0), 1.0)
        if self.tty:
            filled = int(round(30 * fraction))
            end = "\n" if fraction >= 1.0 else ""
            self.stream.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {fraction:6.1%} {message[:60]:<60}{end}")
        elif fraction >= 1.0 or fraction - self._last >= 0.1:
            self.stream.write(f"[{fraction:6.1%}] {message}\n")
        else:
            return
        self._last = fraction
        self.stream.flush()

    def counts(self, done: int, total: int, message: str) -> None:
        """Adapter for engines reporting (done, total, message)."""
        self(done / total if total else 1.0, message)

    def note(self, message: str) -> None:
        """A one-off status line (not a fraction)."""
        if not self.quiet:
            self.stream.write(("\n" if self.tty and 0.0 <= self._last < 1.0 else "") + message + "\n")
            self.stream.flush()


# ----------------------------------------------------------------------------- outputs
def typed_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Counts, sizes and seeds as integers (nullable Int64 where a value is missing)."""
    out = df.copy()
    for col in INTEGER_COLUMNS:
        if col in out.columns and pd.api.types.is_float_dtype(out[col]):
            values = out[col].dropna()
            if (values == values.round()).all():
                out[col] = out[col].astype("Int64")
    return out


def write_table(df: pd.DataFrame, path: Path) -> Path:
    """Write ``df`` as CSV or Parquet (by suffix), integer columns kept integer."""
    df = typed_frame(df)
    if path.suffix.lower() == ".parquet":
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    return path


def sibling(path: Path, tag: str) -> Path:
    """``results.csv`` -> ``results.<tag>.csv`` (same format)."""
    return path.with_name(f"{path.stem}.{tag}{path.suffix}")


def provenance(command: str, argv: list[str], args: argparse.Namespace, started: float, **extra) -> dict:
    """What produced a result: arguments, versions, seed, machine, time."""
    import numpy
    import scipy
    import sklearn

    versions = {"rkcore": __version__, "python": platform.python_version(), "numpy": numpy.__version__,
                "scipy": scipy.__version__, "scikit-learn": sklearn.__version__, "pandas": pd.__version__}
    if getattr(args, "scheduler", None):
        import dask
        import distributed

        versions.update({"dask": dask.__version__, "distributed": distributed.__version__})
    arguments = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "handler"}
    return {
        "command": f"rkcore {command}",
        "argv": list(argv),
        "arguments": arguments,
        "seed": getattr(args, "seed", None),
        "versions": versions,
        "machine": {"system": platform.system(), "release": platform.release(), "machine": platform.machine(),
                    "processor": platform.processor(), "cpu_count": os.cpu_count(),
                    "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None},
        "started": datetime.fromtimestamp(started, timezone.utc).isoformat(timespec="seconds"),
        "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "seconds": round(time.time() - started, 3),
        **extra,
    }


def write_provenance(path: Path, record: dict) -> Path:
    target = path.with_name(f"{path.stem}.provenance.json")
    target.write_text(json.dumps(record, indent=2, default=str) + "\n")
    return target


def _common(p: argparse.ArgumentParser, seed_help: str = "random seed") -> None:
    p.add_argument("--seed", type=non_negative_int, default=0, help=seed_help)
    p.add_argument("--out", type=output_path, default=None,
                   help="write results to this .csv or .parquet file (+ FILE.provenance.json)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run on a Dask cluster: tcp://HOST:8786, or 'local' for one on this machine")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


# ----------------------------------------------------------------------------- timing
def _add_timing(sub) -> None:
    from .studies.timing import FIGURE1

    p = sub.add_parser("timing", help="mapping time of the random feature maps (paper Figure 1)",
                       description="Time fit/transform of random feature maps on N(0,1) data "
                                   "(paper Figure 1 with --figure1).")
    p.add_argument("--figure1", action="store_true",
                   help=f"paper Figure 1: ANOVA m=2, D={FIGURE1['D'][0]}, d in 512..4096, n=1000, maps rk scrk ts rm")
    p.add_argument("--maps", nargs="+", type=map_list, help=f"map keys ({', '.join(MAPS)}); commas also work")
    p.add_argument("--d", nargs="+", type=positive_int, help="input dimensions d")
    p.add_argument("--D", nargs="+", type=positive_int, help="numbers of random features D")
    p.add_argument("--n", nargs="+", type=positive_int, help="numbers of samples n")
    p.add_argument("--degree", type=positive_int, default=2, help="kernel degree m (default 2)")
    p.add_argument("--repeats", type=positive_int, default=None, help="timed repeats (default 3 with --figure1, else 5)")
    p.add_argument("--warmup", type=non_negative_int, default=1, help="untimed runs first (default 1)")
    _common(p)
    p.set_defaults(handler=_run_timing)


def _run_timing(args, progress: Progress, client) -> tuple[dict, dict]:
    from .studies.timing import FIGURE1, render_report, time_maps

    preset = FIGURE1 if args.figure1 else {"maps": ["rk", "scrk"], "d": [128, 256, 512], "D": [2048], "n": [500]}
    maps = [k for group in (args.maps or [preset["maps"]]) for k in group]
    repeats = args.repeats if args.repeats is not None else (3 if args.figure1 else 5)
    df = time_maps(maps, args.d or preset["d"], args.D or preset["D"], args.n or preset["n"],
                   kernel_degree=args.degree, repeats=repeats, warmup=args.warmup, random_state=args.seed,
                   progress=progress, client=client)
    print(render_report(df, args.degree))
    return {"": df}, {}


# ----------------------------------------------------------------------------- table1
def _add_table1(sub) -> None:
    from .studies.table1 import KERNELS as TABLE1_KERNELS
    from .studies.table1 import MULTIPLES, _int_list, _kernel_list

    p = sub.add_parser("table1", help="approximation errors on MovieLens 100K (paper Table 1)",
                       description="Reproduce Table 1 (approximation errors on MovieLens 100K).")
    p.add_argument("--data", required=True, help="folder with the MovieLens 100K files u.data, u.user, u.item")
    p.add_argument("--n", type=positive_int, default=10_000, help="number of rating rows (paper: 10,000)")
    p.add_argument("--trials", type=positive_int, default=100, help="independent maps per cell (paper: 100)")
    p.add_argument("--pairs", choices=("nonzero_float", "nonzero", "all"), default="nonzero_float",
                   help="nonzero_float: pairs where the paper's floating-point formula is != 0.0 "
                        "(implementation-dependent; matches the paper); nonzero: the exact support "
                        "(pairs sharing an itemset); all: every pair")
    p.add_argument("--sample", choices=("first", "random"), default="first",
                   help="first n rows of u.data, or a subsample seeded by --seed")
    p.add_argument("--kernels", type=_kernel_list, default=list(TABLE1_KERNELS),
                   help="comma-separated: " + ",".join(TABLE1_KERNELS))
    p.add_argument("--multiples", type=_int_list, default=list(MULTIPLES), help="D as multiples of d (default 2,4,8,16)")
    p.add_argument("--n-jobs", type=positive_int, default=1, help="joblib workers over trials (without --scheduler)")
    p.add_argument("--raw", type=output_path, default=None, help="also write the per-trial tidy results here")
    _common(p, "study seed")
    p.set_defaults(handler=_run_table1)


def _run_table1(args, progress: Progress, client) -> tuple[dict, dict]:
    from .data.datasets import load_movielens, normalize
    from .studies.table1 import format_tables, run_table1

    data = load_movielens(args.data, n_samples=args.n, random_state=args.seed if args.sample == "random" else None,
                          sparse=True)
    X = normalize(data.X, "l1")
    progress.note(f"MovieLens 100K: n = {X.shape[0]}, d = {X.shape[1]}, L1-normalized; {args.trials} trials; "
                  f"pairs = {args.pairs}")
    summary, raw = run_table1(X, kernels=args.kernels, multiples=args.multiples, n_trials=args.trials,
                              pairs=args.pairs, random_state=args.seed, n_jobs=args.n_jobs,
                              progress=progress, log=progress.note, client=client)
    print(f"Table 1 reproduction: MovieLens 100K, n = {X.shape[0]} ({args.sample} rows), L1-normalized, "
          f"{args.trials} trials, pairs = {args.pairs}, seed = {args.seed}")
    print(format_tables(summary))
    if args.raw:
        write_table(raw, args.raw)
    return {"": summary}, {"n": int(X.shape[0]), "d": int(X.shape[1])}


# ----------------------------------------------------------------------------- accuracy
#: study kernels the default methods can all use: random kernel features exist and no
#: extra parameter (an itemset family) is needed
ACCURACY_KERNELS = tuple(k for k in KERNELS if k in MAPS["rk"].kernels and k != "itemset")


def _add_accuracy(sub) -> None:
    from .studies.accuracy import DEFAULT_C_GRID, METHODS, SELECTION_METRICS

    p = sub.add_parser("accuracy", help="classifier accuracy and time (paper Figures 2 and 3)",
                       description="Accuracy and train/test time of kernel SVMs, FMs and linear models on random "
                                   "features (Atarashi et al., AAAI-19, Figures 2 and 3).")
    p.add_argument("--data", required=True, help="builtin:KEY, a MovieLens 100K folder, a .csv or a LIBSVM file")
    p.add_argument("--target", default=None, help="label column of a CSV file")
    p.add_argument("--n-samples", type=positive_int, default=None, help="load only this many rows (seeded subsample)")
    p.add_argument("--normalize", default="l1", choices=["l1", "l2", "none"], help="row normalization (paper: l1)")
    p.add_argument("--kernel", default="anova", choices=ACCURACY_KERNELS, help="study kernel")
    p.add_argument("--degree", type=positive_int, default=2)
    p.add_argument("--D", default="2d,4d,8d,16d", help="numbers of random features, e.g. 156,312 or 2d,16d")
    p.add_argument("--trials", type=positive_int, default=3)
    p.add_argument("--methods", default=None, help=f"comma-separated keys of {', '.join(METHODS)}")
    p.add_argument("--n-train", type=float, default=None)
    p.add_argument("--n-val", type=float, default=None)
    p.add_argument("--n-test", type=float, default=None)
    p.add_argument("--no-stratify", action="store_true", help="plain random split (default: stratified by label)")
    p.add_argument("--C-grid", default=",".join(f"{c:g}" for c in DEFAULT_C_GRID))
    p.add_argument("--per-method-C", action="store_true", help="validate C per method instead of sharing the SVM's")
    p.add_argument("--select-by", default="accuracy", choices=SELECTION_METRICS,
                   help="validation score that picks C (paper: accuracy)")
    p.add_argument("--param", action="append", default=[], help="METHOD.PARAM=VALUE estimator override (repeatable)")
    p.add_argument("--blas-threads", type=positive_int, default=None,
                   help="limit BLAS threads for every method (steadier timings on a shared machine)")
    _common(p)
    p.set_defaults(handler=_run_accuracy)


def _run_accuracy(args, progress: Progress, client) -> tuple[dict, dict]:
    from threadpoolctl import threadpool_limits

    from .studies.accuracy import (
        _load,
        _parse_Ds,
        _parse_params,
        _parse_split,
        accuracy_study,
        check_study,
        format_table,
        split_sizes,
    )
    from .data.datasets import normalize
    from .registry import KernelSpec

    data = _load(args.data, args.target, args.n_samples, args.seed)
    X = normalize(data.X, args.normalize)
    kernel = KernelSpec(args.kernel, degree=args.degree)
    if args.methods:
        methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    else:
        methods = ["kernel_svm", "fm", "rk", "scrk"] if args.kernel == "anova" else ["kernel_svm", "rk"]
    Ds = _parse_Ds(args.D, X.shape[1])
    split = _parse_split(X.shape[0], args.n_train, args.n_val, args.n_test)
    split_sizes(X.shape[0], split)
    try:
        C_grid = [float(c) for c in args.C_grid.split(",") if c.strip()]
    except ValueError:
        raise ValueError(f"--C-grid must be comma-separated numbers; got {args.C_grid!r}.") from None
    params = _parse_params(args.param)
    check_study(methods, kernel, X.shape[1], Ds, params)  # everything that can fail, before any fit
    with threadpool_limits(args.blas_threads):
        df = accuracy_study((X, data.y), methods, Ds, args.trials, kernel=kernel, split=split, C_grid=C_grid,
                            shared_C=not args.per_method_C, select_by=args.select_by, method_params=params,
                            random_state=args.seed, progress=progress.counts, stratify=not args.no_stratify,
                            client=client)
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


# ----------------------------------------------------------------------------- entry point
COMMANDS: dict[str, Callable] = {"timing": _add_timing, "table1": _add_table1, "accuracy": _add_accuracy}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rkcore", description="Random feature maps for the itemset kernel "
                                     "(Atarashi, Maji & Oyama, AAAI-19): the paper's studies.")
    parser.add_argument("--version", action="version", version=f"rkcore {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{timing,table1,accuracy}")
    for add in COMMANDS.values():
        add(sub)
    from .figures.export import add_export_story  # the offline lesson (its own module)

    add_export_story(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``rkcore COMMAND [options]``; returns the exit code (0 ok, 2 bad arguments or input)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help / --version (0) or a usage error (2, message already printed)
        return int(exc.code or 0)
    if args.command == "export-story":
        from .figures.export import run_export_story

        return run_export_story(args)
    progress = Progress(quiet=args.quiet)
    started = time.time()
    client = None
    try:
        if args.scheduler:
            from .studies.distributed import connect

            client = connect(args.scheduler)
            progress.note(f"Dask scheduler: {client.scheduler.address} ({len(client.scheduler_info()['workers'])} "
                          f"worker(s))")
        tables, extra = args.handler(args, progress, client)
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"rkcore {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if client is not None:
            from .studies.distributed import close

            close(client)
    if args.out:
        written = [str(write_table(df, args.out if not tag else sibling(args.out, tag)))
                   for tag, df in tables.items()]
        record = provenance(args.command, argv, args, started, outputs=written, **extra)
        written.append(str(write_provenance(args.out, record)))
        print("wrote " + ", ".join(written))
    return EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
