"""Gram matrices: the exact kernel K next to its random-feature estimate K̂ = Z Zᵀ."""
import numpy as np
import streamlit as st

from rkapp import (
    ViewSpec, chart, escape_markdown, formula, guarded, largest_fitting, lead, load_data, notice, page,
    persistent_widget, reproduce, run_or_wait, shared_figure, sidebar, table,
)
from rkapp.guard import admitted_run
from rkapp.state import apply_preset, is_stored
from rkcore.studies.costs import gram_view_cost
from rkcore.base.limits import HEATMAP_SIDE
from rkcore.maps.distributions import DISTRIBUTIONS
from rkcore.figures.gram import gram_difference, gram_heatmaps, gram_note, gram_scatter
from rkcore.registry import KERNELS, MAPS, latex_with_degree
from rkcore.teaching.glossary import GLOSSARY
from rkcore.studies.gram import block_average, gram_error_stats, gram_long, gram_pair, gram_pairs

page("Gram matrices",
     "The exact Gram matrix $K$ next to its random-feature estimate $\\hat K = ZZ^\\top$, on one color scale.")
#: what a first visit opens on: handwritten digits, whose exact K shows blocks (points sorted by digit), at a D where
#: K̂ visibly has the same blocks; the synthetic N(0, 1) data at D = 256 looked like noise (error 0.61). Seed 9 is a
#: typical draw, not a lucky or unlucky one: relative Frobenius error 0.125 where 40 seeds give median 0.135 and
#: middle half 0.109-0.174 (seed 0, the shared default, gave 0.197, the worst decile; tests/teaching/test_claims.py
#: checks the seed against the spread). A link naming any setting, or a preset, keeps the shared defaults.
OPENING = {"dataset": "digits", "D": 1024, "seed": 9}
OPENED_KEY = "_rk_gram_opened"
if not st.session_state.get(OPENED_KEY) and not any(is_stored(name) for name in OPENING) and not any(
        key != "presenter" for key in st.query_params):  # a bare visit: a link naming any setting keeps the rest
    apply_preset(OPENING, reset=False)
st.session_state[OPENED_KEY] = True
view = sidebar(maps=True, distributions="single")

formula(latex_with_degree(KERNELS[view.kernel].latex, view.degree), "The kernel (exact).")
if MAPS[view.map].takes_distribution:
    formula(r"Z(\mathbf{x}) = \tfrac{1}{\sqrt{D}}\big(K(\mathbf{x}, \boldsymbol\omega_1), \dots, "
            r"K(\mathbf{x}, \boldsymbol\omega_D)\big),\quad \hat K(\mathbf{x}, \mathbf{y}) = "
            r"\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle,\quad \mathbb{E}\,\hat K = K",
            "The RK map (Algorithm 1): each of the D random vectors ω has i.i.d. zero-mean, unit-variance entries "
            f"({DISTRIBUTIONS[view.distribution].label} weights here).")
else:
    st.caption(f"Map: {MAPS[view.map].label} — {MAPS[view.map].reference}. {MAPS[view.map].notes}")


@st.cache_data(show_spinner="Computing the Gram matrices…", max_entries=16)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def compute(view: ViewSpec):
    data = load_data(view)
    spec = view.kernel_spec(data)
    X = data.X if data.y is None else data.X[np.argsort(np.asarray(data.y), kind="stable")]  # blocks by label
    K, K_hat = gram_pair(X, spec, view.map, view.D, view.map_distribution, view.seed)
    return K, K_hat, gram_error_stats(K, K_hat), gram_pairs(K, K_hat, max_points=4000, random_state=0)


#: the page's views: one chart at a time (a first visit draws one figure, not three)
VIEWS = {"pair": "K and K̂ side by side", "difference": "Difference K̂ − K", "entries": "Entries: exact vs approximate"}


