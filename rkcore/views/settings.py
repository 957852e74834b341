"""The state table: every setting of the dashboard, once, and :class:`ViewSpec`, the shared settings of a view.

A field's name is its URL key, its session key and its widget key. The table gives its default,
its codec (from the default's type), its choices (from rkcore's registries) and bounds, and the old
URL keys it still answers to. The sidebar, the page widgets, the URL, presets, :class:`ViewSpec`,
the views' computations (:mod:`rkcore.views`) and the "reproduce in Python" code all read it; nothing
is added at run time. Pure: no streamlit (the session and URL side is :mod:`rkapp.state`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from rkcore.data import datasets as rkdata
from rkcore.maps.distributions import DISTRIBUTIONS
from rkcore.teaching.compositional import DEDUP_MODES, PRESETS
from rkcore.metrics import CURVE_METRICS
from rkcore.studies.fourier_study import fourier_maps
from rkcore.teaching.kernel_trick import EXPANSIONS
from rkcore.teaching.random_projections import PROJECTIONS
from rkcore.registry import KERNELS, MAPS, KernelSpec
from rkcore.spec import DATASET_KEYS, FAMILY_SOURCES, dataset_label, kernel_spec_from_text, reproduce_code

def _codec(default) -> tuple[Callable[[str], Any], Callable[[Any], str]]:
    if isinstance(default, bool):
        return (lambda s: {"true": True, "1": True, "false": False, "0": False}[s.strip().lower()],
                lambda v: "true" if v else "false")
    if isinstance(default, int):
        return (lambda s: int(s.strip()), str)
    if isinstance(default, float):
        return (lambda s: float(s.strip()), lambda v: repr(float(v)))
    if isinstance(default, tuple):
        # each choice once: "rademacher,rademacher" would draw a line twice, then be refused as too many
        return (lambda s: tuple(dict.fromkeys(t for t in (p.strip() for p in s.split(",")) if t)), ",".join)
    return (str, str)


@dataclass(frozen=True)
class Field:  # numpydoc ignore=PR02
    """One setting of the dashboard.

    Parameters
    ----------
    name : str
        URL key, session key, widget key and :class:`ViewSpec` attribute.
    default : object
        The default; its type gives the codec (bool, int, float, tuple of str, str).
    label : str, default=""
        Widget label, also names the field in error messages.
    options : callable, optional
        Returns the allowed values (from the registries); None: free.
    min_value, max_value : number, optional
        Bounds of a number.
    aliases : tuple of str, default=()
        Older URL keys, read from shared links.
    view : bool, default=True
        Part of :class:`ViewSpec` (the shared sidebar), else a page's own setting.
    page : str, default=""
        The page that owns a page-specific field.
    help : str, optional
        The widget's help text.
    file_tag : str, optional
        Names the field's value in CSV file names ("m" -> m3); None: not named.
    """

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
    file_tag: str | None = None                # names the field's value in CSV file names ("m" -> m3), None: not

    @property
    def parse(self) -> Callable[[str], Any]:
        """Reads the field's value from URL text.

        Returns
        -------
        callable
            str -> value.
        """
        return _codec(self.default)[0]

    @property
    def dump(self) -> Callable[[Any], str]:
        """Writes the field's value as URL text.

        Returns
        -------
        callable
            value -> str.
        """
        return _codec(self.default)[1]

    @property
    def multi(self) -> bool:
        """Whether the field holds several choices (a tuple).

        Returns
        -------
        bool
            True for a tuple default.
        """
        return isinstance(self.default, tuple)


def _keys(mapping) -> Callable[[], list]:
    return lambda: list(mapping)


def _choices(*values) -> Callable[[], list]:
    return lambda: list(values)


def _page(page: str, *fields: tuple[str, Any] | Field) -> list[Field]:
    """A page's own settings: (name, default) pairs, or Fields with their choices and bounds."""
    return [dataclasses.replace(f, view=False, page=page) if isinstance(f, Field)
            else Field(f[0], f[1], view=False, page=page) for f in fields]


#: The ε grid of the Error bounds study: 1, 2, 5 per decade, exact decimal floats (they round-trip the URL).
EPS_GRID = tuple(float(f"{m}e{k}") for k in range(-6, 0) for m in (1, 2, 5)) + (1.0,)
#: Powers of two offered as D or d (strings: multiselect chips keep the order given).
_POWERS = tuple(str(2 ** k) for k in range(2, 15))
#: Fallback weight distribution: the registry's default for RK (its first), Rademacher (Lemma 4).
DEFAULT_DISTRIBUTION = MAPS["rk"].distributions[0]


