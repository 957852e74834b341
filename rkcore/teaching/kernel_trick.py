r"""The kernel trick: explicit feature expansions against the kernels they realize (page "Kernel trick").

Follows D. Hsu, *Features* (COMS 4771 lecture notes, 2015), /work/shared/papers/features-kernel-trick-notes.md,
Section 1.1: explicit degree-<=2 features with
:math:`\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = (1 + \langle\mathbf{x}, \mathbf{y}\rangle)^2`
(:func:`polynomial_features`, any degree and offset c), the interaction-only (ANOVA) variant
(:func:`interaction_features`) and the :math:`2^d` all-subsets products with
:math:`\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = \prod_j (1 + x_j y_j)` (:func:`all_subsets_features`);
:data:`EXPANSIONS` pairs each with its kernel, :func:`feature_count_table` counts their columns and
:func:`kernel_trick_timing` measures explicit features against kernel evaluation as d grows.

Everything returns arrays or tidy DataFrames (one row per observation).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from math import comb
from typing import Callable

import numpy as np
import pandas as pd
from scipy.special import gammaln
from sklearn.preprocessing import PolynomialFeatures

from ..base.limits import check_allocation, require_memory
from ..base.validation import check_int, entry_of
from ..kernels.exact import all_subsets_kernel, anova_kernel, explicit_features, polynomial_kernel
from ..kernels.itemsets import ItemsetFamily
from .inputs import check_dense, check_positive_ints

#: all_subsets_features refuses d above this (2^d columns).
MAX_SUBSETS_D = 20

#: kernel_trick_timing refuses explicit feature matrices larger than this (bytes).
MAX_EXPLICIT_BYTES = 256 * 2**20


def polynomial_features(X, degree: int = 2, c: float = 1.0) -> np.ndarray:
    r"""Explicit features with :math:`\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = (c + \langle\mathbf{x}, \mathbf{y}\rangle)^m`.

    By the multinomial theorem, :math:`(c + \langle x, y\rangle)^m = \sum_{|\alpha| \le m}
    \frac{m!}{\alpha!\,(m - |\alpha|)!} c^{m-|\alpha|} x^\alpha y^\alpha`, so
    :math:`\phi_\alpha(x) = \sqrt{m!\, c^{m-|\alpha|} / (\alpha!\,(m-|\alpha|)!)}\; x^\alpha` over all
    monomials of degree <= m. For m = 2, c = 1 these are the notes' features
    :math:`(1, \sqrt2 x_j, x_j^2, \sqrt2 x_j x_k)`: :math:`\binom{d+2}{2} = 1 + 2d + \binom{d}{2}` columns.
    The monomials come from scikit-learn's ``PolynomialFeatures`` (same column order).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    degree : int, default=2
        The order m.
    c : float, default=1.0
        The offset (>= 0).

    Returns
    -------
    numpy.ndarray
        phi(X), one column per multi-index alpha with abs(alpha) <= m.
    """
    X = check_dense(X)
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
    """Readable names of the :func:`polynomial_features` columns, e.g. ``"1.414*x0*x1"``.

    Parameters
    ----------
    d : int
        Number of features.
    degree : int, default=2
        The order m.
    c : float, default=1.0
        The offset.

    Returns
    -------
    list of str
        One name per column.
    """
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

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    degree : int, default=2
        The order m.
    lower_orders : bool, default=False
        Also the itemsets of sizes 0 .. degree - 1.

    Returns
    -------
    numpy.ndarray
        One column per itemset.
    """
    X = check_dense(X)
    d = X.shape[1]
    m = check_int(degree, "degree")
    if m > d:
        raise ValueError(f"degree={m} exceeds the number of features d={d}; allowed 1 <= degree <= d.")
    family = ItemsetFamily.up_to(d, m) if lower_orders else ItemsetFamily.anova(d, m)
    check_allocation("The interaction features", (X.shape[0], family.n_itemsets),  # type: ignore[arg-type]  # an int below 2^EXACT_COUNT_BITS, inf beyond: refused as too large either way
                     hint="Use fewer columns or a lower degree, or the kernel (rkcore.kernels.exact.anova_kernel).")
    return explicit_features(X, family)


def all_subsets_features(X) -> np.ndarray:
    r"""All :math:`2^d` subset products :math:`\phi_S(\mathbf{x}) = \prod_{i \in S} x_i`, S ⊆ [d].

    :math:`\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = \prod_{i=1}^d (1 + x_i y_i)` (notes, Section 1.1).
    Refuses d > :data:`MAX_SUBSETS_D`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.

    Returns
    -------
    numpy.ndarray of shape (n_samples, 2**n_features)
        phi(X).
    """
    X = check_dense(X)
    d = X.shape[1]
    if d > MAX_SUBSETS_D:
        raise ValueError(f"all_subsets_features lists 2^d columns; d={d} is too many (allowed d <= {MAX_SUBSETS_D}). "
                         "Use rkcore.kernels.exact.all_subsets_kernel, which costs O(d) per pair.")
    return explicit_features(X, ItemsetFamily.all_subsets(d))


