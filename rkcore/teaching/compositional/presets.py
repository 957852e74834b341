"""Ready-made skeletons (shallow, deep, Gaussian, mixed) and the data preparation they expect."""
from __future__ import annotations

import inspect

from dataclasses import dataclass
from typing import Callable

import numpy as np
from sklearn.preprocessing import KBinsDiscretizer, StandardScaler

from ...kernels.exact import check_array
from ...base.limits import nbytes, require_memory
from ...base.validation import check_int, entry_of
from .skeleton import InputNode, InternalNode, Skeleton


# ============================================================================ presets
#: Bytes a skeleton holds per column at least (its index in a group tuple, the int, the group's node share):
#: a lower bound, so that a refused skeleton could not have fit.
_BYTES_PER_COLUMN = 64


def _groups(d: int, size: int) -> list[tuple[int, ...]]:
    require_memory({f"the nodes of {d:,} columns": (d, _BYTES_PER_COLUMN)}, itemsize=1, what="This skeleton",
                   hint="Use fewer columns (d).", largest={"d": lambda k: nbytes((k, _BYTES_PER_COLUMN), itemsize=1)})
    return [tuple(range(s, min(s + size, d))) for s in range(0, d, size)]


#: scikit-learn >= 1.7 takes the quantile method (and warns that its default changes); 1.6, the floor,
#: has no such argument and uses its only method
_QUANTILE_METHOD = ({"quantile_method": "averaged_inverted_cdf"}
                    if "quantile_method" in inspect.signature(KBinsDiscretizer).parameters else {})

def shallow_skeleton(d: int, group_size: int = 2, activation: str = "exponential") -> Skeleton:
    """Sphere kernels on consecutive groups of columns, one internal node (the paper's "shallow").

    With the exponential activation this is exp(mean_g <x_g, y_g>/(|x_g||y_g|) - 1), a
    Gaussian kernel of the group-normalized inputs.

    Parameters
    ----------
    d : int
        Number of columns of X.
    group_size : int, default=2
        Columns per group.
    activation : str, default="exponential"
        Activation of the internal node.

    Returns
    -------
    Skeleton
        The skeleton.
    """
    d = _check_positive_int(d, "d")
    nodes: list[InputNode | InternalNode] = [InputNode(f"s{g}", "sphere", cols) for g, cols in enumerate(_groups(d, _check_positive_int(group_size, "group_size")))]
    nodes.append(InternalNode("out", activation, tuple(n.name for n in nodes)))
    return Skeleton(tuple(nodes), name="shallow")


def deep_skeleton(d: int, group_size: int = 2, window: int = 2, activation: str = "relu",
                  output_activation: str = "exponential") -> Skeleton:
    """Two "convolution" layers of ``activation`` over windows of adjacent nodes, then an output node.

    Inputs are sphere kernels on groups of ``group_size`` columns; layer 1 node i averages
    inputs i..i+window-1, layer 2 does the same over layer 1 (the paper's "deep" setting).

    Parameters
    ----------
    d : int
        Number of columns of X.
    group_size : int, default=2
        Columns per input group.
    window : int, default=2
        Nodes averaged by each layer node.
    activation : str, default="relu"
        Activation of the two layers.
    output_activation : str, default="exponential"
        Activation of the output node.

    Returns
    -------
    Skeleton
        The skeleton.
    """
    d = _check_positive_int(d, "d")
    window = _check_positive_int(window, "window")
    nodes: list[InputNode | InternalNode] = [InputNode(f"s{g}", "sphere", cols) for g, cols in enumerate(_groups(d, _check_positive_int(group_size, "group_size")))]
    layer = [n.name for n in nodes]
    for depth in (1, 2):
        w = min(window, len(layer))
        new = [InternalNode(f"c{depth}_{i}", activation, tuple(layer[i:i + w])) for i in range(len(layer) - w + 1)]
        nodes.extend(new)
        layer = [n.name for n in new]
    nodes.append(InternalNode("out", output_activation, tuple(layer)))
    return Skeleton(tuple(nodes), name="deep")


