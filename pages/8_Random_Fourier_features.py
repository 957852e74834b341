"""Random Fourier features: how fast the Gaussian-kernel estimate improves with the number of features D.

No part of the page is an st.fragment: a fragment's rerun left the page's export with the view drawn before
(exported after the comparison's toggle was switched on, the file lacked its charts; after a change of
the error measure, the file had the measure drawn before). A setting's change reruns the page, which
recomputes nothing (every view is cached), and the reproduce box, whose export holds every chart drawn
before it, comes last.
"""
import streamlit as st

from rkapp import chart, escape_markdown, formula, lead, notice, page, persistent_widget, sidebar, table
from rkapp.views import ViewRun, reproduce_view, run_view
from rkcore.views import fourier

page("Random Fourier features",
     "Bochner's theorem writes the Gaussian kernel as an expectation over random frequencies ω ~ N(0, 2γI): "
     "K(x, y) = E[cos⟨ω, x − y⟩]. Averaging D random cosine features gives an unbiased estimate whose error "
     "shrinks like 1/√D (Hsu, *Features*, Section 2; Rahimi & Recht 2007). The features come from "
     "scikit-learn's `RBFSampler`.")
spec = sidebar(kernel=False, distributions=None, D=False, seed=True)

formula(r"K(\mathbf{x},\mathbf{y}) = e^{-\gamma\|\mathbf{x}-\mathbf{y}\|^2} = "
        r"\mathbb{E}_{\boldsymbol\omega\sim\mathcal{N}(0, 2\gamma I)}\cos\langle\boldsymbol\omega, \mathbf{x}-\mathbf{y}\rangle",
        "Bochner: the Gaussian kernel is the characteristic function of a Gaussian frequency.")
formula(r"z(\mathbf{x}) = \sqrt{\tfrac{2}{D}}\big(\cos(\langle\boldsymbol\omega_i,\mathbf{x}\rangle + b_i)\big)_{i=1}^{D},\quad "
        r"b_i \sim \mathcal{U}[0, 2\pi),\qquad \mathbb{E}\langle z(\mathbf{x}), z(\mathbf{y})\rangle = K(\mathbf{x},\mathbf{y})",
        "The notes pair cos and sin of each ω; the random phase b gives the same expectation with one column per ω.")

# ---------------------------------------------------------------------------- the error curve
c1, c2, c3, c4 = st.columns(4)
with c1:
    bandwidth = persistent_widget(st.radio, "Bandwidth γ", key="rff_bw",
                                  format_func=fourier.BANDWIDTHS.get, horizontal=True)
with c2:
    gamma_manual = persistent_widget(st.number_input, "γ (by hand)", key="rff_gamma", format="%.4g",
                                     disabled=bandwidth != "manual")
with c3:
    D_max = persistent_widget(st.select_slider, "Largest D", key="rff_Dmax", options=fourier.D_MAX_OPTIONS)
with c4:
    trials = persistent_widget(st.number_input, "Trials per D", key="rff_trials")
metric = persistent_widget(st.radio, "Error measure", key="rff_metric", options=list(fourier.METRIC_LABELS),
                           format_func=fourier.METRIC_LABELS.get, horizontal=True)
curve_settings = dict(rff_bw=bandwidth, rff_gamma=gamma_manual, rff_Dmax=D_max, rff_trials=trials)


def render_curve(run: ViewRun) -> None:
    r: fourier.CurveResult = run.result
    st.caption(f"{escape_markdown(run.data.description)} n = {r.n} points, d = {r.d}, {spec.normalization}-normalized rows; "
               f"γ = {r.gamma:.4g} ({fourier.BANDWIDTHS[bandwidth].lower()}); D = {r.D_list[0]} … {r.D_list[-1]}, "
               f"{trials} trials each (seeds {spec.seed} … {spec.seed + trials - 1}).")
    with lead():  # the main chart first, above the settings
        chart(fourier.rff_error_figure(r.curve, metric), r.curve, "RFF error vs D",
              caption="Line: median over the trials; band: 10–90% of the trials; dashed: a 1/√D line through the first point.")
    summary = r.summary(metric)
    table(summary, "RFF error summary", caption="If the error falls like 1/√D, the last column stays about constant.",
          column_config={k: st.column_config.NumberColumn(format="%.4g") for k in summary.columns if k != "D"})
    notice(fourier.rff_note(summary))


