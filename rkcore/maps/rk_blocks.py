"""Block functions of the RK map (rkcore.maps): each maps a block of rows of X to its features,
with its precomputation on the weights W done once, and meets the accuracy contract of
rkcore.kernels.numerics over the whole float range (:class:`_RangedMapper`)."""
from __future__ import annotations

import numpy as np

from ..kernels.blas_blocks import gemm_into
from ..kernels.fastpaths import rk_block
from ..kernels.itemsets import ItemsetFamily
from ..kernels.numerics import (
    elementary_from_power_sums,
    elementary_top,
    may_overflow,
    newton_is_safe,
    power_sums,
    rounding_gamma,
    row_blocks,
)
from ..kernels.matrices import abs_max, elementwise_power, gram_dense, max_nnz_per_row
from ..base.arrays import dense
from ..kernels.ranges import in_range, restore_scale, row_exponents, safe_binades, scale_rows, unscaled_failing_rows
from ..kernels.stable import cross_field_pairs, custom_pairs, elementary_pairs, product_one_plus
from ..kernels.exact import explicit_features, itemset_kernel
from ..base.annotations import is_sparse


def _block_mapper(family: ItemsetFamily, W: np.ndarray, signs: bool, n_components: int | None = None):
    """:func:`_fast_block_mapper`, valid over the whole float range (:class:`_RangedMapper`)."""
    mapper = _fast_block_mapper(family, W, signs, n_components)
    kind = family.kind
    m = family.degree if family.degree is not None else 0  # 0: the kinds without an order do not read m
    scale = 1.0 / np.sqrt(n_components or W.shape[0])
    if kind in ("anova", "dot"):
        m = 1 if kind == "dot" else m
        return _RangedMapper(mapper, W, m, "scale", lambda Xb, r, c: elementary_pairs(Xb, W, r, c, m, factor=scale))
    if kind == "up_to" and m > 0:
        return _RangedMapper(mapper, W, m, "sum",
                             lambda Xb, r, c: elementary_pairs(Xb, W, r, c, m, summed=True, factor=scale))
    if kind == "custom":
        width = max((len(v) for v in family.custom_itemsets), default=0)
        itemsets = family.enumerate()
        return _RangedMapper(mapper, W, max(width, 1), "plain", lambda Xb, r, c: custom_pairs(Xb, W, r, c, itemsets, factor=scale))
    return mapper  # all-subsets: its own log-space repair; cross-field: through itemset_kernel


