"""RK weights drawn orthogonal in blocks (rkcore.maps.orthogonal, rkcore.studies.orthogonal_study): each row keeps its i.i.d.
law (so the estimate is unbiased), rows of a block are orthogonal, the exact i.i.d. variance formula is refused
for them, and the measured variance agrees with exact enumeration where that exists (Hadamard rows)."""
from __future__ import annotations

from fractions import Fraction
from itertools import product
from math import prod

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chi2, kstest

from rkcore.theory import variance as V
from rkcore.maps.distributions import DISTRIBUTIONS
from rkcore.kernels.itemsets import ItemsetFamily
from rkcore.maps.orthogonal import hadamard_sign_rows, orthogonal_gaussian_rows
from rkcore.studies.orthogonal_study import (
    against_iid, hadamard_block_moments, orthogonal_note, orthogonal_variance_study, variance_ratio_summary,
)
from rkcore.registry import KernelSpec
from rkcore.studies.variance_study import empirical_pair_variance, select_pairs

BLOCK = [k for k, e in DISTRIBUTIONS.items() if not e.iid]


def test_the_block_distributions_are_registered_with_their_row_law():
    assert set(BLOCK) == {"gaussian-orthogonal", "rademacher-hadamard"}
    for key in BLOCK:
        e = DISTRIBUTIONS[key]
        assert DISTRIBUTIONS[e.marginal].iid and e.fourth_moment == DISTRIBUTIONS[e.marginal].fourth_moment


@pytest.mark.parametrize("d", [3, 8, 13])
def test_gaussian_orthogonal_rows_are_orthogonal_and_each_row_is_standard_normal(d):
    rng = np.random.RandomState(d)
    W = orthogonal_gaussian_rows(rng, 4000 * d, d)
    blocks = W.reshape(-1, d, d)
    gram = blocks @ np.swapaxes(blocks, 1, 2)
    off = gram - np.einsum("bi,ij->bij", np.diagonal(gram, axis1=1, axis2=2), np.eye(d))
    assert np.abs(off).max() < 1e-10 * np.abs(gram).max()
    # each row N(0, I): its projection on a fixed unit vector is N(0, 1), its squared norm chi2(d)
    u = np.ones(d) / np.sqrt(d)
    assert kstest(W @ u, "norm").pvalue > 1e-4
    assert kstest((W**2).sum(axis=1), chi2(d).cdf).pvalue > 1e-4


def test_hadamard_rows_are_signs_orthogonal_in_full_blocks_and_each_row_iid_rademacher():
    W = hadamard_sign_rows(np.random.RandomState(0), 64, 8)  # d = p = 8: 8 blocks of 8
    assert set(np.unique(W)) == {-1.0, 1.0}
    for block in W.reshape(8, 8, 8):
        np.testing.assert_array_equal(block @ block.T, 8 * np.eye(8))
    # row law: over many blocks, the 2^3 patterns of the first three entries of a row are uniform
    rows = hadamard_sign_rows(np.random.RandomState(1), 32_000, 5)
    codes = ((rows[:, :3] > 0) * [1, 2, 4]).sum(axis=1)
    counts = np.bincount(codes, minlength=8)
    assert chi2.sf(((counts - 4000.0) ** 2 / 4000.0).sum(), 7) > 1e-4


def _fraction_kernel(x, y, family):
    return sum((prod((x[j] * y[j] for j in V_), start=Fraction(1)) for V_ in family.enumerate()), Fraction(0))


@pytest.mark.parametrize("d, family", [(5, ItemsetFamily.anova(5, 2)), (5, ItemsetFamily.anova(5, 3)),
                                       (4, ItemsetFamily.all_subsets(4)), (6, ItemsetFamily.dot(6))])
def test_hadamard_block_is_exactly_unbiased(d, family):
    """Exact rational arithmetic over all 2^d sign vectors and all p rows of a block: the mean of f is K."""
    rng = np.random.RandomState(d)
    x = [Fraction(int(v), 7) for v in rng.randint(-6, 7, d)]
    y = [Fraction(int(v), 5) for v in rng.randint(-6, 7, d)]
    p = 1 << (d - 1).bit_length()
    rows = [[(-1) ** bin(i & j).count("1") for j in range(d)] for i in range(p)]
    total = Fraction(0)
    for s in product((-1, 1), repeat=d):
        for h in rows:
            w = [h[j] * s[j] for j in range(d)]
            total += _fraction_kernel([a * b for a, b in zip(x, w)], [1] * d, family) * \
                _fraction_kernel([a * b for a, b in zip(y, w)], [1] * d, family)
    assert total / (2**d * p) == _fraction_kernel(x, y, family)
    mean, _ = hadamard_block_moments(np.array([x], float), np.array([y], float), family)
    assert mean[0] == pytest.approx(float(_fraction_kernel(x, y, family)), rel=1e-12, abs=1e-15)


def test_hadamard_rows_make_the_dot_kernel_exact_on_full_blocks():
    """sum over a block of (w.x)(w.y) = x^T diag(s) H^T H diag(s) y = p <x, y>: zero variance."""
    X = np.random.RandomState(0).standard_normal((3, 6))
    mean, var = hadamard_block_moments(X, X[::-1], ItemsetFamily.dot(6))
    np.testing.assert_allclose(mean, (X * X[::-1]).sum(axis=1), rtol=1e-12)
    assert np.all(var <= 1e-24 * mean**2 + 1e-30)


