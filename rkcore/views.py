"""Small pure computations behind the dashboard views (no streamlit here).

Each function takes arrays or plain specs and returns arrays or tidy DataFrames, so a
notebook reproduces a dashboard view with the same calls (the pages' "Reproduce in
Python" boxes print them).

Text formats read by the sidebar
--------------------------------
* itemsets: ``"0,1; 2,3; 1,2,4"`` -- itemsets separated by ``;`` (or new lines),
  indices by ``,`` or spaces; ``{}`` or ``()`` denotes the empty itemset.
* fields: ``"0-4 | 5-9"`` -- fields separated by ``|`` (or ``;``), each a list of
  indices and inclusive ranges ``a-b`` separated by ``,`` or spaces.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .itemsets import ItemsetFamily
from .limits import CostEstimate, format_bytes, nbytes, require_memory  # noqa: F401 - re-exported for the pages

#: Heatmaps send at most this many cells per side to the browser (block-averaged beyond).
MAX_HEATMAP_SIDE = 500


# ---------------------------------------------------------------------------- text formats
_INDEX = re.compile(r"^\d+$")
_RANGE = re.compile(r"^(\d+)\s*-\s*(\d+)$")

#: Typed itemsets / fields: longest text, most itemsets, largest feature index (when d is not given;
#: uploads have at most rkcore.datasets.MAX_FEATURES columns). Checked before anything is built.
MAX_TEXT_LENGTH = 100_000
MAX_ITEMSETS = 10_000
MAX_INDEX = 99_999
_MAX_DIGITS = 12  # longer digit strings are refused before int() (Python refuses > 4300 digits anyway)


def _index_limit(d: int | None) -> tuple[int, str]:
    if d is None:
        return MAX_INDEX, f"the largest allowed index is {MAX_INDEX:,}"
    return int(d) - 1, f"the data has d={int(d)} features, so indices go from 0 to {int(d) - 1}"


def _check_text(text, what: str, example: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"No {what} given: write them like {example}.")
    if len(text) > MAX_TEXT_LENGTH:
        raise ValueError(f"The {what} text is {len(text):,} characters long, more than the {MAX_TEXT_LENGTH:,} "
                         f"allowed; write them like {example}.")
    return text


def _index(token: str, piece: str, limit: int, limit_text: str) -> int:
    if len(token) > _MAX_DIGITS or int(token) > limit:
        shown = token if len(token) <= 20 else token[:20] + "…"
        raise ValueError(f"The index {shown} in {piece[:80]!r} is out of range: {limit_text}.")
    return int(token)


def parse_itemsets(text: str, d: int | None = None, *, max_itemsets: int = MAX_ITEMSETS) -> tuple[tuple[int, ...], ...]:
    """Read ``"0,1; 2,3; 1,2,4"`` into ((0, 1), (2, 3), (1, 2, 4)).

    Raises ValueError naming the piece that is not a list of non-negative integers, an
    index above d - 1 (or :data:`MAX_INDEX` when d is None), more than ``max_itemsets``
    itemsets, or a text longer than :data:`MAX_TEXT_LENGTH`. Duplicate checks are left to
    :meth:`ItemsetFamily.custom`.
    """
    example = '"0,1; 2,3; 1,2,4" (itemsets separated by ";")'
    text = _check_text(text, "itemsets", example)
    limit, limit_text = _index_limit(d)
    pieces = [p.strip() for p in re.split(r"[;\n]", text) if p.strip()]
    if len(pieces) > max_itemsets:
        raise ValueError(f"{len(pieces):,} itemsets were given; at most {max_itemsets:,} are allowed. "
                         "Use a named family (ANOVA, up-to-m, all subsets) for large families.")
    out = []
    for piece in pieces:
        if piece in ("{}", "()", "[]", "∅"):
            out.append(())
            continue
        tokens = [t for t in re.split(r"[,\s]+", piece.strip("{}()[] ")) if t]
        bad = [t for t in tokens if not _INDEX.match(t)]
        if bad or not tokens:
            raise ValueError(
                f"Could not read the itemset {piece[:80]!r}: {', '.join(repr(t[:20]) for t in bad[:5]) or 'it is empty'} "
                "is not a feature index. Write itemsets like \"0,1; 2,3; 1,2,4\" "
                "(non-negative integers separated by commas, itemsets separated by semicolons).")
        out.append(tuple(_index(t, piece, limit, limit_text) for t in tokens))
    if not out:
        raise ValueError(f"No itemsets given: write them like {example}.")
    return tuple(out)


def parse_fields(text: str, d: int | None = None) -> tuple[tuple[int, ...], ...]:
    """Read ``"0-4 | 5-9"`` into ((0, 1, 2, 3, 4), (5, 6, 7, 8, 9)).

    Raises ValueError naming the piece that is neither an index nor a range ``a-b``, an
    index above d - 1 (or :data:`MAX_INDEX` when d is None), or fields that list more
    indices in total than there are features (so they would overlap). Ranges are checked
    arithmetically before any is expanded, so "0-30000000" costs nothing.
    """
    example = '"0-4 | 5-9" (fields separated by "|")'
    text = _check_text(text, "fields", example)
    limit, limit_text = _index_limit(d)
    parsed: list[list[tuple[int, int]]] = []  # per field, inclusive (start, stop) runs
    total = 0
    for piece in re.split(r"[|;\n]", text):
        piece = piece.strip()
        if not piece:
            continue
        runs: list[tuple[int, int]] = []
        for token in [t for t in re.split(r"[,\s]+", re.sub(r"\s*-\s*", "-", piece)) if t]:
            if _INDEX.match(token):
                j = _index(token, piece, limit, limit_text)
                runs.append((j, j))
                continue
            match = _RANGE.match(token)
            if not match:
                raise ValueError(
                    f"Could not read {token[:40]!r} in the field {piece[:80]!r}: use indices and inclusive ranges "
                    "a-b with a <= b, e.g. \"0-4 | 5-9\" or \"0,2,4 | 1,3\".")
            a, b = (_index(g, piece, limit, limit_text) for g in match.groups())
            if a > b:
                raise ValueError(f"The range {token!r} in the field {piece[:80]!r} is empty: write a-b with a <= b, "
                                 "e.g. \"0-4 | 5-9\".")
            runs.append((a, b))
            total += b - a + 1
            if total > limit + 1:
                raise ValueError(f"The fields list {total:,} or more indices, but {limit_text}; fields must not "
                                 "overlap, so they cannot list more indices than there are features.")
        parsed.append(runs)
    if not parsed:
        raise ValueError(f"No fields given: write them like {example}.")
    return tuple(tuple(j for a, b in runs for j in range(a, b + 1)) for runs in parsed)


def format_itemsets(itemsets) -> str:
    """The inverse of :func:`parse_itemsets`."""
    return "; ".join(",".join(map(str, v)) if v else "{}" for v in itemsets)


def format_fields(fields) -> str:
    """A compact text for fields, using ranges for runs: ((0,1,2),(3,4)) -> "0-2 | 3-4"."""
    parts = []
    for f in fields:
        f = sorted(f)
        runs, start = [], None
        for a, b in zip(f, f[1:] + [None]):
            start = a if start is None else start
            if b != a + 1:
                runs.append(str(start) if start == a else f"{start}-{a}")
                start = None
        parts.append(",".join(runs))
    return " | ".join(parts)


# ---------------------------------------------------------------------------- data
def subsample_rows(X, y=None, n: int | None = None, random_state: int = 0):
    """At most n rows of (X, y): a seeded sorted subsample, or everything when n >= rows."""
    n_total = X.shape[0]
    if n is None or n >= n_total:
        return X, y
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n (the number of points) must be a positive integer, got {n!r}.")
    rows = np.sort(np.random.RandomState(random_state).choice(n_total, size=int(n), replace=False))
    return X[rows], (None if y is None else np.asarray(y)[rows])


def dense(X) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)


# ---------------------------------------------------------------------------- memory / cost
# nbytes, format_bytes and CostEstimate live in rkcore.limits (imported above, re-exported here).
def gram_view_bytes(n: int, D: int, d: int) -> int:
    """Peak memory of :func:`gram_pair` plus the view: X, Z, and ~4 n x n matrices
    (exact, approximate, difference, and one temporary of the power-sum recursion)."""
    return nbytes((n, d), (n, D), *[(n, n)] * 4)


# ---------------------------------------------------------------------------- Gram matrices
def gram_pair(X, spec, map_key: str = "rk", n_components: int = 256, distribution: str | None = None,
              random_state: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(K, K_hat): the exact Gram matrix of ``spec`` and its random-feature estimate Z Z^T.

    ``spec`` is a :class:`rkcore.registry.KernelSpec`; the map is built by
    :func:`rkcore.registry.make_map` from (map_key, spec, D, distribution, seed).
    """
    from .registry import make_map

    n, d = X.shape
    require_memory({"X": (n, d), "Z": (n, n_components), "K, K_hat and temporaries": (4, n, n)}, what="gram_pair",
                   hint=f"Use fewer points (n = {n:,}) or a smaller D.")
    K = spec.exact(X)
    Z = make_map(map_key, spec, n_components, distribution=distribution, random_state=random_state).fit_transform(X)
    Z = dense(Z)
    return K, Z @ Z.T


