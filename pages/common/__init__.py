"""Shared frame of the dashboard pages: sidebar state, data loading, and display helpers.

Streamlit discovers pages by globbing ``pages/*.py``; this package lives in a subfolder,
so it is not a page. Every page is thin and reads top to bottom::

    import streamlit as st
    from pages.common import page, sidebar, load_data, guarded, chart, formula, notice, reproduce

    page("Gram matrices", "Exact versus random-feature Gram matrices.")  # set_page_config, nav, title
    view = sidebar(maps=True, distributions="single")                    # -> ViewSpec (frozen, hashable)
    formula(KERNELS[view.kernel].latex)                                  # needs no data
    with guarded("the Gram matrices"):                                   # errors -> st.error, page goes on
        data = load_data(view)                                           # cached Dataset (normalized, n rows)
        spec = view.kernel_spec(data)                                    # rkcore.registry.KernelSpec
        df = my_cached_engine(view)                                      # @st.cache_data, keyed by the ViewSpec
        chart(my_figure(df), df, "my figure")                            # plotly + CSV download
    notice("..."); reproduce(view.code("Z = make_map(...)"))

API (exact signatures)
----------------------
``page(title: str, intro: str | None = None, *, icon: str = ":material/scatter_plot:") -> None``
    ``st.set_page_config(layout="wide")``, projector CSS, the sidebar navigation (Home + every
    pages/*.py, labels from the file names), the title and an intro paragraph (markdown).
    Call it first on every page.

``sidebar(*, data: bool = True, n: bool = True, n_max: int = 5000, kernel: bool = True,
kernels: Sequence[str] | None = None, maps: bool | Sequence[str] = False,
distributions: Literal["single", "multi"] | None = "single", D: bool = True, D_max: int = 65536,
seed: bool = True) -> ViewSpec``
    Draws the shared sidebar and returns the view. Hide a section with ``data=False`` etc.;
    ``kernels`` restricts the kernel list (keys of rkcore.registry.KERNELS, default all);
    ``maps=True`` shows the maps that support the chosen kernel (``maps=[keys]`` restricts
    them); ``distributions`` is "single" (selectbox), "multi" (multiselect) or None (hidden).
    Hidden widgets keep their stored value in the returned ViewSpec.

``ViewSpec`` (frozen dataclass; hashable, usable as a ``st.cache_data`` argument)
    fields: dataset, upload, target, movielens_path, normalization, n, kernel, degree,
    family_source ("custom" | "cross"), itemsets_text, fields_text, c, gamma, map,
    distributions (tuple of keys), D, seed.
    ``.distribution -> str`` (the first chosen distribution, "rademacher" if none);
    ``.map_distribution -> str | None`` (the distribution for make_map: None unless map == "rk");
    ``.kernel_spec(data: Dataset | None = None, d: int | None = None) -> KernelSpec`` (raises ValueError
    for malformed itemsets/fields, m > d, ...); ``.family(data) -> ItemsetFamily | None``;
    ``.with_(**changes) -> ViewSpec``; ``.describe() -> str``;
    ``.code(*extra_lines: str) -> str`` (imports + data + kernel spec lines, then yours);
    ``.query_params() -> dict[str, str]`` (the non-default settings, as in the URL).

``load_data(view: ViewSpec) -> rkcore.datasets.Dataset``
    Cached (st.cache_data). Loads the dataset, keeps at most ``view.n`` rows (seeded
    subsample, :func:`rkcore.views.subsample_rows`) and normalizes the rows.

``persistent_widget(draw, label, *, key, default, options=None, min_value=None, max_value=None,
**kwargs)``
    A page-specific widget that keeps its value across pages and lives in the URL under
    ``key``: ``draw`` is e.g. ``st.slider`` or ``st.sidebar.selectbox``; the URL codec follows
    the type of ``default`` (int, float, str, bool, or a tuple of str for multiselects);
    values from the URL or session outside ``options`` / [min_value, max_value] are refused
    with an st.error. Do not pass ``value``/``index`` (the default comes from ``default``).
    Returns the widget value (a tuple for multiselects).

``guarded(what: str = "this view")``
    Context manager and decorator: ValueError -> ``st.error(message)``; MemoryError -> an
    st.error asking for smaller sizes; any other Exception -> logged with its traceback and
    shown as a short st.error. st.stop / st.rerun / st.switch_page pass through. After the
    block ``g.failed`` tells whether it failed (``with guarded() as g: ...``).

``chart(fig, data: pandas.DataFrame, name: str, *, caption: str | None = None, key: str | None = None) -> None``
    ``st.plotly_chart(fig, theme=None)`` + a "Download data (CSV)" button of ``data``
    (the CSV is produced only when clicked). ``name`` makes keys and the file name unique.
``table(data: pandas.DataFrame, name: str, *, caption: str | None = None, **dataframe_kwargs) -> None``
    ``st.dataframe`` + CSV download.
``formula(latex: str, caption: str | None = None) -> None``     ``st.latex`` (+ caption).
``notice(text: str) -> None``                                  "What to notice" box.
``reproduce(code: str) -> None``                               "Reproduce in Python" expander.
``escape_markdown(text: str) -> str``                          show text literally (x_j, * ...) in markdown/captions.

``page_files() -> list[Path]``, ``page_label(path) -> str`` ("3_Error_bounds.py" -> "Error bounds"),
``find_page(*fragments: str) -> str | None`` ("pages/x.py" of the first page whose name contains a fragment).

``require_memory(parts: dict[str, tuple[int, ...]], *, budget: int | None = None, hint: str = "") -> None``
    Raises ValueError (shown by ``guarded``) when float64 arrays of these shapes would need
    more than ``budget`` bytes (default :data:`MEMORY_BUDGET`), naming each array and ``hint``.
``estimate_cost(parts: dict[str, tuple[int, ...]]) -> rkcore.views.CostEstimate``
``max_size_within(bytes_for: Callable[[int], int], *, budget: int | None = None, upper: int = 10**7) -> int``
    The largest size s (e.g. n) with ``bytes_for(s) <= budget``, for "reduce n to ..." hints.
``MEMORY_BUDGET: int``   bytes a single view may allocate.

``preset_button(label: str, page: str, values: dict, *, help: str | None = None, key: str | None = None) -> None``
    A button that resets the shared settings to their defaults, applies ``values``
    (field keys as in the URL, e.g. ``{"kernel": "anova", "m": 2, "D": 256}``) and switches
    to ``page`` (a path like "pages/1_Gram_matrices.py"). ``apply_preset(values)`` does the
    state part only.

Widget keys, URL keys and ViewSpec fields (the state table)
-----------------------------------------------------------
=========  ===========================  =======================================
URL key    ViewSpec field                widget (session_state key of the widget)
=========  ===========================  =======================================
ds         dataset                       selectbox "ds" (BUILTIN keys, "upload", "movielens")
target     target                        selectbox "target" (CSV uploads)
mlpath     movielens_path                text_input "mlpath"
norm       normalization                 radio "norm" (l1, l2, none)
n          n                             number_input "n"
kernel     kernel                        selectbox "kernel" (rkcore.registry.KERNELS keys)
m          degree                        number_input "m"
fam        family_source                 radio "fam" (custom, cross) when kernel == "itemset"
itemsets   itemsets_text                 text_input "itemsets"  e.g. "0,1; 2,3; 1,2,4"
fields     fields_text                   text_input "fields"    e.g. "0-4 | 5-9" ("" = dataset's own)
c          c                             number_input "c" (polynomial)
gamma      gamma                         number_input "gamma" (rbf)
map        map                           selectbox "map" (rkcore.registry.MAPS keys)
dist       distributions                 selectbox "dist" (single) / multiselect "dists" (multi)
D          D                             number_input "D"
seed       seed                          number_input "seed"
=========  ===========================  =======================================

Page-specific widgets (``persistent_widget``) use their own keys; pick keys that do not clash
with the table above (e.g. "trials", "Ds"), one meaning per key across all pages.

Uploaded files live in ``st.session_state[UPLOAD_STATE_KEY] = (file name, bytes)``; tests
may put a file there directly (AppTest cannot drive a file uploader).

Tests: ``tests/conftest.py`` has ``run_page(path, session=None, **query)`` (AppTest with cleared
caches and URL query parameters) and ``plotly_figures(at)`` / ``error_texts(at)``;
``tests/test_app_pages.py`` runs every ``pages/*.py`` with default settings automatically.

Why not Streamlit's own ``bind="query-params"`` / ``persist_state="session"`` (1.67)? A
bound selectbox stores its *label* in the URL (not the registry key), a page with bound
widgets cannot call ``st.switch_page`` ("Cannot clear query parameters - bound to
widgets"), and ``persist_state`` did not carry values across pages under AppTest. The
small shadow-state scheme below (the widget's value is copied to a session key in its
on_change callback and restored before the widget is drawn) works in both.
"""
from __future__ import annotations

