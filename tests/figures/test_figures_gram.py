"""Figure builders of the Gram and Itemsets pages (traces, titles, axis labels, color scales) and
the small computations behind them in rkcore.studies (against their definitions)."""
from __future__ import annotations

import json
from math import comb

import numpy as np
import plotly.io as pio
import pytest

from rkcore.figures.gram import APPROX_LABEL, EXACT_LABEL, gram_difference, gram_heatmaps, gram_scatter
from rkcore.figures.itemsets import family_counts_figure
from rkcore.studies.accuracy import METHODS
from rkcore.figures.style import rgba, spans_decades
from rkcore.figures.variance import method_color
from rkcore.maps.distributions import DISTRIBUTIONS
from rkcore.kernels.itemsets import ItemsetFamily
from rkcore.kernels.exact import explicit_features, itemset_kernel
from rkcore.registry import MAPS, KernelSpec
from rkcore.base.arrays import subsample_rows
from rkcore.studies.family_views import explicit_feature_table, explicit_view_family, family_counts, family_listing, kernel_check, restrict_family
from rkcore.studies.gram import block_average, gram_error_stats, gram_long, gram_pair, gram_pairs
from rkcore.data.textformats import format_fields, format_itemsets, parse_fields, parse_itemsets


def decoded(fig) -> dict:
    """The figure as the browser gets it (typed arrays stay base64 -- never lists of floats)."""
    return json.loads(pio.to_json(fig))


@pytest.fixture
def grams():
    rng = np.random.RandomState(0)
    X = rng.rand(12, 5)
    K = X @ X.T
    return K, K + 0.01 * rng.standard_normal(K.shape)


# ---------------------------------------------------------------------------- gram figures
def test_heatmaps_share_one_color_scale(grams):
    K, K_hat = grams
    fig = gram_heatmaps(K, K_hat, clip_percentiles=None)
    assert [t.type for t in fig.data] == ["heatmap", "heatmap"]
    assert {t.coloraxis for t in fig.data} == {"coloraxis"}  # one shared scale, one colorbar
    lo, hi = min(K.min(), K_hat.min()), max(K.max(), K_hat.max())
    assert fig.layout.coloraxis.cmin == pytest.approx(lo) and fig.layout.coloraxis.cmax == pytest.approx(hi)
    clipped = gram_heatmaps(K, K_hat)  # default: 1st-99th percentile of both matrices' entries
    both = np.concatenate([K.ravel(), K_hat.ravel()])
    assert clipped.layout.coloraxis.cmin == pytest.approx(np.percentile(both, 1))
    assert clipped.layout.coloraxis.cmax == pytest.approx(np.percentile(both, 99))
    assert "percentile" in clipped.layout.title.text
    assert [a.text for a in fig.layout.annotations] == [EXACT_LABEL, APPROX_LABEL]
    assert fig.layout.title.text == "Gram matrices, n = 12"
    assert fig.layout.coloraxis.colorbar.title.text == "K(xᵢ, xⱼ)"
    assert fig.layout.xaxis.title.text == "point j" and fig.layout.yaxis.title.text == "point i"
    assert fig.layout.yaxis.autorange == "reversed"
    np.testing.assert_allclose(np.asarray(fig.data[0].z), K, rtol=FLOAT32_ROUNDING, atol=0)
    assert isinstance(decoded(fig)["data"][0]["z"], dict), "z must travel as a typed array, not a list"


#: float32's relative rounding (round to nearest: half its epsilon)
FLOAT32_ROUNDING = 2.0 ** -24


