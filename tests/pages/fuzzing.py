"""The dashboard's fuzz harness: cases, the run of one case, and what every answer must satisfy.

A fuzz run is a list of :class:`Case` drawn from one seed (``RK_FUZZ_SEED``, else the clock; printed
with every failure so that it can be replayed):

- control cases: every page at legal, small settings; each must answer with its main output (a plotly
  chart) and no refusal - a harness that only asks "no exception" passes an app that refuses everything;
- probe cases: user text that is Markdown (a link, bold) as an uploaded file's name and as URL values,
  which the page must show literally;
- hostile cases: random legal and garbage URL values for the page's fields (from the state table), malformed
  uploads through the real ``st.file_uploader`` (AppTest's ``file_uploader.set_value``), then random
  widget changes and a rerun.

Every run of a case must satisfy :func:`check`: no exception, no "Something went wrong", no traceback, no
user text read as Markdown, an answer within ``SECONDS`` (5 s; a page's first run, which imports
scikit-learn and plotly, gets ``COLD_SECONDS``; both times the machine's load factor) and ``MEGABYTES``
(500 MB more resident memory than before the run, sampled every 5 ms, beside what the page announced for
its run), the main output drawn unless the page refused or waits for its run
button, and page oracles (the Gram estimate drawn is the one computed, and follows the exact Gram within a
bound derived from the library's exact variance: :func:`_follows_exact`).

``python -m tests.pages.fuzzing --mutant NAME`` runs the harness in a process where the app has been
broken on purpose (:data:`MUTANTS`, monkeypatched here, never in the app's code); it exits with 1 when
the harness caught the mutant, 0 when it did not.
"""
from __future__ import annotations

import argparse
import base64
import json
import math
import os
import random
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(REPO))

from rkapp.layout import PRELOAD_META  # noqa: E402
from rkapp.navigation import PAGES, PAGES_DIR  # noqa: E402
from rkapp.state import FIELDS  # noqa: E402
from tests.pages import fuzz_cases  # noqa: E402

SECONDS = float(os.environ.get("RK_FUZZ_SECONDS", "5"))
COLD_SECONDS = 60.0
MEGABYTES = 500
#: AppTest's own bound on one run, far above SECONDS: a run past it is reported, not waited for
APP_TIMEOUT = 90

LINK = "**Your session expired.** [Click here](https://attacker.invalid/login)"
#: Markdown the app would render if it showed user text unescaped
RAW_MARKDOWN = re.compile(r"(?<!\\)\]\((?:https?:|/)|(?<!\\)!\[|(?<!\\)\*\*Your session")
GARBAGE_TEXT = [LINK, "![img](https://attacker.invalid/p.png)", "nan", "NaN", "inf", "-inf", "-1", "-999999999",
                "0", "1e308", "1e400", "9" * 400, "x" * 10_000, "", " ", ",,,", "; ; {}", "{}", "0-3 | 4-", "a|b",
                "\u202e\u0000\ufeff", "'; DROP TABLE x; --", "%00", "../../etc/passwd", "0,1; 2,3; 999999",
                "true", "1.5", "-0.0", "0x10", "rademacher,rademacher,gaussian"]
NUMBER_GARBAGE = [math.nan, math.inf, -math.inf, 1e308, -1e308, 10**30, -(10**30), -1, 0]
#: pages whose main output is not a chart (Home: text and links)
NO_MAIN_CHART = {"app.py"}


# ----------------------------------------------------------------------------- cases
@dataclass
class Case:
    kind: str  # "control", "probe", "hostile", "two_sessions", "bounds" or "largest" (tests.pages.fuzz_cases)
    path: Path
    query: dict = field(default_factory=dict)
    upload: tuple[str, bytes] | None = None
    poke_seed: int | None = None  # change widgets at random after the first run (hostile cases)

    def describe(self) -> str:
        query = {k: v[:40] for k, v in self.query.items()}
        upload = None if self.upload is None else (self.upload[0][:50], len(self.upload[1]))
        return f"{self.kind} {self.path.name} query={query} upload={upload} poke={self.poke_seed}"


