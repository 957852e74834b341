"""The state table: every setting of the dashboard, once.

A field's name is its URL key, its session key and its widget key. The table gives its default,
its codec (from the default's type), its choices (from rkcore's registries) and bounds, and the old
URL keys it still answers to. The sidebar, the page widgets, the URL, presets, :class:`ViewSpec`
and the "reproduce in Python" code all read it; nothing is added at run time.
"""
from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import streamlit as st

from rkcore.data import datasets as rkdata
from rkcore.maps.distributions import DISTRIBUTIONS
from rkcore.teaching.foundations import PROJECTIONS
from rkcore.registry import KERNELS, MAPS, KernelSpec
from rkcore.spec import DATASET_KEYS, FAMILY_SOURCES, dataset_label, kernel_spec_from_text, reproduce_code

logger = logging.getLogger("rkcore.app")

_SHADOW = "_rk_v_"          # session key prefix of the persisted values (a widget's own key is cleared
                            # by Streamlit when a page does not draw it; the shadow survives)
_URL_SEEN = "_rk_url_seen"  # fields already read from the URL in this session


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


@dataclass(frozen=True)
class Field:
    name: str                                  # URL key = session key = widget key = ViewSpec attribute
    default: Any
    label: str = ""                            # widget label, also names the field in error messages
    options: Callable[[], Sequence] | None = None  # allowed values (from the registries), None = free
    min_value: Any = None
    max_value: Any = None
    aliases: tuple[str, ...] = ()              # older URL keys, read from shared links
    view: bool = True                          # part of ViewSpec (shared sidebar) or page-specific
    page: str = ""                             # the page that owns a page-specific field
    help: str | None = None

    @property
    def parse(self) -> Callable[[str], Any]:
        return _codec(self.default)[0]

    @property
    def dump(self) -> Callable[[Any], str]:
        return _codec(self.default)[1]

    @property
    def multi(self) -> bool:
        return isinstance(self.default, tuple)


def _keys(mapping) -> Callable[[], list]:
    return lambda: list(mapping)


def _page(page: str, *fields: tuple) -> list[Field]:
    return [Field(name, default, view=False, page=page) for name, default in fields]


NO_TARGET = ""  # the target field's "no target column" value

_TABLE: list[Field] = [
    # ---- the shared sidebar (ViewSpec)
    Field("dataset", "interactions", "Dataset", _keys(DATASET_KEYS), aliases=("ds",),
          help="Built-in sets need no files. Uploads and MovieLens are read locally."),
    Field("target", NO_TARGET, "Target column (labels)",
          help="The column holding the labels; the others are the features."),
    Field("movielens_path", "", "MovieLens 100K folder", aliases=("mlpath",),
          help="The folder holding u.data, u.user and u.item."),
    Field("normalization", "l1", "Row normalization", _keys(rkdata.NORMALIZATIONS), aliases=("norm",),
          help="The paper L1-normalizes so that R = max ||x||_1 = 1."),
    Field("n", 200, "n (points)", min_value=2, max_value=5000, help="Number of data points shown (a seeded subsample)."),
    Field("kernel", "anova", "Kernel family", _keys(KERNELS)),
    Field("degree", 2, "Degree m", min_value=1, max_value=20, aliases=("m",),
          help="Itemset size / polynomial degree; at most d for itemset kernels."),
    Field("family", "custom", "Itemset family", _keys(FAMILY_SOURCES), aliases=("fam",)),
    Field("itemsets", "0,1; 2,3; 1,2,4", "Itemsets",
          help='Feature indices (from 0) separated by commas, itemsets by ";", e.g. "0,1; 2,3; 1,2,4". '
               '"{}" is the empty itemset.'),
    Field("fields", "", "Fields",
          help='Groups of feature indices separated by "|", ranges allowed: "0-4 | 5-9". Empty: the '
               "dataset's own fields (e.g. MovieLens user | item), else the two halves of the features."),
    Field("c", 1.0, "Offset c", min_value=0.0, max_value=1e6),
    Field("gamma", 1.0, "Width γ", min_value=1e-6, max_value=1e6),
    Field("map", "rk", "Feature map", _keys(MAPS)),
    Field("distributions", ("rademacher",), "Weight distribution", _keys(DISTRIBUTIONS), aliases=("dist",),
          help="Entries of the random vectors ω: zero mean, unit variance (Proposition 2)."),
    Field("D", 256, "D (random features)", min_value=1, max_value=65536),
    Field("seed", 0, "Seed", min_value=0, max_value=2**31 - 1),
    # ---- the frame: presenter mode (larger type, sidebar collapsed, one chart per row) and the story's step
    Field("presenter", False, "Presenter mode", view=False,
          help="Larger type, sidebar collapsed, one chart per row: for a projector. Kept in the URL (presenter=true)."),
    Field("upload", "", "Uploaded file", view=False,
          help="The key of an uploaded file kept on the server (rkapp.uploads): a reload finds the file again."),
    Field("story_step", 1, "Story step", lambda: list(range(1, 6)), view=False, page="Story"),
    # ---- page-specific settings (choices and bounds are given where the page draws them)
    *_page("Gram matrices", ("gram_view", "pair")),
    *_page("Error bounds", ("eb_eps", 1e-3), ("eb_delta", 0.05), ("eb_D", 256), ("eb_trials", 10)),
    *_page("Distributions and variance", ("dv_mult", ("2", "4", "8", "16")), ("dv_trials", 10),
           ("dv_vtrials", 100), ("dv_scrk", True), ("dv_exact", False)),
    *_page("Timing", ("tm_maps", ("rk", "scrk")), ("tm_m", 2), ("tm_n", 1000), ("tm_d", ("128", "256", "512", "1024")),
           ("tm_Dfix", "1024"), ("tm_D", ("256", "512", "1024", "2048")), ("tm_dfix", "256"), ("tm_rep", 5),
           ("tm_1t", True)),
    *_page("Classifiers", ("cl_methods", ("kernel_svm", "fm", "rk", "scrk")), ("cl_mult", ("2", "4", "8", "16")),
           ("cl_trials", 3), ("cl_xaxis", "linear")),
    *_page("Kernel trick", ("kt_kind", "polynomial"), ("kt_m", 2), ("kt_dmax", 64), ("kt_n", 100)),
    *_page("Random Fourier features", ("rff_bw", "median"), ("rff_gamma", 1.0), ("rff_Dmax", 4096), ("rff_trials", 5),
           ("rff_metric", "rel_fro")),
    *_page("Random projections", ("rp_vec", "phi"), ("rp_mmax", 1024), ("rp_trials", 10), ("rp_delta", 0.05),
           ("rp_kinds", tuple(PROJECTIONS))),
    *_page("Compositional kernels", ("ck_preset", "shallow"), ("ck_Dmax", 512), ("ck_trials", 4), ("ck_Dgram", 128),
           ("ck_modes", ("none", "unbiased")), ("ck_metric", "rel_fro")),
]