@dataclass(frozen=True)
class Expansion:  # numpydoc ignore=PR02
    """An explicit feature expansion and the kernel it realizes.

    Parameters
    ----------
    key : str
        Its key (see :data:`EXPANSIONS`).
    label : str
        Its name on the page.
    feature_latex : str
        The features, LaTeX.
    kernel_latex : str
        The kernel they realize, LaTeX.
    n_features : callable
        ``n_features(d, degree)`` -> number of columns.
    features : callable
        ``features(X, degree)`` -> phi(X).
    kernel : callable
        ``kernel(X, Y, degree)`` -> the Gram matrix.
    max_d : int, optional
        Largest d the expansion is built for (None: no limit).
    """

    key: str
    label: str
    feature_latex: str
    kernel_latex: str
    n_features: Callable[[int, int], int]          # (d, degree) -> number of columns
    features: Callable[[np.ndarray, int], np.ndarray]  # (X, degree) -> phi(X)
    kernel: Callable[[np.ndarray, np.ndarray, int], np.ndarray]  # (X, Y, degree) -> Gram
    max_d: int | None = None


#: The expansion of every subset's product (its key names the expansion, not the kernel of the same name).
ALL_SUBSETS_EXPANSION = "all_subsets"

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
        Expansion(ALL_SUBSETS_EXPANSION, "All subsets (2^d products)",
                  r"\phi(\mathbf{x}) = \Big(\prod_{i \in S} x_i\Big)_{S \subseteq [d]}",
                  r"\langle\phi(\mathbf{x}), \phi(\mathbf{y})\rangle = \prod_{i=1}^{d} (1 + x_i y_i)",
                  lambda d, m: 2**d,
                  lambda X, m: all_subsets_features(X),
                  lambda X, Y, m: all_subsets_kernel(X, Y),
                  max_d=MAX_SUBSETS_D),
    )
}


def get_expansion(key: str) -> Expansion:
    """The :class:`Expansion` of a key, or a ValueError listing the keys.

    Parameters
    ----------
    key : str
        A key of :data:`EXPANSIONS`.

    Returns
    -------
    Expansion
        Its entry.
    """
    return entry_of(EXPANSIONS, key, "expansion")


def n_explicit_features(kind: str, d: int, degree: int = 2) -> int:
    """Number of columns of the explicit expansion ``kind`` over d features.

    Parameters
    ----------
    kind : str
        A key of :data:`EXPANSIONS`.
    d : int
        Number of features.
    degree : int, default=2
        The order m.

    Returns
    -------
    int
        Number of columns.
    """
    return int(get_expansion(kind).n_features(check_int(d, "d"), check_int(degree, "degree")))


def feature_count_table(d_list=(2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), degree: int = 2,
                        max_subsets_d: int = 64) -> pd.DataFrame:
    """Columns of each explicit expansion vs d, next to the d numbers the kernel trick reads.

    The all-subsets count 2^d is listed up to ``max_subsets_d`` only (beyond, it dwarfs
    every other curve of a chart). Tidy: one row per (kind, d) with columns kind, d,
    n_features (float: 2^d overflows int64).

    Parameters
    ----------
    d_list : sequence of int
        Numbers of features.
    degree : int, default=2
        The order m.
    max_subsets_d : int, default=64
        Largest d listed for the all-subsets count.

    Returns
    -------
    pandas.DataFrame
        The tidy table described above.
    """
    d_list = check_positive_ints(d_list, "d_list")
    m = check_int(degree, "degree")
    rows = []
    for d in d_list:
        for key, e in EXPANSIONS.items():
            if (key == "interactions" and m > d) or (e.max_d is not None and d > max_subsets_d):  # 2^d: capped
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

    Parameters
    ----------
    kind : str, default="polynomial"
        A key of :data:`EXPANSIONS`.
    d_list : sequence of int
        Numbers of features.
    n : int, default=100
        Number of points.
    degree : int, default=2
        The order m.
    repeats : int, default=3
        Timed repeats per (d, method).
    seed : int, default=0
        Seed of the data.

    Returns
    -------
    pandas.DataFrame
        The tidy table described above.
    """
    exp = get_expansion(kind)
    d_list = check_positive_ints(d_list, "d_list")
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
