"""Argument checks of plain functions: one definition of "an integer" (not a bool, numpy integers
allowed) and one wording of the error, which names the argument and shows the value; and byte sizes
as people type them (``RKCORE_MEMORY_BUDGET=2GiB``).

Estimators do not use these: their hyperparameters are declared in ``_parameter_constraints`` and
checked by scikit-learn when ``fit`` runs (``InvalidParameterError``, a ValueError), the way
``clone``, ``set_params``, GridSearchCV and ``check_estimator`` expect. That is the one system for
estimators; this module is the one for functions (engines, kernels, the command line), which
scikit-learn's public API does not cover (``validate_params`` is private, and ``check_scalar``
accepts ``True`` as an int). The one thing this module adds to the estimators' constraints is
:class:`Count`: scikit-learn's ``Interval(Integral, ...)`` takes ``True`` for 1 (bool is an Integral),
so a size parameter declared with it accepted ``n_components=True``.

:func:`numeric_matrix_message` is the one wording of data that is not a numeric matrix (ragged rows,
text): the exact kernels' check and :func:`rkcore.base.arrays.validate_data` (the estimators') use it
in place of numpy's "inhomogeneous shape" or "could not convert string to float".
"""
from __future__ import annotations

import contextvars
import math
import re
from contextlib import contextmanager
from numbers import Integral
from typing import Iterator, Mapping, Protocol, TypeVar

import numpy as np
from sklearn.utils._param_validation import Interval

_Entry = TypeVar("_Entry")


class _Keyed(Protocol):
    @property
    def key(self) -> str: ...  # noqa: D102 - a registry entry's name (frozen dataclasses: read-only)


_KeyedEntry = TypeVar("_KeyedEntry", bound=_Keyed)