FIELDS: dict[str, Field] = {f.name: f for f in _TABLE}
#: old URL key -> field name (links shared before the keys became the field names)
ALIASES: dict[str, str] = {alias: f.name for f in _TABLE for alias in f.aliases}
assert len(FIELDS) == len(_TABLE) and not set(ALIASES) & set(FIELDS), "one name per field"


# ============================================================================ the view
class _ViewMethods:
    """Behaviour of :class:`ViewSpec`; its fields come from the table."""

    @property
    def distribution(self) -> str:
        return self.distributions[0] if self.distributions else "rademacher"

    @property
    def map_distribution(self) -> str | None:
        """The distribution to pass to make_map: only RK takes one, the others draw their own."""
        return self.distribution if self.map == "rk" else None

    def with_(self, **changes):
        return dataclasses.replace(self, **changes)

    def kernel_spec(self, data=None, d: int | None = None) -> KernelSpec:
        """The KernelSpec of this view over the data's d features (raises ValueError if invalid)."""
        if d is None:
            if data is None:
                raise ValueError("kernel_spec needs the data or d (the number of features).")
            d = data.X.shape[1]
        return kernel_spec_from_text(self.kernel, d, degree=self.degree, family=self.family, itemsets=self.itemsets,
                                     fields=self.fields, c=self.c, gamma=self.gamma,
                                     data_fields=getattr(data, "fields", None))

    def itemset_family(self, data=None, d: int | None = None):
        d = d if d is not None else data.X.shape[1]
        return self.kernel_spec(data, d).family(d)

    def describe(self) -> str:
        kernel = (KernelSpec(self.kernel, degree=self.degree).label() if self.kernel != "itemset"
                  else f"itemset kernel ({FAMILY_SOURCES[self.family].lower()})")
        return ", ".join([dataset_label(self.dataset), f"n={self.n}", f"{self.normalization}-normalized", kernel,
                          f"D={self.D}", f"seed={self.seed}"])

    def query_params(self) -> dict[str, str]:
        """The settings that differ from the defaults, as URL query parameters."""
        return {f.name: f.dump(getattr(self, f.name)) for f in FIELDS.values()
                if f.view and getattr(self, f.name) != f.default}

    def code(self, *extra_lines: str) -> str:
        """Python lines reproducing this view's data and kernel with rkcore, then ``extra_lines``."""
        return reproduce_code(dataset=self.dataset, n=self.n, normalization=self.normalization, kernel=self.kernel,
                              degree=self.degree, family=self.family, itemsets=self.itemsets, fields=self.fields,
                              c=self.c, gamma=self.gamma, target=self.target or None,
                              movielens_path=self.movielens_path,
                              upload_name=self.upload[0] if self.upload else None, extra_lines=extra_lines)