def gram_error_stats(K: np.ndarray, K_hat: np.ndarray) -> pd.DataFrame:
    """Error of K_hat against K: mean |E|, max |E|, RMS, and ||E||_F / ||K||_F, where E = K_hat - K.

    Tidy: one row per metric, columns ``metric``, ``value``, ``definition``.
    """
    K = np.asarray(K, dtype=np.float64)
    E = np.asarray(K_hat, dtype=np.float64) - K
    absE = np.abs(E)
    norm_K = np.linalg.norm(K)
    rows = [
        ("mean absolute error", float(absE.mean()), "mean_ij |K̂_ij − K_ij|"),
        ("max absolute error", float(absE.max()), "max_ij |K̂_ij − K_ij|"),
        ("RMS error", float(np.sqrt(np.mean(E * E))), "sqrt(mean_ij (K̂_ij − K_ij)²)"),
        ("relative Frobenius error", float(np.linalg.norm(E) / norm_K) if norm_K > 0 else float("nan"),
         "‖K̂ − K‖_F / ‖K‖_F"),
    ]
    return pd.DataFrame(rows, columns=["metric", "value", "definition"])


def gram_pairs(K: np.ndarray, K_hat: np.ndarray, max_points: int = 5000, random_state: int = 0) -> pd.DataFrame:
    """Entries (i <= j) of both matrices as a tidy table: i, j, exact, approx, error.

    Gram matrices are symmetric, so the upper triangle (diagonal included) carries
    everything; beyond ``max_points`` entries a seeded uniform subsample is returned.
    """
    n = K.shape[0]
    i, j = np.triu_indices(n)
    if i.size > max_points:
        keep = np.sort(np.random.RandomState(random_state).choice(i.size, size=max_points, replace=False))
        i, j = i[keep], j[keep]
    exact, approx = K[i, j], K_hat[i, j]
    return pd.DataFrame({"i": i, "j": j, "exact": exact, "approx": approx, "error": approx - exact})


