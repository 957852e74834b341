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

_THREAD_RNG = threading.local()
_Drawn = TypeVar("_Drawn")


def draw_with(random_state, draw: Callable[[np.random.RandomState], _Drawn]) -> _Drawn:
    """``draw(check_random_state(random_state))``, the same numbers, cheaper for an int seed: building a
    RandomState seeds a generator from OS entropy first (~150 us, a study draws hundreds of maps), reseeding
    the one this thread keeps costs ~2 us and gives the same legacy stream. ``draw`` must not keep it."""
    if not isinstance(random_state, Integral) or isinstance(random_state, bool):
        return draw(check_random_state(random_state))
    rng = getattr(_THREAD_RNG, "rng", None)
    if rng is None:
        rng = _THREAD_RNG.rng = np.random.RandomState(0)
    rng.seed(int(random_state))  # the range check of RandomState(seed): ValueError outside [0, 2**32 - 1]
    return draw(rng)


@dataclass(frozen=True)
class Distribution:
    key: str
    label: str
    latex: str
    fourth_moment: float
    sampler: Callable[[np.random.RandomState, tuple], np.ndarray]
    color: str  # "#rrggbb", the same on every chart (Okabe-Ito: safe for colour-blind readers)

    def sample(self, rng: np.random.RandomState, shape: tuple) -> np.ndarray:
        """Draw float64 samples of the given shape."""
        return np.asarray(self.sampler(rng, shape), dtype=np.float64)


def _rademacher(rng, shape):
    # integers in {0, 1} -> {-1, +1}; exact, cheap, and independent of BLAS
    return rng.randint(0, 2, size=shape).astype(np.float64) * 2.0 - 1.0


_SQRT3 = np.sqrt(3.0)

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
    )
}


def get_distribution(key: str) -> Distribution:
    """Look a distribution up by key, with an error listing the allowed keys."""
    try:
        return DISTRIBUTIONS[key]
    except (KeyError, TypeError):
        raise ValueError(
            f"Unknown distribution {key!r}; allowed: {', '.join(map(repr, DISTRIBUTIONS))}."
        ) from None