@pytest.mark.parametrize("scale", [1.0, 1e-3, 1e30, -7.5])
def test_heatmap_cells_travel_as_float32_within_its_rounding(grams, scale):
    """The chart sends float32 cells (half the bytes), each within 2**-24 of the float64 value: more digits than
    the hover (4) or the colour scale show. The colour range stays the float64 one."""
    K, K_hat = (scale * m for m in grams)
    for fig, exact in ((gram_heatmaps(K, K_hat, clip_percentiles=None), (K, K_hat)),
                       (gram_difference(K, K_hat), (K_hat - K,))):
        for trace, values in zip(fig.data, exact):
            z = np.asarray(trace.z)
            assert z.dtype == np.float32
            np.testing.assert_allclose(z.astype(np.float64), values, rtol=FLOAT32_ROUNDING, atol=0)
            assert decoded(fig)["data"][0]["z"]["dtype"] == "f4"
    full = gram_heatmaps(K, K_hat, clip_percentiles=None)
    assert full.layout.coloraxis.cmin == min(K.min(), K_hat.min())  # from the float64 values, not rounded
    cells = decoded(full)["data"][0]["z"]["bdata"]
    assert len(cells) <= (4 * K.size * 4 + 2) // 3 + 4, "4 bytes per cell (base64), half of float64's 8"


@pytest.mark.parametrize("extreme", [1e300, 1e-300])
def test_heatmap_cells_beyond_float32_keep_float64(grams, extreme):
    """A value float32 cannot hold (huge all-subsets kernels, tiny ones) is never sent as inf or 0."""
    K, K_hat = grams
    K = K.copy()
    K[0, 1] = extreme
    fig = gram_heatmaps(K, K_hat, clip_percentiles=None)
    assert np.asarray(fig.data[0].z).dtype == np.float64 and np.asarray(fig.data[0].z)[0, 1] == extreme
    assert np.asarray(fig.data[1].z).dtype == np.float32  # the other panel fits


def test_heatmaps_block_average_large_matrices():
    n = 1204
    K = np.add.outer(np.arange(n), np.arange(n)).astype(float)
    small, b = block_average(K, max_side=500)
    fig = gram_heatmaps(small, small, block=b, n=n)
    z = np.asarray(fig.data[0].z)
    assert z.shape == (402, 402)  # b = ceil(1204 / 500) = 3; the last block holds one row
    assert z[-1, -1] == pytest.approx(K[-1, -1])
    assert "3×3 block averages" in fig.layout.title.text
    assert z[0, 0] == pytest.approx(K[:3, :3].mean())
    assert np.asarray(fig.data[0].x)[0] == pytest.approx(1.0)  # block center, in point-index units
    with pytest.raises(ValueError, match="need n"):
        gram_heatmaps(small, small, block=b)  # averaged matrices cannot tell how many points they stand for


def test_difference_is_diverging_and_centered(grams):
    K, K_hat = grams
    fig = gram_difference(K, K_hat)
    (trace,) = fig.data
    assert trace.type == "heatmap" and trace.zmid == 0.0
    assert trace.zmin == pytest.approx(-trace.zmax)
    assert trace.zmax == pytest.approx(np.abs(K_hat - K).max())
    colors = [c[1] for c in trace.colorscale]
    assert colors[0] != colors[-1]  # diverging: different ends
    assert trace.colorbar.title.text == "K̂ − K"
    np.testing.assert_allclose(np.asarray(trace.z), K_hat - K, rtol=FLOAT32_ROUNDING, atol=0)
    assert fig.layout.xaxis.title.text == "point j"


def test_scatter_has_identity_line(grams):
    K, K_hat = grams
    pairs = gram_pairs(K, K_hat)
    fig = gram_scatter(pairs, n_total=len(pairs))
    points, line = fig.data
    assert points.type == "scattergl" and points.mode == "markers"
    assert line.type == "scatter" and line.name == "y = x (exact)"
    assert list(line.x) == list(line.y)
    assert line.x[0] <= min(K.min(), K_hat.min()) and line.x[1] >= max(K.max(), K_hat.max())
    assert fig.layout.xaxis.title.text.startswith("exact") and fig.layout.yaxis.title.text.startswith("approximate")
    assert "78 entries" in fig.layout.title.text  # 12 * 13 / 2


