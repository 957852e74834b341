r"""Probabilistic error bounds of the RK feature map (Lemmas 1-3 of Atarashi, Maji & Oyama, AAAI-19).

With :math:`\mathcal{E}(\mathbf{x}, \mathbf{y}) = \langle Z(\mathbf{x}), Z(\mathbf{y})\rangle - K_{\mathcal{S}}(\mathbf{x}, \mathbf{y})`
the approximation error of a D-dimensional RK map and
:math:`\mathbf{x}, \mathbf{y} \in \mathcal{B}_1(\mathbf{0}, R)` (L1 norm at most R, see :func:`l1_radius`):

* Lemma 1 (eq. 8), any family S, one pair:
  :math:`p(|\mathcal{E}| \ge \varepsilon) \le 2\exp\!\big(-D\varepsilon^2 / (2 e^{4R})\big)`.
* Lemma 2 (eq. 9), any family S, uniformly over a compact :math:`\mathcal{B} \subset \mathcal{B}_1(\mathbf{0}, R)`:
  :math:`p(\sup |\mathcal{E}| \ge \varepsilon) \le 2\big(32 R \sqrt{d e^{2R}} / \varepsilon\big)^{2d}
  \exp\!\big(-D\varepsilon^2 / (8 e^{4R})\big)`, where :math:`\sqrt{d e^{2R}} = \sqrt{d}\, e^{R}`.
* Lemma 3 (eq. 10), ANOVA kernel of order m, one pair:
  :math:`p(|\mathcal{E}| \ge \varepsilon) \le 2\exp\!\big(-D\varepsilon^2 / (2 R^{4m})\big)`.

Everything is evaluated in log space, so :math:`e^{4R}`, :math:`R^{4m}` and the
power :math:`(\cdot)^{2d}` never overflow: ``log_lemma*`` return the natural log of the
right-hand side as written (it may exceed log 1 = 0, where the bound is vacuous), and
``lemma*`` return ``exp`` of it, clipped at 1 by default (``clip=True``) because a
probability bound above 1 says nothing; pass ``clip=False`` for the raw value (which
may be ``inf``). All functions broadcast over numpy arrays.

The inverses ``min_components_lemma*`` give the smallest integer D with bound(D) <= delta,
from the closed form of the log bound, rounded up and then corrected by one step either
way so that ``log_bound(D) <= log(delta) < log_bound(D - 1)`` holds in floating point.
That property needs the log bounds of D and D - 1 to differ in float64, which fails above
about D = 1e10 (they differ by ~|log delta| / D, below their rounding): there D is
instead ceil(D*) with D* evaluated in 60-digit decimal arithmetic, the smallest integer
with bound(D) <= delta in exact arithmetic.

The bounds against a measured error study are :mod:`rkcore.theory.measured_tails`.
"""
from __future__ import annotations

import decimal

import numpy as np
import pandas as pd

from ..kernels.exact import check_array
from ..base.annotations import is_sparse
from ..base.validation import as_float_array, check_at_least_one, check_eps, check_positive

_LOG2 = np.log(2.0)
_LOG8 = np.log(8.0)
_LOG32 = np.log(32.0)

#: Below this, float64 log bounds of D and D - 1 differ reliably, so the +-1 correction of
#: the inverses is meaningful; above it D comes from the closed form in decimal arithmetic.
_EXACT_INTEGER_LIMIT = 1e10


# ------------------------------------------------------------------------- validation
def _check_delta(value) -> np.ndarray:
    arr = as_float_array(value, "delta", "the failure probability")
    bad = (arr <= 0) | (arr >= 1)
    if bad.any():
        first = float(arr[bad].flat[0]) if arr.ndim else float(arr)
        raise ValueError(f"delta (the failure probability) must lie strictly between 0 and 1, got {first!r}.")
    return arr


def _check_D(n_components) -> np.ndarray:
    # Real D >= 1 is accepted so that bounds can be drawn as continuous curves in D.
    return check_at_least_one(n_components, "n_components", "D, the number of random features", integer=False)


def _check_R(R) -> np.ndarray:
    return check_positive(R, "R", "the bound on the L1 norm of the inputs")


def _check_d(d) -> np.ndarray:
    return check_at_least_one(d, "d", "the number of original features", integer=True)


def _check_degree(degree) -> np.ndarray:
    return check_at_least_one(degree, "degree", "the ANOVA order m", integer=True)


