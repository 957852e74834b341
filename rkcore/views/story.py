"""The five-minute story: the paper's argument in five screens (:mod:`rkcore.teaching.story`), each step's computation
a :class:`~rkcore.views.base.View` (the Gram matrices of steps 1-2, the error curves of steps 3-4, the speed duel of
step 5), and what the page draws them with: the step builders, the CSV frame, the export's lesson.

The page (``pages/0_Story.py``) runs the views with ``rkapp.views.view_result`` (cached, admitted to a server slot
priced by each view's cost) and draws :func:`shown_step`'s step.
"""
from __future__ import annotations

from rkcore.figures.export import Item, Lesson
from rkcore.figures.story import STEP_BUILDERS
from rkcore.studies.costs import gram_view_cost
from rkcore.studies.costs.rates import RunCost
from rkcore.teaching import story as _story  # called through the module: tests replace story.duel
from rkcore.teaching.story import STEP_TITLES, STORY_D_GRID, STORY_GRAM_D, STORY_N, StoryStep, matrix_frame

from .base import View
from .settings import ViewSpec

#: The story's points of the speed duel (step 5): large enough that the linear model is really faster at
#: prediction (measured, not assumed); ``rkcore export-story --duel-n`` chooses its own.
DUEL_N = 8000
#: The story's views read no shared setting: one spec for every session, so every session shares the cache.
SPEC = ViewSpec()
#: The digits' shape (points, features) the story's Gram steps use: L2 rows of the 8x8 images.
_DIGITS_D = 64


def compute_grams(spec: ViewSpec, data) -> list[StoryStep]:
    """Steps 1 and 2 (:func:`rkcore.teaching.story.gram_steps`).

    Parameters
    ----------
    spec : ViewSpec
        Unused (the story's data and kernel are its own).
    data : None
        Unused.

    Returns
    -------
    list of StoryStep
        Steps 1 and 2.
    """
    return _story.gram_steps()


def compute_errors(spec: ViewSpec, data) -> list[StoryStep]:
    """Steps 3 and 4 (:func:`rkcore.teaching.story.error_steps`).

    Parameters
    ----------
    spec : ViewSpec
        Unused.
    data : None
        Unused.

    Returns
    -------
    list of StoryStep
        Steps 3 and 4.
    """
    return _story.error_steps()


def compute_duel(spec: ViewSpec, data) -> tuple:
    """Step 5's measurement at :data:`DUEL_N` points (:func:`rkcore.teaching.story.duel`).

    Parameters
    ----------
    spec : ViewSpec
        Unused.
    data : None
        Unused.

    Returns
    -------
    tuple
        (SpeedDuel, n_train, measured_at).
    """
    return _story.duel(DUEL_N)


def cost_grams(spec: ViewSpec, n: int, d: int) -> RunCost:
    """Steps 1-2: one exact and one estimated Gram matrix of the story's digits.

    Parameters
    ----------
    spec : ViewSpec
        Unused.
    n, d : int
        Unused (0: the story loads its own data).

    Returns
    -------
    RunCost
        The estimate.
    """
    return gram_view_cost(STORY_N, _DIGITS_D, STORY_GRAM_D, "anova", 2, "rk")


def cost_errors(spec: ViewSpec, n: int, d: int) -> RunCost:
    """Steps 3-4: a Gram pair per (distribution, D, trial): 2 trials on the digits, 2 x 3 on the interaction data.

    Parameters
    ----------
    spec : ViewSpec
        Unused.
    n, d : int
        Unused.

    Returns
    -------
    RunCost
        The estimate.
    """
    parts = [(trials, gram_view_cost(n, d, D, "anova", 2, "rk")) for D in STORY_D_GRID
             for trials, n, d in ((2, STORY_N, _DIGITS_D), (6, 200, 20))]  # step 3: 2 trials; step 4: 2 x 3
    seconds = sum(trials * c.seconds for trials, c in parts)
    peak = max(c.bytes for _, c in parts)
    return RunCost(seconds, peak, (("the story's error curves", seconds, peak),))


def cost_duel(spec: ViewSpec, n: int, d: int) -> RunCost:
    """Step 5 (:func:`rkcore.teaching.story.duel_cost` at :data:`DUEL_N`).

    Parameters
    ----------
    spec : ViewSpec
        Unused.
    n, d : int
        Unused.

    Returns
    -------
    RunCost
        The estimate.
    """
    return _story.duel_cost(DUEL_N)


def _reproduce(call: str) -> str:
    return "\n".join(["from rkcore.teaching import story", "", f"result = story.{call}", "print(result)"])


def reproduce_grams(spec: ViewSpec) -> str:
    """Code computing steps 1-2 with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        Unused.

    Returns
    -------
    str
        The code.
    """
    return _reproduce("gram_steps()")


def reproduce_errors(spec: ViewSpec) -> str:
    """Code computing steps 3-4 with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        Unused.

    Returns
    -------
    str
        The code.
    """
    return _reproduce("error_steps()")


def reproduce_duel(spec: ViewSpec) -> str:
    """Code computing step 5 with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        Unused.

    Returns
    -------
    str
        The code.
    """
    return _reproduce(f"duel_step(*story.duel({DUEL_N}))")


GRAMS = View(key="story_grams", what="the story's Gram matrices", compute=compute_grams, cost=cost_grams,
             reproduce=reproduce_grams, needs_data=False)
ERRORS = View(key="story_errors", what="the story's error curves", compute=compute_errors, cost=cost_errors,
              reproduce=reproduce_errors, needs_data=False)
DUEL = View(key="story_duel", what="the speed duel (both classifiers over seeds, then time against n)",
            compute=compute_duel, cost=cost_duel, reproduce=reproduce_duel, needs_data=False)
VIEWS = (GRAMS, ERRORS, DUEL)


def step_view(number: int) -> View:
    """The view computing story step ``number`` (1-5).

    Parameters
    ----------
    number : int
        The step.

    Returns
    -------
    View
        GRAMS, ERRORS or DUEL.
    """
    return GRAMS if number <= 2 else ERRORS if number <= 4 else DUEL


def shown_step(number: int, result) -> StoryStep:
    """Step ``number`` from its view's result (step 5: its sentence says whether the duel ran now or was kept).

    Parameters
    ----------
    number : int
        The step, 1-5.
    result : object
        ``step_view(number)``'s result.

    Returns
    -------
    StoryStep
        The step.
    """
    if number <= 2:
        return result[number - 1]
    if number <= 4:
        return result[number - 3]
    return _story.duel_step(*result)


def step_data(step: StoryStep):
    """The numbers behind a step's chart (its table, or the drawn matrices as a tidy frame).

    Parameters
    ----------
    step : StoryStep
        The step.

    Returns
    -------
    pandas.DataFrame
        The CSV's table.
    """
    if step.data is not None:
        return step.data
    return matrix_frame(*step.figure_args[:1 + (step.number == 2)])


__all__ = ["DUEL", "DUEL_N", "ERRORS", "GRAMS", "Item", "Lesson", "SPEC", "STEP_BUILDERS", "STEP_TITLES",
           "StoryStep", "shown_step", "step_data", "step_view"]
