"""Proven shortcuts of the first closed-form test of rkcore.kernels.numerics.newton_is_safe for
whole blocks of the ANOVA Gram: a float32 Cauchy-Schwarz witness and a shared-non-zero count."""
from __future__ import annotations

from typing import cast

import numpy as np
import scipy.sparse as sp

from .numerics import UNIT_ROUNDOFF, _deterministic_gamma
from ..base.annotations import is_sparse


def _nonzero_abs_range(A) -> tuple[float, float]:
    """(smallest non-zero |a|, largest |a|); (inf, 0) when A is all zeros."""
    data = np.abs(cast("sp.csr_matrix", A).data if is_sparse(A) else A)  # canonical CSR here: the engines' inputs pass canonical_csr
    nz = data[data > 0] if is_sparse(A) or np.count_nonzero(data) < data.size else data
    return (float(nz.min()), float(nz.max())) if nz.size else (np.inf, 0.0)


def _cauchy_schwarz_witness(X: np.ndarray, Y, c: float):
    """float32 (|X|, -s) and (|Y|, t)^T (augmented by one column / row, each row scaled by a power
    of two) whose product V_ik = 2^(-p_i - q_k) (sum_j |x_ij| |y_kj| - s_i t_k), computed by a
    float32 GEMM, vouches for the first closed-form test of :func:`newton_is_safe`
    (Pa_2 <= c A^2, A = sum_j |z_j|) wherever V_ik >= 0; None where a row's non-zeros span
    more than 2^60 (the float32 argument needs normal numbers).

    Proof (u, u' the float64 / float32 unit roundoffs, g_n, g'_n their :func:`_deterministic_gamma`):
    by Cauchy-Schwarz, Pa_2 = sum x_j^2 y_j^2 <= sqrt(Q_i R_k), Q_i = sum_j x_ij^4, R_k likewise.
    The reference test compares the float64 GEMMs Pa_2' <= (1 + u)^2 (1 + g_d) Pa_2 (squares
    rounded, then d non-negative products) and A' >= (1 - g_d) A with fl(c fl(A'^2)) >=
    c A^2 (1 - g_d)^2 (1 - u)^2, so it passes when A >= (Q_i R_k)^(1/4) G with
    G^2 = (1 + u)^2 (1 + g_d) / (c (1 - g_d)^2 (1 - u)^2). Scaling row i by 2^-p_i (its largest
    |x_ij| to [1/2, 1)) is exact and scales both sides alike. The float32 GEMM adds d + 1 terms
    with |error| <= g'_{d+1} (sum a_j b_j + s t), a_j = fl32(|x_j|) <= |x_j| (1 + u'), so
    computed V >= 0 gives A >= s t (1 - g'_{d+1}) / ((1 + g'_{d+1}) (1 + u')^2); s_i, t_k are
    Q^(1/4), R^(1/4) times sqrt(G) times that factor's inverse square root, inflated for their
    own float64 rounding and rounded up to float32. Scaled non-zeros lie in [2^-61, 1), so every
    product is a normal float32 and every sum stays below 4 (d + 1): the error bounds hold as
    stated, and monotone rounding makes "implies" exact.
    """
    d = X.shape[1]
    u32 = 2.0**-24
    if d > 2**16 or not np.isfinite(c) or c <= 0:
        return None
    g64, g32 = _deterministic_gamma(d), _deterministic_gamma(d + 1, u32)
    u = UNIT_ROUNDOFF
    G2 = (1 + u) ** 2 * (1 + g64) / (c * (1 - g64) ** 2 * (1 - u) ** 2)
    G2 *= (1 + g32) * (1 + u32) ** 2 / (1 - g32)
    # float64 rounding of Q (d terms of x^4: 3 roundings each, then the sum), two square roots and
    # the products below: far less than this margin
    side = np.sqrt(np.sqrt(G2)) * (1 + 16 * (d + 8) * u)

    def scaled(A):
        """(|A| with each row scaled by a power of two to a largest entry in [1/2, 1), as float32;
        s of those rows, rounded up to float32) or None when a row's range is too wide."""
        A = np.abs(A.toarray() if is_sparse(A) else A)
        top = A.max(axis=1)
        exponent = np.frexp(top)[1]
        A = np.ldexp(A, -exponent[:, None])
        low = np.where(A > 0, A, 1.0).min(axis=1)
        if float(low.min(initial=1.0)) < 2.0**-61:
            return None
        sq = A * A
        s = np.sqrt(np.sqrt(np.einsum("ij,ij->i", sq, sq))) * side
        s32 = s.astype(np.float32)
        return A.astype(np.float32), np.where(s32 < s, np.nextafter(s32, np.float32(np.inf)), s32)

    sx = scaled(X)
    sy = sx if Y is X else scaled(Y)
    if sx is None or sy is None:
        return None
    XA = np.empty((X.shape[0], d + 1), dtype=np.float32)
    XA[:, :d] = sx[0]
    XA[:, d] = -sx[1]
    YAT = np.empty((d + 1, Y.shape[0]), dtype=np.float32)
    YAT[:d] = sy[0].T
    YAT[d] = sy[1]
    return XA, YAT


