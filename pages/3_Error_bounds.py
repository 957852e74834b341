"""Error bounds: Lemmas 1-3 of the paper against the measured tail probability of the RK error."""
import streamlit as st

from rkapp import chart, escape_markdown, formula, lead, notice, page, persistent_widget, sidebar, table
from rkapp.views import ViewRun, run_view
from rkcore.views import error_bounds as eb

page("Error bounds",
     "How likely is the RK estimate ⟨Z(x), Z(y)⟩ to miss the kernel by ε or more? The paper bounds this "
     "probability (Lemmas 1–3). Here the bounds meet the tail probability **measured** over random maps on "
     "your data, as functions of ε and of D.")
view = sidebar(kernels=eb.ITEMSET_KERNELS, distributions="single", D=False)

c1, c2, c3, c4 = st.columns(4)
with c1:
    eps = persistent_widget(st.select_slider, "ε (error threshold)", key="eb_eps", options=eb.EPS_GRID,
                            format_func=lambda v: f"{v:g}", help="The D chart and the table use this ε.")
with c2:
    delta = persistent_widget(st.selectbox, "δ (allowed failure probability)", key="eb_delta",
                              options=eb.DELTAS, format_func=lambda v: f"{v:g}")
with c3:
    D_show = persistent_widget(st.select_slider, "D for the ε chart", key="eb_D", options=eb.D_GRID)
with c4:
    trials = persistent_widget(st.select_slider, "Trials (random maps per D)", key="eb_trials",
                               options=eb.TRIALS, help="Each trial draws a new RK map and measures all n² pairs.")

formula(r"p\big(|\mathcal{E}(\mathbf{x},\mathbf{y})| \ge \varepsilon\big) \le 2\exp\!\Big(\frac{-D\varepsilon^2}{2e^{4R}}\Big)"
        r"\ \ (8),\qquad p\big(|\mathcal{E}| \ge \varepsilon\big) \le 2\exp\!\Big(-\frac{D\varepsilon^2}{2R^{4m}}\Big)"
        r"\ \ (10,\ \text{ANOVA})",
        "Lemmas 1 and 3: one pair x, y with ‖x‖₁, ‖y‖₁ ≤ R; E = ⟨Z(x), Z(y)⟩ − K(x, y).")
formula(r"p\Big(\sup_{\mathbf{x},\mathbf{y}\in\mathcal{B}} |\mathcal{E}(\mathbf{x},\mathbf{y})| \ge \varepsilon\Big) \le "
        r"2\Big(\frac{32R\sqrt{de^{2R}}}{\varepsilon}\Big)^{2d}\exp\!\Big(-\frac{D\varepsilon^2}{8e^{4R}}\Big)\ \ (9)",
        "Lemma 2: all pairs at once (uniform over a compact set in the L1 ball of radius R).")


def charts(r: "eb.BoundsStudy", shown: "eb.BoundsShown", trials: int) -> None:
    measured, n = r.measured, r.n
    with lead():  # the two charts first, above the settings, one per row: each legend beside its plot
        left, right = st.container(), st.container()
    with left:
        chart(eb.bounds_vs_eps_figure(measured, shown.bounds_eps, D=D_show, R=r.R), eb.tail_rows(measured, D=D_show),
              "Tail probability vs eps", main=True,
              caption=f"Solid: measured over {trials} random maps (blue: one pair, averaged over the {n * n:,} "
                      "pairs; orange: the worst pair of each map). Dashed: the bounds, clipped at 1 where they say "
                      "nothing. Open triangles: nothing observed, so the probability is below the triangle.")
    with right:
        chart(eb.bounds_vs_D_figure(measured, shown.bounds_D, eps=float(eps), R=r.R),
              eb.tail_rows(measured, eps=float(eps)),
              "Tail probability vs D", main=True,
              caption=f"Measured at the D of the study ({eb.D_GRID[0]} … {eb.D_GRID[-1]}); the bounds are drawn out "
                      "to where they drop below 1.")


def render(run: ViewRun) -> None:
    r: eb.BoundsStudy = run.result
    trials = run.settings["eb_trials"]
    st.caption(eb.describe(run.spec, r, description=escape_markdown(run.data.description),
                           kernel=escape_markdown(r.kernel_label), eb_trials=trials))
    shown = eb.bounds_at(r, eps=float(eps), delta=float(delta), D=int(D_show))
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("R = max ‖x‖₁ (from the data)", f"{r.R:.4g}")
    m2.metric("d (features)", f"{r.d}")
    m3.metric(f"largest |E| seen at D = {D_show}", f"{shown.max_error:.3g}")
    m4.metric(f"mean |E| at D = {D_show}", f"{shown.mean_error:.3g}")
    charts(r, shown, trials)

    st.subheader(f"How many features does each lemma ask for? (ε = {eps:g}, δ = {delta:g})")
    display, notes_text = eb.requirements(shown.needed)
    for col, row in zip(st.columns(len(shown.needed)), shown.needed.itertuples(index=False)):
        label, value, delta_text = eb.asks_for(row)
        col.metric(label, value, delta=delta_text, delta_color="off", delta_arrow="off")
    table(display, "Components required by the lemmas",
          caption="D (lemma): the smallest D with bound ≤ δ (min_components_lemma*). D (measured): "
                  f"the smallest D of the study ({eb.D_GRID[0]} … {eb.D_GRID[-1]}) whose measured probability "
                  "is ≤ δ." + notes_text,
          column_config={"bound": st.column_config.TextColumn(width="medium"),
                         "bounds the probability of": st.column_config.TextColumn(width="medium"),
                         **{c: st.column_config.NumberColumn(format="compact") for c in
                            ("D (lemma)", "D (measured)", "lemma / measured")}})
    st.caption(f"Study: {run.seconds:.2f} s this run (cached until the data, kernel, distribution, seed or trials "
               "change).")
    notice(eb.note(run.spec, shown, D=int(D_show), trials=trials))


run_view(eb.BOUNDS, view, render, shown=dict(eb_eps=eps, eb_delta=delta, eb_D=D_show), eb_trials=trials,
         fits=f"With {trials} trials, n up to {{n}} fits; or lower the trials.")
