"""The accuracy contract of rkcore's exact kernels, RK/SCRK features and FM forward pass, and the
numerics behind it: constants, power sums, Newton's identities and their a-posteriori check.

Accuracy contract (float64)
---------------------------
For any finite input - every float64 from the smallest subnormal to the largest finite, dense or
sparse as scipy gives it (duplicate entries are summed, as scipy's arithmetic reads them) - every
value K_S(x, y) of :mod:`rkcore.kernels` (and every RK/SCRK feature K_S(x, w) / sqrt(D), and the
factorization machine's forward pass) is within

    CONTRACT_RTOL * S + 2^-1022,   S = sum_{V in S} |prod_{j in V} z_j|,   z = x * y (or x * w),

of the exact value, for every family (named, cross-field, custom), and is never NaN or inf
where the exact value is a finite float64. Where the exact value is 0 because fewer than m
products z_j are non-zero, 0.0 is returned exactly. The caller's arrays are never modified
(sparse input is read through a canonical copy, :func:`canonical_csr`).

**Beyond float64.** Where the exact value exceeds the largest float64, the result is +inf or
-inf with the exact value's sign (never NaN, never 0.0); within 1e-12 S of the threshold either
the saturated inf or a finite value may come back. Where S exceeds float64 but the exact value
does not (huge terms that cancel), the result is finite and within the contract (e.g. 0.0
where the exact value is 0).

**The whole float range** (:mod:`rkcore.kernels.ranges`): the fast paths run unchanged where every
power and product they form stays within 2^(+-900); elsewhere rows are scaled by powers of two
(exact) and pairs that are still out of range are computed in (mantissa, exponent) form.

**float32 contract.** float32 input gives float32 output. The dot RK map is one float32 GEMM:
its error is at most gamma32(n) * S, gamma32(n) = 1.01 * 2^-24 * min(n + 2, 10 sqrt(n + 2)),
n the non-zeros of the row (the weights' rounding to float32 included). Every other map and
kernel computes in float64 (within the contract above) and rounds once to float32: error at
most CONTRACT_RTOL * S + 2^-24 |value| + 2^-149. Beyond float32's range (3.4e38) the stored value
is +-inf only where the float64 value v is beyond it for sure (|v| - CONTRACT_RTOL * S > 3.4e38:
the exact value is too); a v past 3.4e38 by less than the contract's tolerance - an exact 0 with
huge terms that cancel, say - is stored as +-3.4e38, the float32 value nearest the exact one
(:func:`rkcore.kernels.ranges.saturate_float32`). Newton's identities cancel: in float32 the second-order ANOVA map
reached 2e-5 * S.

How the fast path keeps the contract
------------------------------------
Newton's identities (the fast path) cancel catastrophically when one |z_j| dominates
or m is close to d. :func:`newton_is_safe` bounds their rounding error a posteriori
from the power sums of |z| (for Rademacher weights: row sums) and the entries where
the bound exceeds the contract are recomputed by :func:`rkcore.kernels.stable.elementary_stable`,
the recursion e_k <- e_k + z_j e_{k-1} (Blondel et al. 2016) over their non-zeros, in
(mantissa, exponent) form so that no intermediate overflows or underflows.

The bound models the rounding error of an inner product of n non-zero terms as
gamma_n * sum |terms| with gamma_n = u * min(n, LAMBDA * sqrt(n)), u = 2^-53: the
deterministic worst case for n <= LAMBDA^2 = 100, and above that the probabilistic
bound of Higham & Mary (SIAM J. Sci. Comput. 2019), which fails with probability
below n * 2 exp(-LAMBDA^2 / 2) ~ 4e-22 n under their model of independent rounding.
"""
from __future__ import annotations

from typing import Iterator, cast

import numpy as np
import scipy.sparse as sp

from sklearn.utils import gen_batches

from ..base.limits import block_bytes, nbytes, require_memory
from ..base.validation import numeric_matrix_message
from .matrices import elementwise_power, gram_dense
from .sparse_input import canonical_csr  # noqa: F401  (re-exported: the kernels, maps and learners import it here)
from ..base.annotations import is_sparse


#: Bytes of temporary memory one block of a blocked computation may use; lowered to scikit-learn's
#: working_memory when that is smaller (row_blocks, :func:`rkcore.base.limits.block_bytes`).
BLOCK_BYTES = 64 * 2**20

#: Relative accuracy promised against sum_V |prod_{j in V} z_j| (see the module docstring).
CONTRACT_RTOL = 1e-12
#: Unit roundoff of float32 (the float32 contract, module docstring).
FLOAT32_UNIT_ROUNDOFF = 2.0**-24

