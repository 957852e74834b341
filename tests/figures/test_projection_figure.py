"""The Random projections page's figure on real rows (the page's own engine): one median-and-band per
projection kind and Theorem 1's band, each band's quantiles in order. A merge once turned the figure's
quantile table into a Series (`.unstack()` lost behind a comment) and the page showed a KeyError; only the
browser tests saw it."""
from __future__ import annotations

import numpy as np
import pandas as pd

from rkcore.figures.foundations import projection_distortion_figure
from rkcore.teaching.random_projections import distortion_bands, projection_distortion


def test_distortion_figure_draws_each_kind_and_the_theorem_band():
    X = np.random.RandomState(0).randn(40, 30)
    m_list = (8, 16, 32)
    df = pd.concat([projection_distortion(X, m_list, kind=kind, trials=2, seed=1) for kind in ("gaussian", "sparse")])
    fig = projection_distortion_figure(df, 0.05, bands=distortion_bands(m_list, 0.05))
    names = " ".join(trace.name or "" for trace in fig.data)
    assert "gaussian" in names and "sparse" in names
    for trace in fig.data:
        y = np.asarray(trace.y, dtype=float)
        assert np.isfinite(y[~np.isnan(y)]).all() and y.size > 0
