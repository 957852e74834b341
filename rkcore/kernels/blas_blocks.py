"""In-place products shared by the fast blocks (rkcore.kernels.fastpaths): BLAS GEMMs and scipy's SpMM
accumulating into a caller's output, cache-sized row chunks, one-thread BLAS contexts."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas
from threadpoolctl import ThreadpoolController  # a dependency of scikit-learn
from ..base.annotations import is_sparse
from .numerics import row_batches

try:  # Y += A @ X for CSR A and dense C-contiguous X, Y: scipy's own SpMM kernel, in place.
    from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs
except ImportError:  # pragma: no cover - private scipy API; fall back to A @ X plus an add
    _csr_matvecs = None  # type: ignore[assignment]  # callers check for None before the fast path

#: Bytes of a row block for the element-wise (non-GEMM) passes: two (rows x D) arrays that
#: stay in the 1 MiB L2 cache of one core. Fixed, not scikit-learn's working_memory: a cache size chosen
#: for speed (far below any memory budget), inside blocks that working_memory does bound.
CACHE_BLOCK_BYTES = 512 * 2**10


#: (rows x D) temporaries a GEMM-bound fast block declares to maps.transform (which sizes row
#: blocks as 8 MB / (8 D temporaries)): a fraction, so blocks hold ~8x more rows than one
#: scratch array would suggest. Each block is a few BLAS calls; on a loaded machine every call
#: pays for waking BLAS threads, and 256-row blocks measured 8-10x slower than one big GEMM
#: (load 20 on 2 cores). The outputs are written in place, so big blocks cost no extra memory
#: beyond the one scratch array of ANOVA-3.
GEMM_BLOCK_TEMPORARIES = 0.125


_BLAS_CONTROLLER: list = []


def one_blas_thread():
    """A context limiting BLAS to one thread, for level-1 calls on cache-sized chunks: a
    threaded daxpy on a (52 x 1248) chunk wakes the BLAS threads for microseconds of work;
    measured 300 ms against 3 ms for 2000 x 1248 entries at load 2 on 2 cores. Built on one
    ThreadpoolController (8 us per use; threadpool_limits re-scans the libraries: 0.6 ms).

    Returns
    -------
    context manager
        threadpoolctl's limiter: inside its ``with`` block BLAS runs on one thread (process-wide,
        so only around short level-1 calls), and its previous limits are restored on exit.
    """
    if not _BLAS_CONTROLLER:
        _BLAS_CONTROLLER.append(ThreadpoolController())
    return _BLAS_CONTROLLER[0].limit(limits=1, user_api="blas")


# ---------------------------------------------------------------------- in-place products
def _memo(cache: dict, key, build):
    """``cache[key]``, built by ``build()`` the first time it is asked for (weights cast per dtype)."""
    if key not in cache:
        cache[key] = build()
    return cache[key]


def gemm_into(alpha: float, A, B_T: np.ndarray, beta: float, out: np.ndarray) -> np.ndarray:
    """``out = alpha * A @ B_T + beta * out`` in place, by BLAS (dense A) or scipy's SpMM (CSR A).

    No (r, D) temporary: dense A is one ``?gemm`` writing into ``out`` through transposed views,
    CSR A scipy's ``csr_matvecs`` kernel accumulating into it. The arithmetic is that of the
    library's kernel in ``out.dtype`` (the error of one GEMM: at most gamma_k sum |a| |b| per
    entry); the callers' accuracy checks account for it.

    Parameters
    ----------
    alpha : float
        Factor of the product (CSR A: applied to A's stored values before the product).
    A : ndarray or scipy.sparse matrix of shape (r, k)
        Dense or sparse (read as CSR); cast to ``out.dtype``.
    B_T : ndarray of shape (k, D)
        The right factor; copied to a C-contiguous ``out.dtype`` array only where it is not one.
    beta : {0.0, 1.0}
        0: ``out``'s content is ignored (overwritten); 1: the product is added to it.
    out : ndarray of shape (r, D), float32 or float64, C-contiguous
        The result, written in place.

    Returns
    -------
    ndarray of shape (r, D)
        ``out`` itself.
    """
    dtype = out.dtype
    if B_T.dtype != dtype or not B_T.flags.c_contiguous:
        B_T = np.ascontiguousarray(B_T, dtype=dtype)
    if is_sparse(A):
        A = A.tocsr() if A.format != "csr" else A
        data = A.data.astype(dtype, copy=False)
        if alpha != 1.0:
            data = data * dtype.type(alpha)
        if _csr_matvecs is None:
            prod = np.asarray(sp.csr_matrix((data, A.indices, A.indptr), shape=A.shape) @ B_T)
            if beta == 0:
                out[...] = prod
            else:
                out += prod
            return out
        if beta == 0:
            out.fill(0.0)
        indptr, indices = A.indptr, A.indices
        if indices.dtype != indptr.dtype:
            indices = indices.astype(indptr.dtype)
        _csr_matvecs(A.shape[0], A.shape[1], B_T.shape[1], indptr, indices,
                     np.ascontiguousarray(data), B_T.ravel(), out.ravel())
        return out
    A = np.asarray(A, dtype=dtype)
    if not A.flags.c_contiguous:
        A = np.ascontiguousarray(A)
    gemm = blas.sgemm if dtype == np.float32 else blas.dgemm
    # out^T (D, r), Fortran order = B_T^T (D, k) @ A^T (k, r): all three are views, no copies.
    res = gemm(alpha, B_T.T, A.T, beta=beta, c=out.T, overwrite_c=1)
    if not np.shares_memory(res, out):  # pragma: no cover - f2py copied: write back
        out[...] = res.T
    return out


#: Dense blocks with at most this fraction of non-zeros go through the CSR kernels (SpMM):
#: MovieLens-shaped rows (9% non-zeros) measured 1.2-6x faster as SpMM than as a dense GEMM on
#: the loaded 2-core machine (BLAS threads stall under load; SpMM is one thread and does 1/11
#: of the flops); on a quiet machine the GEMM is faster only below ~10x the SpMM's flop count.
SPARSE_BLOCK_DENSITY = 0.125


def as_sparse_if_sparse(Xb, density: float = SPARSE_BLOCK_DENSITY):
    """A dense block with few non-zeros as CSR, so that the SpMM kernels visit only its stored entries.

    Parameters
    ----------
    Xb : ndarray or scipy.sparse matrix of shape (rows, d)
        One row block of data.
    density : float, default=SPARSE_BLOCK_DENSITY
        The largest fraction of non-zeros at which a dense block is converted.

    Returns
    -------
    ndarray or scipy.sparse matrix of shape (rows, d)
        ``Xb`` itself when it is sparse or denser than ``density``; else a new CSR matrix with the
        same values (the conversion is exact).
    """
    if is_sparse(Xb) or np.count_nonzero(Xb) > density * np.size(Xb):
        return Xb
    return sp.csr_matrix(Xb)


def product_chunks(A, B_T: np.ndarray, out: np.ndarray):
    """Write ``out = A @ B_T`` and yield ``(rows, out[rows])`` over row chunks of
    CACHE_BLOCK_BYTES, so that the element-wise passes a caller runs on each chunk find it in
    cache. CSR A: each chunk is zeroed and multiplied by scipy's SpMM kernel just before it is
    yielded (the product, its first touch of the output and the passes share one trip to
    memory); dense A: one GEMM for the whole block (BLAS is efficient on large calls), then
    the chunks. Values are those of :func:`gemm_into` with alpha = 1, beta = 0.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix of shape (n, k)
        The left factor, dense or sparse (read as CSR); cast to ``out.dtype``.
    B_T : ndarray of shape (k, D)
        The right factor; cast to ``out.dtype``.
    out : ndarray of shape (n, D), float32 or float64, C-contiguous
        Written in place with the product (a CSR chunk only once it is yielded).

    Yields
    ------
    rows : slice
        The chunk's rows.
    chunk : ndarray of shape (rows, D)
        The view ``out[rows]``, holding the product's rows; the caller may overwrite it.
    """
    dt = out.dtype
    n, D = out.shape
    if is_sparse(A) and _csr_matvecs is not None and n:
        A = A.tocsr() if A.format != "csr" else A
        B = np.ascontiguousarray(B_T, dtype=dt).ravel()
        data = np.ascontiguousarray(A.data, dtype=dt)
        indptr, indices = A.indptr, A.indices
        if indices.dtype != indptr.dtype:
            indices = indices.astype(indptr.dtype)
        for rows in _chunks(n, D * dt.itemsize):
            o = out[rows]
            o.fill(0.0)
            # indptr is not rebased: the kernel reads indices[indptr[i]:indptr[i + 1]]
            _csr_matvecs(rows.stop - rows.start, A.shape[1], D, indptr[rows.start:rows.stop + 1], indices,
                         data, B, o.ravel())
            yield rows, o
        return
    gemm_into(1.0, A, B_T, 0.0, out)
    for rows in _chunks(n, D * dt.itemsize):
        yield rows, out[rows]


class _RowProduct:
    """``A @ B_T`` read chunk by chunk: CSR A is multiplied per chunk into a cache-sized buffer
    (nothing of size rows x D is written to memory); dense A is one GEMM for the whole block
    (BLAS stalls on many small calls under load) whose chunks are then read."""

    def __init__(self, A, B_T: np.ndarray, out_shape: tuple, dt, chunk_rows: int):
        self.sparse = is_sparse(A) and _csr_matvecs is not None
        if self.sparse:
            A = A.tocsr() if A.format != "csr" else A
            self.B = np.ascontiguousarray(B_T, dtype=dt).ravel()
            self.data = np.ascontiguousarray(A.data, dtype=dt)
            self.indptr, self.indices = A.indptr, A.indices.astype(A.indptr.dtype, copy=False)
            self.n_col, self.D = A.shape[1], out_shape[1]
            self.buf = np.empty((min(chunk_rows, out_shape[0]), out_shape[1]), dtype=dt)
        else:
            self.full = gemm_into(1.0, A, B_T, 0.0, np.empty(out_shape, dtype=dt))

    def rows(self, rows: slice) -> np.ndarray:
        """The chunk ``rows`` of the product (a view, valid until the next call)."""
        if not self.sparse:
            return self.full[rows]
        o = self.buf[: rows.stop - rows.start]
        o.fill(0.0)
        _csr_matvecs(rows.stop - rows.start, self.n_col, self.D, self.indptr[rows.start:rows.stop + 1],
                     self.indices, self.data, self.B, o.ravel())
        return o


def _power(A, t: int):
    if t == 1:
        return A
    return A.power(t) if is_sparse(A) else A**t


def _row_sums(A) -> np.ndarray:
    return np.asarray(A.sum(axis=1)).reshape(-1)


def _chunks(n: int, row_bytes: int):
    return row_batches(n, CACHE_BLOCK_BYTES // max(1, row_bytes))  # a cache size: fixed (CACHE_BLOCK_BYTES)


# ---------------------------------------------------------------------- exact Gram matrices
def _tiles(n: int, size: int):
    return row_batches(n, size)


def mirror_upper_triangle(out: np.ndarray, rows_per_block: int) -> None:
    """Copy the upper triangle of the square ``out`` into its lower one, a row block at a time.

    The last step of every Gram K(X, X) that computes only the upper triangle; no n x n temporary
    (an exact copy: the Gram is symmetric bit for bit).

    Parameters
    ----------
    out : ndarray of shape (n, n)
        The Gram, its upper triangle (diagonal included) filled; the strict lower triangle is
        overwritten in place.
    rows_per_block : int
        Rows copied per step (the row blocks the Gram was computed in).
    """
    for rows in _tiles(out.shape[0], rows_per_block):
        out[rows, :rows.start] = out[:rows.start, rows].T


def row_levels(A) -> np.ndarray | None:
    """The one non-zero value of each row, where every row has one (binary rows scaled per row).

    One-hot and binary rows scaled per row (e.g. L1-normalized: the paper's MovieLens features)
    have it; the exact ANOVA Gram of such rows is then a binomial count times powers of these
    values (:func:`rkcore.kernels.anova_gram._level_gram`).

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix of shape (n, d)
        The rows (stored zeros of a sparse matrix are ignored).

    Returns
    -------
    ndarray of shape (n,) or None
        a_i with every non-zero of row i equal to a_i (0.0 for rows without non-zeros), or None
        when some row holds two different non-zero values.
    """
    if is_sparse(A):
        A = sp.csr_matrix(A)
        data, indptr = A.data, A.indptr
        live = data != 0
        has = np.diff(indptr) > 0
        hi = np.full(A.shape[0], -np.inf)
        lo = np.full(A.shape[0], np.inf)
        if has.any():
            hi[has] = np.maximum.reduceat(np.where(live, data, -np.inf), indptr[:-1][has])
            lo[has] = np.minimum.reduceat(np.where(live, data, np.inf), indptr[:-1][has])
    else:
        live = A != 0
        hi = np.where(live, A, -np.inf).max(axis=1)
        lo = np.where(live, A, np.inf).min(axis=1)
    empty = hi == -np.inf
    if not np.all((hi == lo) | empty):
        return None
    return np.where(empty, 0.0, hi)
