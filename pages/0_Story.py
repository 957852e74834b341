"""The five-minute story: the paper's argument in five screens, each with one sentence computed from
the numbers it shows (rkcore.teaching.story). The step is in the URL (story_step=3), so a link opens that screen.
Arrow keys, Space and a clicker's Page Up / Page Down move between the steps (Streamlit's button shortcuts)."""
import streamlit as st

from rkapp import chart, export_button, guarded, notice, page, persistent_widget
from rkapp.guard import admitted_run
from rkapp.state import store
from rkcore.figures.export import Item, Lesson
from rkcore.teaching import story
from rkcore.figures.story import duel_figure, error_curve_figure, matrix_figure, pair_figure

STEPS = story.STEP_TITLES
#: the classifier duel's size: large enough that the linear model is really faster (measured, not assumed)
DUEL_N = 8000
#: keys that move forward / back besides the arrows (a presentation clicker sends Page Down / Page Up);
#: each needs its own button, kept out of sight (a button has one shortcut)
MORE_KEYS = {"story_next_space": ("Space", +1), "story_next_pgdn": ("PageDown", +1), "story_prev_pgup": ("PageUp", -1)}

page("The story in five screens")
st.html("<style>" + "".join(f".st-key-{key} {{ display: none; }}" for key in MORE_KEYS) + "</style>")


def go_to(step: int) -> None:
    store("story_step", min(max(step, 1), len(STEPS)))


# one row: the steps, then Previous / Next (their shortcut hints show the arrow keys)
with st.container(horizontal=True, vertical_alignment="center", gap="small"):
    step = persistent_widget(st.segmented_control, key="story_step", format_func=lambda s: f"{s} · {STEPS[s]}",
                             label_visibility="collapsed")
    step = step or 1
    st.button("Previous", on_click=go_to, args=(step - 1,), disabled=step == 1, key="story_prev",
              shortcut="Left", help="Left arrow or Page Up")
    st.button("Next", on_click=go_to, args=(step + 1,), disabled=step == len(STEPS), key="story_next",
              type="primary", shortcut="Right", help="Right arrow, Space or Page Down")
for key, (shortcut, move) in MORE_KEYS.items():
    st.button(shortcut, key=key, on_click=go_to, args=(step + move,), shortcut=shortcut)


@st.cache_data(show_spinner="Computing the Gram matrices…", max_entries=2)
def gram_steps():
    return story.gram_steps()


@st.cache_data(show_spinner="Drawing random features for every D…", max_entries=2)
def error_steps():
    return story.error_steps()


@st.cache_data(show_spinner="Training both classifiers (about 10–30 s)…", max_entries=2)
@admitted_run(cost=story.duel_cost)  # a cache miss waits its turn for a server slot (rkapp.guard)
def duel(n: int):
    return story.duel(n)


BUILDERS = {"matrix": matrix_figure, "pair": pair_figure, "curve": error_curve_figure, "duel": duel_figure}


def shown_step(number: int) -> story.StoryStep:
    if number <= 2:
        return gram_steps()[number - 1]
    if number <= 4:
        return error_steps()[number - 3]
    return story.duel_step(*duel(DUEL_N))  # its sentence says whether the duel ran now or was kept


def lesson() -> Lesson:
    """All five steps for the offline export (the cached results; the duel runs if it never did)."""
    out = Lesson("The story in five screens", settings={"story_step": step, "duel n": DUEL_N})
    for number in STEPS:
        s = shown_step(number)
        out.items += [Item("heading", s.heading), Item("note", s.sentence),
                      Item("chart", s.caption, BUILDERS[s.kind](*s.figure_args))]
    return out


with guarded("this step"):
    current = shown_step(step)
    sentence_box = st.container()  # the sentence's lead above the chart, its rest ("More") under it
    data = current.data if current.data is not None else story.matrix_frame(*current.figure_args[:1 + (step == 2)])
    chart(BUILDERS[current.kind](*current.figure_args), data, f"Story step {step}", key=f"story_{step}",
          caption=current.caption or None)
    notice(current.sentence, into=sentence_box)

export_button(lesson, "the_story", label="Export the story (one HTML file, works offline)")
