"""The catalog of built-in datasets: the generated and bundled sets of :mod:`rkcore.data.builtin` and the
MovieLens ratings stand-in of :mod:`rkcore.data.ratings`, assembled here, once, without any module
changing another's table when imported.
"""
from __future__ import annotations

from .builtin import GENERATED, BuiltinDataset, Dataset
from .ratings import make_movielens_ratings


def _ratings(n_samples: int | None = None, random_state: int = 0) -> Dataset:
    return make_movielens_ratings(2000 if n_samples is None else n_samples, random_state)


#: Every built-in dataset by key: what the data widgets, the CLI and :func:`load_builtin` list.
BUILTIN: dict[str, BuiltinDataset] = {
    **GENERATED,
    "movielens_ratings": BuiltinDataset(
        "movielens_ratings", "MovieLens ratings (generated stand-in, regression)",
        "2000 x 78 MovieLens-format one-hot rows; y = a rating 1-5 (rkcore.data.ratings).", _ratings),
}


def load_builtin(key: str, n_samples: int | None = None, random_state: int = 0) -> Dataset:
    """A built-in dataset by key (see :data:`BUILTIN`); ``n_samples`` caps / sets the size.

    Synthetic sets generate ``n_samples`` rows (default 1000); bundled sets take a
    seeded subsample of ``n_samples`` rows (all rows when None).

    Parameters
    ----------
    key : str
        Key in :data:`BUILTIN`.
    n_samples : int or None, optional
        Rows to generate or subsample; None for the default.
    random_state : int, default 0
        Seed of the generation or subsample.

    Returns
    -------
    Dataset
        The dataset.
    """
    try:
        entry = BUILTIN[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown built-in dataset {key!r}; allowed: {', '.join(map(repr, BUILTIN))}.") from None
    return entry.loader(n_samples=n_samples, random_state=random_state)

