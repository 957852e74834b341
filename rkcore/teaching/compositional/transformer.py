"""CompositionalFeatures: the scikit-learn transformer drawing and evaluating compositional random features."""
from __future__ import annotations

from typing import TYPE_CHECKING

from math import pi

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from ...base.arrays import validate_data  # scikit-learn's, in the user's words for ragged or text rows
from ...base.validation import Count  # sizes: integers, never True

from ...base.limits import nbytes, require_memory
from ...kernels.exact import row_blocks
from .presets import get_preset, PRESETS
from .sampling import _complex_features, DEDUP_MODES, sample_features, TRANSFORM_BLOCK_BYTES
from .skeleton import InputNode, InternalNode, Skeleton, _unit_rows
from ...base.annotations import fit_context

if TYPE_CHECKING:
    from typing_extensions import Self


# ============================================================================ transformer
class CompositionalFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Random features of a compositional kernel (Daniely et al. 2017, Algorithm 1).

    .. math::
        Z(\mathbf{x}) = \big(\sqrt{w_1}\,\psi_1(\mathbf{x}), \dots, \sqrt{w_D}\,\psi_D(\mathbf{x})\big),\qquad
        \mathbb{E}\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle = k_{\mathcal{S}}(\mathbf{x}, \mathbf{y}),

    each :math:`\psi_j` a product of base random features along random paths of the
    skeleton; :math:`w_j = 1/D` without de-duplication.

    Parameters
    ----------
    skeleton : Skeleton, preset key or None, default=None
        The computation skeleton. A key of :data:`PRESETS` builds the preset for the width
        of X at fit; None means one sphere input on all columns under an exponential node.
    n_components : int, default=100
        D, the number of stored (distinct) features.
    dedup : {"none", "unbiased", "counts"}, default="none"
        Merge repeated features and draw more until D distinct ones are stored; "unbiased"
        weights them by Des Raj's estimator, "counts" by multiplicity / draws (biased, kept
        for comparison). See the module docstring.
    random_state : int, RandomState instance or None, default=None
        Seeds the random draw: an int gives the same features on every call (and on every
        machine), None uses numpy's global random state. See :term:`Glossary <random_state>`.

    Attributes
    ----------
    skeleton_ : Skeleton
    weights_ : ndarray of shape (n_components,)
    feature_mass_ : ndarray or None -- exact probability of each feature under Algorithm 1
    n_draws_ : int -- executions of Algorithm 1 consumed
    n_factors_ : ndarray of shape (n_components,) -- base features multiplied in each feature
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.teaching.compositional import CompositionalFeatures
    >>> X = np.random.RandomState(0).randn(5, 8)
    >>> Z = CompositionalFeatures(n_components=64, random_state=0).fit_transform(X)
    >>> Z.shape
    (5, 64)
    """

    _parameter_constraints: dict = {
        "skeleton": [None, StrOptions(set(PRESETS)), Skeleton],
        "n_components": [Count(1)],
        "dedup": [StrOptions(set(DEDUP_MODES))],
        "random_state": ["random_state"],
    }

    def __init__(self, skeleton=None, n_components=100, *, dedup="none", random_state=None):
        self.skeleton = skeleton
        self.n_components = n_components
        self.dedup = dedup
        self.random_state = random_state

    def _resolve_skeleton(self, d: int) -> Skeleton:
        if self.skeleton is None:
            return Skeleton((InputNode("x", "sphere", tuple(range(d))), InternalNode("out", "exponential", ("x",))),
                            name="default")
        if isinstance(self.skeleton, str):
            preset = get_preset(self.skeleton)
            return preset.build(d, n_categories=preset.n_categories) if preset.n_categories else preset.build(d)
        return self.skeleton

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None) -> Self:
        """Draw the features; X is only checked against the skeleton.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; checked against the skeleton (its column ranges and input domains).
        y : None
            Ignored; present for API consistency with scikit-learn pipelines.

        Returns
        -------
        self : object
            The fitted transformer.
        """
        X = validate_data(self, X, dtype=np.float64)
        skel = self._resolve_skeleton(X.shape[1])
        skel.check_X(X)
        drawn = sample_features(skel, self.n_components, dedup=self.dedup, random_state=self.random_state)
        forest = drawn["forest"]
        self.skeleton_ = skel
        self.weights_ = drawn["weights"]
        self.feature_mass_ = drawn["mass"]
        self.n_draws_ = drawn["n_draws"]
        self.exhausted_ = drawn["exhausted"]
        D = forest.n_features
        # leaves of all input nodes, sorted by feature: the product per feature is a reduceat
        parts = [(i, lv) for i, lv in forest.leaves.items()]
        feats = np.concatenate([lv["feature"] for _, lv in parts]) if parts else np.empty(0, np.int64)
        order = np.argsort(feats, kind="stable")
        position = np.empty(order.size, dtype=np.int64)
        position[order] = np.arange(order.size)
        offset = 0
        self._leaf_plan = []
        for i, lv in parts:
            m = lv["feature"].size
            if m:
                self._leaf_plan.append((i, position[offset:offset + m], lv))
            offset += m
        sorted_feats = feats[order]
        self.complex_ = _complex_features(skel, forest)
        # real feature = sqrt2 Re(e^{ib} psi): b = 0 -> sqrt2 Re(psi), b = pi/2 -> -sqrt2 Im(psi)
        self._use_imag = self.complex_ & (forest.phase == 1)
        self.n_factors_ = np.bincount(sorted_feats, minlength=D)
        self._with_leaves = np.flatnonzero(self.n_factors_ > 0)
        self._starts = np.searchsorted(sorted_feats, self._with_leaves)
        self._n_leaves = order.size
        self._scale = np.sqrt(self.weights_) * np.where(self.complex_, np.sqrt(2.0), 1.0) * np.where(self._use_imag, -1.0, 1.0)
        return self

    def transform(self, X) -> NDArray[np.float64]:
        """Map X to its compositional random features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples, valid for the skeleton's input nodes.

        Returns
        -------
        Z : ndarray of shape (n_samples, n_components)
            The features (float64); <Z(x), Z(y)> estimates the skeleton's kernel.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        skel = self.skeleton_
        skel.check_X(X)
        n, D = X.shape[0], self.weights_.size
        require_memory({"the features Z and their scaled copy": (2, n, D)}, what="This transform",
                       hint="Transform fewer rows at a time or lower n_components (D).",
                       largest={"number of rows": lambda rows: nbytes((2, rows, D))})
        out = np.ones((n, D))
        if self._n_leaves:
            cols = self._with_leaves
            imag = self._use_imag[cols]
            for rows in row_blocks(n, 16 * self._n_leaves, TRANSFORM_BLOCK_BYTES):
                B = np.empty((rows.stop - rows.start, self._n_leaves), dtype=np.complex128)
                Xb = X[rows]
                for i, pos, lv in self._leaf_plan:
                    B[:, pos] = _base_features(skel.nodes[i], Xb, lv)
                prod = np.multiply.reduceat(B, self._starts, axis=1)
                out[rows, cols] = np.where(imag, prod.imag, prod.real)
        return out * self._scale

    def kernel_estimate(self, X, Y=None) -> np.ndarray:
        """<Z(x), Z(y)> for all pairs: the random-feature estimate of the Gram matrix.

        Parameters
        ----------
        X : array-like of shape (n_samples_X, n_features)
            Rows of the Gram matrix.
        Y : array-like of shape (n_samples_Y, n_features), default=None
            Columns of the Gram matrix; None means X.

        Returns
        -------
        K_hat : ndarray of shape (n_samples_X, n_samples_Y)
            The estimate Z(X) Z(Y)^T.
        """
        Zx = self.transform(X)
        return Zx @ (Zx if Y is None else self.transform(Y)).T

    @property
    def _n_features_out(self):
        return self.weights_.size

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        # float64 only: the base features are complex128 trigonometric products whose
        # float32 error has not been analysed.
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags


def _base_features(node: InputNode, X: np.ndarray, lv: dict) -> np.ndarray:
    """psi(x) (complex) for each leaf at an input node: (n_rows, n_leaves); see :func:`_sample_base`."""
    Xg = X[:, node.columns]
    if node.kernel == "sphere":
        U = _unit_rows(Xg)
        d = len(node.columns)
        if d == 1:
            return np.repeat(U, lv["index"].size, axis=1)  # sign(x) (0 for x = 0)
        if d == 2:
            z = U[:, 0] + 1j * U[:, 1]
            return np.where(lv["index"] == 0, z[:, None], np.conj(z)[:, None])
        return np.sqrt(d) * U[:, lv["index"]]
    if node.kernel == "categorical":
        return np.exp(1j * np.outer(Xg[:, 0], 2 * pi * lv["index"] / node.n_categories))
    return np.exp(1j * (Xg @ lv["w"].T))
