"""Exact itemset kernels as Gram matrices.

Every function has the signature ``(X, Y=None, ...)``, accepts dense arrays or
scipy.sparse matrices, and returns a dense float64 array of shape
(n_samples_X, n_samples_Y). ANOVA-type kernels use the power-sum recursion
(paper eq. 12) on matrix products, so their cost is a few GEMMs of the data.

Accuracy contract
-----------------
For any finite input, every value K_S(x, y) returned here (and every RK/SCRK feature
K_S(x, w) / sqrt(D), and the factorization machine's forward pass) is within

    CONTRACT_RTOL * sum_{V in S} |prod_{j in V} z_j|,   z = x * y (or x * w),

of the exact value (plus the float64 underflow threshold), and is never NaN or inf
where the exact value is a finite float64. Where the exact value is 0 because fewer
than m products z_j are non-zero, 0.0 is returned exactly.

Newton's identities (the fast path) cancel catastrophically when one |z_j| dominates
or m is close to d. :func:`newton_is_safe` bounds their rounding error a posteriori
from the power sums of |z| (for Rademacher weights: row sums) and the entries where
the bound exceeds the contract are recomputed by :func:`elementary_stable`, the
recursion e_k <- e_k + z_j e_{k-1} (Blondel et al. 2016) over their non-zeros, in
(mantissa, exponent) form so that no intermediate overflows or underflows.

The bound models the rounding error of an inner product of n non-zero terms as
gamma_n * sum |terms| with gamma_n = u * min(n, LAMBDA * sqrt(n)), u = 2^-53: the
deterministic worst case for n <= LAMBDA^2 = 100, and above that the probabilistic
bound of Higham & Mary (SIAM J. Sci. Comput. 2019), which fails with probability
below n * 2 exp(-LAMBDA^2 / 2) ~ 4e-22 n under their model of independent rounding.
"""
from __future__ import annotations

import math
from typing import Iterator

import numpy as np
import scipy.sparse as sp

from .fastpaths import all_subsets_gram, as_sparse_if_sparse, gemm_into, mirror_upper_triangle, row_levels
from .itemsets import MAX_ENUMERATION, ItemsetFamily
from ..base.validation import check_int

#: Bytes of temporary memory one block of a blocked computation may use.
BLOCK_BYTES = 64 * 2**20

#: Relative accuracy promised against sum_V |prod_{j in V} z_j| (see the module docstring).
CONTRACT_RTOL = 1e-12
#: Unit roundoff of float64.
UNIT_ROUNDOFF = 2.0**-53
#: lambda of the probabilistic rounding-error bound (see the module docstring).
ROUNDING_LAMBDA = 10.0
#: Exponent that stands for "exactly zero" in the (mantissa, exponent) recursion.
_ZERO_EXPONENT = -(2**40)


