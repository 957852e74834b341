"""Newton's closed forms of orders 2 and 3 (and the up-to sums of orders 1 to 3) on one cache-sized
sub-block of the exact ANOVA Gram (rkcore.kernels.anova_gram), fused with the a-posteriori check of
the accuracy contract (rkcore.kernels.numerics): the same bounds as newton_is_safe, decided entry by
entry on the power sums already in cache."""
from __future__ import annotations

import numpy as np

from .numerics import BLOCK_BYTES, CONTRACT_RTOL, row_blocks
from ..base.arrays import dense


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


def _gathered_check(X, Y, rows: np.ndarray, cols: np.ndarray, P: list, degree: int, consts) -> np.ndarray:
    """The closed-form tests of :func:`newton_is_safe` (orders 2, 3) for the pairs (rows, cols),
    with their |z| power sums computed pair by pair (P: their power sums, gathered)."""
    c, c_b = consts
    out = np.empty(len(rows), dtype=bool)
    for sl in row_blocks(len(rows), 8 * 4 * X.shape[1], BLOCK_BYTES):
        U, V = np.abs(dense(X[rows[sl]], dtype=None)), np.abs(dense(Y[cols[sl]], dtype=None))
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
