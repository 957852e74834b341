"""Widgets bound to the state table: a value persists across pages and lives in the URL.

Why not Streamlit's own ``bind="query-params"`` / ``persist_state``? A bound selectbox stores its
label in the URL (not the registry key), a page with bound widgets cannot ``st.switch_page``, and
``persist_state`` did not carry values across pages under AppTest. Here the widget's value is copied
to a shadow session key in its on_change callback and restored before the widget is drawn.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Literal, Sequence

import streamlit as st

from rkcore.data import datasets as rkdata
from rkcore.maps.distributions import DISTRIBUTIONS
from rkcore.registry import KERNELS, MAPS, KernelSpec, maps_for
from rkcore.spec import FAMILY_SOURCES, UPLOAD, dataset_label

from .guard import literal, show_error
from .run_context import draw_sidebar_tools
from .upload_section import UPLOAD_STATE_KEY, upload_section  # noqa: F401  (UPLOAD_STATE_KEY: tests set it)
from .unseen import UNSEEN, is_unseen
from .state import (
    DEFAULT_DISTRIBUTION, FIELDS, NO_TARGET, VIEW_FIELDS, ViewSpec, check, read_url, record_settings,
    store, stored, write_url,
)


def _let_non_finite_numbers_through() -> None:
    """Streamlit 1.67 turns an integer number_input's incoming value into int before its own bounds
    check, so NaN/inf sent by a crafted client raise "cannot convert float NaN to integer" before any
    page code runs, on every rerun of the session. Hand such a value over unchanged instead:
    :func:`persistent_widget` refuses it with a message and restores the field's default."""
    from streamlit.elements.widgets.number_input import NumberInputSerde

    original = NumberInputSerde.deserialize
    if getattr(original, "_rk_tolerant", False):
        return

    def deserialize(self, ui_value):
        if isinstance(ui_value, float) and not math.isfinite(ui_value):
            return ui_value
        return original(self, ui_value)

    deserialize._rk_tolerant = True
    NumberInputSerde.deserialize = deserialize

NORM_LABELS = {"l1": "L1 (paper)", "l2": "L2", "none": "none"}


#: session key: how many times the reader changed a setting's widget (a followed class's student then branches off)
TOUCHES_KEY = "_rk_touches"


def _on_change(name: str, multi: bool) -> None:
    value = st.session_state[name]
    store(name, tuple(value) if multi else value)
    if name != "presenter":  # the screen's mode is each device's own, not a change of the view
        st.session_state[TOUCHES_KEY] = st.session_state.get(TOUCHES_KEY, 0) + 1


def persistent_widget(draw: Callable, label: str | None = None, *, key: str, options: Sequence | None = None,
                      min_value=None, max_value=None, fallback=None, **kwargs):
    """Draw ``draw(label, key=key, ...)`` for the table's field ``key``; returns its value (a tuple for
    multiselects). Default, label, choices and bounds come from the table unless given here; a value from
    the URL outside them is refused with an st.error. ``fallback`` replaces a stored value that is not among
    this page's ``options`` (default: the field's default if allowed, else the first option). ``draw`` a method
    of :data:`~rkapp.unseen.UNSEEN` (presenter mode's sidebar): no widget, the value from the session and the
    URL, checked the same way, is returned and written back to the URL."""
    if draw is st.number_input or getattr(draw, "__name__", "") == "number_input":
        _let_non_finite_numbers_through()  # where the patch is needed: before a number input's value is read
    f = FIELDS[key]  # a KeyError here means the field is missing from the state table (rkcore/views/settings.py)
    label = label or f.label
    if options is None and f.options is not None:
        options = f.options()
    min_value = f.min_value if min_value is None else min_value
    max_value = f.max_value if max_value is None else max_value
    kwargs.setdefault("help", f.help)
    errors: list[str] = []
    read_url(f, options, min_value, max_value, label, errors)
    value = stored(key)
    if options is not None:
        opts = list(options)
        if f.multi:
            value = tuple(v for v in value if v in opts)
        elif value not in opts:
            # a value from a page with other choices: fall back quietly
            value = fallback if fallback in opts else f.default if f.default in opts else opts[0]
    else:
        problem = check(value, None, min_value, max_value, label)
        if problem:
            errors.append(f"{problem} Using {f.dump(f.default)}.")
            value = f.default
    store(key, value)
    if is_unseen(draw):
        for message in errors:
            show_error(message)
        write_url(f, value)
        return value
    st.session_state[key] = list(value) if f.multi else value
    extra = {k: v for k, v in (("options", options), ("min_value", min_value), ("max_value", max_value))
             if v is not None}
    result = draw(label, key=key, on_change=_on_change, args=(key, f.multi), **extra, **kwargs)
    if f.multi:
        result = tuple(result)
    problem = check(result, None, min_value, max_value, label) if options is None else None
    if problem:  # a crafted client sent NaN, inf or a huge value: refused here, the default comes back
        errors.append(f"{problem} Using {f.dump(f.default)}.")
        result = f.default
    store(key, result)
    for message in errors:
        show_error(message)
    write_url(f, result)
    return result


