"""Random projections (rkcore.teaching.random_projections): Theorem 1 of the notes and the exact chi^2 band.

Statistical checks compare a mean over independent repetitions with its expectation within
Z_TOL = 4.5 standard errors (SE = sample std / sqrt(repetitions)); false-alarm probability
per compared quantity ~7e-6.
"""
from math import log, sqrt

import numpy as np
import pytest
from scipy.stats import kstest

from rkcore.teaching.random_projections import (
    PROJECTIONS,
    chi2_band,
    distortion_bands,
    distortion_summary,
    projection_distortion,
    theorem1_band,
)

Z_TOL = 4.5


def test_theorem1_band_formula():
    lo, hi = theorem1_band(100, 0.05)
    t = log(2 / 0.05)
    assert lo == pytest.approx(1 - 2 * sqrt(t / 100))
    assert hi == pytest.approx(1 + 2 * sqrt(t / 100) + 2 * t / 100)
    assert lo == pytest.approx(0.61587, abs=1e-5) and hi == pytest.approx(1.45791, abs=1e-5)
    with pytest.raises(ValueError, match="delta"):
        theorem1_band(10, 1.5)
    with pytest.raises(ValueError, match="m"):
        theorem1_band(0, 0.1)


@pytest.mark.parametrize("delta", [0.01, 0.05, 0.3])
def test_theorem1_band_contains_exact_chi2_interval(delta):
    # each tail of the theorem has probability <= delta/2, so it must contain the exact quantiles
    m = np.arange(1, 2001)
    lo, hi = theorem1_band(m, delta)
    clo, chi = chi2_band(m, delta)
    assert np.all(lo <= clo + 1e-12) and np.all(hi >= chi - 1e-12)


@pytest.mark.parametrize("kind", list(PROJECTIONS))
def test_projection_preserves_squared_norms_in_expectation(kind):
    X = np.random.RandomState(2).randn(30, 200)
    df = projection_distortion(X, [4, 32, 128], kind=kind, trials=40, seed=0)
    assert set(df.columns) == {"kind", "m", "trial", "vector", "ratio"}
    assert len(df) == 30 * 3 * 40
    # within a trial the vectors share A, so average per trial first; trials are independent
    per_trial = df.groupby(["m", "trial"])["ratio"].mean().unstack("trial")
    mean, se = per_trial.mean(axis=1), per_trial.std(axis=1, ddof=1) / np.sqrt(40)
    assert np.all(np.abs(mean - 1) < Z_TOL * se), (mean, se)


def test_gaussian_projection_has_chi2_distribution():
    # one vector across independent trials: m ||Av||^2/||v||^2 ~ chi2_m (also checks the nested-prefix trick)
    X = np.random.RandomState(3).randn(2, 50)
    df = projection_distortion(X, [6, 64], kind="gaussian", trials=400, seed=1)
    for m in (6, 64):
        r = df[(df.vector == 0) & (df.m == m)]["ratio"].to_numpy() * m
        assert kstest(r, "chi2", args=(m,)).pvalue > 1e-3


def test_distortion_summary_respects_theorem1():
    X = np.random.RandomState(4).randn(50, 300)
    delta = 0.1
    df = projection_distortion(X, [8, 64, 256], kind="gaussian", trials=20, seed=0)
    summary = distortion_summary(df, delta)
    assert {"kind", "m", "median", "band_low", "band_high", "outside", "delta"} <= set(summary.columns)
    # Theorem 1: P(outside) <= delta for each v; 1000 ratios per m (20 independent A), so allow 4.5 SE
    # of a proportion delta computed over the 20 independent trials only (a conservative count)
    assert np.all(summary["outside"] <= delta + Z_TOL * sqrt(delta * (1 - delta) / 20))


def test_projection_errors():
    with pytest.raises(ValueError, match="zero row"):
        projection_distortion(np.zeros((2, 3)), [2])
    with pytest.raises(ValueError, match="Unknown projection"):
        projection_distortion(np.ones((2, 3)), [2], kind="fjlt")
    with pytest.raises(ValueError, match="m_list"):
        projection_distortion(np.ones((2, 3)), [])


def test_distortion_bands_hold_the_exact_interval():
    """Theorem 1 (Laurent-Massart, each tail <= delta/2) cannot be tighter than the exact central
    chi^2_m / m interval, which holds 1 and narrows with m."""
    b = distortion_bands([4096, 1, 10, 10, 100], delta=0.05)
    assert list(b["m"]) == [1, 10, 100, 4096]
    assert (b["theorem_low"] <= b["chi2_low"]).all() and (b["chi2_high"] <= b["theorem_high"]).all()
    assert ((b["chi2_low"] < 1) & (1 < b["chi2_high"])).all()
    assert (np.diff(b["chi2_high"] - b["chi2_low"]) < 0).all()
