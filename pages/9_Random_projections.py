"""Random projections: how well a random m × D matrix preserves squared norms, against Theorem 1's band."""
import numpy as np
import pandas as pd
import streamlit as st
from threadpoolctl import threadpool_limits

from rkapp import (
    ViewSpec, chart, choices, escape_markdown, formula, guarded, largest_fitting, lead, load_data, notice, page,
    persistent_widget, reproduce, run_or_wait, sidebar, table,
)
from rkapp.guard import admitted_run
from rkcore.studies.costs import projection_cost
from rkcore.figures.foundations import band_violation_figure, projection_distortion_figure, projection_note
from rkcore.teaching.kernel_trick import polynomial_features
from rkcore.teaching.random_projections import PROJECTIONS, distortion_bands, distortion_summary, projection_distortion
from rkcore.base.arrays import dense

M_MAX_OPTIONS = list(choices("rp_mmax"))
VECTORS = {"phi": "explicit degree-2 features φ(x)", "raw": "the data rows x"}


#: the summary's columns as the table shows them (q_low / q_high are the δ/2 and 1 − δ/2 quantiles)
SUMMARY_LABELS = {"kind": "kind", "m": "m", "q_low": "q {lo:g}%", "median": "median", "q_high": "q {hi:g}%",
                  "band_low": "band low", "band_high": "band high", "outside": "outside band"}


def summary_labels(delta: float) -> dict[str, str]:
    return {k: v.format(lo=100 * delta / 2, hi=100 - 100 * delta / 2) for k, v in SUMMARY_LABELS.items()}

page("Random projections",
     "A random map A: ℝᴰ → ℝᵐ, drawn without looking at the data, keeps every fixed vector's squared norm within "
     "1 ± O(√(log(1/δ)/m)) with probability 1 − δ (Hsu, *Features*, Section 3, Theorem 1).")
view = sidebar(kernel=False, distributions=None, D=False, seed=True)

c1, c2, c3, c4, c5 = st.columns([2.4, 1.8, 1.5, 1.8, 4.5])  # room for both projection chips at 1280 px
with c1:
    vectors = persistent_widget(st.radio, "Vectors v", key="rp_vec",
                                format_func=VECTORS.get, help="φ(x): all products of at most two features, "
                                "1 + 2d + C(d, 2) dimensions (the notes project expanded features).")
with c2:
    m_max = persistent_widget(st.select_slider, "Largest m", key="rp_mmax", options=M_MAX_OPTIONS)
with c3:
    trials = persistent_widget(st.number_input, "Draws of A", key="rp_trials")
with c4:
    delta = persistent_widget(st.number_input, "δ (failure probability)", key="rp_delta", step=0.01, format="%.3f")
with c5:
    kinds = persistent_widget(st.multiselect, "Projections", key="rp_kinds",
                              options=list(PROJECTIONS), format_func=lambda k: PROJECTIONS[k].label)

formula(r"\mathbf{A} = \tfrac{1}{\sqrt m}\mathbf{Z},\ Z_{ij}\sim\mathcal N(0,1):\quad "
        r"\Pr\Big[1 - 2\sqrt{\tfrac{\ln(2/\delta)}{m}} \le \frac{\|\mathbf{A}\mathbf{v}\|^2}{\|\mathbf{v}\|^2} "
        r"\le 1 + 2\sqrt{\tfrac{\ln(2/\delta)}{m}} + \tfrac{2\ln(2/\delta)}{m}\Big] \ge 1 - \delta",
        "Theorem 1 of the notes (from χ² tail bounds; m‖Av‖²/‖v‖² is exactly χ²ₘ for Gaussian A). "
        "The band is drawn for both kinds, but it is a theorem about Gaussian A only.")
formula(PROJECTIONS["sparse"].latex,
        "Sparse A (scikit-learn's SparseRandomProjection, Li, Hastie & Church 2006): same mean, about s·m non-zeros "
        "per column. The notes' Theorem 2 for sparse A has an extra log(1/δ)/s term.")


def vectors_of(view: ViewSpec, which: str) -> tuple[np.ndarray, int]:
    """The vectors to project (zero rows dropped) and how many zero rows were dropped."""
    X = dense(load_data(view).X)
    V = polynomial_features(X, 2, 1.0) if which == "phi" else X
    keep = np.einsum("ij,ij->i", V, V) > 0
    return V[keep], int((~keep).sum())


