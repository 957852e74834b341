r"""Foundations: explicit feature expansions, the kernel trick, random Fourier features, random projections.

Follows D. Hsu, *Features* (COMS 4771 lecture notes, 2015), /work/shared/papers/features-kernel-trick-notes.md:

* Section 1.1 (the kernel trick): explicit degree-<=2 features with
  :math:`\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = (1 + \langle\mathbf{x}, \mathbf{y}\rangle)^2`
  (:func:`polynomial_features`, any degree and offset c), the interaction-only (ANOVA) variant
  (:func:`interaction_features`) and the :math:`2^d` all-subsets products with
  :math:`\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = \prod_j (1 + x_j y_j)` (:func:`all_subsets_features`);
  :func:`kernel_trick_timing` measures explicit features against kernel evaluation as d grows.
* Section 2 (random Fourier features for the Gaussian kernel): thin wrappers over scikit-learn's
  ``RBFSampler`` / ``rbf_kernel`` and the error study :func:`rff_error_curve`.
* Section 3 (dimensionality reduction): Gaussian and sparse random projections from
  ``sklearn.random_projection``, the Theorem 1 band (:func:`theorem1_band`) and the distortion
  study :func:`projection_distortion`.

Everything returns arrays or tidy DataFrames (one row per observation).
"""
from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from math import comb
from typing import Callable

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.spatial.distance import pdist
from scipy.special import gammaln
from scipy.stats import chi2
from sklearn.exceptions import DataDimensionalityWarning
from sklearn.kernel_approximation import RBFSampler
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import PolynomialFeatures
from sklearn.random_projection import GaussianRandomProjection, SparseRandomProjection

from ..base.arrays import dense
from ..metrics import CURVE_METRICS
from ..studies.gram import gram_errors
from ..kernels.itemsets import ItemsetFamily
from ..base.limits import check_allocation, require_memory
from ..kernels.exact import all_subsets_kernel, anova_kernel, check_array, explicit_features, polynomial_kernel
from ..base.validation import check_int

#: all_subsets_features refuses d above this (2^d columns).
MAX_SUBSETS_D = 20

#: kernel_trick_timing refuses explicit feature matrices larger than this (bytes).
MAX_EXPLICIT_BYTES = 256 * 2**20


def _checked_dense(X) -> np.ndarray:
    return dense(check_array(X))


def _check_positive(value, name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}.") from None
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}.")
    return v


def _int_list(values, name: str) -> list[int]:
    try:
        out = [check_int(v, f"each value of {name}") for v in values]
    except TypeError:
        raise ValueError(f"{name} must be a list of positive integers, got {values!r}.") from None
    if not out:
        raise ValueError(f"{name} is empty; give at least one value.")
    return out


# ============================================================================ explicit features
def polynomial_features(X, degree: int = 2, c: float = 1.0) -> np.ndarray:
    r"""Explicit features with :math:`\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = (c + \langle\mathbf{x}, \mathbf{y}\rangle)^m`.

    By the multinomial theorem, :math:`(c + \langle x, y\rangle)^m = \sum_{|\alpha| \le m}
    \frac{m!}{\alpha!\,(m - |\alpha|)!} c^{m-|\alpha|} x^\alpha y^\alpha`, so
    :math:`\phi_\alpha(x) = \sqrt{m!\, c^{m-|\alpha|} / (\alpha!\,(m-|\alpha|)!)}\; x^\alpha` over all
    monomials of degree <= m. For m = 2, c = 1 these are the notes' features
    :math:`(1, \sqrt2 x_j, x_j^2, \sqrt2 x_j x_k)`: :math:`\binom{d+2}{2} = 1 + 2d + \binom{d}{2}` columns.
    The monomials come from scikit-learn's ``PolynomialFeatures`` (same column order).
    """
    X = _checked_dense(X)
    m = check_int(degree, "degree")
    c = float(c)
    if not np.isfinite(c) or c < 0:
        raise ValueError(f"c must be a finite number >= 0, got {c!r}.")
    n, d = X.shape
    n_out = comb(d + m, m)
    # sklearn builds the output and, for the scales, the (columns x d) exponent table powers_
    require_memory({"the features": (n, n_out), "their exponent table": (n_out, d)}, what="polynomial_features",
                   hint=f"{d:,} columns at degree {m} give {n_out:,} monomials; use fewer columns or the kernel "
                        "(rkcore.kernels.exact.polynomial_kernel), which costs O(d) per pair.")
    poly = PolynomialFeatures(degree=m, include_bias=True)
    F = poly.fit_transform(X)
    return F * _polynomial_scales(poly.powers_, m, c)