def page_paths() -> list[Path]:
    """app.py (the navigation, opening Home) and every page of the navigation's list."""
    return [REPO / "app.py", *(PAGES_DIR / e.file for e in PAGES)]


def _title(path: Path) -> str:
    return next((e.title for e in PAGES if e.file == path.name), "Home")


def upload_corpus(rng: random.Random) -> dict[str, bytes]:
    """Malformed (and a few odd but valid) uploads, by file name; the values vary with the seed."""
    n = rng.randint(12, 60)
    rows = "\n".join(f"{rng.random():.3f},{rng.random():.3f},{rng.random():.3f},{i % 2}" for i in range(n))
    width = rng.choice([5_000, 100_000])
    return {
        "huge_index.svm": f"1 1:1 {rng.choice([10**8, 10**9, 2**31])}:2\n".encode(),
        "nan_values.svm": b"1 1:nan 2:inf\n-1 1:0.5 2:0.25\n",
        "negative_index.svm": b"1 -5:1 2:2\n",
        "utf16.csv": ("a,b,c,target\n" + rows).encode("utf-16"),
        "latin1.csv": ("café,b,c,target\n" + rows).encode("latin-1"),
        "semicolon.csv": ("a;b;c;target\n" + rows.replace(",", ";")).encode(),
        "comma_decimal.csv": ("a;b;c;target\n" + rows.replace(",", ";").replace(".", ",")).encode(),
        "empty.csv": b"",
        "header_only.csv": b"a,b,target\n",
        "garbage.svm": bytes(rng.randrange(256) for _ in range(2000)),
        "garbage.csv": bytes(rng.randrange(256) for _ in range(2000)),
        "wide.csv": (",".join(f"c{i}" for i in range(width)) + "\n"
                     + "\n".join(",".join("1" for _ in range(width)) for _ in range(3)) + "\n").encode(),
        "continuous_target.csv": ("a,b,c,target\n" + "\n".join(f"{i},{i * 2},{i % 3},{i * 0.37}"
                                                              for i in range(n))).encode(),
        "missing.csv": b"a,b,target\n1,,0\n2,3,1\n",
        "valid.csv": ("a,b,c,target\n" + rows).encode(),
    }


def _legal_value(rng: random.Random, f):
    if f.options is not None:
        opts = list(f.options())
        return tuple(rng.sample(opts, rng.randint(1, len(opts)))) if f.multi else rng.choice(opts)
    if isinstance(f.default, bool):
        return rng.choice([True, False])
    if isinstance(f.default, int) and f.min_value is not None:
        # mostly small: large legal values are covered by the run protocol's estimate (button or refusal)
        return rng.randint(f.min_value, min(f.max_value, f.min_value + rng.choice([10, 100, 1000, 10**6])))
    if isinstance(f.default, float) and f.min_value is not None:
        return rng.uniform(f.min_value, min(f.max_value, 10.0))
    return f.default


def random_query(rng: random.Random, page_title: str) -> dict[str, str]:
    """A URL: some fields of the table (shared ones and this page's), legal or garbage, under a name or alias."""
    fields = [f for f in FIELDS.values() if f.view or f.page == page_title]
    query = {"n": str(rng.choice([10, 30, 60]))}  # small data; larger legal n comes from the table
    for f in rng.sample(fields, rng.randint(1, min(8, len(fields)))):
        key = rng.choice([f.name, *f.aliases])
        query[key] = f.dump(_legal_value(rng, f)) if rng.random() < 0.5 else rng.choice(GARBAGE_TEXT)
    return query