def test_measured_hadamard_variance_matches_exact_enumeration():
    """Monte Carlo over 600 maps of D = 2p features against the exact block variance / 2 (95% chi2 interval,
    widened to 99.9%: three pairs x one D)."""
    X = np.random.RandomState(3).uniform(-1, 1, (12, 6))
    spec = KernelSpec("anova", 2)
    pairs = select_pairs(spec.exact(X))
    measured = empirical_pair_variance(X, pairs, spec, ["rademacher-hadamard"], [16], 600, random_state=2)
    _, block_var = hadamard_block_moments(X[pairs["i"]], X[pairs["j"]], ItemsetFamily.anova(6, 2))
    exact = block_var / 2
    lo, hi = chi2.ppf([0.9995, 0.0005], 599)
    s2 = measured["variance"].to_numpy()
    assert np.all((599 * s2 / lo <= exact) & (exact <= 599 * s2 / hi)), (s2, exact)
    iid = V.rk_variance(X[pairs["i"]], X[pairs["j"]], 16, kernel="anova", degree=2, distribution="rademacher")
    assert np.all(exact < iid)  # on these pairs the Hadamard rows beat i.i.d. signs


def test_exact_iid_formula_is_refused_for_dependent_rows_beyond_one_feature():
    X = np.random.RandomState(0).standard_normal((2, 4))
    for key in BLOCK:
        one = V.rk_variance(X, X, 1, kernel="anova", degree=2, distribution=key)
        np.testing.assert_allclose(one, V.rk_variance(X, X, 1, kernel="anova", degree=2,
                                                      distribution=DISTRIBUTIONS[key].marginal))
        with pytest.raises(ValueError, match="i.i.d. weights"):
            V.rk_variance(X, X, 8, kernel="anova", degree=2, distribution=key)
        with pytest.raises(ValueError, match="i.i.d. weights"):
            V.variance_table(X, X, [1, 4], distributions=[key])
    assert set(V.variance_table(X, X, 4)["distribution"]) == {k for k, e in DISTRIBUTIONS.items() if e.iid}


def test_study_ratio_columns_and_unbiasedness():
    X = np.random.RandomState(5).uniform(0, 1, (30, 8))
    X /= X.sum(axis=1, keepdims=True)
    spec = KernelSpec("anova", 2)
    pairs = select_pairs(spec.exact(X))
    study = orthogonal_variance_study(X, pairs, spec, [8, 32], 300, random_state=0)
    assert set(study["distribution"]) == set(BLOCK) and (study["marginal"] != "").all()
    np.testing.assert_allclose(study["ratio"], study["variance"] / study["iid_variance"])
    for marginal, rows in study.groupby("marginal"):
        iid = V.rk_variance(X[rows["i"]], X[rows["j"]], 1, kernel="anova", degree=2, distribution=marginal)
        np.testing.assert_allclose(rows["iid_variance"] * rows["D"], iid, rtol=1e-12)
    assert (study["ratio_low"] <= study["ratio"]).all() and (study["ratio"] <= study["ratio_high"]).all()
    assert (study["bias_z"].abs() < 4.5).all()  # unbiased: 12 z-scores, |z| > 4.5 has probability < 1e-4
    with pytest.raises(ValueError, match="i.i.d. weights"):
        orthogonal_variance_study(X, pairs, spec, [8], 10, distributions=["gaussian"])
    # against_iid drops i.i.d. rows it is handed
    mixed = empirical_pair_variance(X, pairs, spec, ["gaussian", "gaussian-orthogonal"], [8], 20)
    assert set(against_iid(mixed, X, spec)["distribution"]) == {"gaussian-orthogonal"}


def test_note_is_computed_from_the_numbers():
    summary = pd.DataFrame({"distribution": ["gaussian-orthogonal"] * 2 + ["rademacher-hadamard"] * 2,
                            "D": [8, 32, 8, 32], "median_ratio": [0.7, 0.8, 1.0, 1.02],
                            "min_ratio": [0.6, 0.7, 0.9, 0.9], "max_ratio": [0.8, 0.9, 1.1, 1.1],
                            "max_abs_bias_z": [1.0, 2.0, 0.5, 6.0]})
    note = orthogonal_note(summary)
    assert "Gaussian, orthogonal rows: variance lower than i.i.d. Gaussian" in note and "0.70-0.80" in note
    assert "Hadamard rows: variance about the same as i.i.d. Rademacher" in note
    assert "off by 6.0 standard errors" in note
    assert orthogonal_note(summary.iloc[:0]) == "No orthogonal-weight measurement to report."
    study = pd.DataFrame({"distribution": ["x"] * 3, "D": [4] * 3, "ratio": [0.5, 0.7, 0.9],
                          "bias_z": [1.0, -3.0, 0.2]})
    row = variance_ratio_summary(study).iloc[0]
    assert (row["median_ratio"], row["min_ratio"], row["max_ratio"], row["max_abs_bias_z"]) == (0.7, 0.5, 0.9, 3.0)