def _scalar_or_array(arr: np.ndarray):
    return arr[()] if arr.ndim == 0 else arr


def _clip(log_value: np.ndarray, clip: bool):
    with np.errstate(over="ignore"):
        value = np.exp(log_value)
    if clip:
        value = np.minimum(value, 1.0)
    return _scalar_or_array(value)


# ------------------------------------------------------------------------- lemmas 1 and 3
def _log_pointwise(D, eps, log_scale):
    """log of 2 exp(-D eps^2 / (2 s)), the form of Lemmas 1 (s = e^{4R}) and 3 (s = R^{4m}), with log s given."""
    # D eps^2 / (2 s) as exp of its log: e^{4R} alone overflows for R > 177, R^{4m} for large m (R > 1)
    with np.errstate(over="ignore"):
        return _LOG2 - np.exp(np.log(D) + 2.0 * np.log(eps) - _LOG2 - log_scale)


def _log_lemma1(D, eps, R):
    with np.errstate(over="ignore"):  # 4R itself overflows past R = 4.5e307 (then the bound is 0, its log -inf)
        return _log_pointwise(D, eps, 4.0 * R)


def _log_lemma3(D, eps, R, m):
    with np.errstate(over="ignore"):  # so may 4m log R, for huge m
        return _log_pointwise(D, eps, 4.0 * m * np.log(R))


# ------------------------------------------------------------------------- lemma 1
def log_lemma1(n_components, eps, R):
    r"""Natural log of the Lemma 1 bound (eq. 8): :math:`\log 2 - D\varepsilon^2 / (2e^{4R})`.

    Not clipped: values above 0 mean the bound (a probability) is vacuous.
    ``-inf`` only when the true value is below the float range.

    Parameters
    ----------
    n_components : int or array-like of int
        D, the number of random features (>= 1).
    eps : float or array-like
        The error threshold (> 0).
    R : float or array-like
        L1 radius of the data (> 0; see :func:`l1_radius`).

    Returns
    -------
    float or numpy.ndarray
        The natural log of the right-hand side (> 0 where the bound is vacuous).
    """
    D, eps, R = _check_D(n_components), check_eps(eps), _check_R(R)
    return _scalar_or_array(_log_lemma1(D, eps, R))


def lemma1(n_components, eps, R, *, clip: bool = True):
    r"""Lemma 1 (eq. 8): :math:`p(|\mathcal{E}(\mathbf{x},\mathbf{y})| \ge \varepsilon) \le 2\exp(-D\varepsilon^2/(2e^{4R}))`.

    For any itemset family and any x, y with L1 norm at most R. ``clip=True`` caps the
    value at 1 (a larger probability bound is vacuous).

    >>> round(float(lemma1(1000, 0.2, 0.5)), 4)
    0.1335

    Parameters
    ----------
    n_components : int or array-like of int
        D, the number of random features (>= 1).
    eps : float or array-like
        The error threshold (> 0).
    R : float or array-like
        L1 radius of the data (> 0; see :func:`l1_radius`).
    clip : bool, default=True
        Clip the bound at 1 (a larger bound says nothing).

    Returns
    -------
    float or numpy.ndarray
        The bound on the tail probability (broadcast over the arguments).
    """
    return _clip(log_lemma1(n_components, eps, R), clip)


# ------------------------------------------------------------------------- lemma 2
def _log_lemma2_prefactor(eps, R, d):
    # log of 2 (32 R sqrt(d) e^R / eps)^{2d}
    return _LOG2 + 2.0 * d * (_LOG32 + np.log(R) + 0.5 * np.log(d) + R - np.log(eps))


def _log_lemma2(D, eps, R, d):
    with np.errstate(over="ignore"):
        decay = np.exp(np.log(D) + 2.0 * np.log(eps) - _LOG8 - 4.0 * R)
    return _log_lemma2_prefactor(eps, R, d) - decay


def log_lemma2(n_components, eps, R, d):
    r"""Natural log of the Lemma 2 bound (eq. 9):
    :math:`\log 2 + 2d \log\big(32 R \sqrt{d}\, e^{R}/\varepsilon\big) - D\varepsilon^2/(8e^{4R})`.

    Not clipped (often far above 0 for small D: the uniform bound needs many features).

    Parameters
    ----------
    n_components : int or array-like of int
        D, the number of random features (>= 1).
    eps : float or array-like
        The error threshold (> 0).
    R : float or array-like
        L1 radius of the data (> 0; see :func:`l1_radius`).
    d : int or array-like of int
        Number of features.

    Returns
    -------
    float or numpy.ndarray
        The natural log of the right-hand side (> 0 where the bound is vacuous).
    """
    D, eps, R, d = _check_D(n_components), check_eps(eps), _check_R(R), _check_d(d)
    return _scalar_or_array(_log_lemma2(D, eps, R, d))


