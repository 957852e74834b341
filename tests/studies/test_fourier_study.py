"""The i.i.d. / orthogonal / structured random Fourier comparison (rkcore.studies.fourier_study): the MSE split, the
summary ratios and the note computed from the numbers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rkcore.studies.fourier_study import IID_REFERENCE, fourier_map_study, fourier_maps, fourier_note, fourier_summary
from rkcore.registry import MAPS


def test_the_compared_maps_come_from_the_registry():
    keys = fourier_maps()
    assert {"rff", "rff_pairs", "orf", "sorf", "fastfood"} <= set(keys) and "nystroem" not in keys
    assert all("rbf" in MAPS[k].kernels for k in keys)


@pytest.fixture(scope="module")
def study():
    X = np.random.RandomState(0).standard_normal((50, 16))
    return fourier_map_study(X, 1.0 / 32, [IID_REFERENCE, "orf", "sorf"], [16, 64], 12, seed=3)


def test_mse_is_variance_plus_squared_bias(study):
    """mean_t (K̂_t - K)^2 = s^2 (T - 1)/T + (mean_t K̂_t - K)^2, and bias2 = the last term - s^2 / T."""
    np.testing.assert_allclose(study["mse"], study["variance"] + study["bias2"], rtol=1e-10)
    assert (study["mean_abs_error"] ** 2 <= study["mse"] * (1 + 1e-12)).all()  # Jensen


def test_orf_beats_iid_pairs_at_equal_D_on_gaussian_data(study):
    """The literature's claim (Yu et al. 2016), with a wide margin: measured ratios are ~0.1-0.6 here."""
    mse = study.set_index(["map", "D"])["mse"]
    assert mse["orf", 64] < 0.7 * mse[IID_REFERENCE, 64]


def test_summary_and_note_from_the_numbers():
    study = pd.DataFrame({"map": ["rff_pairs", "rff_pairs", "orf", "orf", "sorf", "sorf"],
                          "label": ["RFF (cos/sin)"] * 2 + ["ORF"] * 2 + ["SORF"] * 2, "D": [8, 32] * 3,
                          "mse": [1.0, 0.25, 0.5, 0.05, 1.2, 0.3], "bias2": [0, 0, 0, 0, 0.0, 0.1]})
    summary = fourier_summary(study).set_index("D")
    assert summary.loc[32, "ORF / RFF (cos/sin)"] == pytest.approx(0.2)
    assert summary.loc[8, "MSE SORF"] == 1.2
    note = fourier_note(study)
    assert "ORF: MSE below i.i.d. (ratio 0.20-0.50, lowest at D = 32)." in note
    assert "SORF: MSE above i.i.d. (ratio 1.20-1.20, lowest at D = 8); squared bias up to 33% of its MSE." in note
    assert "RFF (cos/sin):" not in note
    assert "Add the i.i.d. reference" in fourier_note(study[study["map"] != "rff_pairs"])
    with pytest.raises(ValueError, match="trials"):
        fourier_map_study(np.zeros((3, 2)), 1.0, ["orf"], [4], 1)
