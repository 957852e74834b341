r"""Orthogonal and structured random Fourier features for the Gaussian kernel exp(-gamma ||x - y||^2).

All three maps draw F frequencies w_i in blocks and map x to cos/sin of <w_i, x> (Rahimi & Recht);
they differ in how a block of frequencies is drawn and applied:

* :class:`OrthogonalRandomFeatures` (ORF, Yu et al., NIPS 2016): a block is a Haar-random orthogonal
  d x d matrix whose rows are rescaled by independent chi_d norms; each row is then exactly
  N(0, I) (a Gaussian vector is its chi norm times an independent uniform direction), so the
  estimate is unbiased; rows of a block are orthogonal, which lowers the variance. O(D d) per sample.
* :class:`StructuredOrthogonalRandomFeatures` (SORF, same paper): a block is
  sqrt(p) H D1 H D2 H D3 (H the normalized p x p Walsh-Hadamard matrix, p = d padded to a power of
  two, D_k random sign diagonals), applied with three fast Walsh-Hadamard transforms, O(D log d).
  Its rows all have norm sqrt(p), not chi_p, and their directions are only close to uniform: SORF
  is *biased* (the paper bounds the bias by O(1/sqrt(d))); its registry entry says so.
* :class:`FastFood` (Le, Sarlos & Smola, ICML 2013): a block is S H G Pi H B / sqrt(p) (B signs,
  Pi a permutation, G Gaussian diagonal, S = chi_p / ||G||_F), two transforms, O(D log d). Each row
  of H G Pi H B has norm sqrt(p) ||G|| and the direction of the Gaussian vector (h_i * g), uniform
  and independent of ||G||, so after S each row is exactly N(0, I): unbiased.

Features: without ``use_offset`` (default) P = D // 2 frequencies give the pairs cos<w, x>, sin<w, x>
(<z(x), z(y)> averages cos<w, x - y>) and an odd D adds one offset feature sqrt(2) cos(<w, x> + b),
b ~ U[0, 2 pi), whose expectation is the same; with ``use_offset`` all D features are offset ones
(scikit-learn's RBFSampler form). Frequencies are scaled by sqrt(2 gamma).
"""
from __future__ import annotations

from numbers import Real
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import chi
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from ..base.arrays import validate_data  # scikit-learn's, in the user's words for ragged or text rows
from ..base.validation import Count  # sizes: integers, never True

from .distributions import draw_with
from ..kernels.exact import row_blocks
from ..base.limits import check_allocation
from .orthogonal import fwht, next_power_of_two, orthogonal_gaussian_rows
from .trig import cos_sin_into
from ..base.annotations import fit_context, is_sparse

if TYPE_CHECKING:
    from typing_extensions import Self

    from ..base.annotations import Features


#: Temporary memory per row block in transform: (rows x blocks x p) intermediates.
TRANSFORM_BLOCK_BYTES = 16 * 2**20


def _rademacher(rng, shape) -> np.ndarray:
    return rng.randint(0, 2, size=shape).astype(np.float64) * 2.0 - 1.0


