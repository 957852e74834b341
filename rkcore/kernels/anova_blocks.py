"""RK features of the ANOVA kernel of order 2 and 3 for one row block, in place, with the fused
pre-check of the accuracy contract (rkcore.kernels.numerics) for non-Rademacher weights."""
from __future__ import annotations

from typing import cast

import numpy as np
import scipy.sparse as sp
from scipy.linalg import blas

from .all_subsets_blocks import padded_support
from .blas_blocks import (CACHE_BLOCK_BYTES, GEMM_BLOCK_TEMPORARIES, _memo, _power, _row_sums, _RowProduct, _tiles,
                          as_sparse_if_sparse, gemm_into, one_blas_thread, product_chunks)
from .numerics import closed_form_check_constants, newton_is_safe
from ..base.annotations import is_sparse

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

    Called as ``block(Xb, out, sums=None)`` it writes the features into the C-contiguous
    (rows, D) float32 or float64 ``out`` and returns it. These values are Newton's closed forms,
    NOT yet within the accuracy contract: the caller checks them (from ``sums``, or through
    :meth:`checked`) and repairs what the check rejects (:mod:`rkcore.maps.rk_blocks`).

    Parameters
    ----------
    W : ndarray of shape (D_total, d)
        The random weights (several maps' weights may be stacked: D_total rows).
    degree : {2, 3}
        The ANOVA order m.
    signs : bool
        W holds Rademacher weights (entries exactly +1 or -1): even powers become row sums.
    n_components : int, optional
        The D of 1/sqrt(D); None: the rows of W.

    Raises
    ------
    ValueError
        When ``degree`` is not 2 or 3.
    """

    gemm: bool  # set by rkcore.kernels.fastpaths.rk_block: GEMM-bound (keep row blocks large)

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
        """Write the block's features into ``out`` and return the entries the accuracy check leaves.

        For non-Rademacher weights and float64 output only: the closed forms are fused with a
        proven sufficient condition for :func:`rkcore.kernels.numerics.newton_is_safe` (tier 1,
        :meth:`_tier1`, on L2-sized row chunks), and newton_is_safe itself decides the entries
        tier 1 leaves (tier 2, :meth:`_tier2`, which computes their power sums of |z| only).
        Every entry not returned meets the accuracy contract of :mod:`rkcore.kernels.numerics`;
        the caller recomputes the returned ones by the stable recursion.

        Parameters
        ----------
        Xb : ndarray or scipy.sparse.csr_matrix of shape (n_rows, n_features)
            One row block of the data, float64, dense or CSR (a dense block with few non-zeros is
            read as CSR).
        out : ndarray of shape (n_rows, D), float64, C-contiguous
            Written in place with the block's features e_m(x, w_s) / sqrt(D).
        gamma : float
            The relative rounding bound of the check, ``rounding_gamma(max non-zeros per row +
            2 m)`` as the callers pass it. The caller must have ruled out overflow
            (:func:`rkcore.kernels.numerics.may_overflow` false for this block).

        Returns
        -------
        tuple of (ndarray, ndarray) or None
            ``(rows, cols)``, int arrays of the entries of ``out`` whose closed-form value
            newton_is_safe does NOT vouch for (empty arrays when it vouches for all). None when
            this path does not apply (Rademacher weights, float32 output, or gamma so large that
            newton_is_safe accepts only P2 = 0: :func:`anova_tier1_constants` is None); ``out``
            is then not written and the caller runs the unfused check.
        """
        consts = anova_tier1_constants(self.m, gamma)
        if consts is None or self.signs or out.dtype != np.float64:
            return None
        Xb = as_sparse_if_sparse(Xb)
        absX = abs(Xb)
        left = self._tier1(Xb, absX, out, consts)
        flat = np.concatenate(left["flat"]) if left["flat"] else np.empty(0, dtype=np.intp)
        if not len(flat):
            return flat, flat
        return self._tier2(Xb, absX, out, flat, left, gamma)

    def _tier1(self, Xb, absX, out: np.ndarray, consts: dict) -> dict:
        """Tier 1 of :meth:`checked`: the closed forms into ``out`` and, on the same L2-sized row
        chunks, tests that vouch for most entries without a power sum of |z| (derivations:
        :func:`_anova2_tier1_constants`, :func:`_cancellation_test_rho`, :func:`_anova3_tier1_constants`):

        * m = 2: |e| >= rho P2 (e the computed, scaled feature) where rho exists (d <~ 130: it
          leaves ~10% of N(0, 1) rows' entries, the max test ~25%; MovieLens-like rows, few
          non-zeros, pass it but not the max test), then the max test max_j|x_j|^2
          max_j|c w_j|^2 <= kappa_max P2 on what it left (else on the whole chunk: the test
          that passes on dense rows with many non-zeros, d = 512 or 1,000), then its refined
          form (dense blocks);
        * m = 3: newton_is_safe's branch 1 itself (P2 <= c A^2 on the same A = |X| |W|^T GEMM),
          then its branch 2 with the lower bound |P3| (1 - 5 gamma) of Pa3 (the branch is
          monotone in Pa3: this only rejects more).

        A block of few rows (FEW_ROWS; the pair variances: ~6 rows, 32,000 features) skips the
        m = 2 tests: their per-feature data (maxima, top two, padded |W|: several passes over the
        D x d weights) costs more than one GEMM of the block's rows against |W|, which tier 2 then
        runs for every entry. Returns the entries left, as flat indices into the block with the
        values tier 2 needs ({"flat", "P2", "A"}: lists of arrays, one per chunk), gathered for one
        batch per block (per-chunk calls cost more than the work).
        """
        dt = out.dtype
        n, D = out.shape
        m = self.m
        few_rows = n <= FEW_ROWS
        max_q = self._max_test_factors(absX, consts["kappa_max"]) if m == 2 and not few_rows else None
        rho = None if few_rows else consts.get("rho")
        step = max(1, CACHE_BLOCK_BYTES // (8 * D))
        P2 = _RowProduct(_power(Xb, 2), self._weights(2, dt), out.shape, dt, step)
        if m == 3:
            P3 = _RowProduct(_power(Xb, 3), self._weights(3, dt), out.shape, dt, step)
            A = _RowProduct(absX, self._abs_weights(1), out.shape, dt, step)
        t_buf, u_buf = np.empty((min(n, step), D)), np.empty((min(n, step), D))
        mask_buf = np.empty((min(n, step), D), dtype=bool)
        left: dict = {"flat": [], "P2": [], "A": []}
        for r, o in product_chunks(Xb, self._weights(1, dt), out):  # o = P1 on the chunk
            k = r.stop - r.start
            p2, t, u, mask = P2.rows(r), t_buf[:k], u_buf[:k], mask_buf[:k]
            if m == 2:
                _anova2_chunk(o, p2, r, max_q, rho, t, u, mask)
            else:
                p3, a = P3.rows(r), A.rows(r)
                bound = _anova3_chunk(o, p2, p3, a, consts["c"], t, u, mask)
            idx = np.flatnonzero(mask)
            if not len(idx):
                continue
            if m == 2 and max_q is not None and (rho is not None or max_q[2] is not None):
                idx = self._max_tests_on_left(idx, r, D, p2, max_q, rho)
            if m == 3:
                idx, A_left = _anova3_branch2_on_left(idx, p2, p3, a, bound, consts)
                left["A"].append(A_left)
            left["P2"].append(p2.ravel()[idx])
            left["flat"].append(idx + r.start * D)
        return left

    def _max_tests_on_left(self, idx: np.ndarray, r: slice, D: int, p2: np.ndarray, max_q, rho) -> np.ndarray:
        """m = 2, on the entries ``idx`` (flat, in the chunk ``r``) the first test left: the max
        test (after |e| >= rho P2), then its refined form (dense blocks); the entries still left."""
        rows_i, cols_i, p2_i = r.start + idx // D, idx % D, p2.ravel()[idx]
        still = max_q[0][rows_i] * max_q[1][cols_i] > p2_i if rho is not None else None
        if max_q[2] is not None:
            sel = np.flatnonzero(still) if still is not None else slice(None)
            refined = ~self._refined_max_ok(max_q[2], rows_i[sel], cols_i[sel], p2_i[sel])
            if still is None:
                still = refined
            else:
                still[sel] = refined
        return idx[still]

    def _tier2(self, Xb, absX, out: np.ndarray, flat: np.ndarray, left: dict, gamma: float):
        """Tier 2 of :meth:`checked`: the power sums of |z| for the entries tier 1 left (``flat``,
        with ``left`` from :meth:`_tier1`) and newton_is_safe's verdict on them; returns the
        (rows, cols) it rejects. Where more than TIER2_GEMM_FRACTION of the block's entries are
        left, one GEMM over the block gives the sums; else a gather over each entry's row."""
        n, D = out.shape
        m = self.m
        rows, cols = np.divmod(flat, D)
        Pa = [None, None, np.concatenate(left["P2"])]
        frac = TIER2_GEMM_FRACTION if is_sparse(Xb) else TIER2_GEMM_FRACTION_DENSE
        if len(flat) > frac * n * D:  # many: GEMMs over the block
            scratch = np.empty_like(out)
            if m == 2:
                Pa[1] = gemm_into(1.0, absX, self._abs_weights(1), 0.0, scratch).ravel()[flat]
            Pa.append(None if m == 2 else
                      gemm_into(1.0, _power(absX, 3), self._abs_weights(3), 0.0, scratch).ravel()[flat])
        else:  # few: sums over each pair's stored entries
            # the support of the rows involved only; dense rows: the rows themselves
            live, local = np.unique(rows, return_inverse=True)
            support = (padded_support(cast("sp.csr_matrix", absX)[live], pad_col=Xb.shape[1]) if is_sparse(absX)  # canonical CSR here: the engines' inputs pass canonical_csr
                       else absX[live])
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
        of the derivation (_anova2_tier1_constants: no underflow in the products it bounds)
        fails for the block (tiny data or weights; the other tests still run)."""
        w1max = _memo(self._cast, "w1max", lambda: np.abs(self._weights(1, np.float64)).max(axis=0, initial=0.0))
        if is_sparse(absX):
            absX = cast("sp.csr_matrix", absX)  # canonical CSR here: the engines' inputs pass canonical_csr
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
        if is_sparse(absX) or absX.shape[1] < 2:
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
        the max test with this smaller M (derivation: _anova2_tier1_constants)."""
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


def _anova2_chunk(o, p2, r: slice, max_q, rho, t, u, mask) -> None:
    """m = 2 on one chunk: ``o`` (P1 on entry) becomes the scaled feature e = P1^2 - P2, ``mask``
    where the first tier-1 test does not vouch (all entries where no test applies); t, u scratch."""
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


def _anova3_chunk(o, p2, p3, a, c: float, t, u, mask) -> np.ndarray:
    """m = 3 on one chunk: ``o`` (P1 on entry) becomes the scaled feature P1 (P1^2 - 3 P2) + 2 P3
    (``p3`` is doubled in place), ``mask`` where newton_is_safe's branch 1 fails (the same
    operations on the same values); returns its bound fl(fl(A A) c) (held in ``u``)."""
    np.multiply(p2, 3.0, out=t)
    np.multiply(o, o, out=u)
    u -= t
    o *= u
    p3 *= 2.0
    o += p3  # e_3 (scaled) = P1 (P1^2 - 3 P2) + 2 P3
    # newton_is_safe's branch 1, the same operations on the same values
    bound = np.multiply(a, a, out=u)
    bound *= c
    np.greater(p2, bound, out=mask)  # not (P2 <= bound): branch 1 fails
    return bound


def _anova3_branch2_on_left(idx, p2, p3, a, bound, consts: dict):
    """m = 3, on the entries ``idx`` branch 1 left: newton_is_safe's branch 2 with the lower bound
    |P3| pa3_lower of Pa3 (:func:`_anova3_tier1_constants`; ``p3`` holds 2 P3). Returns the
    entries still left and their A."""
    A_i, B_i = a.ravel()[idx], bound.ravel()[idx]
    lhs_b = np.abs(p3.ravel()[idx]) * (0.5 * consts["pa3_lower"])  # p3 holds 2 P3
    lhs_b *= consts["c_b"]
    lhs_b /= np.where(A_i > 0, A_i, 1.0)
    lhs_b = np.subtract(p2.ravel()[idx], lhs_b, out=lhs_b)
    still = ~(lhs_b <= B_i)
    return idx[still], A_i[still]


def anova_tier1_constants(degree: int, gamma: float) -> dict | None:
    """Constants of the tier-1 tests of :meth:`AnovaBlock.checked`, proven sufficient conditions
    for :func:`rkcore.kernels.numerics.newton_is_safe`.

    Parameters
    ----------
    degree : int
        The ANOVA order m: 2 or 3 (any other order gives None).
    gamma : float
        The relative rounding bound of the check (``rounding_gamma(max non-zeros per row + 2 m)``).

    Returns
    -------
    dict or None
        m = 2: ``{"kappa_max": float, "rho": float or None}`` (the max test's constant and that of
        |e| >= rho P2, None beyond d ~ 130 where it rejects too much; derivations in
        :func:`_anova2_tier1_constants` and :func:`_cancellation_test_rho`). m = 3:
        ``{"c": float, "c_b": float, "pa3_lower": float}`` (:func:`_anova3_tier1_constants`).
        None where the tests would reject nearly all entries (then the unfused check runs): where
        newton_is_safe's own constant is <= 0, so that it accepts only P2 = 0 (m = 2: gamma above
        ~7e-14; m = 3: above ~4.9e-14, d ~ 1,900 under the probabilistic gamma).

    Notes
    -----
    Notation of the derivations: z_j = c x_j w_j the scaled products, P1, P2 (p1, p2 computed)
    their power sums, A = sum_j |z_j| exactly and A_c >= (1 - gamma) A the computed sum that
    newton_is_safe would use; gamma >= 5 u (u the unit roundoff), so 20 gamma covers any
    rounding of a few operations. Underflowed values are covered, as for newton_is_safe, by the
    contract's absolute underflow slack.
    """
    g = float(gamma)
    if degree == 2:
        return _anova2_tier1_constants(g)
    if degree == 3:
        return _anova3_tier1_constants(g)
    return None


def _anova2_tier1_constants(g: float) -> dict | None:
    """m = 2 (notation of :func:`anova_tier1_constants`): kappa_max of the max test, rho of the
    |e| >= rho P2 test (:func:`_cancellation_test_rho`, used where kappa > 0.75, about d <= 130:
    beyond, rho exceeds 0.33), None where newton_is_safe's kappa is <= 0. newton_is_safe accepts
    iff p2 <= kappa A_c^2, kappa = :func:`rkcore.kernels.numerics.closed_form_check_constants` (2, gamma),
    about 1 - 31 gamma - 20.8 gamma / tol.

    The max test (``kappa_max`` = kappa (1 - 20 gamma), any kappa > 0). Let
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
    """
    kappa = float(closed_form_check_constants(2, g)[0])  # newton_is_safe's own constant
    if not kappa > 0.0:  # newton_is_safe accepts only P2 = 0: nothing to gain
        return None
    consts = {"kappa_max": kappa * (1.0 - 20.0 * g), "rho": None}
    if kappa > 0.75:  # the |e| >= rho P2 test; above ~d = 130 its rho makes it useless
        consts["rho"] = _cancellation_test_rho(kappa, g)
    return consts


def _cancellation_test_rho(kappa: float, g: float) -> float:
    """rho of the m = 2 test |e| >= rho p2 (notation of :func:`anova_tier1_constants`).

    Exact facts: A >= |P1| and A^2 = P2 + 2 e_2(|z|) >= P2 + 2 |e_2(z)| = P2 + |P1^2 - P2|,
    so A^2 >= max(P1^2, 2 P2 - P1^2). With |p1 - P1| <= gamma A, |p2 - P2| <= gamma P2:

    * A_c^2 >= (1 - 4 gamma) p1^2, so s = p1^2 - p2 >= rho1 p2 with rho1 = 1 / kappa_a - 1
      gives p2 <= kappa A_c^2;
    * A_c^2 >= 2 (1 - 5 gamma) p2 - (1 + gamma) p1^2, so s <= -rho2 p2 with
      rho2 = 1 - (2 (1 - 10 gamma) kappa_a - 1) / ((1 + 2 gamma) kappa_a) gives the same.

    kappa_a = kappa (1 - 20 gamma) absorbs the evaluation rounding of newton_is_safe and the
    few-ulp difference between fl(c^2 w^2) (P2's weights) and fl(c w)^2; rho = max(rho1, rho2)
    (1 + 20 gamma) + 20 gamma absorbs the rounding of the computed e = fl(fl(p1^2) - p2)
    (|e - s| <= 2.02 u (p1^2 + p2)) and of rho p2. Hence |e| >= rho p2 implies newton_is_safe.
    Useful where kappa > 0.75 (about d <= 130): beyond, rho exceeds 0.33 and |P1|, of order
    sqrt(P2) for signed data, is far below A, of order d.
    """
    kappa_a = kappa * (1.0 - 20.0 * g)
    rho1 = 1.0 / kappa_a - 1.0
    rho2 = 1.0 - (2.0 * (1.0 - 10.0 * g) * kappa_a - 1.0) / ((1.0 + 2.0 * g) * kappa_a)
    return max(rho1, rho2) * (1.0 + 20.0 * g) + 20.0 * g


def _anova3_tier1_constants(g: float) -> dict | None:
    """m = 3 (notation of :func:`anova_tier1_constants`): (c, c_b) are newton_is_safe's own
    constants (closed_form_check_constants), and AnovaBlock.checked evaluates its branch 1,
    P2 <= fl(fl(A A) c), with the same operations on the same computed P2 and A (the GEMMs the
    unfused check would run): the same verdict, no margin. Branch 2 (P2 - c_b Pa3 / A <= that
    bound) is evaluated where branch 1 fails with L = fl(|p3| pa3_lower) in place of Pa3_c,
    pa3_lower = 1 - 5 gamma: the terms of Pa3 are exactly the magnitudes of P3's (|x^3| =
    |x|^3, |fl(w^3) c^3| = fl(|w|^3 c^3)), so Pa3_c >= (1 - 2 gamma) |p3| and
    L <= (1 + u)(1 - 5 gamma) / (1 - 2 gamma) Pa3_c <= (1 - 2.8 gamma) Pa3_c. newton_is_safe
    forms c_b Pa3 / A in one of two orders (whole-array or masked); either is within 2.01 u of
    the exact c_b Pa3_c / A, as fl(fl(c_b L) / A) is of c_b L / A, so ours is below theirs
    (2 (2.01 u) < 2.8 gamma, gamma >= 5 u) and the final subtraction from P2, a monotone
    rounding, gives ours >= theirs: where ours passes, theirs does. None where c <= 0
    (newton_is_safe's branch 1 accepts only P2 = 0; gamma above about 4.9e-14, d ~ 1,900
    under the probabilistic gamma).
    """
    c, c_b = (float(v) for v in closed_form_check_constants(3, g))  # newton_is_safe's own
    if not c > 0.0:
        return None
    return {"c": c, "c_b": c_b, "pa3_lower": 1.0 - 5.0 * g}
