"""Base kernels on column groups and the computation skeleton (input and internal nodes, the exact kernel)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.metrics.pairwise import rbf_kernel

from ...kernels.exact import check_array
from ...base.validation import check_int, entry_of
from .activations import ACTIVATIONS, get_activation


# ============================================================================ base kernels
@dataclass(frozen=True)
class BaseKernel:  # numpydoc ignore=PR02
    """A normalized base kernel (k(x, x) = 1) and its random feature scheme (paper, Section 4).

    ``discrete`` says whether its random features take finitely many values of the
    parameter (then identical features can be merged, see the module docstring).

    Parameters
    ----------
    key : str
        Its key (see :data:`BASE_KERNELS`).
    label : str
        Its name on the page.
    latex : str
        The kernel, LaTeX.
    feature_latex : str
        Its random feature, LaTeX.
    discrete : bool
        Whether its random features take finitely many parameter values.
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
    """The :class:`BaseKernel` of a key, or a ValueError listing the keys.

    Parameters
    ----------
    key : str
        A key of :data:`BASE_KERNELS`.

    Returns
    -------
    BaseKernel
        Its entry.
    """
    return entry_of(BASE_KERNELS, key, "base kernel")


def _unit_rows(Xg: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(Xg, axis=1, keepdims=True)
    # zero rows stay zero: their base kernel with anything (themselves included) is 0
    return np.divide(Xg, norms, out=np.zeros_like(Xg), where=norms > 0)


# ============================================================================ skeleton
@dataclass(frozen=True)
class InputNode:  # numpydoc ignore=PR02
    """An input node: a base kernel on the columns ``columns`` of X.

    ``gamma`` is the Gaussian width; ``n_categories`` (c) the number of categories of a
    categorical column, whose values must be the integer codes 0..c-1.

    Parameters
    ----------
    name : str
        The node's name.
    kernel : str
        A key of :data:`BASE_KERNELS`.
    columns : tuple of int
        The columns of X it reads.
    gamma : float, default=1.0
        Gaussian width.
    n_categories : int, optional
        Categories of a categorical column.
    """

    name: str
    kernel: str
    columns: tuple[int, ...]
    gamma: float = 1.0
    n_categories: int | None = None

    def __post_init__(self):
        get_base_kernel(self.kernel)
        raw = np.atleast_1d(np.asarray(self.columns, dtype=object))
        if raw.ndim != 1 or any(isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, np.integer)) for c in raw):
            raise ValueError(f"Input node {self.name!r}: columns must be integer column indices, got {self.columns!r}.")
        cols = tuple(int(c) for c in raw)
        if not cols or min(cols) < 0 or len(set(cols)) != len(cols):
            raise ValueError(f"Input node {self.name!r}: columns must be distinct non-negative indices, got {self.columns!r}.")
        object.__setattr__(self, "columns", cols)
        if self.kernel == "gaussian" and not (np.isfinite(self.gamma) and self.gamma > 0):
            raise ValueError(f"Input node {self.name!r}: gamma must be a positive number, got {self.gamma!r}.")
        if self.kernel == "categorical":
            if len(cols) != 1:
                raise ValueError(f"Input node {self.name!r}: a categorical node reads exactly one column, got {len(cols)}.")
            c = self.n_categories
            check_int(c, f"Input node {self.name!r}: n_categories")

    @property
    def is_input(self) -> bool:
        """True: an input node.

        Returns
        -------
        bool
            Always True.
        """
        return True

    def gram(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """The base kernel between the rows of X and Y on this node's columns.

        Parameters
        ----------
        X : numpy.ndarray of shape (n_X, n_features)
            Left rows.
        Y : numpy.ndarray of shape (n_Y, n_features)
            Right rows.

        Returns
        -------
        numpy.ndarray of shape (n_X, n_Y)
            The Gram matrix.
        """
        Xg, Yg = X[:, self.columns], Y[:, self.columns]
        if self.kernel == "sphere":
            return _unit_rows(Xg) @ _unit_rows(Yg).T
        if self.kernel == "gaussian":
            return rbf_kernel(Xg, Yg, gamma=self.gamma)
        return (Xg[:, 0][:, None] == Yg[:, 0][None, :]).astype(np.float64)

    def label(self) -> str:
        """The node in words, e.g. ``"Sphere on x[0-1]"``.

        Returns
        -------
        str
            The label.
        """
        extra = f", γ={self.gamma:g}" if self.kernel == "gaussian" else (
            f", c={self.n_categories}" if self.kernel == "categorical" else "")
        return f"{BASE_KERNELS[self.kernel].label.split(' (')[0]} on x[{_format_cols(self.columns)}]{extra}"


@dataclass(frozen=True)
class InternalNode:  # numpydoc ignore=PR02
    """An internal node: average of the children's kernels, then the dual activation.

    Parameters
    ----------
    name : str
        The node's name.
    activation : str
        A key of :data:`ACTIVATIONS`.
    children : tuple of str
        Names of the nodes it averages.
    """

    name: str
    activation: str
    children: tuple[str, ...]

    def __post_init__(self):
        get_activation(self.activation)
        children = (self.children,) if isinstance(self.children, str) else tuple(self.children)
        if not children:
            raise ValueError(f"Internal node {self.name!r} has no children; it needs at least one.")
        repeated = sorted({c for c in children if children.count(c) > 1})
        if repeated:
            # the node's kernel is the mean over its children; a repeated child would carry
            # weight (multiplicity / len) there but not in the de-duplicated feature weights
            raise ValueError(
                f"Internal node {self.name!r} lists the child {', '.join(map(repr, repeated))} more than "
                "once; list each child once (a weighted mean of children is not supported)."
            )
        object.__setattr__(self, "children", children)

    @property
    def is_input(self) -> bool:
        """False: an internal node.

        Returns
        -------
        bool
            Always False.
        """
        return False

    def label(self) -> str:
        """The node in words, e.g. ``"ReLU of mean(a, b)"``.

        Returns
        -------
        str
            The label.
        """
        return f"{ACTIVATIONS[self.activation].label} of mean({', '.join(self.children)})"


def _format_cols(cols) -> str:
    cols = list(cols)
    if len(cols) > 2 and cols == list(range(cols[0], cols[-1] + 1)):
        return f"{cols[0]}:{cols[-1] + 1}"
    return ",".join(map(str, cols))


@dataclass(frozen=True)
class Skeleton:  # numpydoc ignore=PR02
    """A computation skeleton: nodes in topological order (children before parents).

    The last node is the output node; every other node must feed some later node, so the
    output is the only node with out-degree zero (paper, Section 5).

    Parameters
    ----------
    nodes : tuple of InputNode or InternalNode
        In topological order; the last is the output.
    name : str, default="skeleton"
        The skeleton's name.
    """

    nodes: tuple
    name: str = "skeleton"
    _index: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

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
            if isinstance(node, InternalNode):  # not node.is_input
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
        """The output node (the last one).

        Returns
        -------
        InputNode or InternalNode
            The last node of the skeleton.
        """
        return self.nodes[-1]

    @property
    def input_nodes(self) -> list[InputNode]:
        """The input nodes, in order.

        Returns
        -------
        list of InputNode
            The input nodes in the order of ``nodes``.
        """
        return [n for n in self.nodes if n.is_input]

    def children_of(self, i: int) -> np.ndarray:
        """Indices of the children of node i.

        Parameters
        ----------
        i : int
            A node's index.

        Returns
        -------
        numpy.ndarray of int
            Its children's indices.
        """
        return np.array([self._index[c] for c in self.nodes[i].children], dtype=np.intp)

    @property
    def n_columns(self) -> int:
        """The number of columns X must have at least.

        Returns
        -------
        int
            1 + the largest column index an input node reads.
        """
        return 1 + max(max(n.columns) for n in self.input_nodes)

    def complexity(self) -> float:
        r"""Expected number of recursive calls of Algorithm 1 (= expected factors + internal visits).

        :math:`C(v) = 1` at inputs, :math:`C(v) = 1 + \hat\sigma_v'(1)\,\mathrm{mean}_{u\in in(v)} C(u)` (paper, eq. 11).

        Returns
        -------
        float
            C(output).
        """
        C = np.ones(len(self.nodes))
        for i, node in enumerate(self.nodes):
            if not node.is_input:
                C[i] = 1.0 + ACTIVATIONS[node.activation].mean_degree * C[self.children_of(i)].mean()
        return float(C[-1])

    def describe(self) -> pd.DataFrame:
        """One row per node: name, type, what it computes.

        Returns
        -------
        pandas.DataFrame
            Columns name, type and what it computes.
        """
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
        """Validate X for this skeleton: dense, enough columns, categorical codes in 0..c-1.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.
        name : str, default="X"
            Its name, for the message.

        Returns
        -------
        numpy.ndarray
            X as a float64 array.
        """
        X = check_array(X, name)
        if not isinstance(X, np.ndarray):
            X = X.toarray()
        if X.shape[1] < self.n_columns:
            raise ValueError(f"{name} has {X.shape[1]} columns but the skeleton reads column {self.n_columns - 1}; "
                             f"it needs at least {self.n_columns}.")
        for node in self.input_nodes:
            if node.kernel == "categorical":
                assert node.n_categories is not None  # a categorical node has its count (checked when built)
                col = X[:, node.columns[0]]
                bad = (col != np.round(col)) | (col < 0) | (col >= node.n_categories)
                if bad.any():
                    raise ValueError(
                        f"Column {node.columns[0]} of {name} feeds the categorical node {node.name!r}: its values must be "
                        f"integer codes 0..{node.n_categories - 1}, found {col[bad][0]!r}.")
        return X

    # ------------------------------------------------------------------ exact kernel
    def kernel(self, X, Y=None) -> np.ndarray:
        r"""The exact compositional kernel :math:`k_{out}(X, Y)` by the recurrence over the nodes.

        Parameters
        ----------
        X : array-like of shape (n_X, n_features)
            Left rows.
        Y : array-like of shape (n_Y, n_features), optional
            Right rows (None: X).

        Returns
        -------
        numpy.ndarray of shape (n_X, n_Y)
            The Gram matrix.
        """
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
        """The recurrence, one line per internal node.

        Returns
        -------
        str
            LaTeX.
        """
        lines = []
        for node in self.nodes:
            if not node.is_input:
                kids = [f"k_{{\\mathrm{{{c}}}}}" for c in node.children]
                inner = " + ".join(kids) if len(kids) <= 4 else f"{kids[0]} + {kids[1]} + \\dots + {kids[-1]}"
                lines.append(f"k_{{\\mathrm{{{node.name}}}}} = \\hat\\sigma_{{\\mathrm{{{node.activation}}}}}"
                             f"\\Big(\\tfrac{{1}}{{{len(node.children)}}}({inner})\\Big)")
        return r" \\ ".join(lines)
