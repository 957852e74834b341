"""Random Fourier features: how fast the Gaussian-kernel estimate improves with the number of features D."""
import numpy as np
import pandas as pd
import streamlit as st
from threadpoolctl import threadpool_limits

from rkapp import (
    ViewSpec, chart, choices, escape_markdown, formula, guarded, largest_fitting, lead, load_data, notice, page,
    persistent_widget, progress_bar, reproduce, run_or_wait, sidebar, table,
)
from rkapp.guard import admitted_run
from rkcore.studies.costs import rff_curve_cost, timing_cost
from rkcore.figures.fourier import FOURIER_METRICS, fourier_mse_figure
from rkcore.figures.timing import timing_figure, timing_note
from rkcore.studies.fourier_study import fourier_map_study, fourier_maps, fourier_note, fourier_study_cost, fourier_summary
from rkcore.registry import MAPS
from rkcore.studies.timing import growth_exponent, time_maps
from rkcore.figures.foundations import METRIC_LABELS, rff_error_figure, rff_note, rff_summary
from rkcore.teaching.fourier_features import median_heuristic_gamma, rff_error_curve
from rkcore.base.arrays import dense

D_MAX_OPTIONS = list(choices("rff_Dmax"))
BANDWIDTHS = {"median": "Median heuristic", "manual": "Set γ by hand"}

page("Random Fourier features",
     "Bochner's theorem writes the Gaussian kernel as an expectation over random frequencies ω ~ N(0, 2γI): "
     "K(x, y) = E[cos⟨ω, x − y⟩]. Averaging D random cosine features gives an unbiased estimate whose error "
     "shrinks like 1/√D (Hsu, *Features*, Section 2; Rahimi & Recht 2007). The features come from "
     "scikit-learn's `RBFSampler`.")
view = sidebar(kernel=False, distributions=None, D=False, seed=True)

formula(r"K(\mathbf{x},\mathbf{y}) = e^{-\gamma\|\mathbf{x}-\mathbf{y}\|^2} = "
        r"\mathbb{E}_{\boldsymbol\omega\sim\mathcal{N}(0, 2\gamma I)}\cos\langle\boldsymbol\omega, \mathbf{x}-\mathbf{y}\rangle",
        "Bochner: the Gaussian kernel is the characteristic function of a Gaussian frequency.")
formula(r"z(\mathbf{x}) = \sqrt{\tfrac{2}{D}}\big(\cos(\langle\boldsymbol\omega_i,\mathbf{x}\rangle + b_i)\big)_{i=1}^{D},\quad "
        r"b_i \sim \mathcal{U}[0, 2\pi),\qquad \mathbb{E}\langle z(\mathbf{x}), z(\mathbf{y})\rangle = K(\mathbf{x},\mathbf{y})",
        "The notes pair cos and sin of each ω; the random phase b gives the same expectation with one column per ω.")


@st.cache_data(show_spinner="Computing the error curve…", max_entries=16)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def error_curve(view: ViewSpec, gamma: float, D_list: tuple[int, ...], trials: int) -> pd.DataFrame:
    X = dense(load_data(view).X)
    with threadpool_limits(limits=1, user_api="blas"):  # small products: one BLAS thread avoids oversubscription
        return rff_error_curve(X, gamma, list(D_list), trials=trials, seed=view.seed)


