"""Fast kernels behind the RK map and the exact Gram matrices (issue 16).

Each function has a narrow contract (shapes, dtypes, what it assumes) so that the call sites in
:mod:`rkcore.maps.random_kernel` and :mod:`rkcore.kernels.exact` stay one-liners. What they share:

* **In place.** Outputs are written into a caller's C-contiguous array ``out`` (a row block of
  the final result), GEMMs accumulate into it through BLAS ``beta = 1`` (dense) or scipy's
  ``Y += A X`` sparse kernel (CSR), so no (rows x D) temporary is allocated and copied.
* **Sparse-aware.** CSR input is never densified: power sums are SpMMs, the all-subsets map
  visits each row's stored entries only; dense blocks with few non-zeros
  (SPARSE_BLOCK_DENSITY) are read as CSR. CSR products run per cache-sized row chunk
  for ANOVA (:func:`product_chunks`), followed at once by the element-wise passes on that chunk.
* **Dtype-preserving.** The computation runs in ``out.dtype`` (float64 or float32); inputs are
  cast to it (weights once per map, data once per block).
* **Same numbers.** Every function computes the same formula as the reference code it
  replaces, in another order: results agree to rounding (tests/test_fastpaths.py).
  The all-subsets Gram's grouped-GEMM path is used only where it is forward stable
  (all products x_j y_j >= 0: a sum of non-negative terms); elsewhere the direct product runs.
* **The accuracy contract is the callers'.** :mod:`rkcore.maps.random_kernel` repairs with the stable
  recursion every ANOVA entry :func:`rkcore.kernels.exact.newton_is_safe` does not vouch for: for
  Rademacher weights from the power sums an :class:`AnovaBlock` keeps (``sums``), for other
  float64 weights from :meth:`AnovaBlock.checked`, whose cheap tier-1 test is a proven
  sufficient condition for newton_is_safe and which hands every other entry to newton_is_safe
  itself; non-finite all-subsets values (overflow on the way, inf * 0) are recomputed in log
  space (:func:`rkcore.kernels.exact.product_one_plus`). Do not call these blocks directly for values.
  The exact ANOVA Gram stays on :func:`rkcore.kernels.exact.contract_elementary` (already blocked
  GEMMs plus the check).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas
from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

try:  # Y += A @ X for CSR A and dense C-contiguous X, Y: scipy's own SpMM kernel, in place.
    from scipy.sparse._sparsetools import csr_matvecs as _csr_matvecs
except ImportError:  # pragma: no cover - private scipy API; fall back to A @ X plus an add
    _csr_matvecs = None

#: Bytes of a row block for the element-wise (non-GEMM) passes: two (rows x D) arrays that
#: stay in the 1 MiB L2 cache of one core.
CACHE_BLOCK_BYTES = 512 * 2**10
#: Columns per group in the grouped-GEMM all-subsets Gram (inner dimension 2**g per group).
GRAM_GROUP = 4
#: Bytes of one row block of the exact Gram computations (the one scratch array).
GRAM_BLOCK_BYTES = 4 * 2**20
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
    ThreadpoolController (8 us per use; threadpool_limits re-scans the libraries: 0.6 ms)."""
    if not _BLAS_CONTROLLER:
        from threadpoolctl import ThreadpoolController
        _BLAS_CONTROLLER.append(ThreadpoolController())
    return _BLAS_CONTROLLER[0].limit(limits=1, user_api="blas")


# ---------------------------------------------------------------------- in-place products
def _memo(cache: dict, key, build):
    """``cache[key]``, built by ``build()`` the first time it is asked for (weights cast per dtype)."""
    if key not in cache:
        cache[key] = build()
    return cache[key]


def gemm_into(alpha: float, A, B_T: np.ndarray, beta: float, out: np.ndarray) -> np.ndarray:
    """``out = alpha * A @ B_T + beta * out`` in place.

    A: (r, k) dense or CSR; B_T: (k, D) dense C-contiguous; out: (r, D) C-contiguous, float32
    or float64; beta in {0, 1} (beta = 0: out's content is ignored). A and B_T are cast to
    out.dtype. Returns out.
    """
    dtype = out.dtype
    if B_T.dtype != dtype or not B_T.flags.c_contiguous:
        B_T = np.ascontiguousarray(B_T, dtype=dtype)
    if sp.issparse(A):
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
    """A dense block with at most ``density`` non-zeros as CSR (the SpMM kernels visit only
    the stored entries); CSR blocks and denser blocks unchanged."""
    if sp.issparse(Xb) or np.count_nonzero(Xb) > density * np.size(Xb):
        return Xb
    return sp.csr_matrix(Xb)


def product_chunks(A, B_T: np.ndarray, out: np.ndarray):
    """Write ``out = A @ B_T`` and yield ``(rows, out[rows])`` over row chunks of
    CACHE_BLOCK_BYTES, so that the element-wise passes a caller runs on each chunk find it in
    cache. CSR A: each chunk is zeroed and multiplied by scipy's SpMM kernel just before it is
    yielded (the product, its first touch of the output and the passes share one trip to
    memory); dense A: one GEMM for the whole block (BLAS is efficient on large calls), then
    the chunks. out: C-contiguous, float32/64 (A and B_T are cast to its dtype)."""
    dt = out.dtype
    n, D = out.shape
    if sp.issparse(A) and _csr_matvecs is not None and n:
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
        self.sparse = sp.issparse(A) and _csr_matvecs is not None
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
    return A.power(t) if sp.issparse(A) else A**t


