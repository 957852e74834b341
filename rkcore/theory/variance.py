r"""Exact variance of the RK estimator of the itemset kernel.

The RK map (Algorithm 1) estimates :math:`K_{\mathcal{S}}(\mathbf{x}, \mathbf{y})` by
:math:`\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle = \frac{1}{D}\sum_{s=1}^{D} f(\boldsymbol\omega_s)`,
:math:`f(\boldsymbol\omega) = K_{\mathcal{S}}(\mathbf{x}, \boldsymbol\omega) K_{\mathcal{S}}(\mathbf{y}, \boldsymbol\omega)`,
with i.i.d. :math:`\boldsymbol\omega_s`. Since :math:`\mathbb{E} f = K_{\mathcal{S}}(\mathbf{x}, \mathbf{y})`
(Propositions 1-2),

.. math::
    \mathbb{V}\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle
    = \frac{\mathbb{E}[f(\boldsymbol\omega)^2] - K_{\mathcal{S}}(\mathbf{x}, \mathbf{y})^2}{D}.

**Second moment.** Expanding :math:`f^2` gives a sum over 4-tuples of itemsets
:math:`(U_1, V_1, U_2, V_2) \in \mathcal{S}^4` (U's carry x, V's carry y) of
:math:`\prod_j x_j^{a_j} y_j^{b_j}\, \mathbb{E}[\omega^{a_j + b_j}]`, where :math:`a_j` (:math:`b_j`)
counts the U's (V's) containing j. For a symmetric distribution with mean 0 and variance 1
only :math:`\mu_2 = 1` and :math:`\mu_4 = \mathbb{E}\omega^4` matter (odd moments vanish), so with
one formal variable per itemset, :math:`t_1, t_3` for the U's and :math:`t_2, t_4` for the V's,

.. math::
    \mathbb{E}[f^2] = \sum_{\text{sizes}} [t_1^{k_1} t_2^{k_2} t_3^{k_3} t_4^{k_4}] \prod_{j=1}^{d} P_j,\qquad
    P_j = 1 + x_j^2 t_1 t_3 + y_j^2 t_2 t_4 + x_j y_j (t_1 + t_3)(t_2 + t_4) + \mu_4 x_j^2 y_j^2 t_1 t_2 t_3 t_4,

summed over the allowed itemset sizes :math:`k_i` of the family. :math:`P_j` depends on the
t's only through :math:`u = (t_1 + t_3)(t_2 + t_4)`, :math:`\sigma = t_1 t_3` and :math:`\tau = t_2 t_4`,
so :math:`\prod_j P_j = \sum h_{abe}\, u^a \sigma^b \tau^e` is a 3-variable polynomial, and
:math:`[t_1^{k_1} t_3^{k_3}] (t_1 + t_3)^a (t_1 t_3)^b = \binom{a}{k_1 - b}` when :math:`k_1 + k_3 = a + 2b`.
The coefficients :math:`h_{abe}` with :math:`a + 2b \le 2M, a + 2e \le 2M` (M the largest size)
come from a dynamic program over the features, vectorized over pairs and states:
O(d M^3) per pair (44 states for M = 3). ANOVA of order m, up-to-m and dot are handled
this way (dot also in closed form); the all-subsets family has the closed form
:math:`\prod_j (1 + x_j^2 + y_j^2 + 4 x_j y_j + \mu_4 x_j^2 y_j^2)`.

**Lemma 4, pointwise.** As a function of :math:`w_j`, :math:`f = A + B w_j + C w_j^2`, so
:math:`\mathbb{E}_{w_j}[f^2] = A^2 + B^2 + 2AC + \mu_4 C^2`: the second moment is affine in each
feature's fourth moment, and its mixed derivatives are expectations of squares. Hence
:math:`\mathbb{E}[f^2]` is a polynomial in :math:`(\mu_4 - 1)` with non-negative coefficients,
so for every x, y and every family the variance is non-decreasing in :math:`\mu_4 \ge 1`, and the
Rademacher distribution (:math:`\mu_4 = 1`, the smallest possible) has the smallest variance
among symmetric zero-mean unit-variance distributions at every pair, not only in the sup
of Lemma 4 (Atarashi, Maji & Oyama, AAAI-19). Non-symmetric distributions (:math:`\mu_3 \ne 0`)
are outside this module.
"""
from __future__ import annotations

