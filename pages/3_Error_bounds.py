"""Error bounds: Lemmas 1-3 of the paper against the measured tail probability of the RK error."""
import time

import numpy as np
import pandas as pd
import streamlit as st
from threadpoolctl import threadpool_limits

from rkapp import (
    ViewSpec, chart, choices, columns, escape_markdown, formula, guarded, largest_fitting, lead, load_data, notice,
    page,
    persistent_widget, progress_bar, reproduce, run_or_wait, sidebar, table,
)
from rkapp.guard import admitted_run
from rkcore.base.limits import format_estimate
from rkcore.studies.costs import error_study_cost
from rkcore.theory.bounds import bounds_table, l1_radius
from rkcore.theory.measured_tails import measured_tails, required_components
from rkcore.studies.errors import error_study
from rkcore.figures.bounds import LEMMA_LABELS, bounds_note, bounds_vs_D_figure, bounds_vs_eps_figure, sci
from rkcore.registry import ITEMSET_KERNELS

#: The D and eps of the study (the charts pick one of them, so changing it reruns nothing): the state table's.
D_GRID, EPS_GRID, TRIALS, DELTAS = choices("eb_D"), choices("eb_eps"), choices("eb_trials"), choices("eb_delta")

page("Error bounds",
     "How likely is the RK estimate ⟨Z(x), Z(y)⟩ to miss the kernel by ε or more? The paper bounds this "
     "probability (Lemmas 1–3). Here the bounds meet the tail probability **measured** over random maps on "
     "your data, as functions of ε and of D.")
view = sidebar(kernels=ITEMSET_KERNELS, distributions="single", D=False)

c1, c2, c3, c4 = st.columns(4)
with c1:
    eps = persistent_widget(st.select_slider, "ε (error threshold)", key="eb_eps", options=EPS_GRID,
                            format_func=lambda v: f"{v:g}", help="The D chart and the table use this ε.")
with c2:
    delta = persistent_widget(st.selectbox, "δ (allowed failure probability)", key="eb_delta",
                              options=DELTAS, format_func=lambda v: f"{v:g}")
with c3:
    D_show = persistent_widget(st.select_slider, "D for the ε chart", key="eb_D", options=D_GRID)
with c4:
    trials = persistent_widget(st.select_slider, "Trials (random maps per D)", key="eb_trials",
                               options=TRIALS, help="Each trial draws a new RK map and measures all n² pairs.")

formula(r"p\big(|\mathcal{E}(\mathbf{x},\mathbf{y})| \ge \varepsilon\big) \le 2\exp\!\Big(\frac{-D\varepsilon^2}{2e^{4R}}\Big)"
        r"\ \ (8),\qquad p\big(|\mathcal{E}| \ge \varepsilon\big) \le 2\exp\!\Big(-\frac{D\varepsilon^2}{2R^{4m}}\Big)"
        r"\ \ (10,\ \text{ANOVA})",
        "Lemmas 1 and 3: one pair x, y with ‖x‖₁, ‖y‖₁ ≤ R; E = ⟨Z(x), Z(y)⟩ − K(x, y).")
formula(r"p\Big(\sup_{\mathbf{x},\mathbf{y}\in\mathcal{B}} |\mathcal{E}(\mathbf{x},\mathbf{y})| \ge \varepsilon\Big) \le "
        r"2\Big(\frac{32R\sqrt{de^{2R}}}{\varepsilon}\Big)^{2d}\exp\!\Big(-\frac{D\varepsilon^2}{8e^{4R}}\Big)\ \ (9)",
        "Lemma 2: all pairs at once (uniform over a compact set in the L1 ball of radius R).")


@st.cache_data(show_spinner=False, max_entries=16)
@admitted_run  # a cache miss waits its turn for a server slot (rkapp.guard)
def bounds_study(view: ViewSpec, trials: int) -> pd.DataFrame:
    """The error study of RK with the view's distribution over D_GRID and EPS_GRID (all pairs of X)."""
    data = load_data(view)
    spec = view.kernel_spec(data)
    # one BLAS thread: the products here are small, and threads fighting over a shared
    # 2-core machine cost far more than they bring (a 200×20×256 product went from 0.2 to 40 ms)
    with progress_bar("Measuring the errors…") as report, threadpool_limits(limits=1, user_api="blas"):
        return error_study(data.X, spec, [("rk", view.distribution)], list(D_GRID), trials, eps=EPS_GRID,
                           random_state=view.seed, progress=report)


