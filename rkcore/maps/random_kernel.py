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
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .distributions import DISTRIBUTIONS, draw_with, get_distribution
from ..kernels.fastpaths import gemm_into, rk_block
from ..kernels.itemsets import ItemsetFamily, check_degree_fits, family_from_spec
from ..base.limits import check_allocation
from ..kernels.exact import (
    _dense,
    _gram,
    _abs_max,
    _max_nnz_per_row,
    _power,
    elementary_from_power_sums,
    elementary_pairs,
    elementary_top,
    explicit_features,
    itemset_kernel,
    may_overflow,
    newton_is_safe,
    product_one_plus,
    power_sums,
    rounding_gamma,
    row_blocks,
)

RK_KERNELS = ("anova", "all_subsets", "dot", "up_to", "itemset")

#: Temporary memory per row block in transform. Small enough that a block's
#: (rows x D) intermediates stay in cache for the element-wise passes.
TRANSFORM_BLOCK_BYTES = 8 * 2**20
#: ...but at least this many rows for maps built on GEMMs, so that W (D x d, up to
#: hundreds of MB) is streamed through the product a few times, not once per tiny block.
MIN_GEMM_BLOCK_ROWS = 256


class RandomKernel(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
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
        Seeds the random draw: an int gives the same weights on every call (and on every
        machine), None uses numpy's global random state. See :term:`Glossary <random_state>`.

    Notes
    -----
    Accuracy contract (see :mod:`rkcore.kernels.exact`): every feature is within
    1e-12 * sum_{V in S} |prod_{j in V} x_j w_sj| / sqrt(D) of K_S(x, w_s) / sqrt(D), and
    finite wherever that value is. Newton's identities are used where an a-posteriori bound
    vouches for them (for Rademacher weights the bound costs O(d) per row; for other
    weights of ANOVA-2/3 a sufficient condition on the computed power sums, plus the power
    sums of |x w| for the entries it leaves, and one GEMM of absolute values for m = 3),
    the stable recursion elsewhere.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_components, n_features)
        Read-only: transform reuses what it precomputes from them (assign a new array to
        change them).
    family_ : ItemsetFamily
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.maps.random_kernel import RandomKernel
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
        """Draw the random weights; only the number of features of X is used.

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
        check_degree_fits(self.kernel, self.degree, d)
        self.family_ = family_from_spec(self.kernel, d, self.degree, self.itemsets)
        check_allocation("The random weights", (self.n_components, d),
                         hint="Lower n_components (D) or the number of features.")
        self.random_weights_ = draw_weights(self.distribution, self.n_components, d, self.random_state)
        self._mapper_cache = {}  # filled by transform (a container: transform leaves __dict__ as is)
        return self

    def transform(self, X):
        """Map X to its random features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples. float32 input gives float32 output (see :func:`_float32_safe`).

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            The random features; <Z(x), Z(y)> estimates K_S(x, y) without bias.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        # float32 arithmetic only where the map is one GEMM and a few element-wise passes
        # (error that of the float32 GEMM); other families compute each block in float64
        # and store it in float32, saving the output memory but not the time.
        out_dtype = X.dtype
        compute32 = out_dtype == np.float32 and _float32_safe(self.family_)
        if out_dtype == np.float32 and not compute32:
            X = X.astype(np.float64)
        check_allocation("The random features Z", (X.shape[0], self.random_weights_.shape[0]),
                         hint="Transform fewer rows at a time or lower n_components (D).")
        return _map_row_blocks(self._mapper(compute32), X, self.random_weights_.shape[0], out_dtype)

    def _mapper(self, compute32: bool):
        """The block function of the fitted weights (_block_mapper), built once per weights
        array and dtype: its precomputation (powers of W, |W|, casts) costs O(D d) passes, as
        much as the map itself when the block is small. Reused only while ``random_weights_``
        is the same read-only array (fit's); weights assigned by hand as a writeable array
        are read afresh on every call."""
        W0, family = self.random_weights_, self.family_
        signs = self.distribution == "rademacher"
        cache = getattr(self, "_mapper_cache", None)
        entry = cache.get((compute32, signs)) if cache is not None else None
        if entry is not None and entry[0] is W0 and entry[1] is family:
            return entry[2]
        W = W0.astype(np.float32) if compute32 else W0
        block = _block_mapper(family, W, signs)
        if cache is not None and not W0.flags.writeable:
            cache[(compute32, signs)] = (W0, family, block)
        return block

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_mapper_cache", None)  # rebuilt on the first transform (no pickled W copies)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._mapper_cache = {}
        W = getattr(self, "random_weights_", None)
        if isinstance(W, np.ndarray) and W.flags.owndata:
            W.flags.writeable = False  # as fit leaves it (pickling makes arrays writeable)

    @property
    def _n_features_out(self):
        return self.n_components

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def _float32_safe(family: ItemsetFamily) -> bool:
    """Whether the map of this family is computed in float32 for float32 input: the dot and
    second-order ANOVA maps (one GEMM plus element-wise passes, exact Rademacher weights).
    Higher orders go through Newton's identities, whose cancellation float32's 24-bit
    mantissa does not absorb; they are computed in float64 and stored in float32."""
    return family.kind == "dot" or (family.kind == "anova" and family.degree == 2)