import dataclasses
import hashlib
import io
import logging
import os
import re
from contextlib import ContextDecorator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

import pandas as pd
import streamlit as st

from streamlit.errors import StreamlitAPIException

from rkcore import datasets as rkdata
from rkcore.distributions import DISTRIBUTIONS
from rkcore.itemsets import ItemsetFamily
from rkcore.registry import KERNELS, MAPS, KernelSpec, maps_for
from rkcore.views import (
    CostEstimate,
    format_bytes,
    nbytes,
    parse_fields,
    parse_itemsets,
    subsample_rows,
)

__all__ = [
    "MEMORY_BUDGET", "RUN_REQUEST_KEY", "UPLOAD_STATE_KEY", "ViewSpec", "apply_preset", "chart", "escape_markdown",
    "estimate_cost", "find_page", "formula", "guarded", "load_data", "max_size_within", "notice", "page", "page_files",
    "page_label", "persistent_widget", "preset_button", "reproduce", "require_memory", "run_requested", "sidebar",
    "table",
]

logger = logging.getLogger("rkcore.app")

UPLOAD_STATE_KEY = "_rk_upload"
_SHADOW = "_rk_v_"        # session key prefix of the persisted values
_URL_SEEN = "_rk_url_seen"  # URL keys already read in this session
UPLOAD = "upload"
MOVIELENS = "movielens"
NO_TARGET = "(none)"
DATASET_KEYS = (*rkdata.BUILTIN, UPLOAD, MOVIELENS)
FAMILY_SOURCES = {"custom": "Custom list of itemsets", "cross": "Cross-field"}
NORM_LABELS = {"l1": "L1 (paper)", "l2": "L2", "none": "none"}


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 * 2**30