#: Unit roundoff of float64.
UNIT_ROUNDOFF = 2.0**-53

#: lambda of the probabilistic rounding-error bound (see the module docstring).
ROUNDING_LAMBDA = 10.0


def check_array(X, name: str = "X") -> np.ndarray | sp.csr_matrix:
    """Validate a data matrix for the exact kernels: 2-D, real, numeric, finite, not empty.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        The data.
    name : str, default="X"
        Its name in the error messages.

    Returns
    -------
    ndarray or scipy.sparse.csr_matrix of shape (n_samples, n_features)
        float64: dense (possibly ``X`` itself: never write into it), or a canonical CSR copy
        (:func:`canonical_csr`).

    Raises
    ------
    ValueError
        When X is complex, ragged or not numeric, not 2-D, empty, or holds NaN or infinity.
    """
    complex_error = f"{name} holds complex numbers; only real values are allowed (the imaginary part would be lost)."
    if is_sparse(X):
        if np.issubdtype(X.dtype, np.complexfloating):  # any format: DOK has no .data
            raise ValueError(complex_error)
        X = canonical_csr(X, name)
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
            raise ValueError(numeric_matrix_message(name)) from None
        except TypeError:
            raise ValueError(numeric_matrix_message(name)) from None
        data = X
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix (n_samples, n_features), got {X.ndim} dimension(s).")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {X.shape}); it needs at least one sample and one feature.")
    if not np.isfinite(data).all():
        raise ValueError(f"{name} contains NaN or infinity; only finite values are allowed.")
    return X


def _pair(X, Y, gram_copies: int | None = 2):
    """X and Y checked (Y = X when None), and their Gram matrix priced (``gram_copies`` Gram-sized arrays at the
    peak, :func:`check_gram_fits`; None: the caller prices it)."""
    X = check_array(X, "X")
    Y = X if Y is None else check_array(Y, "Y")
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}; they must match.")
    if gram_copies is not None:
        check_gram_fits(X.shape[0], Y.shape[0], gram_copies)
    return X, Y