@st.fragment
def study(view: ViewSpec) -> None:
    """The page's own controls and everything they change: a change here reruns only this part (the
    sidebar, the header and the formulas stay as they are)."""
    c1, c2, c3, c4 = st.columns(4)
    with c1:
        bandwidth = persistent_widget(st.radio, "Bandwidth γ", key="rff_bw",
                                      format_func=BANDWIDTHS.get, horizontal=True)
    with c2:
        gamma_manual = persistent_widget(st.number_input, "γ (by hand)", key="rff_gamma", format="%.4g",
                                         disabled=bandwidth != "manual")
    with c3:
        D_max = persistent_widget(st.select_slider, "Largest D", key="rff_Dmax", options=D_MAX_OPTIONS)
    with c4:
        trials = persistent_widget(st.number_input, "Trials per D", key="rff_trials")
    metric = persistent_widget(st.radio, "Error measure", key="rff_metric", options=list(METRIC_LABELS),
                               format_func=METRIC_LABELS.get, horizontal=True)

    D_list = tuple(int(D) for D in 2 ** np.arange(4, int(np.log2(D_max)) + 1))

    with guarded("the random Fourier features"):
        data = load_data(view)
        X = dense(data.X)
        n, d = X.shape
        gamma = median_heuristic_gamma(X) if bandwidth == "median" else float(gamma_manual)
        st.caption(f"{escape_markdown(data.description)} n = {n} points, d = {d}, {view.normalization}-normalized rows; "
                   f"γ = {gamma:.4g} ({BANDWIDTHS[bandwidth].lower()}); D = {D_list[0]} … {D_list[-1]}, "
                   f"{trials} trials each (seeds {view.seed} … {view.seed + trials - 1}).")
        def cost_at(s: int):
            return rff_curve_cost(s, d, D_list, int(trials))

        run_or_wait(cost_at(n), key="rff", params=(view, gamma, D_list, int(trials)), what="the error curve",
                    fits=f"With the largest D = {D_list[-1]:,} and {trials} trials, n up to "
                         f"{largest_fitting(cost_at, n):,} fits; or lower the largest D or the trials.")
        df = error_curve(view, gamma, D_list, int(trials))
        with lead():  # the main chart first, above the settings
            chart(rff_error_figure(df, metric), df, "RFF error vs D",
                  caption="Line: median over the trials; band: 10–90% of the trials; dashed: a 1/√D line through the first point.")
        summary = rff_summary(df, metric)
        table(summary, "RFF error summary", caption="If the error falls like 1/√D, the last column stays about constant.",
              column_config={k: st.column_config.NumberColumn(format="%.4g") for k in summary.columns if k != "D"})
        notice(rff_note(summary))

    reproduce("\n".join([
        *[line for line in view.code().splitlines() if "KernelSpec" not in line],
        "from rkcore.teaching.fourier_features import median_heuristic_gamma, rff_error_curve",
        "from rkcore.figures.foundations import rff_error_figure, rff_summary",
        "from rkcore.base.arrays import dense",
        "",
        "X = dense(X)",
        f"gamma = {'median_heuristic_gamma(X)' if bandwidth == 'median' else repr(float(gamma_manual))}",
        f"df = rff_error_curve(X, gamma, {list(D_list)}, trials={int(trials)}, seed={view.seed})",
        'print(f"gamma = {gamma:.4g}")',
        f"print(rff_summary(df, {metric!r}).to_string(index=False, float_format='%.4g'))  # the page's table",
        f"rff_error_figure(df, {metric!r}).show()",
    ]))


study(view)


# ---------------------------------------------------------------------------- orthogonal and structured maps
STRUCTURED_ROWS = 300  # rows kept for the comparison: it keeps trials x n²/2 estimates per cell
TIMING_D = (16, 32, 64, 128, 256, 512)


@st.cache_data(show_spinner=False, max_entries=8)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def structured_study(view: ViewSpec, gamma: float, maps: tuple[str, ...], D_list: tuple[int, ...], trials: int):
    X = dense(load_data(view).X)[:STRUCTURED_ROWS]
    with progress_bar("Comparing the maps…") as report, threadpool_limits(limits=1, user_api="blas"):
        return fourier_map_study(X, gamma, list(maps), list(D_list), trials, seed=view.seed, progress=report)


@st.cache_data(show_spinner="Timing the maps…", max_entries=8)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def structured_timing(maps: tuple[str, ...], d_list: tuple[int, ...], D: int, n: int, seed: int):
    with threadpool_limits(limits=1, user_api="blas"):
        return time_maps(list(maps), list(d_list), [D], [n], repeats=3, warmup=1, random_state=seed)