def is_integer(value) -> bool:
    """True for Python / numpy integers, False for bool, floats (even 2.0) and everything else."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_array(X, name: str = "X") -> np.ndarray | sp.csr_matrix:
    """Validate a data matrix: 2-D, numeric, finite; returns float64 (dense or CSR)."""
    complex_error = f"{name} holds complex numbers; only real values are allowed (the imaginary part would be lost)."
    if sp.issparse(X):
        if np.iscomplexobj(X.data):
            raise ValueError(complex_error)
        X = sp.csr_matrix(X, dtype=np.float64)
        data = X.data
    else:
        try:
            X = np.asarray(X)
            if np.iscomplexobj(X):
                raise ValueError(complex_error)
            X = X.astype(np.float64, copy=False)
        except ValueError as err:
            if str(err) == complex_error:
                raise
            raise ValueError(
                f"{name} must be a numeric matrix with rows of equal length; it is ragged or holds values "
                "that are not numbers."
            ) from None
        except TypeError:
            raise ValueError(
                f"{name} must be a numeric matrix with rows of equal length; it is ragged or holds values "
                "that are not numbers."
            ) from None
        data = X
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix (n_samples, n_features), got {X.ndim} dimension(s).")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {X.shape}); it needs at least one sample and one feature.")
    if not np.isfinite(data).all():
        raise ValueError(f"{name} contains NaN or infinity; only finite values are allowed.")
    return X


def _pair(X, Y):
    X = check_array(X, "X")
    Y = X if Y is None else check_array(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}; they must match.")
    return X, Y


def _dense(A) -> np.ndarray:
    return A.toarray() if sp.issparse(A) else A


def _power(A, t: int):
    """Element-wise t-th power, keeping sparsity."""
    if t == 1:
        return A
    return A.power(t) if sp.issparse(A) else A**t


def _gram(A, B) -> np.ndarray:
    """A @ B.T as a dense float64 array (A, B dense or sparse)."""
    out = A @ B.T
    return _dense(out) if sp.issparse(out) else np.asarray(out)


def row_blocks(n_rows: int, bytes_per_row: int, budget: int | None = None) -> Iterator[slice]:
    """Slices over rows so that one block needs at most ``budget`` bytes (default BLOCK_BYTES)."""
    budget = BLOCK_BYTES if budget is None else budget
    step = max(1, int(budget // max(1, bytes_per_row)))
    for start in range(0, n_rows, step):
        yield slice(start, min(start + step, n_rows))


# ---------------------------------------------------------------------- power sums
def power_sums(X, Y, degree: int, y_is_sign: bool = False) -> list:
    """P_t = <x^t, y^t> for t = 1..degree, as Gram matrices (index 0 unused).

    With ``y_is_sign`` (Y has entries +-1 only, e.g. Rademacher weights) the odd
    powers of Y equal Y and the even ones are all ones, so even P_t reduce to
    row sums of X^t: a column vector that broadcasts, and half the GEMMs vanish.
    """
    P: list = [None]
    for t in range(1, degree + 1):
        if y_is_sign and t % 2 == 0:
            P.append(np.asarray(_power(X, t).sum(axis=1), dtype=np.float64).reshape(-1, 1))
        elif y_is_sign:
            P.append(_gram(_power(X, t), Y))
        else:
            P.append(_gram(_power(X, t), _power(Y, t)))
    return P


def elementary_from_power_sums(P: list, degree: int) -> list:
    """Newton's identities (paper eq. 12): e_k = (1/k) sum_{t=1}^k (-1)^(t+1) e_{k-t} P_t.

    ``P[t]`` are arrays that broadcast together (P is not modified); returns e_0..e_degree
    with e_0 = 1.0 and each e_k a new array of the broadcast shape. The sums run in
    place with one scratch buffer: these passes, not the GEMMs, dominate for small d.
    """
    shape = np.broadcast_shapes(*(np.shape(p) for p in P[1:degree + 1]))
    e: list = [1.0]
    scratch = np.empty(shape) if degree >= 2 else None
    for k in range(1, degree + 1):
        acc = np.empty(shape)
        np.multiply(P[1], e[k - 1], out=acc)
        for t in range(2, k + 1):
            if k == t:  # e_0 = 1: the term is P_t itself
                term = P[t]
            else:
                term = np.multiply(P[t], e[k - t], out=scratch)
            if t % 2 == 0:
                acc -= term
            else:
                acc += term
        if k > 1:
            acc *= 1.0 / k
        e.append(acc)
    return e


def elementary_top(P: list, degree: int):
    """Only e_degree of :func:`elementary_from_power_sums`, in fewer passes over the output.

    Orders 2 and 3 use the closed forms e_2 = (P_1^2 - P_2)/2 and
    e_3 = (P_1 (P_1^2 - 3 P_2) + 2 P_3)/6: four or five in-place passes over a
    (rows x D) array instead of the recursion's ten for m = 3. These passes, not the
    GEMMs, dominate the RK map for small d. Overwrites P[2] and P[3] (scratch).
    """
    if degree == 1:
        return P[1]
    if degree not in (2, 3):
        return elementary_from_power_sums(P, degree)[degree]
    shape = np.broadcast_shapes(*(np.shape(p) for p in P[1:degree + 1]))
    out = np.multiply(P[1], P[1], out=np.empty(shape))
    if degree == 2:
        out -= P[2]
        out *= 0.5
        return out
    P[2] *= 3.0
    out -= P[2]
    out *= P[1]
    P[3] *= 2.0
    out += P[3]
    out *= 1.0 / 6.0
    return out


# ---------------------------------------------------------------------- accuracy contract
def rounding_gamma(n_terms):
    """gamma_n: relative rounding error of a sum of n products (deterministic up to n = 100,
    probabilistic above; see the module docstring). Scalar or array."""
    n = np.maximum(np.asarray(n_terms, dtype=np.float64), 1.0)
    return 1.01 * UNIT_ROUNDOFF * np.minimum(n, ROUNDING_LAMBDA * np.sqrt(n))


def newton_error_bounds(Pa: list, degree: int, gamma) -> list:
    """Bounds eps_0..eps_degree on |computed e_k - e_k| for Newton's identities.

    ``Pa[t]`` = sum_j |z_j|^t (the power sums of |z|, arrays that broadcast), ``gamma`` the
    relative error of each computed power sum. With A = Pa[1] and |e_j| <= A^j / j!,
    eps_k = (1/k) sum_t Pa_t ((1 + 3 gamma) eps_{k-t} + 3 gamma A^{k-t} / (k-t)!): the
    3 gamma covers the power sum, the product and the k-term sum of each step.
    """
    A = Pa[1]
    e_bar = [1.0]
    for j in range(1, degree + 1):
        e_bar.append(e_bar[-1] * A / j)
    eps: list = [0.0]
    for k in range(1, degree + 1):
        acc = 0.0
        for t in range(1, k + 1):
            acc = acc + Pa[t] * ((1 + 3 * gamma) * eps[k - t] + 3 * gamma * e_bar[k - t])
        eps.append(acc / k)
    return eps


def closed_form_check_constants(degree: int, gamma, tol: float = CONTRACT_RTOL):
    """(c, c_b) of the closed-form tests of :func:`newton_is_safe` for orders 2 and 3 (not
    ``all_orders``); A = Pa[1]:

    * order 2: safe where Pa_2 <= c A^2;
    * order 3: safe where Pa_2 <= c A^2 (first test: the Pa_3 term dropped, it only helps),
      else where Pa_2 - c_b Pa_3 / A <= c A^2.

    Derivation: :func:`newton_error_bounds` with Pa_1 = A, for gamma <= 1e-3, gives
    eps_2 <= gamma (3.01 A^2 + 1.5 Pa_2) and eps_3 <= gamma (1.51 A^3 + 2.51 A Pa_2 + Pa_3);
    computing S_2 = (A^2 - Pa_2) / 2 and S_3 = (A^3 - 3 A Pa_2 + 2 Pa_3) / 6 in floating
    point adds at most 1.5 u (A^2 + Pa_2) and u (A^3 + 3 A Pa_2 + 2 Pa_3) (u the unit
    roundoff; gamma >= 5 u, 7 u here), covered by eps'_2 = gamma (3.4 A^2 + 1.8 Pa_2) and
    eps'_3 = gamma (1.7 A^3 + 3 A Pa_2 + 1.3 Pa_3). The test 2 eps' (1 + tol) <= tol (S - eps')
    is K eps'/gamma <= S with K = gamma (2 + 3 tol) / tol, solved for Pa_2. Unlike the cruder
    eps_2 <= 5 gamma A^2, eps_3 <= 6 gamma A^3, this keeps the order-3 test passable up to
    gamma ~ 3e-14 (N(0,1) rows up to d ~ 600 under the probabilistic gamma) when Pa_2 << A^2.
    """
    K = np.asarray(gamma, dtype=np.float64) * ((2.0 + 3.0 * tol) / tol)
    if degree == 2:
        return (0.5 - 3.4 * K) / (0.5 + 1.8 * K), None
    return (1.0 / 6.0 - 1.7 * K) / (0.5 + 3.0 * K), (1.0 / 3.0 - 1.3 * K) / (0.5 + 3.0 * K)


def newton_is_safe(Pa: list, degree: int, gamma, *, all_orders: bool = False,
                   tol: float = CONTRACT_RTOL) -> np.ndarray:
    """Where Newton's identities meet the contract: a boolean array (the broadcast shape of Pa).

    True where 2 eps <= tol * (S - eps), S = e_degree(|z|) (or sum_{k<=degree} e_k(|z|) with
    ``all_orders``) computed from Pa, eps its error bound (:func:`newton_error_bounds`);
    False wherever a value is not finite. Orders 1 to 3 use closed forms with fewer passes
    over the data (:func:`closed_form_check_constants`; the Pa_3 term is used only where it
    is needed and given). ``Pa[t]`` for even t equals the signed power sum P_t.
    """
    A = np.asarray(Pa[1], dtype=np.float64)
    gamma = np.asarray(gamma, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        if not all_orders and degree == 1:
            return np.isfinite(A) & (gamma * 2 <= tol)
        if not all_orders and degree == 2:
            bound = np.multiply(A, A)
            bound *= closed_form_check_constants(2, gamma, tol)[0]
            ok = np.less_equal(Pa[2], bound)
            return ok & np.isfinite(bound) if not np.isfinite(bound).all() else ok
        if not all_orders and degree == 3:
            c, c_b = closed_form_check_constants(3, gamma, tol)
            bound = np.multiply(A, A)
            bound *= c
            lhs = np.asarray(Pa[2], dtype=np.float64)
            ok = np.less_equal(lhs, bound)
            n_bad = ok.size - np.count_nonzero(ok) if len(Pa) > 3 and Pa[3] is not None else 0
            if n_bad > ok.size // 8:
                # many entries need the Pa_3 term (e.g. a few non-zeros per row, Gaussian
                # weights): whole-array passes beat masked gathers. Where ok already holds,
                # lhs - c_b Pa_3 / A <= lhs keeps it (c_b >= 0 whenever c >= 0).
                lhs_b = np.divide(Pa[3], np.where(A > 0, A, 1.0))
                lhs_b *= -c_b
                lhs_b += lhs
                ok = ok | np.less_equal(lhs_b, bound)
            elif n_bad:
                full = np.broadcast_shapes(np.shape(A), np.shape(Pa[2]), np.shape(Pa[3]))
                ok = np.broadcast_to(ok, full).copy()
                idx = ~ok
                Ab = np.broadcast_to(A, full)[idx]
                c_bi = np.broadcast_to(c_b, full)[idx] if np.ndim(c_b) else c_b
                lhs_b = np.broadcast_to(lhs, full)[idx] - c_bi * np.broadcast_to(Pa[3], full)[idx] / np.where(Ab > 0, Ab, 1.0)
                ok[idx] = lhs_b <= np.broadcast_to(bound, full)[idx]
            cube_ok = np.isfinite(bound * A)
            return ok & cube_ok if not cube_ok.all() else ok
        S = elementary_from_power_sums(Pa, degree)
        eps = newton_error_bounds(Pa, degree, gamma)
        if all_orders:
            err = sum(eps[1:])
            scale = sum(S)
        else:
            err, scale = eps[degree], S[degree]
        ok = 2.0 * err * (1.0 + tol) <= tol * (scale - err)
        return ok & np.isfinite(err) & np.isfinite(scale)


def may_overflow(x_absmax: float, y_absmax: float, n_terms: int, degree: int) -> bool:
    """False when no power x^t, y^t or power sum (t <= degree) of n_terms products can
    overflow: then the fast path's values are finite and the finiteness pass is skipped."""
    big = max(float(x_absmax), float(y_absmax), max(n_terms, 1) * float(x_absmax) * float(y_absmax), 1.0)
    return degree * np.log10(big) > 290 if np.isfinite(big) else True


def _abs_max(A) -> float:
    data = A.data if sp.issparse(A) else A
    return float(np.abs(data).max(initial=0.0))


def _frexp64(a: np.ndarray):
    """(mantissa, int64 exponent) with exact zeros given _ZERO_EXPONENT."""
    f, E = np.frexp(a)
    E = E.astype(np.int64)
    E[f == 0] = _ZERO_EXPONENT
    return f, E


def elementary_stable(U: np.ndarray, V: np.ndarray | None = None, degree: int = 2,
                      all_orders: bool = False, summed: bool = False):
    """e_0..e_degree of each row of z = U * V (element-wise; V=None: z = U), computed stably.

    The recursion e_k <- e_k + z_j e_{k-1} over the columns (Blondel et al. 2016) adds
    every product prod_{j in V} z_j with at most ``k + d`` roundings, so the error is at most
    gamma_{k+d} * e_k(|z|) - no cancellation beyond that. Values are held as a mantissa and
    a 64-bit exponent (and z_j = u_j v_j is never formed), so nothing overflows or
    underflows in between: the result is inf only where the exact value exceeds float64.
    Zero columns are skipped exactly, so fewer than k non-zeros give exactly 0.

    U, V: float arrays of shape (N, d). Returns e_degree of shape (N,), or with
    ``all_orders`` a list e_0..e_degree, or with ``summed`` sum_{k<=degree} e_k (N,), added
    in (mantissa, exponent) form: inf only where the sum is, never inf - inf.
    """
    U = np.asarray(U, dtype=np.float64)
    N, d = U.shape
    zf, zE = _frexp64(U)
    if V is not None:
        vf, vE = _frexp64(np.asarray(V, dtype=np.float64))
        zf = zf * vf
        zE = np.where(zf == 0, _ZERO_EXPONENT, zE + vE)
    fast = _elementary_scaled(zf, zE, degree, all_orders, summed)
    if fast is not None:
        return fast
    ef = np.zeros((degree + 1, N))
    eE = np.full((degree + 1, N), _ZERO_EXPONENT, dtype=np.int64)
    ef[0], eE[0] = 0.5, 1  # e_0 = 1 = 0.5 * 2^1
    # exponents of terms far below the other summand: their mantissa shifts to 0 (saturate)
    floor = -1100
    for j in range(d):
        fj, Ej = zf[:, j], zE[:, j]
        if not fj.any():
            continue
        for q in range(min(j + 1, degree), 0, -1):
            tf = fj * ef[q - 1]
            tE = Ej + eE[q - 1]
            E = np.maximum(eE[q], tE)
            f = np.ldexp(ef[q], np.maximum(eE[q] - E, floor)) + np.ldexp(tf, np.maximum(tE - E, floor))
            f, dE = np.frexp(f)
            E = E + dE
            E[f == 0] = _ZERO_EXPONENT
            ef[q], eE[q] = f, E
    if summed:
        return _sum_of_scaled(ef, eE)
    # ldexp saturates to inf / 0 exactly where the value leaves float64's range
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(ef, np.clip(eE, -2200, 2200))
    return list(out) if all_orders else out[degree]


def _sum_of_scaled(f: np.ndarray, E: np.ndarray) -> np.ndarray:
    """sum_k f[k] 2^E[k] over axis 0 (f: (K, N) floats, E: int64 exponents), without
    overflow on the way: the terms are added relative to the largest one's binade."""
    g, dE = np.frexp(f)
    E = np.where(g == 0, _ZERO_EXPONENT, E + dE)
    top = E.max(axis=0)
    top = np.where(top == _ZERO_EXPONENT, 0, top)
    with np.errstate(over="ignore", under="ignore"):
        s = np.ldexp(g, np.clip(E - top, -1100, 0)).sum(axis=0)
        return np.ldexp(s, np.clip(top, -2200, 2200))


def _elementary_scaled(zf: np.ndarray, zE: np.ndarray, degree: int, all_orders: bool, summed: bool = False):
    """:func:`elementary_stable`'s recursion in plain floating point, or None where it is unsafe.

    z = zf * 2^zE (zf = 0 for zeros). Each row is scaled by 2^-max(zE) (exact): when the
    exponents of a row's non-zeros span less than 1000 / degree - 2 binades and d^degree <
    2^1000, every product of at most ``degree`` scaled values is a normal float64 in
    [2^-1000, 1] and every e_k is below 2^1000, so the recursion neither overflows nor
    underflows and keeps its bound gamma_{k+d} e_k(|z|); the scale is restored by ldexp
    (inf / subnormal only where the exact value is out of range). Fewer than k non-zeros
    still give exactly 0. About seven times fewer passes than the (mantissa, exponent) form.
    """
    N, d = zf.shape
    if N == 0 or degree * np.log2(max(d, 2)) >= 1000:
        return None
    live = zf != 0
    big = np.where(live, zE, np.iinfo(np.int64).min).max(axis=1)
    small = np.where(live, zE, np.iinfo(np.int64).max).min(axis=1)
    has = live.any(axis=1)
    if np.any((big[has] - small[has] + 2) * degree > 1000):
        return None
    big = np.where(has, big, 0)
    zs = np.ldexp(zf, np.where(live, zE - big[:, None], 0))
    e = np.zeros((degree + 1, N))
    e[0] = 1.0
    for j in range(d):
        zj = zs[:, j]
        if not zj.any():
            continue
        for q in range(min(j + 1, degree), 0, -1):
            e[q] += zj * e[q - 1]
    if summed:
        return _sum_of_scaled(e, np.arange(degree + 1)[:, None] * big[None, :])
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(e, np.arange(degree + 1)[:, None] * big[None, :])
    return list(out) if all_orders else out[degree]


def elementary_pairs(X, Y, rows: np.ndarray, cols: np.ndarray, degree: int,
                     all_orders: bool = False, summed: bool = False):
    """:func:`elementary_stable` of z = x_i * y_j for the pairs (rows[p], cols[p]), in chunks
    of bounded memory, over each pair's shared non-zeros. X, Y: dense or sparse (n, d).
    ``summed``: sum_{k<=degree} e_k per pair (the up-to kernel), overflow-safe."""
    if summed:
        n_pairs, d = len(rows), X.shape[1]
        out = np.empty(n_pairs)
        step = max(1, BLOCK_BYTES // (8 * 8 * d))
        for start in range(0, n_pairs, step):
            sl = slice(start, min(start + step, n_pairs))
            U, V = _shared_nonzeros(_dense(X[rows[sl]]), _dense(Y[cols[sl]]))
            out[sl] = elementary_stable(U, V, degree, summed=True)
        return out
    n_pairs, d = len(rows), X.shape[1]
    out = np.empty((degree + 1, n_pairs)) if all_orders else np.empty(n_pairs)
    step = max(1, BLOCK_BYTES // (8 * 8 * d))
    for start in range(0, n_pairs, step):
        sl = slice(start, min(start + step, n_pairs))
        U, V = _dense(X[rows[sl]]), _dense(Y[cols[sl]])
        U, V = _shared_nonzeros(U, V)
        e = elementary_stable(U, V, degree, all_orders)
        if all_orders:
            out[:, sl] = np.asarray(e)
        else:
            out[sl] = e
    return list(out) if all_orders else out


def _shared_nonzeros(U: np.ndarray, V: np.ndarray):
    """Columns where both U and V are non-zero moved first, the rest cut to the widest row."""
    both = (U != 0) & (V != 0)
    k = int(both.sum(axis=1).max()) if both.size else 0
    if k >= U.shape[1]:
        return U, V
    order = np.argsort(~both, axis=1, kind="stable")[:, :max(k, 1)]
    U = np.take_along_axis(U, order, axis=1)
    V = np.take_along_axis(V, order, axis=1)
    if k == 0:
        U = np.zeros_like(U)
    return U, V


def _is_nonnegative(A) -> bool:
    data = A.data if sp.issparse(A) else A
    return data.size == 0 or bool(data.min() >= 0)


def _zero_fraction(A) -> float:
    if sp.issparse(A):
        return 1.0 - A.nnz / max(1, A.shape[0] * A.shape[1])
    return 1.0 - np.count_nonzero(A) / max(1, A.size)


def _max_nnz_per_row(A) -> int:
    if sp.issparse(A):
        return int(np.diff(A.indptr).max(initial=0))
    return int(np.count_nonzero(A, axis=1).max(initial=0))


#: Bytes per row block of :func:`contract_elementary` (bounded memory; few, large GEMMs).
CONTRACT_BLOCK_BYTES = 64 * 2**20
#: ...but at least this many rows per block.
CONTRACT_MIN_ROWS = 1024


def contract_elementary(X, Y, degree: int, all_orders: bool = False):
    """e_degree (or e_0..e_degree) of z = x_i * y_j for all pairs, meeting the accuracy contract.

    Fast path: the power sums (GEMMs) and Newton's identities; entries where
    :func:`newton_is_safe` cannot vouch for them are recomputed by the stable recursion.
    The power sums of |z| it needs are the even P_t and, unless X, Y >= 0, one GEMM of
    absolute values per odd order. Works in row blocks so the element-wise passes stay in
    cache. Returns an (n_X, n_Y) array, or with ``all_orders`` the list e_0 (= 1.0), e_1, ...
    """
    nX, nY = X.shape[0], Y.shape[0]
    nonneg = _is_nonnegative(X) and _is_nonnegative(Y)
    gamma = float(rounding_gamma(min(_max_nnz_per_row(X), _max_nnz_per_row(Y)) + 2 * degree))
    Ypow = [None] + [_power(Y, t) for t in range(1, degree + 1)]
    y_max = _abs_max(Y)
    # Sparse-ish data (e.g. one-hot rows): many pairs share fewer than m non-zeros, so their
    # value is exactly 0 but the check cannot vouch for Newton's (S = 0). One more product of
    # the non-zero patterns counts the shared non-zeros and settles those pairs directly.
    count_shared = not all_orders and degree >= 2 and (_zero_fraction(X) > 0.25 or _zero_fraction(Y) > 0.25)
    Ymask = (Y != 0).astype(np.float64) if count_shared else None
    Yabs = [None] + [None if nonneg or t % 2 == 0 else _power(abs(Y), t) for t in range(1, degree + 1)]
    out = [1.0] + [np.empty((nX, nY)) for _ in range(degree)] if all_orders else np.empty((nX, nY))
    bad_rows, bad_cols = [], []
    with np.errstate(over="ignore", invalid="ignore"):
        # at least CONTRACT_MIN_ROWS rows per block: many small GEMMs are slow (BLAS threads
        # synchronise once per call, which costs a lot on a loaded machine)
        bytes_per_row = min(8 * nY * (degree + 4), max(1, CONTRACT_BLOCK_BYTES // CONTRACT_MIN_ROWS))
        for rows in row_blocks(nX, bytes_per_row, CONTRACT_BLOCK_BYTES):
            Xb = X[rows]
            Xabs = None if nonneg else abs(Xb)
            P, Pa = [None], [None]
            for t in range(1, degree + 1):
                Xt = _power(Xb, t)
                P.append(_gram(Xt, Ypow[t]))
                Pa.append(P[t] if nonneg or t % 2 == 0 else _gram(_power(Xabs, t), Yabs[t]))
            # the check first: elementary_top overwrites P[2] and P[3], which Pa shares
            ok = newton_is_safe(Pa, degree, gamma, all_orders=all_orders)
            risky = may_overflow(_abs_max(Xb), y_max, Y.shape[1], degree)
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
                    too_few = _gram((Xb != 0).astype(np.float64), Ymask) < degree
                    out[rows][too_few] = 0.0
                    ok = ok | too_few
            if not ok.all():
                r, c = np.nonzero(~np.broadcast_to(ok, (Xb.shape[0], nY)))
                bad_rows.append(r + rows.start)
                bad_cols.append(c)
    if bad_rows:
        rows, cols = np.concatenate(bad_rows), np.concatenate(bad_cols)
        fixed = elementary_pairs(X, Y, rows, cols, degree, all_orders)
        if all_orders:
            for k in range(1, degree + 1):
                out[k][rows, cols] = fixed[k]
        else:
            out[rows, cols] = fixed
    return out


#: Bytes of the power-sum blocks of one row block of :func:`anova_gram` (all its scratch arrays).
GRAM_SCRATCH_BYTES = 16 * 2**20
#: ...but at least this many rows per block (few, large GEMMs), unless there are fewer rows.
GRAM_MIN_ROWS = 64
#: Bytes of one sub-block of the fused element-wise passes of :func:`anova_gram`: its few
#: temporaries and the power sums it reads stay in a core's L2 cache.
FUSED_BYTES = 256 * 2**10
#: A CSR Y is densified (transposed, one copy per power) only up to this many bytes.
GRAM_DENSE_Y_BYTES = 256 * 2**20


def anova_gram(X, Y, degree: int, summed: bool = False, symmetric: bool = False) -> np.ndarray:
    """The exact ANOVA Gram e_degree(x_i * y_k) (``summed``: the up-to Gram sum_{k<=degree} e_k),
    an (n_X, n_Y) float64 array meeting the accuracy contract. X, Y: validated float64, dense
    or CSR. ``symmetric``: Y is X (K(X, X)); only the upper triangle is computed, then mirrored.

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
    Other orders go through :func:`contract_elementary`.
    """
    nX, nY, d = X.shape[0], Y.shape[0], X.shape[1]
    low = (1 <= degree <= 3) if summed else degree in (2, 3)
    if not low or (sp.issparse(Y) and 8 * 6 * d * nY > GRAM_DENSE_Y_BYTES):
        if summed:
            with np.errstate(invalid="ignore"):
                total = _broadcast_full(sum(contract_elementary(X, Y, degree, all_orders=True)), (nX, nY))
            bad = ~np.isfinite(total)  # orders of opposite signs that overflow: inf - inf
            if bad.any():
                r, c = np.nonzero(bad)
                total[r, c] = elementary_pairs(X, Y, r, c, degree, summed=True)
            return total
        return _broadcast_full(contract_elementary(X, Y, degree), (nX, nY))
    if not summed:
        levels = row_levels(X), row_levels(Y)
        if levels[0] is not None and levels[1] is not None and _levels_in_range(*levels, d, degree):
            return _level_gram(X, Y, *levels, degree, symmetric)
    nonneg = _is_nonnegative(X) and _is_nonnegative(Y)
    gamma = float(rounding_gamma(min(_max_nnz_per_row(X), _max_nnz_per_row(Y)) + 2 * degree))
    count_shared = not summed and (_zero_fraction(X) > 0.25 or _zero_fraction(Y) > 0.25)
    y_max = _abs_max(Y)
    consts = None if summed else tuple(None if c is None else float(c) for c in closed_form_check_constants(degree, gamma))
    # the proven shortcuts of the first closed-form test (None where they do not apply)
    witness = None
    if not summed and not nonneg and not count_shared and not sp.issparse(X):
        witness = _cauchy_schwarz_witness(X, Y, consts[0])
    vouch_count = _count_threshold(X, Y, degree, consts[0]) if count_shared and nonneg else None

    def transposed(A):  # (d, nY) C-contiguous
        return np.ascontiguousarray((A.toarray() if sp.issparse(A) else A).T)

    with np.errstate(over="ignore"):  # overflowing powers give inf: caught by the check
        YT = [None] + [transposed(_small_power(Y, t)) for t in range(1, degree + 1)]
        Yabs = None if nonneg else abs(Y)
        YaT = {t: transposed(_small_power(Yabs, t)) for t in ((1, 3) if degree == 3 and not summed else (1,))} if not nonneg else {}
    maskT = np.ascontiguousarray(transposed(Y != 0), dtype=np.float32) if count_shared else None
    out = np.empty((nX, nY))
    # the witness (float32) shares the slot of the float64 |z| sums: A is computed only once the
    # witness is dropped for good (_witness_failures) or for a risky block, which skips the witness
    n_arrays = degree + (0 if nonneg else 1 + (degree == 3 and not summed)) + count_shared
    rows_per_block = max(min(GRAM_MIN_ROWS, nX), GRAM_SCRATCH_BYTES // (8 * nY * n_arrays))
    scratch = np.empty(min(rows_per_block, nX) * nY * n_arrays)
    sub_rows = max(1, FUSED_BYTES // (8 * nY))
    temps = np.empty((3, sub_rows * nY))
    few_buf = np.empty(sub_rows * nY, dtype=bool)
    bad_rows, bad_cols = [], []
    unsure = []  # (rows, cols, gathered power sums) of entries the witness left open
    # the witness stays in use while few of its entries fail (_witness_failures turns it off)
    witness_state = [witness is not None, 0, 0]
    # BLAS keeps its own thread count: a library call must not change process-wide state (the app
    # serves many sessions from threads of one process), and on a quiet 2-core machine two threads
    # were faster (new/old 0.57-1.21 with two threads, 0.79-1.57 with one; benchmarks/results/numerics.md).
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for rows in row_blocks(nX, 1, rows_per_block):
            c0 = rows.start if symmetric else 0
            r, w = rows.stop - rows.start, nY - c0
            slots = [scratch[i * r * w:(i + 1) * r * w].reshape(r, w) for i in range(n_arrays)]
            # a dense block with few non-zeros (one-hot-like rows) as CSR: its power sums and
            # shared-non-zero count become SpMMs over the stored entries (1/8 of the flops or less)
            Xb = as_sparse_if_sparse(X[rows])
            cols = slice(c0, nY)
            P = [None] + [gemm_into(1.0, _small_power(Xb, t), YT[t][:, cols], 0.0, slots[t - 1])
                          for t in range(1, degree + 1)]
            risky = may_overflow(_abs_max(Xb), y_max, d, degree)
            lazy = {}

            def block(key, _Xb=Xb, _cols=cols, _slots=slots, _P=P):
                """The row block's |z| power sums ("A", "pa3"), shared-non-zero count ("count")
                or Cauchy-Schwarz witness ("witness"), computed the first time they are asked for."""
                if key not in lazy:
                    if key == "A":
                        lazy.pop("witness", None)  # same slot
                        lazy[key] = _P[1] if nonneg else gemm_into(1.0, abs(_Xb), YaT[1][:, _cols], 0.0, _slots[degree])
                    elif key == "pa3":
                        lazy[key] = _P[3] if nonneg else gemm_into(1.0, _small_power(abs(_Xb), 3), YaT[3][:, _cols], 0.0,
                                                                   _slots[degree + 1])
                    else:
                        slot = _slots[-1] if key == "count" else _slots[degree]
                        buf = slot.reshape(-1).view(np.float32)[:r * w].reshape(r, w)
                        if key == "count":  # exact below 2^24
                            lazy[key] = gemm_into(1.0, (_Xb != 0).astype(np.float32), maskT[:, _cols], 0.0, buf)
                        else:
                            XA, YAT = witness
                            lazy[key] = gemm_into(1.0, XA[rows], YAT[:, _cols], 0.0, buf)
                return lazy[key]

            for sub in row_blocks(r, 1, sub_rows):
                q = sub.stop - sub.start
                t = [tmp[:q * w].reshape(q, w) for tmp in temps]
                o = out[rows.start + sub.start:rows.start + sub.stop, c0:]
                Ps = [None] + [p[sub] for p in P[1:]]
                if summed:
                    ok = _summed_block(Ps, block("A")[sub], degree, gamma, risky, o, t)
                elif witness is not None and not risky and witness_state[0] and \
                        (fails := _witness_failures(block("witness")[sub], witness_state)) is not None:
                    _top_value(Ps, degree, o, t)
                    if fails[0].size:  # checked at the end with their own |z| sums
                        i, k = fails
                        unsure.append((i + rows.start + sub.start, k + c0, [p[i, k] for p in Ps[1:]]))
                    continue
                elif vouch_count is not None and not risky:
                    ok = _top_counted(Ps, degree, consts, vouch_count, block("count")[sub], o, t,
                                      few_buf[:q * w].reshape(q, w))
                else:
                    few = (lambda s=sub, q=q: np.less(block("count")[s], degree,
                                                      out=few_buf[:q * w].reshape(q, w))) if count_shared else None
                    ok = _top_block(Ps, block("A")[sub], nonneg, degree, consts, risky, o, t,
                                    lambda s=sub: block("pa3")[s], few)
                if ok is not None and not ok.all():
                    i, k = np.divmod(np.flatnonzero(~ok), w)
                    bad_rows.append(i + rows.start + sub.start)
                    bad_cols.append(k + c0)
    if unsure:  # the entries the witness could not vouch for: the closed-form tests, pair by pair
        rows_, cols_ = np.concatenate([u[0] for u in unsure]), np.concatenate([u[1] for u in unsure])
        P_ = [None] + [np.concatenate([u[2][t] for u in unsure]) for t in range(degree)]
        ok = _gathered_check(X, Y, rows_, cols_, P_, degree, consts)
        bad_rows.append(rows_[~ok])
        bad_cols.append(cols_[~ok])
    if bad_rows:
        rows_, cols_ = np.concatenate(bad_rows), np.concatenate(bad_cols)
        out[rows_, cols_] = elementary_pairs(X, Y, rows_, cols_, degree, summed=summed)
    if symmetric:
        mirror_upper_triangle(out, rows_per_block)
    return out


def _small_power(A, t: int):
    """Element-wise t-th power by repeated products (t <= 3: two roundings at most, which the
    gamma of the check covers; 4x faster than ``**`` for t = 3), keeping sparsity."""
    if t == 1:
        return A
    if t == 2:
        return A.multiply(A) if sp.issparse(A) else A * A
    if t == 3:
        return A.multiply(A).multiply(A) if sp.issparse(A) else np.multiply(A * A, A)
    return _power(A, t)


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
    maskT = np.ascontiguousarray((Y.toarray() if sp.issparse(Y) else Y).T != 0, dtype=np.float32)
    out = np.empty((nX, nY))
    rows_per_block = max(min(GRAM_MIN_ROWS, nX), GRAM_SCRATCH_BYTES // (4 * nY))
    count = np.empty(min(rows_per_block, nX) * nY, dtype=np.float32)
    sub_rows = max(1, FUSED_BYTES // (8 * nY))
    tmp = np.empty(sub_rows * nY)
    for rows in row_blocks(nX, 1, rows_per_block):
        c0 = rows.start if symmetric else 0
        r, w = rows.stop - rows.start, nY - c0
        Xb = X[rows]
        cnt = gemm_into(1.0, (Xb != 0).astype(np.float32), maskT[:, c0:], 0.0, count[:r * w].reshape(r, w))
        for sub in row_blocks(r, 1, sub_rows):
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


def _deterministic_gamma(n: int, u: float = UNIT_ROUNDOFF) -> float:
    """gamma_n = n u / (1 - n u): the worst-case relative error of any sum of n non-negative
    products, in any order, with or without FMA (Higham, Accuracy and Stability, 3.1)."""
    return n * u / (1.0 - n * u)


def _nonzero_abs_range(A) -> tuple[float, float]:
    """(smallest non-zero |a|, largest |a|); (inf, 0) when A is all zeros."""
    data = np.abs(A.data if sp.issparse(A) else A)
    nz = data[data > 0] if sp.issparse(A) or np.count_nonzero(data) < data.size else data
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
        A = np.abs(A.toarray() if sp.issparse(A) else A)
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
        if sp.issparse(A):
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


def _gathered_check(X, Y, rows: np.ndarray, cols: np.ndarray, P: list, degree: int, consts) -> np.ndarray:
    """The closed-form tests of :func:`newton_is_safe` (orders 2, 3) for the pairs (rows, cols),
    with their |z| power sums computed pair by pair (P: their power sums, gathered)."""
    c, c_b = consts
    out = np.empty(len(rows), dtype=bool)
    step = max(1, BLOCK_BYTES // (8 * 4 * X.shape[1]))
    for sl in row_blocks(len(rows), 1, step):
        U, V = np.abs(_dense(X[rows[sl]])), np.abs(_dense(Y[cols[sl]]))
        A = np.einsum("ij,ij->i", U, V)
        bound = A * A
        bound *= c
        ok = P[2][sl] <= bound
        if degree == 3 and not ok.all():
            U **= 3
            V **= 3
            pa3 = np.einsum("ij,ij->i", U, V)
            ok |= P[2][sl] - c_b * pa3 / np.where(A > 0, A, 1.0) <= bound
        out[sl] = ok
    return out


def _top_value(P, degree, o, t) -> None:
    """e_degree (2 or 3) of one sub-block into ``o`` by Newton's closed forms (no check)."""
    if degree == 2:
        np.multiply(P[1], P[1], out=o)
        o -= P[2]
        o *= 0.5
    else:
        np.multiply(P[1], P[1], out=t[0])
        _e3_into(P, t[0], t[1], o)


def _top_counted(P, degree, consts, vouch_count: int, count, o, t, few) -> np.ndarray | None:
    """e_degree of one sub-block of non-negative data into ``o`` when the shared-non-zero count
    decides the check (:func:`_count_threshold`): pairs with fewer than ``degree`` shared
    non-zeros are exactly 0, those with at least ``vouch_count`` pass the first closed-form test;
    only the pairs in between are tested (A = P_1). Returns where vouched for, or None (all)."""
    _top_value(P, degree, o, t)
    # zero the pairs with too few shared non-zeros: a multiply by the boolean (4x faster than a
    # masked copy), then + 0.0 turns the -0.0 of negative residues into +0.0
    np.greater_equal(count, degree, out=few)
    o *= few
    o += 0.0
    if vouch_count <= degree:
        return None
    np.less(count, vouch_count, out=few)
    few &= count >= degree
    idx = np.flatnonzero(few)  # (sub-blocks are C-contiguous: flat indices, 10x faster than 2-D)
    if not idx.size:
        return None
    ok = np.ones(o.shape, dtype=bool)
    A = P[1].reshape(-1)[idx]
    c, c_b = consts
    bound = A * A
    bound *= c
    P2 = P[2].reshape(-1)[idx]
    sel = P2 <= bound
    if degree == 3 and not sel.all():
        sel |= P2 - c_b * P[3].reshape(-1)[idx] / np.where(A > 0, A, 1.0) <= bound
    ok.reshape(-1)[idx] = sel
    return ok


def _e3_into(P, sq, tmp, out) -> None:
    """e_3 = (P1 (P1^2 - 3 P2) + 2 P3) / 6 into ``out``, in place; ``sq`` holds P1^2 on entry
    (overwritten), ``tmp`` is scratch and may be ``out``."""
    np.multiply(P[2], 3.0, out=tmp)
    sq -= tmp
    sq *= P[1]
    np.multiply(P[3], 2.0, out=out)
    out += sq
    out *= 1.0 / 6.0


def _top_block(P, A, nonneg, degree, consts, risky, o, t, pa3, too_few=None) -> np.ndarray:
    """e_degree (2 or 3) of one sub-block into ``o``, and where :func:`newton_is_safe`'s closed
    forms vouch for it (the same bounds, decided entry by entry). P: power sums, A: the power sum
    of |z| (P[1] itself for non-negative data; even powers are their own), t: three scratch
    arrays, pa3(): the third power sum of |z|, too_few(): where fewer than ``degree`` products
    z_j are non-zero (exactly 0; set so and vouched for), both asked for only where the first
    test fails. consts: :func:`closed_form_check_constants` (degree, gamma)."""
    sq, bound, lhs = t
    np.multiply(P[1], P[1], out=sq)
    c, c_b = consts
    if nonneg:
        np.multiply(sq, c, out=bound)  # the same rounding as copying sq, then bound *= c
    else:
        np.multiply(A, A, out=bound)
        bound *= c
    if degree == 2:
        ok = np.less_equal(P[2], bound)
        np.subtract(sq, P[2], out=o)
        o *= 0.5
    else:
        ok = np.less_equal(P[2], bound)
        _e3_into(P, sq, lhs, o)
    if not ok.all():
        if too_few is not None:
            few = too_few()
            np.putmask(o, few, 0.0)  # 2.5x faster than np.copyto(..., where=)
            ok |= few
        if degree == 3 and not ok.all():
            # S_3 = (A^3 - 3 A Pa_2 + 2 Pa_3) / 6: the Pa_3 term where the first test fails
            idx = np.flatnonzero(~ok)  # sub-blocks are C-contiguous (full rows)
            Ab = A.reshape(-1)[idx]
            ok.reshape(-1)[idx] = (P[2].reshape(-1)[idx] - c_b * pa3().reshape(-1)[idx] / np.where(Ab > 0, Ab, 1.0)
                                   <= bound.reshape(-1)[idx])
    if risky:
        if degree == 3:
            bound *= A
        ok &= np.isfinite(bound)
        ok &= np.isfinite(o)
    return ok


def _summed_block(P, A, degree, gamma, risky, o, t) -> np.ndarray:
    """sum_{k<=degree} e_k (degree 1 to 3) of one sub-block into ``o``, and where
    :func:`_summed_is_safe` vouches for it."""
    sq, s, e = t
    ok = _summed_is_safe(A, P[2] if degree >= 2 else None, degree, gamma, sq, s)
    # 1 + e_1 + e_2 + e_3 with e_2 = (P1^2 - P2) / 2, e_3 = (P1 (P1^2 - 3 P2) + 2 P3) / 6
    np.add(P[1], 1.0, out=o)
    if degree >= 2:
        np.multiply(P[1], P[1], out=sq)
        np.subtract(sq, P[2], out=e)
        e *= 0.5
        o += e
    if degree == 3:
        _e3_into(P, sq, e, e)
        o += e
    if risky:
        ok &= np.isfinite(o)
    return ok


def _summed_is_safe(A, Pa2, degree: int, gamma: float, sq: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Where Newton's identities meet the contract for sum_{k<=degree} e_k (degree <= 3), from
    A = sum_j |z_j| and Pa2 = sum_j z_j^2 (writes the scratch arrays sq, s).

    :func:`newton_error_bounds` with Pa_1 = A (see :func:`closed_form_check_constants`) gives
    eps_1 = 3 gamma A, eps_2 <= gamma (3.01 A^2 + 1.5 Pa_2) and, with Pa_3 <= A Pa_2,
    eps_3 <= gamma (1.51 A^3 + 3.51 A Pa_2). The scale is bounded below by
    S = 1 + A + max(0, (A^2 - Pa_2) / 2) + max(0, (A^3 - 3 A Pa_2) / 6) <= sum_k e_k(|z|) (the
    dropped 2 Pa_3 / 6 >= 0); its rounding (a few u per term, gamma >= 3 u) is covered by
    err = gamma (0.3 + 3.3 A + 3.4 A^2 + 1.8 A^3 + Pa_2 (1.8 + 3.9 A)) (terms of orders above
    ``degree`` dropped). The test is the one of :func:`newton_is_safe` with ``all_orders``,
    2 err (1 + tol) <= tol (S - err); False where a value is not finite.
    """
    tol = CONTRACT_RTOL
    # err (Horner in A), into sq
    if degree == 3:
        np.multiply(A, 1.8, out=sq)
        sq += 3.4
        sq *= A
        sq += 3.3
    elif degree == 2:
        np.multiply(A, 3.4, out=sq)
        sq += 3.3
    else:
        sq.fill(3.3)
    sq *= A
    sq += 0.3
    if degree >= 2:
        pa2_term = np.multiply(A, 3.9) if degree == 3 else np.full_like(A, 0.0)
        pa2_term += 1.8
        pa2_term *= Pa2
        sq += pa2_term
    sq *= gamma * (2.0 + 3.0 * tol) / tol
    # lower bound of the scale, into s
    np.add(A, 1.0, out=s)
    if degree >= 2:
        h = np.multiply(A, A)
        h2 = h - Pa2
        h2 *= 0.5
        np.maximum(h2, 0.0, out=h2)
        s += h2
        if degree == 3:
            np.multiply(Pa2, 3.0, out=h2)
            np.subtract(h, h2, out=h)
            h *= A
            h *= 1.0 / 6.0
            np.maximum(h, 0.0, out=h)
            s += h
    ok = np.less_equal(sq, s)
    return ok & np.isfinite(s)


def _broadcast_full(a, shape) -> np.ndarray:
    return np.broadcast_to(np.asarray(a, dtype=np.float64), shape).copy()


# ---------------------------------------------------------------------- named kernels
def anova_kernel(X, Y=None, degree: int = 2) -> np.ndarray:
    """ANOVA kernel of order m: sum over j_1 < ... < j_m of prod x_{j_k} y_{j_k} (paper eq. 2).

    Cost: ``degree`` matrix products plus element-wise work, O(n_X n_Y d m); K(X, X) (Y=None)
    computes the upper triangle and mirrors it.
    """
    symmetric = Y is None or Y is X
    X, Y = _pair(X, Y)
    _check_degree(degree, X.shape[1], allow_zero=True)
    if degree == 0:
        return np.ones((X.shape[0], Y.shape[0]))
    return anova_gram(X, Y, degree, symmetric=symmetric)


def up_to_kernel(X, Y=None, degree: int = 2) -> np.ndarray:
    """Sum of the ANOVA kernels of orders 0..m (itemsets of size at most m)."""
    symmetric = Y is None or Y is X
    X, Y = _pair(X, Y)
    _check_degree(degree, X.shape[1], allow_zero=True)
    if degree == 0:
        return np.ones((X.shape[0], Y.shape[0]))
    return anova_gram(X, Y, degree, summed=True, symmetric=symmetric)


def dot_kernel(X, Y=None) -> np.ndarray:
    """The standard dot product <x, y> (itemsets = singletons)."""
    X, Y = _pair(X, Y)
    return _gram(X, Y)


def all_subsets_kernel(X, Y=None) -> np.ndarray:
    """All-subsets kernel prod_j (1 + x_j y_j) (paper eq. 3), in row blocks of bounded memory.

    Products that overflow on the way (a huge factor before a small one, or x_j y_j itself
    beyond float64) are recomputed in log space: inf only where the exact value is.
    """
    symmetric = Y is None or Y is X
    X, Y = _pair(X, Y)
    out = np.empty((X.shape[0], Y.shape[0]))
    # grouped GEMMs / direct products (fastpaths); both are accurate to the contract where
    # finite (sums of non-negative terms, or (1 + x_j y_j) factors one by one), but a product
    # can overflow on the way (phi_G(x) with huge x against tiny y, inf * 0): those entries
    # are recomputed in log space.
    with np.errstate(over="ignore", invalid="ignore"):
        all_subsets_gram(X, Y, out, symmetric=symmetric)
    bad = ~np.isfinite(out)
    if bad.any():
        r, c = np.nonzero(bad)
        for sl in row_blocks(len(r), 8 * 8 * X.shape[1]):  # (pairs x d) temporaries, bounded
            out[r[sl], c[sl]] = product_one_plus(_dense(X[r[sl]]), _dense(Y[c[sl]]))
    return out


def product_one_plus(U: np.ndarray, V: np.ndarray, log_scale: float = 0.0) -> np.ndarray:
    """prod_j (1 + u_j v_j) * exp(log_scale) for each row of U, V (N, d), in log space.

    The sum of log|factor| (log|u_j| + log|v_j| where u_j v_j overflows, the 1 being
    negligible there), the parity of negative factors and any exact zero factor give the
    product without overflow on the way; exp saturates to inf only where the exact value
    exceeds float64. Relative error about |log value| * u.
    """
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        z = U * V
        finite = np.isfinite(z)
        f = 1.0 + np.where(finite, z, 0.0)
        logs = np.where(finite, np.log(np.abs(f)), np.log(np.abs(U)) + np.log(np.abs(V)))
        negative = np.where(finite, f < 0, (U < 0) != (V < 0))
        zero = finite & (f == 0)
        logs[zero] = 0.0
        out = np.exp(logs.sum(axis=1) + log_scale)
    out[negative.sum(axis=1) % 2 == 1] *= -1.0
    out[zero.any(axis=1)] = 0.0
    return out


def polynomial_kernel(X, Y=None, degree: int = 2, c: float = 1.0) -> np.ndarray:
    """Polynomial kernel (c + <x, y>)^m; c = 0 gives the homogeneous kernel <x, y>^m.

    m must be an integer >= 0 and c a finite number >= 0: otherwise (c + <x, y>)^m is not
    a positive semi-definite kernel (and can be NaN).
    """
    check_polynomial_parameters(degree, c)
    return (c + dot_kernel(X, Y)) ** degree


def check_polynomial_parameters(degree, c) -> None:
    """Refuse orders and offsets for which (c + <x, y>)^m is not a kernel."""
    if not is_integer(degree) or degree < 0:
        raise ValueError(f"degree={degree!r} is not allowed: the polynomial kernel needs an integer order >= 0.")
    if isinstance(c, (bool, np.bool_)) or not isinstance(c, (int, float, np.integer, np.floating)) \
            or not np.isfinite(c) or c < 0:
        raise ValueError(f"c={c!r} is not allowed: the polynomial kernel's offset must be a finite number >= 0.")


def _check_degree(degree, d: int, allow_zero: bool = False) -> None:
    low = 0 if allow_zero else 1
    check_int(degree, f"degree={degree!r} is not allowed: the order", low, d,
              expected=f"an integer between {low} and the number of features ({d})")


# ---------------------------------------------------------------------- general families
def explicit_features(X, family: ItemsetFamily, max_features: int = MAX_ENUMERATION) -> np.ndarray:
    """phi_S(x): one column prod_{j in V} x_j per itemset V, in ``family.enumerate()`` order.

    Refuses families with more than ``max_features`` itemsets (the matrix would be too big).
    """
    X = check_array(X)
    _check_family_d(family, X.shape[1])
    if family.n_itemsets > max_features:
        raise ValueError(
            f"explicit_features: the family has {family.n_itemsets_text} itemsets, more than the "
            f"{max_features:,} columns allowed; use itemset_kernel, which never lists them."
        )
    itemsets = family.enumerate(limit=max_features)
    Xd = _dense(X)
    n = Xd.shape[0]
    out = np.empty((n, len(itemsets)))
    col = 0
    by_size: dict[int, list] = {}
    for v in itemsets:
        by_size.setdefault(len(v), []).append(v)
    # itemsets are ordered by size, so each size fills a contiguous block of columns
    for size, group in by_size.items():
        stop = col + len(group)
        if size == 0:
            out[:, col:stop] = 1.0
        else:
            idx = np.asarray(group, dtype=np.intp)  # (n_group, size)
            for rows in row_blocks(n, 8 * idx.size):
                out[rows, col:stop] = Xd[rows][:, idx].prod(axis=2)
        col = stop
    return out


def _check_family_d(family: ItemsetFamily, d: int) -> None:
    if not isinstance(family, ItemsetFamily):
        raise ValueError(f"family must be an ItemsetFamily, got {type(family).__name__}.")
    if family.d != d:
        raise ValueError(f"The itemset family is defined over d={family.d} features but the data has {d}.")


def cross_fields_kernel(X, Y, family: ItemsetFamily) -> np.ndarray:
    """e_m of the per-field dot products g_F = <x_F, y_F>: one GEMM per field, then the
    stable recursion e_k <- e_k + g_F e_{k-1} over the (few) fields.

    Accuracy contract: rows are first scaled by powers of two (exact) so that no g_F
    overflows, and the scale is restored with ldexp (inf only where the exact value is).
    The recursion has no cancellation beyond rounding, so the error is a small multiple of
    gamma_d * sum_V |prod_{j in V} x_j y_j|.
    """
    X, Y = _pair(X, Y)
    m = family.degree
    ex, Xs = _row_power_of_two_scale(X)
    ey, Ys = _row_power_of_two_scale(Y)
    fields = [np.asarray(f, dtype=np.intp) for f in family.fields]
    e = [np.ones((X.shape[0], Y.shape[0]))] + [np.zeros((X.shape[0], Y.shape[0])) for _ in range(m)]
    for n_done, f in enumerate(fields, start=1):
        g = _gram(Xs[:, f], Ys[:, f])
        for k in range(min(n_done, m), 0, -1):
            e[k] += g * e[k - 1]
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(e[m], m * (ex[:, None] + ey[None, :]))


def _row_power_of_two_scale(A):
    """(exponents E_i, A_i * 2^-E_i) with max_j |A_ij 2^-E_i| in [0.5, 1): an exact scaling."""
    amax = np.asarray(abs(A).max(axis=1).todense() if sp.issparse(A) else np.abs(A).max(axis=1)).reshape(-1)
    E = np.frexp(amax)[1].astype(np.int64)
    factor = np.ldexp(1.0, -E)
    if sp.issparse(A):
        return E, sp.csr_matrix(sp.diags(factor) @ A)
    return E, A * factor[:, None]


def itemset_support(X, Y, family: ItemsetFamily) -> np.ndarray:
    """Boolean (n_X, n_Y): whether some itemset V of the family has x_j y_j != 0 for all j in V.

    Decided combinatorially from the non-zero patterns (counts of shared non-zeros), so it
    does not depend on rounding or blocking: outside it K_S is exactly 0 (and is returned
    as 0.0 by the kernels here); inside it K_S is usually, not always, non-zero (signed
    terms can cancel).
    """
    X, Y = _pair(X, Y)
    _check_family_d(family, X.shape[1])
    shape = (X.shape[0], Y.shape[0])
    B = (X != 0).astype(np.float64)
    C = (Y != 0).astype(np.float64)
    kind = family.kind
    if kind in ("up_to", "all_subsets"):  # the empty itemset is in the family
        return np.ones(shape, dtype=bool)
    if kind in ("anova", "dot"):
        return _gram(B, C) >= (family.degree if kind == "anova" else 1)
    if kind == "cross_fields":
        hits = sum((_gram(B[:, list(f)], C[:, list(f)]) >= 1).astype(np.int64) for f in family.fields)
        return hits >= family.degree
    if () in family.itemsets:
        return np.ones(shape, dtype=bool)
    return _gram(explicit_features(B, family), explicit_features(C, family)) > 0


def anova_newton_float(X, Y, degree: int) -> np.ndarray:
    """The paper's eq. 12 as plain floating point (power sums, Newton's identities), without
    the accuracy contract: only for reproducing protocols that depend on its rounding
    (``error_study(pairs="nonzero_float")``). Implementation-dependent; do not use for values."""
    X, Y = _pair(X, Y)
    return _broadcast_full(elementary_top(power_sums(X, Y, degree), degree), (X.shape[0], Y.shape[0]))


def itemset_kernel(X, Y=None, family: ItemsetFamily | None = None) -> np.ndarray:
    """K_S(x, y) = sum_{V in S} prod_{j in V} x_j y_j (paper eq. 4) for any family S.

    Named families take their fast path; cross-field families use per-field
    products; custom families go through the explicit features phi_S.
    """
    if family is None:
        raise ValueError("itemset_kernel needs family=: an ItemsetFamily (see rkcore.kernels.itemsets).")
    X, Y = _pair(X, Y)
    _check_family_d(family, X.shape[1])
    kind = family.kind
    if kind == "anova":
        return anova_kernel(X, Y, family.degree)
    if kind == "up_to":
        return up_to_kernel(X, Y, family.degree)
    if kind == "dot":
        return dot_kernel(X, Y)
    if kind == "all_subsets":
        return all_subsets_kernel(X, Y)
    if kind == "cross_fields":
        return cross_fields_kernel(X, Y, family)
    return _gram(explicit_features(X, family), explicit_features(Y, family))
