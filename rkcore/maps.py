"""Random feature maps as scikit-learn transformers.

:class:`RandomKernel` is Algorithm 1 of Atarashi, Maji & Oyama (AAAI-19): draw D
random vectors w_s with i.i.d. zero-mean, unit-variance entries and map
x -> (K_S(x, w_1), ..., K_S(x, w_D)) / sqrt(D), so that <Z(x), Z(y)> is an
unbiased estimate of the itemset kernel K_S(x, y) (Propositions 1 and 2).
"""
from __future__ import annotations

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .distributions import DISTRIBUTIONS, get_distribution
from .fastpaths import rk_block
from .itemsets import ItemsetFamily, family_from_spec
from .kernels import (
    _dense,
    _gram,
    elementary_from_power_sums,
    elementary_top,
    explicit_features,
    itemset_kernel,
    power_sums,
    row_blocks,
)

RK_KERNELS = ("anova", "all_subsets", "dot", "up_to", "itemset")

#: Temporary memory per row block in transform. Small enough that a block's
#: (rows x D) intermediates stay in cache for the element-wise passes.
TRANSFORM_BLOCK_BYTES = 8 * 2**20
#: ...but at least this many rows for maps built on GEMMs, so that W (D x d, up to
#: hundreds of MB) is streamed through the product a few times, not once per tiny block.
MIN_GEMM_BLOCK_ROWS = 256


