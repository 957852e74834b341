"""The fuzz harness's cases about sessions, bounds and sizes, and the wording every message must have.

- **two sessions** (:func:`run_two_sessions`): one session uploads a private file through the real uploader,
  another opens the link holding its token and must get nothing of it (no name, no column, no data); after
  the uploader ticks "Share this file with the link", a third session must get it (so the check can see a
  leak at all). AppTest sends no cookie, so each session is its own owner (rkapp.upload_section.owner_id):
  two AppTest sessions are two browsers.
- **bounds** (:func:`run_bounds`): a link setting every field of the state table (rkapp.state.FIELDS) the
  page may draw to a value out of its range or choices (a size field: its first illegal value, just above
  the largest legal one); each field the page then draws must come with an st.error naming the field and
  its bound (a number of the range, or the word "allowed" and the choices).
- **largest** (:func:`run_largest`): each size field of the page, one at a time, at its largest legal value
  (read from the widget a control case drew: the page's own bound, not only the table's): the page must
  refuse, wait for its run button, or answer within ``SECONDS`` - never a silent multi-minute run.

:func:`wording_problems` is the check every message the harness sees goes through (errors, warnings, infos):
no numpy / scipy / scikit-learn internals' wording, no Python exception names, nothing that belongs to
another interface (the command line's flags, Python keyword arguments).
"""
from __future__ import annotations

import random
import re

from rkapp.state import FIELDS

#: Size fields: a setting whose value scales the work (a count or a size), i.e. an integer field, or a choice of
#: integers (as numbers or digit strings). The seed and the story's step are numbers but not sizes.
NOT_SIZES = {"seed", "story_step"}
#: The values a size widget's bound may be read from: number_input (min, max), choices (options).
#: Messages quoted from internals or another interface, with why each is wrong in the dashboard.
INTERNAL_WORDING = {
    r"inhomogeneous shape|setting an array element with a sequence": "numpy's wording for ragged input",
    r"must be an int in the range|parameter of \w+ must be": "scikit-learn's parameter validation",
    r"not subscriptable|unhashable type|object is not callable|has no attribute|object of type": "Python's TypeError",
    r"could not convert string to float|invalid literal for int": "Python's conversion error",
    r"\bKeyError\b|^\s*'[^']*'\s*$|^\s*\d+\s*$": "a KeyError's repr as the whole message",
    r"\b(?:Value|Type|Key|Index|Attribute|Runtime|Overflow|ZeroDivision|Memory)Error\b|Traceback": "a Python "
    "exception's name or a traceback",
    r"operands could not be broadcast|axis \d+ is out of bounds|index \d+ is out of bounds": "numpy's shape wording",
    r"sparse matrix length is ambiguous|SparseEfficiencyWarning|spmatrix": "scipy.sparse's wording",
    r"Input contains NaN|Found array with \d+ sample|Expected 2D array": "scikit-learn's check_array wording",
    r"SVMlight/LibSVM data file": "scikit-learn's svmlight loader wording",
    r"\[-?\d+(?:\.\d+)?(?:, -?\d+(?:\.\d+)?)+\]|\(-?\d+\.\d+(?:, -?\d+\.\d+)+\)": "a Python list or tuple's repr "
    "(the Python interface's wording)",
    r"(?<![\w-])--[a-z][a-z-]+": "a command-line flag (the CLI's wording)",
    r"\b[a-z_]+=(?:True|False|None)\b": "a Python keyword argument",
}
_INTERNAL = [(re.compile(pattern), why) for pattern, why in INTERNAL_WORDING.items()]


def wording_problems(message: str) -> list[str]:
    """Why ``message`` (as the user reads it) is not in the dashboard's words: empty if it is."""
    return [f"{why}: {message[:200]!r}" for pattern, why in _INTERNAL if pattern.search(message)]


def unescaped(markdown: str) -> str:
    """What the user reads from Markdown the app escaped with rkapp.guard.literal."""
    return re.sub(r"\\(.)", r"\1", markdown)


def is_size(f) -> bool:
    values = f.default if f.multi else (f.default,)
    return f.name not in NOT_SIZES and bool(values) and all(
        (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, str) and v.isdigit()) for v in values)


