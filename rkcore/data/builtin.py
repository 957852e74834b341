"""The Dataset type, row normalization, and the built-in datasets (synthetic generators and
scikit-learn's bundled sets). Nothing here downloads anything.

The paper (Atarashi, Maji & Oyama, AAAI-19, Section 6) L1-normalizes every feature
vector so that R = max_i ||x_i||_1 = 1; :func:`normalize` does that row-wise.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.sparse as sp
from sklearn import datasets as skdatasets
from sklearn.preprocessing import normalize as _sk_normalize
from sklearn.utils import check_random_state

from ..base.limits import check_allocation
from ..base.validation import check_int, is_int

NORMALIZATIONS = ("l1", "l2", "none")


@dataclass(frozen=True)
class Dataset:  # numpydoc ignore=PR02
    """A data matrix with optional labels.

    ``X`` is float64 of shape (n, d), dense or CSR; ``y`` holds integer class labels
    (or floats for a regression target read from a file) or is None; ``fields``
    groups feature indices (e.g. user features vs item features) for cross-field
    itemset families, or is None.

    Parameters
    ----------
    name : str
        Dataset name.
    X : numpy.ndarray or scipy.sparse.csr_matrix
        Data matrix, float64 of shape (n, d).
    y : numpy.ndarray or None
        Labels or regression target, or None.
    feature_names : tuple of str
        One name per column.
    fields : tuple of tuple of int or None
        Feature indices per field, or None.
    description : str
        One-line description.
    """

    name: str
    X: np.ndarray | sp.csr_matrix
    y: np.ndarray | None
    feature_names: tuple[str, ...]
    fields: tuple[tuple[int, ...], ...] | None
    description: str

    @property
    def n_samples(self) -> int:
        """Number of rows of ``X``.

        Returns
        -------
        int
            n, the number of samples.
        """
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``.

        Returns
        -------
        int
            d, the number of features.
        """
        return self.X.shape[1]


@dataclass(frozen=True)
class BuiltinDataset:  # numpydoc ignore=PR02
    """A built-in dataset of :data:`rkcore.data.catalog.BUILTIN`: its key, label, description and loader.

    Parameters
    ----------
    key : str
        Key in :data:`rkcore.data.catalog.BUILTIN`.
    label : str
        Display name.
    description : str
        One-line description.
    loader : callable
        (n_samples, random_state) -> Dataset.
    """
    key: str
    label: str
    description: str
    loader: Callable[..., Dataset]  # (n_samples, random_state) -> Dataset


# ---------------------------------------------------------------------------- helpers
def normalize(X, norm: str = "l1") -> np.ndarray | sp.csr_matrix:
    """Row-wise normalization x / ||x||_p for p = 1 ("l1") or 2 ("l2"); "none" returns X.

    Sparse input stays sparse (CSR); rows that are all zero stay zero
    (scikit-learn's ``normalize`` leaves them untouched instead of dividing by 0).

    Parameters
    ----------
    X : array-like or sparse matrix
        Data, one row per point.
    norm : str, default "l1"
        "l1", "l2" or "none".

    Returns
    -------
    numpy.ndarray or scipy.sparse.csr_matrix
        Normalized float64 copy of ``X``.
    """
    if norm not in NORMALIZATIONS:
        raise ValueError(f"Unknown normalization {norm!r}; allowed: {', '.join(map(repr, NORMALIZATIONS))}.")
    from ..kernels.numerics import canonical_csr
    if sp.issparse(X):
        X = canonical_csr(X)  # duplicates summed first: the norm of the matrix's own row
    else:
        X = np.asarray(X, dtype=np.float64)
    if norm == "none":
        return X.copy()
    # Scale each row by a power of two (exact) so its largest entry is in [0.5, 1) first:
    # the norm of a row like [1e308, 1e308, 1] would overflow and the row become zeros.
    from ..kernels.exact import row_power_of_two_scale
    return _sk_normalize(row_power_of_two_scale(X)[1], norm=norm, axis=1, copy=True)