def make_cases(seed: int, hostile: int) -> list[Case]:
    """Probes, two sessions, then page by page (in a seeded order) its control, bounds and largest cases, then
    ``hostile`` random cases."""
    rng = random.Random(seed)
    paths = page_paths()
    gram = PAGES_DIR / "1_Gram_matrices.py"
    valid = upload_corpus(rng)["valid.csv"]
    cases = [Case("probe", gram, {"dataset": "upload", "n": "30"}, (f"{LINK}.csv", valid)),
             Case("probe", PAGES_DIR / "2_Itemsets.py", {"family": "custom", "itemsets": LINK, "n": "30"})]
    # the Gram page's control first: a mutant that refuses every run or drops every chart shows there at once
    cases.append(Case("two_sessions", gram, {"dataset": "upload", "n": "30", "D": "64"}, poke_seed=rng.randrange(2**31)))
    order = [gram, *rng.sample([p for p in paths if p != gram], len(paths) - 1)]
    # every field of the table in every run: the Gram page draws the offset c with the polynomial kernel and the
    # width γ with RBF, the Itemsets page the family with the itemset kernel, the RFF page its comparison's
    # settings behind the toggle; the other pages with a kernel of the seed
    special = {gram: [("polynomial", {}), ("rbf", {})], PAGES_DIR / "2_Itemsets.py": [("itemset", {})],
               PAGES_DIR / "8_Random_Fourier_features.py": [("rbf", {}), ("rbf", {"rff_struct": "true"})]}
    # page by page: its control (which records its size widgets' bounds), bounds and largest cases; a mutant
    # that only a bounds or largest case sees shows on the first page (the harness stops there)
    for path in order:
        cases.append(Case("control", path, {"n": str(rng.choice([20, 30, 40])), "seed": str(rng.randrange(1000))}))
        for kernel, legal in special.get(path, [(rng.choice(["anova", "up_to", "polynomial", "rbf"]), {})]):
            query = {**fuzz_cases.bounds_query(rng, _title(path), kernel), **legal}
            cases.append(Case("bounds", path, query))
        cases.append(Case("largest", path, {"n": "30"}))
    uploads = upload_corpus(rng)
    for _ in range(hostile):
        path = rng.choice(paths)
        case = Case("hostile", path, random_query(rng, _title(path)), poke_seed=rng.randrange(2**31))
        if rng.random() < 0.4:
            name = rng.choice(sorted(uploads))
            case.upload = (rng.choice([name, f"{LINK}{Path(name).suffix}"]), uploads[name])
            case.query["dataset"] = "upload"
        cases.append(case)
    return cases


# ----------------------------------------------------------------------------- running a case
class PeakMemory:
    """Peak resident memory above the level at start, sampled every 5 ms from /proc/self/statm."""

    def __init__(self):
        self._page = os.sysconf("SC_PAGE_SIZE")
        self._stop = threading.Event()
        self.peak = 0
        self.runnable: list[int] = []

    def _rss(self) -> int:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * self._page

    def __enter__(self):
        self._base = self._rss()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        ticks = 0
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, self._rss() - self._base)
            ticks += 1
            if ticks % 10 == 1:  # every 50 ms: how many tasks of the whole machine wanted a core just now
                self.runnable.append(_procs_running())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss() - self._base)
        return False


def _procs_running() -> int:
    """Tasks of the machine running or ready to run now (/proc/stat's procs_running), 0 if unknown."""
    try:
        with open("/proc/stat") as handle:
            return next((int(line.split()[1]) for line in handle if line.startswith("procs_running")), 0)
    except OSError:
        return 0


#: Mean runnable tasks during the last timed run (sampled by PeakMemory), 0 before any.
_last_run_runnable = [0.0]


def load_factor() -> float:
    """How many times longer a run takes now than on an idle machine, at most: tasks wanting a core per core,
    at least 1 - the larger of the 1-minute load average and the mean sampled during the last run (the load
    average lags a burst by a minute). The time limits are for the app's work; on a machine shared by more
    tasks than cores each gets a 1 / load_factor share of a core, so the same work takes that many times
    longer (a slow page is still slow: it is slow by that factor too)."""
    cores = os.cpu_count() or 1
    return max(1.0, os.getloadavg()[0] / cores, _last_run_runnable[0] / cores)


def _timed_run(at, run) -> tuple[float, int, str | None]:
    """(seconds, peak bytes, AppTest's timeout message or None) of one run."""
    with PeakMemory() as memory:
        started = time.perf_counter()
        try:
            run()
            timeout = None
        except RuntimeError as exc:  # AppTest's timeout
            timeout = str(exc)
        seconds = time.perf_counter() - started
    _last_run_runnable[0] = sum(memory.runnable) / len(memory.runnable) if memory.runnable else 0.0
    return seconds, memory.peak, timeout