def test_counts_figure_goes_log_when_counts_span_decades():
    wide = family_counts(ItemsetFamily.all_subsets(20))
    fig = family_counts_figure(wide)
    assert fig.data[0].type == "bar" and fig.layout.yaxis.type == "log"
    assert "log" in fig.layout.yaxis.title.text and fig.layout.xaxis.title.text == "itemset size |V|"
    assert fig.data[0].texttemplate == "%{y:.3~s}"  # 184,756 -> "185k": readable bar labels
    narrow = family_counts_figure(family_counts(ItemsetFamily.anova(5, 2)))
    assert narrow.layout.yaxis.type != "log"
    assert list(narrow.data[0].text) == ["10"] and narrow.data[0].texttemplate == "%{text}"


def test_registry_colors_tell_entries_apart():
    """Lines of one chart must be distinguishable: distributions share the variance charts, maps the
    timing chart and accuracy methods the classifier charts, so each group needs distinct colours."""
    for colors in ([e.color for e in DISTRIBUTIONS.values()], [e.color for e in MAPS.values()],
                   [m.color for m in METHODS.values()]):
        assert len(set(c.lower() for c in colors)) == len(colors), colors
    # SCRK is drawn beside the RK distributions on the variance page: it must not take one of their colours
    assert method_color("scrk", None) not in {e.color for e in DISTRIBUTIONS.values()}
    assert method_color("rk", "laplace") == DISTRIBUTIONS["laplace"].color
    with pytest.raises(ValueError, match="Unknown map"):
        method_color("nope", None)
    assert rgba("#0072B2", 0.5) == "rgba(0,114,178,0.5)"
    with pytest.raises(ValueError, match="#rrggbb"):
        rgba("blue", 0.5)
    assert spans_decades([1, 10, 100]) and not spans_decades([1, 50])


# ---------------------------------------------------------------------------- views: Gram
def test_block_average_against_loops():
    rng = np.random.RandomState(1)
    M = rng.rand(23, 23)
    small, b = block_average(M, max_side=10)
    assert b == 3 and small.shape == (8, 8)
    for r in range(8):
        for c in range(8):
            assert small[r, c] == pytest.approx(M[3 * r:3 * r + 3, 3 * c:3 * c + 3].mean())
    same, one = block_average(M, max_side=23)
    assert one == 1 and same is not None and np.array_equal(same, M)


def test_error_stats_match_definitions(grams):
    K, K_hat = grams
    stats = gram_error_stats(K, K_hat).set_index("metric")["value"]
    E = K_hat - K
    assert stats["mean absolute error"] == pytest.approx(np.mean(np.abs(E)))
    assert stats["max absolute error"] == pytest.approx(np.max(np.abs(E)))
    assert stats["RMS error"] == pytest.approx(np.sqrt(np.mean(E**2)))
    assert stats["relative Frobenius error"] == pytest.approx(np.linalg.norm(E, "fro") / np.linalg.norm(K, "fro"))
    assert gram_error_stats(K, K).set_index("metric")["value"].abs().max() == 0.0


def test_gram_pairs_and_long_tables(grams):
    K, K_hat = grams
    pairs = gram_pairs(K, K_hat)
    assert len(pairs) == 78 and (pairs["i"] <= pairs["j"]).all()
    np.testing.assert_allclose(pairs["exact"], K[pairs["i"], pairs["j"]])
    np.testing.assert_allclose(pairs["error"], pairs["approx"] - pairs["exact"])
    assert len(gram_pairs(K, K_hat, max_points=20)) == 20
    long = gram_long(K, K_hat)
    assert len(long) == 144
    row = long.iloc[17]  # i = 1, j = 5
    assert (row["i"], row["j"]) == (1, 5) and row["difference"] == pytest.approx(K_hat[1, 5] - K[1, 5])


def test_gram_pair_exact_part_and_unbiased_mean():
    rng = np.random.RandomState(2)
    X = rng.rand(6, 5) / 5
    spec = KernelSpec("anova", degree=2)
    K, K_hat = gram_pair(X, spec, "rk", 4000, "rademacher", random_state=0)
    np.testing.assert_allclose(K, spec.exact(X))
    # K_hat averages D = 4000 i.i.d. unbiased terms; a relative Frobenius error of 0.25 is
    # ~ 8 standard errors for this data (single-term relative sd ~ 1.5, / sqrt(4000) ~ 0.025).
    assert np.linalg.norm(K_hat - K) / np.linalg.norm(K) < 0.25