def lemma2(n_components, eps, R, d, *, clip: bool = True):
    r"""Lemma 2 (eq. 9): uniform bound
    :math:`p(\sup_{\mathbf{x},\mathbf{y}\in\mathcal{B}} |\mathcal{E}| \ge \varepsilon) \le
    2\big(32R\sqrt{de^{2R}}/\varepsilon\big)^{2d}\exp\big(-D\varepsilon^2/(8e^{4R})\big)`.

    ``clip=True`` caps the value at 1; with ``clip=False`` it may be ``inf``.

    Parameters
    ----------
    n_components : int or array-like of int
        D, the number of random features (>= 1).
    eps : float or array-like
        The error threshold (> 0).
    R : float or array-like
        L1 radius of the data (> 0; see :func:`l1_radius`).
    d : int or array-like of int
        Number of features.
    clip : bool, default=True
        Clip the bound at 1 (a larger bound says nothing).

    Returns
    -------
    float or numpy.ndarray
        The bound on the tail probability (broadcast over the arguments).
    """
    return _clip(log_lemma2(n_components, eps, R, d), clip)


# ------------------------------------------------------------------------- lemma 3
def log_lemma3(n_components, eps, R, degree):
    r"""Natural log of the Lemma 3 bound (eq. 10): :math:`\log 2 - D\varepsilon^2/(2R^{4m})`.

    ``-inf`` only when the true value is below the float range (tiny R, large m).

    Parameters
    ----------
    n_components : int or array-like of int
        D, the number of random features (>= 1).
    eps : float or array-like
        The error threshold (> 0).
    R : float or array-like
        L1 radius of the data (> 0; see :func:`l1_radius`).
    degree : int or array-like of int
        The ANOVA order m.

    Returns
    -------
    float or numpy.ndarray
        The natural log of the right-hand side (> 0 where the bound is vacuous).
    """
    D, eps, R, m = _check_D(n_components), check_eps(eps), _check_R(R), _check_degree(degree)
    return _scalar_or_array(_log_lemma3(D, eps, R, m))


def lemma3(n_components, eps, R, degree, *, clip: bool = True):
    r"""Lemma 3 (eq. 10), ANOVA kernel of order m = ``degree``:
    :math:`p(|\mathcal{E}| \ge \varepsilon) \le 2\exp(-D\varepsilon^2/(2R^{4m}))`.

    ``clip=True`` caps the value at 1.

    Parameters
    ----------
    n_components : int or array-like of int
        D, the number of random features (>= 1).
    eps : float or array-like
        The error threshold (> 0).
    R : float or array-like
        L1 radius of the data (> 0; see :func:`l1_radius`).
    degree : int or array-like of int
        The ANOVA order m.
    clip : bool, default=True
        Clip the bound at 1 (a larger bound says nothing).

    Returns
    -------
    float or numpy.ndarray
        The bound on the tail probability (broadcast over the arguments).
    """
    return _clip(log_lemma3(n_components, eps, R, degree), clip)


# ------------------------------------------------------------------------- inverses
def _decimal_ceil(D_star_decimal, *params) -> np.ndarray:
    """ceil(D*) element-wise with D* from ``D_star_decimal(*floats)`` in 60-digit decimals
    (inf beyond the float64 range)."""
    arrays = np.broadcast_arrays(*params)
    out = np.empty(arrays[0].shape, dtype=object)
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        for idx in np.ndindex(out.shape):
            value = D_star_decimal(*(decimal.Decimal(float(a[idx])) for a in arrays))
            out[idx] = max(1, int(value.to_integral_value(rounding=decimal.ROUND_CEILING)))
    return out  # Python ints: exact beyond 2**53