def run_case(case: Case, warm: set) -> list[str]:
    """Run one case (and its widget changes); the failures found, each naming the case. A case found slow
    only is run once more, and slow only if both runs were: on a shared machine a burst of load from
    elsewhere can stretch one run past the limit, a slow page is slow twice."""
    failures = _run_any_case(case, warm)
    if failures and all(" took " in f for f in failures):
        failures = _run_any_case(case, warm)
    return failures


def _run_any_case(case: Case, warm: set) -> list[str]:
    runners = {"two_sessions": lambda: fuzz_cases.run_two_sessions(case, sys.modules[__name__]),
               "bounds": lambda: fuzz_cases.run_bounds(case, warm, sys.modules[__name__]),
               "largest": lambda: fuzz_cases.run_largest(case, warm, sys.modules[__name__])}
    if case.kind not in runners:
        return _run_case_once(case, warm)
    return [f"{case.describe()}: {f}" for f in runners[case.kind]()]


def _run_case_once(case: Case, warm: set) -> list[str]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(case.path), default_timeout=APP_TIMEOUT)
    for key, value in case.query.items():
        at.query_params[key] = value
    failures = []
    runs = [("first run", at.run)]
    if case.upload is not None:
        runs.append(("upload", lambda: _upload(at, case.upload)))
    if case.poke_seed is not None:
        runs.append(("widget changes", lambda: _poke_widgets(random.Random(case.poke_seed), at)))
    for what, run in runs:
        limit = SECONDS if case.path in warm else COLD_SECONDS
        seconds, peak, timeout = _timed_run(at, run)
        warm.add(case.path)
        if case.kind == "control" and what == "first run":
            fuzz_cases.record_sizes(at, fuzz_cases.PAGE_SIZES.setdefault(case.path, {}))
        found = check(at, case, seconds, peak, limit, uploaded=what == "upload")
        found += [f"AppTest timeout: {timeout}"] if timeout else []
        failures += [f"{case.describe()} [{what}]: {f}" for f in found]
        if found:
            break
    return failures


def _upload(at, upload: tuple[str, bytes]) -> None:
    """The file through the sidebar's st.file_uploader, as a browser sends it; then the rerun."""
    if not at.file_uploader:  # a page without data settings (the probe's page has them: checked there)
        return
    name, content = upload
    at.file_uploader[0].set_value((name, content, "text/csv" if name.endswith(".csv") else "text/plain"))
    at.run()


def _enabled(widgets) -> list:
    return [w for w in widgets if not getattr(w.proto, "disabled", False)]


def _poke_widgets(rng: random.Random, at) -> None:
    """Set a few widgets to random legal or illegal values, then rerun."""
    for widget in rng.sample(_enabled(at.number_input), min(2, len(_enabled(at.number_input)))):
        if rng.random() < 0.5:
            value = rng.choice(NUMBER_GARBAGE)
        else:
            lo = widget.min if widget.min is not None else 0
            hi = widget.max if widget.max is not None else lo + 100
            value = rng.uniform(lo, min(hi, lo + 100))
            value = int(value) if isinstance(widget.value, int) else value
        widget.set_value(value)
    for widget in rng.sample(_enabled(at.text_input), min(1, len(_enabled(at.text_input)))):
        widget.set_value(rng.choice(GARBAGE_TEXT))
    for widget in rng.sample(_enabled(at.checkbox), min(1, len(_enabled(at.checkbox)))):
        widget.set_value(not widget.value)
    at.run()


# ----------------------------------------------------------------------------- what every answer must satisfy
TEXT_ELEMENTS = ("markdown", "caption", "error", "warning", "info", "success", "title", "header", "subheader")


def _texts(at) -> list[str]:
    return [el.value for kind in TEXT_ELEMENTS for el in at.get(kind) if isinstance(el.value, str)]


def figures(at) -> list[dict]:
    """The figure JSON of every plotly chart the page drew (not the chart-library preload)."""
    found = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    return [f for f in found if f.get("layout", {}).get("meta") != PRELOAD_META]


def _refused_or_waiting(at) -> bool:
    """An error or a warning in place (a refusal), or a run button waiting to be pressed."""
    return bool(at.error) or bool(at.warning) or bool(at.info) or bool(at.button)


