"""The five-minute story: the paper's argument in five screens, each with one sentence computed from
the numbers it shows (rkcore.teaching.story). The step is in the URL (story_step=3), so a link opens that screen."""
import time

import streamlit as st
from threadpoolctl import threadpool_limits

from rkapp import chart, guarded, notice, page, persistent_widget
from rkapp.state import store
from rkcore.teaching import story
from rkcore.studies.accuracy import accuracy_study, speedups
from rkcore.figures.story import duel_figure, error_curve_figure, matrix_figure, pair_figure
from rkcore.spec import load_view_data

STEPS = {1: "The kernel", 2: "Its estimate", 3: "More features", 4: "Weights", 5: "Linear vs kernel SVM"}
#: the classifier duel's size: large enough that the linear model is really faster (measured, not assumed)
DUEL_N = 8000

page("The story in five screens")


def go_to(step: int) -> None:
    store("story_step", min(max(step, 1), len(STEPS)))


step = persistent_widget(st.segmented_control, key="story_step", format_func=lambda s: f"{s} · {STEPS[s]}",
                         label_visibility="collapsed")
step = step or 1
prev, _, nxt = st.columns([1, 4, 1])
prev.button("Previous", icon=":material/arrow_back:", on_click=go_to, args=(step - 1,), disabled=step == 1,
            key="story_prev", width="stretch")
nxt.button("Next", icon=":material/arrow_forward:", on_click=go_to, args=(step + 1,), disabled=step == len(STEPS),
           key="story_next", width="stretch", type="primary")


@st.cache_data(show_spinner="Computing the Gram matrices…", max_entries=8)
def digits_gram(D: int):
    X, y = story.story_data()
    K, K_hat = story.gram_for(X, D)
    return K, K_hat, y


@st.cache_data(show_spinner="Drawing random features for every D…", max_entries=8)
def errors(dataset: str, normalization: str, distributions: tuple[str, ...], trials: int):
    X, _ = story.story_data(200 if dataset != story.STORY_DATASET else story.STORY_N, dataset, normalization)
    with threadpool_limits(limits=1, user_api="blas"):
        df = story.error_vs_D(X, distributions=distributions, trials=trials)
    return df, story.median_error(df)


@st.cache_data(show_spinner="Training both classifiers (about 10–30 s)…", max_entries=2)
def duel(n: int):
    data = load_view_data("interactions", "l1", n)
    D = 16 * data.X.shape[1]
    with threadpool_limits(limits=1, user_api="blas"):
        df = accuracy_study((data.X, data.y), ["kernel_svm", "rk"], [D], 1, kernel=story.STORY_KERNEL,
                            C_grid=(1.0, 10.0, 100.0), random_state=0)
    return speedups(df), int(df["n_train"].iloc[0]), time.strftime("%H:%M:%S")


with guarded("this step"):
    if step == 1:
        K, _, y = digits_gram(256)
        n = K.shape[0]
        notice(story.kernel_sentence(K, y))
        chart(matrix_figure(K, y, f"The exact ANOVA (m = 2) kernel on {n} handwritten digits"),
              story.matrix_frame(K), "Story exact Gram", key="story_exact")
    elif step == 2:
        K, K_hat, y = digits_gram(256)
        notice(story.gram_sentence(K, K_hat, 256, y))
        chart(pair_figure(K, K_hat, 256), story.matrix_frame(K, K_hat), "Story Gram pair", key="story_pair")
    elif step == 3:
        trials, medians = errors(story.STORY_DATASET, story.STORY_NORMALIZATION, ("rademacher",), 2)
        notice(story.convergence_sentence(medians))
        chart(error_curve_figure(trials, medians, "Error of the estimate as D grows (digits)"), trials,
              "Story error vs D", key="story_error_vs_D")
    elif step == 4:
        trials, medians = errors("interactions", "l1", story.STORY_DISTRIBUTIONS, 3)
        notice(story.distribution_sentence(medians))
        chart(error_curve_figure(trials, medians, "Rademacher vs Gaussian weights (synthetic interaction data)"),
              trials, "Story distributions", key="story_distributions")
    else:
        summary, n_train, when = duel(DUEL_N)
        notice(story.classifier_sentence(summary, n_train))
        chart(duel_figure(summary), summary, "Story classifiers", key="story_duel",
              caption=f"Measured at {when} on this server (one BLAS thread, one trial; wall-clock times vary "
                      "with the machine's load). The Classifiers page runs the full study.")