# ---------------------------------------------------------------------------- views: text formats
def test_parse_itemsets_and_fields_round_trip():
    sets = parse_itemsets("0,1; 2 3;\n1,2,4; {}")
    assert sets == ((0, 1), (2, 3), (1, 2, 4), ())
    assert parse_itemsets(format_itemsets(sets)) == sets
    fields = parse_fields("0-4 | 5 - 7, 9")
    assert fields == ((0, 1, 2, 3, 4), (5, 6, 7, 9))
    assert parse_fields(format_fields(fields)) == fields


@pytest.mark.parametrize("text", ["", "0,a", "1;;x", "-1,2", "0.5"])
def test_parse_itemsets_rejects(text):
    with pytest.raises(ValueError, match="itemset"):
        parse_itemsets(text)


@pytest.mark.parametrize("text", ["", "0-4 | a", "5-2 | 1", "0--3"])
def test_parse_fields_rejects(text):
    with pytest.raises(ValueError, match="field"):
        parse_fields(text)


# ---------------------------------------------------------------------------- views: itemsets
def test_family_counts_are_exact():
    counts = family_counts(ItemsetFamily.all_subsets(70))
    assert list(counts["size"]) == list(range(71))
    assert counts["count_text"][35] == f"{comb(70, 35):,}"


def test_listing_head_of_huge_family():
    listing = family_listing(ItemsetFamily.all_subsets(40), limit=5)
    assert list(listing["itemset"]) == ["{}", "{0}", "{1}", "{2}", "{3}"]
    assert listing["features"][0] == "∅"


@pytest.mark.parametrize("family", [
    ItemsetFamily.anova(8, 3), ItemsetFamily.up_to(8, 2), ItemsetFamily.all_subsets(8), ItemsetFamily.dot(8),
    ItemsetFamily.custom(8, [(0, 5), (6, 7), (1,), ()]),
    ItemsetFamily.cross_fields([(0, 1, 2), (3, 4), (5, 6, 7)], 2),
])
def test_restrict_family_keeps_exactly_the_itemsets_within(family):
    sub = restrict_family(family, 6)
    expected = sorted(v for v in family.enumerate() if all(j < 6 for j in v))
    assert sub.d == 6 and sorted(sub.enumerate()) == expected


def test_explicit_view_family_restricts_only_when_needed():
    small = ItemsetFamily.anova(20, 2)
    assert explicit_view_family(small) is small
    sub = explicit_view_family(ItemsetFamily.all_subsets(20), max_itemsets=4096)
    assert sub.d == 12 and sub.n_itemsets == 4096


def test_explicit_table_and_kernel_check_against_brute_force():
    rng = np.random.RandomState(3)
    X = rng.rand(7, 6)
    family = ItemsetFamily.up_to(6, 2)
    table = explicit_feature_table(X, family, rows=3, max_columns=5)
    assert list(table.columns) == ["∅", "x0", "x1", "x2", "x3"]
    np.testing.assert_allclose(table.to_numpy(), np.column_stack([np.ones(3), X[:3, :4]]))
    check = kernel_check(X, family, n_pairs=5)
    phi = explicit_features(X, family)
    np.testing.assert_allclose(check["inner_product"], [phi[i] @ phi[j] for i, j in zip(check["i"], check["j"])])
    K = itemset_kernel(X, family=family)
    np.testing.assert_allclose(check["kernel"], K[check["i"], check["j"]])
    assert check["i"][0] == check["j"][0]


def test_subsample_rows_is_seeded_and_sorted():
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10)
    Xs, ys = subsample_rows(X, y, 4, random_state=0)
    assert Xs.shape == (4, 2) and np.all(np.diff(ys) > 0)
    np.testing.assert_array_equal(Xs[:, 0] / 2, ys)
    assert subsample_rows(X, y, 4, random_state=0)[1].tolist() == ys.tolist()
    assert subsample_rows(X, y, 50)[0] is X
    with pytest.raises(ValueError, match="positive integer"):
        subsample_rows(X, y, 0)
