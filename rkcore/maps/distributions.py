"""Zero-mean, unit-variance weight distributions for the RK map (paper, Proposition 2).

One table: every distribution has a key (used by the UI, URLs and the maps), a label,
a LaTeX formula, its fourth moment (which fixes the variance of the estimator, see
:mod:`rkcore.theory.variance`), a sampler and its colour in every chart.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from numbers import Integral
from typing import Callable, TypeVar

import numpy as np
from sklearn.utils import check_random_state

from .orthogonal import block_sampler, hadamard_sign_rows, orthogonal_gaussian_rows

_THREAD_RNG = threading.local()
_Drawn = TypeVar("_Drawn")


def draw_with(random_state, draw: Callable[[np.random.RandomState], _Drawn]) -> _Drawn:
    """``draw(check_random_state(random_state))``, the same numbers, cheaper for an int seed: building a
    RandomState seeds a generator from OS entropy first (~150 us, a study draws hundreds of maps), reseeding
    the one this thread keeps costs ~2 us and gives the same legacy stream. ``draw`` must not keep it.

    Parameters
    ----------
    random_state : int, RandomState or None
        The seed or generator.
    draw : callable
        ``draw(rng)`` -> the drawn values; it must not keep ``rng``.

    Returns
    -------
    object
        What ``draw`` returns.
    """
    if not isinstance(random_state, Integral) or isinstance(random_state, bool):
        return draw(check_random_state(random_state))
    rng = getattr(_THREAD_RNG, "rng", None)
    if rng is None:
        rng = _THREAD_RNG.rng = np.random.RandomState(0)
    rng.seed(int(random_state))  # the range check of RandomState(seed): ValueError outside [0, 2**32 - 1]
    return draw(rng)


@dataclass(frozen=True)
class Distribution:  # numpydoc ignore=PR02
    """A weight distribution of RK: symmetric, zero mean, unit variance.

    Parameters
    ----------
    key : str
        Its key (URL value, ``distribution=`` of the maps).
    label : str
        Its name in the dashboard.
    latex : str
        Its definition.
    fourth_moment : float
        E[w^4] (>= 1); it sets the variance of the RK estimate (Lemma 4).
    sampler : callable
        ``sampler(rng, shape)`` -> samples.
    color : str
        ``"#rrggbb"``, the same on every chart (Okabe-Ito: safe for colour-blind readers).
    blocks : str, default=""
        Empty for i.i.d. entries; otherwise how rows are drawn in orthogonal blocks, in words. Each row
        keeps the i.i.d. law of ``fourth_moment``, so one feature's variance is unchanged and the estimate
        unbiased, but the rows of a block are dependent: the variance of a D-feature mean is then not
        (E f^2 - K^2) / D (see :attr:`iid`).
    marginal : str, default=""
        For block distributions, the key of the i.i.d. distribution each row keeps (same fourth moment).
    """
    key: str
    label: str
    latex: str
    fourth_moment: float
    sampler: Callable[[np.random.RandomState, tuple], np.ndarray]
    color: str
    blocks: str = ""
    marginal: str = ""

    @property
    def iid(self) -> bool:
        """Whether all entries of the weight matrix are independent (the exact variance formulas need it).

        Returns
        -------
        bool
            True when the entries are i.i.d. (no orthogonal blocks).
        """
        return not self.blocks

    def sample(self, rng: np.random.RandomState, shape: tuple) -> np.ndarray:
        """Draw float64 samples of the given shape (i.i.d. entries, or rows in orthogonal blocks, see ``blocks``).

        Parameters
        ----------
        rng : numpy.random.RandomState
            The generator.
        shape : tuple of int
            Shape of the draw.

        Returns
        -------
        numpy.ndarray
            float64 samples.
        """
        return np.asarray(self.sampler(rng, shape), dtype=np.float64)


def _rademacher(rng, shape):
    # integers in {0, 1} -> {-1, +1}; exact, cheap, and independent of BLAS
    return rng.randint(0, 2, size=shape).astype(np.float64) * 2.0 - 1.0


_SQRT3 = np.sqrt(3.0)


_orthogonal_gaussian = block_sampler(orthogonal_gaussian_rows)
_hadamard_signs = block_sampler(hadamard_sign_rows)

DISTRIBUTIONS: dict[str, Distribution] = {
    d.key: d
    for d in (
        Distribution("rademacher", "Rademacher", r"\omega_j \in \{-1, +1\}\ \text{w.p. } 1/2", 1.0, _rademacher,
                     "#0072B2"),
        Distribution("gaussian", "Gaussian", r"\omega_j \sim \mathcal{N}(0, 1)", 3.0,
                     lambda rng, shape: rng.standard_normal(size=shape), "#E69F00"),
        Distribution("uniform", "Uniform", r"\omega_j \sim \mathcal{U}(-\sqrt{3}, \sqrt{3})", 9.0 / 5.0,
                     lambda rng, shape: rng.uniform(-_SQRT3, _SQRT3, size=shape), "#009E73"),
        Distribution("laplace", "Laplace", r"\omega_j \sim \mathrm{Laplace}(0, 1/\sqrt{2})", 6.0,
                     lambda rng, shape: rng.laplace(0.0, 1.0 / np.sqrt(2.0), size=shape), "#D55E00"),
        Distribution("gaussian-orthogonal", "Gaussian, orthogonal rows",
                     r"\boldsymbol\omega_s = \chi_d\,\mathbf{q}_s,\ \mathbf{q}_s \text{ orthonormal in blocks of } d",
                     3.0, _orthogonal_gaussian, "#AA4499",
                     blocks="d orthogonal rows (Haar rotation, chi_d row norms): each row exactly N(0, I)",
                     marginal="gaussian"),
        Distribution("rademacher-hadamard", "Rademacher, Hadamard rows",
                     r"\boldsymbol\omega_s = \mathbf{h}_s \odot \mathbf{s},\ \mathbf{s} \in \{\pm 1\}^d"
                     r"\text{ (rows of } H_p\,\mathrm{diag}(\mathbf{s})\text{)}",
                     1.0, _hadamard_signs, "#332288",
                     blocks="p = 2^ceil(log2 d) rows of H_p diag(s), first d columns: each row i.i.d. Rademacher",
                     marginal="rademacher"),
    )
}


def get_distribution(key: str) -> Distribution:
    """Look a distribution up by key, with an error listing the allowed keys.

    Parameters
    ----------
    key : str
        A key of :data:`DISTRIBUTIONS`.

    Returns
    -------
    Distribution
        Its entry.

    Raises
    ------
    ValueError
        If ``key`` is not a key of :data:`DISTRIBUTIONS` (the message lists the allowed keys).

    Examples
    --------
    >>> from rkcore.maps.distributions import get_distribution
    >>> get_distribution("gaussian").fourth_moment
    3.0
    """
    try:
        return DISTRIBUTIONS[key]
    except (KeyError, TypeError):
        raise ValueError(
            f"Unknown distribution {key!r}; allowed: {', '.join(map(repr, DISTRIBUTIONS))}."
        ) from None
