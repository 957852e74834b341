"""The options of ``rkcore timing``, ``rkcore table1`` and ``rkcore accuracy``: help, defaults, bounds.

Standard library only, so that ``--help`` answers at once; the work is in :mod:`rkcore.cli.runs`.
"""
from __future__ import annotations

import argparse

from . import names
from .options import (
    MAX_SEED,
    MAX_SIZE,
    C_list,
    bounded_int,
    choice,
    map_list,
    multiple_list,
    html_path,
    output_path,
    split_part,
    table1_kernel_list,
)

#: bounds of the options (the run checks memory once the data's shape is known)
MAX_TRIALS = 10_000
MAX_REPEATS = 1_000
MAX_DIMENSION = 10**6  # d and D of the timing study
MAX_DEGREE = 20
MAX_WORKERS = 256
DEFAULT_DUEL_N, MAX_DUEL_N = 8_000, 20_000  # the story's duel: the dashboard's n unless told


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):  # numpydoc ignore=PR02
    """Defaults shown after each option's help; the examples in the epilog kept as written.

    Flags (default False), options whose help already says its default, and lists are shown as typed
    (``0.1,1,10``), not as Python values; "(default: None)" is left out (the help says what None means).

    Parameters
    ----------
    prog : str
        The program name shown in the usage line.
    indent_increment : int, default 2
        Spaces added per nesting level.
    max_help_position : int, default 24
        Column at which option help starts at most.
    width : int or None, default None
        Line width; None takes the terminal's width less 2.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        names = getattr(action, "names", None)
        if callable(names):  # the registry's names, asked only when help is printed
            text = text.replace("%(names)s", ", ".join(names()).replace("%", "%%"))
        default = action.default
        shown = not (default is None or default is False or default == [] or default == argparse.SUPPRESS)
        if not shown or "default" in text or not action.option_strings:
            return text
        if isinstance(default, (list, tuple)):
            return f"{text} (default: {','.join(f'{v:g}' if isinstance(v, float) else str(v) for v in default)})"
        return f"{text} (default: %(default)s)"


def _datasets_text() -> str:
    return "\n".join(f"  builtin:{key:<14} {text}" for key, text in names.BUILTIN_DATASETS.items())


def _add_common(p: argparse.ArgumentParser, seed_help: str = "random seed") -> None:
    p.add_argument("--seed", type=bounded_int(0, MAX_SEED), default=0, help=seed_help + f" (0 to {MAX_SEED})")
    p.add_argument("--out", type=output_path, default=None, metavar="FILE",
                   help="write results to this .csv or .parquet file, with FILE.provenance.json beside it "
                        "(arguments, versions, input checksums, BLAS library and threads); never an input file")
    p.add_argument("--overwrite", action="store_true",
                   help="replace output files that exist (a symlink is replaced, not written through)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="run on a Dask cluster: tcp://HOST:8786, or 'local' for one on this machine")
    p.add_argument("--quiet", action="store_true",
                   help="nothing on stderr but errors: no progress, notes or warnings (results still on stdout)")


def add_timing(sub) -> None:
    """``rkcore timing``: mapping time of the random feature maps (paper Figure 1).

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``rkcore`` parser, to which the command is added.
    """
    fig = names.FIGURE1
    default = names.TIMING_DEFAULTS
    p = sub.add_parser(
        "timing", help="mapping time of the random feature maps (paper Figure 1)", formatter_class=HelpFormatter,
        description="Time fit/transform of random feature maps on N(0,1) data (paper Figure 1 with --figure1).",
        epilog="examples:\n  rkcore timing --figure1 --out figure1.csv\n"
               "  rkcore timing --maps rk,scrk --d 256 512 --D 1024 --n 200 --repeats 3")
    p.add_argument("--figure1", action="store_true",
                   help=f"paper Figure 1: ANOVA m=2, D={fig['D'][0]}, d in {fig['d'][0]}..{fig['d'][-1]}, "
                        f"n={fig['n'][0]}, maps {' '.join(fig['maps'])}")
    p.add_argument("--maps", nargs="+", type=map_list,
                   help=f"map keys out of %(names)s (commas also work); "
                        f"default {','.join(default['maps'])}, or Figure 1's").names = names.map_keys
    p.add_argument("--d", nargs="+", type=bounded_int(1, MAX_DIMENSION),
                   help=f"input dimensions d; default {' '.join(map(str, default['d']))}, or Figure 1's")
    p.add_argument("--D", nargs="+", type=bounded_int(1, MAX_DIMENSION),
                   help=f"numbers of random features D; default {default['D'][0]}, or Figure 1's")
    p.add_argument("--n", nargs="+", type=bounded_int(1, MAX_SIZE),
                   help=f"numbers of samples n; default {default['n'][0]}, or Figure 1's")
    p.add_argument("--degree", type=bounded_int(1, MAX_DEGREE), default=2, help="kernel degree m")
    p.add_argument("--repeats", type=bounded_int(1, MAX_REPEATS), default=None,
                   help="timed repeats per cell; default 3 with --figure1, else 5")
    p.add_argument("--warmup", type=bounded_int(0, MAX_REPEATS), default=1, help="untimed runs first")
    _add_common(p)
    p.set_defaults(run="timing")


def add_table1(sub) -> None:
    """``rkcore table1``: approximation errors on MovieLens 100K (paper Table 1).

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``rkcore`` parser, to which the command is added.
    """
    p = sub.add_parser(
        "table1", help="approximation errors on MovieLens 100K (paper Table 1)", formatter_class=HelpFormatter,
        description="Reproduce Table 1 (approximation errors on MovieLens 100K).",
        epilog="example:\n  rkcore table1 --data ml-100k --n 3000 --trials 10 --pairs nonzero --out table1.csv\n\n"
               "MovieLens 100K: https://grouplens.org/datasets/movielens/100k/ (unzip; give the folder)")
    p.add_argument("--data", required=True, help="folder with the MovieLens 100K files u.data, u.user, u.item")
    p.add_argument("--n", type=bounded_int(2, 100_000), default=10_000,
                   help="number of rating rows (paper: 10,000)")
    p.add_argument("--trials", type=bounded_int(1, MAX_TRIALS), default=100,
                   help="independent maps per cell (paper: 100)")
    p.add_argument("--pairs", choices=("nonzero_float", "nonzero", "all"), default="nonzero_float",
                   help="nonzero_float: pairs where the paper's floating-point formula is != 0.0 "
                        "(implementation-dependent; matches the paper); nonzero: the exact support "
                        "(pairs sharing an itemset); all: every pair")
    p.add_argument("--sample", choices=("first", "random"), default="first",
                   help="first n rows of u.data, or a subsample seeded by --seed")
    p.add_argument("--kernels", type=table1_kernel_list, default=list(names.TABLE1_KERNELS),
                   help="comma-separated, out of " + ",".join(names.TABLE1_KERNELS))
    p.add_argument("--multiples", type=multiple_list, default=list(names.TABLE1_MULTIPLES),
                   help="D as multiples of d, comma-separated")
    p.add_argument("--n-jobs", type=bounded_int(1, MAX_WORKERS), default=1,
                   help="joblib workers over trials (without --scheduler)")
    p.add_argument("--raw", type=output_path, default=None, metavar="FILE",
                   help="also write the per-trial tidy results here")
    _add_common(p, "study seed")
    p.set_defaults(run="table1")


def add_accuracy(sub) -> None:
    """``rkcore accuracy``: classifier accuracy and time (paper Figures 2 and 3).

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``rkcore`` parser, to which the command is added.
    """
    p = sub.add_parser(
        "accuracy", help="classifier accuracy and time (paper Figures 2 and 3)", formatter_class=HelpFormatter,
        description="Accuracy and train/test time of kernel SVMs, FMs and linear models on random features "
                    "(Atarashi et al., AAAI-19, Figures 2 and 3).",
        epilog="built-in datasets (--data builtin:KEY):\n" + _datasets_text() + "\n\nexamples:\n"
               "  rkcore accuracy --data builtin:interactions --methods kernel_svm,rk,scrk --D 2d,8d --trials 3\n"
               "  rkcore accuracy --data my.csv --target label --n-train 0.6 --n-val 0.2 --n-test 0.2 "
               "--out results.csv\n"
               "  rkcore accuracy --data ml-100k --kernel anova --degree 3 --param fm.max_iter=100")
    p.add_argument("--data", required=True,
                   help="builtin:KEY (listed below), a MovieLens 100K folder, a .csv file (with --target) "
                        "or a LIBSVM file")
    p.add_argument("--target", default=None, help="label column of a CSV file")
    p.add_argument("--n-samples", type=bounded_int(2, MAX_SIZE), default=None,
                   help="load only this many rows (a seeded subsample; synthetic sets: generate this many)")
    p.add_argument("--normalize", default="l1", choices=names.NORMALIZATIONS, help="row normalization (paper: l1)")
    p.add_argument("--kernel", default="anova", type=choice(names.accuracy_kernels, "kernel"),
                   help="study kernel: %(names)s").names = names.accuracy_kernels
    p.add_argument("--degree", type=bounded_int(1, MAX_DEGREE), default=2, help="kernel degree m")
    p.add_argument("--D", default="2d,4d,8d,16d",
                   help="numbers of random features, comma-separated: counts (156,312) or multiples of d (2d,16d)")
    p.add_argument("--trials", type=bounded_int(1, MAX_TRIALS), default=3,
                   help="seeds per randomized method and D (the exact SVMs run once)")
    p.add_argument("--methods", default=None,
                   help="comma-separated, out of %(names)s; default kernel_svm,fm,rk,scrk "
                        "for ANOVA, else kernel_svm,rk").names = names.method_keys
    for part, share in (("train", 0.5), ("val", 0.1), ("test", 0.4)):
        p.add_argument(f"--n-{part}", type=split_part, default=None,
                       help=f"{part} part: a count, or a fraction of the rows in (0, 1); default: the paper's "
                            f"MovieLens counts (21200/1000/20202) when the data are large enough, else {share}")
    p.add_argument("--no-stratify", action="store_true", help="plain random split (default: stratified by label)")
    p.add_argument("--C-grid", type=C_list, default=list(names.DEFAULT_C_GRID),
                   help="candidate regularization values C, comma-separated, validated on the validation part")
    p.add_argument("--per-method-C", action="store_true", help="validate C per method instead of sharing the SVM's")
    p.add_argument("--select-by", default="accuracy", choices=names.SELECTION_METRICS,
                   help="validation score that picks C (paper: accuracy)")
    p.add_argument("--param", action="append", default=[], metavar="METHOD.PARAM=VALUE",
                   help="estimator override, repeatable, e.g. fm.max_iter=100 or rk.clf__max_iter=2000")
    p.add_argument("--blas-threads", type=bounded_int(1, MAX_WORKERS), default=None,
                   help="limit BLAS threads for every method (steadier timings on a shared machine); "
                        "default: the BLAS library's own")
    _add_common(p)
    p.set_defaults(run="accuracy")


def add_export_story(sub) -> None:
    """``rkcore export-story --out FILE.html``: the dashboard's five-screen story as one offline HTML file.

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subparsers of the ``rkcore`` parser, to which the command is added.
    """
    p = sub.add_parser(
        "export-story", help="the five-screen story as one offline HTML file", formatter_class=HelpFormatter,
        description="Compute the dashboard's five-screen story now and write it as a single self-contained HTML "
                    "file (interactive charts with plotly.js inlined, the sentences, the settings, the rkcore "
                    "version; it opens without a network).",
        epilog="example:\n  rkcore export-story --out lesson.html --duel-n 2000")
    p.add_argument("--out", type=html_path, required=True, metavar="FILE.html",
                   help="the .html file to write (its folder must exist)")
    p.add_argument("--duel-n", type=bounded_int(200, MAX_DUEL_N), default=DEFAULT_DUEL_N,
                   help=f"points of step 5's classifier duel (200 to {MAX_DUEL_N})")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the file if it exists (a symlink is replaced, not written through)")
    p.add_argument("--quiet", action="store_true", help="nothing on stderr but errors")
    p.set_defaults(scheduler=None, data=None)


COMMANDS = {"timing": add_timing, "table1": add_table1, "accuracy": add_accuracy, "export-story": add_export_story}
