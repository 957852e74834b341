"""The exact ANOVA and up-to Gram matrices under the accuracy contract (rkcore.kernels.numerics):
power sums as GEMMs, Newton's closed forms fused with their a-posteriori check, the stable
recursion where the check cannot vouch."""
from __future__ import annotations

import math

from typing import Any, cast

import numpy as np

from .blas_blocks import as_sparse_if_sparse, gemm_into, mirror_upper_triangle, row_levels
from .witnesses import _cauchy_schwarz_witness, _count_threshold, _witness_failures
from .anova_closed_forms import _gathered_check, _summed_block, _top_block, _top_counted, _top_value
from ..base.limits import block_bytes
from .numerics import (
    row_batches,
    _broadcast_full,
    _is_nonnegative,
    _zero_fraction,
    closed_form_check_constants,
    elementary_from_power_sums,
    elementary_top,
    may_overflow,
    newton_is_safe,
    rounding_gamma,
    row_blocks,
)
from .matrices import abs_max, elementwise_power, gram_dense, max_nnz_per_row
from .stable import elementary_pairs
from ..base.annotations import is_sparse


#: Bytes per row block of :func:`contract_elementary` (bounded memory; few, large GEMMs).
CONTRACT_BLOCK_BYTES = 64 * 2**20


#: ...but at least this many rows per block.
CONTRACT_MIN_ROWS = 1024