NO_TARGET = ""  # the target field's "no target column" value

TABLE: list[Field] = [
    # ---- the shared sidebar (ViewSpec)
    Field("dataset", "interactions", "Dataset", _keys(DATASET_KEYS), aliases=("ds",), file_tag="",
          help="Built-in sets need no files. Uploads and MovieLens are read locally."),
    Field("target", NO_TARGET, "Target column (labels)",
          help="The column holding the labels; the others are the features."),
    Field("movielens_path", "", "MovieLens 100K folder", aliases=("mlpath",),
          help="The folder holding u.data, u.user and u.item."),
    Field("normalization", "l1", "Row normalization", _keys(rkdata.NORMALIZATIONS), aliases=("norm",),
          help="The paper L1-normalizes so that R = max ||x||_1 = 1."),
    Field("n", 200, "n (points)", min_value=2, max_value=5000, file_tag="n", help="Number of data points shown (a seeded subsample)."),
    Field("kernel", "anova", "Kernel family", _keys(KERNELS), file_tag=""),
    Field("degree", 2, "Degree m", min_value=1, max_value=20, aliases=("m",), file_tag="m",
          help="Itemset size / polynomial degree; at most d for itemset kernels."),
    Field("family", "custom", "Itemset family", _keys(FAMILY_SOURCES), aliases=("fam",)),
    Field("itemsets", "0,1; 2,3; 1,2,4", "Itemsets",
          help='Feature indices (from 0) separated by commas, itemsets by ";", e.g. "0,1; 2,3; 1,2,4". '
               '"{}" is the empty itemset.'),
    Field("fields", "", "Fields",
          help='Groups of feature indices separated by "|", ranges allowed: "0-4 | 5-9". Empty: the '
               "dataset's own fields (e.g. MovieLens user | item), else the two halves of the features."),
    Field("c", 1.0, "Offset c", min_value=0.0, max_value=1e6, file_tag="c"),
    Field("gamma", 1.0, "Width γ", min_value=1e-6, max_value=1e6, file_tag="gamma"),
    Field("map", "rk", "Feature map", _keys(MAPS), file_tag=""),
    Field("distributions", (DEFAULT_DISTRIBUTION,), "Weight distribution", _keys(DISTRIBUTIONS), aliases=("dist",), file_tag="",
          help="Entries of the random vectors ω: zero mean, unit variance (Proposition 2)."),
    Field("D", 256, "D (random features)", min_value=1, max_value=65536, file_tag="D"),
    Field("seed", 0, "Seed", min_value=0, max_value=2**31 - 1, file_tag="seed"),
    # ---- the frame: presenter mode (larger type, sidebar collapsed, one chart per row) and the story's step
    Field("presenter", False, "Presenter mode", view=False,
          help="Larger type, sidebar collapsed, one chart per row: for a projector. Kept in the URL (presenter=true)."),
    Field("upload", "", "Uploaded file", view=False,
          help="The key of an uploaded file kept on the server (rkapp.uploads): a reload finds the file again."),
    Field("story_step", 1, "Story step", lambda: list(range(1, 6)), view=False, page="Story"),
    # ---- page-specific settings, with their choices and bounds (the pages draw them; labels stay with the page)
    *_page("Gram matrices", Field("gram_view", "pair", options=_choices("pair", "difference", "entries"))),
    *_page("Error bounds",
           Field("eb_eps", 1e-3, options=_choices(*EPS_GRID)),
           Field("eb_delta", 0.05, options=_choices(0.01, 0.05, 0.1, 0.2)),
           Field("eb_D", 256, options=_choices(16, 32, 64, 128, 256, 512, 1024)),  # also the study's D
           Field("eb_trials", 10, options=_choices(5, 10, 20, 50, 100, 200))),
    *_page("Distributions and variance",
           Field("dv_mult", ("2", "4", "8", "16"), options=_choices("1", "2", "4", "8", "16", "32")),
           Field("dv_trials", 10, options=_choices(5, 10, 20, 50, 100)),
           Field("dv_vtrials", 100, options=_choices(50, 100, 200, 500, 1000)),
           ("dv_scrk", True), ("dv_exact", False)),
    *_page("Timing",
           Field("tm_maps", ("rk", "scrk"), options=_keys(MAPS)),
           Field("tm_m", 2, min_value=1, max_value=5),
           Field("tm_n", 1000, options=_choices(10, 50, 100, 200, 500, 1000, 2000)),
           # the d swept and the D held fixed meanwhile, the D swept and the d held fixed meanwhile: named with
           # sklearn's words for d and D (n_features, n_components); the old keys differed only by case
           Field("tm_sweep_n_features", ("128", "256", "512", "1024"), options=_choices(*_POWERS[:-1]),
                 aliases=("tm_d",)),
           Field("tm_at_n_components", "1024", options=_choices(*_POWERS[2:]), aliases=("tm_Dfix",)),
           Field("tm_sweep_n_components", ("256", "512", "1024", "2048"), options=_choices(*_POWERS[2:]),
                 aliases=("tm_D",)),
           Field("tm_at_n_features", "256", options=_choices(*_POWERS[:-1]), aliases=("tm_dfix",)),
           Field("tm_rep", 5, options=_choices(1, 3, 5, 9)),
           ("tm_1t", True)),
    *_page("Classifiers",
           ("cl_methods", ("kernel_svm", "fm", "rk", "scrk")),  # choices: the registry's METHODS for the kernel
           Field("cl_mult", ("2", "4", "8", "16"), options=_choices("1", "2", "4", "8", "16", "32")),
           Field("cl_trials", 3, options=_choices(1, 2, 3, 5, 10)),
           Field("cl_xaxis", "linear", options=_choices("linear", "log2"))),
    *_page("Kernel trick",
           Field("kt_kind", "polynomial", options=_keys(EXPANSIONS)),
           Field("kt_m", 2, min_value=1, max_value=4),
           ("kt_dmax", 64),  # choices depend on the expansion (the page's D_OPTIONS)
           Field("kt_n", 100, min_value=10, max_value=1000)),
    *_page("Random Fourier features",
           Field("rff_bw", "median", options=_choices("median", "manual")),
           Field("rff_gamma", 1.0, min_value=1e-6, max_value=1e6),
           Field("rff_Dmax", 4096, options=_choices(256, 512, 1024, 2048, 4096, 8192, 16384)),
           Field("rff_trials", 5, min_value=2, max_value=50),
           Field("rff_metric", "rel_fro", options=_choices(*CURVE_METRICS)),
           # the orthogonal / structured comparison (rkcore.studies.fourier_study), behind a toggle
           ("rff_struct", False),
           Field("rff_maps", ("rff", "rff_pairs", "orf", "sorf", "fastfood"), options=lambda: fourier_maps()),
           Field("rff_mult", ("1", "4", "16"), options=_choices("1", "2", "4", "8", "16")),
           Field("rff_strials", 10, options=_choices(5, 10, 20, 50)),
           Field("rff_smetric", "mse", options=_choices("mse", "variance", "bias2"))),
    *_page("Random projections",
           Field("rp_vec", "phi", options=_choices("phi", "raw")),
           Field("rp_mmax", 1024, options=_choices(64, 128, 256, 512, 1024, 2048, 4096)),
           Field("rp_trials", 10, min_value=2, max_value=100),
           Field("rp_delta", 0.05, min_value=0.001, max_value=0.5),
           Field("rp_kinds", tuple(PROJECTIONS), options=_keys(PROJECTIONS))),
    *_page("Compositional kernels",
           Field("ck_preset", "shallow", options=_keys(PRESETS)),
           Field("ck_Dmax", 512, options=_choices(64, 128, 256, 512, 1024, 2048, 4096)),
           Field("ck_trials", 4, min_value=2, max_value=40),
           Field("ck_Dgram", 128, options=_choices(16, 32, 64, 128, 256, 512, 1024, 2048)),
           Field("ck_modes", ("none", "unbiased"), options=_keys(DEDUP_MODES)),
           Field("ck_metric", "rel_fro", options=_choices(*CURVE_METRICS))),
    *_page("Speed and accuracy",
           Field("sa_seeds", 5, options=_choices(3, 5, 10)),
           Field("sa_Dmax", 640, options=_choices(160, 320, 640, 1280, 2560))),
]

