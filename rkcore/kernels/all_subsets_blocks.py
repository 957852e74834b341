"""RK features of the all-subsets kernel for one row block, in place: the log trick for
Rademacher weights (with its per-row error bound), the direct product over non-zeros otherwise."""
from __future__ import annotations

from typing import cast

import numpy as np
import scipy.sparse as sp


from .blas_blocks import CACHE_BLOCK_BYTES, GEMM_BLOCK_TEMPORARIES, _chunks, _memo, as_sparse_if_sparse, gemm_into
from .numerics import CONTRACT_RTOL, UNIT_ROUNDOFF
from ..base.annotations import is_sparse

# ---------------------------------------------------------------------- RK map: all-subsets
class AllSubsetsSignsBlock:
    """RK features of the all-subsets kernel, ``prod_j (1 + x_j w_j) / sqrt(D)``, for
    Rademacher W (entries exactly +-1), one row block, in place: ONE GEMM (SpMM for CSR) + exp.

    For w_j = +-1, log|1 + x_j w_j| = a_j + b_j w_j with a = (log|1+x| + log|1-x|)/2 and
    b = (log|1+x| - log|1-x|)/2; a zero x_j gives a_j = b_j = 0, so for CSR only the stored
    entries enter. The row sums of a and the 1/sqrt(D) ride along as one extra column of the
    product (against a row of ones). Negative factors (|x_j| > 1) flip signs and vanishing
    factors (x_j = -+1) zero the feature; both are counted by products with W, only when
    such entries exist. Relative error: that of one exp of a sum of d logs (~ (d+2) eps |log Z|),
    as the per-sign reference it replaced (removed since); rows where that error
    may exceed the accuracy contract (:meth:`_log_sum_fails`) are recomputed by the direct
    product (:class:`AllSubsetsProductBlock`).

    Called as ``block(Xb, out)``: Xb a (rows, d) row block, dense or CSR; out a C-contiguous
    (rows, D) float32 or float64 array, written in place and returned.

    Parameters
    ----------
    W : ndarray of shape (D, d)
        The Rademacher weights, entries exactly +1 or -1.
    n_components : int, optional
        The D of 1/sqrt(D); None: the rows of W (several maps' weights may be stacked in W).
    """

    temporaries = GEMM_BLOCK_TEMPORARIES
    gemm: bool  # set by rkcore.kernels.fastpaths.rk_block: GEMM-bound (keep row blocks large)

    def __init__(self, W: np.ndarray, n_components: int | None = None):
        D = W.shape[0]
        self.W_T1 = np.ascontiguousarray(np.vstack([W.T, np.ones((1, D))]))  # (d + 1, D)
        self.log_scale = -0.5 * np.log(n_components or D)
        self._cast: dict = {}
        self._direct = AllSubsetsProductBlock(W, n_components)  # rows the log sum cannot vouch for

    def _weights(self, dtype):
        return _memo(self._cast, np.dtype(dtype), lambda: np.ascontiguousarray(self.W_T1, dtype=dtype))

    def _log_sum_fails(self, a, b, sparse: bool, Xb, nnz: np.ndarray) -> np.ndarray:
        """Rows where the sum of logs may miss the contract. The sum L = sum_j (a_j + b_j w_j) +
        log_scale cancels when |a_j|, |b_j| >> |a_j + b_j w_j| (e.g. x_j w_j near 1: log|1 - x_j w_j|
        is large in both a_j and b_j): its error is at most (gamma_{n+2} + 3 u) T, T = sum_j (|a_j| +
        |b_j|) + |log_scale| (the GEMM's sum, and each log and half-sum rounded), and exp turns
        it into a relative error of the feature, hence of the contract scale prod_j (1 + |x_j w_j|)
        >= |feature|. The test asks 1.01 (gamma + 3 u) T + 2 u <= CONTRACT_RTOL, per row."""
        t = np.abs(a) + np.abs(b)
        T = (np.add.reduceat(np.append(t, 0.0), Xb.indptr[:-1]) if sparse else t.sum(axis=1))
        if sparse:
            T[nnz == 0] = 0.0
        T += abs(self.log_scale)
        gamma = 1.01 * UNIT_ROUNDOFF * np.minimum(nnz + 2.0, 10.0 * np.sqrt(nnz + 2.0))
        return 1.01 * (gamma + 3 * UNIT_ROUNDOFF) * T + 2 * UNIT_ROUNDOFF > CONTRACT_RTOL

    def __call__(self, Xb, out: np.ndarray) -> np.ndarray:
        dt = out.dtype
        Xb = as_sparse_if_sparse(Xb, 0.25)  # mostly zeros: logs of the stored entries and an SpMM
        sparse = is_sparse(Xb)
        if sparse:
            Xb = Xb.tocsr()
            vals = Xb.data.astype(dt, copy=False)
        else:
            vals = np.asarray(Xb, dtype=dt)
        with np.errstate(divide="ignore"):
            log_plus = np.log(np.abs(1.0 + vals))
            log_minus = np.log(np.abs(1.0 - vals))
        zero_plus, zero_minus = vals == -1.0, vals == 1.0
        log_plus[zero_plus] = 0.0
        log_minus[zero_minus] = 0.0
        a = 0.5 * (log_plus + log_minus)
        b = 0.5 * (log_plus - log_minus)
        d = self.W_T1.shape[0] - 1
        n = Xb.shape[0]
        B: sp.csr_matrix | np.ndarray
        if sparse:
            a_sum = np.add.reduceat(np.append(a, 0.0), Xb.indptr[:-1])
            a_sum[np.diff(Xb.indptr) == 0] = 0.0
            extra = (a_sum + self.log_scale).astype(dt)
            # one stored entry more per row, in column d (the row of ones of W_T1)
            pos = Xb.indptr[1:]
            data = np.insert(b, pos, extra)
            indices = np.insert(Xb.indices, pos, d)
            indptr = Xb.indptr + np.arange(n + 1, dtype=Xb.indptr.dtype)
            B = sp.csr_matrix((data, indices, indptr), shape=(n, d + 1))
        else:
            B = np.empty((n, d + 1), dtype=dt)
            B[:, :d] = b
            B[:, d] = a.sum(axis=1) + self.log_scale
        # one SpMM, then exp (per-chunk SpMM + exp measured 13-33% slower here, load ~10)
        gemm_into(1.0, B, self._weights(dt), 0.0, out)
        np.exp(out, out=out)
        neg_plus, neg_minus = vals < -1.0, vals > 1.0
        if neg_plus.any() or neg_minus.any():
            count = self._affine_count(Xb, neg_plus, neg_minus, dt)
            out[np.rint(count).astype(np.int64) % 2 == 1] *= -1.0
        if zero_plus.any() or zero_minus.any():
            out[np.rint(self._affine_count(Xb, zero_plus, zero_minus, dt)) > 0] = 0.0
        nnz = np.diff(Xb.indptr) if sparse else np.count_nonzero(vals, axis=1)
        fails = np.flatnonzero(self._log_sum_fails(a, b, sparse, Xb, nnz))
        if fails.size:  # the direct product over non-zeros, as for other weights
            out[fails] = self._direct(Xb[fails], np.empty((fails.size, out.shape[1]), dtype=dt))
        return out

    def _affine_count(self, Xb, when_plus, when_minus, dt) -> np.ndarray:
        """Number of j with (w_j = +1 and when_plus) or (w_j = -1 and when_minus), per feature."""
        p, q = when_plus.astype(dt), when_minus.astype(dt)
        W_T = self._weights(dt)[:-1]
        if is_sparse(Xb):
            Xb = cast("sp.csr_matrix", Xb)  # canonical CSR here: the engines' inputs pass canonical_csr
            half_diff = sp.csr_matrix((0.5 * (p - q), Xb.indices, Xb.indptr), shape=Xb.shape)
            base = np.add.reduceat(np.append(0.5 * (p + q), 0.0), Xb.indptr[:-1])
            base[np.diff(Xb.indptr) == 0] = 0.0
        else:
            half_diff, base = 0.5 * (p - q), 0.5 * (p + q).sum(axis=1)
        count = gemm_into(1.0, half_diff, W_T, 0.0, np.empty((Xb.shape[0], W_T.shape[1]), dtype=dt))
        count += base[:, None]
        return count