def draw_weights(distribution: str, n_components: int, n_features: int, random_state) -> np.ndarray:
    """The weights ``RandomKernel.fit`` draws: (n_components, n_features) from the distribution,
    read-only (transform precomputes from them once: powers of W, |W|, casts, and reuses that
    while they are the same array, which in-place edits would falsify)."""
    dist = get_distribution(distribution)
    W = draw_with(random_state, lambda rng: dist.sample(rng, (n_components, n_features)))
    W.flags.writeable = False
    return W


def _map_row_blocks(block: "_Mapper", X, D: int, out_dtype) -> np.ndarray:
    """Apply a block function of D output columns to X a row block at a time: intermediates are
    a few (rows x D) arrays, so memory stays bounded."""
    n = X.shape[0]
    out = np.empty((n, D), dtype=out_dtype)
    bytes_per_row = 8 * D * block.temporaries
    if block.gemm:
        bytes_per_row = min(bytes_per_row, max(1, TRANSFORM_BLOCK_BYTES // MIN_GEMM_BLOCK_ROWS))
    for rows in row_blocks(n, bytes_per_row, TRANSFORM_BLOCK_BYTES):
        block(X[rows], out[rows])  # writes the row block in place
    return out


def stacked_features(X, kernel: str, degree: int, itemsets, distribution: str, n_components: int,
                     seeds) -> np.ndarray:
    """The features of several RandomKernel maps that differ only in their seed, side by side,
    computed as one map: columns [t D, (t + 1) D) are
    ``RandomKernel(n_components, kernel=..., distribution=..., random_state=seeds[t]).fit(X).transform(X)``
    (the same weights; the same values up to the summation order of one wider GEMM). One
    precomputation and one pass over X instead of one per map: the error engine's trials
    (rkcore.studies.errors) at small n, where per-call overhead dominates. X: validated float64
    (dense or CSR); the caller bounds n x len(seeds) x D."""
    d = X.shape[1]
    check_degree_fits(kernel, degree, d)
    family = family_from_spec(kernel, d, degree, itemsets)
    W = np.vstack([draw_weights(distribution, n_components, d, seed) for seed in seeds])
    return _map_row_blocks(_block_mapper(family, W, distribution == "rademacher", n_components), X, W.shape[0],
                           np.float64)


def _block_mapper(family: ItemsetFamily, W: np.ndarray, signs: bool, n_components: int | None = None):
    """A function mapping a block of rows of X to its RK features, with precomputation on W.
    Features are scaled by 1/sqrt(n_components) (default: the rows of W; stacked maps keep their D)."""
    D = W.shape[0]  # output columns
    scale = 1.0 / np.sqrt(n_components or D)
    kind, m = family.kind, family.degree

    if kind == "dot":
        Wt = W.T * scale
        return _Mapper(lambda Xb: np.asarray(Xb @ Wt), 1)

    if kind == "up_to" and m == 0:  # only the empty itemset: every feature is 1 / sqrt(D)
        return _Mapper(lambda Xb: np.full((Xb.shape[0], D), scale), 1, gemm=False)

    # Accuracy contract (rkcore.kernels.exact): Newton's identities where newton_is_safe vouches for
    # them, the stable recursion elsewhere. For Rademacher weights |x_j w_j| = |x_j|, so the
    # power sums of |z| are row sums and the check costs O(d) per row.
    w_max = _abs_max(W)

    def repair(Z, Xb, ok, degree, all_orders, factor):
        """Recompute the features where ``ok`` is False (or not finite) with the stable recursion."""
        if Z.dtype != np.float64 or may_overflow(_abs_max(Xb), w_max, W.shape[1], degree):
            ok = ok & np.isfinite(Z)  # (float32 overflows far below may_overflow's threshold)
        if ok.all():
            return Z
        rows, cols = np.nonzero(~np.broadcast_to(ok, Z.shape))
        fixed = elementary_pairs(Xb, W, rows, cols, degree, all_orders)
        Z[rows, cols] = (sum(fixed) if all_orders else fixed) * factor
        return Z

    if kind == "anova" and m in (2, 3):
        # In-place closed forms (fastpaths.AnovaBlock, 1/(m! sqrt D) folded into the weights as
        # c^t W^t), then the same a-posteriori check and repair as every Newton path here: the
        # power sums of |c x w| (Pa_2 = P_2, kept by the block) decide which features the
        # stable recursion recomputes. Rademacher: the check is on row sums, O(nnz) per row.
        fast = rk_block(kind, m, W, signs, n_components)
        c = fast.c

        def anova_fast(Xb, out):
            gamma = rounding_gamma(_max_nnz_per_row(Xb) + 2 * m)
            if not signs and out.dtype == np.float64 and not may_overflow(_abs_max(Xb), w_max, W.shape[1], m):
                # Fused: features and a sufficient condition for newton_is_safe on cache-sized
                # chunks; newton_is_safe itself decides for the few entries that condition
                # leaves (fastpaths.AnovaBlock.checked). None: gamma too large for tier 1.
                with np.errstate(over="ignore", invalid="ignore"):
                    bad = fast.checked(Xb, out, float(gamma))
                if bad is not None:
                    rows, cols = bad
                    if len(rows):
                        out[rows, cols] = elementary_pairs(Xb, W, rows, cols, m, False) * scale
                    return out
            sums: dict = {}
            with np.errstate(over="ignore", invalid="ignore"):
                fast(Xb, out, sums)
                absX = abs(Xb)
                if signs:
                    Pa = [None, c * _row_sums(absX), sums["P2"]]
                    if m == 3:
                        Pa.append(c**3 * _row_sums(_power(absX, 3)))
                else:
                    scratch = sums.get("scratch")
                    Pa1 = gemm_into(1.0, absX, fast._abs_weights(1), 0.0, np.empty_like(out) if scratch is None else scratch)
                    Pa = [None, Pa1, sums["P2"]]
                    if m == 3:  # one more GEMM; the check uses it only where 3 Pa_2 > A^2 (1 - ...)
                        Pa.append(gemm_into(1.0, _power(absX, 3), fast._abs_weights(3), 0.0, np.empty_like(out)))
                ok = newton_is_safe(Pa, m, gamma)
            return repair(out, Xb, ok, m, False, scale)

        # (rows x D) temporaries: Rademacher none beyond m = 3's scratch; otherwise P_2 (m = 2)
        # or P_2, P_3 and A (m = 3) in the fused check. Fractions: fast blocks are a few large BLAS calls (cheap
        # per row, costly per call under load; see fastpaths.GEMM_BLOCK_TEMPORARIES).
        return _Mapper(anova_fast, fast.temporaries if signs else 0.5, in_place=True)

    if kind in ("anova", "up_to"):
        powers = None if signs else [None] + [W**t for t in range(1, m + 1)]
        W_abs = None if signs else np.abs(W)

        def abs_power_sums(Xb, P, upto):
            """Power sums of |x * w| (even ones are P's): row sums, or one GEMM per odd order."""
            Pa = [None]
            for t in range(1, upto + 1):
                if t % 2 == 0:
                    Pa.append(P[t])
                elif signs:
                    Pa.append(np.asarray(abs(_power(Xb, t)).sum(axis=1)).reshape(-1, 1))
                else:
                    Pa.append(_gram(_power(abs(Xb), t), W_abs**t if t > 1 else W_abs))
            return Pa
        # e_m(c x, w) = c^m e_m(x, w): scaling the (small) X block by D^(-1/(2m)) replaces a
        # pass over the (rows x D) output. Sums over orders (up_to) need the output scaled.
        x_scale = scale ** (1.0 / m) if kind == "anova" else 1.0

        def anova(Xb):
            Xb = Xb * x_scale if x_scale != 1.0 else Xb
            gamma = rounding_gamma(_max_nnz_per_row(Xb) + 2 * m)
            with np.errstate(over="ignore", invalid="ignore"):
                if signs:
                    P = power_sums(Xb, W, m, y_is_sign=True)
                else:
                    P = [None] + [_gram(Xb.power(t) if sp.issparse(Xb) else Xb**t, powers[t]) for t in range(1, m + 1)]
                ok = newton_is_safe(abs_power_sums(Xb, P, m), m, gamma, all_orders=kind == "up_to")
                if kind == "anova":
                    Z = elementary_top(P, m)
                    if Z.shape != (Xb.shape[0], D):
                        Z = np.broadcast_to(Z, (Xb.shape[0], D)).copy()
                    return repair(Z, Xb, ok, m, False, 1.0)
                e = elementary_from_power_sums(P, m)
                Z = np.broadcast_to(e[1], (Xb.shape[0], D)).copy()
                for ek in e[2:]:
                    Z += ek
                Z += 1.0
                Z *= scale
            return repair(Z, Xb, ok, m, True, scale)

        return _Mapper(anova, m + 3)

    if kind == "all_subsets":
        # Rademacher: log trick (one GEMM/SpMM of logs, then exp: inf only where the exact
        # value is); other weights: product over each row's non-zeros, which can overflow or
        # give inf * 0 on the way. Either way, non-finite features are recomputed in log space.
        fast = rk_block(kind, m, W, signs, n_components)
        log_scale = np.log(scale)

        def all_subsets_fast(Xb, out):
            with np.errstate(over="ignore", invalid="ignore"):
                fast(Xb, out)
            bad = ~np.isfinite(out)
            if bad.any():
                r, c_ = np.nonzero(bad)
                for sl in row_blocks(len(r), 8 * 8 * W.shape[1]):
                    out[r[sl], c_[sl]] = product_one_plus(_dense(Xb[r[sl]]), W[c_[sl]], log_scale)
            return out

        return _Mapper(all_subsets_fast, fast.temporaries, in_place=True)

    if kind == "custom":
        phi_W = explicit_features(W, family).T * scale
        return _Mapper(lambda Xb: explicit_features(Xb, family) @ phi_W, phi_W.shape[0] // D + 2)

    # cross-field families: per-field products, exact kernel between X and the weights
    return _Mapper(lambda Xb: itemset_kernel(Xb, W, family) * scale, len(family.fields) + 2 * m)


class _Mapper:
    """A block function, how many (rows x D) temporaries it allocates, and whether it is
    GEMM-bound (then blocks keep at least MIN_GEMM_BLOCK_ROWS rows); for block sizing.

    ``fn(Xb)`` returns the block, or with ``in_place`` ``fn(Xb, out)`` writes it. The block is
    computed in the dtype of Xb (float64 unless the family is float32-safe) and stored in
    out's: a float32 ``out`` of a float64 computation gets a float64 buffer first."""

    def __init__(self, fn, temporaries: float, gemm: bool = True, in_place: bool = False):
        self.fn, self.temporaries, self.gemm, self.in_place = fn, temporaries, gemm, in_place

    def __call__(self, Xb, out):
        if not self.in_place:
            out[...] = self.fn(Xb)
        elif out.dtype == Xb.dtype:
            self.fn(Xb, out)
        else:
            out[...] = self.fn(Xb, np.empty(out.shape, dtype=Xb.dtype))
        return out


def _row_sums(A) -> np.ndarray:
    """Row sums of a dense or sparse block as a (rows, 1) column."""
    return np.asarray(A.sum(axis=1)).reshape(-1, 1)
