r"""Compositional kernels on a computation skeleton and their random features.

Daniely, Frostig, Gupta & Singer, *Random Features for Compositional Kernels* (2017),
Section 5 and Algorithm 1 (RFSS).

A :class:`Skeleton` is a small DAG. Its input nodes carry normalized *base kernels* on
groups of columns (:data:`BASE_KERNELS`: normalized dot product on the sphere, Gaussian,
categorical equality); each internal node v averages its children's kernels and applies
a *conjugate (dual) activation* :math:`\hat\sigma_v(\rho) = \sum_n a_n \rho^n` with
:math:`a_n \ge 0`, :math:`\sum_n a_n = 1` (:data:`ACTIVATIONS`):

.. math::
    k_v(\mathbf{x}, \mathbf{y}) = \hat\sigma_v\Big(\frac{1}{|\mathrm{in}(v)|}
    \sum_{u \in \mathrm{in}(v)} k_u(\mathbf{x}, \mathbf{y})\Big).

The random feature scheme (paper, Algorithm 1, from Lemmas 9 and 10): at an internal node
sample a degree n with probability a_n, pick n children uniformly at random (independently),
recurse into each and multiply the returned features; at an input node return a random
feature of the base kernel. Every feature is a product of base features, so
:math:`\mathbb{E}[\psi(\mathbf{x})\overline{\psi(\mathbf{y})}] = k(\mathbf{x}, \mathbf{y})`.
Base features are the paper's norm-efficient ones where they exist (Section 4): complex of
modulus 1 for the circle (z or its conjugate), the Gaussian kernel (e^{i<w, x>}) and categories
(e^{2 pi i w x / c}), so a product of any length stays bounded; sqrt(d) x_j / |x| on spheres of
dimension d >= 3. The stored real feature is sqrt(2) Re(e^{ib} psi) with b uniform on {0, pi/2}
(paper, Comment 1; the two-point phase has the same expectation as a uniform one), or psi itself
when every factor is real. :class:`CompositionalFeatures` draws D features, vectorized over all
features at once.

De-duplication
--------------
The paper (Section 6): "when one repeatedly executes Algorithm 1 in order to generate
features, duplicates may arise. It is straightforward to merge them and hence afford to
generate more under the target feature budget." With discrete base features (coordinate
sampling on the sphere, the categorical scheme) and activations with a constant term
(a_0 > 0: the constant feature 1 alone has probability e^{-1} under the exponential
activation) duplicates are frequent. Two weightings of the merged features:

* ``dedup="counts"`` -- the literal reading: draw until D distinct features are seen,
  give feature f the weight c_f / N (c_f its multiplicity among the N draws). Because N is
  a stopping time this is *not* exactly unbiased (E[c_f / N] != p_f in general); it is
  kept to measure that bias.
* ``dedup="unbiased"`` (the default of the option) -- the same draws, weighted by
  Des Raj's (1956) estimator for ordered sampling without replacement: with the distinct
  features in order of first appearance, p_j the exact probability that Algorithm 1
  returns feature j and P_{<j} = p_1 + ... + p_{j-1},

  .. math::
      \hat k = \frac{1}{D}\sum_{k=1}^{D}\Big(\sum_{j<k} p_j g_j + (1 - P_{<k})\, g_k\Big)
             = \sum_{j=1}^{D} \underbrace{\frac{(1 - P_{<j}) + (D - j)\, p_j}{D}}_{w_j}
               \psi_j(\mathbf{x})\psi_j(\mathbf{y}),

  where g_j = psi_j(x) psi_j(y). Each bracket is conditionally unbiased given the earlier
  draws (the first new feature in an i.i.d. stream is distributed as p restricted to the
  unseen features), so the estimate is exactly unbiased with exactly D stored features.
  Features containing a continuous base feature (Gaussian) have p_j = 0 and never repeat;
  if every feature had p_j = 0 the weights reduce to the plain 1/D.

"Identical" means the same derivation up to the order of the factors at each node: the
same input node with the same discrete parameter at the leaves, the same multiset of
child sub-derivations at each internal node, and the same output phase; moreover every
call that multiplied no base feature (or only constant ones, e^{2 pi i 0 x / c} = 1) is the
constant 1, one feature however it was derived (probability e_v = sigma_v(mean_u e_u)). p_j is computed exactly
along the derivation (a_n, the 1/|in(v)| child choices, the multinomial count of orderings,
the base parameter probability, 1/2 for the phase of a complex product). Two different
derivations can still give the same function (the same leaves reached through different
internal nodes); they stay separate features, which costs budget but not correctness.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import pi
from numbers import Integral
from typing import Callable

import numpy as np
import pandas as pd
from scipy.special import gammaln
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import KBinsDiscretizer, StandardScaler
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from .foundations import kernel_errors
from .kernels import check_array, row_blocks

DEDUP_MODES = ("none", "unbiased", "counts")

#: Temporary memory per row block in transform (base features of all leaves).
TRANSFORM_BLOCK_BYTES = 16 * 2**20


# ============================================================================ activations
@dataclass(frozen=True)
class Activation:
    r"""A normalized conjugate activation :math:`\hat\sigma(\rho) = \sum_n a_n \rho^n`, sum a_n = 1.

    ``dual`` evaluates the closed form on [-1, 1]; ``log_coefficient(n)`` gives log a_n for
    integer arrays n; ``sample_degree(rng, size)`` draws n with probability a_n exactly;
    ``mean_degree`` is :math:`\hat\sigma'(1) = \sum_n n a_n` (the paper's complexity, eq. 11).
    """

    key: str
    label: str
    latex: str
    dual: Callable[[np.ndarray], np.ndarray]
    log_coefficient: Callable[[np.ndarray], np.ndarray]
    sample_degree: Callable[[np.random.RandomState, int], np.ndarray]
    mean_degree: float
    activation_latex: str = ""

    def coefficients(self, n_terms: int) -> np.ndarray:
        """a_0, ..., a_{n_terms-1}."""
        return np.exp(self.log_coefficient(np.arange(int(n_terms))))


def _table_activation(coefs: tuple[float, ...]):
    a = np.asarray(coefs, dtype=np.float64)
    with np.errstate(divide="ignore"):
        log_a = np.log(a)

    def log_coefficient(n):
        n = np.asarray(n, dtype=np.int64)
        out = np.full(n.shape, -np.inf)
        ok = (n >= 0) & (n < a.size)
        out[ok] = log_a[n[ok]]
        return out

    def sample(rng, size):
        return rng.choice(a.size, size=int(size), p=a).astype(np.int64)

    return log_coefficient, sample


def _exp_log_coefficient(n):
    n = np.asarray(n, dtype=np.int64)
    return np.where(n >= 0, -1.0 - gammaln(np.maximum(n, 0) + 1.0), -np.inf)


def _exp_sample(rng, size):
    # a_n = e^{-1} / n!: the degree is Poisson(1)
    return rng.poisson(1.0, size=int(size)).astype(np.int64)


def _relu_dual(rho):
    rho = np.clip(rho, -1.0, 1.0)  # rounding can push averages of kernels just past +-1
    return (np.sqrt(1.0 - rho**2) + (pi - np.arccos(rho)) * rho) / pi


def _relu_log_b(k):
    """log b_k, b_k = C(2k, k) / (4^k (2k+1)(2k+2)): rho^{2k+2} coefficient of sqrt(1-rho^2) + rho arcsin(rho)."""
    k = np.asarray(k, dtype=np.float64)
    return gammaln(2 * k + 1) - 2 * gammaln(k + 1) - k * np.log(4.0) - np.log(2 * k + 1) - np.log(2 * k + 2)


def _relu_log_coefficient(n):
    # kappa_1(rho) = 1/pi + rho/2 + (1/pi) sum_k b_k rho^{2k+2}
    n = np.asarray(n, dtype=np.int64)
    out = np.full(n.shape, -np.inf)
    out[n == 0] = -np.log(pi)
    out[n == 1] = -np.log(2.0)
    even = (n >= 2) & (n % 2 == 0)
    out[even] = _relu_log_b((n[even] - 2) // 2) - np.log(pi)
    return out


_ZIPF_A = 2.5  # b_k ~ k^{-5/2} / (4 sqrt(pi)): a Zipf(2.5) proposal on k + 1 dominates it
_RELU_RATIO_MAX = 0.5  # sup_k b_k (k+1)^{5/2}, reached at k = 0 (checked in the tests)


def _relu_sample(rng, size):
    size = int(size)
    u = rng.uniform(size=size)
    n = np.where(u < 1.0 / pi, 0, 1).astype(np.int64)
    tail = u >= 1.0 / pi + 0.5  # probability (pi/2 - 1)/pi of an even degree >= 2
    need = int(tail.sum())
    ks = np.empty(0, dtype=np.int64)
    while ks.size < need:  # rejection sampling, acceptance ~ 85%, vectorized per round
        k = rng.zipf(_ZIPF_A, size=2 * (need - ks.size) + 8).astype(np.int64) - 1
        accept = rng.uniform(size=k.size) < np.exp(_relu_log_b(k) + _ZIPF_A * np.log(k + 1.0)) / _RELU_RATIO_MAX
        ks = np.concatenate([ks, k[accept]])
    n[tail] = 2 * ks[:need] + 2
    return n


ACTIVATIONS: dict[str, Activation] = {
    a.key: a
    for a in (
        Activation("linear", "Linear (identity)", r"\hat\sigma(\rho) = \rho",
                   lambda r: np.asarray(r, dtype=np.float64), *_table_activation((0.0, 1.0)), 1.0,
                   r"\sigma(z) = z"),
        Activation("polynomial", "Quadratic ((1+ρ)/2)²", r"\hat\sigma(\rho) = \left(\tfrac{1+\rho}{2}\right)^2",
                   lambda r: ((1.0 + np.asarray(r, dtype=np.float64)) / 2.0) ** 2,
                   *_table_activation((0.25, 0.5, 0.25)), 1.0,
                   r"\sigma(z) = \tfrac12 + \tfrac{z}{\sqrt2} + \tfrac{z^2 - 1}{2\sqrt2}"),
        Activation("exponential", "Exponential", r"\hat\sigma(\rho) = e^{\rho - 1} = \sum_{n\ge0} \frac{e^{-1}}{n!}\rho^n",
                   lambda r: np.exp(np.asarray(r, dtype=np.float64) - 1.0), _exp_log_coefficient, _exp_sample, 1.0,
                   r"\sigma(z) = e^{z - 1/2}\ (\text{normalized})"),
        Activation("relu", "ReLU (arc-cosine)",
                   r"\hat\sigma(\rho) = \frac{\sqrt{1-\rho^2} + (\pi - \arccos\rho)\,\rho}{\pi}",
                   _relu_dual, _relu_log_coefficient, _relu_sample, 1.0,
                   r"\sigma(z) = \sqrt{2}\max(0, z)"),
    )
}


def get_activation(key: str) -> Activation:
    try:
        return ACTIVATIONS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown activation {key!r}; allowed: {', '.join(map(repr, ACTIVATIONS))}.") from None


# ============================================================================ base kernels
@dataclass(frozen=True)
class BaseKernel:
    """A normalized base kernel (k(x, x) = 1) and its random feature scheme (paper, Section 4).

    ``discrete`` says whether its random features take finitely many values of the
    parameter (then identical features can be merged, see the module docstring).
    """

    key: str
    label: str
    latex: str
    feature_latex: str
    discrete: bool


BASE_KERNELS: dict[str, BaseKernel] = {
    b.key: b
    for b in (
        BaseKernel("sphere", "Normalized dot product (sphere)",
                   r"k(\mathbf{x}, \mathbf{y}) = \frac{\langle \mathbf{x}, \mathbf{y}\rangle}{\|\mathbf{x}\|\,\|\mathbf{y}\|}",
                   r"\psi(\mathbf{x}) = \begin{cases} \mathrm{sign}(x_1) & d = 1 \\ z \text{ or } \bar z \text{ (prob. } \tfrac12\text{)},"
                   r"\ z = (x_1 + i x_2)/\|\mathbf{x}\| & d = 2 \\ \sqrt{d}\, x_j / \|\mathbf{x}\|,\ "
                   r"j \sim \mathcal{U}\{1..d\} & d \ge 3 \end{cases}", True),
        BaseKernel("gaussian", "Gaussian",
                   r"k(\mathbf{x}, \mathbf{y}) = e^{-\gamma\|\mathbf{x}-\mathbf{y}\|^2}",
                   r"\psi_{\mathbf{w}}(\mathbf{x}) = e^{i\langle\mathbf{w},\mathbf{x}\rangle},\ \mathbf{w}\sim\mathcal{N}(0, 2\gamma I)", False),
        BaseKernel("categorical", "Categorical (equality)",
                   r"k(x, y) = \mathbb{1}[x = y]",
                   r"\psi_{w}(x) = e^{2\pi i\, w x / c},\ w\sim\mathcal{U}\{0..c-1\}", True),
    )
}

#: The real feature made of a complex product psi (paper, Comment 1, with a two-point phase).
REAL_FEATURE_LATEX = (r"\phi(\mathbf{x}) = \sqrt2\,\mathrm{Re}\big(e^{ib}\psi(\mathbf{x})\big),\ b \sim \mathcal{U}\{0, \tfrac{\pi}{2}\}"
                      r"\quad(\phi = \psi \text{ when every factor is real})")


def _is_complex_base(node: "InputNode") -> bool:
    """Whether the node's base features are complex (modulus 1) rather than real."""
    return node.kernel in ("gaussian", "categorical") or (node.kernel == "sphere" and len(node.columns) == 2)


def get_base_kernel(key: str) -> BaseKernel:
    try:
        return BASE_KERNELS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown base kernel {key!r}; allowed: {', '.join(map(repr, BASE_KERNELS))}.") from None


def _unit_rows(Xg: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(Xg, axis=1, keepdims=True)
    # zero rows stay zero: their base kernel with anything (themselves included) is 0
    return np.divide(Xg, norms, out=np.zeros_like(Xg), where=norms > 0)


# ============================================================================ skeleton
@dataclass(frozen=True)
class InputNode:
    """An input node: a base kernel on the columns ``columns`` of X.

    ``gamma`` is the Gaussian width; ``n_categories`` (c) the number of categories of a
    categorical column, whose values must be the integer codes 0..c-1.
    """

    name: str
    kernel: str
    columns: tuple[int, ...]
    gamma: float = 1.0
    n_categories: int | None = None

    def __post_init__(self):
        get_base_kernel(self.kernel)
        cols = tuple(int(c) for c in np.atleast_1d(self.columns))
        if not cols or min(cols) < 0 or len(set(cols)) != len(cols):
            raise ValueError(f"Input node {self.name!r}: columns must be distinct non-negative indices, got {self.columns!r}.")
        object.__setattr__(self, "columns", cols)
        if self.kernel == "gaussian" and not (np.isfinite(self.gamma) and self.gamma > 0):
            raise ValueError(f"Input node {self.name!r}: gamma must be a positive number, got {self.gamma!r}.")
        if self.kernel == "categorical":
            if len(cols) != 1:
                raise ValueError(f"Input node {self.name!r}: a categorical node reads exactly one column, got {len(cols)}.")
            c = self.n_categories
            if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1:
                raise ValueError(f"Input node {self.name!r}: n_categories must be an integer >= 1, got {c!r}.")

    @property
    def is_input(self) -> bool:
        return True

    def gram(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        Xg, Yg = X[:, self.columns], Y[:, self.columns]
        if self.kernel == "sphere":
            return _unit_rows(Xg) @ _unit_rows(Yg).T
        if self.kernel == "gaussian":
            return rbf_kernel(Xg, Yg, gamma=self.gamma)
        return (Xg[:, 0][:, None] == Yg[:, 0][None, :]).astype(np.float64)

    def label(self) -> str:
        extra = f", γ={self.gamma:g}" if self.kernel == "gaussian" else (
            f", c={self.n_categories}" if self.kernel == "categorical" else "")
        return f"{BASE_KERNELS[self.kernel].label.split(' (')[0]} on x[{_format_cols(self.columns)}]{extra}"


@dataclass(frozen=True)
class InternalNode:
    """An internal node: average of the children's kernels, then the dual activation."""

    name: str
    activation: str
    children: tuple[str, ...]

    def __post_init__(self):
        get_activation(self.activation)
        children = (self.children,) if isinstance(self.children, str) else tuple(self.children)
        if not children:
            raise ValueError(f"Internal node {self.name!r} has no children; it needs at least one.")
        object.__setattr__(self, "children", children)

    @property
    def is_input(self) -> bool:
        return False

    def label(self) -> str:
        return f"{ACTIVATIONS[self.activation].label} of mean({', '.join(self.children)})"


def _format_cols(cols) -> str:
    cols = list(cols)
    if len(cols) > 2 and cols == list(range(cols[0], cols[-1] + 1)):
        return f"{cols[0]}:{cols[-1] + 1}"
    return ",".join(map(str, cols))


@dataclass(frozen=True)
class Skeleton:
    """A computation skeleton: nodes in topological order (children before parents).

    The last node is the output node; every other node must feed some later node, so the
    output is the only node with out-degree zero (paper, Section 5).
    """

    nodes: tuple
    name: str = "skeleton"
    _index: dict = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        nodes = tuple(self.nodes)
        if not nodes:
            raise ValueError("A skeleton needs at least one node.")
        index: dict[str, int] = {}
        used = set()
        for i, node in enumerate(nodes):
            if not isinstance(node, (InputNode, InternalNode)):
                raise ValueError(f"Skeleton nodes must be InputNode or InternalNode, got {type(node).__name__}.")
            if node.name in index:
                raise ValueError(f"Node name {node.name!r} is used twice; names must be unique.")
            if not node.is_input:
                for c in node.children:
                    if c not in index:
                        raise ValueError(
                            f"Node {node.name!r} refers to {c!r}, which is not an earlier node; list children "
                            "before their parents (the skeleton must be a DAG in topological order).")
                    used.add(c)
            index[node.name] = i
        dangling = [n.name for n in nodes[:-1] if n.name not in used]
        if dangling:
            raise ValueError(f"Nodes {dangling} feed no other node; only the output node (the last one) may have out-degree 0.")
        object.__setattr__(self, "nodes", nodes)
        object.__setattr__(self, "_index", index)

    # ------------------------------------------------------------------ structure
    @property
    def output(self):
        return self.nodes[-1]

    @property
    def input_nodes(self) -> list[InputNode]:
        return [n for n in self.nodes if n.is_input]

    def children_of(self, i: int) -> np.ndarray:
        return np.array([self._index[c] for c in self.nodes[i].children], dtype=np.intp)

    @property
    def n_columns(self) -> int:
        """The number of columns X must have at least."""
        return 1 + max(max(n.columns) for n in self.input_nodes)

    def complexity(self) -> float:
        r"""Expected number of recursive calls of Algorithm 1 (= expected factors + internal visits).

        :math:`C(v) = 1` at inputs, :math:`C(v) = 1 + \hat\sigma_v'(1)\,\mathrm{mean}_{u\in in(v)} C(u)` (paper, eq. 11).
        """
        C = np.ones(len(self.nodes))
        for i, node in enumerate(self.nodes):
            if not node.is_input:
                C[i] = 1.0 + ACTIVATIONS[node.activation].mean_degree * C[self.children_of(i)].mean()
        return float(C[-1])

    def describe(self) -> pd.DataFrame:
        """One row per node: name, type, what it computes."""
        rows = []
        for node in self.nodes:
            if node.is_input:
                rows.append(dict(node=node.name, type="input", kernel=node.kernel, activation="",
                                 inputs=f"x[{_format_cols(node.columns)}]", label=node.label()))
            else:
                rows.append(dict(node=node.name, type="output" if node is self.output else "internal", kernel="",
                                 activation=node.activation, inputs=", ".join(node.children), label=node.label()))
        return pd.DataFrame(rows)

    def check_X(self, X, name: str = "X") -> np.ndarray:
        """Validate X for this skeleton: dense, enough columns, categorical codes in 0..c-1."""
        X = check_array(X, name)
        if not isinstance(X, np.ndarray):
            X = X.toarray()
        if X.shape[1] < self.n_columns:
            raise ValueError(f"{name} has {X.shape[1]} columns but the skeleton reads column {self.n_columns - 1}; "
                             f"it needs at least {self.n_columns}.")
        for node in self.input_nodes:
            if node.kernel == "categorical":
                col = X[:, node.columns[0]]
                bad = (col != np.round(col)) | (col < 0) | (col >= node.n_categories)
                if bad.any():
                    raise ValueError(
                        f"Column {node.columns[0]} of {name} feeds the categorical node {node.name!r}: its values must be "
                        f"integer codes 0..{node.n_categories - 1}, found {col[bad][0]!r}.")
        return X

    # ------------------------------------------------------------------ exact kernel
    def kernel(self, X, Y=None) -> np.ndarray:
        r"""The exact compositional kernel :math:`k_{out}(X, Y)` by the recurrence over the nodes."""
        X = self.check_X(X, "X")
        Y = X if Y is None else self.check_X(Y, "Y")
        grams: list[np.ndarray] = []
        for i, node in enumerate(self.nodes):
            if node.is_input:
                grams.append(node.gram(X, Y))
            else:
                mean = sum(grams[c] for c in self.children_of(i)) / len(node.children)
                grams.append(ACTIVATIONS[node.activation].dual(mean))
        return grams[-1]

    def latex(self) -> str:
        """The recurrence, one line per internal node."""
        lines = []
        for node in self.nodes:
            if not node.is_input:
                kids = [f"k_{{\\mathrm{{{c}}}}}" for c in node.children]
                inner = " + ".join(kids) if len(kids) <= 4 else f"{kids[0]} + {kids[1]} + \\dots + {kids[-1]}"
                lines.append(f"k_{{\\mathrm{{{node.name}}}}} = \\hat\\sigma_{{\\mathrm{{{node.activation}}}}}"
                             f"\\Big(\\tfrac{{1}}{{{len(node.children)}}}({inner})\\Big)")
        return r" \\ ".join(lines)


# ============================================================================ presets
def _groups(d: int, size: int) -> list[tuple[int, ...]]:
    return [tuple(range(s, min(s + size, d))) for s in range(0, d, size)]


def shallow_skeleton(d: int, group_size: int = 2, activation: str = "exponential") -> Skeleton:
    """Sphere kernels on consecutive groups of columns, one internal node (the paper's "shallow").

    With the exponential activation this is exp(mean_g <x_g, y_g>/(|x_g||y_g|) - 1), a
    Gaussian kernel of the group-normalized inputs.
    """
    d = _check_positive_int(d, "d")
    nodes = [InputNode(f"s{g}", "sphere", cols) for g, cols in enumerate(_groups(d, _check_positive_int(group_size, "group_size")))]
    nodes.append(InternalNode("out", activation, tuple(n.name for n in nodes)))
    return Skeleton(tuple(nodes), name="shallow")


def deep_skeleton(d: int, group_size: int = 2, window: int = 2, activation: str = "relu",
                  output_activation: str = "exponential") -> Skeleton:
    """Two "convolution" layers of ``activation`` over windows of adjacent nodes, then an output node.

    Inputs are sphere kernels on groups of ``group_size`` columns; layer 1 node i averages
    inputs i..i+window-1, layer 2 does the same over layer 1 (the paper's "deep" setting).
    """
    d = _check_positive_int(d, "d")
    window = _check_positive_int(window, "window")
    nodes = [InputNode(f"s{g}", "sphere", cols) for g, cols in enumerate(_groups(d, _check_positive_int(group_size, "group_size")))]
    layer = [n.name for n in nodes]
    for depth in (1, 2):
        w = min(window, len(layer))
        new = [InternalNode(f"c{depth}_{i}", activation, tuple(layer[i:i + w])) for i in range(len(layer) - w + 1)]
        nodes.extend(new)
        layer = [n.name for n in new]
    nodes.append(InternalNode("out", output_activation, tuple(layer)))
    return Skeleton(tuple(nodes), name="deep")


def gaussian_skeleton(d: int, group_size: int = 4, gamma: float = 0.25, activation: str = "polynomial") -> Skeleton:
    """Gaussian base kernels on groups of columns under one internal node (continuous base features)."""
    d = _check_positive_int(d, "d")
    nodes = [InputNode(f"g{g}", "gaussian", cols, gamma=gamma) for g, cols in enumerate(_groups(d, _check_positive_int(group_size, "group_size")))]
    nodes.append(InternalNode("out", activation, tuple(n.name for n in nodes)))
    return Skeleton(tuple(nodes), name="gaussian")


def mixed_skeleton(d: int, n_categories: int = 4, group_size: int = 2) -> Skeleton:
    """Sphere groups on columns 0..d-2 and a categorical kernel on the last column, ReLU then exp.

    Use :func:`prepare_data` with ``categorical_last=n_categories`` to turn the last
    column into quantile-bin codes 0..c-1.
    """
    d = _check_positive_int(d, "d")
    if d < 2:
        raise ValueError(f"The mixed skeleton needs d >= 2 (sphere groups plus one categorical column), got d={d}.")
    spheres = [InputNode(f"s{g}", "sphere", cols) for g, cols in enumerate(_groups(d - 1, _check_positive_int(group_size, "group_size")))]
    cat = InputNode("cat", "categorical", (d - 1,), n_categories=int(n_categories))
    hidden = InternalNode("h", "relu", tuple(n.name for n in spheres))
    out = InternalNode("out", "exponential", ("h", "cat"))
    return Skeleton(tuple(spheres + [cat, hidden, out]), name="mixed")


@dataclass(frozen=True)
class Preset:
    key: str
    label: str
    description: str
    build: Callable[[int], Skeleton]
    n_categories: int | None = None  # > 0: the last column is binned into this many codes


PRESETS: dict[str, Preset] = {
    p.key: p
    for p in (
        Preset("shallow", "Shallow (exp)",
               "One exponential node over sphere kernels on pairs of columns (a Gaussian kernel of the normalized pairs).",
               shallow_skeleton),
        Preset("deep", "Deep (ReLU, ReLU, exp)",
               "Sphere kernels on pairs of columns, two layers of ReLU nodes over windows of 2, exponential output.",
               deep_skeleton),
        Preset("gaussian", "Gaussian groups",
               "Gaussian kernels (γ = 0.25, standardized data) on groups of 4 columns under a quadratic node; continuous base features never repeat.",
               gaussian_skeleton),
        Preset("mixed", "Sphere + categorical",
               "ReLU node over sphere groups, exponential output over it and a categorical kernel on the last column (binned into 4 quantiles).",
               mixed_skeleton, n_categories=4),
    )
}


def get_preset(key: str) -> Preset:
    try:
        return PRESETS[key]
    except (KeyError, TypeError):
        raise ValueError(f"Unknown skeleton preset {key!r}; allowed: {', '.join(map(repr, PRESETS))}.") from None


def prepare_data(X, categorical_last: int | None = None, standardize: bool = True) -> np.ndarray:
    """Standardize the columns (StandardScaler) and optionally bin the last one into codes 0..c-1.

    Binning uses quantiles (KBinsDiscretizer, ordinal encoding), so each category is about
    equally frequent.
    """
    X = check_array(X)
    X = X.toarray() if not isinstance(X, np.ndarray) else X.copy()
    if standardize:
        X = StandardScaler().fit_transform(X)
    if categorical_last:
        c = _check_positive_int(categorical_last, "categorical_last")
        binner = KBinsDiscretizer(n_bins=c, encode="ordinal", strategy="quantile", quantile_method="averaged_inverted_cdf")
        col = binner.fit_transform(X[:, -1:])[:, 0]
        # np.unique re-codes to 0..k-1 when constant columns collapse bins
        X[:, -1] = np.unique(col, return_inverse=True)[1]
    return X


def preset_skeleton(key: str, X) -> tuple[Skeleton, np.ndarray]:
    """The preset's skeleton for X's width and the prepared data it reads."""
    preset = get_preset(key)
    X = prepare_data(X, categorical_last=preset.n_categories)
    d = X.shape[1]
    if preset.n_categories:
        skel = preset.build(d, n_categories=int(X[:, -1].max()) + 1)
    else:
        skel = preset.build(d)
    return skel, X


def _check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}.")
    return int(value)


# ============================================================================ sampling (Algorithm 1)
class _Forest:
    """The derivations of a batch of features, stored as flat arrays of "requests".

    A request is one call of Algorithm 1: at an internal node it records the sampled
    degree, at an input node (a leaf) the sampled base parameter. ``parent`` links a
    request to the call that made it; ``root[f]`` is the request of feature f and
    ``phase[f]`` in {0, 1} its output phase b = phase * pi/2 (used when the product is complex).
    """

    def __init__(self, node, parent, feature, degree, root, leaves, phase):
        self.node, self.parent, self.feature, self.degree, self.root = node, parent, feature, degree, root
        self.phase = phase
        self.leaves = leaves  # per input node index: dict(req=..., feature=..., index=..., w=...)

    @property
    def n_features(self) -> int:
        return self.root.size

    @classmethod
    def concat(cls, a: "_Forest", b: "_Forest") -> "_Forest":
        off_r, off_f = a.node.size, a.n_features
        leaves = {}
        for i in a.leaves:
            la, lb = a.leaves[i], b.leaves[i]
            shift = {"req": off_r, "feature": off_f}
            leaves[i] = {k: np.concatenate([la[k], lb[k] + shift.get(k, 0)]) for k in la}
        return cls(np.concatenate([a.node, b.node]),
                   np.concatenate([a.parent, np.where(b.parent >= 0, b.parent + off_r, -1)]),
                   np.concatenate([a.feature, b.feature + off_f]),
                   np.concatenate([a.degree, b.degree]),
                   np.concatenate([a.root, b.root + off_r]), leaves, np.concatenate([a.phase, b.phase]))


def _sample_forest(skel: Skeleton, n_features: int, rng: np.random.RandomState) -> _Forest:
    """Run Algorithm 1 n_features times, vectorized: one pass over the nodes, output first.

    Parents come after their children in ``skel.nodes``, so visiting the nodes in reverse
    order sees every request of a node before the node is expanded.
    """
    V = len(skel.nodes)
    pend_req: list[list[np.ndarray]] = [[] for _ in range(V)]
    pend_feat: list[list[np.ndarray]] = [[] for _ in range(V)]
    root = np.arange(n_features, dtype=np.int64)
    phase = rng.randint(0, 2, size=n_features).astype(np.int64)
    pend_req[V - 1].append(root)
    pend_feat[V - 1].append(root.copy())
    chunks_node = [np.full(n_features, V - 1, dtype=np.int64)]
    chunks_parent = [np.full(n_features, -1, dtype=np.int64)]
    chunks_feat = [root.copy()]
    degree_at: list[tuple[np.ndarray, np.ndarray]] = []
    next_req = n_features
    leaves = {}
    for v in range(V - 1, -1, -1):
        node = skel.nodes[v]
        req = np.concatenate(pend_req[v]) if pend_req[v] else np.empty(0, dtype=np.int64)
        feat = np.concatenate(pend_feat[v]) if pend_feat[v] else np.empty(0, dtype=np.int64)
        if node.is_input:
            leaves[v] = _sample_base(node, req, feat, rng)
            continue
        n = ACTIVATIONS[node.activation].sample_degree(rng, req.size)
        degree_at.append((req, n))
        children = skel.children_of(v)
        total = int(n.sum())
        choice = rng.randint(0, children.size, size=total)
        new_req = next_req + np.arange(total, dtype=np.int64)
        next_req += total
        new_parent = np.repeat(req, n)
        new_feat = np.repeat(feat, n)
        child_node = children[choice]
        chunks_node.append(child_node)
        chunks_parent.append(new_parent)
        chunks_feat.append(new_feat)
        for c in np.unique(child_node):
            mask = child_node == c
            pend_req[c].append(new_req[mask])
            pend_feat[c].append(new_feat[mask])
    node_arr = np.concatenate(chunks_node)
    degree = np.full(node_arr.size, -1, dtype=np.int64)
    for req, n in degree_at:
        degree[req] = n
    return _Forest(node_arr, np.concatenate(chunks_parent), np.concatenate(chunks_feat), degree, root, leaves, phase)


def _sample_base(node: InputNode, req, feat, rng) -> dict:
    """Base random feature parameters for the requests at one input node (paper, Section 4).

    sphere, d = 1: sign(x) (deterministic, Example 1); d = 2: z or conj(z) with z = (x1 + i x2)/|x|
    (norm-efficient, Example 2); d >= 3: sqrt(d) x_j/|x| with j uniform (Example 5). Gaussian:
    e^{i<w, x>} with w ~ N(0, 2 gamma I) (Example 3). Categorical: e^{2 pi i w x / c}, w uniform (Example 4).
    """
    m = req.size
    out = dict(req=req, feature=feat, index=np.zeros(m, dtype=np.int64), w=np.zeros((m, 0)))
    if node.kernel == "sphere":
        out["index"] = rng.randint(0, len(node.columns), size=m).astype(np.int64)
    elif node.kernel == "categorical":
        out["index"] = rng.randint(0, node.n_categories, size=m).astype(np.int64)
    else:
        out["w"] = rng.standard_normal((m, len(node.columns))) * np.sqrt(2.0 * node.gamma)
    return out


def _base_log_mass(node: InputNode) -> float:
    if node.kernel == "sphere":
        return -np.log(len(node.columns))  # d = 2: z or conj(z), each 1/2; d = 1: sign, probability 1
    if node.kernel == "categorical":
        return -np.log(node.n_categories)
    return -np.inf  # continuous parameter: a single feature has probability 0


#: The id of the constant feature 1 (a call that multiplied no base feature), shared by all derivations.
CONST = 0


def _row_ids(rows: np.ndarray) -> np.ndarray:
    """Ids 0..k-1 of the distinct rows of an int matrix (np.unique(axis=0) is a slow void sort)."""
    order = np.lexsort(rows.T[::-1])
    srt = rows[order]
    new = np.concatenate([[False], np.any(srt[1:] != srt[:-1], axis=1)])
    ids = np.empty(rows.shape[0], dtype=np.int64)
    ids[order] = np.cumsum(new)
    return ids


def _keys_and_masses(skel: Skeleton, forest: _Forest) -> tuple[np.ndarray, np.ndarray]:
    """Canonical id and exact log-probability of every feature's derivation.

    Bottom-up over the nodes: a leaf is identified by (node, discrete parameter) -- or
    is unique when the parameter is continuous. A call that returned no base feature at
    all (the constant 1) gets the shared id CONST, whatever its derivation: at node v that
    happens with probability e_v = sigma_v(mean_{u in in(v)} e_u); at an input node e is the
    probability that the base feature is the constant 1 (1/c for a category, w = 0; else 0). Any
    other internal call is identified by (node, sorted multiset of its children's ids), with
    probability a_n * n! / prod(mult!) * prod over its n slots of the slot's probability:
    r_v = mean_u e_u for a CONST slot, (1/|in(v)|) * p(child) otherwise.
    """
    R = forest.node.size
    key = np.full(R, -1, dtype=np.int64)
    logp = np.zeros(R)
    leafless = np.zeros(R, dtype=bool)
    e = np.zeros(len(skel.nodes))  # probability that a call at the node returns the constant 1
    next_id = CONST + 1
    for v, node in enumerate(skel.nodes):
        if node.is_input:
            lv = forest.leaves[v]
            if BASE_KERNELS[node.kernel].discrete:
                _, inv = np.unique(lv["index"], return_inverse=True)
                key[lv["req"]] = next_id + inv
                next_id += int(inv.max()) + 1 if inv.size else 0
            else:
                key[lv["req"]] = next_id + np.arange(lv["req"].size)
                next_id += lv["req"].size
            logp[lv["req"]] = _base_log_mass(node)
            if node.kernel == "categorical":  # w = 0: the base feature is the constant 1
                e[v] = 1.0 / node.n_categories
                const = lv["req"][lv["index"] == 0]
                key[const], leafless[const] = CONST, True
            continue
        r_v = e[skel.children_of(v)].mean()
        e[v] = float(ACTIVATIONS[node.activation].dual(np.array([r_v]))[0])
        req = np.flatnonzero(forest.node == v)
        if req.size == 0:
            continue
        row_of = np.full(R, -1, dtype=np.int64)
        row_of[req] = np.arange(req.size)
        has_parent = forest.parent >= 0
        kids = np.flatnonzero(has_parent & (row_of[np.where(has_parent, forest.parent, 0)] >= 0))
        rows = row_of[forest.parent[kids]]
        kid_keys = key[kids]
        order = np.lexsort((kid_keys, rows))
        rows, kid_keys, kids = rows[order], kid_keys[order], kids[order]
        n = forest.degree[req]
        width = int(n.max()) if n.size else 0
        starts = np.concatenate([[0], np.cumsum(n)[:-1]])
        pos = np.arange(rows.size) - starts[rows]
        padded = np.full((req.size, max(width, 1)), -1, dtype=np.int64)
        padded[rows, pos] = kid_keys
        inv = _row_ids(padded)
        key[req] = next_id + inv
        next_id += int(inv.max()) + 1
        # multiplicities of equal child ids within a row: sum over positions of log(rank in its run)
        new_run = np.ones(rows.size, dtype=bool)
        new_run[1:] = (rows[1:] != rows[:-1]) | (kid_keys[1:] != kid_keys[:-1])
        run_start = np.maximum.accumulate(np.where(new_run, np.arange(rows.size), 0)) if rows.size else rows
        log_mult = np.bincount(rows, weights=np.log(np.arange(rows.size) - run_start + 1.0), minlength=req.size)
        with np.errstate(divide="ignore"):
            slot_logp = np.where(leafless[kids], np.log(r_v), logp[kids] - np.log(len(node.children)))
        child_logp = np.bincount(rows, weights=slot_logp, minlength=req.size) if rows.size else np.zeros(req.size)
        logp[req] = ACTIVATIONS[node.activation].log_coefficient(n) + gammaln(n + 1.0) - log_mult + child_logp
        const = np.bincount(rows, weights=~leafless[kids], minlength=req.size) == 0 if rows.size else np.ones(req.size, bool)
        leafless[req] = const
        key[req[const]] = CONST
        with np.errstate(divide="ignore"):
            logp[req[const]] = np.log(e[v])
    return key[forest.root], logp[forest.root]


def _complex_features(skel: Skeleton, forest: _Forest) -> np.ndarray:
    """Whether each feature's product psi can take non-real values (then its real version uses the phase).

    Complex factors of one input node multiply to a single frequency: z^a conj(z)^b = z^(a-b) on a
    circle (|z| = 1), prod_k e^{2 pi i w_k x / c} = e^{2 pi i (sum_k w_k) x / c} for a category. When
    every such product is real (a = b; 2 sum w = 0 mod c, values +-1 on integer codes) and no
    Gaussian factor is present, psi is real and is stored as is: no phase, so no all-zero or
    doubled columns. (Products real only by a coincidence across nodes keep the phase: still
    unbiased, just noisier.)
    """
    out = np.zeros(forest.n_features, dtype=bool)
    F = forest.n_features
    for i, lv in forest.leaves.items():
        node = skel.nodes[i]
        if not _is_complex_base(node) or lv["feature"].size == 0:
            continue
        if node.kernel == "gaussian":
            out[lv["feature"]] = True
        elif node.kernel == "sphere":  # circle: +1 for z, -1 for conj(z)
            net = np.bincount(lv["feature"], weights=np.where(lv["index"] == 0, 1.0, -1.0), minlength=F)
            out |= net != 0
        else:
            # e^{2 pi i n x / c} on integer codes x is real (+-1) iff 2n = 0 mod c
            net = np.bincount(lv["feature"], weights=lv["index"].astype(np.float64), minlength=F)
            out |= np.mod(2 * np.round(net), node.n_categories) != 0
    return out


def _feature_keys(skel: Skeleton, forest: _Forest) -> tuple[np.ndarray, np.ndarray]:
    """Keys and log-probabilities of the real features: the derivation, plus the phase if complex."""
    keys, logp = _keys_and_masses(skel, forest)
    cplx = _complex_features(skel, forest)
    return 2 * keys + (cplx & (forest.phase == 1)), logp + np.where(cplx, -np.log(2.0), 0.0)


def sample_features(skeleton: Skeleton, n_components: int, *, dedup: str = "none", random_state=None,
                    max_draws: int | None = None) -> dict:
    """Draw D features of the skeleton's random feature scheme and their weights.

    Returns a dict with ``forest`` (the kept derivations, features renumbered 0..D-1),
    ``weights`` (w_j: the estimate is sum_j w_j psi_j(x) psi_j(y)), ``mass`` (p_j, exact
    probability of feature j under Algorithm 1; 0 when it has a continuous factor),
    ``n_draws`` (executions of Algorithm 1 used) and ``exhausted`` (True when fewer than
    D distinct features exist; then the weights are the exact p_j and the kernel is exact).
    See the module docstring for the three ``dedup`` modes.
    """
    if dedup not in DEDUP_MODES:
        raise ValueError(f"Unknown dedup mode {dedup!r}; allowed: {', '.join(map(repr, DEDUP_MODES))}.")
    D = _check_positive_int(n_components, "n_components")
    rng = check_random_state(random_state)
    if dedup == "none":
        forest = _sample_forest(skeleton, D, rng)
        return dict(forest=forest, weights=np.full(D, 1.0 / D), mass=None, n_draws=D, exhausted=False)
    cap = int(max_draws) if max_draws is not None else 200 * D + 10_000
    forest = _sample_forest(skeleton, D, rng)
    while True:
        keys, logp = _feature_keys(skeleton, forest)
        uniq, first = np.unique(keys, return_index=True)
        mass_seen = np.exp(logp[first]).sum()
        if uniq.size >= D or forest.n_features >= cap or mass_seen >= 1.0 - 1e-12:
            break
        more = min(cap - forest.n_features, forest.n_features)  # doubling: O(log) rounds
        forest = _Forest.concat(forest, _sample_forest(skeleton, more, rng))
    first = np.sort(first)  # distinct features in order of first appearance
    exhausted = first.size < D and mass_seen >= 1.0 - 1e-12
    chosen = first[:D]
    k = chosen.size
    p = np.exp(logp[chosen])
    if dedup == "counts":
        n_used = int(chosen[-1]) + 1 if k == D else forest.n_features  # draws up to the D-th new one
        _, inv = np.unique(keys[:n_used], return_inverse=True)
        weights = np.bincount(inv)[inv[chosen]] / n_used
    elif exhausted:
        n_used = forest.n_features
        weights = p / p.sum()
    else:
        n_used = int(chosen[-1]) + 1 if k == D else forest.n_features
        before = np.concatenate([[0.0], np.cumsum(p)[:-1]])
        j = np.arange(1, k + 1)
        weights = (np.clip(1.0 - before, 0.0, None) + (k - j) * p) / k
    if k < D:  # fewer distinct features than asked: pad with zero-weight columns, keep the shape
        weights = np.concatenate([weights, np.zeros(D - k)])
        p = np.concatenate([p, np.zeros(D - k)])
    return dict(forest=_select(forest, chosen, D), weights=weights, mass=p, n_draws=n_used, exhausted=bool(exhausted))


def _select(forest: _Forest, chosen: np.ndarray, D: int) -> _Forest:
    """Keep the leaves of the chosen features (internal requests are not needed to evaluate)."""
    new_id = np.full(forest.n_features, -1, dtype=np.int64)
    new_id[chosen] = np.arange(chosen.size)
    leaves = {}
    for i, lv in forest.leaves.items():
        keep = new_id[lv["feature"]] >= 0
        leaves[i] = {k: a[keep] for k, a in lv.items()}
        leaves[i]["feature"] = new_id[leaves[i]["feature"]]
    phase = np.zeros(D, dtype=np.int64)
    phase[:chosen.size] = forest.phase[chosen]
    return _Forest(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64),
                   np.arange(D, dtype=np.int64), leaves, phase)


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
    >>> from rkcore.compositional import CompositionalFeatures
    >>> X = np.random.RandomState(0).randn(5, 8)
    >>> Z = CompositionalFeatures(n_components=64, random_state=0).fit_transform(X)
    >>> Z.shape
    (5, 64)
    """

    _parameter_constraints: dict = {
        "skeleton": [None, StrOptions(set(PRESETS)), Skeleton],
        "n_components": [Interval(Integral, 1, None, closed="left")],
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

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
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

    def transform(self, X):
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


# ============================================================================ studies
def compositional_error_curve(X, skeleton: Skeleton, D_list, trials: int = 5, seed: int = 0,
                              dedup_modes=("none", "unbiased")) -> pd.DataFrame:
    """Gram approximation error of the compositional random features vs D, per de-dup mode.

    Tidy: one row per (dedup, D, trial, metric) with metric in {rel_fro, max_abs, mean_abs}
    (:func:`rkcore.foundations.kernel_errors`) and draws_per_feature (executions of Algorithm 1
    per stored feature). The same seeds are used for every mode and D.
    """
    if not isinstance(skeleton, Skeleton):
        raise ValueError(f"skeleton must be a Skeleton (see rkcore.compositional.PRESETS), got {type(skeleton).__name__}.")
    X = skeleton.check_X(X)
    D_list = [_check_positive_int(D, "each D") for D in D_list]
    trials = _check_positive_int(trials, "trials")
    for mode in dedup_modes:
        if mode not in DEDUP_MODES:
            raise ValueError(f"Unknown dedup mode {mode!r}; allowed: {', '.join(map(repr, DEDUP_MODES))}.")
    K = skeleton.kernel(X)
    rows = []
    for mode in dedup_modes:
        for D in D_list:
            for t in range(trials):
                est = CompositionalFeatures(skeleton, D, dedup=mode, random_state=seed + 7919 * t + D).fit(X)
                errs = kernel_errors(K, est.kernel_estimate(X))
                errs["draws_per_feature"] = est.n_draws_ / D
                rows.extend(dict(dedup=mode, D=D, trial=t, metric=m, value=v) for m, v in errs.items())
    return pd.DataFrame(rows)


def describe_features(estimator: CompositionalFeatures, n: int = 10) -> pd.DataFrame:
    """The first n features of a fitted estimator as readable products of base features."""
    check_is_fitted(estimator)
    skel = estimator.skeleton_
    factors: dict[int, list[str]] = {}
    for i, pos, lv in estimator._leaf_plan:
        node = skel.nodes[i]
        cols = node.columns
        for f, idx in zip(lv["feature"], lv["index"]):
            if f >= n:
                continue
            if node.kernel == "sphere":
                s = (f"sign(x{cols[0]})" if len(cols) == 1 else
                     (f"z[{cols[0]},{cols[1]}]" if idx == 0 else f"z̄[{cols[0]},{cols[1]}]") if len(cols) == 2 else
                     f"√{len(cols)}·x̂{cols[idx]}")
            elif node.kernel == "categorical":
                s = f"exp(2πi·{idx}·x{cols[0]}/{node.n_categories})"
            else:
                s = f"exp(i·w·x[{_format_cols(cols)}])"
            factors.setdefault(int(f), []).append(s)
    rows = []
    for f in range(min(n, estimator.weights_.size)):
        mass = None if estimator.feature_mass_ is None else float(estimator.feature_mass_[f])
        expr = " · ".join(factors.get(f, ["1"]))
        if estimator.complex_[f]:
            expr = f"{'−√2·Im' if estimator._use_imag[f] else '√2·Re'}({expr})"
        rows.append(dict(feature=f, weight=float(estimator.weights_[f]), probability=mass,
                         factors=int(estimator.n_factors_[f]), expression=expr))
    return pd.DataFrame(rows)
