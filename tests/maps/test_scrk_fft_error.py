"""SCRK's accuracy check against the FFT's own rounding, at widths the property test cannot reach.

SCRK computes its odd power sums by FFT (circular convolution). An FFT's rounding error is
bounded norm-wise (about log2(d) eps ||x||_2 ||w||_2), not entry-wise like the dot products
that `newton_is_safe`'s gamma models, so the check is tested here where the two differ most:
rows with two or three non-zeros in d up to 4,096 (gamma from 2-3 non-zeros, FFTs of length d),
one entry 50-400 times the others, which straddles the check's threshold for m = 2 (rows below it
take the fast path, rows above it the recursion). Measured worst error / contract scale: 1.6e-13.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from rkcore.maps.circulant import SignedCirculantRandomKernel
from rkcore.kernels.exact import CONTRACT_RTOL
from tests.kernels.numerics_oracle import elementary_exact, fr


def dominated_sparse_rows(d: int, n_nonzero: int, seed: int) -> np.ndarray:
    rng = np.random.RandomState(seed)
    rows = []
    for a in np.geomspace(50.0, 400.0, 6):
        x = np.zeros(d)
        cols = rng.choice(d, n_nonzero, replace=False)
        x[cols[0]] = a * (1 + 0.1 * rng.rand())
        x[cols[1:]] = 1.0 - 0.5 * rng.rand(n_nonzero - 1)
        rows.append(x)
    return np.array(rows)


@pytest.mark.parametrize("d, degree, n_nonzero", [(1024, 2, 2), (4096, 2, 2), (1024, 3, 3)])
def test_scrk_meets_the_contract_where_fft_error_is_norm_wise(d, degree, n_nonzero):
    X = dominated_sparse_rows(d, n_nonzero, seed=d + degree)
    D = 256
    scrk = SignedCirculantRandomKernel(D, degree=degree, random_state=0).fit(X)
    Z = scrk.transform(X)
    omega = scrk.projection_matrix()
    root = Fraction(int(round(np.sqrt(D))))
    worst = 0.0
    for i, x in enumerate(X):
        cols = np.flatnonzero(x)
        for s in range(D):
            z = [fr(x[j]) * fr(omega[s, j]) for j in cols]
            exact = elementary_exact(z, degree)[degree] / root
            scale = elementary_exact([abs(v) for v in z], degree)[degree] / root
            err = abs(fr(Z[i, s]) - exact)
            assert err <= Fraction(CONTRACT_RTOL) * scale, (i, s, float(err / scale))
            worst = max(worst, float(err / scale))
    # The rows straddle the check's threshold: some took the fast path (error above a few ulps).
    if degree == 2:
        assert worst > 1e-15