run_view(fourier.RFF_CURVE, spec, render_curve, reproduce_box=False, **curve_settings)


# ---------------------------------------------------------------------------- orthogonal and structured maps
def render_structured(run: ViewRun) -> None:
    r: fourier.StructuredResult = run.result
    chart(fourier.fourier_mse_figure(r.study, shown_metric), r.study, "Orthogonal and structured maps vs D",
          caption=f"First {r.n} rows, d = {r.d}, γ = {r.gamma:.4g} (median heuristic); each point: {run.settings['rff_strials']} maps "
                  "(seeds shared by the maps). Dotted: a biased map (SORF: its rows have a fixed length).")
    summary = fourier.fourier_summary(r.study)
    table(summary, "MSE by map and D", caption="The ratio columns divide by the i.i.d. cos/sin reference.",
          column_config={c: st.column_config.NumberColumn(format="%.4g") for c in summary.columns if c != "D"})
    notice(fourier.fourier_note(r.study))


def render_timing(run: ViewRun) -> None:
    r: fourier.TimingResult = run.result
    chart(fourier.timing_figure(r.timing, "d", slopes=r.slopes), r.timing, "Fourier maps: time vs d",
          caption="Slope in the legend: the fitted exponent of time ∝ d^k. The O(D d) maps (RFF, ORF) grow "
                  "with d; SORF and FastFood only through log d (and the padding of d to a power of two).")
    notice(r.note())


st.subheader("Orthogonal and structured random features")
if persistent_widget(st.toggle, "Compare i.i.d., orthogonal and structured maps", key="rff_struct"):
    st.caption("ORF draws each block of d frequencies orthogonal (with chi-distributed lengths: every frequency is "
               "still N(0, 2γI)); SORF and FastFood replace the d × d matrix by sign flips, a permutation and fast "
               "Walsh–Hadamard transforms, O(D log d) per sample. RFF (cos/sin) is the i.i.d. reference with the same "
               "cos/sin features; scikit-learn's RFF uses one cosine with a random phase per frequency.")
    c1, c2, c3, c4 = st.columns([3, 2, 1.5, 2])
    with c1:
        maps = persistent_widget(st.multiselect, "Maps", key="rff_maps", format_func=lambda k: fourier.MAPS[k].short_label)
    with c2:
        multiples = persistent_widget(st.multiselect, "D as multiples of d", key="rff_mult",
                                      format_func=lambda m: f"{m}d")
    with c3:
        map_trials = persistent_widget(st.select_slider, "Maps per D", key="rff_strials")
    with c4:
        shown_metric = persistent_widget(st.radio, "Show", key="rff_smetric",
                                         format_func=lambda k: fourier.FOURIER_METRICS[k].split(" of ")[0],
                                         horizontal=True)
    if run_view(fourier.STRUCTURED, spec, render_structured, reproduce_box=False, rff_maps=tuple(maps),
                rff_mult=tuple(multiples), rff_strials=map_trials) is not None:
        st.markdown(f"**Time against d** (D = {fourier.timing_D():,}, n = {fourier.TIMING_N} N(0, 1) rows, "
                    f"median of {fourier.TIMING_REPEATS} runs)")
        run_view(fourier.STRUCTURED_TIMING, spec, render_timing, reproduce_box=False, rff_maps=tuple(maps))

reproduce_view(fourier.RFF_CURVE, spec, shown=dict(rff_metric=metric), **curve_settings)  # last: the export holds every chart above