def _smallest_D(log_D_star: np.ndarray, log_bound, log_delta: np.ndarray, exact_D=None):
    """ceil(D*) (at least 1), corrected by one step so that log_bound(D) <= log_delta < log_bound(D - 1).

    ``log_bound(D)`` evaluates the log bound at the broadcast parameters. The closed form
    is exact in real arithmetic; the correction absorbs rounding in exp/log. Where D is
    beyond _EXACT_INTEGER_LIMIT, ``exact_D()`` (decimal arithmetic) gives it instead.
    """
    with np.errstate(over="ignore"):
        D = np.maximum(1.0, np.ceil(np.exp(log_D_star)))
    large = (D >= _EXACT_INTEGER_LIMIT) & np.isfinite(log_D_star) & (log_D_star < 700)
    if exact_D is not None and large.any():
        exact_ints = exact_D()
        if D.ndim == 0:
            return int(exact_ints[()])  # a Python int, exact beyond 2**53
        D = np.where(large, exact_ints.astype(np.float64), D)
    exact = D < _EXACT_INTEGER_LIMIT
    if exact.any():
        too_small = exact & (log_bound(D) > log_delta)
        D = np.where(too_small, D + 1.0, D)
        lower = np.maximum(D - 1.0, 1.0)
        can_lower = exact & (D > 1.0) & (log_bound(lower) <= log_delta)
        D = np.where(can_lower, lower, D)
    if D.ndim == 0:
        return int(D) if np.isfinite(D) else float(D)
    return D


def _min_components_pointwise(eps, delta, log_scale, log_bound, decimal_scale, scale_params):
    """Smallest integer D with Lemma 1's or 3's bound <= delta: D = ceil(2 s log(2/delta) / eps^2).

    ``log_scale`` is log s (4R, or 4m log R), ``log_bound(D)`` the lemma's log bound at the broadcast
    parameters, and ``decimal_scale(*scale_params)`` s in decimal arithmetic (for D beyond
    _EXACT_INTEGER_LIMIT).
    """
    log_delta = np.log(delta)
    log_D = _LOG2 + log_scale + np.log(np.log(2.0 / delta)) - 2.0 * np.log(eps)

    def exact():
        return _decimal_ceil(lambda e, dl, *p: 2 * decimal_scale(*p) * (2 / dl).ln() / (e * e), eps, delta,
                             *scale_params)

    return _smallest_D(log_D, log_bound, log_delta, exact)


def min_components_lemma1(eps, delta, R):
    r"""Smallest integer D with Lemma 1's bound <= delta:
    :math:`D = \lceil 2 e^{4R} \log(2/\delta) / \varepsilon^2 \rceil`.

    Returns a Python int for scalar input (``float('inf')`` beyond the float range), a
    float64 array of whole numbers for array input (float, so values above 2**63 fit).

    Parameters
    ----------
    eps : float or array-like
        The error threshold (> 0).
    delta : float or array-like
        The failure probability to reach, in (0, 1).
    R : float or array-like
        L1 radius of the data (> 0; see :func:`l1_radius`).

    Returns
    -------
    int or numpy.ndarray of int
        The smallest D with bound(D) <= delta.
    """
    eps, delta, R = check_eps(eps), _check_delta(delta), _check_R(R)
    eps, delta, R = np.broadcast_arrays(eps, delta, R)
    return _min_components_pointwise(eps, delta, 4.0 * R, lambda D: _log_lemma1(D, eps, R), lambda r: (4 * r).exp(),
                                     (R,))


def min_components_lemma2(eps, delta, R, d):
    r"""Smallest integer D with Lemma 2's bound <= delta:
    :math:`D = \lceil 8 e^{4R} \big(\log(2/\delta) + 2d\log(32R\sqrt{d}\,e^R/\varepsilon)\big) / \varepsilon^2 \rceil`
    (1 when the bracket is <= 0). Return types as :func:`min_components_lemma1`.

    Parameters
    ----------
    eps : float or array-like
        The error threshold (> 0).
    delta : float or array-like
        The failure probability to reach, in (0, 1).
    R : float or array-like
        L1 radius of the data (> 0; see :func:`l1_radius`).
    d : int or array-like of int
        Number of features.

    Returns
    -------
    int or numpy.ndarray of int
        The smallest D with bound(D) <= delta.
    """
    eps, delta, R, d = check_eps(eps), _check_delta(delta), _check_R(R), _check_d(d)
    eps, delta, R, d = np.broadcast_arrays(eps, delta, R, d)
    log_delta = np.log(delta)
    bracket = _log_lemma2_prefactor(eps, R, d) - log_delta  # = log(2/delta) + 2d log(...)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_D = np.where(bracket > 0, _LOG8 + 4.0 * R - 2.0 * np.log(eps) + np.log(bracket), -np.inf)

    def exact():  # numpydoc ignore=GL08
        def D_star(e, dl, r, dd):  # numpydoc ignore=GL08
            bracket = (2 / dl).ln() + 2 * dd * (32 * r * dd.sqrt() * r.exp() / e).ln()
            return 8 * (4 * r).exp() * bracket / (e * e) if bracket > 0 else bracket * 0 + 1
        return _decimal_ceil(D_star, eps, delta, R, d)

    return _smallest_D(log_D, lambda D: _log_lemma2(D, eps, R, d), log_delta, exact)