def _polynomial_scales(powers: np.ndarray, m: int, c: float) -> np.ndarray:
    total = powers.sum(axis=1)
    log_coef = gammaln(m + 1) - gammaln(powers + 1).sum(axis=1) - gammaln(m - total + 1)
    with np.errstate(divide="ignore"):
        log_c = (m - total) * np.log(c) if c > 0 else np.where(total == m, 0.0, -np.inf)
    return np.exp(0.5 * (log_coef + log_c))


def polynomial_feature_names(d: int, degree: int = 2, c: float = 1.0) -> list[str]:
    """Readable names of the :func:`polynomial_features` columns, e.g. ``"1.414*x0*x1"``."""
    d = check_int(d, "d")
    m = check_int(degree, "degree")
    n_out = comb(d + m, m)
    require_memory({"the names' exponent table": (n_out, d)}, what="polynomial_feature_names",
                   hint="Use fewer features or a lower degree.")
    poly = PolynomialFeatures(degree=m, include_bias=True).fit(np.zeros((1, d)))
    scales = _polynomial_scales(poly.powers_, m, float(c))
    names = poly.get_feature_names_out([f"x{j}" for j in range(d)])
    return [f"{s:.4g}*{n.replace(' ', '*')}" if n != "1" else f"{s:.4g}" for s, n in zip(scales, names)]


def interaction_features(X, degree: int = 2, lower_orders: bool = False) -> np.ndarray:
    r"""Interaction-only products :math:`\prod_{j\in V} x_j` over itemsets V of size ``degree``
    (ANOVA kernel :math:`K_A^m`), or of size 0..degree with ``lower_orders`` (up-to-m kernel).

    :math:`\binom{d}{m}` columns (:math:`\sum_{k\le m}\binom{d}{k}` with lower orders): no squares, no
    scaling, so :math:`\langle\phi(x), \phi(y)\rangle = \sum_{|V| = m} \prod_{j \in V} x_j y_j`.
    """
    X = _checked_dense(X)
    d = X.shape[1]
    m = check_int(degree, "degree")
    if m > d:
        raise ValueError(f"degree={m} exceeds the number of features d={d}; allowed 1 <= degree <= d.")
    family = ItemsetFamily.up_to(d, m) if lower_orders else ItemsetFamily.anova(d, m)
    check_allocation("The interaction features", (X.shape[0], family.n_itemsets),
                     hint="Use fewer columns or a lower degree, or the kernel (rkcore.kernels.exact.anova_kernel).")
    return explicit_features(X, family)


def all_subsets_features(X) -> np.ndarray:
    r"""All :math:`2^d` subset products :math:`\phi_S(\mathbf{x}) = \prod_{i \in S} x_i`, S ⊆ [d].

    :math:`\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = \prod_{i=1}^d (1 + x_i y_i)` (notes, Section 1.1).
    Refuses d > :data:`MAX_SUBSETS_D`.
    """
    X = _checked_dense(X)
    d = X.shape[1]
    if d > MAX_SUBSETS_D:
        raise ValueError(f"all_subsets_features lists 2^d columns; d={d} is too many (allowed d <= {MAX_SUBSETS_D}). "
                         "Use rkcore.kernels.exact.all_subsets_kernel, which costs O(d) per pair.")
    return explicit_features(X, ItemsetFamily.all_subsets(d))


@dataclass(frozen=True)
class Expansion:
    """An explicit feature expansion and the kernel it realizes."""

    key: str
    label: str
    feature_latex: str
    kernel_latex: str
    n_features: Callable[[int, int], int]          # (d, degree) -> number of columns
    features: Callable[[np.ndarray, int], np.ndarray]  # (X, degree) -> phi(X)
    kernel: Callable[[np.ndarray, np.ndarray, int], np.ndarray]  # (X, Y, degree) -> Gram
    max_d: int | None = None