# ============================================================================ the shared sidebar
def _upload_section(box=None) -> tuple[str, str] | None:
    """File uploader, share checkbox and target column (rkapp.upload_section); returns (name, the owner's digest)."""
    return upload_section(box, persistent_widget)


def presenting() -> bool:
    """Whether presenter mode is on (page() has read the field from the URL or its control): the sidebar
    then draws nothing."""
    return bool(stored("presenter"))


def sidebar(*, data: bool = True, n: bool = True, n_max: int = 5000, kernel: bool = True,
            kernels: Sequence[str] | None = None, maps: bool | Sequence[str] = False,
            distributions: Literal["single", "multi"] | None = "single", D: bool = True, D_max: int = 65536,
            seed: bool = True) -> ViewSpec:
    """Draw the shared sidebar (the sections asked for) and return the view; hidden fields keep their
    stored values. ``maps=True`` offers the maps of the chosen kernel, a list restricts them. The fields it
    draws, as drawn, are the settings every CSV of the page carries (header lines and file name). In presenter
    mode nothing is drawn: the same fields take their values from the session and the URL (rkapp.unseen)."""
    # the random-feature settings (D, the seed) go on top: they are what a lecturer changes live, and at
    # 1280x720 they are then on the first screen; they are drawn last (the maps depend on the kernel)
    if presenting():
        features_box = data_box = kernel_box = note_box = UNSEEN
    else:
        features_box, data_box, kernel_box = st.sidebar.container(), st.sidebar.container(), st.sidebar.container()
        note_box = st.sidebar
    values: dict[str, Any] = {name: stored(name) for name in VIEW_FIELDS}
    values["upload"] = None
    drawn: dict[str, Any] = {}  # the fields this sidebar draws, as it draws them: the page's CSV settings

    def draw(widget: Callable, label: str | None = None, *, key: str, **kwargs):
        values[key] = drawn[key] = persistent_widget(widget, label, key=key, **kwargs)
        return values[key]

    if data:
        _data_section(data_box, values, drawn, draw)
    if n:
        draw(data_box.number_input, key="n", max_value=int(n_max), step=50)
    if kernel:
        _kernel_section(kernel_box, kernels, values, draw)
    _features_section(features_box, maps, distributions, D, values, drawn, draw)
    if D:
        draw(features_box.number_input, key="D", max_value=int(D_max), step=64)
    if seed:
        draw(features_box.number_input, key="seed", step=1)
    note_box.caption(":material/link: The page URL holds these settings: copy it to share this exact view."
                       + (" Your uploaded file goes with it only if you tick *Share this file with the link*."
                          if values["dataset"] == UPLOAD else ""))
    if values["dataset"] != UPLOAD:
        values["target"] = NO_TARGET
        write_url(FIELDS["upload"], "")  # the file's key goes with the upload choice
    record_settings(drawn)
    draw_sidebar_tools()  # the lecture's controls, under the settings
    return ViewSpec(**values)


def _data_section(sb, values: dict, drawn: dict, draw: Callable) -> None:
    sb.header("Data")
    draw(sb.selectbox, key="dataset", format_func=dataset_label)
    if values["dataset"] in rkdata.BUILTIN:
        sb.caption(literal(rkdata.BUILTIN[values["dataset"]].description))
    elif values["dataset"] == UPLOAD:
        values["upload"] = _upload_section(sb)
        values["target"] = stored("target")
        if values["upload"]:  # the file's name stands for the dataset; the target column was drawn
            drawn.update(dataset=values["upload"][0], target=values["target"])
    else:
        draw(sb.text_input, key="movielens_path", placeholder="ml-100k")
        roots = rkdata.data_roots()
        sb.caption(literal(f"Read only under this server's data roots: {', '.join(roots)}." if roots else
                           "This server reads no server folders (no data roots are set)."))
    draw(sb.radio, key="normalization", format_func=NORM_LABELS.get, horizontal=True)


#: How the sidebar draws each widget a kernel asks for (KernelEntry.widgets): the widget and its arguments.
_KERNEL_WIDGETS = {"family": ("radio", dict(format_func=FAMILY_SOURCES.get)), "itemsets": ("text_input", {}),
                   "fields": ("text_input", dict(placeholder="the dataset's own fields")),
                   "degree": ("number_input", dict(step=1)), "c": ("number_input", dict(step=0.5)),
                   "gamma": ("number_input", dict(step=0.5, format="%.4g"))}