def _count_threshold(X, Y, degree: int, c: float):
    """For non-negative X, Y: the smallest integer k such that every pair sharing at least k
    non-zeros passes the first closed-form test of :func:`newton_is_safe` (Pa_2 <= c A^2), or
    None when that k would exceed degree + 2 (then the count does not help).

    Proof: with rho_i = max_j x_ij / min_{j: x_ij > 0} x_ij (likewise for y), every non-zero
    z_j = x_ij y_kj lies in [z_min, rho_i rho_k z_min], so for k shared non-zeros Pa_2 <=
    max_j z_j A <= rho_i rho_k A^2 / k. The reference test compares Pa_2' <= (1 + u)^2 (1 + g_d)
    Pa_2 with fl(c fl(A'^2)) >= c A^2 (1 - g_d)^2 (1 - u)^2 (notation of
    :func:`_cauchy_schwarz_witness`; A' = P_1 for non-negative data), so it passes when
    k >= rho_X rho_Y (1 + u)^2 (1 + g_d) / (c (1 - g_d)^2 (1 - u)^2), rho_X the largest rho_i.
    """
    d = X.shape[1]
    if not np.isfinite(c) or c <= 0:
        return None
    # the rounding-error bounds below need normal float64 squares and products (no underflow)
    if min(_nonzero_abs_range(X)[0], _nonzero_abs_range(Y)[0]) < 2.0**-250:
        return None

    def largest_ratio(A):
        if is_sparse(A):
            A = sp.csr_matrix(A)
            hi = np.asarray(A.max(axis=1).todense()).reshape(-1)
            data = np.where(A.data > 0, A.data, np.inf)
            counts = np.diff(A.indptr)
            lo = np.full(A.shape[0], np.inf)
            has = counts > 0
            lo[has] = np.minimum.reduceat(data, A.indptr[:-1][has])
        else:
            hi = A.max(axis=1)
            lo = np.where(A > 0, A, np.inf).min(axis=1)
        live = np.isfinite(lo)
        return float((hi[live] / lo[live]).max(initial=1.0)) * (1 + 4 * UNIT_ROUNDOFF)

    u, g64 = UNIT_ROUNDOFF, _deterministic_gamma(d)
    kappa = largest_ratio(X) * largest_ratio(Y) * (1 + u) ** 2 * (1 + g64) / (c * (1 - g64) ** 2 * (1 - u) ** 2)
    kappa *= 1 + 8 * u  # rounding of this product
    k = int(np.ceil(kappa)) if np.isfinite(kappa) else None
    return max(k, degree) if k is not None and k <= degree + 2 else None


#: The Cauchy-Schwarz witness is used while at most this fraction of its entries fail: each failing
#: entry then costs a gathered dot product (a few hundred ns), the alternative a float64 GEMM of
#: |x| |y|^T for the row block and the per-entry test (a few ns per entry).
WITNESS_MAX_FAIL = 1.0 / 64


def _witness_failures(v: np.ndarray, state: list):
    """The entries of the witness sub-block ``v`` (see :func:`_cauchy_schwarz_witness`) that it
    cannot vouch for, as np.nonzero indices (empty when it vouches for all), or None when too
    many fail. ``state`` = [in use, failing entries, entries seen]: the witness is dropped for
    the rest of the Gram once more than WITNESS_MAX_FAIL of the entries seen so far failed."""
    state[2] += v.size
    if v.min() >= 0:
        return (np.empty(0, dtype=np.intp),) * 2
    flat = np.flatnonzero(v < 0)  # 10x faster than np.nonzero on a 2-D array
    state[1] += flat.size
    if state[1] > WITNESS_MAX_FAIL * state[2]:
        state[0] = False
        return None
    return np.divmod(flat, v.shape[1])
