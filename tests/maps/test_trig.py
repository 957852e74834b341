"""rkcore.maps.trig: cos and sin from one half-angle tan, against mpmath at adversarial magnitudes, within the
module's stated bound."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from rkcore.maps.trig import HALF_ANGLE_ERROR_BOUND, cos_sin_into

# exactly representable angles where the formulas are stressed: t = 0, t = +-1, t huge (a near odd multiples of pi)
SPECIAL = [0.0, -0.0, 5e-324, 1e-300, np.pi / 2, -np.pi / 2, np.pi, -np.pi, np.nextafter(np.pi, 4), 3 * np.pi,
           2 * np.pi, 1e6 * np.pi, 1e15, 2.0**52 + 1, 1e22, 1.7e308, -1.7e308, 355.0, 103993.0 / 2]


def _exact(angles):
    with mpmath.workdps(60):
        return (np.array([float(mpmath.cos(mpmath.mpf(float(a)))) for a in angles]),
                np.array([float(mpmath.sin(mpmath.mpf(float(a)))) for a in angles]))


def _run(U, angle_scale=1.0, weight=1.0):
    cos, sin = np.empty_like(U), np.empty_like(U)
    cos_sin_into(U.copy(), angle_scale, weight, cos, sin)
    return cos, sin


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.integers(1, 40), elements=st.floats(allow_nan=False, allow_infinity=False, width=64)),
       st.sampled_from([1.0, 0.3, 2.0**-20]))
def test_float64_within_the_stated_bound_of_exact_cos_and_sin(U, weight):
    U = np.concatenate([U, SPECIAL])
    cos, sin = _run(U, weight=weight)
    exact_cos, exact_sin = _exact(U)
    bound = HALF_ANGLE_ERROR_BOUND * weight
    assert np.abs(cos - weight * exact_cos).max() <= bound, U[np.argmax(np.abs(cos - weight * exact_cos))]
    assert np.abs(sin - weight * exact_sin).max() <= bound, U[np.argmax(np.abs(sin - weight * exact_sin))]


def test_angle_scale_strided_outputs_and_non_finite_angles():
    U = np.random.RandomState(0).standard_normal((50, 7)) * 30
    out = np.zeros((50, 16))
    cos_sin_into(U.copy(), 0.7, 0.25, out[:, :7], out[:, 7:14])
    angles = 0.7 * U  # the scaling rounds the angle itself: |a| eps more
    tol = HALF_ANGLE_ERROR_BOUND * 0.25 + 0.25 * np.abs(angles).max() * 2**-52
    np.testing.assert_allclose(out[:, :7], 0.25 * np.cos(angles), rtol=0, atol=tol)
    np.testing.assert_allclose(out[:, 7:14], 0.25 * np.sin(angles), rtol=0, atol=tol)
    assert (out[:, 14:] == 0).all()  # nothing written outside the views
    with np.errstate(invalid="ignore"):
        cos, sin = _run(np.array([np.inf, -np.inf, np.nan, 1.0]))
    assert np.isnan(cos[:3]).all() and np.isnan(sin[:3]).all() and np.isfinite([cos[3], sin[3]]).all()


@pytest.mark.parametrize("weight", [1.0, 0.1])
def test_float32_is_cos_and_sin_in_float32(weight):
    U = (np.random.RandomState(1).standard_normal((20, 9)) * 10).astype(np.float32)
    cos, sin = _run(U, 1.5, weight)
    assert cos.dtype == sin.dtype == np.float32
    angles = np.float32(1.5) * U
    np.testing.assert_allclose(cos, weight * np.cos(angles), rtol=0, atol=4e-7 * weight)
    np.testing.assert_allclose(sin, weight * np.sin(angles), rtol=0, atol=4e-7 * weight)