def min_components_lemma3(eps, delta, R, degree):
    r"""Smallest integer D with Lemma 3's bound <= delta:
    :math:`D = \lceil 2 R^{4m} \log(2/\delta) / \varepsilon^2 \rceil`.
    Return types as :func:`min_components_lemma1`.

    Parameters
    ----------
    eps : float or array-like
        The error threshold (> 0).
    delta : float or array-like
        The failure probability to reach, in (0, 1).
    R : float or array-like
        L1 radius of the data (> 0; see :func:`l1_radius`).
    degree : int or array-like of int
        The ANOVA order m.

    Returns
    -------
    int or numpy.ndarray of int
        The smallest D with bound(D) <= delta.
    """
    eps, delta, R, m = check_eps(eps), _check_delta(delta), _check_R(R), _check_degree(degree)
    eps, delta, R, m = np.broadcast_arrays(eps, delta, R, m)
    return _min_components_pointwise(eps, delta, 4.0 * m * np.log(R), lambda D: _log_lemma3(D, eps, R, m),
                                     lambda r, mm: r ** (4 * mm), (R, m))


# ------------------------------------------------------------------------- data
def l1_radius(X) -> float:
    r"""R = max_i ||x_i||_1, the smallest R with every row in :math:`\mathcal{B}_1(\mathbf{0}, R)`.

    X is a dense array or a scipy.sparse matrix of shape (n_samples, n_features).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The data.

    Returns
    -------
    float
        max_i ||x_i||_1.
    """
    X = check_array(X)
    with np.errstate(over="ignore"):  # an overflowing sum is refused below, not passed on as inf
        radius = float(abs(X).sum(axis=1).max()) if is_sparse(X) else float(np.abs(X).sum(axis=1).max())
    if not np.isfinite(radius):
        raise ValueError("The L1 radius max_i ||x_i||_1 exceeds the largest float64 (1.8e308): a row's absolute "
                         "values sum past it. Rescale X (the paper L1-normalizes rows, R = 1).")
    return radius


def bounds_table(n_components, eps, R, d=None, degree=None) -> pd.DataFrame:
    """Tidy table of the bounds over a grid: one row per (lemma, n_components, eps).

    Columns: lemma ("lemma1", "lemma2", "lemma3"), n_components, eps, R, log_bound,
    bound (clipped at 1). Lemma 2 needs ``d`` and Lemma 3 needs ``degree``; a lemma whose
    parameter is None is left out. ``n_components`` and ``eps`` may be 1-D sequences.

    Parameters
    ----------
    n_components : int or sequence of int
        D, the number of random features (>= 1).
    eps : float or sequence of float
        The error threshold (> 0).
    R : float
        L1 radius of the data (> 0).
    d : int, optional
        Number of features (Lemma 2 is left out without it).
    degree : int, optional
        The ANOVA order (Lemma 3 is left out without it).

    Returns
    -------
    pandas.DataFrame
        The tidy table described above.
    """
    D = np.atleast_1d(_check_D(n_components)).ravel()
    E = np.atleast_1d(check_eps(eps)).ravel()
    R = float(_check_R(R))
    DD, EE = (a.ravel() for a in np.meshgrid(D, E, indexing="ij"))
    logs = {"lemma1": _log_lemma1(DD, EE, R)}
    if d is not None:
        logs["lemma2"] = _log_lemma2(DD, EE, R, float(_check_d(d)))
    if degree is not None:
        logs["lemma3"] = _log_lemma3(DD, EE, R, float(_check_degree(degree)))
    frames = [
        pd.DataFrame({"lemma": name, "n_components": DD, "eps": EE, "R": R,
                      "log_bound": lv, "bound": np.minimum(np.exp(np.minimum(lv, 0.0)), 1.0)})
        for name, lv in logs.items()
    ]
    return pd.concat(frames, ignore_index=True)