# ----------------------------------------------------------------------------- two sessions
def run_two_sessions(case, fuzz) -> list[str]:
    """Session A uploads a private file on the Gram page; B opens A's link; A shares; C opens it."""
    from streamlit.testing.v1 import AppTest

    rng = random.Random(case.poke_seed)
    secret = f"private{rng.getrandbits(64):016x}"
    rows = "\n".join(f"{rng.random():.3f},{rng.random():.3f},{i % 2}" for i in range(30))
    content = f"{secret}_column,b,target\n{rows}\n".encode()

    def session(query: dict) -> AppTest:
        at = AppTest.from_file(str(case.path), default_timeout=fuzz.APP_TIMEOUT)
        for key, value in query.items():
            at.query_params[key] = value
        return at

    failures: list[str] = []
    owner = session(case.query)
    owner.run()
    owner.file_uploader[0].set_value((f"{secret}.csv", content, "text/csv"))
    owner.run()
    failures += fuzz.check(owner, case, 0.0, 0, float("inf"))
    token = owner.query_params.get("upload")
    token = token[0] if isinstance(token, list) else token
    if not token:
        return failures + ["the uploader's URL holds no upload key: a reload cannot find the file"]
    other = session({**case.query, "upload": token})
    other.run()
    failures += fuzz.check(other, case, 0.0, 0, float("inf"))
    if secret in everything_sent(other):
        failures.append("a link holding another session's private upload showed that session's file")
    elif not (other.warning or other.error):
        failures.append("a link holding another session's private upload: no message says why the file is missing")
    owner.checkbox(key="_rk_upload_share").check()
    owner.run()
    third = session({**case.query, "upload": token})
    third.run()
    if secret not in everything_sent(third):
        failures.append("a shared upload is not shown to a link's session (the privacy check sees nothing)")
    return failures


