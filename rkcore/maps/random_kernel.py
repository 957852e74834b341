"""Random feature maps as scikit-learn transformers.

:class:`RandomKernel` is Algorithm 1 of Atarashi, Maji & Oyama (AAAI-19): draw D
random vectors w_s with i.i.d. zero-mean, unit-variance entries and map
x -> (K_S(x, w_1), ..., K_S(x, w_D)) / sqrt(D), so that <Z(x), Z(y)> is an
unbiased estimate of the itemset kernel K_S(x, y) (Propositions 1 and 2).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any


import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from ..base.arrays import validate_data  # scikit-learn's, in the user's words for ragged or text rows
from ..base.validation import Count  # sizes: integers, never True

from .distributions import DISTRIBUTIONS, draw_with, get_distribution
from ..kernels.itemsets import ItemsetFamily, check_degree_fits, family_from_spec
from ..kernels.numerics import canonical_csr, row_blocks
from ..kernels.ranges import saturate_overflowed_rows
from ..base.limits import block_bytes, check_allocation, estimate_cost, nbytes, require_memory
from .rk_blocks import _block_mapper, _Mapper
from ..base.annotations import fit_context, is_sparse

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..base.annotations import Features


RK_KERNELS = ("anova", "all_subsets", "dot", "up_to", "itemset")

#: Temporary memory per row block in transform. Small enough that a block's
#: (rows x D) intermediates stay in cache for the element-wise passes; lowered to scikit-learn's
#: working_memory when that is smaller (row_blocks), as the memory it is also bounds.
TRANSFORM_BLOCK_BYTES = 8 * 2**20
#: ...but at least this many rows for maps built on GEMMs, so that W (D x d, up to
#: hundreds of MB) is streamed through the product a few times, not once per tiny block.
MIN_GEMM_BLOCK_ROWS = 256


class RandomKernel(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Random kernel (RK) feature map for the itemset kernel (Algorithm 1).

    Draws D random vectors w_s with i.i.d. zero-mean, unit-variance entries and maps a sample to its
    kernel values against them, scaled by 1/sqrt(D), so that the inner product of two feature vectors
    is an unbiased estimate of the itemset kernel K_S (Propositions 1 and 2):

    .. math::
        Z(\mathbf{x}) = \tfrac{1}{\sqrt{D}}\big(K_{\mathcal{S}}(\mathbf{x}, \boldsymbol\omega_1),
        \dots, K_{\mathcal{S}}(\mathbf{x}, \boldsymbol\omega_D)\big),\qquad
        \mathbb{E}\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle = K_{\mathcal{S}}(\mathbf{x}, \mathbf{y}).

    Parameters
    ----------
    n_components : int, default=100
        D, the number of random features (columns of the output).
    kernel : {"anova", "all_subsets", "dot", "up_to", "itemset"}, default="anova"
        The itemset family S: "anova" every itemset of size ``degree``, "all_subsets" every subset of
        the features, "dot" the single features (the linear kernel), "up_to" the sizes 0 to ``degree``,
        "itemset" the family given by ``itemsets``.
    degree : int, default=2
        Order m for "anova" (itemsets of size m) and "up_to" (sizes 0..m), 1 <= m <= n_features;
        ignored otherwise.
    itemsets : list of tuple of int or ItemsetFamily, default=None
        The family for ``kernel="itemset"`` (0-based feature indices); ignored otherwise.
    distribution : str, default="rademacher"
        Distribution of the entries of w_s, a key of :data:`rkcore.maps.distributions.DISTRIBUTIONS`:
        "rademacher", "gaussian", "uniform", "laplace", "gaussian-orthogonal" or "rademacher-hadamard";
        all have mean 0 and variance 1. Rademacher has the minimax-optimal variance (Lemma 4). The last two draw
        the rows in orthogonal blocks: each row keeps the law of i.i.d. Gaussian (resp. Rademacher)
        entries, so the estimate stays unbiased, but the rows of a block are dependent, which changes
        its variance.
    random_state : int, RandomState instance or None, default=None
        Seeds the random draw: an int gives the same weights on every call (and on every
        machine), None uses numpy's global random state. See :term:`Glossary <random_state>`.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_components, n_features_in_)
        The random vectors w_s as rows, float64. Read-only: transform reuses what it precomputes
        from them (assign a new array to change them).
    family_ : ItemsetFamily
        The itemset family S over the ``n_features_in_`` features, from ``kernel``, ``degree`` and
        ``itemsets``.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    rkcore.maps.circulant.SignedCirculantRandomKernel : The RK map of the ANOVA kernel with Rademacher
        weights in circulant blocks, O(m D log d) per sample instead of O(m D d).
    rkcore.maps.maclaurin.RandomMaclaurin : Random Maclaurin features of dot-product kernels.
    rkcore.kernels.exact.itemset_kernel : The exact kernel K_S the features estimate.

    Notes
    -----
    Cost: ``fit`` draws D x n_features weights; ``transform`` takes O(m D d) per sample for ANOVA-m
    (Newton's identities on the power sums), computed in row blocks of about 8 MB of temporaries, so
    memory beyond the (n_samples, D) output stays bounded.

    Accuracy contract (see :mod:`rkcore.kernels.exact`): every feature is within
    1e-12 * sum_{V in S} |prod_{j in V} x_j w_sj| / sqrt(D) of K_S(x, w_s) / sqrt(D), and
    finite wherever that value is. Newton's identities are used where an a-posteriori bound
    vouches for them (for Rademacher weights the bound costs O(d) per row; for other
    weights of ANOVA-2/3 a sufficient condition on the computed power sums, plus the power
    sums of |x w| for the entries it leaves, and one GEMM of absolute values for m = 3),
    the stable recursion elsewhere.

    References
    ----------
    Atarashi, Maji & Oyama. Random feature maps for the itemset kernel. AAAI 2019, Algorithm 1.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.kernels.exact import anova_kernel
    >>> from rkcore.maps.random_kernel import RandomKernel
    >>> X = np.random.RandomState(0).rand(5, 6)
    >>> Z = RandomKernel(n_components=64, degree=2, random_state=0).fit_transform(X)
    >>> Z.shape
    (5, 64)

    With many features, Z Z^T is close to the exact Gram matrix:

    >>> Z = RandomKernel(n_components=20000, degree=2, random_state=0).fit_transform(X)
    >>> K = anova_kernel(X, degree=2)
    >>> bool(np.abs(Z @ Z.T - K).max() < 0.05 * K.max())
    True
    """

    _parameter_constraints: dict = {
        "n_components": [Count(1)],
        "kernel": [StrOptions(set(RK_KERNELS))],
        "degree": [Count(1)],
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

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None) -> Self:
        """Draw the random weights; only the number of features of X is used.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; only its number of features (and its feature names, if any) is used.
        y : None
            Ignored; present for API consistency with scikit-learn pipelines.

        Returns
        -------
        self : object
            The fitted transformer.

        Raises
        ------
        ValueError
            If ``degree`` exceeds n_features for "anova" or "up_to", or the weights
            (n_components x n_features float64) exceed the memory budget
            (:func:`rkcore.base.limits.memory_budget`).
        """
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        d = X.shape[1]
        check_degree_fits(self.kernel, self.degree, d)
        self.family_ = family_from_spec(self.kernel, d, self.degree, self.itemsets)
        check_allocation("The random weights and their draw", (_DRAW_COPIES, self.n_components, d),
                         hint="Lower n_components (D) or the number of features.",
                         largest={"n_components (D)": lambda D: nbytes((_DRAW_COPIES, D, d))})
        self.random_weights_ = draw_weights(self.distribution, self.n_components, d, self.random_state)
        # filled by transform (a container: transform leaves __dict__ as is); (float32, signs) -> (W, family, block)
        self._mapper_cache: dict[tuple[bool, bool], tuple[np.ndarray, ItemsetFamily, Any]] = {}
        return self

    if TYPE_CHECKING:  # TransformerMixin.fit_transform, typed (scikit-learn ships no annotations)
        def fit_transform(self, X, y: object = None, **fit_params: object) -> Features: ...

    def transform(self, X) -> Features:
        """Map X to its random features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples, with the ``n_features_in_`` features seen in fit (CSR for sparse input).
            float32 input gives float32 output: computed in float32 for ``kernel="dot"`` (one GEMM,
            whose float32 error stays within the float32 accuracy contract of
            :mod:`rkcore.kernels.numerics`), computed in float64 and stored in float32 for every
            other family (Newton's identities cancel more than float32's 24-bit mantissa absorbs).

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            The random features, dense, float32 for float32 input and float64 otherwise;
            <Z(x), Z(y)> estimates K_S(x, y) without bias.
            In float32, a feature past float32's range by less than the accuracy contract's tolerance
            is stored as +-3.4e38 (float32's largest), +-inf only where the exact value is beyond it.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        if is_sparse(X):  # a canonical copy: duplicates summed as scipy reads them; the caller's X untouched
            X = canonical_csr(X).astype(X.dtype, copy=False)
        # float32 arithmetic only where the map is one GEMM and a few element-wise passes
        # (error that of the float32 GEMM); other families compute each block in float64
        # and store it in float32, saving the output memory but not the time.
        out_dtype = X.dtype
        compute32 = out_dtype == np.float32 and _float32_safe(self.family_)
        if out_dtype == np.float32 and not compute32:
            X = X.astype(np.float64)
        (D, d), family = self.random_weights_.shape, self.family_
        require_memory(transform_parts(family, X.shape[0], D, d), what="This transform",
                       hint="Transform fewer rows at a time or lower n_components (D).",
                       largest={"number of rows": lambda rows: estimate_cost(transform_parts(family, rows, D, d)).bytes})
        Z = _map_row_blocks(self._mapper(compute32), X, self.random_weights_.shape[0], out_dtype)
        if out_dtype == np.float32 and not compute32:
            self._saturate_overflows(X, Z)
        return Z

    def _saturate_overflows(self, X, Z: np.ndarray) -> None:
        """Rows of the float32 Z with an inf (float64 values past 3.4e38, rare): computed again in
        float64 with their S (the same map on |x| and |W|) and stored saturated
        (:func:`rkcore.kernels.ranges.saturate_overflowed_rows`): an inf only where the exact feature is
        beyond float32's range for sure."""
        def float64_rows(rows):
            Xr = X[rows]
            values, magnitude = np.empty((rows.size, Z.shape[1])), np.empty((rows.size, Z.shape[1]))
            self._mapper(False)(Xr, values)
            _block_mapper(self.family_, np.abs(self.random_weights_), False)(abs(Xr), magnitude)
            return values, magnitude

        saturate_overflowed_rows(Z, float64_rows)

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