#: Every error, warning and info message the harness saw in this process (as read), with the first case showing it.
MESSAGES: dict[str, str] = {}


def announced_bytes(at) -> int:
    """The memory the page's run protocol announced for this run (rkapp.guard.run_or_wait's cost: what the
    server admits it for), 0 when none: a legal large run may use that much on top of MEGABYTES."""
    try:
        cost = at.session_state["_rk_run_cost"]
    except (KeyError, AttributeError):
        return 0
    return int(getattr(cost, "bytes", 0) or 0)


def check(at, case: Case, seconds: float, peak: int, limit: float, uploaded: bool = False) -> list[str]:
    """What a run of ``case`` broke (empty: nothing); ``uploaded``: the run right after the file was given."""
    failures = [f"exception: {e.value}"[:300] for e in at.exception]
    texts = _texts(at)
    failures += [f"shown: {t[:200]!r}" for t in texts if "Something went wrong" in t or "Traceback" in t]
    failures += [f"user text read as Markdown: {t[:200]!r}" for t in texts if RAW_MARKDOWN.search(t)]
    for message in (fuzz_cases.unescaped(el.value) for kind in ("error", "warning", "info") for el in at.get(kind)):
        MESSAGES.setdefault(message, case.describe())
        failures += [f"not in the user's words ({problem})" for problem in fuzz_cases.wording_problems(message)]
    if seconds > limit * load_factor():
        failures.append(f" took {seconds:.1f} s (limit {limit:g} s x {load_factor():.2g} for the machine's load; "
                        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    announced = announced_bytes(at)
    if peak > MEGABYTES * 2**20 + announced:
        failures.append(f"used {peak / 2**20:.0f} MB more memory (limit {MEGABYTES} MB beside the "
                        f"{announced / 2**20:.0f} MB the page announced for its run)")
    drawn = figures(at)
    if case.kind == "control":
        if at.error or (at.warning and not at.button):
            failures.append(f"refused legal small settings: {[e.value[:150] for e in (*at.error, *at.warning)]}")
    # a view whose run takes longer than the auto-run limit (the Speed and accuracy study's seeds and sizes) waits for
    # its button beside its estimate: that is its main output until the user presses it, as on the page
    waiting_for_run = any((b.key or "").endswith("_run") for b in at.button) and any(
        m.value.startswith(":material/timer:") for m in at.markdown)
    if case.path.name not in NO_MAIN_CHART and not drawn and not waiting_for_run and (
            case.kind == "control" or not _refused_or_waiting(at)):
        failures.append("no main output: the page drew no chart" + ("" if case.kind == "control" else
                                                                    " and gave no refusal"))
    if case.kind == "probe" and uploaded and not any("attacker" in t for t in texts):
        failures.append("the uploaded file's name is not shown (the literal-text probe checks nothing)")
    failures += _gram_oracle(case, drawn)
    return failures


def _array(z) -> "np.ndarray":
    import numpy as np

    if isinstance(z, dict):  # plotly's typed-array JSON
        values = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"])
        return values.reshape([int(v) for v in str(z["shape"]).split(",")]) if "shape" in z else values
    return np.asarray(z, dtype=float)


#: Level of the Gram oracle's statistical test: a correct app fails one check with probability at most this
#: (Markov's inequality, below). A seed runs the Gram page a few times (probe, control, hostile cases: up to
#: about 10 checks), so 200 seeds make at most ~2,000 checks: at most 0.02 false alarms expected in all.
GRAM_LEVEL = 1e-5
#: Rows of the Gram matrices the statistical test looks at (any fixed subset keeps the test valid), and the
#: work of the exact variance it needs (pairs x d x (m + 1)^3 steps of rkcore.theory's dynamic program).
GRAM_ORACLE_ROWS = 60
GRAM_ORACLE_WORK = 3 * 10**7
UNIT_ROUNDOFF = 2.0**-53


@dataclass
class GramRun:
    """One computation of the Gram page (recorded by the spy around ``rkcore.studies.gram.gram_pair``)."""
    X: object
    spec: object
    map_key: str
    n_components: int
    distribution: str | None
    K: "np.ndarray"
    K_hat: "np.ndarray"


#: The Gram computations of this process, newest last (the page caches up to 16 views: a rerun that hits
#: the cache draws one of these).
GRAM_RUNS: list[GramRun] = []


def spy_on_gram_pair() -> None:
    """Record every (inputs, K, K̂) of ``gram_pair`` in :data:`GRAM_RUNS` (idempotent; a mutant installed
    afterwards wraps the spy, so the spy sees what the library computed)."""
    import rkcore.studies.gram

    if any(getattr(f, "_rk_spy", False) for f in _wrapped_chain(rkcore.studies.gram.gram_pair)):
        return  # installed (perhaps wrapped by a mutant since: a second spy outside it would see the mutant)
    original = rkcore.studies.gram.gram_pair

    def gram_pair(X, spec, map_key="rk", n_components=256, distribution=None, random_state=0):
        K, K_hat = original(X, spec, map_key, n_components, distribution, random_state)
        GRAM_RUNS.append(GramRun(X, spec, map_key, n_components, distribution, K, K_hat))
        del GRAM_RUNS[:-32]
        return K, K_hat

    gram_pair._rk_spy, gram_pair.__wrapped__ = True, original
    _replace_everywhere(original, gram_pair)


def _wrapped_chain(function) -> list:
    """``function`` and what it wraps (``__wrapped__``, set by the mutants and the spy), outermost first."""
    chain = [function]
    while hasattr(chain[-1], "__wrapped__"):
        chain.append(chain[-1].__wrapped__)
    return chain


def _same(drawn: "np.ndarray", computed: "np.ndarray") -> bool:
    import numpy as np

    from rkcore.studies.gram import block_average

    small = block_average(computed)[0]
    scale = float(np.nanmax(np.abs(small), initial=0.0)) if small.size else 0.0
    return small.shape == drawn.shape and np.allclose(drawn, small, rtol=1e-6, atol=1e-6 * scale, equal_nan=True)


def _gram_oracle(case: Case, drawn: list[dict]) -> list[str]:
    """The Gram page: the estimate K̂ of the heatmaps is the K̂ the library computed for the exact K drawn
    beside it (an estimate zeroed or changed on its way to the chart shows here), and follows K within the
    spread the library's exact variance gives (an all-zero estimate fails there where the test has power;
    a fixed "not all zero" rule would fail a correct D = 1 estimate whose one feature is 0 on every row)."""
    if case.path.name != "1_Gram_matrices.py":
        return []
    for figure in drawn:
        maps = [t for t in figure.get("data", []) if t.get("type") == "heatmap" and t.get("z") is not None]
        if len(maps) != 2:
            continue
        exact, estimate = (_array(t["z"]).astype(float) for t in maps)
        same_K = [r for r in reversed(GRAM_RUNS) if _same(exact, r.K)]
        if not same_K:  # the spy is not installed (the harness imported elsewhere): no inputs to test against
            continue
        # several views share a K (same data and kernel, other D or seed), and a cached view records nothing
        # when drawn again: the drawn pair must be one of the computed pairs
        run = next((r for r in same_K if _same(estimate, r.K_hat)), None)
        if run is None:
            return ["the Gram estimate drawn is not the K̂ computed with the exact K drawn beside it"]
        return _follows_exact(run)
    return []


def _follows_exact(run: GramRun) -> list[str]:
    """The statistical half of the Gram oracle, derived from the exact variance (no tuned threshold).

    K̂ = Z Zᵀ of the RK map is an unbiased mean of D i.i.d. terms, and rkcore.theory.variance.rk_variance_gram gives
    the exact variance V_ij of each entry. So the squared error R = Σ (K̂_ij - K_ij)² over any fixed set of
    entries has expectation exactly Σ V_ij, and by Markov's inequality P(R > Σ V_ij / GRAM_LEVEL) <=
    GRAM_LEVEL for a correct app, at every D, m and data (D = 1 included: its large V widens the bound
    instead of a fixed correlation failing it). Rounding adds at most about (D + d) u sqrt(K_ii K_jj) per
    entry for each of K and K̂ (Cauchy-Schwarz on the sums of products), allowed on top. The test has power
    against gross errors (a scale factor, another kernel, a lost 1/D), not against subtle ones; those are
    the library's Monte Carlo tests' job. Skipped (no exact variance known): other maps than RK, kernels
    outside rk_variance_gram's families (polynomial, RBF), weights drawn in orthogonal blocks."""
    import numpy as np

    from rkcore.theory.variance import rk_variance_gram

    if run.map_key != "rk" or run.distribution is None:
        return []
    n, d = run.X.shape
    family = run.spec.family(d)
    if family is None:
        return []
    states = (family.degree + 1) ** 3 if family.kind in ("anova", "up_to") else 1  # closed forms otherwise
    rows = min(n, GRAM_ORACLE_ROWS, int(math.sqrt(2 * GRAM_ORACLE_WORK / (d * states))))
    if rows < 2:
        return []
    try:
        V = rk_variance_gram(run.X[:rows], run.n_components, kernel=family, distribution=run.distribution)
    except ValueError:  # a family or distribution outside the exact variance
        return []
    K, K_hat = run.K[:rows, :rows], run.K_hat[:rows, :rows]
    with np.errstate(all="ignore"):
        scale = np.sqrt(np.abs(np.diag(K))) + np.sqrt(np.abs(np.diag(K_hat)))
        rounding = 4 * (run.n_components + d) * UNIT_ROUNDOFF * np.outer(scale, scale)
        squared_error = float(((K_hat - K) ** 2).sum())
        allowed = float(V.sum()) / GRAM_LEVEL + float((rounding**2).sum())
    if not np.isfinite(allowed) or squared_error <= allowed:
        return []
    return [f"the Gram estimate does not follow the exact Gram: squared error {squared_error:.3g} over the first "
            f"{rows} rows, beyond {allowed:.3g} = (its exact expectation {V.sum():.3g}) / {GRAM_LEVEL:g} "
            f"(Markov; D = {run.n_components}, {run.distribution} weights)"]


def run_fuzz(seed: int, hostile: int, *, stop_at_first: bool = False, log=print) -> list[str]:
    """Run every case of ``seed``; the failures (stops at the first with ``stop_at_first``)."""
    spy_on_gram_pair()
    warm: set = set()
    failures: list[str] = []
    for number, case in enumerate(make_cases(seed, hostile)):
        found = run_case(case, warm)
        failures += [f"case {number}: {f}" for f in found]
        if found and stop_at_first:
            break
    log(f"fuzz: seed {seed}, {len(failures)} failure(s)")
    return failures


# ----------------------------------------------------------------------------- mutants (test-only)
def _replace_everywhere(original, replacement) -> int:
    """Bind ``replacement`` wherever a loaded rkapp/rkcore module (or the page scripts' imports) holds
    ``original``; returns how many bindings changed."""
    changed = 0
    for module in list(sys.modules.values()):
        name = getattr(module, "__name__", "")
        if not name.startswith(("rkapp", "rkcore")):
            continue
        for attribute, value in list(vars(module).items()):
            if value is original:
                setattr(module, attribute, replacement)
                changed += 1
    if not changed:
        raise RuntimeError(f"mutant target {original!r} is bound nowhere")
    return changed


def _mutate_load(effect):
    import rkapp.data

    original = rkapp.data.load_data

    def load_data(view):
        effect()
        return original(view)

    _replace_everywhere(original, load_data)


def _raise():
    raise RuntimeError("mutant: data load failed")


def _hog_memory():
    import numpy as np

    block = np.ones(80 * 2**20)  # 640 MB, touched
    time.sleep(0.2)
    del block


def _no_escaping():
    import rkapp.guard

    _replace_everywhere(rkapp.guard.literal, lambda text: str(text))


def _gram_zeroed():
    import numpy as np

    import rkcore.studies.gram

    original = rkcore.studies.gram.gram_pair

    def gram_pair(*args, **kwargs):
        K, K_hat = original(*args, **kwargs)
        return K, np.zeros_like(K_hat)

    gram_pair.__wrapped__ = original

    _replace_everywhere(original, gram_pair)


def _every_run_refused():
    import rkapp.guard

    def refuse(cost, what, fits=""):
        raise ValueError(f"Computing {what} is refused.")

    _replace_everywhere(rkapp.guard.refuse_beyond_limits, refuse)


def _charts_dropped():
    import rkapp.layout

    _replace_everywhere(rkapp.layout.chart, lambda *args, **kwargs: None)


MUTANTS = {
    "every_load_raises": lambda: _mutate_load(_raise),
    "escaping_removed": _no_escaping,
    "gram_estimate_zeroed": _gram_zeroed,
    "every_run_refused": _every_run_refused,
    "charts_dropped": _charts_dropped,
    # past the limit at today's load on each load; a page's first run loads its data twice (the page, then its
    # cached computation), which covers a larger load sampled during the run
    "slow_load": lambda: _mutate_load(lambda: time.sleep(SECONDS * load_factor() + 1)),
    "memory_hog": lambda: _mutate_load(_hog_memory),
    # issue 35: a case each (tests.pages.fuzz_cases) that only it catches
    "upload_privacy_removed": lambda: fuzz_cases.privacy_removed(_replace_everywhere),
    "bound_check_removed": lambda: fuzz_cases.bound_check_removed(_replace_everywhere),
    "huge_run_let_through": lambda: fuzz_cases.huge_run_let_through(_replace_everywhere),
    "internal_wording_shown": lambda: fuzz_cases.internal_wording(_replace_everywhere),
}


def _preload_app_modules() -> None:
    """Import what the pages import, so that a mutant patches every binding before the first run."""
    import rkapp  # noqa: F401
    import rkapp.data  # noqa: F401
    import rkcore.studies.gram  # noqa: F401


def many_seeds(first: int, count: int, hostile: int, page: str, kinds: set[str], budget: float) -> int:
    """The false-alarm count: every case of ``kinds`` on ``page`` that a full run of each seed would make (the
    same cases: drawn from the full list, then filtered), seeds ``first`` .. ``first + count - 1``, until
    ``budget`` seconds are spent; one line per seed, then the totals. Returns the number of failing seeds."""
    import streamlit as st

    started, failing, done, runs = time.perf_counter(), 0, 0, 0
    warm: set = set()
    spy_on_gram_pair()
    for seed in range(first, first + count):
        if time.perf_counter() - started > budget:
            break
        st.cache_data.clear()
        cases = [c for c in make_cases(seed, hostile) if c.path.name == page and c.kind in kinds]
        failures = [f for number, case in enumerate(cases) for f in run_case(case, warm)]
        runs, done = runs + len(cases), done + 1
        failing += bool(failures)
        print(f"seed {seed}: {len(cases)} cases, {len(failures)} failure(s) {failures[:2]}", flush=True)
    print(f"seeds {done}, failing seeds {failing}, cases {runs}, {time.perf_counter() - started:.0f} s", flush=True)
    return failing


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Run the fuzz harness on a mutant of the app, or many seeds of "
                                                 "one page's cases (--seeds: the false-alarm count).")
    parser.add_argument("--mutant", choices=sorted(MUTANTS), default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hostile", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=0, help="run this many seeds from --seed (no mutant)")
    parser.add_argument("--page", default="1_Gram_matrices.py")
    parser.add_argument("--kinds", default="probe,control,hostile")
    parser.add_argument("--budget", type=float, default=3600.0, help="seconds; stop starting seeds after it")
    args = parser.parse_args(argv)
    _preload_app_modules()
    if args.seeds:
        os._exit(1 if many_seeds(args.seed, args.seeds, args.hostile, args.page, set(args.kinds.split(",")),
                                 args.budget) else 0)
    spy_on_gram_pair()
    if args.mutant:
        MUTANTS[args.mutant]()
    failures = run_fuzz(args.seed, args.hostile, stop_at_first=True, log=lambda text: None)
    print("\n".join(failures[:3]) if failures else "no failure", flush=True)
    sys.stderr.flush()
    # os._exit: a mutant's silent long run may still be computing in its script thread; do not wait for it
    os._exit(1 if failures else 0)


if __name__ == "__main__":
    # run as tests.pages.fuzzing, not __main__: fuzz_cases imports that module, and the spy's records must be
    # the ones the oracle reads (one module, not two copies)
    from tests.pages import fuzzing

    sys.exit(fuzzing.main())