def _fast_block_mapper(family: ItemsetFamily, W: np.ndarray, signs: bool, n_components: int | None = None):
    """A function mapping a block of rows of X to its RK features, with precomputation on W.
    Features are scaled by 1/sqrt(n_components) (default: the rows of W; stacked maps keep their D)."""
    D = W.shape[0]  # output columns
    scale = 1.0 / np.sqrt(n_components or D)
    kind = family.kind
    m = family.degree if family.degree is not None else 0  # 0: the kinds without an order do not read m
    if kind == "dot":
        Wt = W.T * W.dtype.type(scale)  # in W's dtype: a float64 scalar would make NumPy 2 promote float32 W
        return _Mapper(lambda Xb: np.asarray(Xb @ Wt), 1)
    if kind == "up_to" and m == 0:  # only the empty itemset: every feature is 1 / sqrt(D)
        return _Mapper(lambda Xb: np.full((Xb.shape[0], D), scale), 1, gemm=False)
    if kind == "anova" and m in (2, 3):
        return _anova_closed_form_mapper(W, m, signs, n_components, scale)
    if kind in ("anova", "up_to"):
        return _newton_mapper(W, kind, m, signs, scale)
    if kind == "all_subsets":
        return _all_subsets_mapper(W, signs, n_components, scale)
    if kind == "custom":
        phi_W = explicit_features(W, family).T * scale
        return _Mapper(lambda Xb: explicit_features(Xb, family) @ phi_W, phi_W.shape[0] // D + 2)
    # cross-field families: per-field products, exact kernel between X and the weights; where K(x, w)
    # overflows, K / sqrt(D) may not: those features again with the scale applied before the rounding
    fields = [np.asarray(f, dtype=np.intp) for f in family.field_groups]

    def cross_fields(Xb):
        with np.errstate(over="ignore"):
            Z = itemset_kernel(Xb, W, family) * scale
        rows, cols = np.nonzero(~np.isfinite(Z))
        if rows.size:
            Z[rows, cols] = cross_field_pairs(Xb, W, rows, cols, fields, m, factor=scale)
        return Z
    return _Mapper(cross_fields, len(fields) + 2 * m)


def _repair(Z, Xb, W, w_max: float, ok, degree: int, all_orders: bool, factor: float):
    """Accuracy contract (rkcore.kernels.numerics): recompute the features where ``ok`` is False
    (or not finite) with the stable recursion, times ``factor``."""
    if Z.dtype != np.float64 or may_overflow(abs_max(Xb), w_max, W.shape[1], degree):
        ok = ok & np.isfinite(Z)  # (float32 overflows far below may_overflow's threshold)
    if ok.all():
        return Z
    rows, cols = np.nonzero(~np.broadcast_to(ok, Z.shape))
    # the orders summed (up-to) in (mantissa, exponent) form, and the 1/sqrt(D) applied before the rounding
    # to float64: inf only where the feature itself is beyond float64, never inf - inf
    Z[rows, cols] = elementary_pairs(Xb, W, rows, cols, degree, summed=all_orders, factor=factor)
    return Z


def _anova_closed_form_mapper(W: np.ndarray, m: int, signs: bool, n_components, scale: float):
    """ANOVA m = 2, 3: in-place closed forms (fastpaths.AnovaBlock, 1/(m! sqrt D) folded into the
    weights as c^t W^t), then the a-posteriori check and repair: the power sums of |c x w| (Pa_2 =
    P_2, kept by the block) decide which features the stable recursion recomputes. Rademacher:
    the check is on row sums, O(nnz) per row."""
    fast = rk_block("anova", m, W, signs, n_components)
    c, w_max = fast.c, abs_max(W)

    def anova_fast(Xb, out):
        gamma = rounding_gamma(max_nnz_per_row(Xb) + 2 * m)
        if not signs and out.dtype == np.float64 and not may_overflow(abs_max(Xb), w_max, W.shape[1], m):
            # Fused: features and a sufficient condition for newton_is_safe on cache-sized
            # chunks; newton_is_safe itself decides for the few entries that condition
            # leaves (fastpaths.AnovaBlock.checked). None: gamma too large for tier 1.
            with np.errstate(over="ignore", invalid="ignore"):
                bad = fast.checked(Xb, out, float(gamma))
            if bad is not None:
                rows, cols = bad
                if len(rows):
                    out[rows, cols] = elementary_pairs(Xb, W, rows, cols, m, False, factor=scale)
                return out
        sums: dict = {}
        with np.errstate(over="ignore", invalid="ignore"):
            fast(Xb, out, sums)
            absX = abs(Xb)
            if signs:
                Pa = [None, c * _row_sums(absX), sums["P2"]]
                if m == 3:
                    Pa.append(c**3 * _row_sums(elementwise_power(absX, 3)))
            else:
                scratch = sums.get("scratch")
                Pa1 = gemm_into(1.0, absX, fast._abs_weights(1), 0.0, np.empty_like(out) if scratch is None else scratch)
                Pa = [None, Pa1, sums["P2"]]
                if m == 3:  # one more GEMM; the check uses it only where 3 Pa_2 > A^2 (1 - ...)
                    Pa.append(gemm_into(1.0, elementwise_power(absX, 3), fast._abs_weights(3), 0.0, np.empty_like(out)))
            ok = newton_is_safe(Pa, m, gamma)
        return _repair(out, Xb, W, w_max, ok, m, False, scale)

    # (rows x D) temporaries: Rademacher none beyond m = 3's scratch; otherwise P_2 (m = 2)
    # or P_2, P_3 and A (m = 3) in the fused check. Fractions: fast blocks are a few large BLAS calls (cheap
    # per row, costly per call under load; see fastpaths.GEMM_BLOCK_TEMPORARIES).
    return _Mapper(anova_fast, fast.temporaries if signs else 0.5, in_place=True)


def _newton_mapper(W: np.ndarray, kind: str, m: int, signs: bool, scale: float):
    """ANOVA of any order, or up-to: power sums, Newton's identities, the check and repair. For
    Rademacher weights |x_j w_j| = |x_j|, so the power sums of |z| are row sums (O(d) per row)."""
    D, w_max = W.shape[0], abs_max(W)
    powers: list[np.ndarray | None] | None = None if signs else [None] + [W**t for t in range(1, m + 1)]
    W_abs = None if signs else np.abs(W)

    def abs_power_sums(Xb, P, upto):
        """Power sums of |x * w| (even ones are P's): row sums, or one GEMM per odd order."""
        Pa: list[np.ndarray | None] = [None]
        for t in range(1, upto + 1):
            if t % 2 == 0:
                Pa.append(P[t])
            elif signs:
                Pa.append(np.asarray(abs(elementwise_power(Xb, t)).sum(axis=1)).reshape(-1, 1))
            else:
                assert W_abs is not None  # built whenever signs is False
                Pa.append(gram_dense(elementwise_power(abs(Xb), t), W_abs**t if t > 1 else W_abs))
        return Pa
    # e_m(c x, w) = c^m e_m(x, w): scaling the (small) X block by D^(-1/(2m)) replaces a pass over
    # the (rows x D) output (X is in range here: _RangedMapper). Sums over orders need the output scaled.
    x_scale = scale ** (1.0 / m) if kind == "anova" else 1.0

    def anova(Xb):
        Xb = Xb * x_scale if x_scale != 1.0 else Xb
        gamma = rounding_gamma(max_nnz_per_row(Xb) + 2 * m)
        with np.errstate(over="ignore", invalid="ignore"):
            if signs:
                P = power_sums(Xb, W, m, y_is_sign=True)
            else:
                assert powers is not None  # built whenever signs is False
                P = [None] + [gram_dense(Xb.power(t) if is_sparse(Xb) else Xb**t, powers[t]) for t in range(1, m + 1)]
            ok = newton_is_safe(abs_power_sums(Xb, P, m), m, gamma, all_orders=kind == "up_to")
            if kind == "anova":
                Z = elementary_top(P, m)
                if Z.shape != (Xb.shape[0], D):
                    Z = np.broadcast_to(Z, (Xb.shape[0], D)).copy()
                return _repair(Z, Xb, W, w_max, ok, m, False, 1.0)
            e = elementary_from_power_sums(P, m)
            Z = np.broadcast_to(e[1], (Xb.shape[0], D)).copy()
            for ek in e[2:]:
                Z += ek
            Z += 1.0
            Z *= scale
        return _repair(Z, Xb, W, w_max, ok, m, True, scale)

    return _Mapper(anova, m + 3)


def _all_subsets_mapper(W: np.ndarray, signs: bool, n_components, scale: float):
    """Rademacher: log trick (one GEMM/SpMM of logs, then exp; rows its bound cannot vouch for take
    the direct product); other weights: product over each row's non-zeros, which can overflow or
    give inf * 0 on the way. Either way, non-finite features are recomputed in log space."""
    fast = rk_block("all_subsets", 1, W, signs, n_components)
    log_scale = np.log(scale)

    def all_subsets_fast(Xb, out):
        with np.errstate(over="ignore", invalid="ignore"):
            fast(Xb, out)
        bad = ~np.isfinite(out)
        if bad.any():
            r, c_ = np.nonzero(bad)
            for sl in row_blocks(len(r), 8 * 8 * W.shape[1]):
                out[r[sl], c_[sl]] = product_one_plus(dense(Xb[r[sl]], dtype=None), W[c_[sl]], log_scale)
        return out

    return _Mapper(all_subsets_fast, fast.temporaries, in_place=True)


class _RangedMapper:
    """A block function made valid over the whole float range (rkcore.kernels.ranges): blocks in
    range go to ``inner`` unchanged; otherwise ("scale", homogeneous families) rows are scaled by
    powers of two and the scale restored, or ("sum", "plain") computed as they are; rows still
    out of range, and non-finite features, are recomputed by ``fallback(Xb, rows, cols)``."""

    def __init__(self, inner: "_Mapper", W: np.ndarray, degree: int, mode: str, fallback):
        self.inner, self.degree, self.mode, self.fallback = inner, degree, mode, fallback
        self.temporaries, self.gemm = inner.temporaries, inner.gemm
        lo, hi = row_exponents(W)
        self.lo_w, self.hi_w, self.d = int(lo.min(initial=0)), int(hi.max(initial=0)), W.shape[1]

    def __call__(self, Xb, out):
        m, safe = self.degree, safe_binades(Xb.dtype)
        lx, hx = row_exponents(Xb)
        if in_range(lx, hx, self.lo_w, self.hi_w, m, self.d, safe):
            return self.inner(Xb, out)
        with np.errstate(all="ignore"):
            if self.mode == "scale":
                self.inner(scale_rows(Xb, hx), out)
                restore_scale(out, (m * hx)[:, None])
                bad = np.flatnonzero(m * (lx - hx + self.lo_w - 2) < -safe)
            elif self.mode == "plain":
                self.inner(Xb, out)
                bad = unscaled_failing_rows(lx, hx, self.lo_w, self.hi_w, m, self.d, safe)
            else:  # sums over orders: their scale is >= 1, only overflow matters
                self.inner(Xb, out)
                log_d = float(np.log2(max(self.d, 2)))
                bad = np.flatnonzero((m * np.maximum(0, hx) > safe) | (m * (np.maximum(0, hx + self.hi_w) + log_d) > safe))
        bad_mask = ~np.isfinite(out).all(axis=1)
        bad_mask[bad] = True
        rows = np.flatnonzero(bad_mask)
        if rows.size:
            D = out.shape[1]
            r, c = np.repeat(rows, D), np.tile(np.arange(D), rows.size)
            out[rows] = self.fallback(Xb, r, c).reshape(rows.size, D)
        return out


class _Mapper:
    """A block function, how many (rows x D) temporaries it allocates, and whether it is
    GEMM-bound (then blocks keep at least MIN_GEMM_BLOCK_ROWS rows); for block sizing.

    ``fn(Xb)`` returns the block, or with ``in_place`` ``fn(Xb, out)`` writes it. The block is
    computed in the dtype of Xb (float64 unless the family is float32-safe) and stored in
    out's: a float32 ``out`` of a float64 computation gets a float64 buffer first."""

    def __init__(self, fn, temporaries: float, gemm: bool = True, in_place: bool = False):
        self.fn, self.temporaries, self.gemm, self.in_place = fn, temporaries, gemm, in_place

    def __call__(self, Xb, out):
        if not self.in_place:
            out[...] = self.fn(Xb)
        elif out.dtype == Xb.dtype:
            self.fn(Xb, out)
        else:
            out[...] = self.fn(Xb, np.empty(out.shape, dtype=Xb.dtype))
        return out


def _row_sums(A) -> np.ndarray:
    """Row sums of a dense or sparse block as a (rows, 1) column."""
    return np.asarray(A.sum(axis=1)).reshape(-1, 1)