from math import comb
from numbers import Real

import numpy as np
import pandas as pd

from ..maps.distributions import DISTRIBUTIONS, Distribution, get_distribution
from ..kernels.itemsets import ItemsetFamily, family_from_spec
from ..kernels.numerics import check_array, check_gram_fits, row_blocks
from ..kernels.matrices import gram_dense
from ..base.arrays import dense
from ..kernels.ranges import SAFE_BINADES, row_exponents, scale_rows
from ..base.validation import check_int
from .variance_range import (_all_subsets_moments_fe, out_of_range_pairs, _sizes_moments_fe, _to_float,
                             _variance_fe)
from ..base.annotations import is_sparse

#: Families with a known size profile, which this module handles.
VARIANCE_KERNELS = ("anova", "all_subsets", "dot", "up_to")

#: Temporary memory for one block of pairs in the dynamic program; small enough to
#: keep a block's state array in cache, large enough to amortize the per-feature loop.
PAIR_BLOCK_BYTES = 16 * 2**20


# ------------------------------------------------------------------------- inputs
def _fourth_moment(distribution) -> float:
    """mu4 from a distribution key, a Distribution, or a number >= 1."""
    if isinstance(distribution, Distribution):
        return float(distribution.fourth_moment)
    if isinstance(distribution, str):
        return float(get_distribution(distribution).fourth_moment)
    if isinstance(distribution, Real) and not isinstance(distribution, bool):
        mu4 = float(distribution)
        if not np.isfinite(mu4) or mu4 < 1.0:
            raise ValueError(
                f"A fourth moment must be a finite number >= 1 (for mean 0 and variance 1, "
                f"E[w^4] >= (E[w^2])^2 = 1), got {distribution!r}."
            )
        return mu4
    raise ValueError(
        f"distribution must be one of {', '.join(map(repr, DISTRIBUTIONS))}, a Distribution, "
        f"or a fourth moment (a number >= 1); got {distribution!r}."
    )


def _check_iid(distribution, n_components: int) -> None:
    """Refuse (E f^2 - K^2) / D for D > 1 features of weights drawn in orthogonal blocks: their rows are
    dependent, so the variance of the mean has cross-row covariances this formula leaves out (one feature,
    D = 1, is exact: each row keeps the i.i.d. law). rkcore.studies.orthogonal_study measures it instead."""
    dist = distribution if isinstance(distribution, Distribution) else \
        DISTRIBUTIONS.get(distribution) if isinstance(distribution, str) else None
    if dist is not None and not dist.iid and n_components > 1:
        raise ValueError(f"The exact variance formula is for i.i.d. weights; {dist.label} draws rows in dependent "
                         f"blocks ({dist.blocks}), so only D = 1 is exact. Measure it "
                         "(rkcore.studies.orthogonal_study).")


def _family(kernel, degree, d: int) -> ItemsetFamily:
    if isinstance(kernel, ItemsetFamily):
        if kernel.kind not in VARIANCE_KERNELS:
            raise ValueError(
                f"The exact variance supports the families {', '.join(map(repr, VARIANCE_KERNELS))}; "
                f"got a {kernel.kind!r} family."
            )
        return kernel.with_d(d)
    if isinstance(kernel, str) and kernel in VARIANCE_KERNELS:
        return family_from_spec(kernel, d, degree)
    raise ValueError(
        f"kernel must be one of {', '.join(map(repr, VARIANCE_KERNELS))} or an ItemsetFamily of "
        f"those kinds; got {kernel!r}."
    )


def _check_components(n_components) -> int:
    return check_int(n_components, "n_components (D, the number of random features)")


def _paired(X, Y):
    X, Y = check_array(X, "X"), check_array(Y, "Y")
    if X.shape != Y.shape:
        raise ValueError(
            f"X and Y must have the same shape (row i of X is paired with row i of Y); "
            f"got {X.shape} and {Y.shape}."
        )
    return X, Y


def _sizes(family: ItemsetFamily) -> tuple[int, ...]:
    return tuple(family.counts_by_size())