def padded_support(Xb, pad_col: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's stored (CSR) or non-zero (dense) entries, left-aligned and padded.

    Parameters
    ----------
    Xb : ndarray or scipy.sparse matrix of shape (rows, d)
        A row block; a sparse one is read as CSR (its stored entries, zeros included, in stored
        order), a dense one by its non-zeros in column order.
    pad_col : int, default=0
        The column index written into the padding (callers pass d, the index of an all-zero
        padding row of their weights).

    Returns
    -------
    cols : ndarray of shape (rows, k), intp
        Column indices of each row's entries, then ``pad_col``; k is the largest count in the block.
    vals : ndarray of shape (rows, k)
        Their values (Xb's dtype), then 0.
    counts : ndarray of shape (rows,)
        The number of entries of each row.
    """
    if is_sparse(Xb):
        Xb = Xb.tocsr()
        indptr, indices, data = Xb.indptr, Xb.indices, Xb.data
    else:
        rows, cols_ = np.nonzero(Xb)
        counts = np.bincount(rows, minlength=Xb.shape[0])
        indptr = np.concatenate([[0], np.cumsum(counts)])
        indices, data = cols_, Xb[rows, cols_]
    n = len(indptr) - 1
    counts = np.diff(indptr)
    k = int(counts.max()) if n else 0
    cols = np.full((n, k), pad_col, dtype=np.intp)
    vals = np.zeros((n, k), dtype=data.dtype)
    row_of = np.repeat(np.arange(n), counts)
    pos = np.arange(len(indices)) - indptr[row_of]
    cols[row_of, pos] = indices
    vals[row_of, pos] = data
    return cols, vals, counts


class AllSubsetsProductBlock:
    """RK features of the all-subsets kernel for ANY weights, ``prod_j (1 + x_j w_j) / sqrt(D)``,
    one row block, in place, multiplying only each row's non-zero factors (a zero x_j gives the
    factor 1). CSR blocks are read as stored; dense blocks with at most half non-zeros are
    compacted first, denser ones run over all d columns without a gather.

    Each factor is written v (w + 1/v): per non-zero position one gather of weight rows (a
    broadcast for dense input), one add of the row's 1/v and one multiply into ``out``; the
    per-row prod v and 1/sqrt(D) are applied once at the end. fl(w + 1/v) has the same
    conditioning as fl(1 + v w) (relative error ~ eps |v w| / |1 + v w| either way), so the
    result is the reference product to rounding. Used only when prod v and prod 1/v cannot
    overflow (sum_j |log2 |v_j|| <= 1/4 of the exponent range, per row); otherwise each
    factor is formed as 1 + v w. Work runs on row chunks of CACHE_BLOCK_BYTES.

    Called as ``block(Xb, out)``: Xb a (rows, d) row block, dense or CSR; out a C-contiguous
    (rows, D) float32 or float64 array, written in place and returned. Non-finite values
    (overflow on the way, inf * 0) are the caller's to recompute in log space
    (:func:`rkcore.kernels.stable.product_one_plus`).

    Parameters
    ----------
    W : ndarray of shape (D, d)
        The random weights (any distribution).
    n_components : int, optional
        The D of 1/sqrt(D); None: the rows of W (several maps' weights may be stacked in W).
    """

    temporaries = GEMM_BLOCK_TEMPORARIES  # it chunks rows to the cache itself
    gemm: bool  # set by rkcore.kernels.fastpaths.rk_block: GEMM-bound (keep row blocks large)

    def __init__(self, W: np.ndarray, n_components: int | None = None):
        D = W.shape[0]
        self.W_T = np.ascontiguousarray(np.vstack([W.T, np.zeros((1, D))]))  # (d + 1, D); row d: padding
        self.scale = 1.0 / np.sqrt(n_components or D)
        self._cast: dict = {}

    def _weights(self, dtype):
        return _memo(self._cast, np.dtype(dtype), lambda: np.ascontiguousarray(self.W_T, dtype=dtype))

    def __call__(self, Xb, out: np.ndarray) -> np.ndarray:
        dt = out.dtype
        W_T = self._weights(dt)
        d = W_T.shape[0] - 1
        if not is_sparse(Xb):
            Xb = np.asarray(Xb)
            if np.count_nonzero(Xb) > 0.5 * Xb.size:
                cols = np.broadcast_to(np.arange(d), Xb.shape)
                return self._run(cols, Xb.astype(dt, copy=False), np.full(Xb.shape[0], d), W_T, out, dense=True)
        cols, vals, counts = padded_support(Xb, pad_col=d)
        return self._run(cols, vals.astype(dt, copy=False), counts, W_T, out, dense=False)

    def _run(self, cols, vals, counts, W_T, out, dense: bool) -> np.ndarray:
        dt = out.dtype
        n, k = vals.shape
        if k == 0:
            out.fill(self.scale)
            return out
        stored = vals != 0
        with np.errstate(divide="ignore"):
            log_sum = np.where(stored, np.abs(np.log2(np.abs(vals))), 0.0).sum(axis=1)
        safe = bool(log_sum.max() <= 0.25 * np.log2(np.finfo(dt).max)) and (not dense or stored.all())
        if safe:
            with np.errstate(divide="ignore"):
                inv = np.where(stored, 1.0 / vals, 1.0).astype(dt)  # padding: w = 0 (row d), 1/v = 1
            if not dense:  # stored zeros are padding too (their factor is 1)
                cols = np.where(stored, cols, W_T.shape[0] - 1)
            prefactor = (np.where(stored, vals, 1.0).prod(axis=1) * self.scale).astype(dt)
        buf = np.empty((min(n, max(1, CACHE_BLOCK_BYTES // (out.shape[1] * dt.itemsize))), out.shape[1]), dtype=dt)
        for r in _chunks(n, out.shape[1] * dt.itemsize):
            o, b = out[r], buf[: r.stop - r.start]
            kc = int(counts[r].max())
            if kc == 0:
                o.fill(self.scale)
                continue
            for p in range(kc):
                target = o if p == 0 else b
                if dense:
                    target[...] = W_T[p]
                else:
                    np.take(W_T, cols[r, p], axis=0, out=target)
                if safe:
                    target += inv[r, p, None]
                else:
                    target *= vals[r, p, None]
                    target += 1.0
                if p:
                    o *= b
            if safe:
                o *= prefactor[r, None]
            else:
                o *= dt.type(self.scale)
        return out
