"""Random Kernel Explorer: the landing page (story in three steps, presets, links to every page)."""
import streamlit as st

from rkapp import lecture_tools, find_page, page, page_files, page_label, preload_chart_library, preset_button
from rkcore.views import home

page("Random Kernel Explorer",
     "Random feature maps for the itemset kernel — Atarashi, Maji & Oyama, *AAAI-19*.")

story = find_page("story")
if story:
    st.page_link(story, label="Start the five-minute story: the paper's argument in five screens",
                 icon=":material/play_circle:")

STEPS = [
    ("1 · The itemset kernel",
     r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y}) = \sum_{V\in\mathcal{S}}\ \prod_{j\in V} x_j y_j",
     "A family $\\mathcal{S}$ of feature subsets (*itemsets*) picks which feature interactions count: all pairs "
     "(ANOVA, $m=2$), all subsets, or your own. A kernel SVM needs the $n \\times n$ Gram matrix: "
     "**$O(n^2)$ memory, $O(n^2 d)$ time**."),
    ("2 · The RK map",
     r"\begin{gathered} Z(\mathbf{x}) = \tfrac{1}{\sqrt{D}}\big(K_{\mathcal{S}}(\mathbf{x},\boldsymbol\omega_s)"
     r"\big)_{s=1}^{D} \\ \mathbb{E}\,\langle Z(\mathbf{x}), Z(\mathbf{y})\rangle = "
     r"K_{\mathcal{S}}(\mathbf{x},\mathbf{y}) \end{gathered}",
     "Draw $D$ random vectors $\\boldsymbol\\omega_s$ with i.i.d. zero-mean, unit-variance entries and evaluate "
     "the kernel against them: inner products of the features **estimate the kernel without bias**, with an "
     "error falling like $1/\\sqrt{D}$. " + home.HOME_VARIANCE_CLAIM.replace("±", "$\\pm$")),
    ("3 · Linear model, kernel accuracy",
     r"f(\mathbf{x}) = \langle \mathbf{w}, Z(\mathbf{x})\rangle \approx "
     r"\textstyle\sum_i \alpha_i K_{\mathcal{S}}(\mathbf{x}_i, \mathbf{x})",
     "A linear classifier on $Z(\\mathbf{x})$ costs $O(nD)$ to train and $O(D\\,d\\,m)$ per prediction; the "
     "paper finds it **matches the kernel SVM's accuracy** once $D$ is a few hundred to a few thousand. "
     "Whether it is also faster depends on $n$: the Classifiers page measures both."),
]
for title, latex, text in STEPS:
    left, right = st.columns([5, 6], gap="medium", vertical_alignment="center")
    with left:
        st.markdown(f"**{title}**")
        st.latex(latex)
    with right:
        st.markdown(text)

st.divider()
st.subheader("One-click presets")
st.caption("Each button sets the sidebar and opens the page; change anything from there. Everything runs on "
           "built-in data, no files needed.")
gram = "pages/1_Gram_matrices.py"
itemsets = "pages/2_Itemsets.py"
variance = find_page("variance", "distribution") or gram
classifiers = find_page("classif") or gram
presets = [
    ("ANOVA-2 on the default data, D = 256", gram, {"kernel": "anova", "degree": 2, "D": 256},
     "Exact and approximate Gram matrices of the degree-2 ANOVA kernel on the synthetic interaction data."),
    ("Rademacher vs Gaussian variance", variance, {"kernel": "anova", "degree": 2, "D": 256,
                                                   "distributions": ("rademacher", "gaussian")},
     "Two weight distributions, same kernel; Lemma 4 predicts the smaller variance for Rademacher: check it."),
    ("All-subsets kernel", gram, {"kernel": "all_subsets", "D": 512},
     "The product kernel ∏ⱼ (1 + xⱼ yⱼ): all 2ᵈ itemsets, never enumerated."),
    ("A custom itemset family", itemsets, {"kernel": "itemset", "family": "custom", "itemsets": "0,1; 2,3; 1,2,4"},
     "Three itemsets you can edit: what S holds, its explicit features, and the kernel check."),
    ("Linear model on RK features vs kernel SVM", classifiers, {"kernel": "anova", "degree": 2, "n": 4000},
     "4,000 points: test accuracy and fit time of the linear SVM on RK features against the kernel SVM, "
     "both measured on arrival (which one is faster depends on n and on the machine's load)."),
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
lecture_tools()  # the lesson and class controls (a page with settings draws them under its settings)
preload_chart_library()  # last: loads the chart library while the reader reads (see its docstring)