@st.fragment
def structured(view: ViewSpec) -> None:
    """I.i.d., orthogonal and structured maps of the same kernel: error and variance against D, time against d."""
    st.subheader("Orthogonal and structured random features")
    if not persistent_widget(st.toggle, "Compare i.i.d., orthogonal and structured maps", key="rff_struct"):
        return
    st.caption("ORF draws each block of d frequencies orthogonal (with chi-distributed lengths: every frequency is "
               "still N(0, 2γI)); SORF and FastFood replace the d × d matrix by sign flips, a permutation and fast "
               "Walsh–Hadamard transforms, O(D log d) per sample. RFF (cos/sin) is the i.i.d. reference with the same "
               "cos/sin features; scikit-learn's RFF uses one cosine with a random phase per frequency.")
    c1, c2, c3, c4 = st.columns([3, 2, 1.5, 2])
    with c1:
        maps = persistent_widget(st.multiselect, "Maps", key="rff_maps", format_func=lambda k: MAPS[k].short_label)
    with c2:
        multiples = persistent_widget(st.multiselect, "D as multiples of d", key="rff_mult",
                                      format_func=lambda m: f"{m}d")
    with c3:
        trials = persistent_widget(st.select_slider, "Maps per D", key="rff_strials")
    with c4:
        metric = persistent_widget(st.radio, "Show", key="rff_smetric",
                                   format_func=lambda k: FOURIER_METRICS[k].split(" of ")[0], horizontal=True)
    with guarded("the orthogonal and structured maps"):
        if not maps or not multiples:
            raise ValueError("Choose at least one map and one multiple of d.")
        data = load_data(view)
        X = dense(data.X)[:STRUCTURED_ROWS]
        n, d = X.shape
        gamma = median_heuristic_gamma(X)
        D_list = tuple(sorted(int(m) * d for m in multiples))
        cost = fourier_study_cost(n, d, maps, D_list, int(trials))
        run_or_wait(cost, key="rff_struct", params=(view, tuple(maps), D_list, int(trials)),
                    what="the comparison", fits="Fewer maps, multiples of d or maps per D also help.")
        df = structured_study(view, gamma, tuple(maps), D_list, int(trials))
        chart(fourier_mse_figure(df, metric), df, "Orthogonal and structured maps vs D",
              caption=f"First {n} rows, d = {d}, γ = {gamma:.4g} (median heuristic); each point: {trials} maps "
                      "(seeds shared by the maps). Dotted: a biased map (SORF: its rows have a fixed length).")
        summary = fourier_summary(df)
        table(summary, "MSE by map and D", caption="The ratio columns divide by the i.i.d. cos/sin reference.",
              column_config={c: st.column_config.NumberColumn(format="%.4g") for c in summary.columns if c != "D"})
        notice(fourier_note(df))

        D_time = 4 * TIMING_D[-1]
        st.markdown(f"**Time against d** (D = {D_time:,}, n = 500 N(0, 1) rows, median of 3 runs)")
        timing_cost_ = timing_cost(maps, TIMING_D, D_time, [], TIMING_D[0], 500, 1, 3)
        run_or_wait(timing_cost_, key="rff_time", params=(tuple(maps),), what="the timings")
        timing = structured_timing(tuple(maps), TIMING_D, D_time, 500, view.seed)
        slopes = growth_exponent(timing, "d")
        chart(timing_figure(timing, "d", slopes=slopes), timing, "Fourier maps: time vs d",
              caption="Slope in the legend: the fitted exponent of time ∝ d^k. The O(D d) maps (RFF, ORF) grow "
                      "with d; SORF and FastFood only through log d (and the padding of d to a power of two).")
        notice(timing_note(slopes.assign(along="d")))


structured(view)