# ---------------------------------------------------------------------------- the maps
class _FourierFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared fit/transform of the three maps: subclasses draw the frequencies (``_draw``) and project
    a dense or CSR row block on them (``_project(Xb, scale)`` -> (U, factor): the (rows, F) angles
    scale <w_i, x> = factor * U, factor a scalar or one per column, applied in the first pass of the angles,
    scale = sqrt(2 gamma))."""

    _parameter_constraints: dict = {
        "n_components": [Count(1)],
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "use_offset": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_components=100, *, gamma=1.0, use_offset=False, random_state=None):
        self.n_components = n_components
        self.gamma = gamma
        self.use_offset = use_offset
        self.random_state = random_state

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None) -> Self:
        """Draw the random frequencies and offsets; of X only its number of features (and names) is used.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; its values are not read. :term:`transform` then requires n_features columns.
        y : None
            Ignored; present for the scikit-learn API.

        Returns
        -------
        self : object
            The fitted transformer.

        Raises
        ------
        ValueError
            If the frequencies (F x max(n_features, p) float64) would not fit in the memory budget
            (:func:`rkcore.base.limits.check_allocation`).
        """
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        D, d = self.n_components, X.shape[1]
        self.n_pairs_ = 0 if self.use_offset else D // 2
        n_frequencies = D - self.n_pairs_  # P pairs + the offset features
        check_allocation("The random frequencies", (n_frequencies, max(d, next_power_of_two(d))),
                         hint="Lower n_components (D) or the number of features.")

        def draw(rng):
            self._draw(rng, n_frequencies, d)
            return rng.uniform(0.0, 2.0 * np.pi, size=n_frequencies - self.n_pairs_)

        self.random_offset_ = draw_with(self.random_state, draw)
        return self

    if TYPE_CHECKING:  # TransformerMixin.fit_transform, typed (scikit-learn ships no annotations)
        def fit_transform(self, X, y: object = None, **fit_params: object) -> Features: ...

    def transform(self, X) -> Features:
        """Map X to its random Fourier features (float32 in, float32 out).

        Computed a row block at a time (about ``TRANSFORM_BLOCK_BYTES`` of intermediates per block).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to map. float32 is kept (and computed in float32), any other dtype becomes float64; sparse
            input is read as CSR (the Hadamard maps densify one row block at a time).

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            The features, in X's float dtype: columns ``[0, n_pairs_)`` are cos<w_i, x> / sqrt(F), the next
            n_pairs_ columns the sin of the same angles, the rest sqrt(2 / F) cos(<w_i, x> + b_i), with
            F = ``n_components - n_pairs_`` frequencies w_i (scaled by sqrt(2 gamma)). <Z(x), Z(y)> estimates
            exp(-gamma ||x - y||^2): unbiased for ORF, RandomFourierPairs and FastFood, with an O(1/sqrt(d))
            bias for SORF (see its docstring).

        Raises
        ------
        ValueError
            If Z would not fit in the memory budget (:func:`rkcore.base.limits.check_allocation`), or if float64
            rows reach angles beyond the largest float64 (float32 rows past float32's range are computed in
            float64 instead).
        """
        check_is_fitted(self)
        with np.errstate(over="ignore", invalid="ignore"):  # scikit-learn's finiteness test sums float32 rows near 3.4e38
            X = validate_data(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=False)
        D, P = self.n_components, self.n_pairs_
        check_allocation("The random features Z", (X.shape[0], D), X.dtype,
                         hint="Transform fewer rows at a time or lower n_components (D).")
        out = np.empty((X.shape[0], D), dtype=X.dtype)
        for rows in row_blocks(X.shape[0], self._bytes_per_row(X.dtype.itemsize), TRANSFORM_BLOCK_BYTES):
            block = out[rows]
            self._features_into(X[rows], block)
            if X.dtype == np.float32:
                # angles past float32's range (inputs near 3.4e38) are inf there and cos(inf) is NaN, while
                # the features are finite: those rows again in float64, rounded once to float32
                bad = np.flatnonzero(~np.isfinite(block).all(axis=1))
                if bad.size:
                    wide = np.empty((bad.size, D))
                    self._features_into(X[rows][bad].astype(np.float64), wide)
                    block[bad] = wide
        return out

    def _features_into(self, Xb, block) -> None:
        """The features of the row block Xb into ``block`` (of Xb's dtype), computed in that dtype."""
        D, P = self.n_components, self.n_pairs_
        scale = np.sqrt(2.0 * self.gamma)
        weight = np.sqrt(1.0 / (D - P))  # pairs: 1/sqrt(F) each; offset features sqrt(2/F)
        with np.errstate(over="ignore", invalid="ignore"):
            U, factor = self._project(Xb, scale)  # the angles: factor * U (factor a scalar or one per column)
            factor = np.broadcast_to(np.asarray(factor, dtype=Xb.dtype), (U.shape[1],))
            cos_sin_into(U[:, :P], factor[:P], weight, block[:, :P], block[:, P:2 * P])
            tail = U[:, P:]
            if tail.shape[1]:
                tail *= factor[P:]
                tail += self.random_offset_.astype(Xb.dtype)
                np.cos(tail, out=tail)
                np.multiply(tail, np.sqrt(2.0) * weight, out=block[:, 2 * P:])
        if Xb.dtype == np.float64 and not np.isfinite(block).all():
            raise ValueError(
                "Some rows of X are so large that their angles sqrt(2 gamma) <w, x> exceed the largest float64 "
                "(about 1.8e308), where cos and sin cannot be evaluated; scale X down (or lower gamma).")

    def _bytes_per_row(self, itemsize: int) -> int:
        # the output row (D), the angles and cos_sin_into's buffer (F + P = D), the projection's intermediates
        return itemsize * (2 * self.n_components + 3 * self._padded_width())

    def _padded_width(self) -> int:
        return self.n_features_in_

    @property
    def _n_features_out(self):
        return self.n_components

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class OrthogonalRandomFeatures(_FourierFeatures):  # numpydoc ignore=PR02
    r"""Orthogonal random features (ORF, Yu et al., NIPS 2016) for the Gaussian kernel exp(-gamma ||x-y||^2).

    Frequencies in blocks of d orthogonal rows, each row exactly N(0, 2 gamma I): unbiased, with a
    variance below i.i.d. random Fourier features when the rows of a block are orthogonal.
    O(D d) per sample (one GEMM); the draw costs O(D d^2) (one QR per block) and F x d float64 memory.

    Parameters
    ----------
    n_components : int, default=100
        D, the number of features (columns of the output), >= 1.
    gamma : float, default=1.0
        Width of the Gaussian kernel exp(-gamma ||x - y||^2), > 0; the frequencies are scaled by sqrt(2 gamma).
    use_offset : bool, default=False
        False: D // 2 frequencies give cos and sin features (and an odd D one offset feature);
        True: D offset features sqrt(2 / D) cos(<w, x> + b) (scikit-learn's RBFSampler form, higher variance).
    random_state : int, RandomState instance or None, default=None
        Seeds the draw in :term:`fit`: an int gives the same frequencies on every call (and machine), None uses
        numpy's global random state. See :term:`Glossary <random_state>`.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_components - n_pairs_, n_features_in_)
        The F frequencies before the sqrt(2 gamma) scale, float64, drawn by
        :func:`rkcore.maps.orthogonal.orthogonal_gaussian_rows`: each row exactly N(0, I), the rows of each
        block of n_features_in_ (the last block truncated) orthogonal.
    random_offset_ : ndarray of shape (n_components - 2 * n_pairs_,)
        Phases b ~ U[0, 2 pi) of the offset features, float64: empty for an even ``n_components`` without
        ``use_offset``, one entry for an odd one, ``n_components`` entries with ``use_offset``.
    n_pairs_ : int
        Number of cos/sin pairs: ``n_components // 2``, or 0 with ``use_offset``. The map uses
        F = ``n_components - n_pairs_`` frequencies: the first n_pairs_ for the pairs, the rest offset.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    RandomFourierPairs : The i.i.d. baseline in the same feature layout.
    StructuredOrthogonalRandomFeatures : Its O(D log d) structured approximation (biased).
    FastFood : An unbiased O(D log d) map, not orthogonal.
    sklearn.kernel_approximation.RBFSampler : Independent frequencies, offset features only.

    References
    ----------
    Yu, Suresh, Choromanski, Holtmann-Rice & Kumar. Orthogonal random features. NIPS 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.maps.structured import OrthogonalRandomFeatures
    >>> X = np.random.RandomState(0).rand(5, 6)
    >>> OrthogonalRandomFeatures(n_components=12, random_state=0).fit_transform(X).shape
    (5, 12)
    """

    def _draw(self, rng, n_frequencies, d):
        self.random_weights_ = orthogonal_gaussian_rows(rng, n_frequencies, d)

    def _project(self, Xb, scale):
        W = self.random_weights_.astype(Xb.dtype, copy=False)  # the scale goes to the angle pass: no copy of W
        return np.asarray(Xb @ W.T), scale


class RandomFourierPairs(_FourierFeatures):  # numpydoc ignore=PR02
    r"""Random Fourier features (Rahimi & Recht) with i.i.d. frequencies, in the layout of the maps here.

    Frequencies i.i.d. N(0, 2 gamma I), features in cos/sin pairs (see the module docstring): unbiased, the
    i.i.d. baseline the orthogonal maps are compared with at equal D (scikit-learn's RBFSampler uses only
    offset features, whose variance is higher). O(D d) per sample (one GEMM).

    Parameters
    ----------
    n_components : int, default=100
        D, the number of features (columns of the output), >= 1.
    gamma : float, default=1.0
        Width of the Gaussian kernel exp(-gamma ||x - y||^2), > 0; the frequencies are scaled by sqrt(2 gamma).
    use_offset : bool, default=False
        False: D // 2 frequencies give cos and sin features (and an odd D one offset feature);
        True: D offset features sqrt(2 / D) cos(<w, x> + b) (scikit-learn's RBFSampler form, higher variance).
    random_state : int, RandomState instance or None, default=None
        Seeds the draw in :term:`fit`: an int gives the same frequencies on every call (and machine), None uses
        numpy's global random state. See :term:`Glossary <random_state>`.

    Attributes
    ----------
    random_weights_ : ndarray of shape (n_components - n_pairs_, n_features_in_)
        The F frequencies before the sqrt(2 gamma) scale, float64, i.i.d. N(0, 1) entries.
    random_offset_ : ndarray of shape (n_components - 2 * n_pairs_,)
        Phases b ~ U[0, 2 pi) of the offset features, float64: empty for an even ``n_components`` without
        ``use_offset``, one entry for an odd one, ``n_components`` entries with ``use_offset``.
    n_pairs_ : int
        Number of cos/sin pairs: ``n_components // 2``, or 0 with ``use_offset``. The map uses
        F = ``n_components - n_pairs_`` frequencies: the first n_pairs_ for the pairs, the rest offset.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    OrthogonalRandomFeatures : The same map with orthogonal blocks of frequencies (lower variance).
    sklearn.kernel_approximation.RBFSampler : Independent frequencies, offset features only.

    References
    ----------
    Rahimi & Recht. Random features for large-scale kernel machines. NIPS 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> from rkcore.maps.structured import RandomFourierPairs
    >>> X = np.random.RandomState(0).rand(5, 6)
    >>> Z = RandomFourierPairs(n_components=2000, gamma=0.5, random_state=0).fit_transform(X)
    >>> bool(np.abs(Z @ Z.T - rbf_kernel(X, gamma=0.5)).max() < 0.05)
    True
    """

    def _draw(self, rng, n_frequencies, d):
        self.random_weights_ = rng.standard_normal((n_frequencies, d))

    _project = OrthogonalRandomFeatures._project


def _padded_dense(Xb, p: int, signs: np.ndarray) -> np.ndarray:
    """The row block zero-padded to p columns, repeated over the blocks and times each block's first sign
    diagonal (``signs``: (n_blocks, p)) in the same pass: (rows, n_blocks, p), contiguous."""
    n_blocks, d = signs.shape[0], Xb.shape[1]
    out = np.zeros((Xb.shape[0], n_blocks, p), dtype=Xb.dtype)
    dense = Xb.toarray() if is_sparse(Xb) else Xb
    np.multiply(dense[:, None, :], signs[:, :d].astype(Xb.dtype, copy=False), out=out[:, :, :d])
    return out


class _HadamardFeatures(_FourierFeatures):
    def _padded_width(self) -> int:
        return next_power_of_two(self.n_features_in_) * -(-(self.n_components - self.n_pairs_)
                                                         // next_power_of_two(self.n_features_in_))

    def _blocks(self, n_frequencies, d):
        p = next_power_of_two(d)
        return p, -(-n_frequencies // p)


class StructuredOrthogonalRandomFeatures(_HadamardFeatures):  # numpydoc ignore=PR02
    r"""Structured orthogonal random features (SORF, Yu et al., NIPS 2016) for exp(-gamma ||x - y||^2).

    Blocks sqrt(p) H D1 H D2 H D3 (p = d padded to a power of two, H normalized Walsh-Hadamard, D_k
    random signs), applied by three fast Walsh-Hadamard transforms: O(D log d) per sample, O(D) memory.
    **Biased**: its rows have norm sqrt(p) (not chi_p) and nearly but not exactly uniform directions;
    the bias is O(1/sqrt(d)) (Yu et al., Theorem 5; with exactly uniform directions and fixed norms the
    expectation would be a Bessel kernel, Demni & Kadri 2023) and visible at small d. Measured
    (benchmarks/results/fourier_variance.md, 50 maps, median-heuristic gamma): squared bias about 2.4e-5
    at d = 32 (N(0, 1) rows) and 2.3e-5 at d = 20 (interactions), the same at every D (each block has the
    same law), so its share of the MSE grows with D: 1%, 9%, 30% of the MSE at D = d, 4d, 16d (d = 32) and
    0%, 2%, 20% (d = 20); at d = 78 (MovieLens-shaped rows) it is 1e-6, within the noise (4% at 16d).
    Exact at d = p = 4 (all 4,096 sign draws, tests/maps/test_structured.py), at gamma = 0.5 on unit rows:
    E K_SORF misses the kernel by 0.30 at x = e1, y = -e1 (E K_SORF = -0.17 where exp(-2) = 0.14; the
    largest of 20,006 differences x - y searched, |x - y| <= 2), by 0.16 at the 95th percentile and 0.08 at
    the median of 20,000 uniformly random pairs of unit rows (gamma = 1: 0.49, 0.25, 0.14). No structured variant of the same cost is exactly unbiased
    and orthogonal (that needs chi norms *and* exactly uniform directions: ORF's Haar blocks, O(d^2));
    FastFood is unbiased, not orthogonal.

    Parameters
    ----------
    n_components : int, default=100
        D, the number of features (columns of the output), >= 1.
    gamma : float, default=1.0
        Width of the Gaussian kernel exp(-gamma ||x - y||^2), > 0; the frequencies are scaled by sqrt(2 gamma).
    use_offset : bool, default=False
        False: D // 2 frequencies give cos and sin features (and an odd D one offset feature);
        True: D offset features sqrt(2 / D) cos(<w, x> + b) (scikit-learn's RBFSampler form, higher variance).
    random_state : int, RandomState instance or None, default=None
        Seeds the draw in :term:`fit`: an int gives the same frequencies on every call (and machine), None uses
        numpy's global random state. See :term:`Glossary <random_state>`.

    Attributes
    ----------
    random_signs_ : ndarray of shape (n_blocks, 3, p)
        The sign diagonals D1 (applied first, to x), D2, D3 of each block, float64 entries +-1;
        p = ``next_power_of_two(n_features_in_)``, n_blocks = ceil(F / p), and the first F of the
        n_blocks p rows are the frequencies.
    random_offset_ : ndarray of shape (n_components - 2 * n_pairs_,)
        Phases b ~ U[0, 2 pi) of the offset features, float64: empty for an even ``n_components`` without
        ``use_offset``, one entry for an odd one, ``n_components`` entries with ``use_offset``.
    n_pairs_ : int
        Number of cos/sin pairs: ``n_components // 2``, or 0 with ``use_offset``. The map uses
        F = ``n_components - n_pairs_`` frequencies: the first n_pairs_ for the pairs, the rest offset.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    OrthogonalRandomFeatures : Exactly Gaussian orthogonal rows (unbiased), O(D d).
    FastFood : Unbiased at the same O(D log d) cost, not orthogonal.

    References
    ----------
    Yu, Suresh, Choromanski, Holtmann-Rice & Kumar. Orthogonal random features. NIPS 2016.
    Demni & Kadri. Orthogonal random features: explicit forms and sharp inequalities. 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.maps.structured import StructuredOrthogonalRandomFeatures
    >>> X = np.random.RandomState(0).rand(5, 6).astype(np.float32)
    >>> Z = StructuredOrthogonalRandomFeatures(n_components=20, random_state=0).fit_transform(X)
    >>> Z.shape, Z.dtype
    ((5, 20), dtype('float32'))
    """

    def _draw(self, rng, n_frequencies, d):
        p, n_blocks = self._blocks(n_frequencies, d)
        self.random_signs_ = _rademacher(rng, (n_blocks, 3, p))

    def _project(self, Xb, scale):
        signs = self.random_signs_.astype(Xb.dtype, copy=False)
        p = signs.shape[2]
        V = fwht(_padded_dense(Xb, p, signs[:, 0]))
        for k in (1, 2):
            V *= signs[:, k]
            V = fwht(V)
        # three normalized transforms (p^-3/2) times sqrt(p), times the frequency scale: left to the angle pass
        return V.reshape(V.shape[0], -1)[:, :self.n_components - self.n_pairs_], scale / p


class FastFood(_HadamardFeatures):  # numpydoc ignore=PR02
    r"""FastFood (Le, Sarlos & Smola, ICML 2013) for the Gaussian kernel exp(-gamma ||x - y||^2).

    Blocks S H G Pi H B / sqrt(p): B random signs, H the Walsh-Hadamard matrix (two fast transforms),
    Pi a random permutation, G a Gaussian diagonal, S = chi_p / ||G||_F. Every row is exactly
    N(0, 2 gamma I) on the first d coordinates, so the estimate is unbiased. O(D log d) per sample.

    Parameters
    ----------
    n_components : int, default=100
        D, the number of features (columns of the output), >= 1.
    gamma : float, default=1.0
        Width of the Gaussian kernel exp(-gamma ||x - y||^2), > 0; the frequencies are scaled by sqrt(2 gamma).
    use_offset : bool, default=False
        False: D // 2 frequencies give cos and sin features (and an odd D one offset feature);
        True: D offset features sqrt(2 / D) cos(<w, x> + b) (scikit-learn's RBFSampler form, higher variance).
    random_state : int, RandomState instance or None, default=None
        Seeds the draw in :term:`fit`: an int gives the same frequencies on every call (and machine), None uses
        numpy's global random state. See :term:`Glossary <random_state>`.

    Attributes
    ----------
    random_signs_ : ndarray of shape (n_blocks, p)
        B, the sign diagonal applied first (to x zero-padded to p), float64 entries +-1;
        p = ``next_power_of_two(n_features_in_)``, n_blocks = ceil(F / p), and the first F of the
        n_blocks p rows are the frequencies.
    random_perm_ : ndarray of shape (n_blocks, p)
        Pi, integer (numpy.intp): each row a uniformly random permutation of ``range(p)``.
    random_gaussian_ : ndarray of shape (n_blocks, p)
        G, the Gaussian diagonal, float64 i.i.d. N(0, 1).
    random_scaling_ : ndarray of shape (n_blocks, p)
        S / sqrt(p) = chi_p / (||G||_F sqrt(p)), float64, the chi_p draws independent of everything else.
    random_offset_ : ndarray of shape (n_components - 2 * n_pairs_,)
        Phases b ~ U[0, 2 pi) of the offset features, float64: empty for an even ``n_components`` without
        ``use_offset``, one entry for an odd one, ``n_components`` entries with ``use_offset``.
    n_pairs_ : int
        Number of cos/sin pairs: ``n_components // 2``, or 0 with ``use_offset``. The map uses
        F = ``n_components - n_pairs_`` frequencies: the first n_pairs_ for the pairs, the rest offset.
    n_features_in_ : int
        Number of features seen during :term:`fit`.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :term:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    OrthogonalRandomFeatures : Orthogonal Gaussian rows (unbiased, lower variance), O(D d).
    StructuredOrthogonalRandomFeatures : Orthogonal structured rows at the same cost, but biased.

    References
    ----------
    Le, Sarlos & Smola. Fastfood: approximating kernel expansions in loglinear time. ICML 2013.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> from rkcore.maps.structured import FastFood
    >>> X = np.random.RandomState(0).rand(5, 6)
    >>> Z = FastFood(n_components=2000, gamma=0.5, random_state=0).fit_transform(X)
    >>> bool(np.abs(Z @ Z.T - rbf_kernel(X, gamma=0.5)).max() < 0.05)
    True
    """

    def _draw(self, rng, n_frequencies, d):
        p, n_blocks = self._blocks(n_frequencies, d)
        self.random_signs_ = _rademacher(rng, (n_blocks, p))
        self.random_perm_ = np.argsort(rng.random_sample((n_blocks, p)), axis=1)
        self.random_gaussian_ = rng.standard_normal((n_blocks, p))
        norms = np.linalg.norm(self.random_gaussian_, axis=1, keepdims=True)
        self.random_scaling_ = chi.rvs(p, size=(n_blocks, p), random_state=rng) / (norms * np.sqrt(p))

    def _project(self, Xb, scale):
        p = self.random_signs_.shape[1]
        V = fwht(_padded_dense(Xb, p, self.random_signs_))
        V = np.take_along_axis(V, self.random_perm_[None], axis=2)
        V *= self.random_gaussian_.astype(Xb.dtype, copy=False)
        V = fwht(V)
        n_frequencies = self.n_components - self.n_pairs_  # S and the frequency scale: left to the angle pass
        return V.reshape(V.shape[0], -1)[:, :n_frequencies], (self.random_scaling_ * scale).ravel()[:n_frequencies]
