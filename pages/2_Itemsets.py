"""Itemsets: what the family S contains, its explicit feature map phi_S, and K_S = <phi_S, phi_S>."""
import streamlit as st

from rkapp import chart, formula, guarded, lead, literal, notice, page, shared_figure, show_warning, sidebar, table
from rkapp.views import ViewRun, run_view
from rkcore.views import itemsets

page("Itemset families",
     "Over every itemset $V$ of a family $\\mathcal{S}$ the kernel sums the product of the features in $V$; "
     "choose the family in the sidebar.")
view = sidebar(kernels=itemsets.ITEMSET_KERNELS, distributions=None, D=False, seed=False)

formula(r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y}) = \sum_{V\in\mathcal{S}} \prod_{j\in V} x_j y_j "
        r"= \langle \phi_{\mathcal{S}}(\mathbf{x}), \phi_{\mathcal{S}}(\mathbf{y}) \rangle,\qquad "
        r"\phi_{\mathcal{S}}(\mathbf{x}) = \Big(\prod_{j\in V} x_j\Big)_{V\in\mathcal{S}}",
        "Paper eq. (4): the explicit map φ_S has one coordinate per itemset, so it is only usable for tiny "
        "families; the kernel formulas never list S.")


def family_section(run: ViewRun) -> None:
    r: itemsets.ItemsetsResult = run.result
    family, counts = r.family, r.counts
    what, c1, c2, c3 = st.columns([4, 1, 1, 1], vertical_alignment="center")
    with what:
        st.latex(family.latex())
        st.markdown(f"**S** holds {literal(family.describe())}.")
    c1.metric("|S| (itemsets)", family.n_itemsets_text)
    c2.metric("d (features)", run.data.X.shape[1])
    c3.metric("largest itemset", family.max_size)
    with lead():  # the main chart first, above the settings' details
        chart(shared_figure(itemsets.family_counts_figure, counts),
              counts[["size", "count_text"]].rename(columns={"count_text": "count"}),
              "Itemset counts by size", caption="Counts are exact (combinatorial, never enumerated).")
    shown = ("all" if family.n_itemsets <= itemsets.LISTING_LIMIT
             else f"the first {len(r.listing)} of {family.n_itemsets_text}")
    with st.expander(f"List of itemsets ({shown})", expanded=family.n_itemsets <= 30):
        table(r.listing, "Itemsets listing", caption="Ordered by size, then lexicographically.")


def explicit_section(run: ViewRun) -> None:
    r: itemsets.ItemsetsResult = run.result
    family, sub, phi = r.family, r.explicit, r.features
    st.subheader("The explicit feature map φ_S")
    if sub.d < family.d:
        show_warning(f"φ_S would have {family.n_itemsets_text} columns. Below, the family is restricted to the "
                     f"itemsets within the first d′ = {sub.d} features ({sub.n_itemsets:,} itemsets), and the "
                     "data to those features.")
    cols_note = ("" if sub.n_itemsets <= itemsets.SHOWN_COLUMNS
                 else f" (first {itemsets.SHOWN_COLUMNS} of {sub.n_itemsets:,} columns)")
    table(phi.reset_index(), "Explicit features phi_S",
          caption=f"φ_S(x) for the first {itemsets.SHOWN_ROWS} points{cols_note}; a column is the product of the "
                  "features it names (∅ is the empty itemset, always 1).",
          # fixed width: auto-sized columns clipped the minus sign and leading digits of "-0.0123"
          column_config={c: st.column_config.NumberColumn(format="%.3g", width="small") for c in phi.columns})

    st.subheader("Check: K_S(x, y) = ⟨φ_S(x), φ_S(y)⟩")
    table(r.check, "Kernel versus inner product check",
          caption="kernel: the fast formula (no enumeration); inner_product: ⟨φ_S(xᵢ), φ_S(xⱼ)⟩ from the "
                  "explicit features. They agree to rounding error (the first pair is a diagonal one).",
          column_config={"kernel": st.column_config.NumberColumn(format="%.6g"),
                         "inner_product": st.column_config.NumberColumn(format="%.6g"),
                         "difference": st.column_config.NumberColumn(format="%.2e")})


def render(run: ViewRun) -> None:
    family_section(run)
    with guarded("the explicit feature map"):
        explicit_section(run)
    notice(itemsets.NOTE)


run_view(itemsets.ITEMSETS, view, render, fits=itemsets.FITS)