EXPANSIONS: dict[str, Expansion] = {
    e.key: e
    for e in (
        Expansion("polynomial", "Polynomial (1 + ⟨x, y⟩)^m",
                  r"\phi(\mathbf{x}) = \big(1, \sqrt2 x_1, \dots, \sqrt2 x_d, x_1^2, \dots, x_d^2, \sqrt2 x_1x_2, \dots, \sqrt2 x_{d-1}x_d\big)",
                  r"\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = (1 + \langle\mathbf{x}, \mathbf{y}\rangle)^{m}",
                  lambda d, m: comb(d + m, m),
                  lambda X, m: polynomial_features(X, m, 1.0),
                  lambda X, Y, m: polynomial_kernel(X, Y, m, 1.0)),
        Expansion("interactions", "Interactions only (ANOVA)",
                  r"\phi(\mathbf{x}) = \big(x_{j_1} \cdots x_{j_m}\big)_{j_1 < \dots < j_m}",
                  r"\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = K_A^{m}(\mathbf{x}, \mathbf{y}) = \sum_{j_1<\dots<j_m}\prod_{k} x_{j_k} y_{j_k}",
                  lambda d, m: comb(d, m),
                  lambda X, m: interaction_features(X, m),
                  lambda X, Y, m: anova_kernel(X, Y, m)),
        Expansion("all_subsets", "All subsets (2^d products)",
                  r"\phi(\mathbf{x}) = \Big(\prod_{i \in S} x_i\Big)_{S \subseteq [d]}",
                  r"\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = \prod_{i=1}^{d} (1 + x_i y_i)",
                  lambda d, m: 2**d,
                  lambda X, m: all_subsets_features(X),
                  lambda X, Y, m: all_subsets_kernel(X, Y),
                  max_d=MAX_SUBSETS_D),
    )
}


def get_expansion(key: str) -> Expansion:
    try:
        return EXPANSIONS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown expansion {key!r}; allowed: {', '.join(map(repr, EXPANSIONS))}.") from None


def n_explicit_features(kind: str, d: int, degree: int = 2) -> int:
    """Number of columns of the explicit expansion ``kind`` over d features."""
    return int(get_expansion(kind).n_features(check_int(d, "d"), check_int(degree, "degree")))


def feature_count_table(d_list=(2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), degree: int = 2,
                        max_subsets_d: int = 64) -> pd.DataFrame:
    """Columns of each explicit expansion vs d, next to the d numbers the kernel trick reads.

    The all-subsets count 2^d is listed up to ``max_subsets_d`` only (beyond, it dwarfs
    every other curve of a chart). Tidy: one row per (kind, d) with columns kind, d,
    n_features (float: 2^d overflows int64).
    """
    d_list = _int_list(d_list, "d_list")
    m = check_int(degree, "degree")
    rows = []
    for d in d_list:
        for key, e in EXPANSIONS.items():
            if (key == "interactions" and m > d) or (key == "all_subsets" and d > max_subsets_d):
                continue
            count = e.n_features(d, m)
            rows.append(dict(kind=key, d=d, n_features=float(count)))
        rows.append(dict(kind="kernel trick", d=d, n_features=d))
    return pd.DataFrame(rows)


def _timed(fn, repeats: int) -> list[float]:
    fn()  # warm-up: first-call allocations and BLAS thread start-up are not the method's cost
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def kernel_trick_timing(kind: str = "polynomial", d_list=(2, 4, 8, 16, 32, 64), n: int = 100, degree: int = 2,
                        repeats: int = 3, seed: int = 0) -> pd.DataFrame:
    r"""Time the Gram matrix of n points two ways as d grows: explicit features vs the kernel trick.

    *explicit*: :math:`\Phi = \phi(X)` then :math:`\Phi\Phi^\top` (cost ~ n² · #features);
    *kernel*: the closed form, e.g. :math:`(1 + XX^\top)^m` (cost ~ n² · d). Data: N(0, 1/d)
    entries (seeded) so kernel values stay O(1). Tidy: one row per (d, method, repeat) with
    columns kind, d, method, n_features, n, repeat, seconds. Timings are wall-clock and noisy
    on a shared machine; compare the two methods' *growth* in d, not single numbers.
    """
    exp = get_expansion(kind)
    d_list = _int_list(d_list, "d_list")
    n = check_int(n, "n")
    m = check_int(degree, "degree")
    repeats = check_int(repeats, "repeats")
    for d in d_list:
        if exp.max_d is not None and d > exp.max_d:
            raise ValueError(f"d={d} is too large for the {exp.label} expansion (allowed d <= {exp.max_d}).")
        if kind == "interactions" and m > d:
            raise ValueError(f"d={d} is smaller than the degree m={m}; the ANOVA features need d >= m.")
        F = exp.n_features(d, m)
        if 8 * n * F > MAX_EXPLICIT_BYTES:
            raise ValueError(f"d={d}: the explicit features would be {n} x {F:,} floats "
                             f"({8 * n * F / 2**20:,.0f} MB, more than {MAX_EXPLICIT_BYTES / 2**20:.0f} MB); "
                             "lower d or n.")
    # both methods build the n x n Gram matrix (plus one temporary of the same size)
    require_memory({"the data X": (n, max(d_list)), "two n x n Gram matrices": (2, n, n)}, what="kernel_trick_timing",
                   hint=f"Lower n (n={n:,} points give an n x n Gram matrix).")
    rng = np.random.RandomState(seed)
    rows = []
    for d in d_list:
        X = rng.standard_normal((n, d)) / np.sqrt(d)
        F = exp.n_features(d, m)

        def explicit():
            P = exp.features(X, m)
            return P @ P.T

        def kernel():
            return exp.kernel(X, X, m)

        for method, fn in (("explicit features", explicit), ("kernel trick", kernel)):
            for r, t in enumerate(_timed(fn, repeats)):
                rows.append(dict(kind=kind, d=d, method=method, n_features=F if method == "explicit features" else d,
                                 n=n, repeat=r, seconds=t))
    return pd.DataFrame(rows)