#: Everything a view depends on (frozen, hashable: a st.cache_data argument). Built by the sidebar;
#: ``upload`` is (file name, sha1 of its bytes) of an uploaded file, not a URL setting.
ViewSpec = dataclasses.make_dataclass(
    "ViewSpec",
    [(f.name, type(f.default), field(default=f.default)) for f in _TABLE if f.view]
    + [("upload", "tuple[str, str] | None", field(default=None))],
    bases=(_ViewMethods,), frozen=True, namespace={"__module__": __name__, "__doc__": _ViewMethods.__doc__})
VIEW_FIELDS = tuple(f.name for f in _TABLE if f.view)


# ============================================================================ session and URL
def stored(name: str):
    """The persisted value of a field (its default when never set)."""
    return st.session_state.get(_SHADOW + name, FIELDS[name].default)


def store(name: str, value) -> None:
    st.session_state[_SHADOW + name] = value


def is_stored(name: str) -> bool:
    return _SHADOW + name in st.session_state


#: Characters of a refused value quoted back in a message (a 10,000-character URL value is cut).
QUOTE_LIMIT = 80


def quoted(value) -> str:
    """repr(value), cut to QUOTE_LIMIT characters: how a refused value is named in a message."""
    text = repr(value)
    return text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT] + f"… ({len(text):,} characters)"


def check(value, options, min_value, max_value, label: str) -> str | None:
    """Why a value is not allowed (None if it is): not a choice, not a finite number, out of range."""
    if options is not None:
        opts = list(options)
        values = value if isinstance(value, tuple) else (value,)
        bad = [v for v in values if v not in opts]
        if bad:
            return (f"{label}: {', '.join(map(quoted, bad[:5]))} is not an allowed choice; "
                    f"allowed: {', '.join(map(str, opts))}.")
    if min_value is None and max_value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"{label} = {quoted(value)} is not a number."
    if isinstance(value, float) and not math.isfinite(value):
        return f"{label} = {value!r} is not a finite number: allowed values are {min_value} to {max_value}."
    if isinstance(min_value, int) and not isinstance(min_value, bool) and isinstance(value, float) \
            and not value.is_integer():
        return f"{label} = {value!r} is not a whole number: allowed values are {min_value} to {max_value}."
    if min_value is not None and value < min_value or max_value is not None and value > max_value:
        return f"{label} = {quoted(value)} is out of range: allowed values are {min_value} to {max_value}."
    return None


def read_url(f: Field, options, min_value, max_value, label: str, errors: list[str]) -> None:
    """On the first draw of a field in a session, take its value from the URL (its name or an old alias)."""
    seen = st.session_state.setdefault(_URL_SEEN, set())
    if f.name in seen:
        return
    seen.add(f.name)
    key = next((k for k in (f.name, *f.aliases) if k in st.query_params), None)
    if key is None:
        return
    text = st.query_params[key]
    try:
        value = f.parse(text)
    except (ValueError, KeyError, TypeError, OverflowError):
        errors.append(f"{label}: could not read {quoted(text)} from the link; using {f.dump(f.default)}.")
        return
    problem = check(value, options, min_value, max_value, label)
    if problem:
        errors.append(f"{problem} (from the link; using {f.dump(f.default)})")
        return
    store(f.name, value)


def write_url(f: Field, value) -> None:
    """Keep the URL equal to the non-default settings (old alias keys are replaced by the field name)."""
    try:
        for alias in f.aliases:
            if alias in st.query_params:
                del st.query_params[alias]
        if value == f.default:
            if f.name in st.query_params:
                del st.query_params[f.name]
        elif st.query_params.get(f.name) != f.dump(value):
            st.query_params[f.name] = f.dump(value)
    except Exception:  # noqa: BLE001 - the URL is a convenience; never break a page over it
        logger.debug("could not write query parameter %s", f.name, exc_info=True)


def apply_preset(values: dict, *, reset: bool = True) -> None:
    """Set settings (field names, or old URL keys) after resetting the shared ones to their defaults."""
    if reset:
        for f in FIELDS.values():
            if f.view:
                st.session_state.pop(_SHADOW + f.name, None)
    for key, value in values.items():
        name = ALIASES.get(key, key)
        if name not in FIELDS:
            raise ValueError(f"Unknown setting {key!r}; known: {', '.join(FIELDS)}.")
        store(name, tuple(value) if FIELDS[name].multi else value)