needed = None
with guarded("the error bounds"):
    data = load_data(view)
    X = data.X
    n, d = X.shape
    spec = view.kernel_spec(data)
    R = l1_radius(X)
    degree = int(spec.degree) if spec.name == "anova" else None

    def cost_at(s: int):
        return error_study_cost(s, d, spec.name, spec.degree, D_GRID, [("rk", view.distribution)], int(trials),
                               len(EPS_GRID))

    seconds = cost_at(n).seconds
    st.caption(f"{escape_markdown(data.description)} n = {n} points (n² = {n * n:,} pairs, diagonal included), "
               f"d = {d}, {view.normalization}-normalized; {escape_markdown(spec.label())} kernel; RK map with "
               f"{view.distribution} weights, D ∈ {{{', '.join(map(str, D_GRID))}}}, {trials} trials each; "
               f"estimated cost {format_estimate(seconds)}.")
    if run_or_wait(cost_at(n), key="eb", params=(view, int(trials)), what="the error study",
                   fits=f"With {trials} trials, n up to {largest_fitting(cost_at, n):,} fits; or lower the trials."):
        started = time.perf_counter()
        study = bounds_study(view, int(trials))
        elapsed = time.perf_counter() - started
        measured = measured_tails(study)

        m1, m2, m3, m4 = st.columns(4)
        m1.metric("R = max ‖x‖₁ (from the data)", f"{R:.4g}")
        m2.metric("d (features)", f"{d}")
        at_D = study[study["D"] == D_show]
        max_error = float(at_D[at_D["metric"] == "max_abs_error"]["value"].max())
        m3.metric(f"largest |E| seen at D = {D_show}", f"{max_error:.3g}")
        m4.metric(f"mean |E| at D = {D_show}", f"{at_D[at_D['metric'] == 'mean_abs_error']['value'].mean():.3g}")

        b_eps = bounds_table(D_show, np.logspace(np.log10(EPS_GRID[0]), 0.5, 160), R, d=d, degree=degree)
        needed = required_components(float(eps), float(delta), R, d, degree, measured)
        # the D axis reaches 10x the largest finite requirement of Lemmas 1 and 3 (Lemma 2 is far beyond)
        pointwise = needed.loc[needed["lemma"] != "lemma2", "D_bound"].to_numpy(float)
        pointwise = pointwise[np.isfinite(pointwise)]
        D_top = float(np.clip(10 * pointwise.max() if pointwise.size else 1e6, 1e4, 1e12))
        b_D = bounds_table(np.logspace(0, np.log10(D_top), 200), float(eps), R, d=d, degree=degree)
        with lead():  # the two charts first, above the settings (one chart per row in presenter mode)
            left, right = columns(2)
        with left:
            chart(bounds_vs_eps_figure(measured, b_eps, D=D_show, R=R), measured[measured["D"] == D_show],
                  "Tail probability vs eps", main=True,
                  caption=f"Solid: measured over {trials} random maps (blue: one pair, averaged over the {n * n:,} "
                          "pairs; orange: the worst pair of each map). Dashed: the bounds, clipped at 1 where they say "
                          "nothing. Open triangles: nothing observed, so the probability is below the triangle.")
        with right:
            chart(bounds_vs_D_figure(measured, b_D, eps=float(eps), R=R),
                  measured[np.isclose(measured["eps"], float(eps))], "Tail probability vs D", main=True,
                  caption=f"Measured at the D of the study ({D_GRID[0]} … {D_GRID[-1]}); the bounds are drawn out "
                          "to where they drop below 1.")

        st.subheader(f"How many features does each lemma ask for? (ε = {eps:g}, δ = {delta:g})")
        display = pd.DataFrame({
            "bound": [LEMMA_LABELS[k] for k in needed["lemma"]],
            "bounds the probability of": needed["bounds"],
            "D (lemma)": needed["D_bound"],
            "D (measured)": needed["D_measured"],
            "lemma / measured": needed["ratio"],
        })
        # the notes go under the table (a long text column made it scroll sideways at 1280 px)
        notes = ["smallest D tried: the true need may be lower, the ratio larger" if s else
                 ("" if np.isfinite(m) else f"no D up to {D_GRID[-1]} was enough")
                 for s, m in zip(needed["at_smallest"], needed["D_measured"])]
        notes_text = "".join(f" {label.split(' (')[0]}: {note}." for label, note in zip(display["bound"], notes) if note)
        for col, row in zip(st.columns(len(needed)), needed.itertuples(index=False)):
            sign = "≥ " if row.at_smallest else ""
            col.metric(f"{LEMMA_LABELS[row.lemma].split(' (')[0]} asks for D =", sci(row.D_bound),
                       delta=(f"{sign}{sci(row.ratio)}× the D measured to suffice" if np.isfinite(row.ratio)
                              else f"measured: not reached by D = {D_GRID[-1]}"), delta_color="off",
                       delta_arrow="off")
        table(display, "Components required by the lemmas",
              caption="D (lemma): the smallest D with bound ≤ δ (min_components_lemma*). D (measured): "
                      f"the smallest D of the study ({D_GRID[0]} … {D_GRID[-1]}) whose measured probability "
                      "is ≤ δ." + notes_text,
              column_config={"bound": st.column_config.TextColumn(width="medium"),
                             "bounds the probability of": st.column_config.TextColumn(width="medium"),
                             **{c: st.column_config.NumberColumn(format="compact") for c in
                                ("D (lemma)", "D (measured)", "lemma / measured")}})
        st.caption(f"Study: {elapsed:.2f} s this run (cached until the data, kernel, distribution, seed or trials "
                   "change).")

if needed is not None:
    notice(bounds_note(b_eps, needed, D=int(D_show), max_error=max_error, trials=int(trials),
                       distribution=view.distribution))

reproduce(view.code(
    "from rkcore.theory.bounds import bounds_table, l1_radius",
    "from rkcore.theory.measured_tails import measured_tails, required_components",
    "from rkcore.studies.errors import error_study",
    "from rkcore.figures.bounds import bounds_vs_eps_figure",
    "",
    "R = l1_radius(X)",
    f"study = error_study(X, spec, [('rk', {view.distribution!r})], {list(D_GRID)}, {int(trials)},",
    f"                    eps={list(EPS_GRID)}, random_state={view.seed})",
    "measured = measured_tails(study)",
    f"bounds = bounds_table({D_show}, np.logspace(-6, 0.5, 160), R, d=d"
    + (f", degree={view.degree})" if view.kernel == "anova" else ")"),
    f"bounds_vs_eps_figure(measured, bounds, D={D_show}, R=R).show()",
    f"print(required_components({float(eps)!r}, {float(delta)!r}, R, d, "
    + (f"{view.degree}, measured))" if view.kernel == "anova" else "None, measured))"),
))