def is_int(value) -> bool:
    """True for Python and numpy integers; False for bools (True is not a count) and floats.

    Parameters
    ----------
    value : object
        Anything.

    Returns
    -------
    bool
        Whether ``value`` counts as an integer.
    """
    return isinstance(value, (Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_int(value, name: str, minimum: int = 1, maximum: int | None = None, *,
              expected: str | None = None) -> int:
    """``int(value)`` if it is an integer in [minimum, maximum], else a ValueError naming ``name``.

    ``expected`` replaces the default wording of what is allowed ("an integer >= 1").

    Parameters
    ----------
    value : object
        The argument.
    name : str
        Its name, for the message.
    minimum : int, default=1
        Smallest allowed value.
    maximum : int, optional
        Largest allowed value (None: no upper bound).
    expected : str, optional
        Replaces the default wording of what is allowed.

    Returns
    -------
    int
        ``int(value)``.
    """
    if not is_int(value) or value < minimum or (maximum is not None and value > maximum):
        if expected is None:
            expected = (f"an integer >= {minimum}" if maximum is None
                        else f"an integer between {minimum} and {maximum}")
        raise ValueError(f"{name} must be {expected}, got {value!r}.")
    return int(value)


class Count(Interval):
    """An estimator's size parameter (``n_components``, ``degree``, ...): an integer in [minimum, maximum],
    never a bool. A scikit-learn constraint (use it in ``_parameter_constraints``); scikit-learn's own
    ``Interval(Integral, ...)`` accepts ``True`` as 1.

    Parameters
    ----------
    minimum : int, default=1
        Smallest allowed value.
    maximum : int, optional
        Largest allowed value (None: no upper bound).
    """

    def __init__(self, minimum: int = 1, maximum: int | None = None):
        super().__init__(Integral, minimum, maximum, closed="left" if maximum is None else "both")

    def is_satisfied_by(self, val) -> bool:
        """Whether ``val`` is an integer (not a bool) in the range.

        Parameters
        ----------
        val : object
            The parameter's value.

        Returns
        -------
        bool
            True when allowed.
        """
        return is_int(val) and super().is_satisfied_by(val)

    def __str__(self) -> str:
        return f"{super().__str__()} (a whole number, not True or False)"


def numeric_matrix_message(name: str) -> str:
    """The error message for data that is not a numeric matrix: ragged rows or values that are not numbers.

    Parameters
    ----------
    name : str
        The data's name (``"X"``).

    Returns
    -------
    str
        The message.
    """
    return (f"{name} must be a numeric matrix with rows of equal length; it is ragged or holds values "
            "that are not numbers.")


#: What a user does after fixing a file, in the words of the interface that read it: the dashboard's upload by
#: default; the command line sets its own (:func:`file_fix_action_set`). A context variable, so that sessions
#: of one server and threads never see another's.
_FILE_FIX_ACTION: contextvars.ContextVar[str] = contextvars.ContextVar("file_fix_action", default="upload it again")


def file_fix_action() -> str:
    """The end of a file error's advice: what to do with the fixed file ("upload it again" in the dashboard,
    "run the command again" on the command line).

    Returns
    -------
    str
        The phrase, without a final period.
    """
    return _FILE_FIX_ACTION.get()


@contextmanager
def file_fix_action_set(phrase: str) -> Iterator[str]:
    """Inside the ``with`` block, file errors end with ``phrase`` (see :func:`file_fix_action`).

    Parameters
    ----------
    phrase : str
        E.g. ``"run the command again"``.

    Yields
    ------
    str
        The phrase.
    """
    token = _FILE_FIX_ACTION.set(phrase)
    try:
        yield phrase
    finally:
        _FILE_FIX_ACTION.reset(token)


def check_int_list(values, name: str, minimum: int = 1) -> list[int]:
    """A scalar or a non-empty sequence of integers >= minimum, as a list of ints.

    Parameters
    ----------
    values : int or sequence of int
        The argument.
    name : str
        Its name, for the message.
    minimum : int, default=1
        Smallest allowed value.

    Returns
    -------
    list of int
        The values.
    """
    values = [values] if np.isscalar(values) else list(values)
    if not values:
        raise ValueError(f"{name} is empty; give at least one integer >= {minimum}.")
    return [check_int(v, name, minimum, expected=f"integers >= {minimum} only") for v in values]



def check_n_features(d) -> int:
    """``int(d)`` if it is an integer >= 1 (a number of features), else a ValueError saying so.

    Parameters
    ----------
    d : object
        The number of features.

    Returns
    -------
    int
        d.
    """
    return check_int(d, "d (the number of features)")


def check_order(m, d: int, *, allow_zero: bool = False, name: str = "degree", bound: str | None = None) -> int:
    """``int(m)`` if it is an integer order in [low, d] (low = 0 with ``allow_zero``, else 1), else a ValueError.

    Parameters
    ----------
    m : object
        The order (degree) asked for.
    d : int
        The largest order allowed (the number of features, or of fields).
    allow_zero : bool, default=False
        Whether order 0 is allowed.
    name : str, default="degree"
        The argument's name, for the message.
    bound : str, optional
        What d is, for the message (default "d=.. (the number of features)").

    Returns
    -------
    int
        m.
    """
    low = 0 if allow_zero else 1
    bound = f"d={d} (the number of features)" if bound is None else bound
    if not is_int(m):
        raise ValueError(f"{name} must be an integer between {low} and {bound}, got {m!r}.")
    if not low <= m <= d:
        raise ValueError(f"{name}={m} is out of range: allowed {name} is between {low} and {bound}.")
    return int(m)


def as_float_array(value, name: str, what: str) -> np.ndarray:
    """``value`` (a number or an array of numbers) as a finite float64 array, else a ValueError naming it.

    Parameters
    ----------
    value : object
        A number or an array-like of numbers; text and bools are refused.
    name : str
        The argument's name.
    what : str
        What it is, in words (the message says "name (what) must ...").

    Returns
    -------
    numpy.ndarray
        The values, float64 (0-d for a number).
    """
    if isinstance(value, (str, bytes, bool, np.bool_)):  # numpy would read "0.1" as 0.1 and True as 1.0
        kind = "the string" if isinstance(value, (str, bytes)) else "the bool"
        raise ValueError(f"{name} ({what}) must be a number or an array of numbers, got {kind} {value!r}.")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} ({what}) must be a number or an array of numbers, got {value!r}.") from None
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} ({what}) must be finite; got NaN or infinity.")
    return arr


def _first_bad(arr: np.ndarray, bad: np.ndarray) -> float:
    return float(arr[bad].flat[0]) if arr.ndim else float(arr)


def check_positive(value, name: str, what: str) -> np.ndarray:
    """:func:`as_float_array` of values that must all be > 0.

    Parameters
    ----------
    value : object
        A number or an array-like of numbers.
    name : str
        The argument's name.
    what : str
        What it is, in words.

    Returns
    -------
    numpy.ndarray
        The values, float64.
    """
    arr = as_float_array(value, name, what)
    bad = arr <= 0
    if bad.any():
        raise ValueError(f"{name} ({what}) must be > 0, got {_first_bad(arr, bad)!r}.")
    return arr