def _subsample(n_total: int, n_samples: int | None, random_state) -> np.ndarray:
    """Row indices: all rows, the first n (random_state None) or a seeded sorted subsample."""
    if n_samples is not None:
        check_int(n_samples, "n_samples", expected="a positive integer or None")
    if n_samples is None or n_samples >= n_total:
        return np.arange(n_total)
    if random_state is None:
        return np.arange(n_samples)
    rng = check_random_state(random_state)
    return np.sort(rng.choice(n_total, size=n_samples, replace=False))


def _check_n_samples(n_samples, default: int) -> int:
    if n_samples is None:
        return default
    return check_int(n_samples, "n_samples", expected="a positive integer or None")


# ---------------------------------------------------------------------------- built-ins
def make_interactions(n_samples: int | None = 1000, n_features: int = 20, n_interactions: int = 12,
                      noise: float = 0.1, random_state=0) -> Dataset:
    r"""Synthetic binary task whose label is a sparse pairwise-interaction function.

    x ~ N(0, I_d); f(x) = \sum_{j<k} A_{jk} x_j x_k with ``n_interactions`` non-zero
    A_{jk} ~ N(0, 1); y = [f(x) + noise * std(f) * eps > median(f + noise)], so the classes are
    balanced. f is even (f(-x) = f(x)) and x is symmetric, so every linear function
    of x is uncorrelated with y: a linear model on x is near chance while a model on
    the pairwise products (a degree-2 ANOVA / polynomial kernel) can fit it.

    One fixed dataset per seed, whatever ``n_samples``: the function f, std(f) and the label
    threshold come from their own random stream (std and median over a fixed reference sample of
    :data:`REFERENCE_ROWS` points), and row i (features and noise) depends only on the seed and i,
    so the first 200 rows at ``n_samples=300`` are the rows at ``n_samples=200``.

    Parameters
    ----------
    n_samples : int or None, default 1000
        Rows; None gives 1000.
    n_features : int, default 20
        Features d, at least 2.
    n_interactions : int, default 12
        Non-zero pairwise terms of f, at least 1.
    noise : float, default 0.1
        Label noise, relative to std(f).
    random_state : int, RandomState instance or None, default 0
        Seed of the dataset.

    Returns
    -------
    Dataset
        The labelled data.
    """
    n = _check_n_samples(n_samples, 1000)
    if not is_int(n_features):
        raise ValueError(f"n_features must be an integer, got {n_features!r}.")
    if not is_int(n_interactions) or n_interactions < 1:  # 0 terms: f = 0 and every label would be 0
        raise ValueError(f"n_interactions must be an integer >= 1 (with no pairwise term every label is 0), "
                         f"got {n_interactions!r}.")
    if isinstance(noise, bool) or not isinstance(noise, (int, float, np.integer, np.floating)) \
            or not math.isfinite(noise) or noise < 0:  # NaN noise made every comparison False: all labels 0
        raise ValueError(f"noise must be a finite number >= 0, got {noise!r}.")
    d = int(n_features)
    if d < 2:
        raise ValueError(f"n_features must be at least 2 for pairwise interactions, got {n_features!r}.")
    check_allocation("The synthetic data", (n, d), hint="Lower n_samples.")
    function_rng, rows_rng, noise_rng = _streams(random_state, 3)
    rows, cols = np.triu_indices(d, k=1)
    n_pairs = min(int(n_interactions), rows.size)
    chosen = np.sort(function_rng.choice(rows.size, size=n_pairs, replace=False))
    weights = function_rng.standard_normal(n_pairs)
    left, right = rows[chosen], cols[chosen]
    # the reference sample needs only the columns f reads (they are i.i.d. N(0, 1) like all others)
    used, position = np.unique(np.concatenate([left, right]), return_inverse=True)
    reference = function_rng.standard_normal((REFERENCE_ROWS, used.size))
    f_reference = (reference[:, position[:n_pairs]] * reference[:, position[n_pairs:]]) @ weights
    scale = noise * f_reference.std()
    threshold = np.median(f_reference + scale * function_rng.standard_normal(REFERENCE_ROWS))
    X = rows_rng.standard_normal((n, d))  # row-major: rows 0..n-1 are the same for every n
    f = (X[:, left] * X[:, right]) @ weights + scale * noise_rng.standard_normal(n)
    y = (f > threshold).astype(np.int64)
    return Dataset(
        name="interactions", X=X, y=y,
        feature_names=tuple(f"x{j}" for j in range(d)), fields=None,
        # short: pages quote it above their charts (f's terms are rkcore code, not a caption)
        description=(f"Synthetic: {n} samples, {d} N(0,1) features; label = [f(x) + noise > median], f a fixed "
                     f"sum of {n_pairs} pairwise feature products (seed {random_state}, the same f for every n)."),
    )