def kernel_widgets(kernel: str, family: str = "custom") -> list[str]:
    """The widgets the sidebar draws for a kernel, in order: the entry's (``KernelEntry.widgets``), with
    the family source deciding between typed itemsets and fields (cross fields also take the degree).

    Parameters
    ----------
    kernel : str
        A key of the registry's KERNELS.
    family : str, default="custom"
        The family source ("custom" or "cross"), for a kernel whose family the user gives.

    Returns
    -------
    list of str
        Fields of the state table.
    """
    entry = KERNELS[kernel]
    shown = [w for w in entry.widgets if w != ("fields" if family == "custom" else "itemsets")]
    if entry.takes_family and family != "custom" and "degree" not in shown:
        shown.append("degree")  # a cross-fields family has an order m
    return shown


def _kernel_section(sb, kernels: Sequence[str] | None, values: dict, draw: Callable) -> None:
    sb.header("Kernel")
    allowed = list(kernels) if kernels is not None else list(KERNELS)
    draw(sb.selectbox, key="kernel", options=allowed, format_func=lambda k: KERNELS[k].label)
    if KERNELS[values["kernel"]].takes_family:  # drawn first: its value decides the widgets that follow
        draw(sb.radio, key="family", **_KERNEL_WIDGETS["family"][1])
    for key in kernel_widgets(values["kernel"], values["family"]):
        widget, kwargs = _KERNEL_WIDGETS[key]
        if key != "family":
            draw(getattr(sb, widget), key=key, **kwargs)


def _features_section(sb, maps: bool | Sequence[str], distributions: str | None, with_D: bool, values: dict,
                      drawn: dict, draw: Callable) -> None:
    """The map (of the chosen kernel's maps) and the weight distribution(s); D and the seed follow."""
    if maps:
        sb.header("Random features")
        supported = maps_for(KernelSpec(values["kernel"]))
        if not isinstance(maps, bool):
            supported = [k for k in supported if k in maps]
        if supported:
            draw(sb.selectbox, key="map", options=supported, format_func=lambda k: MAPS[k].label)
        else:
            sb.warning(f"No feature map here approximates the {KERNELS[values['kernel']].label} kernel.")
    elif with_D or distributions:
        sb.header("Random features")
    if not distributions:
        return
    if distributions == "multi":
        if len(stored("distributions")) < 2:
            # a comparison page compares: the sidebar shows every distribution the page draws, not the
            # one a single-choice page left behind (a link's own choice still wins, read in the widget)
            # (the i.i.d. ones: weights drawn orthogonal in blocks are added by choice, not by default)
            store("distributions", tuple(k for k, e in DISTRIBUTIONS.items() if e.iid))
        draw(sb.multiselect, "Weight distributions", key="distributions",
             format_func=lambda k: DISTRIBUTIONS[k].label)
    else:
        values["distributions"] = drawn["distributions"] = _single_distribution_widget(sb)
    if maps and not MAPS[values["map"]].takes_distribution:
        takers = " and ".join(e.short_label for e in MAPS.values() if e.takes_distribution)
        sb.caption(f"{MAPS[values['map']].label} draws its own randomness; the distribution applies to {takers}.")


def _single_distribution_widget(box=None) -> tuple[str, ...]:
    """A selectbox over the stored tuple of distributions: it shows the first. Merely visiting a
    single-choice page keeps the tuple (a multiselect page finds its choices again); choosing
    here replaces it by the one choice."""
    f = FIELDS["distributions"]
    errors: list[str] = []
    read_url(f, list(DISTRIBUTIONS), None, None, f.label, errors)
    for message in errors:
        show_error(message)
    kept = tuple(k for k in stored(f.name) if k in DISTRIBUTIONS)
    if is_unseen(box):  # presenter mode: the stored tuple, kept as it is
        chosen = kept or (DEFAULT_DISTRIBUTION,)
        store(f.name, chosen)
        write_url(f, chosen)
        return chosen
    st.session_state[f.name] = kept[0] if kept else DEFAULT_DISTRIBUTION
    choice = (box or st.sidebar).selectbox(f.label, options=list(DISTRIBUTIONS), key=f.name,
                                  format_func=lambda k: DISTRIBUTIONS[k].label, on_change=_on_change_single,
                                  help=f.help)
    chosen = kept if kept and kept[0] == choice else (choice,)
    store(f.name, chosen)
    write_url(f, chosen)
    return chosen


def _on_change_single() -> None:
    store("distributions", (st.session_state["distributions"],))