def gram_chart(view: ViewSpec, K_small, K_hat_small, b: int, n: int, pairs) -> None:
    """The chosen view's chart. Not a fragment: a fragment's rerun left the page's export with the view drawn
    before (exported while "Difference" showed, the file had the side-by-side pair); the page's rerun
    recomputes nothing (cached), and the export then holds the view on screen."""
    shown = persistent_widget(st.radio, "View", key="gram_view", format_func=VIEWS.get,
                              horizontal=True, label_visibility="collapsed")
    averaged = (f" For a fast screen the {n}×{n} matrices are drawn averaged over {b}×{b} blocks (at most "
                f"{HEATMAP_SIDE} cells per side); the error numbers on this page use every entry, the CSV "
                "holds the drawn values.") if b > 1 else ""
    if shown == "pair":
        chart(shared_figure(gram_heatmaps, K_small, K_hat_small, block=b, n=n, cache_key=view),
              gram_long(K_small, K_hat_small), "Gram matrices exact and approximate", main=True,
              caption="One shared color scale: equal colors mean equal values in both panels. The range spans the "
                      "1st–99th percentile of the entries, so the large diagonal K(x, x) saturates and the "
                      "off-diagonal pattern stays visible." + averaged)
    elif shown == "difference":
        chart(shared_figure(gram_difference, K_small, K_hat_small, block=b, n=n, cache_key=view),
              gram_long(K_small, K_hat_small)[["i", "j", "difference"]], "Gram difference", main=True,
              caption="Diverging colors centered at 0: white is exact, red over-, blue under-estimates." + averaged)
    else:
        chart(shared_figure(gram_scatter, pairs, n_total=n * (n + 1) // 2, cache_key=view), pairs,
              "Gram entries exact vs approximate", main=True,
              caption="Each dot is one entry (i ≤ j; a seeded subsample beyond 4,000). On the dashed line the "
                      "estimate is exact.")


with guarded("the Gram matrices"):
    data = load_data(view)
    n, d = data.X.shape
    spec = view.kernel_spec(data)
    def cost_at(s: int):
        return gram_view_cost(s, d, view.D, spec.name, spec.degree, view.map)

    run_or_wait(cost_at(n), key="gram", params=view, what="the Gram matrices",
                fits=f"With D = {view.D} and d = {d}, n up to {largest_fitting(cost_at, n):,} fits.")
    K, K_hat, stats, pairs = compute(view)
    kernel_text = (f"{spec.label()} kernel" if view.kernel != "itemset"
                   else f"itemset kernel over {spec.family(d).describe()}")
    rel = stats.set_index("metric")["value"]
    cols = st.columns(4)
    for col, metric in zip(cols, stats["metric"]):
        col.metric(metric, f"{rel[metric]:.3g}", help=GLOSSARY.get(metric))

    K_small, b = block_average(K, max_side=HEATMAP_SIDE)
    K_hat_small, _ = block_average(K_hat, max_side=HEATMAP_SIDE)
    with lead():  # the main chart first, above the settings
        gram_chart(view, K_small, K_hat_small, b, n, pairs)
    st.caption(f"Showing n = {n} points, d = {d} features, {view.normalization}-normalized; {kernel_text}; "
               f"{MAPS[view.map].label}, D = {view.D}, seed = {view.seed}"
               f"{'; points sorted by label' if data.y is not None else ''}. Data: {escape_markdown(data.description)}")
    notice(gram_note(stats, D=view.D, map_label=MAPS[view.map].label,
                     distribution_label=DISTRIBUTIONS[view.map_distribution].label if view.map_distribution else None,
                     pairs=pairs, n=n, unbiased=MAPS[view.map].unbiased, nystroem=view.map == "nystroem"))
    table(stats, "Gram error statistics", caption="E = K̂ − K over all n² entries.",
          column_config={"value": st.column_config.NumberColumn(format="%.4g")})

reproduce(view.code(
    "",
    "K = spec.exact(X)",
    f"Z = make_map({view.map!r}, spec, n_components={view.D}, distribution={view.map_distribution!r}, "
    f"random_state={view.seed}).fit_transform(X)",
    "K_hat = Z @ Z.T",
    "",
    "from rkcore.studies.gram import gram_error_stats",
    "print(gram_error_stats(K, K_hat))",
))