#: Rows of the fixed reference sample that sets std(f) and the label threshold of make_interactions.
REFERENCE_ROWS = 20_000


def _streams(random_state, k: int) -> list[np.random.Generator]:
    """k independent generators from one seed (an int, None for fresh entropy, or a RandomState /
    Generator, which gives the seed): each part of a synthetic set draws from its own stream."""
    if random_state is None or is_int(random_state):
        seed = random_state
    elif isinstance(random_state, np.random.Generator):
        seed = int(random_state.integers(2**63))
    else:
        seed = int(check_random_state(random_state).randint(2**31 - 1))
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(k)]


def make_gaussian(n_samples: int | None = 1000, n_features: int = 50, random_state=0) -> Dataset:
    """N(0, 1) features without labels (the synthetic data of the paper's Figure 1).

    Parameters
    ----------
    n_samples : int or None, default 1000
        Rows; None gives 1000.
    n_features : int, default 50
        Features d, at least 1.
    random_state : int, RandomState instance or None, default 0
        Seed.

    Returns
    -------
    Dataset
        The data, without labels.
    """
    n = _check_n_samples(n_samples, 1000)
    if not is_int(n_features):
        raise ValueError(f"n_features must be an integer, got {n_features!r}.")
    d = int(n_features)
    if d < 1:
        raise ValueError(f"n_features must be at least 1, got {n_features!r}.")
    check_allocation("The synthetic data", (n, d), hint="Lower n_samples.")
    X = check_random_state(random_state).standard_normal((n, d))
    return Dataset(name="gaussian", X=X, y=None, feature_names=tuple(f"x{j}" for j in range(d)),
                   fields=None, description=f"Synthetic: {n} x {d} i.i.d. N(0, 1) features, no labels.")


def _sklearn_loader(key: str, fetch: Callable, text: str):
    def load(n_samples=None, random_state=0) -> Dataset:
        bunch = fetch()
        X = np.asarray(bunch.data, dtype=np.float64)
        rows = _subsample(X.shape[0], n_samples, random_state)
        return Dataset(name=key, X=X[rows], y=np.asarray(bunch.target, dtype=np.int64)[rows],
                       feature_names=tuple(str(f) for f in bunch.feature_names), fields=None,
                       description=f"{text} ({rows.size} of {X.shape[0]} samples, {X.shape[1]} features; bundled with scikit-learn).")
    return load


#: The generated and bundled sets; :data:`rkcore.data.catalog.BUILTIN` adds the MovieLens ratings stand-in.
GENERATED: dict[str, BuiltinDataset] = {
    b.key: b
    for b in (
        BuiltinDataset("interactions", "Synthetic pairwise interactions",
                       "Binary labels from a sparse sum of pairwise feature products: linear models fail, degree-2 kernels succeed.",
                       lambda n_samples=None, random_state=0: make_interactions(n_samples, random_state=random_state)),
        BuiltinDataset("gaussian", "Gaussian N(0, 1)",
                       "i.i.d. standard normal features, no labels (for timing, as in the paper's Figure 1).",
                       lambda n_samples=None, random_state=0: make_gaussian(n_samples, random_state=random_state)),
        BuiltinDataset("breast_cancer", "Breast cancer (Wisconsin)", "569 x 30, binary.",
                       _sklearn_loader("breast_cancer", skdatasets.load_breast_cancer, "Breast cancer Wisconsin, binary")),
        BuiltinDataset("wine", "Wine", "178 x 13, 3 classes.",
                       _sklearn_loader("wine", skdatasets.load_wine, "Wine recognition, 3 classes")),
        BuiltinDataset("digits", "Digits (8x8)", "1797 x 64, 10 classes.",
                       _sklearn_loader("digits", skdatasets.load_digits, "Handwritten digits 8x8, 10 classes")),
    )
}

