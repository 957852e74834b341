"""Signed circulant random kernel (SCRK) feature map for the ANOVA kernel (paper section 4).

The RK map for the m-order ANOVA kernel only needs the power sums
``Omega^{(t)} x^{(t)}`` (paper eq. 13). With Rademacher weights the even powers of
Omega are all-ones and the odd powers are Omega itself, so the one expensive
product is ``Omega x^{(t)}`` for odd t. SCRK replaces the dense (D, d) matrix Omega
by T = ceil(D / d) stacked signed circulant blocks ``diag(sigma_t) circ(w_t)``
(Feng, Hu & Liao, IJCAI 2015), whose products with a vector are FFTs:
O(m D log d) time and O(D) memory instead of O(m D d) and O(D d).
"""
from __future__ import annotations


from typing import Any, TYPE_CHECKING

import numpy as np
import scipy.fft
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted

from ..base.arrays import validate_data  # scikit-learn's, in the user's words for ragged or text rows
from ..base.validation import Count  # sizes: integers, never True

from ..base.limits import block_bytes, check_allocation
from .distributions import draw_with, get_distribution
from ..kernels.itemsets import check_degree_fits
from ..kernels.numerics import canonical_csr
from ..kernels.stable import elementary_stable
from ..kernels.ranges import (
    SAFE_BINADES, in_range, restore_scale, row_exponents, saturate_overflowed_rows, scale_rows,
)
from ..kernels.exact import BLOCK_BYTES, elementary_pairs, elementary_top, newton_is_safe, rounding_gamma, row_blocks
from ..base.annotations import fit_context, is_sparse

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..base.annotations import Features


#: Temporary memory per row block in transform (spectra, products, inverse FFTs).
#: Measured at D=8192, n=1000, d in {512, 4096}: ~4 MB blocks (they stay in cache) were
#: 20-35% faster than 1 MB (per-call FFT overhead) or 64 MB blocks. Lowered to scikit-learn's working_memory
#: when that is smaller (row_blocks), like every block of rkcore.
TRANSFORM_BLOCK_BYTES = 4 * 2**20
#: Threads for scipy.fft (-1: all cores).
FFT_WORKERS = -1