def block_average(M: np.ndarray, max_side: int = MAX_HEATMAP_SIDE) -> tuple[np.ndarray, int]:
    """Average M over b x b blocks so that neither side exceeds ``max_side``; returns (M_small, b).

    b = ceil(max(n_rows, n_cols) / max_side); the last block of a side may be smaller
    (it is averaged over the cells it has). b = 1 returns M itself.
    """
    M = np.asarray(M, dtype=np.float64)
    b = max(1, math.ceil(max(M.shape) / max_side))
    if b == 1:
        return M, 1
    r_edges, c_edges = np.arange(0, M.shape[0], b), np.arange(0, M.shape[1], b)
    sums = np.add.reduceat(np.add.reduceat(M, r_edges, axis=0), c_edges, axis=1)
    r_sizes = np.diff(np.append(r_edges, M.shape[0]))
    c_sizes = np.diff(np.append(c_edges, M.shape[1]))
    return sums / np.outer(r_sizes, c_sizes), b


def gram_long(K: np.ndarray, K_hat: np.ndarray) -> pd.DataFrame:
    """Both matrices as one tidy table (i, j, exact, approx, difference), one row per entry."""
    n, m = K.shape
    i, j = np.divmod(np.arange(n * m), m)
    return pd.DataFrame({"i": i, "j": j, "exact": K.ravel(), "approx": K_hat.ravel(),
                         "difference": (K_hat - K).ravel()})