# ============================================================================ Gaussian kernel, RFF
def gamma_from_sigma(sigma: float) -> float:
    r"""Bandwidth σ of :math:`\exp(-\|x-y\|^2/(2\sigma^2))` to scikit-learn's γ = 1/(2σ²)."""
    return 1.0 / (2.0 * _check_positive(sigma, "sigma") ** 2)


def median_heuristic_gamma(X) -> float:
    """γ = 1 / (2 median²) with the median of the pairwise distances (a common default bandwidth)."""
    X = _checked_dense(X)
    if X.shape[0] < 2:
        raise ValueError("The median heuristic needs at least 2 points.")
    med = float(np.median(pdist(X)))
    if med <= 0:
        raise ValueError("All points coincide: the median pairwise distance is 0, no bandwidth can be derived.")
    return 1.0 / (2.0 * med**2)


def gaussian_kernel(X, Y=None, gamma: float = 1.0) -> np.ndarray:
    r""":math:`K(\mathbf{x}, \mathbf{y}) = \exp(-\gamma\|\mathbf{x}-\mathbf{y}\|^2)` (scikit-learn ``rbf_kernel``)."""
    return rbf_kernel(_checked_dense(X), None if Y is None else _checked_dense(Y), gamma=_check_positive(gamma, "gamma"))


def rff_features(X, gamma: float = 1.0, n_components: int = 100, random_state=None) -> np.ndarray:
    r"""Random Fourier features :math:`z(\mathbf{x}) = \sqrt{2/D}\,\cos(W\mathbf{x} + \mathbf{b})`,
    :math:`W_{ij} \sim \mathcal{N}(0, 2\gamma)`, :math:`b \sim \mathcal{U}[0, 2\pi)` (scikit-learn ``RBFSampler``).

    The notes pair cos and sin of the same ω; the random phase b gives the same expectation
    :math:`\mathbb{E}\langle z(x), z(y)\rangle = e^{-\gamma\|x-y\|^2}` with one column per ω.
    """
    X = _checked_dense(X)
    D = check_int(n_components, "n_components")
    require_memory({"the random weights": (X.shape[1], D), "the features": (X.shape[0], D)}, what="rff_features",
                   hint="Lower n_components (D) or the number of rows.")
    sampler = RBFSampler(gamma=_check_positive(gamma, "gamma"), n_components=D, random_state=random_state)
    return sampler.fit_transform(X)


def kernel_errors(K: np.ndarray, K_hat: np.ndarray) -> dict[str, float]:
    """The curves' metrics (:data:`rkcore.metrics.CURVE_METRICS`: rel_fro, max_abs_error, mean_abs_error) out
    of :func:`rkcore.studies.gram.gram_errors` (the one definition)."""
    errors = gram_errors(K, K_hat)
    return {key: errors[key] for key in CURVE_METRICS}


