"""Gram matrices: the exact kernel K next to its random-feature estimate K̂ = Z Zᵀ."""
import streamlit as st

from rkapp import chart, escape_markdown, formula, lead, notice, page, persistent_widget, shared_figure, sidebar, table
from rkapp.state import apply_preset, is_stored
from rkapp.views import ViewRun, run_view
from rkcore.views import gram

page("Gram matrices",
     "The exact Gram matrix $K$ next to its random-feature estimate $\\hat K = ZZ^\\top$, on one color scale.")
OPENED_KEY = "_rk_gram_opened"
if not st.session_state.get(OPENED_KEY) and not any(is_stored(name) for name in gram.OPENING) and not any(
        key != "presenter" for key in st.query_params):  # a bare visit: a link naming any setting keeps the rest
    apply_preset(gram.OPENING, reset=False)
st.session_state[OPENED_KEY] = True
spec = sidebar(maps=True, distributions="single")

formula(gram.kernel_formula(spec), "The kernel (exact).")
if gram.MAPS[spec.map].takes_distribution:
    formula(r"Z(\mathbf{x}) = \tfrac{1}{\sqrt{D}}\big(K(\mathbf{x}, \boldsymbol\omega_1), \dots, "
            r"K(\mathbf{x}, \boldsymbol\omega_D)\big),\quad \hat K(\mathbf{x}, \mathbf{y}) = "
            r"\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle,\quad \mathbb{E}\,\hat K = K",
            "The RK map (Algorithm 1): each of the D random vectors ω has i.i.d. zero-mean, unit-variance entries "
            f"({gram.DISTRIBUTIONS[spec.distribution].label} weights here).")
else:
    entry = gram.MAPS[spec.map]
    st.caption(f"Map: {entry.label} — {entry.reference}. {entry.notes}")


def gram_chart(run: ViewRun) -> None:
    """The chosen chart. Not a fragment: a fragment's rerun left the page's export with the view drawn
    before (exported while "Difference" showed, the file had the side-by-side pair); the page's rerun
    recomputes nothing (cached), and the export then holds the view on screen."""
    r: gram.GramResult = run.result
    shown = persistent_widget(st.radio, "View", key="gram_view", format_func=gram.CHARTS.get,
                              horizontal=True, label_visibility="collapsed")
    averaged = (f" For a fast screen the {r.n}×{r.n} matrices are drawn averaged over {r.block}×{r.block} blocks "
                f"(at most {gram.HEATMAP_SIDE} cells per side); the error numbers on this page use every entry, the "
                "CSV holds the drawn values.") if r.block > 1 else ""
    if shown == "pair":
        chart(shared_figure(gram.gram_heatmaps, r.K_small, r.K_hat_small, block=r.block, n=r.n, cache_key=run.spec),
              r.long(), "Gram matrices exact and approximate", main=True,
              caption="One shared color scale: equal colors mean equal values in both panels. The range spans the "
                      "1st–99th percentile of the entries, so the large diagonal K(x, x) saturates and the "
                      "off-diagonal pattern stays visible." + averaged)
    elif shown == "difference":
        chart(shared_figure(gram.gram_difference, r.K_small, r.K_hat_small, block=r.block, n=r.n,
                            cache_key=run.spec),
              r.long()[["i", "j", "difference"]], "Gram difference", main=True,
              caption="Diverging colors centered at 0: white is exact, red over-, blue under-estimates." + averaged)
    else:
        chart(shared_figure(gram.gram_scatter, r.pairs, n_total=r.n * (r.n + 1) // 2, cache_key=run.spec), r.pairs,
              "Gram entries exact vs approximate", main=True,
              caption=f"Each dot is one entry (i ≤ j; a seeded subsample beyond {gram.MAX_SCATTER_POINTS:,}). On "
                      "the dashed line the estimate is exact.")


def render(run: ViewRun) -> None:
    r: gram.GramResult = run.result
    values = r.stats.set_index("metric")["value"]
    for col, metric in zip(st.columns(4), r.stats["metric"]):
        col.metric(metric, f"{values[metric]:.3g}", help=gram.GLOSSARY.get(metric))
    with lead():  # the main chart first, above the settings
        gram_chart(run)
    st.caption(f"Showing n = {r.n} points, d = {r.d} features, {spec.normalization}-normalized; {r.kernel_text}; "
               f"{gram.MAPS[spec.map].label}, D = {spec.D}, seed = {spec.seed}"
               f"{'; points sorted by label' if r.sorted_by_label else ''}. "
               f"Data: {escape_markdown(run.data.description)}")
    notice(gram.note(spec, r))
    table(r.stats, "Gram error statistics", caption="E = K̂ − K over all n² entries.",
          column_config={"value": st.column_config.NumberColumn(format="%.4g")})


run_view(gram.GRAM, spec, render)