# ---------------------------------------------------------------------------- itemset families
def family_counts(family: ItemsetFamily) -> pd.DataFrame:
    """Itemsets per size: columns ``size``, ``count`` (float; inf beyond ~1.8e308),
    ``log10_count`` (always finite) and ``count_text`` (exact up to 2^EXACT_COUNT_BITS, else "≈ 1.23 × 10^456").

    Works for any d: the counts come from :meth:`ItemsetFamily.log2_counts_by_size`, and exact
    integers are used only where :meth:`ItemsetFamily.counts_by_size` has them.
    """
    from .itemsets import format_count

    log2 = family.log2_counts_by_size()
    sizes = np.fromiter(log2.keys(), dtype=np.int64, count=len(log2))
    log2_counts = np.fromiter(log2.values(), dtype=np.float64, count=len(log2))
    exact = family.counts_by_size()  # ints where cheap (up to 2^EXACT_COUNT_BITS), inf beyond
    with np.errstate(over="ignore"):
        count = np.exp2(log2_counts)
    small = [i for i, k in enumerate(sizes.tolist()) if exact[k] != math.inf and log2_counts[i] < 1000]
    count[small] = [float(exact[int(sizes[i])]) for i in small]  # exact where a float holds it
    return pd.DataFrame({
        "size": sizes,
        "count": count,
        "log10_count": log2_counts * np.log10(2.0),
        "count_text": [format_count(exact[k], l2, exact_digits=1300) for k, l2 in zip(sizes.tolist(), log2_counts.tolist())],
    })


def itemset_label(itemset, feature_names=None) -> str:
    """"x0·x3" (or the feature names) for an itemset; "∅" for the empty set."""
    if not itemset:
        return "∅"
    if feature_names is None:
        return "·".join(f"x{j}" for j in itemset)
    return "·".join(str(feature_names[j]) for j in itemset)


def family_listing(family: ItemsetFamily, limit: int = 200, feature_names=None) -> pd.DataFrame:
    """The first ``limit`` itemsets of the family: columns ``size``, ``itemset`` (indices), ``features``."""
    if family.n_itemsets > 200_000:  # enumerate() refuses beyond its limit; list only the head
        sets = []
        for size in family.counts_by_size():
            if len(sets) >= limit:
                break
            sets.extend(_head_of_size(family, size, limit - len(sets)))
    else:
        sets = family.enumerate()[:limit]
    return pd.DataFrame({
        "size": [len(v) for v in sets],
        "itemset": ["{" + ", ".join(map(str, v)) + "}" for v in sets],
        "features": [itemset_label(v, feature_names) for v in sets],
    })


def _head_of_size(family: ItemsetFamily, size: int, limit: int) -> list[tuple[int, ...]]:
    from itertools import combinations, islice, product
    if family.kind == "cross_fields":
        gen = (tuple(sorted(v)) for chosen in combinations(family.fields, size) for v in product(*chosen))
    else:
        gen = combinations(range(family.d), size)
    return list(islice(gen, limit))