class RandomKernel(TransformerMixin, BaseEstimator):
    r"""Random kernel (RK) feature map for the itemset kernel (Algorithm 1).

    .. math::
        Z(\mathbf{x}) = \tfrac{1}{\sqrt{D}}\big(K_{\mathcal{S}}(\mathbf{x}, \boldsymbol\omega_1),
        \dots, K_{\mathcal{S}}(\mathbf{x}, \boldsymbol\omega_D)\big),\qquad
        \mathbb{E}\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle = K_{\mathcal{S}}(\mathbf{x}, \mathbf{y}).

    Parameters
    ----------
    n_components : int, default=100
        D, the number of random features.
    kernel : {"anova", "all_subsets", "dot", "up_to", "itemset"}, default="anova"
        The itemset family S. With "itemset" the family comes from ``itemsets``.
    degree : int, default=2
        Order m for "anova" (itemsets of size m) and "up_to" (sizes 0..m); ignored otherwise.
    itemsets : list of tuples of int or ItemsetFamily, default=None
        The family for ``kernel="itemset"``.
    distribution : {"rademacher", "gaussian", "uniform", "laplace"}, default="rademacher"
        Distribution of the entries of w_s; all have mean 0 and variance 1.
        Rademacher has the minimax-optimal variance (Lemma 4).
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_components, n_features)
    family_ : ItemsetFamily
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.maps import RandomKernel
    >>> X = np.random.RandomState(0).rand(5, 6)
    >>> Z = RandomKernel(n_components=64, degree=2, random_state=0).fit_transform(X)
    >>> Z.shape
    (5, 64)
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "kernel": [StrOptions(set(RK_KERNELS))],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "itemsets": [None, list, tuple, ItemsetFamily],
        "distribution": [StrOptions(set(DISTRIBUTIONS))],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=100, *, kernel="anova", degree=2, itemsets=None,
                 distribution="rademacher", random_state=None):
        self.n_components = n_components
        self.kernel = kernel
        self.degree = degree
        self.itemsets = itemsets
        self.distribution = distribution
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Draw the random weights; only the number of features of X is used."""
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        d = X.shape[1]
        if self.kernel in ("anova", "up_to") and self.degree > d:
            raise ValueError(
                f"degree={self.degree} exceeds the number of features: X has {d} feature(s), and "
                f"the {self.kernel} kernel needs itemsets of size at most d (allowed: 1 <= degree <= {d})."
            )
        self.family_ = family_from_spec(self.kernel, d, self.degree, self.itemsets)
        rng = check_random_state(self.random_state)
        self.random_weights_ = get_distribution(self.distribution).sample(rng, (self.n_components, d))
        return self

    def transform(self, X):
        """Map X (n_samples, n_features) to Z (n_samples, n_components)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        W = self.random_weights_
        n, D = X.shape[0], W.shape[0]
        block = _block_mapper(self.family_, W, self.distribution == "rademacher")
        out = np.empty((n, D))
        # Block rows: intermediates are a few (rows x D) arrays, so memory stays bounded.
        bytes_per_row = 8 * D * block.temporaries
        if block.gemm:
            bytes_per_row = min(bytes_per_row, max(1, TRANSFORM_BLOCK_BYTES // MIN_GEMM_BLOCK_ROWS))
        for rows in row_blocks(n, bytes_per_row, TRANSFORM_BLOCK_BYTES):
            block(X[rows], out[rows])  # writes the row block in place
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _block_mapper(family: ItemsetFamily, W: np.ndarray, signs: bool):
    """A function mapping a block of rows of X to its RK features, with precomputation on W."""
    D = W.shape[0]
    scale = 1.0 / np.sqrt(D)
    kind, m = family.kind, family.degree
    fast = rk_block(kind, m, W, signs)  # ANOVA-2/3, all-subsets: in-place, sparse-aware (fastpaths.py)
    if fast is not None:
        return fast

    if kind == "dot":
        Wt = W.T * scale
        return _Mapper(lambda Xb: np.asarray(Xb @ Wt), 1)

    if kind == "anova" and m == 2:
        # K_A^2(x, w) = ((x.w)^2 - <x^2, w^2>) / 2; fold 1/(2 sqrt D) into W so the map is one
        # GEMM and two in-place passes. For w in {-1,1}^d, <x^2, w^2> is just sum_j x_j^2.
        c = np.sqrt(scale / 2.0)
        Wc = W.T * c
        W2c = None if signs else (W * W).T * (c * c)

        def anova2(Xb):
            Z = np.asarray(Xb @ Wc)
            np.square(Z, out=Z)
            X2 = Xb.multiply(Xb) if sp.issparse(Xb) else Xb * Xb
            if signs:
                Z -= (np.asarray(X2.sum(axis=1)).reshape(-1) * (c * c))[:, None]
            else:
                Z -= np.asarray(X2 @ W2c)
            return Z

        return _Mapper(anova2, 2)

    if kind in ("anova", "up_to"):
        powers = None if signs else [None] + [W**t for t in range(1, m + 1)]
        # e_m(c x, w) = c^m e_m(x, w): scaling the (small) X block by D^(-1/(2m)) replaces a
        # pass over the (rows x D) output. Sums over orders (up_to) need the output scaled.
        x_scale = scale ** (1.0 / m) if kind == "anova" else 1.0

        def anova(Xb):
            Xb = Xb * x_scale if x_scale != 1.0 else Xb
            if signs:
                P = power_sums(Xb, W, m, y_is_sign=True)
            else:
                P = [None] + [_gram(Xb.power(t) if sp.issparse(Xb) else Xb**t, powers[t]) for t in range(1, m + 1)]
            if kind == "anova":
                return elementary_top(P, m)
            e = elementary_from_power_sums(P, m)
            Z = e[1]
            for ek in e[2:]:
                Z += ek
            Z += 1.0
            Z *= scale
            return Z

        return _Mapper(anova, m + 3)

    if kind == "all_subsets" and signs:
        return _Mapper(lambda Xb: _all_subsets_signs(_dense(Xb), W, -0.5 * np.log(D)), 3)

    if kind == "all_subsets":
        W_T = np.ascontiguousarray(W.T)

        def all_subsets(Xb):
            Xd = _dense(Xb)
            # A zero feature contributes the factor 1 + 0 * w = 1: multiply over each row's non-zeros
            # only, padded with zeros to the block's largest count (MovieLens rows: ~8 of 78 features).
            k = int((Xd != 0).sum(axis=1).max())
            if k > 0.75 * Xd.shape[1]:
                factors = Xd[:, None, :] * W[None, :, :]
            else:
                cols = np.argsort(Xd == 0, axis=1, kind="stable")[:, :k]  # non-zero columns first
                vals = np.take_along_axis(Xd, cols, axis=1)
                factors = vals[:, None, :] * W_T[cols].transpose(0, 2, 1)
            factors += 1.0
            return factors.prod(axis=2) * scale

        return _Mapper(all_subsets, W.shape[1] + 1, gemm=False)

    if kind == "custom":
        phi_W = explicit_features(W, family).T * scale
        return _Mapper(lambda Xb: explicit_features(Xb, family) @ phi_W, phi_W.shape[0] // D + 2)

    # cross-field families: per-field products, exact kernel between X and the weights
    return _Mapper(lambda Xb: itemset_kernel(Xb, W, family) * scale, len(family.fields) + 2 * m)


class _Mapper:
    """A block function, how many (rows x D) temporaries it allocates, and whether it is
    GEMM-bound (then blocks keep at least MIN_GEMM_BLOCK_ROWS rows); for block sizing."""

    def __init__(self, fn, temporaries: int, gemm: bool = True):
        self.fn, self.temporaries, self.gemm = fn, temporaries, gemm

    def __call__(self, Xb, out):
        out[...] = self.fn(Xb)
        return out


def _all_subsets_signs(X: np.ndarray, W: np.ndarray, log_scale: float) -> np.ndarray:
    """prod_j (1 + x_j w_j) for w in {-1, +1}^d as two matrix products and an exp.

    For w_j = +-1, log|1 + x_j w_j| = a_j + b_j w_j with a_j, b_j from log|1 + x_j| and
    log|1 - x_j|; whether the factor is negative, or exactly zero (x_j = -+1), is also
    affine in w_j. So log|prod|, the number of negative factors and the number of zero
    factors are each a row sum plus a matrix product with W^T.
    """
    with np.errstate(divide="ignore"):
        log_plus = np.log(np.abs(1.0 + X))
        log_minus = np.log(np.abs(1.0 - X))
    zero_plus, zero_minus = X == -1.0, X == 1.0  # factor vanishes for w_j = +1 / -1
    log_plus[zero_plus] = 0.0
    log_minus[zero_minus] = 0.0
    a = 0.5 * (log_plus + log_minus)
    b = 0.5 * (log_plus - log_minus)
    Z = b @ W.T
    Z += (a.sum(axis=1) + log_scale)[:, None]
    np.exp(Z, out=Z)
    neg_plus, neg_minus = X < -1.0, X > 1.0  # factor negative for w_j = +1 / -1
    if neg_plus.any() or neg_minus.any():
        count = _affine_count(neg_plus, neg_minus, W)
        Z[np.rint(count).astype(np.int64) % 2 == 1] *= -1.0
    if zero_plus.any() or zero_minus.any():
        Z[np.rint(_affine_count(zero_plus, zero_minus, W)) > 0] = 0.0
    return Z


def _affine_count(when_plus: np.ndarray, when_minus: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Number of j where (w_j = +1 and when_plus) or (w_j = -1 and when_minus), for every row of W."""
    p, q = when_plus.astype(np.float64), when_minus.astype(np.float64)
    return (0.5 * (p + q).sum(axis=1))[:, None] + (0.5 * (p - q)) @ W.T
