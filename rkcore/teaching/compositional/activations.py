"""Dual activations of the compositional kernels: coefficients a_n, closed forms and samplers."""
from __future__ import annotations

from dataclasses import dataclass
from math import pi
from typing import Callable

import numpy as np
import pandas as pd
from scipy.special import gammaln

from ...base.limits import nbytes, require_memory
from ...base.validation import check_int, entry_of


# ============================================================================ activations
@dataclass(frozen=True)
class Activation:  # numpydoc ignore=PR02
    r"""A normalized conjugate activation :math:`\hat\sigma(\rho) = \sum_n a_n \rho^n`, sum a_n = 1.

    ``dual`` evaluates the closed form on [-1, 1]; ``log_coefficient(n)`` gives log a_n for
    integer arrays n; ``sample_degree(rng, size)`` draws n with probability a_n exactly;
    ``mean_degree`` is :math:`\hat\sigma'(1) = \sum_n n a_n` (the paper's complexity, eq. 11).

    Parameters
    ----------
    key : str
        Its key (see :data:`ACTIVATIONS`).
    label : str
        Its name on the page.
    latex : str
        Its dual activation, LaTeX.
    dual : callable
        The closed form on [-1, 1].
    log_coefficient : callable
        log a_n for integer arrays n.
    sample_degree : callable
        ``sample_degree(rng, size)`` -> degrees n drawn with probability a_n.
    mean_degree : float
        E[n] = the dual's derivative at 1.
    activation_latex : str, default=""
        The activation sigma itself, LaTeX (shown beside its dual).
    """

    key: str
    label: str
    latex: str
    dual: Callable[[np.ndarray], np.ndarray]
    log_coefficient: Callable[[np.ndarray], np.ndarray]
    sample_degree: Callable[[np.random.RandomState, int], np.ndarray]
    mean_degree: float
    activation_latex: str = ""

    def coefficients(self, n_terms: int) -> np.ndarray:
        """a_0, ..., a_{n_terms-1}.

        Parameters
        ----------
        n_terms : int
            Number of coefficients.

        Returns
        -------
        numpy.ndarray of shape (n_terms,)
            a_0, ..., a_{n_terms-1}.
        """
        return np.exp(self.log_coefficient(np.arange(int(n_terms))))


def _table_activation(coefs: tuple[float, ...]) -> tuple[Callable[[np.ndarray], np.ndarray],
                                                         Callable[[np.random.RandomState, int], np.ndarray]]:
    a = np.asarray(coefs, dtype=np.float64)
    with np.errstate(divide="ignore"):
        log_a = np.log(a)

    def log_coefficient(n):
        n = np.asarray(n, dtype=np.int64)
        out = np.full(n.shape, -np.inf)
        ok = (n >= 0) & (n < a.size)
        out[ok] = log_a[n[ok]]
        return out

    def sample(rng, size):
        return rng.choice(a.size, size=int(size), p=a).astype(np.int64)

    return log_coefficient, sample


def _exp_log_coefficient(n):
    n = np.asarray(n, dtype=np.int64)
    return np.where(n >= 0, -1.0 - gammaln(np.maximum(n, 0) + 1.0), -np.inf)


def _exp_sample(rng, size):
    # a_n = e^{-1} / n!: the degree is Poisson(1)
    return rng.poisson(1.0, size=int(size)).astype(np.int64)


def _relu_dual(rho):
    rho = np.clip(rho, -1.0, 1.0)  # rounding can push averages of kernels just past +-1
    return (np.sqrt(1.0 - rho**2) + (pi - np.arccos(rho)) * rho) / pi


def _relu_log_b(k):
    """log b_k, b_k = C(2k, k) / (4^k (2k+1)(2k+2)): rho^{2k+2} coefficient of sqrt(1-rho^2) + rho arcsin(rho)."""
    k = np.asarray(k, dtype=np.float64)
    return gammaln(2 * k + 1) - 2 * gammaln(k + 1) - k * np.log(4.0) - np.log(2 * k + 1) - np.log(2 * k + 2)