def check_at_least_one(value, name: str, what: str, *, integer: bool) -> np.ndarray:
    """:func:`as_float_array` of values that must all be >= 1 (and whole numbers with ``integer``).

    Parameters
    ----------
    value : object
        A number or an array-like of numbers.
    name : str
        The argument's name.
    what : str
        What it is, in words.
    integer : bool
        Whether the values must be whole numbers (2.0 is accepted: the bounds are drawn as curves).

    Returns
    -------
    numpy.ndarray
        The values, float64.
    """
    arr = as_float_array(value, name, what)
    bad = arr < 1
    if integer:
        bad = bad | (arr != np.round(arr))
    if bad.any():
        kind = "an integer >= 1" if integer else ">= 1"
        raise ValueError(f"{name} ({what}) must be {kind}, got {_first_bad(arr, bad)!r}.")
    return arr


def check_eps(eps) -> np.ndarray:
    """The absolute error tolerance(s) eps: finite numbers > 0, as a float64 array (0-d for a number).

    Parameters
    ----------
    eps : float or array-like of float
        The tolerance(s).

    Returns
    -------
    numpy.ndarray
        eps, float64.
    """
    return check_positive(eps, "eps", "the absolute error tolerance")


def entry_of(table: Mapping[str, _Entry], key, what: str) -> _Entry:
    """``table[key]``, or a ValueError naming ``what`` was asked for and listing the allowed keys.

    The one lookup of the engines' tables (expansions, projections, base kernels, presets, ...): an
    unknown or unhashable key is refused with the same wording everywhere.

    Parameters
    ----------
    table : mapping of str to object
        The table, keyed by name.
    key : object
        The key asked for (anything: an unhashable value is refused like an unknown one).
    what : str
        What an entry is, for the message ("expansion", "projection kind", ...).

    Returns
    -------
    object
        The entry.
    """
    try:
        return table[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown {what} {key!r}; allowed: {', '.join(map(repr, table))}.") from None


def add_entry(table: dict[str, _KeyedEntry], entry: _KeyedEntry, entry_type: type, what: str, *,
              adder: str) -> _KeyedEntry:
    """Add ``entry`` to ``table`` under its ``key`` (at the end): the one registration of the registries.

    Parameters
    ----------
    table : dict of str to object
        The registry, keyed by name.
    entry : object
        The new entry: an instance of ``entry_type`` whose key is not in ``table`` yet.
    entry_type : type
        The class every entry of ``table`` is.
    what : str
        What an entry is, for the message ("kernel", "map").
    adder : str
        The public function's name, for the message ("register_kernel").

    Returns
    -------
    object
        ``entry``.
    """
    if not isinstance(entry, entry_type):
        raise ValueError(f"{adder} takes a {entry_type.__name__}, got {type(entry).__name__}.")
    if entry.key in table:
        raise ValueError(f"A {what} with key {entry.key!r} is already registered.")
    table[entry.key] = entry
    return entry

#: Unit prefixes of :func:`parse_byte_size`: powers of 1024, as :func:`rkcore.base.limits.format_bytes` prints them.
_BYTE_UNITS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_BYTE_SIZE = re.compile(r"^\s*(\d[\d,_]*(?:\.\d*)?(?:e[+-]?\d+)?)\s*(?:([kmgtp])(?:i?b)?|b)?\s*$", re.IGNORECASE)


def parse_byte_size(text: str, name: str) -> int:
    """A byte count from text such as ``"2GiB"``, ``"1.5 GB"``, ``"512M"``, ``"1,024 KB"`` or ``"2e9"``.

    Units are case-insensitive powers of 1024 (K, M, G, T, P with or without ``B``/``iB``), the way
    :func:`rkcore.base.limits.format_bytes` prints sizes, so a size copied from a message reads back the
    same. A fractional number of bytes is rounded down.

    Parameters
    ----------
    text : str
        The size.
    name : str
        What the size is, for the error message (e.g. ``"RKCORE_MEMORY_BUDGET"``).

    Returns
    -------
    int
        The number of bytes.

    Raises
    ------
    ValueError
        If ``text`` is not a number with an optional unit.

    Examples
    --------
    >>> parse_byte_size("2GiB", "budget"), parse_byte_size("1.5 kb", "budget"), parse_byte_size("12345", "budget")
    (2147483648, 1536, 12345)
    """
    match = _BYTE_SIZE.match(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{name} must be a size such as 2GiB, 512MB or 1000000 (bytes), got {text!r}.")
    number, prefix = match.group(1).replace(",", "").replace("_", ""), (match.group(2) or "").lower()
    value = float(number) * 1024 ** _BYTE_UNITS[prefix]
    if not math.isfinite(value):
        raise ValueError(f"{name} is too large: {text!r}.")
    return int(value)