# ------------------------------------------------------------------------- core
def _size_weights(sizes: tuple[int, ...]) -> np.ndarray:
    """w[a, b] = sum_i binom(a, i) [b + i in sizes][b + a - i in sizes].

    The number of ways (t_1 + t_3)^a (t_1 t_3)^b yields two itemsets (U_1, U_2) whose sizes
    are both allowed; it only depends on the size profile, not on the data.
    """
    M = max(sizes)
    allowed = set(sizes)
    w = np.zeros((2 * M + 1, M + 1))
    for a in range(2 * M + 1):
        for b in range(M + 1):
            w[a, b] = sum(comb(a, i) for i in range(a + 1) if b + i in allowed and b + a - i in allowed)
    return w


def _compact(Xb: np.ndarray, Yb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, move the features where x_j or y_j is non-zero to the front and drop the
    columns that are zero for every pair: a zero feature contributes the factor P_j = 1.
    Returns (k, n) arrays (features first, so each DP step reads one contiguous row)."""
    support = (Xb != 0) | (Yb != 0)
    k = int(support.sum(axis=1).max(initial=0))
    if k < Xb.shape[1]:
        order = np.argsort(~support, axis=1, kind="stable")[:, :k]
        Xb, Yb = np.take_along_axis(Xb, order, axis=1), np.take_along_axis(Yb, order, axis=1)
    return np.ascontiguousarray(Xb.T), np.ascontiguousarray(Yb.T)


def _state_caps(M: int) -> list[int]:
    """For each power a of u, the largest power of sigma (and of tau) that can still end in
    itemsets of size <= M: a + 2b <= 2M. States beyond it never reach a wanted coefficient."""
    return [(2 * M - a) // 2 for a in range(2 * M + 1)]


def _sizes_moments(XT: np.ndarray, YT: np.ndarray, sizes: tuple[int, ...], mu4: float):
    """E[f^2] and K_S(x, y) for paired columns of XT, YT (shape (k, n)), for a family whose
    itemsets are all subsets of the allowed sizes (ANOVA, up-to, dot)."""
    M = max(sizes)
    n = XT.shape[1]
    caps = _state_caps(M)
    # h[a][b, e, pair]: coefficient of u^a sigma^b tau^e in prod_j P_j, stored ragged (only the
    # reachable triangle a + 2b <= 2M, a + 2e <= 2M: 44 states instead of 112 for M = 3).
    # e[k, pair]: k-th elementary symmetric polynomial of x_j y_j, so K = sum_{k in sizes} e_k.
    h = [np.zeros((c + 1, c + 1, n)) for c in caps]
    h[0][0, 0] = 1.0
    e = np.zeros((M + 1, n))
    e[0] = 1.0
    extra = mu4 - 1.0
    # The loop over features is sequential by nature (a product of polynomials); each step
    # is a few shifted multiply-adds per power of u, vectorized over all pairs and states.
    for x, y in zip(XT, YT):
        xx, yy, xy = x * x, y * y, x * y
        both = extra * xx * yy
        # P_j = (1 + xx sigma)(1 + yy tau) + (mu4 - 1) xx yy sigma tau + xy u, applied in place:
        # a runs downwards so h[a - 1] is still the old polynomial when the u-term reads it.
        for a in range(2 * M, -1, -1):
            ha, c = h[a], caps[a]
            if c:
                cross = both * ha[:-1, :-1] if extra else None
                ha[1:] += xx * ha[:-1]  # right sides are evaluated before the in-place add
                ha[:, 1:] += yy * ha[:, :-1]
                if cross is not None:  # computed exactly when extra
                    ha[1:, 1:] += cross
            if a:
                ha += xy * h[a - 1][: c + 1, : c + 1]
        e[1:] += xy * e[:-1]
    w = _size_weights(sizes)
    second = sum(np.einsum("ben,b,e->n", h[a], w[a, : c + 1], w[a, : c + 1]) for a, c in enumerate(caps))
    kernel = e[list(sizes)].sum(axis=0)
    return second, kernel


def _closed_moments(kind: str, XT: np.ndarray, YT: np.ndarray, mu4: float):
    xx, yy, xy = XT * XT, YT * YT, XT * YT
    if kind == "dot":
        kernel = xy.sum(axis=0)
        # E[(x.w)^2 (y.w)^2] = (mu4 - 3) sum x^2 y^2 + |x|^2 |y|^2 + 2 (x.y)^2
        return (mu4 - 3.0) * (xx * yy).sum(axis=0) + xx.sum(axis=0) * yy.sum(axis=0) + 2.0 * kernel**2, kernel
    # all subsets: prod_j E[(1 + x_j w)^2 (1 + y_j w)^2]
    return (1.0 + xx + yy + 4.0 * xy + mu4 * xx * yy).prod(axis=0), (1.0 + xy).prod(axis=0)


def _balanced(X, Y) -> tuple[np.ndarray, np.ndarray]:
    """Paired rows rescaled x 2^-p, y 2^p (exact) so that their largest entries have about the
    same binade: for families whose itemsets all have one size (ANOVA, dot) the moments depend
    on the products x_j y_j only, and x^2, y^2 then neither overflow nor underflow needlessly."""
    shift = (row_exponents(X)[1] - row_exponents(Y)[1]) // 2
    return scale_rows(X, shift), scale_rows(Y, -shift)


def _moments(X, Y, family: ItemsetFamily, mu4: float, *, balanced: bool = False, exact_form: bool = False):
    """(E[f^2], K) for the paired rows of validated X, Y (dense or CSR), in blocks of pairs.

    Pairs whose products could leave float64's range (:func:`variance_range.out_of_range_pairs`) or whose
    float64 moments are not finite are recomputed in (mantissa, exponent) form. With ``exact_form`` the
    result also holds, for those pairs, (rows, E f^2, K, S2) in that form (S2: E f^2 at |x|, |y|)."""
    n, d = X.shape
    kind = family.kind
    sizes = _sizes(family)
    M = max(sizes)
    n_states = sum((c + 1) ** 2 for c in _state_caps(M)) if kind in ("anova", "up_to") else 0
    per_pair = 8 * (4 * d + 2 * n_states)
    second, kernel = np.empty(n), np.empty(n)
    if kind in ("anova", "dot") and not balanced:
        # every itemset has the same size, so E[f^2] and K depend on x_j y_j only: balance each
        # pair's magnitudes by an exact power of two (x 2^-p, y 2^p), so that x^2 or y^2 cannot
        # overflow or underflow where the products are ordinary numbers
        X, Y = _balanced(X, Y)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        for rows in row_blocks(n, per_pair, PAIR_BLOCK_BYTES):
            XT, YT = _compact(dense(X[rows], dtype=None), dense(Y[rows], dtype=None))
            if kind in ("dot", "all_subsets"):
                second[rows], kernel[rows] = _closed_moments(kind, XT, YT, mu4)
            else:
                second[rows], kernel[rows] = _sizes_moments(XT, YT, sizes, mu4)
    # Dot (balanced rows) and all subsets fail only by overflow, which leaves inf or NaN: an underflowed
    # square loses at most 2^-1022 times the other side's largest square, negligible against S2 (>= 1 for
    # all subsets; >= max x^2 max y^2 for dot). The dynamic program (ANOVA, up-to) can lose whole terms
    # by underflow before multiplying them by huge ones: there the exponents decide, one pass.
    with np.errstate(over="ignore"):
        bad = ~np.isfinite(second) | ~np.isfinite(kernel) | ~np.isfinite(kernel * kernel)
    if kind in ("anova", "up_to"):
        bad |= out_of_range_pairs(X, Y, M)
    bad = np.flatnonzero(bad)
    if not bad.size:
        return (second, kernel, None) if exact_form else (second, kernel)
    exact = _exact_form_moments(X[bad], Y[bad], family, mu4)
    second[bad], kernel[bad] = _to_float(exact[0]), _to_float(exact[1])
    return (second, kernel, (bad, *exact)) if exact_form else (second, kernel)


def _exact_form_moments(X, Y, family: ItemsetFamily, mu4: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(E f^2, K, S2) in (mantissa, exponent) form for a few paired rows: nothing over- or underflows."""
    XT, YT = _compact(dense(X, dtype=None), dense(Y, dtype=None))
    if family.kind == "all_subsets":
        second, kernel = _all_subsets_moments_fe(XT, YT, mu4)
        scale = _all_subsets_moments_fe(np.abs(XT), np.abs(YT), mu4)[0]
        return second, kernel, scale
    sizes = _sizes(family)
    caps, weights = _state_caps(max(sizes)), _size_weights(sizes)
    second, kernel = _sizes_moments_fe(XT, YT, sizes, mu4, caps, weights)
    scale = _sizes_moments_fe(np.abs(XT), np.abs(YT), sizes, mu4, caps, weights)[0]
    return second, kernel, scale


# ------------------------------------------------------------------------- public API
def second_moment(X, Y, *, kernel="anova", degree=2, distribution="rademacher") -> np.ndarray:
    r"""E[(K_S(x_i, w) K_S(y_i, w))^2] for each pair of rows (X[i], Y[i]); shape (n,).

    ``kernel`` is "anova", "all_subsets", "dot", "up_to" (with ``degree`` the order m) or an
    ItemsetFamily of those kinds; ``distribution`` a key of
    :data:`rkcore.maps.distributions.DISTRIBUTIONS`, a Distribution, or directly a fourth moment
    :math:`\mu_4 \ge 1` of a symmetric zero-mean unit-variance distribution.
    X and Y are dense or sparse, of the same shape.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        Left rows.
    Y : array-like or sparse matrix of shape (n, d)
        Right rows; row i is paired with row i of X.
    kernel : str or ItemsetFamily, default="anova"
        "anova", "all_subsets", "dot", "up_to" or an ItemsetFamily of those kinds.
    degree : int, default=2
        The order m (ANOVA, up-to).
    distribution : str, Distribution or float, default="rademacher"
        A key of :data:`rkcore.maps.distributions.DISTRIBUTIONS`, a Distribution, or its fourth
        moment mu4 >= 1.

    Returns
    -------
    numpy.ndarray of shape (n,)
        E[(K_S(x_i, w) K_S(y_i, w))^2] per pair.
    """
    X, Y = _paired(X, Y)
    # E f^2 >= 0: rounding can leave a tiny negative where the terms cancel to 0 (within the contract)
    return np.maximum(_moments(X, Y, _family(kernel, degree, X.shape[1]), _fourth_moment(distribution))[0], 0.0)


def rk_variance(X, Y, n_components, *, kernel="anova", degree=2, distribution="rademacher") -> np.ndarray:
    r"""Exact variance of the RK estimate :math:`\langle Z(\mathbf{x}_i), Z(\mathbf{y}_i)\rangle`, shape (n,).

    .. math:: \mathbb{V} = \big(\mathbb{E}[K_{\mathcal{S}}(\mathbf{x},\boldsymbol\omega)^2
              K_{\mathcal{S}}(\mathbf{y},\boldsymbol\omega)^2] - K_{\mathcal{S}}(\mathbf{x},\mathbf{y})^2\big) / D

    for the paired rows (X[i], Y[i]) and D = ``n_components``. Arguments as in
    :func:`second_moment`. Cost O(n d M^3) for ANOVA / up-to of order M, O(n d) otherwise.

    Accuracy: the difference E f^2 - K^2 cancels, so the absolute error is a small multiple of
    u * E f^2 (u = 2^-53); it is clipped at 0, so a variance is never negative.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        Left rows.
    Y : array-like or sparse matrix of shape (n, d)
        Right rows; row i is paired with row i of X.
    n_components : int
        D, the number of random features.
    kernel : str or ItemsetFamily, default="anova"
        "anova", "all_subsets", "dot", "up_to" or an ItemsetFamily of those kinds.
    degree : int, default=2
        The order m (ANOVA, up-to).
    distribution : str, Distribution or float, default="rademacher"
        A key of :data:`rkcore.maps.distributions.DISTRIBUTIONS`, a Distribution, or its fourth
        moment mu4 >= 1.

    Returns
    -------
    numpy.ndarray of shape (n,)
        The variance per pair (never negative).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[1.0, 0.0, 0.0]])
    >>> float(rk_variance(x, x, 10, kernel="dot", distribution="gaussian")[0])  # (3 - 1) / 10
    0.2
    """
    D = _check_components(n_components)
    _check_iid(distribution, D)
    X, Y = _paired(X, Y)
    family = _family(kernel, degree, X.shape[1])
    return _per_feature_variance(X, Y, family, _fourth_moment(distribution), divisor=D)[0]


def _per_feature_variance(X, Y, family: ItemsetFamily, mu4: float, *, with_value: bool = False,
                          divisor: float = 1.0):
    """(the variance of the estimate, K(x_i, y_i) or None) for the paired rows of validated X, Y, with
    D = ``divisor`` (1: the variance of one feature).

    The one place where the variance is formed: for the dot kernel without the cancellation of
    E f^2 - K^2 (on balanced rows), otherwise E f^2 - K^2 clipped at 0 (rounding can leave a tiny negative
    difference; a variance is >= 0). Pairs out of float64's safe range are formed in (mantissa, exponent)
    form (:mod:`rkcore.theory.variance_range`), divided by D before rounding to float64. The kernel values
    are computed only when asked for.
    """
    if family.kind in ("anova", "dot"):
        X, Y = _balanced(X, Y)
    if family.kind == "dot" and not with_value:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            variance = _dot_gram_variance(X, Y, mu4, paired=True) / divisor
        bad = np.flatnonzero(~np.isfinite(variance))  # overflow only (balanced rows; see _moments)
        if bad.size:
            variance[bad] = _variance_fe(*_exact_form_moments(X[bad], Y[bad], family, mu4), divisor, X.shape[1])
        return variance, None
    second, value, exact = _moments(X, Y, family, mu4, balanced=True, exact_form=True)
    if family.kind == "dot":
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            variance = _dot_gram_variance(X, Y, mu4, paired=True) / divisor
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            variance = np.maximum(second - value**2, 0.0) / divisor
    if exact is not None:
        bad, second_fe, kernel_fe, scale_fe = exact
        variance[bad] = _variance_fe(second_fe, kernel_fe, scale_fe, divisor, X.shape[1])
    return variance, (value if with_value else None)


def _dot_gram_variance(X, Y, mu4: float, paired: bool) -> np.ndarray:
    """Var of the dot-kernel estimate times D, without the cancellation of E[f^2] - K^2:
    (mu4 - 3) sum_j x_j^2 y_j^2 + |x|^2 |y|^2 + (x.y)^2, as GEMMs for all pairs."""
    X2 = X.multiply(X).tocsr() if is_sparse(X) else X * X
    if Y is X:  # the same operands make the products exactly symmetric (BLAS syrk)
        Y2 = X2
    else:
        Y2 = Y.multiply(Y).tocsr() if is_sparse(Y) else Y * Y
    if paired:
        fourth = np.asarray(X2.multiply(Y2).sum(axis=1)).ravel() if is_sparse(X2) else (X2 * Y2).sum(axis=1)
        dot = np.asarray(X.multiply(Y).sum(axis=1)).ravel() if is_sparse(X) else (X * Y).sum(axis=1)
        nx, ny = np.asarray(X2.sum(axis=1)).ravel(), np.asarray(Y2.sum(axis=1)).ravel()
        return np.maximum((mu4 - 3.0) * fourth + nx * ny + dot**2, 0.0)  # >= 0 up to rounding
    nx, ny = np.asarray(X2.sum(axis=1)).ravel(), np.asarray(Y2.sum(axis=1)).ravel()
    return np.maximum((mu4 - 3.0) * gram_dense(X2, Y2) + np.outer(nx, ny) + gram_dense(X, Y) ** 2, 0.0)


def _dot_variance_gram(X, Y, family: ItemsetFamily, mu4: float, D: int) -> np.ndarray:
    """The dot family's variance Gram by three GEMMs; pairs that are not finite or whose rows could
    leave float64's safe range are recomputed pair by pair (balanced, in (mantissa, exponent) form)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        out = _dot_gram_variance(X, Y, mu4, paired=False) / D
    lx, hx = row_exponents(X)
    ly, hy = row_exponents(Y)
    # unbalanced rows: x^2 and y^2 are formed apart, so each side must fit on its own
    wide_x = (2 * np.maximum(hx, 0) > SAFE_BINADES // 2) | (2 * np.minimum(lx - 1, 0) < -SAFE_BINADES // 2)
    wide_y = (2 * np.maximum(hy, 0) > SAFE_BINADES // 2) | (2 * np.minimum(ly - 1, 0) < -SAFE_BINADES // 2)
    bad = ~np.isfinite(out)
    bad[wide_x, :] = True
    bad[:, wide_y] = True
    i, j = np.nonzero(bad)
    if i.size:
        out[i, j] = _per_feature_variance(X[i], Y[j], family, mu4, divisor=D)[0]
    return out


def rk_variance_gram(X, n_components, *, Y=None, kernel="anova", degree=2, distribution="rademacher") -> np.ndarray:
    r"""Exact variance of the RK estimate for all pairs of rows: shape (n_X, n_Y), Y defaults to X.

    Dot: three GEMMs. Other families: the pairwise dynamic program over the n_X n_Y pairs
    (only the upper triangle when Y is None), O(n_X n_Y d M^3); about as costly as
    :func:`rk_variance` on that many pairs (about 0.5 s for 200 dense rows with d = 78 and
    m = 3 on a shared 2-core machine), so meant for a few hundred rows.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_X, d)
        Left rows.
    n_components : int
        D, the number of random features.
    Y : array-like or sparse matrix of shape (n_Y, d), optional
        Right rows (None: X).
    kernel : str or ItemsetFamily, default="anova"
        "anova", "all_subsets", "dot", "up_to" or an ItemsetFamily of those kinds.
    degree : int, default=2
        The order m (ANOVA, up-to).
    distribution : str, Distribution or float, default="rademacher"
        A key of :data:`rkcore.maps.distributions.DISTRIBUTIONS`, a Distribution, or its fourth
        moment mu4 >= 1.

    Returns
    -------
    numpy.ndarray of shape (n_X, n_Y)
        The variance of every pair's estimate.
    """
    D = _check_components(n_components)
    _check_iid(distribution, D)
    X = check_array(X, "X")
    symmetric = Y is None
    Y = X if symmetric else check_array(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}; they must match.")
    family = _family(kernel, degree, X.shape[1])
    check_gram_fits(X.shape[0], Y.shape[0], 4)  # the result, the pair indices i and j, triu_indices' mask
    mu4 = _fourth_moment(distribution)
    if family.kind == "dot":
        return _dot_variance_gram(X, Y, family, mu4, D)
    nx, ny = X.shape[0], Y.shape[0]
    if symmetric:
        i, j = np.triu_indices(nx)
    else:
        i, j = (a.ravel() for a in np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij"))
    out = np.empty((nx, ny))
    # Chunks of pairs, so the gathered rows X[i], Y[j] never exceed the block budget.
    for chunk in row_blocks(i.size, 16 * X.shape[1], 8 * PAIR_BLOCK_BYTES):
        ic, jc = i[chunk], j[chunk]
        out[ic, jc] = _per_feature_variance(X[ic], Y[jc], family, mu4, divisor=D)[0]
    if symmetric:
        out[j, i] = out[i, j]
    return out


def variance_table(X, Y, n_components, kernel="anova", degree=2, distributions=None) -> pd.DataFrame:
    """Tidy table of the exact variance: one row per (pair, distribution, n_components).

    Columns: pair (row index i of the pair (X[i], Y[i])), distribution (key), n_components,
    kernel_value K_S(x_i, y_i), variance (as :func:`rk_variance`), std (its square root). ``n_components`` may be an
    int or a sequence of ints; ``distributions`` a list of keys (default: the i.i.d. ones of
    :data:`rkcore.maps.distributions.DISTRIBUTIONS`).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, d)
        Left rows.
    Y : array-like or sparse matrix of shape (n, d)
        Right rows; row i is paired with row i of X.
    n_components : int or sequence of int
        D values.
    kernel : str or ItemsetFamily, default="anova"
        "anova", "all_subsets", "dot", "up_to" or an ItemsetFamily of those kinds.
    degree : int, default=2
        The order m (ANOVA, up-to).
    distributions : list of str, optional
        Distribution keys (default: all).

    Returns
    -------
    pandas.DataFrame
        The tidy table described above.
    """
    Ds = [_check_components(D) for D in np.atleast_1d(np.asarray(n_components, dtype=object)).ravel()]
    keys = [k for k, e in DISTRIBUTIONS.items() if e.iid] if distributions is None else list(distributions)
    if not keys:
        raise ValueError("distributions is empty; give at least one distribution key.")
    X, Y = _paired(X, Y)
    family = _family(kernel, degree, X.shape[1])
    n = X.shape[0]
    frames = []
    for key in keys:
        get_distribution(key)  # a clear error for unknown keys
        _check_iid(key, max(Ds))
        mu4 = _fourth_moment(key)
        per_feature, value = _per_feature_variance(X, Y, family, mu4, with_value=True)
        for D in Ds:
            var = per_feature / D
            if not np.isfinite(var).all():  # D V beyond float64 while V may not be: divide before rounding
                var = _per_feature_variance(X, Y, family, mu4, divisor=D)[0]
            frames.append(pd.DataFrame({"pair": np.arange(n), "distribution": key, "n_components": D,
                                        "kernel_value": value, "variance": var,
                                        "std": np.sqrt(np.maximum(var, 0.0))}))
    return pd.concat(frames, ignore_index=True)