def everything_sent(at) -> str:
    """The text of every element the page sent (sidebar included), as protobuf text."""
    out = []

    def walk(node):
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in (getattr(node, "children", None) or {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


# ----------------------------------------------------------------------------- bounds
def _numbers(values) -> list:
    out = []
    for v in values:
        try:
            out.append(float(v) if isinstance(v, float) else int(v))
        except (TypeError, ValueError):
            return []
    return out


def out_of_range(f, rng: random.Random) -> str | None:
    """A URL value outside the field's range or choices (a size field: its first illegal value above the
    largest legal one); None for free text (no range to leave)."""
    if isinstance(f.default, bool):
        return "maybe"
    if f.options is not None:
        numbers = _numbers(f.options())
        if numbers:
            above = max(numbers) + 1 if isinstance(max(numbers), int) else max(numbers) * 2
            value = str(above) if f.multi or isinstance(f.default, str) else f.dump(above)
            return value if not f.multi else f.dump((*f.default[:1], value))
        return f.dump((f.default[0] if f.default else "x", "not_a_choice")) if f.multi else "not_a_choice"
    if f.max_value is not None:
        high = is_size(f) or rng.random() < 0.5
        if isinstance(f.default, int):
            return str(f.max_value + 1 if high else f.min_value - 1)
        return repr(float(f.max_value) * 2 if high else (f.min_value / 2 if f.min_value > 0 else -1.0))
    if isinstance(f.default, int):
        return str(10**9)  # choices given by the page (e.g. kt_dmax): far outside them
    if f.multi:
        return "not_a_choice"
    return None


def bounded_fields() -> set[str]:
    """The fields a value can be out of range for (all but free text), less the kernel a bounds case sets legal."""
    rng = random.Random(0)
    return {f.name for f in FIELDS.values() if f.name != "kernel" and out_of_range(f, rng) is not None}


def bounds_query(rng: random.Random, page_title: str, kernel: str) -> dict[str, str]:
    """Every field of the table the page may draw, out of range; the kernel legal (``kernel``: it decides
    which of the kernel's fields are drawn: polynomial draws the offset c, RBF the width γ)."""
    query = {"kernel": kernel}
    for f in FIELDS.values():
        if (f.view or f.page in ("", page_title)) and f.name != "kernel":
            value = out_of_range(f, rng)
            if value is not None:
                query[f.name] = value
    return query


def bound_words(widget) -> list[str]:
    """What a message about this widget's bound must contain (any one): its min or max, or "allowed"."""
    if widget.type != "number_input":
        return ["allowed"]
    words = []
    for bound in (widget.min, widget.max):
        if bound is not None:
            words += [str(bound), f"{bound:g}"] + ([str(int(bound))] if float(bound).is_integer() else [])
    return words or ["allowed"]


def drawn_widgets(at) -> dict:
    """The page's widgets by key (the state table's fields are drawn under their names)."""
    found = {}
    for kind in ("number_input", "selectbox", "multiselect", "radio", "checkbox", "toggle", "select_slider",
                 "slider", "text_input", "button_group"):
        for widget in at.get(kind):
            if getattr(widget, "key", None):
                found[widget.key] = widget
    return found


#: The fields a bounds case found drawn and saw refused with their bound, in this process (a run's coverage).
CHECKED: set[str] = set()
#: Per page, each size widget's largest legal value, read from the page's control case (record_sizes).
PAGE_SIZES: dict = {}


def run_bounds(case, warm: set, fuzz) -> list[str]:
    """Every out-of-range field the page draws gets an st.error naming the field and its bound."""
    from streamlit.testing.v1 import AppTest

    for key, largest in PAGE_SIZES.get(case.path, {}).items():
        if key in case.query and largest.isdigit():  # the page's own bound (a sidebar may allow n up to 20,000)
            case.query[key] = str(int(largest) + 1)
    at = AppTest.from_file(str(case.path), default_timeout=fuzz.APP_TIMEOUT)
    for key, value in case.query.items():
        at.query_params[key] = value
    limit = fuzz.SECONDS if case.path in warm else fuzz.COLD_SECONDS
    seconds, peak, timeout = fuzz._timed_run(at, at.run)
    warm.add(case.path)
    failures = fuzz.check(at, case, seconds, peak, limit)
    failures += [f"AppTest timeout: {timeout}"] if timeout else []
    errors = [unescaped(e.value) for e in at.error]
    widgets = drawn_widgets(at)
    for name in case.query:
        widget = widgets.get(name)
        if widget is None or name == "kernel" or case.query[name] in ("true", "false"):
            continue  # not drawn on this page with these settings (or set legal on purpose: a kernel, a toggle)
        label = unescaped(widget.label or FIELDS[name].label)
        words = bound_words(widget)
        if not any(label in e and any(w in e for w in words) for e in errors):
            failures.append(f"{name} = {case.query[name][:40]!r} is out of range, but no message names "
                            f"{label!r} and its bound ({' or '.join(dict.fromkeys(words))}); errors: "
                            f"{[e[:120] for e in errors][:4]}")
        else:
            CHECKED.add(name)
    return failures


# ----------------------------------------------------------------------------- largest legal sizes
def largest_legal(widget):
    """The widget's largest legal value, as a URL value (None: no numeric bound to reach)."""
    f = FIELDS.get(widget.key)
    if f is None or not is_size(f):
        return None
    if widget.type == "number_input":
        return None if widget.max is None else str(int(widget.max))
    options = list(widget.options) if widget.type in ("selectbox", "multiselect", "radio") else []
    numbers = _numbers(list(f.options()) if f.options is not None else options)
    if not numbers:
        return None
    if f.multi:
        return f.dump(tuple(str(v) for v in sorted(numbers)))  # every choice: the largest run
    top = max(numbers)
    return str(top) if isinstance(f.default, str) else f.dump(top)


def run_largest(case, warm: set, fuzz) -> list[str]:
    """Each size field the page drew in its control case, alone at its largest legal value, in a fresh session:
    refused, waiting for its button, or answered within SECONDS."""
    from streamlit.testing.v1 import AppTest

    failures: list[str] = []
    for key, value in sorted(PAGE_SIZES.get(case.path, {}).items()):
        timeout_seconds = fuzz.SECONDS * fuzz.load_factor() + 10  # past the limit: reported, not waited for
        at = AppTest.from_file(str(case.path), default_timeout=timeout_seconds)
        for k, v in {**case.query, key: value}.items():
            at.query_params[k] = v
        limit = fuzz.SECONDS if case.path in warm else fuzz.COLD_SECONDS
        seconds, peak, timeout = fuzz._timed_run(at, at.run)
        warm.add(case.path)
        found = fuzz.check(at, case, seconds, peak, limit)
        if timeout:  # " took " in it: run once more (fuzzing.run_case), a silent long run is long twice
            found.append(f"a silent long run: took over {timeout_seconds:.0f} s with neither a refusal nor a run "
                         f"button ({timeout[:80]})")
        failures += [f"[{key}={value[:40]}] {f}" for f in found]
        if found:
            break
    return failures


def record_sizes(at, sizes: dict) -> None:
    """Keep each size widget's largest legal value, from a control case's run of the page."""
    for key, widget in drawn_widgets(at).items():
        value = largest_legal(widget)
        if value is not None:
            sizes[key] = value

# ----------------------------------------------------------------------------- mutants of these cases (test-only)
def privacy_removed(replace_everywhere) -> None:
    """rkapp.uploads.find hands a kept file to whoever holds its token (the owner / shared check removed)."""
    from rkapp import uploads

    def find(token, requester):
        with uploads._lock:
            entry = uploads._entry(token)
            return None if entry is None else (entry.name, entry.content)

    replace_everywhere(uploads.find, find)


def bound_check_removed(replace_everywhere) -> None:
    """rkapp.state.check lets every value through (Streamlit then clamps or falls back quietly)."""
    import rkapp.state

    replace_everywhere(rkapp.state.check, lambda *args, **kwargs: None)


def huge_run_let_through(replace_everywhere) -> None:
    """rkapp.guard.run_or_wait starts every run at once: no refusal, no run button (a silent long run)."""
    import rkapp.guard

    def run_or_wait(cost, *, key, params, what, fits="", autorun=False):
        return True

    replace_everywhere(rkapp.guard.run_or_wait, run_or_wait)


def internal_wording(replace_everywhere) -> None:
    """The data load fails with numpy's own message, shown as it is."""
    import rkapp.data

    original = rkapp.data.load_data

    def load_data(view):
        original(view)
        raise ValueError("setting an array element with a sequence. The requested array has an inhomogeneous "
                         "shape after 1 dimensions.")

    replace_everywhere(original, load_data)