def check_gram_fits(n_rows: int, n_cols: int, gram_copies: int) -> None:
    """Refuse (ValueError, :func:`rkcore.base.limits.require_memory`) a Gram matrix of n_rows x n_cols whose
    computation holds more than the memory budget: ``gram_copies`` arrays of its size at its peak (the
    result and the temporaries the engine keeps beside it). The message names the largest number of rows
    that fits (rows of X and Y scaled together).

    Parameters
    ----------
    n_rows, n_cols : int
        Rows of X and of Y.
    gram_copies : int
        Gram-sized arrays held at the peak (2 for the dot, all-subsets and itemset kernels, measured with
        tracemalloc; more for ANOVA and up-to, see their callers).
    """
    def bytes_for(rows: int) -> int:  # numpydoc ignore=GL08
        return nbytes((gram_copies, rows, max(1, rows * n_cols // max(n_rows, 1))))

    require_memory({f"the {n_rows:,} x {n_cols:,} Gram matrix and its temporaries": (gram_copies, n_rows, n_cols)},
                   what="This kernel matrix", hint="Use fewer rows, or compute the matrix in blocks of rows.",
                   largest={"number of rows": bytes_for})


def row_blocks(n_rows: int, bytes_per_row: float, budget: int | None = None) -> Iterator[slice]:
    """Slices over rows so that one block needs at most ``budget`` bytes (at least one row each).

    The budget is lowered to scikit-learn's ``working_memory`` when that is smaller
    (:func:`rkcore.base.limits.block_bytes`), so ``sklearn.config_context(working_memory=...)`` bounds
    rkcore's blocks as it bounds scikit-learn's pairwise chunks; the slices are ``sklearn.utils.gen_batches``'s.

    Parameters
    ----------
    n_rows : int
        Rows to cover.
    bytes_per_row : float
        Bytes one row of the block's temporaries needs (at least 1 is assumed).
    budget : int, optional
        Bytes per block; None: BLOCK_BYTES.

    Returns
    -------
    iterator of slice
        Consecutive row ranges covering 0..n_rows, ``block_bytes(budget) // bytes_per_row`` rows (>= 1) each.
    """
    step = max(1, int(block_bytes(BLOCK_BYTES if budget is None else budget) // max(1, bytes_per_row)))
    return row_batches(n_rows, step)


def row_batches(n_rows: int, rows_per_batch: int) -> Iterator[slice]:
    """Slices of ``rows_per_batch`` rows covering 0..n_rows: ``sklearn.utils.gen_batches``, for a fixed row count
    (a cache-sized block, or one already derived from :func:`row_blocks`'s budget).

    Parameters
    ----------
    n_rows : int
        Rows to cover (0: no slice).
    rows_per_batch : int
        Rows per slice (at least 1 is used); the last slice may be shorter.

    Returns
    -------
    iterator of slice
        The consecutive row ranges.
    """
    n_rows, step = int(n_rows), max(1, int(rows_per_batch))
    if n_rows <= step:  # one block: gen_batches's parameter check (~90 us a call) would cost more than small inputs
        return iter([slice(0, n_rows)] if n_rows > 0 else [])
    return gen_batches(n_rows, step)


# ---------------------------------------------------------------------- power sums
def power_sums(X, Y, degree: int, y_is_sign: bool = False) -> list:
    """P_t = <x^t, y^t> for t = 1..degree, as Gram matrices (index 0 unused).

    With ``y_is_sign`` (Y has entries +-1 only, e.g. Rademacher weights) the odd
    powers of Y equal Y and the even ones are all ones, so even P_t reduce to
    row sums of X^t: a column vector that broadcasts, and half the GEMMs vanish.
    Each P_t is one GEMM: error at most gamma_n sum_j |x_j y_j|^t.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_X, d)
        Rows x, float64.
    Y : ndarray or scipy.sparse matrix of shape (n_Y, d)
        Rows y (or weights w), float64.
    degree : int
        The highest power, >= 1.
    y_is_sign : bool, default=False
        Y's entries are exactly +1 or -1.

    Returns
    -------
    list
        ``[None, P_1, ..., P_degree]``: float64 arrays (n_X, n_Y); (n_X, 1) for even t with ``y_is_sign``.
    """
    P: list = [None]
    for t in range(1, degree + 1):
        if y_is_sign and t % 2 == 0:
            P.append(np.asarray(elementwise_power(X, t).sum(axis=1), dtype=np.float64).reshape(-1, 1))
        elif y_is_sign:
            P.append(gram_dense(elementwise_power(X, t), Y))
        else:
            P.append(gram_dense(elementwise_power(X, t), elementwise_power(Y, t)))
    return P


def elementary_from_power_sums(P: list, degree: int) -> list:
    """Newton's identities (paper eq. 12): e_k = (1/k) sum_{t=1}^k (-1)^(t+1) e_{k-t} P_t.

    In place with one scratch buffer (these passes, not the GEMMs, dominate for small d). Plain
    floating point: it may cancel; :func:`newton_is_safe` checks it.

    Parameters
    ----------
    P : list
        ``P[t]`` (t = 1..degree) the power sums, float64 arrays that broadcast together; index 0
        unused. Not modified.
    degree : int
        The highest order, >= 1.

    Returns
    -------
    list
        e_0..e_degree: e_0 = 1.0 and each e_k a new float64 array of the broadcast shape.
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
    GEMMs, dominate the RK map for small d. Unchecked, as :func:`elementary_from_power_sums`.

    Parameters
    ----------
    P : list
        ``P[t]`` (t = 1..degree) the power sums, float64 arrays that broadcast together; index 0
        unused. For degree 3, P[2] and P[3] are overwritten (used as scratch).
    degree : int
        The order, >= 1.

    Returns
    -------
    ndarray
        e_degree, of the broadcast shape (degree 1: ``P[1]`` itself).
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
def float32_gamma(n_terms):
    """gamma32(n) of the float32 contract (module docstring): the dot map's relative error against S.

    Parameters
    ----------
    n_terms : int or array-like of int
        Non-zeros of each row.

    Returns
    -------
    ndarray
        1.01 * 2^-24 * min(n + 2, 10 sqrt(n + 2)), float64, shaped as ``n_terms`` (0-d: a scalar).
    """
    n = np.asarray(n_terms, dtype=np.float64) + 2.0
    return 1.01 * FLOAT32_UNIT_ROUNDOFF * np.minimum(n, ROUNDING_LAMBDA * np.sqrt(n))


def rounding_gamma(n_terms):
    """gamma_n: relative rounding error of a sum of n products (deterministic worst case up to
    n = 100, the probabilistic bound of Higham & Mary above; see the module docstring).

    Parameters
    ----------
    n_terms : int or array-like of int
        Terms of the sum (values below 1 count as 1).

    Returns
    -------
    ndarray
        1.01 * 2^-53 * min(n, 10 sqrt(n)), float64, of the shape of ``n_terms`` (0-d for a scalar).
    """
    n = np.maximum(np.asarray(n_terms, dtype=np.float64), 1.0)
    return 1.01 * UNIT_ROUNDOFF * np.minimum(n, ROUNDING_LAMBDA * np.sqrt(n))


def newton_error_bounds(Pa: list, degree: int, gamma) -> list:
    """Bounds eps_0..eps_degree on |computed e_k - e_k| for Newton's identities.

    ``Pa[t]`` = sum_j |z_j|^t (the power sums of |z|, arrays that broadcast), ``gamma`` the
    relative error of each computed power sum. With A = Pa[1] and |e_j| <= A^j / j!,
    eps_k = (1/k) sum_t Pa_t ((1 + 3 gamma) eps_{k-t} + 3 gamma A^{k-t} / (k-t)!): the
    3 gamma covers the power sum, the product and the k-term sum of each step.

    Parameters
    ----------
    Pa : list
        ``Pa[t]`` = sum_j |z_j|^t (t = 1..degree), arrays that broadcast; index 0 unused.
    degree : int
        The highest order, >= 1.
    gamma : float or ndarray
        The relative error of each computed power sum (:func:`rounding_gamma`).

    Returns
    -------
    list
        eps_0..eps_degree: eps_0 = 0.0, then arrays of the broadcast shape.
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

    Parameters
    ----------
    degree : {2, 3}
        The order (any other value is read as 3).
    gamma : float or ndarray
        The relative error of each computed power sum (:func:`rounding_gamma`).
    tol : float, default=CONTRACT_RTOL
        The relative accuracy to meet.

    Returns
    -------
    c : ndarray
        The first test's constant (0-d for a scalar gamma); <= 0: it accepts only Pa_2 = 0.
    c_b : ndarray or None
        The constant of the second order-3 test; None for order 2.
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
    is needed and given). Every entry it accepts meets the accuracy contract (module docstring);
    the caller recomputes the others (:func:`rkcore.kernels.stable.elementary_pairs`).

    Parameters
    ----------
    Pa : list
        ``Pa[t]`` = sum_j |z_j|^t (t = 1..degree), float64 arrays that broadcast (for even t the
        signed power sum P_t itself); index 0 unused. Order 3 may pass ``Pa[3] = None`` or omit it
        (then only its first test runs).
    degree : int
        The order m, >= 1.
    gamma : float or ndarray
        The relative error of each computed power sum (:func:`rounding_gamma`).
    all_orders : bool, default=False
        Check the sum e_0 + ... + e_degree (the up-to kernel) instead of e_degree.
    tol : float, default=CONTRACT_RTOL
        The relative accuracy to meet.

    Returns
    -------
    ndarray of bool
        True where the computed value is vouched for, of the broadcast shape of Pa.
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
    """Whether a power x^t, y^t or a power sum (t <= degree) of n_terms products could overflow
    (conservative: 10^290); False: the fast path's values are finite, its finiteness pass skipped.

    Parameters
    ----------
    x_absmax : float
        The largest |x_j| of the rows.
    y_absmax : float
        The largest |y_j| (or |w_j|).
    n_terms : int
        Terms per power sum (the number of features).
    degree : int
        The highest power.

    Returns
    -------
    bool
        True where overflow is possible (or the inputs are not finite).
    """
    big = max(float(x_absmax), float(y_absmax), max(n_terms, 1) * float(x_absmax) * float(y_absmax), 1.0)
    return degree * np.log10(big) > 290 if np.isfinite(big) else True


def _is_nonnegative(A) -> bool:
    data = cast("sp.csr_matrix", A).data if is_sparse(A) else A  # canonical CSR here: the engines' inputs pass canonical_csr
    return data.size == 0 or bool(data.min() >= 0)


def _zero_fraction(A) -> float:
    if is_sparse(A):
        return 1.0 - A.nnz / max(1, A.shape[0] * A.shape[1])
    return 1.0 - np.count_nonzero(A) / max(1, A.size)


def _broadcast_full(a, shape) -> np.ndarray:
    return np.broadcast_to(np.asarray(a, dtype=np.float64), shape).copy()


def _deterministic_gamma(n: int, u: float = UNIT_ROUNDOFF) -> float:
    """gamma_n = n u / (1 - n u): the worst-case relative error of any sum of n non-negative
    products, in any order, with or without FMA (Higham, Accuracy and Stability, 3.1)."""
    return n * u / (1.0 - n * u)