def _row_sums(A) -> np.ndarray:
    return np.asarray(A.sum(axis=1)).reshape(-1)


# ---------------------------------------------------------------------- RK map: ANOVA m = 2, 3
class AnovaBlock:
    """RK features of the ANOVA kernel of order m in {2, 3} for one row block, written in place.

    ``Z = e_m(X, W) / sqrt(D)`` by the closed forms e_2 = (P1^2 - P2) / 2 and
    e_3 = (P1^3 - 3 P1 P2 + 2 P3) / 6, P_t = X^t (W^t)^T. The constants 1/m! and 1/sqrt(D)
    are folded into the powers of W (computed once, when the block function is built);
    with Rademacher W the even powers are row sums of X^t and W^3 = W (paper eq. 13).

    Cost per block: m GEMMs (Gaussian etc.) or ceil(m/2) GEMMs (Rademacher), accumulated into
    ``out`` by BLAS, plus one (m = 2) or two (m = 3) element-wise passes; m = 3 needs one
    (rows x D) scratch array. Input block: dense or CSR, any float dtype.
    """

    def __init__(self, W: np.ndarray, degree: int, signs: bool, n_components: int | None = None):
        if degree not in (2, 3):
            raise ValueError("AnovaBlock handles degree 2 or 3 only.")
        D = n_components or W.shape[0]  # the D of 1/sqrt(D) (several maps' weights may be stacked in W)
        self.m, self.signs = degree, signs
        # out = scale * e_m = sum of terms in P_t(c x) with c^m = scale / m!
        c = (1.0 / np.sqrt(D) / (2.0 if degree == 2 else 6.0)) ** (1.0 / degree)
        self.c = c
        ts = (1, 3) if signs else tuple(range(1, degree + 1))
        # one transposing copy (strided, the slow part), then the powers on contiguous memory: the same
        # values as (W**t).T * c**t, at a third of the cost for the (T D x d) weights of stacked maps
        WT = np.ascontiguousarray(np.asarray(W).T)
        self.W_T = {t: WT**t * c**t for t in ts if t <= degree}
        self._cast: dict = {}
        self.temporaries = GEMM_BLOCK_TEMPORARIES

    def _weights(self, t: int, dtype) -> np.ndarray:
        return _memo(self._cast, (t, np.dtype(dtype)), lambda: np.ascontiguousarray(self.W_T[t], dtype=dtype))

    def __call__(self, Xb, out: np.ndarray, sums: dict | None = None) -> np.ndarray:
        """Write the block's features into ``out``. With a dict ``sums``, the power sum the
        accuracy check needs is kept there: ``sums["P2"]`` = sum_j (c x_j w_j)^2 (a (rows, 1)
        row sum for Rademacher weights, else a (rows, D) array: then it is subtracted in a
        pass of its own instead of accumulated by BLAS), and for m = 3 ``sums["scratch"]``,
        a (rows, D) array free for reuse."""
        dt = out.dtype
        c = self.c
        Xb = as_sparse_if_sparse(Xb)
        X2 = _power(Xb, 2)
        if self.signs:  # P2 = sum_j (c x_j)^2 for every feature
            P2 = (c * c * _row_sums(X2).astype(dt))[:, None]
        elif sums is not None:
            P2 = gemm_into(1.0, X2, self._weights(2, dt), 0.0, np.empty_like(out))
        else:
            P2 = None  # accumulated into out by BLAS
        if sums is not None:
            sums["P2"] = P2
        if self.m == 2:
            if P2 is None:
                gemm_into(1.0, Xb, self._weights(1, dt), 0.0, out)
                np.square(out, out=out)
                gemm_into(-1.0, X2, self._weights(2, dt), 1.0, out)
            else:  # square and subtract on each chunk while it is in cache
                for rows, o in product_chunks(Xb, self._weights(1, dt), out):
                    np.square(o, out=o)
                    o -= P2[rows]
            return out
        P1 = np.empty_like(out)
        if P2 is None:
            gemm_into(1.0, Xb, self._weights(1, dt), 0.0, P1)
            np.multiply(P1, P1, out=out)
            gemm_into(-3.0, X2, self._weights(2, dt), 1.0, out)
            out *= P1
        else:
            three_P2 = 3.0 * P2 if P2.shape[1] == 1 else None
            for rows, p1 in product_chunks(Xb, self._weights(1, dt), P1):
                o = out[rows]
                np.multiply(p1, p1, out=o)
                if three_P2 is not None:
                    o -= three_P2[rows]
                else:  # o -= 3 P2 in one pass, P2 kept; one BLAS thread (see one_blas_thread)
                    with one_blas_thread():
                        (blas.saxpy if dt == np.float32 else blas.daxpy)(P2[rows].ravel(), o.ravel(), a=-3.0)
                o *= p1
        gemm_into(2.0, _power(Xb, 3), self._weights(3, dt), 1.0, out)
        if sums is not None:
            sums["scratch"] = P1
        return out

    # ------------------------------------------------------------------ checked (fused) path
    def checked(self, Xb, out: np.ndarray, gamma: float):
        """Non-Rademacher weights, float64: write the block's features into ``out`` and return
        (rows, cols) of the entries where :func:`rkcore.kernels.exact.newton_is_safe` does NOT vouch
        for Newton's identities (the caller repairs them), or None when this path does not
        apply (gamma so large that most entries fail; the caller runs the unfused check).

        The closed form and the check run on L2-sized row chunks; the power sums are computed
        per chunk for CSR blocks (SpMM into cache-sized buffers) and as large GEMMs over the
        block for dense ones. Tier 1 is a sufficient condition for newton_is_safe that needs
        no power sum of |z| for most entries (derivation in :func:`anova_tier1_constants`):

        * m = 2: safe where |e| >= rho * P2, e = P1^2 - P2 the computed (scaled) feature;
        * m = 3: newton_is_safe's first branch (P2 <= c A^2) itself, on the same A = |X| |W|^T
          GEMM, and its second branch with the lower bound |P3| (1 - 5 gamma) of Pa3 instead
          of Pa3 (the branch is monotone in Pa3, so this only rejects more).

        * m = 2, second test (any gamma for which newton_is_safe can accept at all): safe
          where max_j|x_j|^2 max_j|c w_j|^2 <= kappa_max P2, i.e. no single product dominates
          the sum of squares (A >= P2 / max_j |z_j|; derivation in anova_tier1_constants).
          It is the test that passes on dense rows with many non-zeros (N(0, 1) rows at
          d = 512 or 1,000, where the first test, built on |P1| <= A, rejects most entries,
          and is off); where both exist the first runs on the whole chunk and the max test
          only on the entries it left.

        Tier 2: for the entries tier 1 leaves, the missing power sums of |z| are computed for
        those entries only (a gather over the row's stored entries) and newton_is_safe itself
        decides; where more than TIER2_GEMM_FRACTION of the block's entries are left, one
        GEMM over the block gives them instead. Requires ``_max_nnz_per_row``-based gamma as the callers
        pass it and no possible overflow (the caller checks ``may_overflow``).
        """
        from .exact import newton_is_safe  # fastpaths is imported by kernels

        consts = anova_tier1_constants(self.m, gamma)
        if consts is None or self.signs or out.dtype != np.float64:
            return None
        dt = out.dtype
        n, D = out.shape
        m = self.m
        Xb = as_sparse_if_sparse(Xb)
        absX = abs(Xb)
        # m = 2: the max test's per-row and per-feature factors (None where its guards fail). A block of
        # few rows (the pair variances: ~6 rows, 32,000 features) skips tier 1: its per-feature data (maxima,
        # top two, padded |W|: several passes over the D x d weights) costs more than one GEMM of the
        # block's rows against |W|, which tier 2 then runs for every entry.
        few_rows = n <= FEW_ROWS
        max_q = self._max_test_factors(absX, consts["kappa_max"]) if m == 2 and not few_rows else None
        rho = None if few_rows else consts.get("rho")
        # On the whole chunk: |e| >= rho P2 where it exists (d <~ 130: it leaves ~10% of
        # N(0, 1) rows' entries, the max test ~25%; MovieLens-like rows, few non-zeros, pass
        # it but not the max test), then the max test on what it left; else the max test.
        step = max(1, CACHE_BLOCK_BYTES // (8 * D))
        P2 = _RowProduct(_power(Xb, 2), self._weights(2, dt), out.shape, dt, step)
        if m == 3:
            P3 = _RowProduct(_power(Xb, 3), self._weights(3, dt), out.shape, dt, step)
            A = _RowProduct(absX, self._abs_weights(1), out.shape, dt, step)
        t_buf, u_buf = np.empty((min(n, step), D)), np.empty((min(n, step), D))
        mask_buf = np.empty((min(n, step), D), dtype=bool)
        # Entries tier 1 leaves, as flat indices into the block with the values tier 2 needs,
        # decided in one batch per block (per-chunk calls cost more than the work).
        left: dict = {"flat": [], "P2": [], "A": []}
        for r, o in product_chunks(Xb, self._weights(1, dt), out):  # o = P1 on the chunk
            k = r.stop - r.start
            p2, t, u, mask = P2.rows(r), t_buf[:k], u_buf[:k], mask_buf[:k]
            if m == 2:
                np.multiply(o, o, out=o)
                o -= p2
                if max_q is None and rho is None:  # no tier-1 test applies: all to tier 2
                    mask.fill(True)
                elif rho is None:  # the max test on the whole chunk (two passes)
                    np.multiply(max_q[0][r, None], max_q[1][None, :], out=u)
                    np.greater(u, p2, out=mask)
                else:  # the |e| >= rho P2 test on the whole chunk (three passes)
                    np.abs(o, out=t)
                    np.multiply(p2, rho, out=u)
                    np.less(t, u, out=mask)
            else:
                p3, a = P3.rows(r), A.rows(r)
                np.multiply(p2, 3.0, out=t)
                np.multiply(o, o, out=u)
                u -= t
                o *= u
                p3 *= 2.0
                o += p3  # e_3 (scaled) = P1 (P1^2 - 3 P2) + 2 P3
                # newton_is_safe's branch 1, the same operations on the same values
                bound = np.multiply(a, a, out=u)
                bound *= consts["c"]
                np.greater(p2, bound, out=mask)  # not (P2 <= bound): branch 1 fails
            idx = np.flatnonzero(mask)
            if not len(idx):
                continue
            if m == 2 and max_q is not None and (rho is not None or max_q[2] is not None):
                # on what is left: the max test (after |e| >= rho P2), then its refined form
                rows_i, cols_i, p2_i = r.start + idx // D, idx % D, p2.ravel()[idx]
                still = max_q[0][rows_i] * max_q[1][cols_i] > p2_i if rho is not None else None
                if max_q[2] is not None:
                    sel = np.flatnonzero(still) if still is not None else slice(None)
                    refined = ~self._refined_max_ok(max_q[2], rows_i[sel], cols_i[sel], p2_i[sel])
                    if still is None:
                        still = refined
                    else:
                        still[sel] = refined
                idx = idx[still]
            if m == 3:  # branch 2 with a lower bound of Pa3 (anova_tier1_constants)
                A_i, B_i = a.ravel()[idx], bound.ravel()[idx]
                lhs_b = np.abs(p3.ravel()[idx]) * (0.5 * consts["pa3_lower"])  # p3 holds 2 P3
                lhs_b *= consts["c_b"]
                lhs_b /= np.where(A_i > 0, A_i, 1.0)
                lhs_b = np.subtract(p2.ravel()[idx], lhs_b, out=lhs_b)
                still = ~(lhs_b <= B_i)
                idx = idx[still]
                left["A"].append(A_i[still])
            left["P2"].append(p2.ravel()[idx])
            left["flat"].append(idx + r.start * D)
        flat = np.concatenate(left["flat"]) if left["flat"] else np.empty(0, dtype=np.intp)
        if not len(flat):
            return flat, flat
        rows, cols = np.divmod(flat, D)
        Pa = [None, None, np.concatenate(left["P2"])]
        frac = TIER2_GEMM_FRACTION if sp.issparse(Xb) else TIER2_GEMM_FRACTION_DENSE
        if len(flat) > frac * n * D:  # many: GEMMs over the block
            scratch = np.empty_like(out)
            if m == 2:
                Pa[1] = gemm_into(1.0, absX, self._abs_weights(1), 0.0, scratch).ravel()[flat]
            Pa.append(None if m == 2 else
                      gemm_into(1.0, _power(absX, 3), self._abs_weights(3), 0.0, scratch).ravel()[flat])
        else:  # few: sums over each pair's stored entries
            # the support of the rows involved only; dense rows: the rows themselves
            live, local = np.unique(rows, return_inverse=True)
            support = padded_support(absX[live], pad_col=Xb.shape[1]) if sp.issparse(absX) else absX[live]
            if m == 2:
                Pa[1] = self._pair_abs_sums(support, local, cols, 1)
            Pa.append(None if m == 2 else self._pair_abs_sums(support, local, cols, 3))
        if m == 3:
            Pa[1] = np.concatenate(left["A"])
        ok = newton_is_safe(Pa[:m + 1], m, gamma)
        return rows[~ok], cols[~ok]

    def _max_test_factors(self, absX, kappa_max: float):
        """(xq, wq) of the m = 2 max test, entry (i, s) safe where fl(xq_i wq_s) <= P2_is:
        xq_i = fl(max_j |x_ij|^2), wq_s = fl(max_j |c w_sj|^2) / kappa_max; None when a guard
        of the derivation (anova_tier1_constants: no underflow in the products it bounds)
        fails for the block (tiny data or weights; the other tests still run)."""
        w1max = _memo(self._cast, "w1max", lambda: np.abs(self._weights(1, np.float64)).max(axis=0, initial=0.0))
        if sp.issparse(absX):
            xmax = np.zeros(absX.shape[0])
            filled = np.diff(absX.indptr) > 0
            if absX.nnz:
                xmax[filled] = np.maximum.reduceat(absX.data, absX.indptr[:-1][filled])
        else:
            xmax = np.asarray(absX).max(axis=1, initial=0.0)
        xq = xmax * xmax
        wq = w1max * w1max
        wq /= kappa_max
        x_live, w_live = xq[xq > 0], w1max[w1max > 0]
        if not len(x_live) or not len(w_live):
            return xq, wq, None  # all products zero: P2 = 0 = xq wq, as newton_is_safe accepts
        if x_live.min() < 2.0**-1000 or w_live.min() < 2.0**-500 or x_live.min() * wq[w1max > 0].min() < 2.0**-960:
            return None
        return xq, wq, self._top_two(absX, xmax, w1max, kappa_max)

    def _top_two(self, absX, xmax, w1max, kappa_max: float):
        """Data of the refined max test (dense blocks, d >= 2; else None): per row the column
        j* of max|x_j| and the second largest |x_j|, per feature the same for |c w|, and the
        feature-major |c W| (see _refined_max_ok)."""
        if sp.issparse(absX) or absX.shape[1] < 2:
            return None
        absX = np.asarray(absX)
        W_fm = self._abs_pad(1)[:, :-1]  # (D, d), |c w| feature-major

        w_arg, w_second = _memo(self._cast, "top_two", lambda: _arg_and_second_max(W_fm))
        x_arg, x_second = _arg_and_second_max(absX)
        return {"X": absX, "x_arg": x_arg, "x_second": x_second,
                "xmax": xmax, "W": W_fm, "w_arg": w_arg, "w_second": w_second, "wmax": w1max,
                "inv_kappa": 1.0 / kappa_max}

    @staticmethod
    def _refined_max_ok(top, rows, cols, p2) -> np.ndarray:
        """The refined max test on the entries (rows, cols): M = max_j |x_j| |c w_j| is at most
        max(xmax |c w_j*|, x2nd wmax) (j* the column of xmax) and max(wmax |x_k*|, w2nd xmax)
        (k* that of wmax); Q = fl(fl(M M) fl(1 / kappa_max)) <= P2 with Q >= 2^-960 is then
        the max test with this smaller M (derivation: anova_tier1_constants)."""
        xm, wm = top["xmax"][rows], top["wmax"][cols]
        Mx = np.maximum(xm * top["W"][cols, top["x_arg"][rows]], top["x_second"][rows] * wm)
        Mw = np.maximum(wm * top["X"][rows, top["w_arg"][cols]], top["w_second"][cols] * xm)
        M = np.minimum(Mx, Mw)
        Q = M * M
        Q *= top["inv_kappa"]
        return (Q <= p2) & (Q >= 2.0**-960)

    def _abs_pad(self, t: int) -> np.ndarray:
        """(D, d + 1): |c W|^t feature-major, column d zero (padding of padded_support)."""
        return _memo(self._cast, ("abs_pad", t),
                     lambda: np.ascontiguousarray(np.pad(self._abs_weights(t), ((0, 1), (0, 0))).T))

    def _abs_weights(self, t: int) -> np.ndarray:
        """(|c W|^t)^T with the same magnitudes as the signed weights of P_t, float64."""
        return _memo(self._cast, ("abs", t), lambda: np.ascontiguousarray(np.abs(self._weights(t, np.float64))))

    def _pair_abs_sums(self, support, rows, cols, t: int) -> np.ndarray:
        """sum_j |x_{rows[p], j}|^t |c w_{cols[p], j}|^t for each pair p, over the stored entries
        (``support``: padded_support of |X|'s rows) or all columns (``support``: dense |X| rows)."""
        # (D, d + 1): feature-major, so that one pair's gather reads one row (the (d, D)
        # layout strides D * 8 bytes per element: a cache miss each); column d is zero, the
        # padding of padded_support
        W_pad = self._abs_pad(t)
        dense = isinstance(support, np.ndarray)  # dense rows (all d columns) or padded_support
        vals = support if dense else support[1]
        out = np.empty(len(rows))
        step = max(1, 2**20 // max(1, vals.shape[1]))
        for sl in _tiles(len(rows), step):
            v = vals[rows[sl]]
            if t > 1:
                v = v**t
            # dense: whole rows of W_pad (contiguous copies); else a gather per stored entry
            w = W_pad[cols[sl], :-1] if dense else W_pad[cols[sl, None], support[0][rows[sl]]]
            out[sl] = np.einsum("pk,pk->p", v, w)
        return out


#: AnovaBlock.checked: blocks of at most this many rows go to tier 2 whole (see there).
FEW_ROWS = 16
#: Tier 2 of AnovaBlock.checked: above this fraction of a block's entries, one GEMM over the
#: block gives the power sums of |z| (cheaper than per-entry gathers).
TIER2_GEMM_FRACTION = 1.0 / 16
#: ...for dense blocks: a gather of d weights per entry costs ~100x a GEMM's multiply-add per
#: entry (measured: 3% of a 2000 x 1248 block of N(0, 1) rows, d = 78, took 80-130 ms by
#: gathers against 15-45 ms for the GEMM, load 7).
TIER2_GEMM_FRACTION_DENSE = 1.0 / 128


def _arg_and_second_max(A: np.ndarray):
    """Per row of a non-negative (r, k) array, k >= 2: the column of the maximum and the largest
    value in the other columns (a tie gives the maximum itself). Two passes; np.partition
    measured 8 ms on 2000 x 78."""
    arg = A.argmax(axis=1)
    rest = A.copy()
    rest[np.arange(A.shape[0]), arg] = 0.0
    return arg, rest.max(axis=1)


def anova_tier1_constants(degree: int, gamma: float) -> dict | None:
    """Constants of AnovaBlock.checked's tier-1 tests, or None when they would reject nearly all
    entries (then the unfused check runs): only when newton_is_safe's own constant is <= 0
    (m = 2: gamma above ~7e-14; m = 3: above ~4.9e-14, d ~ 1,900 under the probabilistic gamma).

    Notation: p1, p2 the computed power sums, A the exact sum of |z_j|, A_c >= (1 - gamma) A
    the computed one that newton_is_safe would use, kappa its constant (m = 2:
    :func:`rkcore.kernels.exact.closed_form_check_constants`, about 1 - 31 gamma - 20.8 gamma / tol). newton_is_safe accepts iff p2 <= kappa A_c^2.
    Exact facts: A >= |P1| and A^2 = P2 + 2 e_2(|z|) >= P2 + 2 |e_2(z)| = P2 + |P1^2 - P2|,
    so A^2 >= max(P1^2, 2 P2 - P1^2). With |p1 - P1| <= gamma A, |p2 - P2| <= gamma P2:

    * A_c^2 >= (1 - 4 gamma) p1^2, so s = p1^2 - p2 >= rho1 p2 with rho1 = 1 / kappa_a - 1
      gives p2 <= kappa A_c^2;
    * A_c^2 >= 2 (1 - 5 gamma) p2 - (1 + gamma) p1^2, so s <= -rho2 p2 with
      rho2 = 1 - (2 (1 - 10 gamma) kappa_a - 1) / ((1 + 2 gamma) kappa_a) gives the same.

    kappa_a = kappa (1 - 20 gamma) absorbs the evaluation rounding of newton_is_safe and the
    few-ulp difference between fl(c^2 w^2) (P2's weights) and fl(c w)^2; rho = max(rho1, rho2)
    (1 + 20 gamma) + 20 gamma absorbs the rounding of the computed e = fl(fl(p1^2) - p2)
    (|e - s| <= 2.02 u (p1^2 + p2)) and of rho p2; gamma >= 5 u, so 20 gamma covers each.
    Hence |e| >= rho p2 implies newton_is_safe. Underflowed values are covered, as for
    newton_is_safe, by the contract's absolute underflow slack. (Used where kappa > 0.75,
    about d <= 130: beyond, rho exceeds 0.33 and |P1|, of order sqrt(P2) for signed
    data, is far below A, of order d.)

    m = 2, the max test (``kappa_max`` = kappa (1 - 20 gamma), any kappa > 0). Let
    W1 = fl(c w) be the weights of P1 and A, a_j = |x_j| |W1_j| (exact products), so
    A_c >= (1 - gamma) sum_j a_j. With M = max_j a_j <= xmax wmax (xmax = max_j |x_j|,
    wmax = max_j |W1_j|, both exact): sum_j a_j >= sum_j a_j^2 / M. P2's terms are
    fl(x_j^2) fl(fl(w_j^2) c2) <= (1 + 7.01 u) a_j^2 (c2 = c**2 within 1 ulp of c^2; W1_j >=
    (1 - u) |c w_j|), so p2 <= (1 + gamma)(1 + 7.01 u) sum_j a_j^2 <= (1 + 2.5 gamma)
    sum_j a_j^2, hence A_c^2 >= (1 - 7 gamma) p2^2 / (xmax^2 wmax^2). The test computes
    Q = fl(fl(xmax^2) fl(fl(wmax^2) / kappa_max)) >= (1 - u)^4 xmax^2 wmax^2 / kappa_max and
    accepts where Q <= p2; kappa_max as computed is <= kappa (1 - 19 gamma), so
    xmax^2 wmax^2 <= kappa (1 - 18 gamma) p2 and A_c^2 kappa >= p2 (1 + 11 gamma - O(gamma^2)),
    which leaves the 2.01 u of newton_is_safe's fl(fl(A_c^2) kappa): it accepts. Guards
    (AnovaBlock._max_test_factors, per block; else the test is skipped): every non-zero
    fl(xmax^2) >= 2^-1000, every non-zero wmax >= 2^-500 and the smallest non-zero Q >= 2^-960,
    so the products bounded above are normal numbers and an underflowed term of p2 (absolute
    error <= 2^-1075 times a factor <= the bound's) moves p2 by at most n 2^-74 of itself,
    within the gamma margin for n <= 10^7. Rows or features that are all zero give
    Q = 0 = p2: accepted, as newton_is_safe accepts P2 = 0 <= kappa A_c^2.

    Refined max test (dense blocks, on the entries the tests above leave): the argument holds
    for any M >= max_j a_j. With j* the column of xmax and x2 the largest |x_j| over j != j*,
    a_j* = xmax |W1_j*| and a_j <= x2 wmax elsewhere; symmetrically with k* the column of
    wmax and w2 the runner-up. So M = min(max(xmax |W1_j*|, x2 wmax), max(wmax |x_k*|,
    w2 xmax)) bounds every a_j (max and min are exact). Computed, M_c >= (1 - u) M (the
    larger product of each pair is >= M and, by the guard below, a normal number), and
    Q = fl(fl(M_c M_c) fl(1 / kappa_max)) >= (1 - u)^5 M^2 / kappa_max: one rounding more
    than above, inside the same margin (5 u <= gamma). Accepted where Q <= p2 and
    Q >= 2^-960; the block guards above still apply. On N(0, 1) rows at d = 78 it leaves
    0.5% of the entries the first two tests leave 3% of.

    m = 3: (c, c_b) are newton_is_safe's own constants (closed_form_check_constants), and
    AnovaBlock.checked evaluates its branch 1, P2 <= fl(fl(A A) c), with the same operations
    on the same computed P2 and A (the GEMMs the unfused check would run): the same verdict,
    no margin. Branch 2 (P2 - c_b Pa3 / A <= that bound) is evaluated where branch 1 fails
    with L = fl(|p3| pa3_lower) in place of Pa3_c, pa3_lower = 1 - 5 gamma: the terms of
    Pa3 are exactly the magnitudes of P3's (|x^3| = |x|^3, |fl(w^3) c^3| = fl(|w|^3 c^3)),
    so Pa3_c >= (1 - 2 gamma) |p3| and L <= (1 + u)(1 - 5 gamma) / (1 - 2 gamma) Pa3_c
    <= (1 - 2.8 gamma) Pa3_c. newton_is_safe forms c_b Pa3 / A in one of two orders
    (whole-array or masked); either is within 2.01 u of the exact c_b Pa3_c / A, as
    fl(fl(c_b L) / A) is of c_b L / A, so ours is below theirs (2 (2.01 u) < 2.8 gamma,
    gamma >= 5 u) and the final subtraction from P2, a monotone rounding, gives
    ours >= theirs: where ours passes, theirs does. None where c <= 0 (newton_is_safe's
    branch 1 accepts only P2 = 0; gamma above about 4.9e-14, d ~ 1,900 under the
    probabilistic gamma).
    """
    from .exact import CONTRACT_RTOL as tol, closed_form_check_constants

    g = float(gamma)
    if degree == 2:
        kappa = float(closed_form_check_constants(2, g)[0])  # newton_is_safe's own constant
        if not kappa > 0.0:  # newton_is_safe accepts only P2 = 0: nothing to gain
            return None
        consts = {"kappa_max": kappa * (1.0 - 20.0 * g), "rho": None}
        if kappa > 0.75:  # the |e| >= rho P2 test; above ~d = 130 its rho makes it useless
            kappa_a = kappa * (1.0 - 20.0 * g)
            rho1 = 1.0 / kappa_a - 1.0
            rho2 = 1.0 - (2.0 * (1.0 - 10.0 * g) * kappa_a - 1.0) / ((1.0 + 2.0 * g) * kappa_a)
            consts["rho"] = max(rho1, rho2) * (1.0 + 20.0 * g) + 20.0 * g
        return consts
    if degree == 3:
        c, c_b = (float(v) for v in closed_form_check_constants(3, g))  # newton_is_safe's own
        if not c > 0.0:
            return None
        return {"c": c, "c_b": c_b, "pa3_lower": 1.0 - 5.0 * g}
    return None


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
    as the reference :func:`rkcore.maps.random_kernel._all_subsets_signs` it replaces.
    """

    temporaries = GEMM_BLOCK_TEMPORARIES

    def __init__(self, W: np.ndarray, n_components: int | None = None):
        D = W.shape[0]
        self.W_T1 = np.ascontiguousarray(np.vstack([W.T, np.ones((1, D))]))  # (d + 1, D)
        self.log_scale = -0.5 * np.log(n_components or D)
        self._cast: dict = {}

    def _weights(self, dtype):
        return _memo(self._cast, np.dtype(dtype), lambda: np.ascontiguousarray(self.W_T1, dtype=dtype))

    def __call__(self, Xb, out: np.ndarray) -> np.ndarray:
        dt = out.dtype
        Xb = as_sparse_if_sparse(Xb, 0.25)  # mostly zeros: logs of the stored entries and an SpMM
        sparse = sp.issparse(Xb)
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
        return out

    def _affine_count(self, Xb, when_plus, when_minus, dt) -> np.ndarray:
        """Number of j with (w_j = +1 and when_plus) or (w_j = -1 and when_minus), per feature."""
        p, q = when_plus.astype(dt), when_minus.astype(dt)
        W_T = self._weights(dt)[:-1]
        if sp.issparse(Xb):
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

    Returns (cols, vals, counts): cols and vals of shape (rows, k), k the largest count in the
    block; padding has column ``pad_col`` and value 0. counts: entries per row.
    """
    if sp.issparse(Xb):
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


def _chunks(n: int, row_bytes: int):
    step = max(1, CACHE_BLOCK_BYTES // max(1, row_bytes))
    for start in range(0, n, step):
        yield slice(start, min(start + step, n))


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
    """

    temporaries = GEMM_BLOCK_TEMPORARIES  # it chunks rows to the cache itself

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
        if not sp.issparse(Xb):
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


def rk_block(kind: str, degree: int, W: np.ndarray, signs: bool, n_components: int | None = None):
    """The fast block function for an RK map, or None when the reference code should run.
    Features are scaled by 1/sqrt(n_components) (default: the rows of W; several maps' weights
    stacked in W keep their own D).

    Returned objects are called as ``fn(X_block, out_block)`` (X dense or CSR, out C-contiguous
    (rows, D), written in place and returned) and carry ``temporaries`` (rows x D arrays, for
    block sizing) and ``gemm`` (GEMM-bound: keep blocks large; otherwise cache-sized).
    """
    if kind == "anova" and degree in (2, 3):
        fn = AnovaBlock(W, degree, signs, n_components)
        fn.gemm = True
        return fn
    if kind == "all_subsets" and signs:
        fn = AllSubsetsSignsBlock(W, n_components)
        fn.gemm = True
        return fn
    if kind == "all_subsets":
        fn = AllSubsetsProductBlock(W, n_components)  # chunks rows to the cache itself: large outer blocks
        fn.gemm = True
        return fn
    return None


# ---------------------------------------------------------------------- exact Gram matrices
def _tiles(n: int, size: int):
    for start in range(0, n, size):
        yield slice(start, min(start + size, n))


def mirror_upper_triangle(out: np.ndarray, rows_per_block: int) -> None:
    """Copy the upper triangle of the square ``out`` into its lower one, a row block at a time (no
    n x n temporary): the last step of every Gram K(X, X) that computes only the upper triangle."""
    for rows in _tiles(out.shape[0], rows_per_block):
        out[rows, :rows.start] = out[:rows.start, rows].T


def _subset_products(X: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """phi_G(x) for the column group G: the 2^|G| products prod_{j in V} x_j over V subset of G."""
    F = np.ones((X.shape[0], 1), dtype=X.dtype)
    for j in cols:
        F = np.hstack([F, F * X[:, j, None]])
    return F


def row_levels(A) -> np.ndarray | None:
    """a_i with every non-zero of row i equal to a_i (0.0 for empty rows), or None when some row
    holds two different non-zero values (one-hot and binary rows scaled per row, e.g.
    L1-normalized: the paper's MovieLens features)."""
    if sp.issparse(A):
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
    nnz_x = np.diff(sp.csr_matrix(X).indptr) if sp.issparse(X) else np.count_nonzero(X, axis=1)
    nnz_y = np.diff(sp.csr_matrix(Y).indptr) if sp.issparse(Y) else np.count_nonzero(Y, axis=1)
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
    if sp.issparse(X):
        mask = sp.csr_matrix(X, dtype=np.float32, copy=True)
        mask.data = (mask.data != 0).astype(np.float32)
        extra = np.column_stack([ia * (len(B) * (C + 1)), np.ones(len(ia))]).astype(np.float32)
        XA = sp.hstack([mask, sp.csr_matrix(extra)], format="csr")
    else:
        XA = np.empty((X.shape[0], d + 2), dtype=np.float32)
        XA[:, :d] = X != 0
        XA[:, d] = ia * (len(B) * (C + 1))
        XA[:, d + 1] = 1.0
    YAT = np.empty((d + 2, Y.shape[0]), dtype=np.float32)
    YAT[:d] = (Y.toarray() if sp.issparse(Y) else Y).T != 0
    YAT[d] = 1.0
    YAT[d + 1] = ib * (C + 1)
    n, m = out.shape
    rows_per_block = max(1, GRAM_BLOCK_BYTES // (4 * m))
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

    X: (n, d), Y: (m, d), dense or CSR (densified: the inputs are O(n d), the output O(n m));
    out: (n, m) C-contiguous float32/64. Peak extra memory: one GRAM_BLOCK_BYTES block plus
    O((n + m) d) for the per-group subset products.

    Columns where every product x_j y_j is >= 0 (e.g. non-negative data) are grouped by
    GRAM_GROUP and each group's factor prod_{j in G}(1 + x_j y_j) = <phi_G(x), phi_G(y)> is
    one small GEMM: a sum of non-negative terms, so its relative error is at most
    (2^g + g) eps, as good as the direct product. Columns with mixed-sign products (where
    that sum could cancel) are multiplied directly, column by column. Columns that are zero
    in X or in Y contribute the factor 1 and are skipped.

    ``symmetric`` (Y is X): the sparse path computes the upper triangle and mirrors it.

    Sparse data (CSR, or dense with many zeros; :func:`_sparse_if_cheaper` decides from the
    count of shared non-zeros) takes :func:`_sparse_products` instead: only the factors with
    x_j y_j != 0, multiplied one by one (the direct product, in increasing j).
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
    Xd = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=dt)
    Yd = np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=dt)
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
    rows_per_block = max(1, GRAM_BLOCK_BYTES // (dt.itemsize * m_))
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
    from .exact import CONTRACT_RTOL, UNIT_ROUNDOFF as u
    k = roundings * u
    return k < 1 and k / (1 - k) <= CONTRACT_RTOL


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
    from .exact import CONTRACT_RTOL, UNIT_ROUNDOFF as u
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
    rows_per_block = max(1, GRAM_BLOCK_BYTES // (ext_bytes * max(m, d)))
    cols_per_chunk = max(1, GRAM_BLOCK_BYTES // (ext_bytes * max(m, 1)))
    H = np.empty((min(rows_per_block, n), m), dtype=EXTENDED)
    S = np.empty_like(H)
    for rows in _tiles(n, rows_per_block):
        k = rows.stop - rows.start
        h, s = H[:k], S[:k]
        h.fill(1.0)
        Xb = np.asarray(X[rows].toarray() if sp.issparse(X) else X[rows], dtype=EXTENDED)
        for chunk in _tiles(d, cols_per_chunk):
            used = chunk.start + np.flatnonzero(Xb[:, chunk].any(axis=0))
            if not len(used):
                continue
            Yc = np.asarray(Y[:, used].toarray() if sp.issparse(Y) else Y[:, used], dtype=EXTENDED)
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
    if not sp.issparse(X) and not sp.issparse(Y):
        zx = np.count_nonzero(X, axis=0)
        zy = np.count_nonzero(Y, axis=0)
    else:
        zx = np.bincount(sp.csr_matrix(X).indices, minlength=d) if sp.issparse(X) else np.count_nonzero(X, axis=0)
        zy = np.bincount(sp.csr_matrix(Y).indices, minlength=d) if sp.issparse(Y) else np.count_nonzero(Y, axis=0)
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
    index = np.int32 if max(Yc.nnz, GRAM_BLOCK_BYTES // dt.itemsize + m) < 2**31 else np.int64
    y_start = Yc.indptr[:-1].astype(index)
    y_rows = Yc.indices.astype(index, copy=False)
    y_vals = Yc.data.astype(dt, copy=False)
    rows_per_block = max(1, GRAM_BLOCK_BYTES // (dt.itemsize * m))
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
