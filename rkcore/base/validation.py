"""Argument checks shared by every module: one definition of "an integer" (not a bool, numpy
integers allowed) and one wording of the error, which names the argument and shows the value."""
from __future__ import annotations

from numbers import Integral

import numpy as np


def is_int(value) -> bool:
    """True for Python and numpy integers; False for bools (True is not a count) and floats."""
    return isinstance(value, (Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_int(value, name: str, minimum: int = 1, maximum: int | None = None, *,
              expected: str | None = None) -> int:
    """``int(value)`` if it is an integer in [minimum, maximum], else a ValueError naming ``name``.

    ``expected`` replaces the default wording of what is allowed ("an integer >= 1").
    """
    if not is_int(value) or value < minimum or (maximum is not None and value > maximum):
        if expected is None:
            expected = (f"an integer >= {minimum}" if maximum is None
                        else f"an integer between {minimum} and {maximum}")
        raise ValueError(f"{name} must be {expected}, got {value!r}.")
    return int(value)


def check_int_list(values, name: str, minimum: int = 1) -> list[int]:
    """A scalar or a non-empty sequence of integers >= minimum, as a list of ints."""
    values = [values] if np.isscalar(values) else list(values)
    if not values:
        raise ValueError(f"{name} is empty; give at least one integer >= {minimum}.")
    return [check_int(v, name, minimum, expected=f"integers >= {minimum} only") for v in values]