FIELDS: dict[str, Field] = {f.name: f for f in TABLE}


def choices(name: str) -> tuple:
    """The allowed values of a field, from the table (what its widget offers).

    Parameters
    ----------
    name : str
        A field with options.

    Returns
    -------
    tuple
        Its allowed values.

    Raises
    ------
    ValueError
        For a free field (bounds, no list of choices).
    """
    options = FIELDS[name].options
    if options is None:
        raise ValueError(f"The setting {name!r} takes any value in its bounds; it has no list of choices.")
    return tuple(options())


#: old URL key -> field name (links shared before the keys became the field names)
ALIASES: dict[str, str] = {alias: f.name for f in TABLE for alias in f.aliases}
assert len(FIELDS) == len(TABLE) and not set(ALIASES) & set(FIELDS), "one name per field"



# ============================================================================ the view's shared settings
@dataclass(frozen=True)
class ViewSpec:  # numpydoc ignore=PR02
    """The shared settings of a view (the sidebar's fields of the state table), frozen and hashable: a
    cache key and a picklable argument of a view's computation (:mod:`rkcore.views`), which may run in
    another process. The defaults are the table's (a test checks that the two agree field by field).
    ``upload`` is (file name, the owner's HMAC of its bytes: rkapp.upload_section.upload_digest) of an
    uploaded file, not a URL setting; every cache keyed by the view is so per owner for uploads.

    Parameters
    ----------
    dataset, target, movielens_path, normalization, n, kernel, degree, family, itemsets, fields, c, gamma, map, \
distributions, D, seed : object
        The sidebar's fields of the state table (:data:`FIELDS` gives each one's label, choices and bounds).
    upload : tuple of (str, str), optional
        The uploaded file's name and its owner's digest.
    """

    dataset: str = "interactions"
    target: str = NO_TARGET
    movielens_path: str = ""
    normalization: str = "l1"
    n: int = 200
    kernel: str = "anova"
    degree: int = 2
    family: str = "custom"
    itemsets: str = "0,1; 2,3; 1,2,4"
    fields: str = ""
    c: float = 1.0
    gamma: float = 1.0
    map: str = "rk"
    distributions: tuple = (DEFAULT_DISTRIBUTION,)
    D: int = 256
    seed: int = 0
    upload: tuple[str, str] | None = None

    @property
    def distribution(self) -> str:
        """The first chosen weight distribution (the registry's default for RK when none is).

        Returns
        -------
        str
            A distribution key.
        """
        return self.distributions[0] if self.distributions else DEFAULT_DISTRIBUTION

    @property
    def map_distribution(self) -> str | None:
        """The distribution to pass to make_map: None for a map that draws its own (registry ``takes_distribution``).

        Returns
        -------
        str or None
            A distribution key, or None.
        """
        return self.distribution if MAPS[self.map].takes_distribution else None

    def with_(self, **changes) -> "ViewSpec":
        """A copy with ``changes``.

        Parameters
        ----------
        **changes
            Field name -> new value.

        Returns
        -------
        ViewSpec
            The changed copy.
        """
        return dataclasses.replace(self, **changes)

    def kernel_spec(self, data=None, d: int | None = None) -> KernelSpec:
        """The KernelSpec of this view over the data's d features.

        Parameters
        ----------
        data : Dataset, optional
            The view's data (its fields feed cross-field families).
        d : int, optional
            Number of features (default: the data's).

        Returns
        -------
        KernelSpec
            The kernel; ValueError if the settings do not make one.
        """
        if d is None:
            if data is None:
                raise ValueError("kernel_spec needs the data or d (the number of features).")
            d = data.X.shape[1]
        return kernel_spec_from_text(self.kernel, d, degree=self.degree, family=self.family, itemsets=self.itemsets,
                                     fields=self.fields, c=self.c, gamma=self.gamma,
                                     data_fields=getattr(data, "fields", None))

    def itemset_family(self, data=None, d: int | None = None):
        """The itemset family of this view's kernel over d features.

        Parameters
        ----------
        data : Dataset, optional
            The view's data.
        d : int, optional
            Number of features (default: the data's).

        Returns
        -------
        ItemsetFamily or None
            The family S (None for a kernel that is not an itemset kernel).
        """
        d = d if d is not None else data.X.shape[1]
        return self.kernel_spec(data, d).family(d)

    def describe(self) -> str:
        """One line naming the data, kernel and map settings (chart titles, file headers).

        Returns
        -------
        str
            The description.
        """
        kernel = (f"itemset kernel ({FAMILY_SOURCES[self.family].lower()})" if KERNELS[self.kernel].takes_family
                  else KernelSpec(self.kernel, degree=self.degree).label())
        return ", ".join([dataset_label(self.dataset), f"n={self.n}", f"{self.normalization}-normalized", kernel,
                          f"D={self.D}", f"seed={self.seed}"])

    def query_params(self) -> dict[str, str]:
        """The settings that differ from the defaults, as URL query parameters.

        Returns
        -------
        dict
            Field name -> URL text.
        """
        return {f.name: f.dump(getattr(self, f.name)) for f in FIELDS.values()
                if f.view and getattr(self, f.name) != f.default}

    def code(self, *extra_lines: str) -> str:
        """Python lines reproducing this view's data and kernel with rkcore, then ``extra_lines``.

        Parameters
        ----------
        *extra_lines : str
            Lines appended.

        Returns
        -------
        str
            The code.
        """
        return reproduce_code(dataset=self.dataset, n=self.n, normalization=self.normalization, kernel=self.kernel,
                              degree=self.degree, family=self.family, itemsets=self.itemsets, fields=self.fields,
                              c=self.c, gamma=self.gamma, target=self.target or None,
                              movielens_path=self.movielens_path,
                              upload_name=self.upload[0] if self.upload else None, extra_lines=extra_lines)


