"""Exact rational oracles for the numerics tests (fractions.Fraction, from the definitions)."""
from __future__ import annotations

from fractions import Fraction
from itertools import combinations

import numpy as np


def fr(v) -> Fraction:
    return Fraction(float(v))


def elementary_exact(z, m: int) -> list:
    """e_0..e_m of the rationals z by the exact recursion."""
    e = [Fraction(1)] + [Fraction(0)] * m
    for v in z:
        for k in range(m, 0, -1):
            e[k] += e[k - 1] * v
    return e


def itemset_value(x, y, itemsets) -> tuple[Fraction, Fraction]:
    """(K_S(x, y), sum_V |prod z_j|) exactly, for an explicit list of itemsets."""
    z = [fr(a) * fr(b) for a, b in zip(x, y)]
    val, scale = Fraction(0), Fraction(0)
    for V in itemsets:
        p = Fraction(1)
        for j in V:
            p *= z[j]
        val += p
        scale += abs(p)
    return val, scale


def family_value(x, y, family) -> tuple[Fraction, Fraction]:
    """(exact value, contract scale) for a named or custom family, without enumerating sizes we can sum."""
    z = [fr(a) * fr(b) for a, b in zip(x, y)]
    a = [abs(v) for v in z]
    kind, m = family.kind, family.degree
    if kind == "anova":
        return elementary_exact(z, m)[m], elementary_exact(a, m)[m]
    if kind == "up_to":
        return sum(elementary_exact(z, m)), sum(elementary_exact(a, m))
    if kind == "dot":
        return sum(z), sum(a)
    if kind == "all_subsets":
        val, scale = Fraction(1), Fraction(1)
        for v, w in zip(z, a):
            val *= 1 + v
            scale *= 1 + w
        return val, scale
    return itemset_value(x, y, family.enumerate())


def rel_error(computed: float, exact: Fraction, scale: Fraction) -> float:
    """|computed - exact| / scale (inf if computed is not finite; 0 if both are exactly 0)."""
    if not np.isfinite(computed):
        return float("inf")
    diff = abs(Fraction(float(computed)) - exact)
    if diff == 0:
        return 0.0
    if scale == 0:
        return float("inf")
    return float(diff / scale)


TINY = Fraction(2) ** -1000  # absolute slack: float64 underflow threshold region


def within_contract(computed: float, exact: Fraction, scale: Fraction, rtol: float = 1e-12) -> bool:
    if not np.isfinite(computed):
        return False
    return abs(Fraction(float(computed)) - exact) <= Fraction(rtol) * scale + TINY
