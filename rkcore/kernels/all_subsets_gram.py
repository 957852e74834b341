"""The exact all-subsets Gram prod_j (1 + x_j y_j) under the accuracy contract: level tables,
grouped GEMMs of subset products, sparse triples, extended precision where float64 cannot certify."""
from __future__ import annotations

from typing import cast

import numpy as np
import scipy.sparse as sp

from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

from .blas_blocks import _tiles, gemm_into, mirror_upper_triangle, row_levels
from .numerics import CONTRACT_RTOL, UNIT_ROUNDOFF
from ..base.annotations import is_sparse
from ..base.limits import block_bytes

#: Columns per group in the grouped-GEMM all-subsets Gram (inner dimension 2**g per group).
GRAM_GROUP = 4


#: Bytes of one row block of the exact Gram computations (the one scratch array); lowered to scikit-learn's
#: working_memory when that is smaller (:func:`rkcore.base.limits.block_bytes`).
GRAM_BLOCK_BYTES = 4 * 2**20


def _subset_products(X: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """phi_G(x) for the column group G: the 2^|G| products prod_{j in V} x_j over V subset of G."""
    F = np.ones((X.shape[0], 1), dtype=X.dtype)
    for j in cols:
        F = np.hstack([F, F * X[:, j, None]])
    return F


#: Largest table of the level all-subsets Gram (levels of X x levels of Y x counts).
LEVEL_TABLE_SIZE = 2**16


def _level_products(X, Y, out: np.ndarray) -> bool:
    """The all-subsets Gram of rows whose non-zeros share one value per row (:func:`row_levels`)
    into ``out``, or False (nothing written) when they do not or the table would be too big.

    prod_j (1 + x_ij y_kj) = (1 + a_i b_k)^c_ik over the c_ik shared non-zeros: with few distinct
    levels (one-hot rows L1-normalized: one level per row length) every value is an entry of the
    table T[p, q, c] = (1 + A_p B_q)^c, and one float32 GEMM of the non-zero patterns augmented
    by two columns gives each pair's flat index (p n_B + q)(C + 1) + c_ik (integers below 2^24:
    exact). T comes from np.power in extended precision where numpy has it (the rounding of
    1 + A_p B_q and the power's add about (c + 2) u_e relative, then one float64 rounding: inside
    the accuracy contract for any c below millions); with float64 only, c + 2 roundings, used
    while :func:`_products_within_contract` allows. Values that overflow float64 are inf in T,
    where the caller's log-space repair takes over."""
    a, b = row_levels(X), row_levels(Y)
    if a is None or b is None:
        return False
    A, ia = np.unique(a, return_inverse=True)
    B, ib = np.unique(b, return_inverse=True)
    nnz_x = np.diff(sp.csr_matrix(X).indptr) if is_sparse(X) else np.count_nonzero(X, axis=1)
    nnz_y = np.diff(sp.csr_matrix(Y).indptr) if is_sparse(Y) else np.count_nonzero(Y, axis=1)
    C = int(min(nnz_x.max(initial=0), nnz_y.max(initial=0)))
    size = len(A) * len(B) * (C + 1)
    if size > LEVEL_TABLE_SIZE:
        return False
    dt = out.dtype
    # (1 + A_p B_q)^c carries c + 2 roundings in float64 (1 + A B, then c through the power):
    # in extended precision where numpy has it, else only while that is within the contract.
    wide = EXTENDED if EXTENDED is not None else np.float64
    if wide is np.float64 and not _products_within_contract(C + 2, dt):
        return False
    with np.errstate(over="ignore"):
        base = 1.0 + np.multiply.outer(A.astype(wide), B.astype(wide))
        T = np.power(base[:, :, None], np.arange(C + 1)).astype(dt).ravel()
    d = X.shape[1]
    if is_sparse(X):
        # the pattern from the float64 values: cast to float32 first, 1e-200 would be a zero
        Xc = sp.csr_matrix(X)
        mask = sp.csr_matrix(((Xc.data != 0).astype(np.float32), Xc.indices, Xc.indptr), shape=Xc.shape)
        extra = np.column_stack([ia * (len(B) * (C + 1)), np.ones(len(ia))]).astype(np.float32)
        XA = sp.hstack([mask, sp.csr_matrix(extra)], format="csr")
    else:
        XA = np.empty((X.shape[0], d + 2), dtype=np.float32)
        XA[:, :d] = X != 0
        XA[:, d] = ia * (len(B) * (C + 1))
        XA[:, d + 1] = 1.0
    YAT = np.empty((d + 2, Y.shape[0]), dtype=np.float32)
    YAT[:d] = (Y.toarray() if is_sparse(Y) else Y).T != 0
    YAT[d] = 1.0
    YAT[d + 1] = ib * (C + 1)
    n, m = out.shape
    rows_per_block = max(1, block_bytes(GRAM_BLOCK_BYTES) // (4 * m))
    index32 = np.empty((min(rows_per_block, n), m), dtype=np.float32)
    index = np.empty((min(rows_per_block, n), m), dtype=np.int32)
    for rows in _tiles(n, rows_per_block):
        k = rows.stop - rows.start
        gemm_into(1.0, XA[rows], YAT, 0.0, index32[:k])
        index[:k] = index32[:k]
        np.take(T, index[:k], out=out[rows])
    return True


def all_subsets_gram(X, Y, out: np.ndarray, symmetric: bool = False) -> np.ndarray:
    """``out[i, k] = prod_j (1 + X[i, j] Y[k, j])``, the exact all-subsets Gram, in place.

    Peak extra memory: one GRAM_BLOCK_BYTES block plus O((n + m) d) for the per-group subset
    products (dense inputs are O(n d), the output O(n m)).

    Columns where every product x_j y_j is >= 0 (e.g. non-negative data) are grouped by
    GRAM_GROUP and each group's factor prod_{j in G}(1 + x_j y_j) = <phi_G(x), phi_G(y)> is
    one small GEMM: a sum of non-negative terms, so its relative error is at most
    (2^g + g) eps, as good as the direct product. Columns with mixed-sign products (where
    that sum could cancel) are multiplied directly, column by column. Columns that are zero
    in X or in Y contribute the factor 1 and are skipped.

    ``symmetric`` (Y is X): the sparse path computes the upper triangle and mirrors it.

    Sparse data (CSR, or dense with many zeros; :func:`_sparse_if_cheaper` decides from the
    count of shared non-zeros) takes :func:`_sparse_products` instead: only the factors with
    x_j y_j != 0, multiplied one by one (the direct product, in increasing j). Where the
    roundings of float64 could exceed the accuracy contract (:func:`_products_within_contract`:
    very many factors), the products run in extended precision (:func:`_extended_products`).

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of shape (n, d)
        Validated rows, dense or CSR.
    Y : ndarray or scipy.sparse.csr_matrix of shape (m, d)
        Validated rows, dense or CSR (Y is X for K(X, X)).
    out : ndarray of shape (n, m), float32 or float64, C-contiguous
        Written in place; its dtype is the precision of the computation.
    symmetric : bool, default=False
        Y is X: the sparse path computes the upper triangle and mirrors it.

    Returns
    -------
    ndarray of shape (n, m)
        ``out`` itself. Finite values meet the accuracy contract of :mod:`rkcore.kernels.numerics`
        (relative error at most CONTRACT_RTOL of prod_j (1 + |x_j y_j|)); values that overflow
        (or inf * 0 on the way) are not finite: the caller recomputes them in log space
        (:func:`rkcore.kernels.stable.product_one_plus`).
    """
    dt = out.dtype
    if _level_products(X, Y, out):
        return out
    Xs, Yc = _sparse_if_cheaper(X, Y)
    if Xs is not None:
        # 3 roundings per shared non-zero (x y, 1 + x y, the product): within the contract up to
        # ~3,000 shared non-zeros per pair (bounded by the smaller of the longest rows).
        shared = min(_max_row_nnz(Xs), int(np.bincount(Yc.indices, minlength=Yc.shape[0]).max(initial=0)))
        if not _products_within_contract(3 * shared, dt):
            return _extended_products(Xs, Yc.tocsr(), out)
        _sparse_products(Xs, Yc, out, symmetric)
        return out
    Xd = np.asarray(X.toarray() if is_sparse(X) else X, dtype=dt)
    Yd = np.asarray(Y.toarray() if is_sparse(Y) else Y, dtype=dt)
    x_lo, x_hi, y_lo, y_hi = Xd.min(axis=0), Xd.max(axis=0), Yd.min(axis=0), Yd.max(axis=0)
    x_zero, y_zero = (x_lo == 0) & (x_hi == 0), (y_lo == 0) & (y_hi == 0)
    live = ~(x_zero | y_zero)
    same_sign = ((x_lo >= 0) & (y_lo >= 0)) | ((x_hi <= 0) & (y_hi <= 0))
    grouped = np.flatnonzero(live & same_sign)
    direct = np.flatnonzero(live & ~same_sign)
    groups = [grouped[i:i + GRAM_GROUP] for i in range(0, len(grouped), GRAM_GROUP)]
    if not _products_within_contract(GROUP_ROUNDINGS * len(groups) + 3 * len(direct), dt):
        live_cols = np.flatnonzero(live)
        return _extended_products(Xd[:, live_cols], Yd[:, live_cols], out)
    PhiX = [_subset_products(Xd, g) for g in groups]
    PhiY_T = [np.ascontiguousarray(_subset_products(Yd, g).T) for g in groups]
    n, m_ = out.shape
    # Row blocks over all columns: a few large BLAS calls (one per group and block) and the
    # element-wise products on a block that stays in the shared L3 cache.
    rows_per_block = max(1, block_bytes(GRAM_BLOCK_BYTES) // (dt.itemsize * m_))
    scratch = np.empty((min(rows_per_block, n), m_), dtype=dt)
    with threadpool_limits(1, user_api="blas"):
        _grouped_products(Xd, Yd, PhiX, PhiY_T, direct, rows_per_block, scratch, out)
    return out


#: Roundings one group factor of the grouped path carries (relative error at most gamma_k,
#: every term non-negative): a phi entry is a product of up to g factors (g - 1 roundings), a
#: term of the group's dot product is two of them multiplied (2g - 1), the 2^g terms are summed
#: (2^g - 1 more), and the factor is multiplied into the running product (1): 2^g + 2g - 1.
GROUP_ROUNDINGS = 2**GRAM_GROUP + 2 * GRAM_GROUP - 1


#: numpy's long double where it is wider than float64 (x86-64: 64-bit significand; aarch64
#: Linux: quad precision), else None (e.g. Windows and macOS on ARM, where it is float64).
EXTENDED = np.longdouble if np.finfo(np.longdouble).eps < 2.0**-60 else None


def _products_within_contract(roundings: int, dtype) -> bool:
    """Whether a product carrying ``roundings`` roundings (each a relative error of at most the
    unit roundoff u) is within the accuracy contract: gamma_k = k u / (1 - k u) <= 1e-12 times
    the contract scale prod_j (1 + |x_j y_j|), which bounds |value| and every partial product.
    float32 outputs are held to the float32 rounding of the same computation (always true)."""
    if np.dtype(dtype) != np.float64:
        return True
    u = UNIT_ROUNDOFF
    k = roundings * u
    return k < 1 and k / (1 - k) <= CONTRACT_RTOL


def grouped_gram_within_contract(n_columns, dtype="float64") -> bool:
    """Whether the grouped GEMMs of :func:`all_subsets_gram` keep the accuracy contract over ``n_columns``
    live same-sign columns (dense data; none multiplied directly); beyond that it falls back to extended
    precision products, one column at a time. For float64 that is up to 1,564 columns.

    Parameters
    ----------
    n_columns : int
        Columns grouped by GRAM_GROUP.
    dtype : str or numpy.dtype, default="float64"
        The output's dtype (float32 outputs always pass).

    Returns
    -------
    bool
        True when the grouped path is taken.
    """
    return _products_within_contract(GROUP_ROUNDINGS * -(-n_columns // GRAM_GROUP), dtype)


def _max_row_nnz(A: sp.csr_matrix) -> int:
    return int(np.diff(A.indptr).max(initial=0))


def _extended_products(X, Y, out: np.ndarray) -> np.ndarray:
    """``out[i, k] = prod_j (1 + X[i, j] Y[k, j])`` in numpy's extended precision: the path for
    pairs sharing more non-zeros than float64 products can carry within the contract (about
    1,500 columns on the grouped path, 3,000 shared non-zeros on the sparse one).

    Every factor and product is rounded to the extended unit roundoff u_e (2^-64 on x86-64),
    so the relative error against prod_j (1 + |x_j y_j|) is at most u + 3 d u_e (1 + 3 d u_e),
    u from the final rounding to float64: within 1e-12 up to d ~ 6 million shared columns,
    refused beyond. The exponent range (up to 1e4932) leaves no intermediate overflow: inf
    only where the exact value exceeds float64. Row blocks of ``out`` times column chunks:
    the temporaries are a few blocks of GRAM_BLOCK_BYTES. Where long double is float64,
    a clear error instead of a number outside the contract."""
    u = UNIT_ROUNDOFF
    n, m = out.shape
    d = X.shape[1]
    if EXTENDED is None:
        raise ValueError(
            f"This all-subsets Gram has pairs sharing up to {d:,} non-zero columns: float64 products "
            "cannot be certified to the accuracy contract (1e-12) there, and numpy's long double on "
            "this platform is no wider than float64. Use fewer columns, or run on x86-64 or aarch64 Linux.")
    u_e = float(np.finfo(EXTENDED).eps) / 2
    if u + 3 * d * u_e * (1 + 3 * d * u_e) > CONTRACT_RTOL:
        raise ValueError(f"An all-subsets Gram over {d:,} shared columns is beyond the accuracy "
                         "contract even in extended precision; use fewer columns.")
    ext_bytes = np.dtype(EXTENDED).itemsize
    rows_per_block = max(1, block_bytes(GRAM_BLOCK_BYTES) // (ext_bytes * max(m, d)))
    cols_per_chunk = max(1, block_bytes(GRAM_BLOCK_BYTES) // (ext_bytes * max(m, 1)))
    H = np.empty((min(rows_per_block, n), m), dtype=EXTENDED)
    S = np.empty_like(H)
    for rows in _tiles(n, rows_per_block):
        k = rows.stop - rows.start
        h, s = H[:k], S[:k]
        h.fill(1.0)
        Xb = np.asarray(cast("sp.csr_matrix", X)[rows].toarray() if is_sparse(X) else X[rows], dtype=EXTENDED)  # canonical CSR here: the engines' inputs pass canonical_csr
        for chunk in _tiles(d, cols_per_chunk):
            used = chunk.start + np.flatnonzero(Xb[:, chunk].any(axis=0))
            if not len(used):
                continue
            Yc = np.asarray(cast("sp.csr_matrix", Y)[:, used].toarray() if is_sparse(Y) else Y[:, used],  # canonical CSR here: the engines' inputs pass canonical_csr
                            dtype=EXTENDED)
            for t, j in enumerate(used):
                np.multiply.outer(Xb[:, j], Yc[:, t], out=s)
                s += 1.0
                h *= s
        with np.errstate(over="ignore"):
            out[rows] = h
    return out


def _grouped_products(Xd, Yd, PhiX, PhiY_T, direct, rows_per_block, scratch, out) -> None:
    # The group GEMMs have inner dimension 2^g = 16: memory-bound, so BLAS threads buy little,
    # and on a loaded machine each call paid ~8x for waking them (measured: 80 ms vs 11 ms per
    # (262 x 16) @ (16 x 2000) product at load 20 on 2 cores). Hence one BLAS thread here.
    n = out.shape[0]
    for rows in _tiles(n, rows_per_block):
        o, s = out[rows], scratch[: rows.stop - rows.start]
        if not PhiX:
            o.fill(1.0)
        for g, (F, G_T) in enumerate(zip(PhiX, PhiY_T)):
            if g == 0:
                gemm_into(1.0, F[rows], G_T, 0.0, o)
            else:
                o *= gemm_into(1.0, F[rows], G_T, 0.0, s)
        for j in direct:
            np.multiply.outer(Xd[rows, j], Yd[:, j], out=s)
            s += 1.0
            o *= s


#: The sparse all-subsets Gram is used when its (i, k, j) triples with x_ij y_kj != 0 number at
#: most n_X n_Y (live columns) / SPARSE_GRAM_RATIO: each triple costs about as much as this
#: many dense multiply-adds of the grouped-GEMM path.
SPARSE_GRAM_RATIO = 8


#: Triples per chunk of :func:`_sparse_products` (bounds its temporaries: about 40 bytes each).
SPARSE_GRAM_CHUNK = 2**18


def _sparse_if_cheaper(X, Y):
    """(X as CSR, Y as CSC) when the sparse all-subsets Gram is cheaper, else (None, None)."""
    n, m, d = X.shape[0], Y.shape[0], X.shape[1]
    if not is_sparse(X) and not is_sparse(Y):
        zx = np.count_nonzero(X, axis=0)
        zy = np.count_nonzero(Y, axis=0)
    else:
        zx = np.bincount(sp.csr_matrix(X).indices, minlength=d) if is_sparse(X) else np.count_nonzero(X, axis=0)
        zy = np.bincount(sp.csr_matrix(Y).indices, minlength=d) if is_sparse(Y) else np.count_nonzero(Y, axis=0)
    live = int(np.count_nonzero(zx * zy))
    triples = float(np.dot(zx.astype(np.float64), zy.astype(np.float64)))
    if triples * SPARSE_GRAM_RATIO > float(n) * m * max(live, 1):
        return None, None
    Xs = sp.csr_matrix(X)
    Xs.sum_duplicates()
    Yc = sp.csc_matrix(Y)
    Yc.sum_duplicates()
    return Xs, Yc


def _sparse_products(X: sp.csr_matrix, Yc: sp.csc_matrix, out: np.ndarray, symmetric: bool = False) -> None:
    """``out[i, k] = prod_j (1 + X[i, j] Y[k, j])`` over the j where both are stored.

    Per row block (a cache-sized slab of ``out``), every stored x_ij meets the stored entries
    of column j of Y (CSC): the triples (i, k, j) are built by ragged ranges (vectorized, no
    loop over samples) and their factors 1 + x_ij y_kj multiplied into the slab by
    ``np.multiply.at`` in increasing j per (i, k). Python loops only over blocks and chunks.
    """
    dt = out.dtype
    n, m = out.shape
    y_len = np.diff(Yc.indptr)
    index = np.int32 if max(Yc.nnz, block_bytes(GRAM_BLOCK_BYTES) // dt.itemsize + m) < 2**31 else np.int64
    y_start = Yc.indptr[:-1].astype(index)
    y_rows = Yc.indices.astype(index, copy=False)
    y_vals = Yc.data.astype(dt, copy=False)
    rows_per_block = max(1, block_bytes(GRAM_BLOCK_BYTES) // (dt.itemsize * m))
    # symmetric (Yc is X as CSC, indices sorted): block [s, e) skips, in every column, the entries
    # of rows k < s (the strictly lower triangle, mirrored at the end): 'skipped' counts them
    skipped = np.zeros(X.shape[1], dtype=index)
    for rows in _tiles(n, rows_per_block):
        o = out[rows]
        o.fill(1.0)
        flat = o.reshape(-1)
        a, b = X.indptr[rows.start], X.indptr[rows.stop]
        if symmetric and rows.start:
            prev = X.indptr[max(0, rows.start - rows_per_block)]
            skipped += np.bincount(X.indices[prev:a], minlength=X.shape[1]).astype(index)
        if a == b:
            continue
        cols = X.indices[a:b]
        x_vals = X.data[a:b].astype(dt, copy=False)
        local_row = np.repeat(np.arange(rows.stop - rows.start, dtype=index) * index(m),
                              np.diff(X.indptr[rows.start:rows.stop + 1]))
        L = y_len[cols] - skipped[cols]
        ends = np.cumsum(L)
        start = 0
        while start < len(cols):
            base = ends[start - 1] if start else 0
            stop = max(start + 1, int(np.searchsorted(ends, base + SPARSE_GRAM_CHUNK, side="right")))
            Lc = L[start:stop]
            total = int(Lc.sum())
            if total:
                # owner[t]: the stored x_ij of triple t; pos[t]: its y_kj in Yc
                owner = np.repeat(np.arange(stop - start, dtype=index), Lc)
                pos = (y_start[cols[start:stop]] + skipped[cols[start:stop]] - (np.cumsum(Lc) - Lc).astype(index))[owner]
                pos += np.arange(total, dtype=index)
                z = x_vals[start:stop][owner]
                z *= y_vals[pos]
                z += 1.0
                idx = local_row[start:stop][owner]
                idx += y_rows[pos]
                np.multiply.at(flat, idx, z)
            start = stop
    if symmetric:
        mirror_upper_triangle(out, rows_per_block)