class SignedCirculantRandomKernel(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Signed circulant random kernel (SCRK) map for the m-order ANOVA kernel.

    The D random vectors of the RK map (Algorithm 1) are the rows of

    .. math::
        \boldsymbol\Omega = \big(\mathbf P^{(1)}; \dots; \mathbf P^{(T)}\big)_{1:D},\qquad
        \mathbf P^{(t)} = \operatorname{diag}(\boldsymbol\sigma_t)\operatorname{circ}(\mathbf w_t),
        \qquad T = \lceil D/d \rceil,

    with Rademacher ``w_t`` (first column of the circulant block) and Rademacher
    signs ``sigma_t``. Every row of Omega is a vector of i.i.d. Rademacher entries
    (a signed cyclic shift of ``w_t``), so each feature
    ``K_A^m(omega_s, x) / sqrt(D)`` is exactly an RK feature and

    .. math::
        \mathbb E\,\langle Z(\mathbf x), Z(\mathbf y)\rangle = K_A^m(\mathbf x, \mathbf y).

    The features follow Newton's identities (paper eqs. 12-13): with power sums
    ``p_t = Omega^{(t)} x^{(t)}``, ``e_k = (1/k) sum_t (-1)^{t+1} e_{k-t} p_t`` and
    ``Z(x) = e_m / sqrt(D)``. For odd t, ``p_t = Omega x^{(t)}`` is computed blockwise
    as ``sigma_t * irfft(rfft(w_t) * rfft(x^{(t)}))`` (circular convolution); for even t,
    ``p_t = sum_j x_j^t`` for every row, because ``Omega^{(t)}`` is all-ones.

    Each of the D features is scaled once by 1/sqrt(D); the power sums are not
    scaled. (Scaling the odd power sums by 1/sqrt(D) as well, as the one public
    implementation does, makes the estimator biased for every m >= 2.)

    Why sigma does nothing for even m: ``K_A^m(-w, x) = (-1)^m K_A^m(w, x)``, so for
    even m flipping the sign of a row of Omega leaves its feature unchanged, and
    ``diag(sigma_t)`` has no effect at all (paper section 4). The map then equals the
    unsigned circulant map: features within a block are cyclic shifts of each other
    and more correlated than i.i.d. RK features, so the variance is higher (the
    paper's Table 1a). This implementation skips the sign multiplication for even m;
    the output is identical.

    Accuracy contract (see :mod:`rkcore.kernels.exact`): each feature is within
    1e-12 * e_m(|x| * |omega_s|) / sqrt(D) of its exact value and finite wherever that is.
    The entries of Omega are +-1, so the a-posteriori bound on Newton's identities is a
    function of the row alone (O(d) per row); rows it cannot vouch for are recomputed with
    the stable recursion against the explicit rows of Omega, a chunk at a time.

    When D is not a multiple of d, whole blocks are computed and the first D rows of
    Omega are kept; ``n_components`` is never changed.

    Parameters
    ----------
    n_components : int, default=100
        D, the number of random features.
    degree : int, default=2
        Order m of the ANOVA kernel, 1 <= m <= n_features.
    random_state : int, RandomState instance or None, default=None
        Seeds the random draw: an int gives the same circulant blocks on every call (and on every
        machine), None uses numpy's global random state. See :term:`Glossary <random_state>`.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_blocks_, n_features_in_)
        First columns w_t of the circulant blocks, float64 entries +-1.
    random_signs_ : ndarray of shape (n_blocks_, n_features_in_)
        Signs sigma_t, float64 entries +-1.
    weights_spectrum_ : ndarray of shape (n_blocks_, n_features_in_ // 2 + 1)
        ``rfft(w_t)``, complex128, precomputed for transform.
    n_blocks_ : int
        T = ceil(D / d), the number of circulant blocks.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    rkcore.maps.random_kernel.RandomKernel : The RK map with a dense Omega, for any itemset kernel
        and weight distribution.
    stacked_scrk_features : The features of several SCRK maps (one per seed) in one pass.
    rkcore.kernels.exact.anova_kernel : The exact kernel the features estimate.

    References
    ----------
    Atarashi, Maji & Oyama. Random feature maps for the itemset kernel. AAAI 2019, section 4.
    Feng, Hu & Liao. Random feature mapping with signed circulant matrix projection. IJCAI 2015.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.maps.circulant import SignedCirculantRandomKernel
    >>> X = np.random.RandomState(0).rand(5, 8)
    >>> Z = SignedCirculantRandomKernel(n_components=20, degree=3, random_state=0).fit_transform(X)
    >>> Z.shape
    (5, 20)

    Each row of the projection matrix is a signed cyclic shift of its block's w_t:

    >>> est = SignedCirculantRandomKernel(n_components=16, degree=2, random_state=0).fit(X)
    >>> Omega = est.projection_matrix()
    >>> Omega.shape, sorted(set(Omega.ravel().tolist()))
    ((16, 8), [-1.0, 1.0])
    """

    _parameter_constraints: dict = {
        "n_components": [Count(1)],
        "degree": [Count(1)],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=100, *, degree=2, random_state=None):
        self.n_components = n_components
        self.degree = degree
        self.random_state = random_state

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None) -> Self:
        """Draw w_t and sigma_t for T = ceil(D / d) blocks; only the number of features of X is used.

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
            If ``degree`` exceeds n_features, or the blocks (2 T x n_features float64) exceed the
            memory budget (:func:`rkcore.base.limits.memory_budget`).
        """
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        d = X.shape[1]
        check_degree_fits("anova", self.degree, d)
        check_allocation("The random weights", (2 * -(-self.n_components // d), d),
                         hint="Lower n_components (D).")
        return self._set_blocks(*_draw_blocks(self.random_state, -(-self.n_components // d), d))

    def _set_blocks(self, weights: np.ndarray, signs: np.ndarray):
        """The fitted state from the (T, d) circulant weights w_t and signs sigma_t (fit's draws, or
        several maps' draws stacked by stacked_scrk_features)."""
        self.n_features_in_ = weights.shape[1]
        self.n_blocks_ = weights.shape[0]
        self.random_weights_, self.random_signs_ = weights, signs
        self.weights_spectrum_ = scipy.fft.rfft(weights, axis=1)
        return self

    def projection_matrix(self) -> np.ndarray:
        """The explicit projection matrix Omega, for tests and teaching (transform never builds it).

        Row t*d + i of block t is ``sigma_t[i] * w_t[(i - j) mod d]`` over j.

        Returns
        -------
        Omega : ndarray of shape (n_components, n_features_in_)
            The first n_components rows of the stacked signed circulant blocks, float64 entries +-1.
        """
        check_is_fitted(self)
        return self._omega_rows(0, self.n_components)

    def _omega_rows(self, start: int, stop: int) -> np.ndarray:
        """Rows start..stop-1 of Omega, built from the blocks they fall in."""
        T, d = self.random_weights_.shape
        shift = (np.arange(d)[:, None] - np.arange(d)[None, :]) % d
        first, last = start // d, -(-stop // d)
        blocks = self.random_signs_[first:last, :, None] * self.random_weights_[first:last][:, shift]
        return blocks.reshape(-1, d)[start - first * d: stop - first * d]

    def _repair_rows(self, Xb: np.ndarray, bad: np.ndarray, out: np.ndarray, scale: float) -> None:
        """Features of the rows ``bad`` of the (unscaled) block by the stable recursion
        (accuracy contract, rkcore.kernels), times ``scale``, over chunks of Omega's rows."""
        D, d, m = self.n_components, Xb.shape[1], self.degree
        step = max(d, (block_bytes(BLOCK_BYTES) // (8 * d)) // d * d)
        for start in range(0, D, step):
            stop = min(start + step, D)
            omega = self._omega_rows(start, stop)
            rows = np.repeat(bad, stop - start)
            cols = np.tile(np.arange(stop - start), len(bad))
            fixed = elementary_pairs(Xb, omega, rows, cols, m) * scale
            if not np.isfinite(fixed).all():  # e_m past float64 while e_m * scale is not: rows halved
                shift = int(np.ceil(-np.log2(scale) / m)) + 1  # 2^(m shift) >= 1/scale
                again = elementary_pairs(np.ldexp(Xb, -shift), omega, rows, cols, m) * scale
                fixed = np.where(np.isfinite(fixed), fixed, np.ldexp(again, m * shift))
            out[bad, start:stop] = fixed.reshape(len(bad), stop - start)

    if TYPE_CHECKING:  # TransformerMixin.fit_transform, typed (scikit-learn ships no annotations)
        def fit_transform(self, X, y: object = None, **fit_params: object) -> Features: ...

    def transform(self, X) -> Features:
        """Map X to its SCRK features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The samples. float32 input gives float32 output; each row block is computed
            in float64 (FFTs, Newton's identities, check and repair) and only then stored in
            float32: the float32 contract of :mod:`rkcore.kernels.numerics`.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            The random features, dense, float32 for float32 input and float64 otherwise;
            <Z(x), Z(y)> estimates the ANOVA kernel without bias.
            In float32, a feature past float32's range by less than the accuracy contract's tolerance
            is stored as +-3.4e38 (float32's largest), +-inf only where the exact value is beyond it.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        X = canonical_csr(X).astype(X.dtype, copy=False) if is_sparse(X) else X  # the caller's matrix untouched
        return self._features(X, self.n_components)

    def _features(self, X, scale_components: int) -> np.ndarray:
        """transform's work on validated X, the features scaled by 1/sqrt(scale_components)
        (stacked_scrk_features: the D of one of the stacked maps)."""
        out_dtype = X.dtype
        n, d = X.shape
        D, T, m = self.n_components, self.n_blocks_, self.degree
        check_allocation("The random features Z", (n, D), hint="Transform fewer rows at a time or lower n_components (D).")
        out = np.empty((n, D), dtype=out_dtype)
        odd_orders = (m + 1) // 2
        # Per row: per odd order a power of x, its spectrum, the complex product (T d/2
        # complex) and its inverse FFT (T d reals); then the m power sums and the recursion.
        def row_bytes(T: int, D: int) -> int:
            return 8 * (odd_orders * (2 * d + 3 * T * d) + (m + 1) * D)

        bytes_per_row = row_bytes(T, D)
        # e_m is homogeneous of degree m in x, so scaling x by D^(-1/(2m)) scales the
        # features by 1/sqrt(D): the map's scale costs one pass over (b, d), not (b, D).
        x_scale = scale_components ** (-0.5 / m)
        # the check's row blocks (its gamma and overflow test per block) are those of one map of
        # scale_components features: stacked maps then decide exactly as the separate maps do
        step = max(1, int(block_bytes(TRANSFORM_BLOCK_BYTES) // max(1, row_bytes(-(-scale_components // d), scale_components))))
        exponents = np.zeros(n, dtype=np.int64)  # rows scaled by 2^-E (whole float range)
        wide = np.zeros(n, dtype=bool)  # rows too wide even then: the stable recursion
        with np.errstate(over="ignore", invalid="ignore"):
            for rows in row_blocks(n, bytes_per_row, TRANSFORM_BLOCK_BYTES):
                Xb, exponents[rows], wide[rows] = _in_range_rows(_dense_rows(X, rows), m)
                # float64 even for float32 output: e_2 = (p_1^2 - p_2) / 2 cancels (issue 27: 1.5e-6 S)
                wide64 = out.dtype != np.float64
                block = np.empty((rows.stop - rows.start, D)) if wide64 else out[rows]
                self._newton_block(Xb * x_scale, block)
                if exponents[rows].any():  # (an ldexp pass over the block only where rows were scaled)
                    restore_scale(block, (m * exponents[rows])[:, None])
                if wide64:
                    out[rows] = block
        # The accuracy check, for all rows at once (per-block calls cost more than the small
        # blocks' work at large D), with each block's gamma and overflow test as before.
        self._check_and_repair(X, x_scale, step, out, exponents, wide, scale_components ** -0.5)
        if out.dtype == np.float32:
            self._saturate_overflows(X, out, scale_components ** -0.5)
        return out

    def _saturate_overflows(self, X, out: np.ndarray, scale: float) -> None:
        """Rows of a float32 ``out`` with an inf (float64 features past 3.4e38, rare): recomputed by the
        stable recursion with S = e_m(|x|) * scale (Omega's entries are +-1) and stored saturated
        (:func:`rkcore.kernels.ranges.saturate_overflowed_rows`): an inf only where the exact feature is
        beyond float32's range for sure."""
        def float64_rows(rows):
            Xr = _dense_rows(X, rows)
            values = np.empty((rows.size, self.n_components))
            self._repair_rows(Xr, np.arange(rows.size), values, scale)
            return values, (elementary_stable(np.abs(Xr), None, self.degree) * scale)[:, None]

        saturate_overflowed_rows(out, float64_rows)

    def _check_and_repair(self, X, x_scale: float, step: int, out: np.ndarray, exponents: np.ndarray,
                          wide: np.ndarray, scale: float) -> None:
        """The accuracy contract for the whole output (transform's blocks of ``step`` rows):
        the entries of Omega are +-1, so the power sums of |x * omega_s| are the row sums of
        |x|^t (x scaled by 2^-exponents and x_scale) and newton_is_safe decides per row, with gamma
        from the largest non-zero count of the row's block; rows with a non-finite feature and
        ``wide`` rows fail too. The rows it cannot vouch for are recomputed by the stable
        recursion (from the unscaled rows, times ``scale``)."""
        n, d = X.shape
        m = self.degree
        Pa: list[Any] = [None] + [np.empty(n) for _ in range(m)]  # 1-based: Pa[t], slot 0 unused
        nnz = np.empty(n)
        for rows in row_blocks(n, 8 * d * (m + 2), BLOCK_BYTES):  # O(n d) passes, in chunks
            Xr = _dense_rows(X, rows)
            A = np.abs((np.ldexp(Xr, -exponents[rows, None]) if exponents[rows].any() else Xr) * x_scale)
            nnz[rows] = np.count_nonzero(A, axis=1)
            with np.errstate(over="ignore"):  # an infinite power sum fails newton_is_safe: the row is repaired
                for t in range(1, m + 1):
                    Pa[t][rows] = (A**t).sum(axis=1)
        starts = np.arange(0, n, step)
        block_nnz = np.maximum.reduceat(nnz, starts) if n else nnz
        gamma = np.repeat(rounding_gamma(block_nnz + 2 * m), np.diff(np.append(starts, n)))
        with np.errstate(over="ignore", invalid="ignore"):
            ok = newton_is_safe(Pa, m, gamma) & ~wide
            scaled = np.flatnonzero(exponents != 0)  # in range, nothing overflows; restored scales may
            ok[scaled] &= np.isfinite(out[scaled]).all(axis=1)
        bad = np.flatnonzero(~ok)
        for sl in row_blocks(len(bad), 8 * (d + self.n_components), BLOCK_BYTES):
            idx = bad[sl]
            fixed = np.empty((len(idx), self.n_components))
            self._repair_rows(_dense_rows(X, idx), np.arange(len(idx)), fixed, scale)
            out[idx] = fixed

    def _circulant_product(self, Xt: np.ndarray, spectrum: np.ndarray) -> np.ndarray:
        """Omega x for every row x of Xt, without signs: (b, T * d), blocks side by side."""
        b, d = Xt.shape
        Xf = scipy.fft.rfft(Xt, axis=1, workers=FFT_WORKERS)
        prod = Xf[:, None, :] * spectrum[None, :, :]  # (b, T, d//2+1)
        return scipy.fft.irfft(prod, n=d, axis=-1, workers=FFT_WORKERS, overwrite_x=True).reshape(b, -1)

    def _newton_block(self, Xb: np.ndarray, out: np.ndarray) -> None:
        """The fast path: power sums by FFT and Newton's identities."""
        D, m, b = self.n_components, self.degree, Xb.shape[0]
        if m == 2:
            # e_2 = (p_1^2 - p_2) / 2: one squaring into `out` and one in-place subtraction.
            # sigma is skipped: it cancels in p_1^2. The 1/2 goes into the spectrum (x sqrt(1/2)).
            P1 = self._circulant_product(Xb, self.weights_spectrum_ * np.sqrt(0.5))
            np.square(P1[:, :D], out=out)
            out -= 0.5 * np.einsum("ij,ij->i", Xb, Xb)[:, None]
            return
        # All odd orders in one FFT pass: rows are x, x^3, x^5, ... of every sample.
        odd = range(1, m + 1, 2)
        powers = np.concatenate([Xb if t == 1 else Xb**t for t in odd])
        P_odd = self._circulant_product(powers, self.weights_spectrum_).reshape(len(odd), b, -1)[:, :, :D]
        if m % 2 == 1:  # sigma only matters for odd m (see the class docstring)
            P_odd *= self.random_signs_.reshape(-1)[:D]
        P: list = [None]
        for t in range(1, m + 1):
            # Omega^{(t)} is Omega for odd t and all-ones for even t.
            P.append(P_odd[t // 2] if t % 2 else (Xb**t).sum(axis=1, keepdims=True))
        np.copyto(out, elementary_top(P, m))

    @property
    def _n_features_out(self):
        return self.n_components

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def _draw_blocks(random_state, n_blocks: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The (n_blocks, d) circulant weights w_t and signs sigma_t that fit draws for random_state."""
    rademacher = get_distribution("rademacher")

    def draw(rng):
        return rademacher.sample(rng, (n_blocks, d)), rademacher.sample(rng, (n_blocks, d))
    return draw_with(random_state, draw)


def stacked_scrk_features(X, degree: int, n_components: int, seeds) -> np.ndarray:
    """Compute the features of the SCRK maps of several seeds, side by side, as one map.

    Columns [t D, (t + 1) D) are ``SignedCirculantRandomKernel(n_components, degree=degree,
    random_state=seeds[t]).fit(X).transform(X)``, computed as one map whose blocks are the seeds'
    blocks. Every block's FFT products, the power sums and the per-row accuracy check are the same
    operations on the same values as in the separate maps (x is scaled by each map's own D), so
    the results are identical; one transform instead of one per seed (the trials of
    :func:`rkcore.studies.errors.error_study`: at the dashboard's sizes each transform was mostly
    per-call overhead).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The samples, float64 or float32 (other dtypes are converted to float64).
    degree : int
        Order m of the ANOVA kernel, 1 <= m <= n_features.
    n_components : int
        D of each map.
    seeds : sequence of int
        One seed per map, as ``random_state``.

    Returns
    -------
    Z : ndarray of shape (n_samples, len(seeds) * n_components)
        The features, map t in columns [t D, (t + 1) D); float32 for float32 input, else float64.

    Raises
    ------
    ValueError
        If ``degree`` exceeds n_features, or the stacked features exceed the memory budget
        (:func:`rkcore.base.limits.memory_budget`).

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.maps.circulant import SignedCirculantRandomKernel, stacked_scrk_features
    >>> X = np.random.RandomState(0).rand(4, 5)
    >>> Z = stacked_scrk_features(X, 2, 8, [1, 2])
    >>> Z2 = SignedCirculantRandomKernel(8, degree=2, random_state=2).fit(X).transform(X)
    >>> Z.shape, bool(np.array_equal(Z[:, 8:], Z2))
    ((4, 16), True)
    """
    X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
    X = canonical_csr(X).astype(X.dtype, copy=False) if is_sparse(X) else X
    d = X.shape[1]
    check_degree_fits("anova", degree, d)
    B = -(-int(n_components) // d)  # blocks per map
    check_allocation("The stacked random features", (X.shape[0], len(seeds) * B * d),
                     hint="Fewer trials at a time or lower n_components (D).")
    draws = [_draw_blocks(seed, B, d) for seed in seeds]
    stacked = SignedCirculantRandomKernel(len(seeds) * B * d, degree=degree)._set_blocks(
        np.vstack([w for w, _ in draws]), np.vstack([s for _, s in draws]))
    Z = stacked._features(X, int(n_components))
    # map t: the first n_components features of its B blocks
    return Z.reshape(X.shape[0], len(seeds), B * d)[:, :, :n_components].reshape(X.shape[0], -1)


def _in_range_rows(Xb: np.ndarray, degree: int):
    """(rows scaled by 2^-E, E, wide): E = 0 where the block is in float range for Omega's +-1
    entries (rkcore.kernels.ranges.in_range), else each row's largest |entry| scaled to [1/2, 1);
    ``wide`` marks rows whose smallest products of m-th powers would still underflow."""
    lo, hi = row_exponents(Xb)
    if in_range(lo, hi, 1, 1, degree, Xb.shape[1]):
        return Xb, 0, False
    return scale_rows(Xb, hi), hi, degree * (lo - hi - 1) < -SAFE_BINADES


def _dense_rows(X, rows) -> np.ndarray:
    """Rows of X (a slice or an index array) as a dense float64 array (CSR densified per block)."""
    Xb = X[rows]
    return (Xb.toarray() if is_sparse(Xb) else np.asarray(Xb)).astype(np.float64, copy=False)
