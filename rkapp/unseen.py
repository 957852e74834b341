"""The sidebar of presenter mode, which draws nothing (issue 28: no sidebar, the settings still in the URL).

The sidebar's sections write into boxes (``box.header``, ``box.caption``, ``box.selectbox`` ...). In presenter
mode they are given :data:`UNSEEN` instead of a sidebar container: every call on it draws nothing and returns
None, so the sections run unchanged and put nothing on the screen, while
:func:`rkapp.widgets.persistent_widget` gives each field "drawn" there its value from the session and the URL,
checked as its widget would check it, and writes it back to the URL."""
from __future__ import annotations


def _draw_nothing(*args, **kwargs) -> None:
    return None


class _Unseen:
    """A box that takes every drawing call and draws nothing."""

    def __getattr__(self, name: str):
        if name.startswith("__"):  # copy, pickle and the like look for dunders: this box has none
            raise AttributeError(name)
        return _draw_nothing

    def __repr__(self) -> str:
        return "UNSEEN"


#: The presenter-mode sidebar box.
UNSEEN = _Unseen()


def is_unseen(box_or_draw) -> bool:
    """Whether a box is :data:`UNSEEN`, or a drawing function is one of its methods (``UNSEEN.selectbox``)."""
    return box_or_draw is UNSEEN or box_or_draw is _draw_nothing