VIEW_FIELDS = tuple(f.name for f in TABLE if f.view)


# ============================================================================ checking a value
#: Characters of a refused value quoted back in a message (a 10,000-character URL value is cut).
QUOTE_LIMIT = 80


def quoted(value) -> str:
    """repr(value), cut to QUOTE_LIMIT characters: how a refused value is named in a message.

    Parameters
    ----------
    value : object
        Any value.

    Returns
    -------
    str
        Its quoted text.
    """
    text = repr(value)
    return text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT] + f"… ({len(text):,} characters)"


def check(value, options, min_value, max_value, label: str) -> str | None:
    """Why a value is not allowed (None if it is): not a choice, not a finite number, out of range.

    Parameters
    ----------
    value : object
        The value (a tuple: several choices).
    options : iterable or None
        Allowed values; None: free.
    min_value, max_value : number or None
        Bounds.
    label : str
        Names the setting in the message.

    Returns
    -------
    str or None
        The message, or None when allowed.
    """
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


def allowed_text(f: Field, options, min_value, max_value) -> str:
    """What a link may hold for the field, for a message about a value that could not be read.

    Parameters
    ----------
    f : Field
        The field.
    options : iterable or None
        Allowed values.
    min_value, max_value : number or None
        Bounds.

    Returns
    -------
    str
        " (allowed: ...)", or "" for a free field.
    """
    if isinstance(f.default, bool):
        return " (allowed: true or false)"
    if options is not None:
        return f" (allowed: {', '.join(map(str, options))})"
    if min_value is not None or max_value is not None:
        return f" (allowed values are {min_value} to {max_value})"
    return ""


def file_name_parts(settings: dict) -> list[str]:
    """The settings that name a CSV file (the table's ``file_tag``), in table order: ["wine", "anova", "m3"].

    Parameters
    ----------
    settings : dict
        Field name -> value.

    Returns
    -------
    list of str
        The name parts.
    """
    parts = []
    for name, f in FIELDS.items():
        if f.file_tag is not None and name in settings:
            value = settings[name]
            parts.append(f.file_tag + ("+".join(map(str, value)) if isinstance(value, tuple) else str(value)))
    return parts


def check_field(name: str, value) -> str | None:
    """Why ``value`` is not allowed for the table's field ``name`` (None if it is): its choices and bounds.

    Parameters
    ----------
    name : str
        A field of the table.
    value : object
        The value.

    Returns
    -------
    str or None
        The message, or None when allowed.
    """
    f = FIELDS[name]
    return check(value, f.options() if f.options else None, f.min_value, f.max_value, f.label or name)


# the class is written out (a definition to jump to); the table stays the one source of its defaults
assert [(f.name, f.default) for f in TABLE if f.view] == [
    (x.name, x.default) for x in dataclasses.fields(ViewSpec) if x.name != "upload"], \
    "ViewSpec's fields and defaults are the state table's sidebar fields, in order"
