"""Random projections: how well a random m × D matrix preserves squared norms, against Theorem 1's band."""
import streamlit as st

from rkapp import chart, escape_markdown, formula, lead, notice, page, persistent_widget, sidebar, table
from rkapp.views import ViewRun, run_view
from rkcore.views import projections as rp

page("Random projections",
     "A random map A: ℝᴰ → ℝᵐ, drawn without looking at the data, keeps every fixed vector's squared norm within "
     "1 ± O(√(log(1/δ)/m)) with probability 1 − δ (Hsu, *Features*, Section 3, Theorem 1).")
spec = sidebar(kernel=False, distributions=None, D=False, seed=True)

c1, c2, c3, c4, c5 = st.columns([2.4, 1.8, 1.5, 1.8, 4.5])  # room for both projection chips at 1280 px
with c1:
    vectors = persistent_widget(st.radio, "Vectors v", key="rp_vec",
                                format_func=rp.VECTORS.get, help="φ(x): all products of at most two features, "
                                "1 + 2d + C(d, 2) dimensions (the notes project expanded features).")
with c2:
    m_max = persistent_widget(st.select_slider, "Largest m", key="rp_mmax", options=rp.M_MAX_OPTIONS)
with c3:
    trials = persistent_widget(st.number_input, "Draws of A", key="rp_trials")
with c4:
    delta = persistent_widget(st.number_input, "δ (failure probability)", key="rp_delta", step=0.01, format="%.3f")
with c5:
    kinds = persistent_widget(st.multiselect, "Projections", key="rp_kinds",
                              options=list(rp.PROJECTIONS), format_func=lambda k: rp.PROJECTIONS[k].label)

formula(r"\mathbf{A} = \tfrac{1}{\sqrt m}\mathbf{Z},\ Z_{ij}\sim\mathcal N(0,1):\quad "
        r"\Pr\Big[1 - 2\sqrt{\tfrac{\ln(2/\delta)}{m}} \le \frac{\|\mathbf{A}\mathbf{v}\|^2}{\|\mathbf{v}\|^2} "
        r"\le 1 + 2\sqrt{\tfrac{\ln(2/\delta)}{m}} + \tfrac{2\ln(2/\delta)}{m}\Big] \ge 1 - \delta",
        "Theorem 1 of the notes (from χ² tail bounds; m‖Av‖²/‖v‖² is exactly χ²ₘ for Gaussian A). "
        "The band is drawn for both kinds, but it is a theorem about Gaussian A only.")
formula(rp.PROJECTIONS["sparse"].latex,
        "Sparse A (scikit-learn's SparseRandomProjection, Li, Hastie & Church 2006): same mean, about s·m non-zeros "
        "per column. The notes' Theorem 2 for sparse A has an extra log(1/δ)/s term.")


def render(run: ViewRun) -> None:
    r: rp.ProjectionResult = run.result
    df = r.distortions
    with lead():  # the main chart first, above the settings
        chart(rp.projection_distortion_figure(df, float(delta), bands=r.bands(delta)), df, "Projection distortion",
              caption=f"Line: median of ‖Av‖²/‖v‖² over all vectors and draws; band: the central {100 * (1 - delta):g}%. "
                      "Dashed: Theorem 1's band (its lower edge is vacuous, clipped at 0, for small m); dotted: the exact "
                      "χ² interval. Each m uses the first m rows of one draw, rescaled (same distribution as a fresh draw).")
    st.caption(f"{escape_markdown(run.data.description)} {r.n_vectors} vectors of dimension D = {r.dim:,} "
               f"({rp.VECTORS[vectors]} of the {spec.normalization}-normalized rows"
               f"{f'; {r.dropped} zero rows dropped' if r.dropped else ''}); "
               f"m = {r.m_list[0]} … {r.m_list[-1]}; {trials} independent draws of A per projection.")
    st.metric("median share of ‖v‖² in its largest coordinate", f"{r.share:.2f}",
              help="Near 1: spiky vectors (one coordinate carries the norm); near 1/D: flat vectors.")
    summary = r.summary(delta)
    chart(rp.band_violation_figure(summary), summary, "Theorem 1 band violations",
          caption=f"The theorem allows a fraction δ = {delta:g} outside its band for Gaussian A. Fractions are over "
                  "all (vector, draw) pairs; vectors share each draw of A, so similar vectors fail together.")
    labels = rp.summary_labels(delta)
    table(summary[list(rp.SUMMARY_LABELS)].rename(columns=labels), "Projection distortion summary",
          column_config={label: st.column_config.NumberColumn(format="%.4g") for label in list(labels.values())[2:]})
    notice(r.note(delta))


run_view(rp.PROJECTION, spec, render, shown=dict(rp_delta=delta), rp_vec=vectors, rp_mmax=m_max, rp_trials=trials,
         rp_kinds=tuple(kinds))
