"""Random Maclaurin (RM) feature map for the polynomial kernel (Kar & Karnick, AISTATS 2012)."""
from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import comb
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ..base.arrays import validate_data  # scikit-learn's, in the user's words for ragged or text rows
from ..base.validation import Count  # sizes: integers, never True

from ..base.limits import check_allocation
from .distributions import get_distribution
from ..kernels.exact import row_blocks
from ..base.annotations import fit_context

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..base.annotations import Features


#: Temporary memory for the projections X W^T of one row block in transform. Large, so that
#: there are few GEMM calls: small multithreaded GEMMs slow down badly on a busy machine.
TRANSFORM_BLOCK_BYTES = 32 * 2**20
#: Rows per block for the products and column scatters: a few MB, so they stay in cache.
SCATTER_BLOCK_BYTES = 4 * 2**20


class RandomMaclaurin(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Random Maclaurin map for the polynomial kernel ``(c + <x, y>)^m`` (Kar & Karnick 2012).

    The kernel is ``f(<x, y>)`` with Maclaurin series ``f(t) = sum_n a_n t^n``,
    ``a_n = binom(m, n) c^(m-n)`` for n <= m and 0 for n > m. Each of the D features
    draws an order N with ``P(N = n) = (1 - 1/p) p^{-n}`` (Kar & Karnick's ``1/p^{n+1}``
    for p = 2, a geometric law) and N Rademacher vectors w_1..w_N, and is

    .. math::
        Z_s(\mathbf x) = \frac{1}{\sqrt D}\sqrt{\frac{a_N}{P(N)}}\prod_{i=1}^{N}\langle\mathbf w_i,\mathbf x\rangle,
        \qquad \mathbb E\,\langle Z(\mathbf x), Z(\mathbf y)\rangle
        = \sum_n P(n)\frac{a_n}{P(n)}\langle\mathbf x,\mathbf y\rangle^n = (c + \langle\mathbf x,\mathbf y\rangle)^m,

    since ``E[<w, x><w, y>] = <x, y>`` for a Rademacher w. Features whose order N
    exceeds m have ``a_N = 0`` and are identically zero: they are wasted draws
    (probability ``p^{-(m+1)}`` each, 1/8 for m = 2 and p = 2). That is Kar & Karnick's
    design, kept here; no weights are stored for them.

    Fixed order (``fix_order=True``): every feature has order m and the input is
    augmented as ``x~ = (x, sqrt(c))``, so that ``<x~, y~>^m = (c + <x, y>)^m`` and
    ``Z_s(x) = prod_{i=1}^m <w_i, x~> / sqrt(D)`` with w_i Rademacher in d + 1
    dimensions is unbiased with no wasted features. For the homogeneous kernel
    (c = 0) random orders waste every feature of order != m, so ``fix_order=None``
    (the default) means fixed order when c == 0 and random orders otherwise.

    Parameters
    ----------
    n_components : int, default=100
        D, the number of random features.
    degree : int, default=2
        m, the polynomial degree.
    c : float, default=1.0
        Offset c >= 0 (c = 0: homogeneous polynomial kernel ``<x, y>^m``).
    p : float, default=2.0
        Parameter p > 1 of the order distribution ``P(N = n) = (1 - 1/p) p^{-n}``.
    fix_order : bool or None, default=None
        Fix every order to m (see above); None means ``c == 0``.
    random_state : int, RandomState instance or None, default=None
        Seeds the random draw: an int gives the same orders and vectors on every call (and on every
        machine), None uses numpy's global random state. See :term:`Glossary <random_state>`.

    Attributes
    ----------
    orders_ : ndarray of int, shape (n_components,)
        Order N_s of each feature.
    random_weights_ : ndarray of shape (sum of N_s over features with N_s <= m, n_features [+ 1])
        The Rademacher vectors, grouped by order n = 1..m. The group of the k features of
        order n (in increasing feature index) is n sub-blocks of k rows; sub-block i holds
        the i-th vector of every feature, so each factor is a contiguous column range of
        X W^T. The extra last column multiplies sqrt(c) in fixed-order mode with c > 0.
    feature_scales_ : ndarray of shape (n_components,)
        ``sqrt(a_N / P(N)) / sqrt(D)`` per feature (0 for N > m).
    n_features_in_ : int

    References
    ----------
    Kar & Karnick. Random feature maps for dot product kernels. AISTATS 2012, Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.maps.maclaurin import RandomMaclaurin
    >>> X = np.random.RandomState(0).rand(5, 6)
    >>> RandomMaclaurin(n_components=32, degree=3, random_state=0).fit_transform(X).shape
    (5, 32)
    """

    _parameter_constraints: dict = {
        "n_components": [Count(1)],
        "degree": [Count(1)],
        "c": [Interval(Real, 0, None, closed="left")],
        "p": [Interval(Real, 1, None, closed="neither")],
        "fix_order": [None, "boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=100, *, degree=2, c=1.0, p=2.0, fix_order=None, random_state=None):
        self.n_components = n_components
        self.degree = degree
        self.c = c
        self.p = p
        self.fix_order = fix_order
        self.random_state = random_state

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None) -> Self:
        """Draw the orders and the Rademacher vectors; only the number of features of X is used.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; only its number of features is used.
        y : None
            Ignored; present for API consistency with scikit-learn pipelines.

        Returns
        -------
        self : object
            The fitted transformer.
        """
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        d = X.shape[1]
        D, m, c = self.n_components, self.degree, float(self.c)
        check_allocation("The random weights", (D, d + 1), hint="Lower n_components (D) or the number of features.")
        rng = check_random_state(self.random_state)
        fixed = (c == 0.0) if self.fix_order is None else bool(self.fix_order)
        self._augmented = fixed and c > 0.0
        if fixed:
            self.orders_ = np.full(D, m, dtype=np.int64)
            self.feature_scales_ = np.full(D, 1.0 / np.sqrt(D))  # a_m = 1 for <x~, y~>^m
        else:
            q = 1.0 / self.p
            self.orders_ = rng.geometric(1.0 - q, size=D).astype(np.int64) - 1  # P(N=n) = (1-q) q^n
            n = np.minimum(self.orders_, m)
            a = np.where(self.orders_ <= m, comb(m, n) * c ** (m - n), 0.0)
            prob = (1.0 - q) * q ** n
            self.feature_scales_ = np.sqrt(a / prob / D)
        # Group features by order (ascending) so that one GEMM gives all projections
        # and each order's products are element-wise products of contiguous column ranges.
        self._groups = []
        row = 0
        for order in range(1, m + 1):
            cols = np.flatnonzero(self.orders_ == order)
            if cols.size:
                self._groups.append((order, cols, row, row + order * cols.size))
                row += order * cols.size
        self._constant_cols = np.flatnonzero(self.orders_ == 0)
        self._wasted_cols = np.flatnonzero(self.orders_ > m)
        self.random_weights_ = get_distribution("rademacher").sample(rng, (row, d + self._augmented))
        return self

    if TYPE_CHECKING:  # TransformerMixin.fit_transform, typed (scikit-learn ships no annotations)
        def fit_transform(self, X, y: object = None, **fit_params: object) -> Features: ...

    def transform(self, X) -> Features:
        """Map X to its Random Maclaurin features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples. float32 input is mapped in float32 (one GEMM with exact
            Rademacher weights, then products of at most m projections) and gives float32 output.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            The random features; <Z(x), Z(y)> estimates (c + <x, y>)^m without bias.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        n, d = X.shape
        W = self.random_weights_.astype(X.dtype, copy=False)
        Wt = W[:, :d].T
        offset = np.sqrt(float(self.c)) * W[:, d] if self._augmented else None
        D = self.n_components
        check_allocation("The random features Z", (n, D), hint="Transform fewer rows at a time or lower n_components (D).")
        out = np.empty((n, D), dtype=X.dtype)
        constants = self.feature_scales_[self._constant_cols].astype(X.dtype)  # order 0: sqrt(a_0 / P(0)) / sqrt(D)
        for rows in row_blocks(n, 8 * (W.shape[0] + d), TRANSFORM_BLOCK_BYTES):
            G_all = np.asarray(X[rows] @ Wt)  # (b, total rows): <w_i, x> for every vector
            if offset is not None:
                G_all += offset
            # Columns of `out` are scattered sub-block by sub-block, in cache.
            for sub in row_blocks(G_all.shape[0], 8 * (W.shape[0] + D), SCATTER_BLOCK_BYTES):
                G, target = G_all[sub], out[rows][sub]
                target[:, self._constant_cols] = constants
                target[:, self._wasted_cols] = 0.0  # order > m: a_N = 0
                for order, cols, start, stop in self._groups:
                    k = cols.size
                    prod = G[:, start:start + k] * self.feature_scales_[cols].astype(X.dtype)
                    for i in range(1, order):  # at most m - 1 passes, not a loop over features
                        prod *= G[:, start + i * k:start + (i + 1) * k]
                    target[:, cols if k < D else slice(None)] = prod
        return out

    @property
    def _n_features_out(self):
        return self.n_components

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags
