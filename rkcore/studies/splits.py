"""Train / validation / test splits of a labelled dataset, shared by the accuracy and regression studies.

:func:`split_sizes` turns counts or fractions into three sizes that never ask for more rows than the
data has; :func:`split_indices` draws one seeded split of those sizes, stratified by class if asked.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state

from ..base.validation import is_int

__all__ = ["split_indices", "split_sizes"]


def split_sizes(n: int, split) -> tuple[int, int, int]:
    """Train / validation / test sizes from counts or fractions of n (their sum must be <= n).

    Fractions are shared out by largest remainder, so fractions that sum to 1 give parts that
    sum to exactly n (rounding each part alone asked for n + 1 at every n = 7, 15, 19 mod 20)
    and each part is within one sample of its exact share.

    Parameters
    ----------
    n : int
        Number of labelled rows available.
    split : tuple of 3 numbers
        Train, validation and test parts, each a whole count >= 1 or a fraction of ``n`` in (0, 1);
        counts and fractions may be mixed, e.g. ``(50, 0.1, 0.4)``.

    Returns
    -------
    tuple of 3 int
        The train, validation and test sizes, each >= 2, summing to at most ``n``.

    Raises
    ------
    ValueError
        If ``split`` is not three finite positive counts or fractions, asks for more than ``n``
        rows, or gives a part of fewer than 2 rows.

    Examples
    --------
    >>> from rkcore.studies.splits import split_sizes
    >>> split_sizes(1000, (0.5, 0.1, 0.4)), split_sizes(135, (50, 0.1, 0.4))
    ((500, 100, 400), (50, 14, 54))
    """
    if not isinstance(split, (tuple, list)) or len(split) != 3:
        raise ValueError(f"split must be (train, validation, test); got {split!r}.")
    for part in split:
        is_number = isinstance(part, (int, float, np.integer, np.floating)) and not isinstance(part, (bool, np.bool_))
        if not is_number or (isinstance(part, (float, np.floating)) and not math.isfinite(part)) or part <= 0 \
                or (part >= 1 and not is_int(part)):
            raise ValueError("split entries must be positive counts or fractions in (0, 1), counts whole numbers; "
                             f"got {split!r}.")
    exact = {i: Fraction(float(p)) * n for i, p in enumerate(split) if p < 1}
    sizes = [int(p) if p >= 1 else math.floor(exact[i]) for i, p in enumerate(split)]
    short = round(sum(exact.values(), Fraction(0))) - sum(sizes[i] for i in exact)
    for i in sorted(exact, key=lambda i: (sizes[i] - exact[i], i))[:short]:
        sizes[i] += 1
    if sum(sizes) > n:
        raise ValueError(f"split {tuple(split)!r} asks for {sum(sizes)} samples but the dataset has only {n}.")
    if min(sizes) < 2:
        parts = ", ".join(f"{name} {size:,}" for name, size in zip(("training", "validation", "test"), sizes))
        raise ValueError(f"The split of {n:,} rows leaves a part with fewer than 2 rows ({parts}): use more rows "
                         "or larger fractions.")
    return sizes[0], sizes[1], sizes[2]


def split_indices(y, sizes: tuple[int, int, int], random_state=0,
                  stratify: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Train, validation and test row indices of the given sizes, stratified by y if asked.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Labels.
    sizes : (int, int, int)
        Train, validation and test counts (sum <= n_samples), e.g. from :func:`split_sizes`.
    random_state : int, RandomState instance or None, default=0
        Seed of the split.
    stratify : bool, default=True
        Keep the class proportions of y in each part (each class needs at least two
        members in every part it is split between); False draws a plain permutation.

    Returns
    -------
    train, validation, test : ndarray of int
        Disjoint row indices.

    Raises
    ------
    ValueError
        If ``stratify`` is True and the classes cannot be shared out in these sizes (a class too small).

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.studies.splits import split_indices
    >>> y = np.array([0] * 12 + [1] * 8)
    >>> train, val, test = split_indices(y, (10, 4, 6), random_state=0)
    >>> len(train), len(val), len(test), len(set(train) | set(val) | set(test))
    (10, 4, 6, 20)

    The positives (40% of y) in each part: 4 of 10, 2 of 4, 2 of 6.

    >>> [int(y[part].sum()) for part in (train, val, test)]
    [4, 2, 2]
    """
    n_train, n_val, n_test = sizes
    index = np.arange(len(y))
    if not stratify:
        order = check_random_state(random_state).permutation(len(y))
        return order[:n_train], order[n_train:n_train + n_val], order[n_train + n_val:n_train + n_val + n_test]
    try:
        rest, test = train_test_split(index, train_size=n_train + n_val, test_size=n_test, stratify=y,
                                      random_state=random_state)
        train, val = train_test_split(rest, train_size=n_train, test_size=n_val, stratify=y[rest],
                                      random_state=random_state)
    except ValueError as exc:
        raise ValueError(f"cannot stratify the split {sizes} by class: {exc} "
                         "(use fewer classes, larger parts, or stratify=False).") from None
    return train, val, test
