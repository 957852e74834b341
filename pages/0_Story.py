"""The five-minute story: the paper's argument in five screens, each with one sentence computed from
the numbers it shows (rkcore.teaching.story). The step is in the URL (story_step=3), so a link opens that screen.
Arrow keys, Space and a clicker's Page Up / Page Down move between the steps (Streamlit's button shortcuts), unless
a lesson is held: then its Previous / Next take the keys (rkapp.lessons) and these buttons are for the mouse."""
import streamlit as st

from rkapp import lecture_tools, chart, export_button, guarded, notice, page, persistent_widget
from rkapp.lessons import lesson_active
from rkapp.state import store
from rkapp.views import view_result
from rkcore.views import story

STEPS = story.STEP_TITLES
#: keys that move forward / back besides the arrows (a presentation clicker sends Page Down / Page Up);
#: each needs its own button, kept out of sight (a button has one shortcut)
MORE_KEYS = {"story_next_space": ("Space", +1), "story_next_pgdn": ("PageDown", +1), "story_prev_pgup": ("PageUp", -1)}

page("The story in five screens")
keys = not lesson_active()  # a held lesson's keys step the lesson (rkapp.lessons); one shortcut, one button
st.html("<style>" + "".join(f".st-key-{key} {{ display: none; }}" for key in MORE_KEYS) + "</style>")


def go_to(step: int) -> None:
    store("story_step", min(max(step, 1), len(STEPS)))


# one row: the steps, then Previous / Next (their shortcut hints show the arrow keys)
with st.container(horizontal=True, vertical_alignment="center", gap="small"):
    step = persistent_widget(st.segmented_control, key="story_step", format_func=lambda s: f"{s} · {STEPS[s]}",
                             label_visibility="collapsed")
    step = step or 1
    st.button("Previous", on_click=go_to, args=(step - 1,), disabled=step == 1, key="story_prev",
              shortcut="Left" if keys else None, help="Left arrow or Page Up" if keys else None)
    st.button("Next", on_click=go_to, args=(step + 1,), disabled=step == len(STEPS), key="story_next",
              type="primary", shortcut="Right" if keys else None, help="Right arrow, Space or Page Down" if keys else None)
for key, (shortcut, move) in MORE_KEYS.items() if keys else ():
    st.button(shortcut, key=key, on_click=go_to, args=(step + move,), shortcut=shortcut)


def shown_step(number: int) -> story.StoryStep:
    """Step ``number``, its view's result cached and admitted (rkapp.views.view_result)."""
    return story.shown_step(number, view_result(story.step_view(number), story.SPEC))


def lesson() -> story.Lesson:
    """All five steps for the offline export (the cached results; the duel runs if it never did)."""
    out = story.Lesson("The story in five screens", settings={"story_step": step, "duel n": story.DUEL_N})
    for number in STEPS:
        s = shown_step(number)
        out.items += [story.Item("heading", s.heading), story.Item("note", s.sentence),
                      story.Item("chart", s.caption, story.STEP_BUILDERS[s.kind](*s.figure_args))]
    return out


with guarded("this step"):
    current = shown_step(step)
    sentence_box = st.container()  # the sentence's lead above the chart, its rest ("More") under it
    chart(story.STEP_BUILDERS[current.kind](*current.figure_args), story.step_data(current), f"Story step {step}",
          key=f"story_{step}", caption=current.caption or None)
    notice(current.sentence, into=sentence_box)

lecture_tools()  # the lesson and class controls (a page with settings draws them under its settings)
export_button(lesson, "the_story", label="Export the story (one HTML file, works offline)")