def contract_elementary(X, Y, degree: int, all_orders: bool = False):
    """e_degree (or e_0..e_degree) of z = x_i * y_j for all pairs, meeting the accuracy contract.

    Fast path: the power sums (GEMMs) and Newton's identities; entries where
    :func:`newton_is_safe` cannot vouch for them are recomputed by the stable recursion.
    The power sums of |z| it needs are the even P_t and, unless X, Y >= 0, one GEMM of
    absolute values per odd order. Works in row blocks (CONTRACT_BLOCK_BYTES) so the
    element-wise passes stay in cache. Pairs sharing fewer than ``degree`` non-zeros (data with
    many zeros) are set to exactly 0.

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of shape (n_X, d)
        Validated float64 rows, in range (:func:`rkcore.kernels.ranges.ranged_gram`).
    Y : ndarray or scipy.sparse.csr_matrix of shape (n_Y, d)
        Validated float64 rows, in range.
    degree : int
        The order m, >= 1.
    all_orders : bool, default=False
        Return every order e_0..e_degree.

    Returns
    -------
    ndarray of shape (n_X, n_Y) or list
        e_degree of every pair, float64, within the accuracy contract; with ``all_orders`` the
        list e_0 (= 1.0), e_1, ..., e_degree. Values that overflow come back as inf (the
        caller's repair: see :func:`_contract_gram`).
    """
    nX, nY = X.shape[0], Y.shape[0]
    nonneg = _is_nonnegative(X) and _is_nonnegative(Y)
    gamma = float(rounding_gamma(min(max_nnz_per_row(X), max_nnz_per_row(Y)) + 2 * degree))
    Ypow = [None] + [elementwise_power(Y, t) for t in range(1, degree + 1)]
    y_max = abs_max(Y)
    # Sparse-ish data (e.g. one-hot rows): many pairs share fewer than m non-zeros, so their
    # value is exactly 0 but the check cannot vouch for Newton's (S = 0). One more product of
    # the non-zero patterns counts the shared non-zeros and settles those pairs directly.
    count_shared = not all_orders and degree >= 2 and (_zero_fraction(X) > 0.25 or _zero_fraction(Y) > 0.25)
    Ymask = (Y != 0).astype(np.float64) if count_shared else None
    Yabs = [None] + [None if nonneg or t % 2 == 0 else elementwise_power(abs(Y), t) for t in range(1, degree + 1)]
    out: Any = [1.0] + [np.empty((nX, nY)) for _ in range(degree)] if all_orders else np.empty((nX, nY))  # e_0..e_m or e_m
    bad_rows, bad_cols = [], []
    with np.errstate(over="ignore", invalid="ignore"):
        # at least CONTRACT_MIN_ROWS rows per block: many small GEMMs are slow (BLAS threads
        # synchronise once per call, which costs a lot on a loaded machine)
        bytes_per_row = min(8 * nY * (degree + 4), max(1, CONTRACT_BLOCK_BYTES // CONTRACT_MIN_ROWS))
        for rows in row_blocks(nX, bytes_per_row, CONTRACT_BLOCK_BYTES):
            Xb = X[rows]
            Xabs = None if nonneg else abs(Xb)
            P: list[Any] = [None]  # 1-based: P[t] the t-th power sums, slot 0 unused
            Pa: list[Any] = [None]
            for t in range(1, degree + 1):
                Xt = elementwise_power(Xb, t)
                P.append(gram_dense(Xt, Ypow[t]))
                Pa.append(P[t] if nonneg or t % 2 == 0 else gram_dense(elementwise_power(Xabs, t), Yabs[t]))
            # the check first: elementary_top overwrites P[2] and P[3], which Pa shares
            ok = newton_is_safe(Pa, degree, gamma, all_orders=all_orders)
            risky = may_overflow(abs_max(Xb), y_max, Y.shape[1], degree)
            if all_orders:
                e = elementary_from_power_sums(P, degree)
                for k in range(1, degree + 1):
                    out[k][rows] = e[k]
                    if risky:
                        ok = ok & np.isfinite(out[k][rows])
            else:
                out[rows] = elementary_top(P, degree)
                if risky:
                    ok = ok & np.isfinite(out[rows])
                if count_shared and not ok.all():
                    too_few = gram_dense((Xb != 0).astype(np.float64), Ymask) < degree
                    out[rows][too_few] = 0.0
                    ok = ok | too_few
            if not ok.all():
                r, c = np.nonzero(~np.broadcast_to(ok, (Xb.shape[0], nY)))
                bad_rows.append(r + rows.start)
                bad_cols.append(c)
    if bad_rows:
        _recompute_pairs(X, Y, out, np.concatenate(bad_rows), np.concatenate(bad_cols), degree, all_orders)
    return out


def _recompute_pairs(X, Y, out, rows: np.ndarray, cols: np.ndarray, degree: int, all_orders: bool) -> None:
    """The pairs (rows, cols) the check rejected, recomputed by the stable recursion into ``out``
    (:func:`contract_elementary`'s array, or its list of orders with ``all_orders``)."""
    fixed = elementary_pairs(X, Y, rows, cols, degree, all_orders)
    if all_orders:
        for k in range(1, degree + 1):
            out[k][rows, cols] = fixed[k]
    else:
        out[rows, cols] = fixed


#: Bytes of the power-sum blocks of one row block of :func:`anova_gram` (all its scratch arrays); lowered to
#: scikit-learn's working_memory when that is smaller (:func:`rkcore.base.limits.block_bytes`).
GRAM_SCRATCH_BYTES = 16 * 2**20


#: ...but at least this many rows per block (few, large GEMMs), unless there are fewer rows.
GRAM_MIN_ROWS = 64


#: Bytes of one sub-block of the fused element-wise passes of :func:`anova_gram`: its few
#: temporaries and the power sums it reads stay in a core's L2 cache. Fixed, not scikit-learn's
#: working_memory: a cache size for speed, inside a scratch block that working_memory does bound.
FUSED_BYTES = 256 * 2**10


#: A CSR Y is densified (transposed, one copy per power) only up to this many bytes.
GRAM_DENSE_Y_BYTES = 256 * 2**20


def anova_gram(X, Y, degree: int, summed: bool = False, symmetric: bool = False) -> np.ndarray:
    """The exact ANOVA Gram e_degree(x_i * y_k) (``summed``: the up-to Gram sum_{k<=degree} e_k).

    Orders 2 and 3 (and 1 to 3 summed) run fused: per row block the power sums are GEMMs (SpMMs
    for CSR X) into scratch blocks, then one pass over cache-sized sub-blocks forms Newton's
    closed forms, checks them (the closed forms of :func:`newton_is_safe`, for the summed Gram
    :func:`_summed_is_safe`) and writes the output; entries the check cannot vouch for are
    recomputed by the stable recursion (:func:`elementary_pairs`). For non-negative data the
    power sums of |z| are the power sums themselves (no GEMM of absolute values); for data
    with many zeros, entries with fewer than ``degree`` shared non-zeros are set to exactly 0
    from a (float32, exact) count of shared non-zeros, computed only for blocks that need it.

    Two proven sufficient conditions for the first closed-form test (never looser than it: they
    imply its verdict on the computed power sums) skip the per-entry test where they hold:
    dense signed data, a float32 GEMM per row block whose sign vouches for whole sub-blocks
    without the float64 GEMM of |x| |y|^T (:func:`_cauchy_schwarz_witness`); non-negative data
    with many zeros, the shared-non-zero count itself (:func:`_count_threshold`).
    Peak memory: the output plus one block (GRAM_SCRATCH_BYTES) plus O((n_X + n_Y) d).
    Other orders go through :func:`contract_elementary`; rows whose non-zeros share one value per
    row (one-hot, binary) through an exact count (:func:`_level_gram`).

    Parameters
    ----------
    X : ndarray or scipy.sparse.csr_matrix of shape (n_X, d)
        Validated float64 rows, dense or CSR, in range (:func:`rkcore.kernels.ranges.ranged_gram`
        scales the others).
    Y : ndarray or scipy.sparse.csr_matrix of shape (n_Y, d)
        The same; Y is X for K(X, X).
    degree : int
        The order m, >= 1.
    summed : bool, default=False
        Return the up-to Gram sum_{k<=degree} e_k instead of e_degree.
    symmetric : bool, default=False
        Y is X: only the upper triangle is computed, then mirrored (bit for bit symmetric).

    Returns
    -------
    ndarray of shape (n_X, n_Y)
        float64, every entry within the accuracy contract of :mod:`rkcore.kernels.numerics`
        (CONTRACT_RTOL * sum_V |prod z_j| + 2^-1022); exactly 0.0 where fewer than ``degree``
        products are non-zero.
    """
    nY, d = Y.shape[0], X.shape[1]
    low = (1 <= degree <= 3) if summed else degree in (2, 3)
    if not low or (is_sparse(Y) and 8 * 6 * d * nY > GRAM_DENSE_Y_BYTES):
        return _contract_gram(X, Y, degree, summed)
    if not summed:
        x_levels, y_levels = row_levels(X), row_levels(Y)
        if x_levels is not None and y_levels is not None and _levels_in_range(x_levels, y_levels, d, degree):
            return _level_gram(X, Y, x_levels, y_levels, degree, symmetric)
    return _FusedGram(X, Y, degree, summed).run(symmetric)


def _contract_gram(X, Y, degree: int, summed: bool) -> np.ndarray:
    """The Gram of :func:`anova_gram` by :func:`contract_elementary` (orders the fused path does
    not cover, or a CSR Y too large to densify); the summed Gram's entries that overflow (orders
    of opposite signs: inf - inf) are recomputed by the stable recursion."""
    nX, nY = X.shape[0], Y.shape[0]
    if summed:
        with np.errstate(invalid="ignore"):
            total = _broadcast_full(sum(contract_elementary(X, Y, degree, all_orders=True)), (nX, nY))
        bad = ~np.isfinite(total)  # orders of opposite signs that overflow: inf - inf
        if bad.any():
            r, c = np.nonzero(bad)
            total[r, c] = elementary_pairs(X, Y, r, c, degree, summed=True)
        return total
    return _broadcast_full(contract_elementary(X, Y, degree), (nX, nY))


def _transposed(A) -> np.ndarray:
    """(d, n) C-contiguous copy of the (n, d) A, dense."""
    return np.ascontiguousarray((A.toarray() if is_sparse(A) else A).T)


class _FusedGram:
    """The fused path of :func:`anova_gram` (orders 2, 3; 1 to 3 summed): what the whole Gram
    shares (the check's constants and shortcuts, Y's transposed powers), then :meth:`run`."""

    def __init__(self, X, Y, degree: int, summed: bool):
        self.X, self.Y, self.degree, self.summed = X, Y, degree, summed
        self.nonneg = nonneg = _is_nonnegative(X) and _is_nonnegative(Y)
        self.gamma = float(rounding_gamma(min(max_nnz_per_row(X), max_nnz_per_row(Y)) + 2 * degree))
        self.count_shared = count_shared = not summed and (_zero_fraction(X) > 0.25 or _zero_fraction(Y) > 0.25)
        self.y_max = abs_max(Y)
        self.consts = consts = None if summed else \
            tuple(None if c is None else float(c) for c in closed_form_check_constants(degree, self.gamma))
        # the proven shortcuts of the first closed-form test (None where they do not apply)
        first = None if consts is None else consts[0]  # the first test's constant: a float whenever not summed
        self.witness: tuple[np.ndarray, np.ndarray] | None = None
        if not summed and not nonneg and not count_shared and not is_sparse(X):
            self.witness = _cauchy_schwarz_witness(X, Y, cast(float, first))
        self.vouch_count = _count_threshold(X, Y, degree, cast(float, first)) if count_shared and nonneg else None
        with np.errstate(over="ignore"):  # overflowing powers give inf: caught by the check
            self.YT: list[Any] = [None] + [_transposed(_small_power(Y, t)) for t in range(1, degree + 1)]
            Yabs = None if nonneg else abs(Y)
            self.YaT = {t: _transposed(_small_power(Yabs, t)) for t in ((1, 3) if degree == 3 and not summed else (1,))} \
                if not nonneg else {}
        self.maskT = np.ascontiguousarray(_transposed(Y != 0), dtype=np.float32) if count_shared else None
        # the witness (float32) shares the slot of the float64 |z| sums: A is computed only once the
        # witness is dropped for good (_witness_failures) or for a risky block, which skips the witness
        self.n_arrays = degree + (0 if nonneg else 1 + (degree == 3 and not summed)) + count_shared

    def run(self, symmetric: bool) -> np.ndarray:
        """The Gram (``symmetric``: the upper triangle, mirrored), by row blocks of at most
        GRAM_SCRATCH_BYTES of power sums, then the entries left open checked or recomputed."""
        nX, nY = self.X.shape[0], self.Y.shape[0]
        self.out = np.empty((nX, nY))
        rows_per_block = max(min(GRAM_MIN_ROWS, nX), block_bytes(GRAM_SCRATCH_BYTES) // (8 * nY * self.n_arrays))
        self.scratch = np.empty(min(rows_per_block, nX) * nY * self.n_arrays)
        self.sub_rows = max(1, FUSED_BYTES // (8 * nY))
        self.temps = np.empty((3, self.sub_rows * nY))
        self.few_buf = np.empty(self.sub_rows * nY, dtype=bool)
        self.bad_rows: list[np.ndarray] = []
        self.bad_cols: list[np.ndarray] = []
        self.unsure: list[tuple[np.ndarray, np.ndarray, list[np.ndarray]]] = []  # (rows, cols, gathered power sums) of entries the witness left open
        # the witness stays in use while few of its entries fail (_witness_failures turns it off)
        self.witness_state = [self.witness is not None, 0, 0]
        # BLAS keeps its own thread count: a library call must not change process-wide state (the app
        # serves many sessions from threads of one process), and on a quiet 2-core machine two threads
        # were faster (new/old 0.57-1.21 with two threads, 0.79-1.57 with one; benchmarks/results/numerics.md).
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for rows in row_batches(nX, rows_per_block):
                self._row_block(rows, rows.start if symmetric else 0)
        self._settle_open_entries()
        if symmetric:
            mirror_upper_triangle(self.out, rows_per_block)
        return self.out

    def _row_block(self, rows: slice, c0: int) -> None:
        """One row block, columns c0 onwards: its power sums (GEMMs into the scratch slots), then
        the fused passes over its cache-sized sub-blocks."""
        degree, nY = self.degree, self.Y.shape[0]
        r, w = rows.stop - rows.start, nY - c0
        slots = [self.scratch[i * r * w:(i + 1) * r * w].reshape(r, w) for i in range(self.n_arrays)]
        # a dense block with few non-zeros (one-hot-like rows) as CSR: its power sums and
        # shared-non-zero count become SpMMs over the stored entries (1/8 of the flops or less)
        Xb = as_sparse_if_sparse(self.X[rows])
        cols = slice(c0, nY)
        P: list[Any] = [None] + [gemm_into(1.0, _small_power(Xb, t), self.YT[t][:, cols], 0.0, slots[t - 1])
                      for t in range(1, degree + 1)]
        risky = may_overflow(abs_max(Xb), self.y_max, self.X.shape[1], degree)
        block = _BlockSums(self, Xb, rows, cols, slots, P)
        for sub in row_batches(r, self.sub_rows):
            self._sub_block(rows.start + sub.start, sub, c0, w, P, block, risky)

    def _sub_block(self, row0: int, sub: slice, c0: int, w: int, P: list, block, risky: bool) -> None:
        """One cache-sized sub-block (rows row0.. of the Gram, ``sub`` of its row block): the closed
        forms into the output with the check that applies (summed; the Cauchy-Schwarz witness; the
        shared-non-zero count; or the per-entry closed-form tests); the entries left open recorded."""
        degree, consts = self.degree, self.consts
        q = sub.stop - sub.start
        t = [tmp[:q * w].reshape(q, w) for tmp in self.temps]
        o = self.out[row0:row0 + q, c0:]
        Ps = [None] + [p[sub] for p in P[1:]]
        ok: np.ndarray | None
        if self.summed:
            ok = _summed_block(Ps, block("A")[sub], degree, self.gamma, risky, o, t)
        elif self.witness is not None and not risky and self.witness_state[0] and \
                (fails := _witness_failures(block("witness")[sub], self.witness_state)) is not None:
            _top_value(Ps, degree, o, t)
            if fails[0].size:  # checked at the end with their own |z| sums
                i, k = fails
                self.unsure.append((i + row0, k + c0, [p[i, k] for p in Ps[1:]]))
            return
        elif self.vouch_count is not None and not risky:
            ok = _top_counted(Ps, degree, consts, self.vouch_count, block("count")[sub], o, t,
                              self.few_buf[:q * w].reshape(q, w))
        else:
            few = (lambda s=sub, q=q: np.less(block("count")[s], degree,
                                              out=self.few_buf[:q * w].reshape(q, w))) if self.count_shared else None
            ok = _top_block(Ps, block("A")[sub], self.nonneg, degree, consts, risky, o, t,
                            lambda s=sub: block("pa3")[s], few)
        if ok is not None and not ok.all():
            i, k = np.divmod(np.flatnonzero(~ok), w)
            self.bad_rows.append(i + row0)
            self.bad_cols.append(k + c0)

    def _settle_open_entries(self) -> None:
        """The entries the witness could not vouch for: the closed-form tests, pair by pair; then
        every entry no check vouched for, recomputed by the stable recursion."""
        X, Y, degree = self.X, self.Y, self.degree
        unsure, bad_rows, bad_cols = self.unsure, self.bad_rows, self.bad_cols
        if unsure:
            rows_, cols_ = np.concatenate([u[0] for u in unsure]), np.concatenate([u[1] for u in unsure])
            P_ = [None] + [np.concatenate([u[2][t] for u in unsure]) for t in range(degree)]
            ok = _gathered_check(X, Y, rows_, cols_, P_, degree, self.consts)
            bad_rows.append(rows_[~ok])
            bad_cols.append(cols_[~ok])
        if bad_rows:
            rows_, cols_ = np.concatenate(bad_rows), np.concatenate(bad_cols)
            self.out[rows_, cols_] = elementary_pairs(X, Y, rows_, cols_, degree, summed=self.summed)


class _BlockSums:
    """One row block's |z| power sums ("A", "pa3"), shared-non-zero count ("count") or
    Cauchy-Schwarz witness ("witness"), computed the first time they are asked for (``block(key)``)."""

    def __init__(self, gram: _FusedGram, Xb, rows: slice, cols: slice, slots: list, P: list):
        self.gram, self.Xb, self.rows, self.cols, self.slots, self.P = gram, Xb, rows, cols, slots, P
        self.lazy: dict = {}

    def __call__(self, key: str) -> np.ndarray:
        lazy, g, Xb, cols, slots = self.lazy, self.gram, self.Xb, self.cols, self.slots
        if key not in lazy:
            degree = g.degree
            if key == "A":
                lazy.pop("witness", None)  # same slot
                lazy[key] = self.P[1] if g.nonneg else gemm_into(1.0, abs(Xb), g.YaT[1][:, cols], 0.0, slots[degree])
            elif key == "pa3":
                lazy[key] = self.P[3] if g.nonneg else gemm_into(1.0, _small_power(abs(Xb), 3), g.YaT[3][:, cols], 0.0,
                                                                 slots[degree + 1])
            else:
                r, w = slots[0].shape
                slot = slots[-1] if key == "count" else slots[degree]
                buf = slot.reshape(-1).view(np.float32)[:r * w].reshape(r, w)
                if key == "count":  # exact below 2^24
                    assert g.maskT is not None  # built whenever the shared non-zeros are counted
                    lazy[key] = gemm_into(1.0, (Xb != 0).astype(np.float32), g.maskT[:, cols], 0.0, buf)
                else:
                    assert g.witness is not None  # asked for only while the witness is in use
                    XA, YAT = g.witness
                    lazy[key] = gemm_into(1.0, XA[self.rows], YAT[:, cols], 0.0, buf)
        return lazy[key]


def _small_power(A, t: int):
    """Element-wise t-th power by repeated products (t <= 3: two roundings at most, which the
    gamma of the check covers; 4x faster than ``**`` for t = 3), keeping sparsity."""
    if t == 1:
        return A
    if t == 2:
        return A.multiply(A) if is_sparse(A) else A * A
    if t == 3:
        return A.multiply(A).multiply(A) if is_sparse(A) else np.multiply(A * A, A)
    return elementwise_power(A, t)


def _levels_in_range(a: np.ndarray, b: np.ndarray, d: int, degree: int) -> bool:
    """Whether a_i^m / m!, b_k^m and their products with C(d, m) stay normal float64 numbers
    (decided on exponents, so nothing here overflows)."""
    a, b = np.abs(a[a != 0]), np.abs(b[b != 0])
    if not a.size or not b.size:
        return True
    la, lb = np.log2(a), np.log2(b)
    lo = degree * (float(la.min()) + float(lb.min()))
    hi = degree * (float(la.max()) + float(lb.max()) + np.log2(d))
    return -900.0 <= lo and hi <= 900.0 and -300.0 <= min(la.min(), lb.min()) and max(la.max(), lb.max()) <= 300.0


def _level_gram(X, Y, a: np.ndarray, b: np.ndarray, degree: int, symmetric: bool) -> np.ndarray:
    """The ANOVA Gram of rows whose non-zeros share one value per row (:func:`row_levels`):
    z_j = a_i b_k on the c_ik shared non-zeros, so e_m = C(c_ik, m) (a_i b_k)^m, with c from one
    float32 GEMM of the non-zero patterns (exact below 2^24). C(c, m) is an exact integer; the
    factors a^m / m! and b^m add at most 2 m + 2 roundings: relative error below (2 m + 3) u,
    far inside the accuracy contract (sum_V |prod z_j| = |e_m| here). Pairs with fewer than m
    shared non-zeros get exactly 0.0. One GEMM instead of m GEMMs, no check, no fallback."""
    nX, nY = X.shape[0], Y.shape[0]
    fa = (a ** degree / math.factorial(degree))[:, None]
    fb = b ** degree
    maskT = np.ascontiguousarray((Y.toarray() if is_sparse(Y) else Y).T != 0, dtype=np.float32)
    out = np.empty((nX, nY))
    rows_per_block = max(min(GRAM_MIN_ROWS, nX), block_bytes(GRAM_SCRATCH_BYTES) // (4 * nY))
    count = np.empty(min(rows_per_block, nX) * nY, dtype=np.float32)
    sub_rows = max(1, FUSED_BYTES // (8 * nY))
    tmp = np.empty(sub_rows * nY)
    for rows in row_batches(nX, rows_per_block):
        c0 = rows.start if symmetric else 0
        r, w = rows.stop - rows.start, nY - c0
        Xb = X[rows]
        cnt = gemm_into(1.0, (Xb != 0).astype(np.float32), maskT[:, c0:], 0.0, count[:r * w].reshape(r, w))
        for sub in row_batches(r, sub_rows):
            o = out[rows.start + sub.start:rows.start + sub.stop, c0:]
            c = cnt[sub]
            np.subtract(c, 1.0, out=o)  # c (c - 1) [(c - 2)]: exact integers
            o *= c
            if degree == 3:
                t = tmp[:o.size].reshape(o.shape)
                np.subtract(c, 2.0, out=t)
                o *= t
            o *= fa[rows.start + sub.start:rows.start + sub.stop]
            o *= fb[c0:]
            o += 0.0  # -0.0 (from 0 * (0 - 1)) to +0.0
    if symmetric:
        mirror_upper_triangle(out, rows_per_block)
    return out
