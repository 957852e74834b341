"""Random Kernel Explorer: the landing page (story in three steps, presets, links to every page)."""
import streamlit as st

from rkapp import find_page, page, page_files, page_label, preset_button

page("Random Kernel Explorer",
     "Random feature maps for the itemset kernel — Atarashi, Maji & Oyama, *AAAI-19*. "
     "Three steps tell the story; each page lets you check one of them on data.")

one, two, three = st.columns(3, gap="large")
with one:
    st.subheader("1 · The itemset kernel")
    st.latex(r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y}) = \sum_{V\in\mathcal{S}}\ \prod_{j\in V} x_j y_j")
    st.markdown("A family $\\mathcal{S}$ of feature subsets (*itemsets*) picks which feature interactions "
                "count: all pairs (ANOVA, $m=2$), all subsets, or your own. A kernel SVM on it needs the "
                "$n \\times n$ Gram matrix: **$O(n^2)$ memory, $O(n^2 d)$ time** and more to train — "
                "out of reach for large $n$.")
with two:
    st.subheader("2 · The RK map")
    st.latex(r"\begin{aligned} Z(\mathbf{x}) &= \tfrac{1}{\sqrt{D}}\big(K_{\mathcal{S}}(\mathbf{x},\boldsymbol\omega_s)"
             r"\big)_{s=1}^{D} \\ \mathbb{E}\,\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle &= "
             r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y}) \end{aligned}")
    st.markdown("Draw $D$ random vectors $\\boldsymbol\\omega_s$ with i.i.d. zero-mean, unit-variance entries "
                "and evaluate the kernel against them. Inner products of the $D$ random features "
                "**estimate the kernel without bias**; the error falls like $1/\\sqrt{D}$, and Rademacher "
                "($\\pm 1$) weights give the smallest variance.")
with three:
    st.subheader("3 · Linear model, kernel accuracy")
    st.latex(r"\begin{aligned} f(\mathbf{x}) &= \langle \mathbf{w}, Z(\mathbf{x})\rangle \\ &\approx "
             r"\textstyle\sum_i \alpha_i K_{\mathcal{S}}(\mathbf{x}_i, \mathbf{x}) \end{aligned}")
    st.markdown("A linear classifier on $Z(\\mathbf{x})$ costs $O(nD)$ to train and $O(D\\,d\\,m)$ per "
                "prediction, yet **matches the kernel SVM's accuracy** once $D$ is a few hundred to a few "
                "thousand — much faster on large data.")

st.divider()
st.subheader("One-click presets")
st.caption("Each button sets the sidebar and opens the page; change anything from there. Everything runs on "
           "built-in data, no files needed.")
gram = "pages/1_Gram_matrices.py"
itemsets = "pages/2_Itemsets.py"
variance = find_page("variance", "distribution") or gram
classifiers = find_page("classif") or gram
presets = [
    ("ANOVA-2 on the default data, D = 256", gram, {"kernel": "anova", "m": 2, "D": 256},
     "Exact and approximate Gram matrices of the degree-2 ANOVA kernel on the synthetic interaction data."),
    ("Rademacher vs Gaussian variance", variance, {"kernel": "anova", "m": 2, "D": 256,
                                                   "dist": ("rademacher", "gaussian")},
     "Two weight distributions, same kernel: Rademacher has the smaller variance (Lemma 4)."),
    ("All-subsets kernel", gram, {"kernel": "all_subsets", "D": 512},
     "The product kernel ∏(1 + x_j y_j): 2^d itemsets, never enumerated."),
    ("A custom itemset family", itemsets, {"kernel": "itemset", "fam": "custom", "itemsets": "0,1; 2,3; 1,2,4"},
     "Three itemsets you can edit: what S holds, its explicit features, and the kernel check."),
    ("Linear model on RK features vs kernel SVM", classifiers, {"kernel": "anova", "m": 2, "n": 4000},
     "4,000 points: the linear SVM on RK features reaches the kernel SVM's accuracy at D = 16d and trains faster."),
]
RUNS_ON_ARRIVAL = {classifiers}  # the demo's last step shows results at once, not a second button
for row in range(0, len(presets), 3):
    cols = st.columns(3, gap="medium")
    for col, (label, target, values, help_text) in zip(cols, presets[row:row + 3]):
        with col:
            preset_button(label, target, values, help=help_text, run=target in RUNS_ON_ARRIVAL)
            st.caption(f"{help_text} → *{page_label(target)}*")

st.divider()
st.subheader("Pages")
for path in page_files():
    st.page_link(f"pages/{path.name}", label=page_label(path), icon=":material/arrow_forward:")
st.caption("Settings (data, kernel, distribution, D, seed) follow you from page to page and are kept in the URL, "
           "so a copied link reproduces the view.")