#: W-sized arrays fit holds at its peak: the draw's temporaries (Rademacher: the integers and W, 2; orthogonal
#: Gaussian blocks: 4.06 measured with tracemalloc), rounded up.
_DRAW_COPIES = 5


def weight_copies(degree: int | None) -> int:
    """W-sized arrays transform holds at its peak: W, the powers W^t and |W|^t cached for the map and their
    temporaries.

    Fitted to tracemalloc's peaks (D = 2,000-200,000, d = 2-64, n = 3-5, Gaussian weights; Rademacher needs
    fewer): about 3.3, 4.9 and 5.5 W for ANOVA m = 2, up-to m = 3 and ANOVA m = 4, 4 W for dot and 3 W for
    all-subsets; priced 2m + 3, at least 5.

    Parameters
    ----------
    degree : int or None
        Order m of the family (None: families without one).

    Returns
    -------
    int
        Number of D x d arrays.
    """
    return max(2 * (degree or 1) + 3, 5)


def scratch_rows(degree: int | None, n, D):
    """Rows x D of scratch one row block of transform holds.

    Fitted as about 10, 16 and 20 rows x D for ANOVA m = 2, up-to m = 3, ANOVA m = 4; priced 6m + 2 per row,
    on at most the rows of one block (_map_row_blocks: at least MIN_GEMM_BLOCK_ROWS, else
    TRANSFORM_BLOCK_BYTES over at least half a row of temporaries).

    Parameters
    ----------
    degree : int or None
        Order m of the family.
    n : int, float or numpy.ndarray
        Rows transformed (numbers or arrays: the registry's cost model prices grids with it).
    D : int, float or numpy.ndarray
        Random features.

    Returns
    -------
    float or numpy.ndarray
        Rows of D floats.
    """
    m = degree or 1
    D = np.asarray(D, dtype=float)  # floats: sizes a user asks to price may be past int64
    block_rows = np.minimum(np.asarray(n, dtype=float), np.maximum(MIN_GEMM_BLOCK_ROWS, block_bytes(TRANSFORM_BLOCK_BYTES) // (4 * D) + 1))
    return (6 * m + 2) * block_rows


def transform_parts(family: ItemsetFamily, n: int, D: int, d: int) -> dict[str, tuple[int, ...]]:
    """The arrays transform holds at its peak, by name and shape.

    Z, the weights' cached powers (:func:`weight_copies`) and the (rows x D) scratch of one row block
    (:func:`scratch_rows`); the registry's cost model of RK prices the same arrays.

    Parameters
    ----------
    family : ItemsetFamily
        The map's family.
    n, D, d : int
        Rows transformed, random features, input features.

    Returns
    -------
    dict of str to tuple of int
        Array name -> shape, for :func:`rkcore.base.limits.require_memory`.
    """
    return {"the random features Z": (n, D), "the weights' powers": (weight_copies(family.degree), D, d),
            "a row block's scratch": (int(scratch_rows(family.degree, n, D)), D)}  # noqa: E501


def _float32_safe(family: ItemsetFamily) -> bool:
    """Whether the map of this family is computed in float32 for float32 input: the dot map only
    (one GEMM: its error is at most gamma32_n * sum_j |x_j w_j|, the float32 contract of
    :mod:`rkcore.kernels.numerics`). Every other family goes through Newton's identities or
    products whose cancellation float32's 24-bit mantissa does not absorb (second-order ANOVA
    reached 2e-5 * S, issue 27): they are computed in float64 and stored in float32."""
    return family.kind == "dot"


def draw_weights(distribution: str, n_components: int, n_features: int, random_state) -> np.ndarray:
    """Draw the weights ``RandomKernel.fit`` draws, as a read-only array.

    Read-only because transform precomputes from them once (powers of W, |W|, casts) and reuses
    that while they are the same array, which in-place edits would falsify.

    Parameters
    ----------
    distribution : str
        A key of :data:`rkcore.maps.distributions.DISTRIBUTIONS`.
    n_components : int
        D, the number of rows (random vectors).
    n_features : int
        d, the number of columns.
    random_state : int, RandomState instance or None
        The seed or generator; an int gives the same weights as ``RandomKernel(random_state=...)``.

    Returns
    -------
    W : ndarray of shape (n_components, n_features)
        float64 weights, not writeable.

    Raises
    ------
    ValueError
        If ``distribution`` is not a known key (the message lists the allowed ones).

    Examples
    --------
    >>> from rkcore.maps.random_kernel import draw_weights
    >>> W = draw_weights("rademacher", 3, 4, random_state=0)
    >>> W.shape, sorted(set(W.ravel().tolist())), W.flags.writeable
    ((3, 4), [-1.0, 1.0], False)
    """
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
    """Compute the features of several RandomKernel maps that differ only in their seed, side by side.

    Columns [t D, (t + 1) D) are ``RandomKernel(n_components, kernel=kernel, degree=degree,
    itemsets=itemsets, distribution=distribution, random_state=seeds[t]).fit(X).transform(X)``:
    the same weights, the same values up to the summation order of one wider GEMM. One
    precomputation and one pass over X instead of one per map: the error engine's trials
    (:mod:`rkcore.studies.errors`) at small n, where per-call overhead dominates.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        Validated float64 samples (not checked here: the caller validates).
    kernel : {"anova", "all_subsets", "dot", "up_to", "itemset"}
        The itemset family, as ``RandomKernel(kernel=...)``.
    degree : int
        Order m for "anova" and "up_to".
    itemsets : list of tuple of int, ItemsetFamily or None
        The family for ``kernel="itemset"``.
    distribution : str
        A key of :data:`rkcore.maps.distributions.DISTRIBUTIONS`.
    n_components : int
        D of each map.
    seeds : sequence of int
        One seed per map.

    Returns
    -------
    Z : ndarray of shape (n_samples, len(seeds) * n_components)
        float64 features, map t in columns [t D, (t + 1) D). The caller bounds its size.

    Raises
    ------
    ValueError
        If ``degree`` exceeds n_features for "anova" or "up_to", or ``distribution`` is unknown.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.maps.random_kernel import RandomKernel, stacked_features
    >>> X = np.random.RandomState(0).rand(4, 5)
    >>> Z = stacked_features(X, "anova", 2, None, "rademacher", 8, [1, 2])
    >>> Z2 = RandomKernel(8, degree=2, random_state=2).fit(X).transform(X)
    >>> Z.shape, bool(np.allclose(Z[:, 8:], Z2, rtol=1e-12, atol=0))
    ((4, 16), True)
    """
    d = X.shape[1]
    check_degree_fits(kernel, degree, d)
    family = family_from_spec(kernel, d, degree, itemsets)
    W = np.vstack([draw_weights(distribution, n_components, d, seed) for seed in seeds])
    return _map_row_blocks(_block_mapper(family, W, distribution == "rademacher", n_components), X, W.shape[0],
                           np.float64)