@st.cache_data(show_spinner="Projecting…", max_entries=16)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def distortions(view: ViewSpec, which: str, m_list: tuple[int, ...], kinds: tuple[str, ...], trials: int) -> pd.DataFrame:
    V, _ = vectors_of(view, which)
    with threadpool_limits(limits=1, user_api="blas"):  # small products: one BLAS thread avoids oversubscription
        return pd.concat([projection_distortion(V, list(m_list), kind=k, trials=trials, seed=view.seed) for k in kinds],
                         ignore_index=True)


m_list = tuple(int(m) for m in 2 ** np.arange(2, int(np.log2(m_max)) + 1))

with guarded("the random projections"):
    if not kinds:
        raise ValueError("Choose at least one projection (Gaussian or sparse).")
    data = load_data(view)
    n, d = data.X.shape
    dim = 1 + 2 * d + d * (d - 1) // 2 if vectors == "phi" else d

    def cost_at(s: int):
        return projection_cost(s, dim, m_list, int(trials), kinds)

    run_or_wait(cost_at(n), key="rp", params=(view, vectors, m_list, tuple(kinds), int(trials)),
                what="the projections", fits=f"With these settings n up to {largest_fitting(cost_at, n):,} fits; "
                                             "or lower the largest m or the draws, or project the raw rows.")
    V, dropped = vectors_of(view, vectors)
    df = distortions(view, vectors, m_list, tuple(kinds), int(trials))
    with lead():  # the main chart first, above the settings
        chart(projection_distortion_figure(df, float(delta), bands=distortion_bands(df["m"], float(delta))), df, "Projection distortion",
              caption=f"Line: median of ‖Av‖²/‖v‖² over all vectors and draws; band: the central {100 * (1 - delta):g}%. "
                      "Dashed: Theorem 1's band (its lower edge is vacuous, clipped at 0, for small m); dotted: the exact "
                      "χ² interval. Each m uses the first m rows of one draw, rescaled (same distribution as a fresh draw).")
    st.caption(f"{escape_markdown(data.description)} {V.shape[0]} vectors of dimension D = {V.shape[1]:,} ({VECTORS[vectors]} of the "
               f"{view.normalization}-normalized rows{f'; {dropped} zero rows dropped' if dropped else ''}); "
               f"m = {m_list[0]} … {m_list[-1]}; {trials} independent draws of A per projection.")
    share = float(np.median((V**2).max(axis=1) / (V**2).sum(axis=1)))
    st.metric("median share of ‖v‖² in its largest coordinate", f"{share:.2f}",
              help="Near 1: spiky vectors (one coordinate carries the norm); near 1/D: flat vectors.")
    summary = distortion_summary(df, float(delta))
    chart(band_violation_figure(summary), summary, "Theorem 1 band violations",
          caption=f"The theorem allows a fraction δ = {delta:g} outside its band for Gaussian A. Fractions are over "
                  "all (vector, draw) pairs; vectors share each draw of A, so similar vectors fail together.")
    table(summary[list(SUMMARY_LABELS)].rename(columns=summary_labels(delta)), "Projection distortion summary",
          column_config={label: st.column_config.NumberColumn(format="%.4g")
                         for label in list(summary_labels(delta).values())[2:]})
    notice(projection_note(summary, float(delta), share))

reproduce("\n".join([
    *[line for line in view.code().splitlines() if "KernelSpec" not in line],
    "from rkcore.teaching.kernel_trick import polynomial_features",
    "from rkcore.teaching.random_projections import distortion_bands, distortion_summary, projection_distortion",
    "from rkcore.figures.foundations import projection_distortion_figure",
    "import pandas as pd",
    "from rkcore.base.arrays import dense",
    "",
    "V = polynomial_features(dense(X), 2, 1.0)" if vectors == "phi" else "V = dense(X)",
    "V = V[np.einsum('ij,ij->i', V, V) > 0]  # zero rows have no distortion ratio",
    f"df = pd.concat([projection_distortion(V, {list(m_list)}, kind=k, trials={int(trials)}, seed={view.seed})",
    f"                for k in {list(kinds)}], ignore_index=True)",
    f"summary = distortion_summary(df, delta={float(delta)})",
    f"labels = {summary_labels(delta)!r}",
    "print(summary[list(labels)].rename(columns=labels).to_string(index=False, float_format='%.4g'))  # the page's table",
    f"projection_distortion_figure(df, delta={float(delta)}, bands=distortion_bands(df['m'], {float(delta)})).show()",
]))