def _relu_log_coefficient(n):
    # kappa_1(rho) = 1/pi + rho/2 + (1/pi) sum_k b_k rho^{2k+2}
    n = np.asarray(n, dtype=np.int64)
    out = np.full(n.shape, -np.inf)
    out[n == 0] = -np.log(pi)
    out[n == 1] = -np.log(2.0)
    even = (n >= 2) & (n % 2 == 0)
    out[even] = _relu_log_b((n[even] - 2) // 2) - np.log(pi)
    return out


_ZIPF_A = 2.5  # b_k ~ k^{-5/2} / (4 sqrt(pi)): a Zipf(2.5) proposal on k + 1 dominates it
_RELU_RATIO_MAX = 0.5  # sup_k b_k (k+1)^{5/2}, reached at k = 0 (checked in the tests)


def _relu_sample(rng, size):
    size = int(size)
    u = rng.uniform(size=size)
    n = np.where(u < 1.0 / pi, 0, 1).astype(np.int64)
    tail = u >= 1.0 / pi + 0.5  # probability (pi/2 - 1)/pi of an even degree >= 2
    need = int(tail.sum())
    ks = np.empty(0, dtype=np.int64)
    while ks.size < need:  # rejection sampling, acceptance ~ 85%, vectorized per round
        k = rng.zipf(_ZIPF_A, size=2 * (need - ks.size) + 8).astype(np.int64) - 1
        accept = rng.uniform(size=k.size) < np.exp(_relu_log_b(k) + _ZIPF_A * np.log(k + 1.0)) / _RELU_RATIO_MAX
        ks = np.concatenate([ks, k[accept]])
    n[tail] = 2 * ks[:need] + 2
    return n


ACTIVATIONS: dict[str, Activation] = {
    a.key: a
    for a in (
        Activation("linear", "Linear (identity)", r"\hat\sigma(\rho) = \rho",
                   lambda r: np.asarray(r, dtype=np.float64), *_table_activation((0.0, 1.0)), 1.0,
                   r"\sigma(z) = z"),
        Activation("polynomial", "Quadratic ((1+ρ)/2)²", r"\hat\sigma(\rho) = \left(\tfrac{1+\rho}{2}\right)^2",
                   lambda r: ((1.0 + np.asarray(r, dtype=np.float64)) / 2.0) ** 2,
                   *_table_activation((0.25, 0.5, 0.25)), 1.0,
                   r"\sigma(z) = \tfrac12 + \tfrac{z}{\sqrt2} + \tfrac{z^2 - 1}{2\sqrt2}"),
        Activation("exponential", "Exponential", r"\hat\sigma(\rho) = e^{\rho - 1} = \sum_{n\ge0} \frac{e^{-1}}{n!}\rho^n",
                   lambda r: np.exp(np.asarray(r, dtype=np.float64) - 1.0), _exp_log_coefficient, _exp_sample, 1.0,
                   r"\sigma(z) = e^{z - 1/2}\ (\text{normalized})"),
        Activation("relu", "ReLU (arc-cosine)",
                   r"\hat\sigma(\rho) = \frac{\sqrt{1-\rho^2} + (\pi - \arccos\rho)\,\rho}{\pi}",
                   _relu_dual, _relu_log_coefficient, _relu_sample, 1.0,
                   r"\sigma(z) = \sqrt{2}\max(0, z)"),
    )
}


def get_activation(key: str) -> Activation:
    """The :class:`Activation` of a key, or a ValueError listing the keys.

    Parameters
    ----------
    key : str
        A key of :data:`ACTIVATIONS`.

    Returns
    -------
    Activation
        Its entry.
    """
    return entry_of(ACTIVATIONS, key, "activation")


#: Bytes of one row of a tidy table built from Python dicts (the dict, its boxed values, the frame's copy):
#: a lower bound, so that a refused table could not have fit.
_TABLE_ROW_BYTES = 256


def _check_table_fits(n_keys: int, per_key: int, setting: str) -> None:
    """Refuse a table of n_keys * per_key rows beyond the memory budget, naming the largest ``setting``."""
    rows = max(n_keys, 1) * per_key
    require_memory({f"{rows:,} rows": (rows, _TABLE_ROW_BYTES)}, itemsize=1, what="This table",
                   hint=f"Lower {setting}.",
                   largest={setting: lambda k: nbytes((max(n_keys, 1) * k, _TABLE_ROW_BYTES), itemsize=1)})


def activation_curves(keys=None, n_points: int = 201) -> pd.DataFrame:
    """The dual activations on a grid of rho in [-1, 1]: one row per (activation, rho) with columns
    activation, label, rho, value.

    Parameters
    ----------
    keys : sequence of str, optional
        Activation keys (default: all).
    n_points : int, default=201
        Grid size.

    Returns
    -------
    pandas.DataFrame
        The tidy table described above.
    """
    keys = list(ACTIVATIONS) if keys is None else list(keys)
    n_points = check_int(n_points, "n_points")
    _check_table_fits(len(keys), n_points, "n_points")
    rho = np.linspace(-1.0, 1.0, n_points)
    return pd.DataFrame([{"activation": key, "label": get_activation(key).label, "rho": r, "value": v}
                         for key in keys for r, v in zip(rho, get_activation(key).dual(rho))])


def activation_table(keys=None, n_terms: int = 6) -> pd.DataFrame:
    """The first power-series coefficients a_n of each activation (one row per activation and n).

    Parameters
    ----------
    keys : sequence of str, optional
        Activation keys (default: all).
    n_terms : int, default=6
        Coefficients per activation.

    Returns
    -------
    pandas.DataFrame
        The tidy table described above.
    """
    keys = list(ACTIVATIONS) if keys is None else list(keys)
    n_terms = check_int(n_terms, "n_terms")
    _check_table_fits(len(keys), n_terms, "n_terms")
    rows = []
    for key in keys:
        for n, a in enumerate(ACTIVATIONS[key].coefficients(n_terms)):
            rows.append(dict(activation=key, n=n, a_n=float(a)))
    return pd.DataFrame(rows)