def rff_error_curve(X, gamma: float = 1.0, D_list=(16, 32, 64, 128, 256, 512, 1024), trials: int = 5,
                    seed: int = 0) -> pd.DataFrame:
    """Gaussian-kernel approximation error of random Fourier features vs D.

    Trial t fits one ``RBFSampler`` with D_max = max(D_list) features (random_state = seed + t);
    the D-feature map is its first D columns rescaled by sqrt(D_max / D). The columns are i.i.d.,
    so this has exactly the distribution of a fresh D-feature sampler, and the Gram estimates for
    all D come from one pass of running sums (curves over D are coupled within a trial).

    Tidy: one row per (D, trial, metric) with metric in {rel_fro, max_abs_error, mean_abs_error}
    (see :func:`kernel_errors`).
    """
    X = _checked_dense(X)
    gamma = _check_positive(gamma, "gamma")
    D_list = sorted(set(_int_list(D_list, "D_list")))
    trials = check_int(trials, "trials")
    n = X.shape[0]
    require_memory({"K, its estimate and the error": (3, n, n), "the features Z": (n, D_list[-1])},
                   what="rff_error_curve", hint="Use fewer rows or a smaller largest D.")
    K = rbf_kernel(X, gamma=gamma)
    D_max = D_list[-1]
    rows = []
    for t in range(trials):
        Z = rff_features(X, gamma, D_max, random_state=seed + t) * np.sqrt(D_max)  # unscaled sqrt(2) cos(...)
        G = np.zeros_like(K)
        start = 0
        for D in D_list:
            block = Z[:, start:D]
            G += block @ block.T
            start = D
            for metric, value in kernel_errors(K, G / D).items():
                rows.append(dict(D=D, trial=t, metric=metric, value=value))
    return pd.DataFrame(rows)


