"""Argument types of the ``rkcore`` command: every number bounded, every list checked, one-line errors.

Each type raises ``argparse.ArgumentTypeError`` (argparse prints ``rkcore CMD: error: argument
--X: ...`` and exits with code 2) before any work starts. The bounds keep every size that a user
types below what would allocate without limit or run for days; a whole-run memory check follows
in the commands, once the data's shape is known. Standard library only (see :mod:`rkcore.cli.names`).
"""
from __future__ import annotations

import argparse
import ast
import math
from pathlib import Path
from typing import Callable, Sequence

from .names import TABLE1_KERNELS, map_keys

#: numpy and scikit-learn take 32-bit seeds
MAX_SEED = 2**32 - 1
#: the largest count or size any option accepts: rows, features, random features
MAX_SIZE = 10**7
OUTPUT_SUFFIXES = (".csv", ".parquet")


def bounded_int(low: int, high: int) -> Callable[[str], int]:
    """argparse type: an integer in [low, high] (``1e3`` and ``2**40`` are refused, not guessed).

    Parameters
    ----------
    low, high : int
        Smallest and largest accepted value (both included).

    Returns
    -------
    Callable[[str], int]
        Parser of one argument text; raises ``argparse.ArgumentTypeError`` outside the bounds.
    """

    def parse(text: str) -> int:  # numpydoc ignore=GL08
        try:
            value = int(text.strip().replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer from {low} to {high}, got {text[:40]!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be an integer from {low} to {high}, got {_short(value)}")
        return value

    parse.__name__ = f"integer in [{low}, {high}]"  # argparse names the type in some messages
    return parse


def bounded_float(low: float, high: float, *, open_low: bool = True) -> Callable[[str], float]:
    """argparse type: a finite number in (low, high] (or [low, high] with ``open_low=False``).

    Parameters
    ----------
    low, high : float
        Lower and upper bound of the accepted values.
    open_low : bool, default True
        Whether ``low`` itself is refused.

    Returns
    -------
    Callable[[str], float]
        Parser of one argument text; raises ``argparse.ArgumentTypeError`` outside the bounds.
    """

    def parse(text: str) -> float:  # numpydoc ignore=GL08
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text[:40]!r}") from None
        if not math.isfinite(value) or value > high or value < low or (open_low and value == low):
            raise argparse.ArgumentTypeError(f"must be a finite number {'>' if open_low else '>='} {low:g} and "
                                             f"<= {high:g}, got {text[:40]!r}")
        return value

    parse.__name__ = "number"
    return parse


def _short(value) -> str:
    text = str(value)
    return text if len(text) <= 30 else f"{text[:12]}...({len(text)} digits)"


def split_part(text: str) -> float | int:
    """argparse type of --n-train/--n-val/--n-test: a fraction in (0, 1) or a whole count 1..MAX_SIZE.

    Parameters
    ----------
    text : str
        The argument as typed.

    Returns
    -------
    float or int
        A fraction below 1, or a whole count.
    """
    value = bounded_float(0.0, float(MAX_SIZE))(text)
    if value >= 1:
        if value != int(value):
            raise argparse.ArgumentTypeError(f"a count must be a whole number, got {text[:40]!r}")
        return int(value)
    return value


def comma_list(item: Callable[[str], object], what: str, *, max_items: int = 64) -> Callable[[str], list]:
    """argparse type: comma-separated items, each parsed by ``item``; at least one, at most ``max_items``.

    Parameters
    ----------
    item : Callable[[str], object]
        Parser of one item.
    what : str
        Plural name of the items, used in error messages and as the parser's name.
    max_items : int, default 64
        Most items accepted.

    Returns
    -------
    Callable[[str], list]
        Parser of the whole argument text into the list of parsed items.
    """

    def parse(text: str) -> list:  # numpydoc ignore=GL08
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(f"expected comma-separated {what}, got {text[:40]!r}")
        if len(parts) > max_items:
            raise argparse.ArgumentTypeError(f"at most {max_items} {what}, got {len(parts)}")
        return [item(p) for p in parts]

    parse.__name__ = what
    return parse


def choice(allowed: Sequence[str] | Callable[[], Sequence[str]], what: str) -> Callable[[str], str]:
    """argparse type: one key out of ``allowed``; a callable is asked when the argument is parsed (the
    registry's names: a map registered at run time is accepted, and ``--help`` imports nothing).

    Parameters
    ----------
    allowed : Sequence[str] or callable
        The accepted keys, or a function returning them.
    what : str
        Singular name of a key, used in error messages.

    Returns
    -------
    Callable[[str], str]
        Parser of the argument text into the key.
    """

    def key(text: str) -> str:  # numpydoc ignore=GL08
        keys = allowed() if callable(allowed) else allowed
        if text not in keys:
            raise argparse.ArgumentTypeError(f"unknown {what} {text[:40]!r}; allowed: {', '.join(keys)}")
        return text

    key.__name__ = what
    return key


def choice_list(allowed: Sequence[str] | Callable[[], Sequence[str]], what: str) -> Callable[[str], list[str]]:
    """argparse type: comma-separated keys out of ``allowed`` (a callable is asked when the argument is parsed).

    Parameters
    ----------
    allowed : Sequence[str] or callable
        The accepted keys, or a function returning them.
    what : str
        Singular name of a key, used in error messages.

    Returns
    -------
    Callable[[str], list[str]]
        Parser of the argument text into the list of keys.
    """
    return comma_list(choice(allowed, what), f"{what}s")


map_list = choice_list(map_keys, "map")
table1_kernel_list = choice_list(TABLE1_KERNELS, "kernel")
multiple_list = comma_list(bounded_int(1, 1024), "multiples of d")
C_list = comma_list(bounded_float(0.0, 1e12), "values of C", max_items=50)
_LIST_DOC = """argparse type: comma-separated {what}.

Parameters
----------
text : str
    The argument as typed.

Returns
-------
list
    The parsed {what}.
"""
map_list.__doc__ = _LIST_DOC.format(what="map keys (see ``names.map_keys``)")
table1_kernel_list.__doc__ = _LIST_DOC.format(what="Table 1 kernel keys (see ``TABLE1_KERNELS``)")
multiple_list.__doc__ = _LIST_DOC.format(what="multiples of d, integers from 1 to 1024")
C_list.__doc__ = _LIST_DOC.format(what="values of C, numbers in (0, 1e12], at most 50")


def output_path(text: str) -> Path:
    """argparse type: a .csv or .parquet file name (whether it may be written is checked by
    :func:`rkcore.cli.outputs.check_outputs`, once every input and output is known).

    Parameters
    ----------
    text : str
        The argument as typed.

    Returns
    -------
    Path
        The output path (pyarrow must be importable for ``.parquet``).
    """
    path = Path(text)
    if path.suffix.lower() not in OUTPUT_SUFFIXES:
        raise argparse.ArgumentTypeError(f"output file must end in {' or '.join(OUTPUT_SUFFIXES)}, got {text!r}")
    if path.suffix.lower() == ".parquet":
        try:
            import pyarrow  # noqa: F401  (only to say now, not after the study, that it is missing)
        except ImportError:
            raise argparse.ArgumentTypeError("Parquet output needs pyarrow: pip install 'rkcore[parquet]'") from None
    return path


def parse_Ds(text: str, d: int, *, high: int = 2**20) -> list[int]:
    """``--D``: '156,312' or multiples of d such as '2d,16d' (also '0.5d'); each D from 1 to ``high``.

    Parameters
    ----------
    text : str
        The comma-separated list as typed.
    d : int
        Number of input features, the unit of entries such as ``'16d'``.
    high : int, default 2**20
        Largest accepted D.

    Returns
    -------
    list[int]
        The numbers of random features, in the given order.
    """
    out = []
    for part in (p.strip().lower() for p in text.split(",")):
        if not part:
            continue
        try:
            value = float(part[:-1]) * d if part.endswith("d") else float(part)
        except ValueError:
            raise ValueError("--D entries must be integers or multiples of d such as '16d'; "
                             f"got {part[:40]!r}.") from None
        if not math.isfinite(value) or not 1 <= value <= high or (not part.endswith("d") and value != int(value)):
            raise ValueError(f"--D entries must give a number of random features from 1 to {high} "
                             f"(d = {d}); got {part[:40]!r}.")
        out.append(int(value))
    if not out:
        raise ValueError(f"--D names no number of random features; got {text[:40]!r}.")
    return out


def parse_params(items: Sequence[str]) -> dict:
    """``--param``: ['fm.max_iter=100', 'rk.clf__max_iter=2000'] -> {'fm': {'max_iter': 100}, ...}.

    Parameters
    ----------
    items : Sequence[str]
        ``METHOD.PARAM=VALUE`` strings (None or empty for none).

    Returns
    -------
    dict
        Method key -> {parameter name: value}; a value is a Python literal when it parses as one, else the string.
    """
    out: dict = {}
    for item in items or []:
        try:
            key, value = item.split("=", 1)
            method, name = key.split(".", 1)
        except ValueError:
            raise ValueError(f"--param must look like METHOD.PARAM=VALUE; got {item[:60]!r}.") from None
        if len(value) > 200:  # literal_eval of a huge expression is itself a cost a user controls
            raise ValueError(f"--param value of {key[:40]!r} is longer than 200 characters.")
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            parsed = value
        out.setdefault(method, {})[name] = parsed
    return out


def split_of(n: int, n_train, n_val, n_test, paper_split: tuple[int, int, int]) -> tuple:
    """The (train, validation, test) split: the paper's counts when none is given and the data are large
    enough, else fractions (0.5, 0.1, 0.4) with any given part in its place.

    Parameters
    ----------
    n : int
        Number of rows of the data.
    n_train, n_val, n_test : float, int or None
        Given sizes (fraction or count) of the parts, None where not given.
    paper_split : tuple[int, int, int]
        The paper's (train, validation, test) counts.

    Returns
    -------
    tuple
        The (train, validation, test) sizes, each a fraction or a count.
    """
    if n_train is None and n_val is None and n_test is None:
        return paper_split if n >= sum(paper_split) else (0.5, 0.1, 0.4)
    return (0.5 if n_train is None else n_train, 0.1 if n_val is None else n_val, 0.4 if n_test is None else n_test)


def html_path(text: str) -> Path:
    """``--out`` of ``export-story``: a .html (or .htm) file name; existence and folder are checked before work.

    Parameters
    ----------
    text : str
        The argument as typed.

    Returns
    -------
    Path
        The output path.
    """
    path = Path(text)
    if path.suffix.lower() not in (".html", ".htm"):
        raise argparse.ArgumentTypeError(f"expected a .html file, got {text!r}")
    return path