def gaussian_skeleton(d: int, group_size: int = 4, gamma: float = 0.25, activation: str = "polynomial") -> Skeleton:
    """Gaussian base kernels on groups of columns under one internal node (continuous base features).

    Parameters
    ----------
    d : int
        Number of columns of X.
    group_size : int, default=4
        Columns per input group.
    gamma : float, default=0.25
        Gaussian width.
    activation : str, default="polynomial"
        Activation of the internal node.

    Returns
    -------
    Skeleton
        The skeleton.
    """
    d = _check_positive_int(d, "d")
    nodes: list[InputNode | InternalNode] = [InputNode(f"g{g}", "gaussian", cols, gamma=gamma) for g, cols in enumerate(_groups(d, _check_positive_int(group_size, "group_size")))]
    nodes.append(InternalNode("out", activation, tuple(n.name for n in nodes)))
    return Skeleton(tuple(nodes), name="gaussian")


def mixed_skeleton(d: int, n_categories: int = 4, group_size: int = 2) -> Skeleton:
    """Sphere groups on columns 0..d-2 and a categorical kernel on the last column, ReLU then exp.

    Use :func:`prepare_data` with ``categorical_last=n_categories`` to turn the last
    column into quantile-bin codes 0..c-1.

    Parameters
    ----------
    d : int
        Number of columns of X.
    n_categories : int, default=4
        Categories of the last column.
    group_size : int, default=2
        Columns per sphere group.

    Returns
    -------
    Skeleton
        The skeleton.
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
class Preset:  # numpydoc ignore=PR02
    """A named skeleton of the Compositional kernels page.

    Parameters
    ----------
    key : str
        Its key (see :data:`PRESETS`).
    label : str
        Its name on the page.
    description : str
        One sentence on what it computes.
    build : callable
        ``build(d)`` -> the Skeleton for d columns.
    n_categories : int, optional
        When > 0, the last column is binned into this many codes.
    """
    key: str
    label: str
    description: str
    build: Callable[..., Skeleton]  # build(d), plus n_categories= for presets with a categorical input
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
    """The :class:`Preset` of a key, or a ValueError listing the keys.

    Parameters
    ----------
    key : str
        A key of :data:`PRESETS`.

    Returns
    -------
    Preset
        Its entry.
    """
    return entry_of(PRESETS, key, "skeleton preset")


def prepare_data(X, categorical_last: int | None = None, standardize: bool = True) -> np.ndarray:
    """Standardize the columns (StandardScaler) and optionally bin the last one into codes 0..c-1.

    Binning uses quantiles (KBinsDiscretizer, ordinal encoding), so each category is about
    equally frequent.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The data.
    categorical_last : int, optional
        Bin the last column into this many codes (None: keep it).
    standardize : bool, default=True
        Standardize the columns first.

    Returns
    -------
    numpy.ndarray
        The prepared data.
    """
    X = check_array(X)
    X = X.toarray() if not isinstance(X, np.ndarray) else X.copy()
    if standardize:
        X = StandardScaler().fit_transform(X)
    if categorical_last:
        c = _check_positive_int(categorical_last, "categorical_last")
        binner = KBinsDiscretizer(n_bins=c, encode="ordinal", strategy="quantile", **_QUANTILE_METHOD)
        col = binner.fit_transform(X[:, -1:])[:, 0]
        # np.unique re-codes to 0..k-1 when constant columns collapse bins
        X[:, -1] = np.unique(col, return_inverse=True)[1]
    return X


def preset_skeleton(key: str, X) -> tuple[Skeleton, np.ndarray]:
    """The preset's skeleton for X's width and the prepared data it reads.

    Parameters
    ----------
    key : str
        A key of :data:`PRESETS`.
    X : array-like of shape (n_samples, n_features)
        The data.

    Returns
    -------
    skeleton : Skeleton
        The preset's skeleton.
    X_prepared : numpy.ndarray
        The data it reads (see :func:`prepare_data`).
    """
    preset = get_preset(key)
    X = prepare_data(X, categorical_last=preset.n_categories)
    d = X.shape[1]
    if preset.n_categories:
        skel = preset.build(d, n_categories=int(X[:, -1].max()) + 1)
    else:
        skel = preset.build(d)
    return skel, X


def _check_positive_int(value, name: str) -> int:
    return check_int(value, name)