def restrict_family(family: ItemsetFamily, d_new: int) -> ItemsetFamily:
    """The itemsets of ``family`` that use only features 0..d_new-1, as a family over d_new features."""
    if d_new >= family.d:
        return family
    if family.kind in ("anova", "up_to"):
        return getattr(ItemsetFamily, family.kind)(d_new, min(family.degree, d_new))
    if family.kind in ("all_subsets", "dot"):
        return family.with_d(d_new)
    if family.kind == "cross_fields":
        fields = [tuple(j for j in f if j < d_new) for f in family.fields]
        fields = [f for f in fields if f]
        if len(fields) < max(2, family.degree):
            raise ValueError(
                f"Restricted to the first {d_new} features, only {len(fields)} field(s) remain, "
                f"fewer than the itemset size m={family.degree}.")
        return ItemsetFamily.cross_fields(fields, family.degree, d_new)
    kept = [v for v in family.itemsets if all(j < d_new for j in v)]
    if not kept:
        raise ValueError(f"No itemset of the family uses only the first {d_new} features.")
    return ItemsetFamily.custom(d_new, kept)


def explicit_view_family(family: ItemsetFamily, max_itemsets: int = 4096, d_cap: int | None = None) -> ItemsetFamily:
    """The family restricted to the first d' <= d features so that phi_S fits in ``max_itemsets`` columns.

    d' is the largest value <= min(d, d_cap) whose restricted family is small enough;
    returns the family itself when it already fits (and d <= d_cap).
    """
    d_max = family.d if d_cap is None else min(family.d, d_cap)
    if d_max == family.d and family.n_itemsets <= max_itemsets:
        return family
    for d_new in range(d_max, 0, -1):
        try:
            sub = restrict_family(family, d_new)
        except ValueError:
            continue
        if sub.n_itemsets <= max_itemsets:
            return sub
    raise ValueError(f"No restriction of the family {family.describe()} to its first features has "
                     f"at most {max_itemsets} itemsets.")


def explicit_feature_table(X, family: ItemsetFamily, rows: int = 5, max_columns: int = 16,
                           feature_names=None) -> pd.DataFrame:
    """phi_S(x) = (prod_{j in V} x_j)_{V in S} for the first ``rows`` points, first ``max_columns`` itemsets.

    Columns are named by :func:`itemset_label`; the index is the row number of X.
    X must have exactly ``family.d`` columns (slice it first for a restricted family).
    """
    from .kernels import explicit_features

    X_rows = dense(X[:rows])
    itemsets = family.enumerate()[:max_columns]
    # the first columns of phi_S are phi of the sub-family made of the first itemsets
    phi = explicit_features(X_rows, ItemsetFamily.custom(family.d, itemsets))
    return pd.DataFrame(phi, columns=[itemset_label(v, feature_names) for v in itemsets],
                        index=pd.RangeIndex(len(X_rows), name="point"))


def kernel_check(X, family: ItemsetFamily, n_pairs: int = 6, random_state: int = 0) -> pd.DataFrame:
    """K_S(x_i, x_j) from the kernel formula next to <phi_S(x_i), phi_S(x_j)> from the explicit map.

    Columns: i, j, kernel, inner_product, difference. The pairs are seeded and include
    one diagonal pair (i = j).
    """
    from .kernels import explicit_features, itemset_kernel

    Xd = dense(X)
    n = Xd.shape[0]
    rng = np.random.RandomState(random_state)
    i = rng.randint(0, n, size=n_pairs)
    j = rng.randint(0, n, size=n_pairs)
    j[0] = i[0]
    K = itemset_kernel(Xd[i], Xd[j], family=family).diagonal()  # K(x_i[k], x_j[k]) for each pair k
    phi_i, phi_j = explicit_features(Xd[i], family), explicit_features(Xd[j], family)
    inner = np.einsum("kf,kf->k", phi_i, phi_j)
    return pd.DataFrame({"i": i, "j": j, "kernel": K, "inner_product": inner, "difference": inner - K})