#: Bytes one view may allocate: a quarter of the machine's memory, at most 2 GB
#: (the server is shared by every open session).
MEMORY_BUDGET = int(min(2 * 2**30, _physical_memory() // 4))


# ============================================================================ the view spec
@dataclass(frozen=True)
class ViewSpec:
    """Everything a view depends on; built by :func:`sidebar`, passed to engines and caches."""

    dataset: str = "interactions"
    upload: tuple[str, str] | None = None  # (file name, sha1 of its bytes)
    target: str | None = None
    movielens_path: str = ""
    normalization: str = "l1"
    n: int = 200
    kernel: str = "anova"
    degree: int = 2
    family_source: str = "custom"
    itemsets_text: str = "0,1; 2,3; 1,2,4"
    fields_text: str = ""
    c: float = 1.0
    gamma: float = 1.0
    map: str = "rk"
    distributions: tuple[str, ...] = ("rademacher",)
    D: int = 256
    seed: int = 0

    @property
    def distribution(self) -> str:
        return self.distributions[0] if self.distributions else "rademacher"

    @property
    def map_distribution(self) -> str | None:
        """The distribution to pass to make_map: only RK takes one, the others draw their own."""
        return self.distribution if self.map == "rk" else None

    def with_(self, **changes) -> "ViewSpec":
        return dataclasses.replace(self, **changes)

    # ---------------------------------------------------------------- kernel
    def fields_for(self, data=None, d: int | None = None) -> tuple[tuple[int, ...], ...]:
        """The fields of a cross-field family: typed ones, else the dataset's, else two halves."""
        if self.fields_text.strip():
            return parse_fields(self.fields_text)
        if data is not None and getattr(data, "fields", None):
            return tuple(tuple(f) for f in data.fields)
        d = d if d is not None else data.X.shape[1]
        if d < 2:
            raise ValueError(f"A cross-field family needs at least 2 features; the data has d={d}.")
        half = d // 2
        return (tuple(range(half)), tuple(range(half, d)))

    def kernel_spec(self, data=None, d: int | None = None) -> KernelSpec:
        """The KernelSpec of this view over the data's d features (raises ValueError if invalid)."""
        if d is None:
            if data is None:
                raise ValueError("kernel_spec needs the data or d (the number of features).")
            d = data.X.shape[1]
        if self.kernel == "itemset":
            if self.family_source == "cross":
                family = ItemsetFamily.cross_fields(self.fields_for(data, d), self.degree, d)
            else:
                family = ItemsetFamily.custom(d, parse_itemsets(self.itemsets_text))
            return KernelSpec("itemset", degree=self.degree, itemsets=family)
        spec = KernelSpec(self.kernel, degree=int(self.degree), c=float(self.c), gamma=float(self.gamma))
        spec.family(d)  # itemset kernels: validates 1 <= m <= d now, with a message naming both
        return spec

    def family(self, data=None, d: int | None = None) -> ItemsetFamily | None:
        d = d if d is not None else data.X.shape[1]
        return self.kernel_spec(data, d).family(d)

    # ---------------------------------------------------------------- text
    def describe(self) -> str:
        parts = [_dataset_label(self.dataset), f"n={self.n}", f"{self.normalization}-normalized",
                 KernelSpec(self.kernel, degree=self.degree).label() if self.kernel != "itemset"
                 else f"itemset kernel ({FAMILY_SOURCES[self.family_source].lower()})",
                 f"D={self.D}", f"seed={self.seed}"]
        return ", ".join(parts)

    def query_params(self) -> dict[str, str]:
        """The settings that differ from the defaults, as URL query parameters."""
        out = {}
        for f in _FIELDS.values():
            if f.attr is None:
                continue
            value = getattr(self, f.attr)
            if f.attr == "target":
                value = value or NO_TARGET
            if value != f.default:
                out[f.key] = f.dump(value)
        return out

    def code(self, *extra_lines: str) -> str:
        """Python lines reproducing this view's data and kernel with rkcore, then ``extra_lines``."""
        lines = ["import numpy as np", "from rkcore import datasets",
                 "from rkcore.registry import KernelSpec, make_map", "from rkcore.views import subsample_rows"]
        if self.kernel == "itemset":
            lines.append("from rkcore.itemsets import ItemsetFamily")
        lines.append("")
        if self.dataset in rkdata.BUILTIN:
            lines.append(f"data = datasets.load_builtin({self.dataset!r}, n_samples={self.n}, random_state=0)")
        elif self.dataset == UPLOAD:
            name = self.upload[0] if self.upload else "your_file.csv"
            if _is_csv(name):
                lines.append(f"data = datasets.load_csv({name!r}, target={self.target!r})")
            else:
                lines.append(f"data = datasets.load_libsvm({name!r})")
        else:
            lines.append(f"data = datasets.load_movielens({self.movielens_path or 'path/to/ml-100k'!r}, "
                         f"n_samples={self.n}, random_state=0)")
        lines += [f"X, y = subsample_rows(data.X, data.y, n={self.n}, random_state=0)",
                  f"X = datasets.normalize(X, {self.normalization!r})",
                  "d = X.shape[1]"]
        if self.kernel == "itemset":
            if self.family_source == "cross":
                fields_code = "data.fields or (tuple(range(d // 2)), tuple(range(d // 2, d)))"
                if self.fields_text.strip():
                    try:
                        fields_code = repr(parse_fields(self.fields_text))
                    except ValueError:  # the page shows the error; the code keeps a valid example
                        fields_code = "((0, 1, 2, 3, 4), (5, 6, 7, 8, 9))  # your fields"
                lines.append(f"family = ItemsetFamily.cross_fields({fields_code}, {self.degree}, d)")
            else:
                try:
                    sets = repr(list(parse_itemsets(self.itemsets_text)))
                except ValueError:
                    sets = "[(0, 1), (2, 3)]  # your itemsets"
                lines.append(f"family = ItemsetFamily.custom(d, {sets})")
            lines.append("spec = KernelSpec('itemset', itemsets=family)")
        else:
            args = [repr(self.kernel)]
            if KERNELS[self.kernel].uses_degree:
                args.append(f"degree={self.degree}")
            if self.kernel == "polynomial":
                args.append(f"c={self.c}")
            if self.kernel == "rbf":
                args.append(f"gamma={self.gamma}")
            lines.append(f"spec = KernelSpec({', '.join(args)})")
        return "\n".join(lines + list(extra_lines))


def _dataset_label(key: str) -> str:
    if key in rkdata.BUILTIN:
        return rkdata.BUILTIN[key].label
    return {UPLOAD: "Upload a file (CSV / LIBSVM)", MOVIELENS: "MovieLens 100K (local folder)"}.get(key, key)


def _is_csv(name: str) -> bool:
    return str(name).lower().endswith((".csv", ".tsv"))


# ============================================================================ persisted, URL-bound widgets
@dataclass(frozen=True)
class _Field:
    key: str                 # URL key and shadow name
    default: Any
    parse: Callable[[str], Any]
    dump: Callable[[Any], str]
    attr: str | None = None  # ViewSpec field, None for page-specific widgets


def _codec(default) -> tuple[Callable[[str], Any], Callable[[Any], str]]:
    if isinstance(default, bool):
        return (lambda s: {"true": True, "1": True, "false": False, "0": False}[s.strip().lower()],
                lambda v: "true" if v else "false")
    if isinstance(default, int):
        return (lambda s: int(s.strip()), str)
    if isinstance(default, float):
        return (lambda s: float(s.strip()), lambda v: repr(float(v)))
    if isinstance(default, tuple):
        return (lambda s: tuple(t for t in (p.strip() for p in s.split(",")) if t), ",".join)
    return (str, str)


def _field(key: str, default, attr: str | None = None) -> _Field:
    parse, dump = _codec(default)
    return _Field(key, default, parse, dump, attr)


_DEFAULT_VIEW = ViewSpec()
_FIELDS: dict[str, _Field] = {
    f.key: f
    for f in (
        _field("ds", _DEFAULT_VIEW.dataset, "dataset"),
        _field("target", NO_TARGET, "target"),
        _field("mlpath", "", "movielens_path"),
        _field("norm", _DEFAULT_VIEW.normalization, "normalization"),
        _field("n", _DEFAULT_VIEW.n, "n"),
        _field("kernel", _DEFAULT_VIEW.kernel, "kernel"),
        _field("m", _DEFAULT_VIEW.degree, "degree"),
        _field("fam", _DEFAULT_VIEW.family_source, "family_source"),
        _field("itemsets", _DEFAULT_VIEW.itemsets_text, "itemsets_text"),
        _field("fields", _DEFAULT_VIEW.fields_text, "fields_text"),
        _field("c", _DEFAULT_VIEW.c, "c"),
        _field("gamma", _DEFAULT_VIEW.gamma, "gamma"),
        _field("map", _DEFAULT_VIEW.map, "map"),
        _field("dist", _DEFAULT_VIEW.distributions, "distributions"),
        _field("D", _DEFAULT_VIEW.D, "D"),
        _field("seed", _DEFAULT_VIEW.seed, "seed"),
    )
}


def _register(key: str, default) -> _Field:
    f = _FIELDS.get(key)
    if f is None or (f.attr is None and f.default != default):
        f = _field(key, default)
        _FIELDS[key] = f
    return f


def _stored(key: str):
    """The persisted value of a field (its default when never set)."""
    f = _FIELDS[key]
    return st.session_state.get(_SHADOW + key, f.default)


def _store(key: str, value) -> None:
    st.session_state[_SHADOW + key] = value


def _check(value, options, min_value, max_value, label: str) -> str | None:
    """Why a value is not allowed (None if it is)."""
    if options is not None:
        opts = list(options)
        values = value if isinstance(value, tuple) else (value,)
        bad = [v for v in values if v not in opts]
        if bad:
            return (f"{label}: {', '.join(map(repr, bad))} is not an allowed choice; "
                    f"allowed: {', '.join(map(str, opts))}.")
    if min_value is not None and value < min_value or max_value is not None and value > max_value:
        return f"{label} = {value!r} is out of range: allowed values are {min_value} to {max_value}."
    return None


def _read_url(f: _Field, options, min_value, max_value, label: str, errors: list[str]) -> None:
    """On the first draw of a field in a session, take its value from the URL (if there)."""
    ss = st.session_state
    seen = ss.setdefault(_URL_SEEN, set())
    if f.key in seen:
        return
    seen.add(f.key)
    if f.key not in st.query_params:
        return
    text = st.query_params[f.key]
    try:
        value = f.parse(text)
    except (ValueError, KeyError, TypeError):
        errors.append(f"{label}: could not read {text!r} from the link; using {f.dump(f.default)}.")
        return
    problem = _check(value, options, min_value, max_value, label)
    if problem:
        errors.append(f"{problem} (from the link; using {f.dump(f.default)})")
        return
    _store(f.key, value)


def _write_url(f: _Field, value) -> None:
    try:
        if value == f.default:
            if f.key in st.query_params:
                del st.query_params[f.key]
        elif st.query_params.get(f.key) != f.dump(value):
            st.query_params[f.key] = f.dump(value)
    except Exception:  # noqa: BLE001 - the URL is a convenience; never break a page over it
        logger.debug("could not write query parameter %s", f.key, exc_info=True)


def _on_change(key: str, widget_key: str, multi: bool) -> None:
    value = st.session_state[widget_key]
    _store(key, tuple(value) if multi else value)


def persistent_widget(draw: Callable, label: str, *, key: str, default, options: Sequence | None = None,
                      min_value=None, max_value=None, widget_key: str | None = None, **kwargs):
    """Draw ``draw(label, key=..., ...)`` whose value persists across pages and lives in the URL.

    See the module docstring. ``widget_key`` (default ``key``) is the widget's own
    session key, for two widgets sharing one stored value (e.g. "dist" and "dists").
    """
    f = _register(key, default)
    ss = st.session_state
    wk = widget_key or key
    multi = isinstance(default, tuple)
    errors: list[str] = []
    _read_url(f, options, min_value, max_value, label, errors)
    value = _stored(key)
    if options is not None:
        opts = list(options)
        if multi:
            value = tuple(v for v in value if v in opts)
        elif value not in opts:
            # a value from a page with other choices: fall back quietly to the default
            value = default if default in opts else opts[0]
    else:
        problem = _check(value, None, min_value, max_value, label)
        if problem:
            errors.append(f"{problem} Using {f.dump(default)}.")
            value = default
    _store(key, value)
    ss[wk] = list(value) if multi else value
    extra = {}
    if options is not None:
        extra["options"] = options
    if min_value is not None:
        extra["min_value"] = min_value
    if max_value is not None:
        extra["max_value"] = max_value
    result = draw(label, key=wk, on_change=_on_change, args=(key, wk, multi), **extra, **kwargs)
    if multi:
        result = tuple(result)
    _store(key, result)
    for message in errors:
        st.error(message)  # shown where the widget is drawn is not possible after it; main area is clearer
    _write_url(f, result)
    return result


def apply_preset(values: dict, *, reset: bool = True) -> None:
    """Set the shared settings (URL keys -> values), after resetting all to defaults if ``reset``."""
    ss = st.session_state
    if reset:
        for key, f in _FIELDS.items():
            if f.attr is not None:
                ss.pop(_SHADOW + key, None)
    for key, value in values.items():
        if key not in _FIELDS:
            raise ValueError(f"Unknown setting {key!r}; known: {', '.join(_FIELDS)}.")
        _store(key, tuple(value) if isinstance(_FIELDS[key].default, tuple) else value)


#: session key: the page file name whose study a preset asked to start on arrival
RUN_REQUEST_KEY = "_rk_run_on_arrival"


def _apply_preset_and_request(values: dict, page: str, run: bool) -> None:
    apply_preset(values)
    if run:
        st.session_state[RUN_REQUEST_KEY] = Path(page).name


def preset_button(label: str, page: str, values: dict, *, help: str | None = None, key: str | None = None,
                  run: bool = False) -> None:
    """One click: apply ``values`` (see :func:`apply_preset`) and switch to ``page``; with ``run`` the page
    also starts its study (the click is the user's go, as its own run button would be)."""
    key = key or "preset_" + re.sub(r"\W+", "_", label).strip("_").lower()
    if st.button(label, key=key, help=help, on_click=_apply_preset_and_request, args=(values, page, run),
                 width="stretch"):
        st.switch_page(page)


def run_requested(page_file: str) -> bool:
    """True once, on the page a preset with ``run=True`` opened (``page_file``: that page's ``__file__``)."""
    if st.session_state.get(RUN_REQUEST_KEY) == Path(page_file).name:
        del st.session_state[RUN_REQUEST_KEY]
        return True
    return False


# ============================================================================ the sidebar
def _upload_section() -> tuple[tuple[str, str] | None, str | None]:
    """File uploader + target column; returns (upload ref, target)."""
    ss = st.session_state
    file = st.sidebar.file_uploader("CSV (header row) or LIBSVM file", type=["csv", "txt", "svm", "libsvm", "svmlight"],
                                    key="upload_file", help="CSV: numeric feature columns plus an optional target "
                                    "column. LIBSVM: 'label index:value ...' lines.")
    if file is not None:
        ss[UPLOAD_STATE_KEY] = (file.name, file.getvalue())
    stored = ss.get(UPLOAD_STATE_KEY)
    if not stored:
        st.sidebar.info("Upload a file to use it; until then the page explains what is missing.")
        return None, None
    name, content = stored
    ref = (name, hashlib.sha1(content).hexdigest())
    st.sidebar.caption(f"Using **{name}** ({format_bytes(len(content))}).")
    if not _is_csv(name):
        return ref, None
    try:  # same encoding / delimiter detection and size limits as load_csv (UTF-16, ';', tabs, ...)
        columns = rkdata.csv_columns(io.BytesIO(content))
    except ValueError as exc:  # load_data shows the same message in place of the page
        st.sidebar.caption(escape_markdown(f"No target column to choose: {exc}"))
        return ref, None
    options = [NO_TARGET, *columns]
    guess = next((c for c in columns if c.strip().lower() in ("target", "label", "class", "y")), NO_TARGET)
    errors: list[str] = []
    f = _register("target", NO_TARGET)
    _read_url(f, None, None, None, "Target column", errors)
    wanted = _stored("target")
    if wanted != NO_TARGET and wanted not in columns:
        st.error(f"Target column {wanted!r} is not in {name}; its columns are: {', '.join(map(repr, columns))}. "
                 "Using no target.")
        _store("target", NO_TARGET)
    elif wanted == NO_TARGET and (_SHADOW + "target") not in ss:
        _store("target", guess)
    target = persistent_widget(st.sidebar.selectbox, "Target column (labels)", key="target", default=NO_TARGET,
                               options=options, help="The column holding the labels; the others are the features.")
    return ref, (None if target == NO_TARGET else target)


def sidebar(*, data: bool = True, n: bool = True, n_max: int = 5000, kernel: bool = True,
            kernels: Sequence[str] | None = None, maps: bool | Sequence[str] = False,
            distributions: Literal["single", "multi"] | None = "single", D: bool = True, D_max: int = 65536,
            seed: bool = True) -> ViewSpec:
    """Draw the shared sidebar and return the view (see the module docstring)."""
    sb = st.sidebar
    values: dict[str, Any] = {}
    for key, f in _FIELDS.items():
        if f.attr is not None:
            values[f.attr] = _stored(key)
    values["upload"] = None

    if data:
        sb.header("Data")
        values["dataset"] = persistent_widget(
            sb.selectbox, "Dataset", key="ds", default=_DEFAULT_VIEW.dataset, options=DATASET_KEYS,
            format_func=_dataset_label, help="Built-in sets need no files. Uploads and MovieLens are read locally.")
        if values["dataset"] in rkdata.BUILTIN:
            sb.caption(escape_markdown(rkdata.BUILTIN[values["dataset"]].description))
        elif values["dataset"] == UPLOAD:
            values["upload"], values["target"] = _upload_section()
        else:
            values["movielens_path"] = persistent_widget(
                sb.text_input, "MovieLens 100K folder", key="mlpath", default="",
                placeholder="/path/to/ml-100k", help="The folder holding u.data, u.user and u.item.")
        values["normalization"] = persistent_widget(
            sb.radio, "Row normalization", key="norm", default="l1", options=rkdata.NORMALIZATIONS,
            format_func=NORM_LABELS.get, horizontal=True, help="The paper L1-normalizes so that R = max ||x||_1 = 1.")
    if n:
        values["n"] = persistent_widget(sb.number_input, "n (points)", key="n", default=_DEFAULT_VIEW.n,
                                        min_value=2, max_value=int(n_max), step=50,
                                        help="Number of data points shown (a seeded subsample).")
    if kernel:
        sb.header("Kernel")
        allowed = list(kernels) if kernels is not None else list(KERNELS)
        values["kernel"] = persistent_widget(sb.selectbox, "Kernel family", key="kernel", default=allowed[0]
                                             if _DEFAULT_VIEW.kernel not in allowed else _DEFAULT_VIEW.kernel,
                                             options=allowed, format_func=lambda k: KERNELS[k].label)
        if values["kernel"] == "itemset":
            values["family_source"] = persistent_widget(
                sb.radio, "Itemset family", key="fam", default="custom", options=list(FAMILY_SOURCES),
                format_func=FAMILY_SOURCES.get)
            if values["family_source"] == "custom":
                values["itemsets_text"] = persistent_widget(
                    sb.text_input, "Itemsets", key="itemsets", default=_DEFAULT_VIEW.itemsets_text,
                    help='Feature indices (from 0) separated by commas, itemsets by ";", e.g. "0,1; 2,3; 1,2,4". '
                         '"{}" is the empty itemset.')
            else:
                values["fields_text"] = persistent_widget(
                    sb.text_input, "Fields", key="fields", default="", placeholder="the dataset's own fields",
                    help='Groups of feature indices separated by "|", ranges allowed: "0-4 | 5-9". Empty: the '
                         "dataset's own fields (e.g. MovieLens user | item), else the two halves of the features.")
        if KERNELS[values["kernel"]].uses_degree or (values["kernel"] == "itemset" and values["family_source"] == "cross"):
            values["degree"] = persistent_widget(sb.number_input, "Degree m", key="m", default=_DEFAULT_VIEW.degree,
                                                 min_value=1, max_value=20, step=1,
                                                 help="Itemset size / polynomial degree; at most d for itemset kernels.")
        if values["kernel"] == "polynomial":
            values["c"] = persistent_widget(sb.number_input, "Offset c", key="c", default=1.0, min_value=0.0,
                                            max_value=1e6, step=0.5)
        if values["kernel"] == "rbf":
            values["gamma"] = persistent_widget(sb.number_input, "Width γ", key="gamma", default=1.0,
                                                min_value=1e-6, max_value=1e6, step=0.5, format="%.4g")
    if maps:
        sb.header("Random features")
        supported = maps_for(KernelSpec(values["kernel"]))
        if not isinstance(maps, bool):
            supported = [k for k in supported if k in maps]
        if supported:
            values["map"] = persistent_widget(sb.selectbox, "Feature map", key="map", default="rk",
                                              options=supported, format_func=lambda k: MAPS[k].label)
        else:
            sb.warning(f"No feature map here approximates the {KERNELS[values['kernel']].label} kernel.")
    elif D or distributions:
        sb.header("Random features")
    if distributions:
        dist_label = "Weight distribution"
        if distributions == "multi":
            values["distributions"] = persistent_widget(
                sb.multiselect, "Weight distributions", key="dist", widget_key="dists",
                default=_DEFAULT_VIEW.distributions, options=list(DISTRIBUTIONS),
                format_func=lambda k: DISTRIBUTIONS[k].label, help="Zero mean, unit variance (Proposition 2).")
        else:
            values["distributions"] = _single_distribution_widget(dist_label)
        if values["map"] != "rk" and maps:
            sb.caption(f"{MAPS[values['map']].label} draws its own randomness; the distribution applies to RK.")
    if D:
        values["D"] = persistent_widget(sb.number_input, "D (random features)", key="D", default=_DEFAULT_VIEW.D,
                                        min_value=1, max_value=int(D_max), step=64)
    if seed:
        values["seed"] = persistent_widget(sb.number_input, "Seed", key="seed", default=0, min_value=0,
                                           max_value=2**31 - 1, step=1)
    sb.caption(":material/link: The page URL holds these settings: copy it to share this exact view.")

    values["target"] = None if values.get("target") in (None, NO_TARGET) else values["target"]
    if values["dataset"] != UPLOAD:
        values["target"] = None
    return ViewSpec(**{k: v for k, v in values.items() if k in _VIEW_FIELDS})


def _single_distribution_widget(label: str) -> tuple[str, ...]:
    """A selectbox over the stored tuple of distributions: it shows the first. Merely visiting a
    single-choice page keeps the tuple (a multiselect page finds its choices again); choosing
    here replaces it by the one choice."""
    f = _FIELDS["dist"]
    errors: list[str] = []
    _read_url(f, list(DISTRIBUTIONS), None, None, label, errors)
    for message in errors:
        st.error(message)
    stored = tuple(k for k in _stored("dist") if k in DISTRIBUTIONS)
    st.session_state["dist"] = stored[0] if stored else "rademacher"
    choice = st.sidebar.selectbox(label, options=list(DISTRIBUTIONS), key="dist",
                                  format_func=lambda k: DISTRIBUTIONS[k].label, on_change=_on_change_single_dist,
                                  help="Entries of the random vectors ω: zero mean, unit variance (Proposition 2).")
    chosen = stored if stored and stored[0] == choice else (choice,)
    _store("dist", chosen)
    _write_url(f, chosen)
    return chosen


def _on_change_single_dist() -> None:
    _store("dist", (st.session_state["dist"],))


_VIEW_FIELDS = {f.name for f in dataclasses.fields(ViewSpec)}


# ============================================================================ data
@st.cache_data(show_spinner="Loading data…", max_entries=32)
def _load_data_cached(dataset: str, normalization: str, n: int, target: str | None, movielens_path: str,
                      upload_name: str | None, upload_bytes: bytes | None):
    if dataset in rkdata.BUILTIN:
        data = rkdata.load_builtin(dataset, n_samples=n, random_state=0)
    elif dataset == UPLOAD:
        if upload_bytes is None:
            raise ValueError("No file uploaded yet: upload a CSV or LIBSVM file in the sidebar, "
                             "or choose a built-in dataset.")
        buffer = io.BytesIO(upload_bytes)
        buffer.name = upload_name
        data = rkdata.load_csv(buffer, target=target) if _is_csv(upload_name) else rkdata.load_libsvm(buffer)
    elif dataset == MOVIELENS:
        if not movielens_path.strip():
            raise ValueError("Enter the MovieLens 100K folder (holding u.data, u.user, u.item) in the sidebar, "
                             "or choose a built-in dataset.")
        data = rkdata.load_movielens(movielens_path.strip(), n_samples=n, random_state=0)
    else:
        raise ValueError(f"Unknown dataset {dataset!r}; allowed: {', '.join(DATASET_KEYS)}.")
    X, y = subsample_rows(data.X, data.y, n, random_state=0)
    return dataclasses.replace(data, X=rkdata.normalize(X, normalization), y=y)


def load_data(view: ViewSpec):
    """The view's Dataset: loaded (cached), at most ``view.n`` rows, rows normalized."""
    upload_name = upload_bytes = None
    if view.dataset == UPLOAD:
        stored = st.session_state.get(UPLOAD_STATE_KEY)
        if stored:
            upload_name, upload_bytes = stored
    return _load_data_cached(view.dataset, view.normalization, int(view.n), view.target, view.movielens_path,
                             upload_name, upload_bytes)


# ============================================================================ memory guard
def estimate_cost(parts: dict[str, tuple[int, ...]]) -> CostEstimate:
    """Bytes of float64 arrays named by ``parts`` (name -> shape)."""
    sizes = tuple((name, nbytes(shape)) for name, shape in parts.items())
    return CostEstimate(sum(b for _, b in sizes), sizes)


def require_memory(parts: dict[str, tuple[int, ...]], *, budget: int | None = None, hint: str = "") -> None:
    """Refuse (ValueError) a computation whose arrays would need more than ``budget`` bytes."""
    budget = MEMORY_BUDGET if budget is None else budget
    cost = estimate_cost(parts)
    if cost.bytes > budget:
        raise ValueError(f"This view would need about {format_bytes(cost.bytes)} of memory ({cost.describe()}), "
                         f"more than the {format_bytes(budget)} allowed per view. {hint}".strip())


def max_size_within(bytes_for: Callable[[int], int], *, budget: int | None = None, upper: int = 10**7) -> int:
    """The largest s in [0, upper] with bytes_for(s) <= budget (bytes_for must be increasing)."""
    budget = MEMORY_BUDGET if budget is None else budget
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if bytes_for(mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


# ============================================================================ display helpers
_CSS = """
<style>
  /* projector: larger widget labels, captions and tables */
  section[data-testid="stSidebar"] label p { font-size: 1.0rem; font-weight: 600; }
  div[data-testid="stCaptionContainer"] { font-size: 0.95rem; }
  div[data-testid="stMetricValue"] { font-size: 2.0rem; }
  .katex { font-size: 1.25em; }
</style>
"""


REPO_ROOT = Path(__file__).resolve().parents[2]


def page_files() -> list[Path]:
    """The page files Streamlit discovers (pages/*.py), sorted as in its navigation."""
    return sorted((REPO_ROOT / "pages").glob("*.py"), key=_page_order)


def _page_order(path: Path) -> tuple[float, str]:
    """Streamlit's order: by the number prefix ("10_x" after "9_y"), then by name."""
    prefix = re.match(r"^(\d+)", path.stem)
    return (int(prefix.group(1)) if prefix else float("inf"), path.stem)


def page_label(path: str | Path) -> str:
    """"3_Error_bounds.py" -> "Error bounds" (Streamlit's own naming of a page file)."""
    stem = Path(path).stem
    stem = stem.split("_", 1)[1] if stem[:1].isdigit() and "_" in stem else stem
    return stem.replace("_", " ")


def find_page(*fragments: str) -> str | None:
    """The first page whose file name contains one of the fragments (case-insensitive), as "pages/x.py"."""
    for fragment in fragments:
        for path in page_files():
            if fragment.lower() in path.stem.lower():
                return f"pages/{path.name}"
    return None


def _navigation() -> None:
    """Our own sidebar navigation ("Home" instead of the entry file's name "app"); the built-in one is
    switched off in .streamlit/config.toml (client.showSidebarNavigation = false)."""
    with st.sidebar:
        try:
            st.page_link("app.py", label="Home", icon=":material/home:")
            for path in page_files():
                st.page_link(f"pages/{path.name}", label=page_label(path))
        except StreamlitAPIException:
            # AppTest may run a page file as the main script, where the other pages do not resolve
            return
        st.divider()


def page(title: str, intro: str | None = None, *, icon: str = ":material/scatter_plot:") -> None:
    """Set up a page: wide layout, projector-friendly CSS, navigation, title and intro."""
    st.set_page_config(page_title=f"{title} · Random Kernel Explorer", page_icon=icon, layout="wide")
    st.html(_CSS)
    _navigation()
    st.title(title)
    if intro:
        st.markdown(intro)


def escape_markdown(text: str) -> str:
    """Text shown literally by st.markdown / st.caption (no italics from x_j or *)."""
    return re.sub(r"([\\`*_{}\[\]<>#+!|~$])", r"\\\1", str(text))


class guarded(ContextDecorator):
    """Show errors in place (st.error) instead of a traceback; the page goes on after the block."""

    def __init__(self, what: str = "this view"):
        self.what = what
        self.failed = False

    def __enter__(self):
        self.failed = False
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None or not issubclass(exc_type, Exception):
            return False  # st.stop / st.rerun / st.switch_page are BaseExceptions: let them through
        self.failed = True
        if issubclass(exc_type, MemoryError):
            st.error(f"Out of memory while computing {self.what}: reduce n or D.")
        elif issubclass(exc_type, ValueError):
            st.error(str(exc) or f"Invalid input for {self.what}.")
        else:
            logger.error("Error while computing %s", self.what, exc_info=(exc_type, exc, tb))
            st.error(f"Something went wrong while computing {self.what} ({exc_type.__name__}: {exc}). "
                     "The details are in the server log.")
        return True


def _slug(name: str) -> str:
    # case kept: "error vs d" and "error vs D" are different charts and need different keys
    return re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_") or "data"


def chart(fig, data: pd.DataFrame, name: str, *, caption: str | None = None, key: str | None = None) -> None:
    """The figure, an optional caption, and a CSV download of the data behind it."""
    slug = key or _slug(name)
    st.plotly_chart(fig, theme=None, key=f"chart_{slug}",
                    config={"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}})
    if caption:
        st.caption(caption)
    _download(data, name, slug)


def table(data: pd.DataFrame, name: str, *, caption: str | None = None, **dataframe_kwargs) -> None:
    """A table, an optional caption, and its CSV download."""
    dataframe_kwargs.setdefault("hide_index", True)
    st.dataframe(data, **dataframe_kwargs)
    if caption:
        st.caption(caption)
    _download(data, name, _slug(name))


def _download(data: pd.DataFrame, name: str, slug: str) -> None:
    st.download_button(f"Download data: {name} (CSV)", icon=":material/download:", data=lambda: data.to_csv(index=False).encode(),
                       file_name=f"{slug}.csv", mime="text/csv", key=f"download_{slug}", on_click="ignore")


def formula(latex: str, caption: str | None = None) -> None:
    st.latex(latex)
    if caption:
        st.caption(caption)


def notice(text: str) -> None:
    """The "what to notice" box of a view."""
    st.info(f"**What to notice.** {text}", icon=":material/visibility:")


def reproduce(code: str) -> None:
    """An expander with the rkcore calls that reproduce the view."""
    with st.expander("Reproduce in Python"):
        st.code(code, language="python")