# ============================================================================ random projections
def theorem1_band(m, delta: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    r"""Notes, Theorem 1: with :math:`A = Z/\sqrt m`, Z i.i.d. N(0, 1), for a fixed v, with probability >= 1 - δ

    .. math::
        1 - 2\sqrt{\tfrac{\ln(2/\delta)}{m}} \;\le\; \frac{\|A\mathbf{v}\|^2}{\|\mathbf{v}\|^2}
        \;\le\; 1 + 2\sqrt{\tfrac{\ln(2/\delta)}{m}} + \tfrac{2\ln(2/\delta)}{m}.

    Returns (lower, upper) as arrays shaped like m (the lower bound may be negative: vacuous).
    """
    m = np.asarray(m, dtype=np.float64)
    if np.any(~np.isfinite(m)) or np.any(m < 1):
        raise ValueError(f"m (the target dimension) must be >= 1, got {m!r}.")
    delta = float(delta)
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    t = np.log(2.0 / delta)
    return 1.0 - 2.0 * np.sqrt(t / m), 1.0 + 2.0 * np.sqrt(t / m) + 2.0 * t / m


def chi2_band(m, delta: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    r"""The exact central 1 - δ interval of :math:`\|A v\|^2/\|v\|^2 \sim \chi^2_m / m` (Gaussian A)."""
    m = np.asarray(m, dtype=np.float64)
    if m.size == 0 or not np.all(np.isfinite(m)) or np.any(m < 1):
        raise ValueError(f"m (the number of projected dimensions) must be >= 1, got {m.tolist()!r}.")
    if not 0 < float(delta) < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}.")
    return chi2.ppf(delta / 2, m) / m, chi2.ppf(1 - delta / 2, m) / m


@dataclass(frozen=True)
class Projection:
    key: str
    label: str
    latex: str
    build: Callable[[int, object], object]  # (n_components, random_state) -> unfitted sklearn projector


PROJECTIONS: dict[str, Projection] = {
    p.key: p
    for p in (
        Projection("gaussian", "Gaussian", r"A_{ij} \sim \mathcal{N}(0, 1/m)",
                   lambda m, rs: GaussianRandomProjection(n_components=m, random_state=rs)),
        Projection("sparse", "Sparse (Li et al.)",
                   r"A_{ij} = \pm\sqrt{\tfrac{1}{s\,m}} \text{ w.p. } \tfrac{s}{2},\ 0 \text{ w.p. } 1 - s,\ s = 1/\sqrt{d}",
                   lambda m, rs: SparseRandomProjection(n_components=m, density="auto", dense_output=True,
                                                        random_state=rs)),
    )
}


def distortion_bands(m_values, delta: float = 0.05) -> pd.DataFrame:
    """Per target dimension m: Theorem 1's band (:func:`theorem1_band`, the lower end may be < 0) and
    the exact chi^2_m / m interval of Gaussian A (:func:`chi2_band`). Columns: m, theorem_low,
    theorem_high, chi2_low, chi2_high."""
    ms = np.unique(np.asarray(m_values, dtype=np.int64))
    lo, hi = theorem1_band(ms, delta)
    clo, chi = chi2_band(ms, delta)
    return pd.DataFrame({"m": ms, "theorem_low": lo, "theorem_high": hi, "chi2_low": clo, "chi2_high": chi})


def get_projection(key: str) -> Projection:
    try:
        return PROJECTIONS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown projection kind {key!r}; allowed: {', '.join(map(repr, PROJECTIONS))}.") from None


def projection_distortion(X, m_list=(8, 16, 32, 64, 128, 256, 512), kind: str = "gaussian", trials: int = 5,
                          seed: int = 0) -> pd.DataFrame:
    r"""Distortion :math:`\|A\mathbf{v}\|^2 / \|\mathbf{v}\|^2` of every row v of X under random projections.

    For each trial one scikit-learn projector with :math:`m_{\max}` = max(m_list) rows is fitted
    (``GaussianRandomProjection`` or ``SparseRandomProjection``); the m-dimensional projection is
    its first m rows rescaled by :math:`\sqrt{m_{\max}/m}`. The rows are i.i.d., so this has exactly
    the distribution of a fresh m-row projector, and one product serves every m (curves over m are
    coupled within a trial, which only smooths them).

    Tidy: one row per (kind, m, trial, vector) with columns kind, m, trial, vector, ratio.
    Zero rows of X are refused (the ratio is undefined).
    """
    proj = get_projection(kind)
    X = check_array(X)
    m_list = sorted(set(_int_list(m_list, "m_list")))
    trials = check_int(trials, "trials")
    sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
    if np.any(sq <= 0):
        raise ValueError(f"X has {int(np.sum(sq <= 0))} zero row(s); the distortion ||Av||^2/||v||^2 needs v != 0.")
    m_max = m_list[-1]
    n = X.shape[0]
    require_memory({"the projection matrix": (m_max, X.shape[1]), "the projections and their sums": (2, n, m_max)},
                   what="projection_distortion", hint="Use a smaller largest m or fewer rows.")
    ms = np.asarray(m_list)
    parts = []
    for t in range(trials):
        with warnings.catch_warnings():
            # m > d is allowed on purpose here (the band is about m, not about reducing d)
            warnings.simplefilter("ignore", DataDimensionalityWarning)
            P = proj.build(m_max, seed + t).fit_transform(X)
        P = P.toarray() if sp.issparse(P) else np.asarray(P)
        cum = np.cumsum(P**2, axis=1)[:, ms - 1] * (m_max / ms)  # (n, len(m_list))
        ratio = cum / sq[:, None]
        parts.append(pd.DataFrame(dict(kind=kind, m=np.tile(ms, n), trial=t, vector=np.repeat(np.arange(n), ms.size),
                                       ratio=ratio.ravel())))
    return pd.concat(parts, ignore_index=True)


def distortion_summary(df: pd.DataFrame, delta: float = 0.05) -> pd.DataFrame:
    """Per (kind, m): quantiles of the ratio, the Theorem 1 band and the fraction of ratios outside it.

    Theorem 1 promises ``outside <= delta`` for Gaussian projections (per vector, so also on average).
    """
    need = {"kind", "m", "ratio"}
    if not need.issubset(df.columns):
        raise ValueError(f"distortion_summary needs columns {sorted(need)}; got {list(df.columns)}.")
    lo, hi = theorem1_band(np.sort(df["m"].unique()), delta)
    band = pd.DataFrame(dict(m=np.sort(df["m"].unique()), band_low=lo, band_high=hi))
    g = df.groupby(["kind", "m"])["ratio"]
    out = pd.DataFrame({
        "q_low": g.quantile(delta / 2), "median": g.median(), "q_high": g.quantile(1 - delta / 2),
        "mean": g.mean(), "count": g.size(),
    }).reset_index().merge(band, on="m")
    inside = df.merge(band, on="m")
    inside["outside"] = (inside["ratio"] < inside["band_low"]) | (inside["ratio"] > inside["band_high"])
    out = out.merge(inside.groupby(["kind", "m"])["outside"].mean().rename("outside").reset_index(), on=["kind", "m"])
    out["delta"] = delta
    return out
