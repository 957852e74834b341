"""Timing engine for the random feature maps, and the paper's Figure 1 from the command line.

:func:`time_maps` times ``fit`` and ``transform`` of registry maps on N(0, 1) data and
returns one row per (map, d, D, n, repeat, phase). :func:`summarize` gives medians
and spreads, :func:`growth_exponent` the log-log slope of time against d, D or n,
and :func:`crossover` the smallest d from which one map stays faster than another.

Command line (paper Figure 1: RK vs SCRK for the second-order ANOVA kernel)::

    python -m rkcore timing --figure1 [--out figure1.csv] [--repeats 3]
    python -m rkcore timing --maps rk scrk --d 256 512 --D 4096 --n 500 --repeats 5
"""
from __future__ import annotations

import gc
import math
import time
import warnings
from itertools import product
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np
import pandas as pd

from ..registry import MAPS, KernelSpec, get_map, make_map
from ..base.limits import nbytes, require_memory
from ..base.validation import check_int, check_int_list
# Paper Figure 1 (section 6): ANOVA m = 2, D = 8192 (printed as 8092 in the paper), N(0, 1) data with
# d in {512, ..., 4096}; the paper does not state n, we use 1000. Defined once, in rkcore.studies.paper.
from .paper import FIGURE1  # noqa: F401  (public here too: the timing engine's preset)

COLUMNS = ["map", "d", "D", "n", "repeat", "phase", "seconds"]
DIMENSIONS = ("d", "D", "n")



def timing_kernel(map_key: str, degree: int = 2) -> KernelSpec:
    """The KernelSpec a map is timed on: its registry ``timing_kernel``, the kernel the paper pairs
    it with (RK and SCRK: ANOVA; TS, RM, Nystroem: the polynomial kernel with c = 1; RFF: RBF).

    Parameters
    ----------
    map_key : str
        Registry key of the map.
    degree : int, default 2
        Order m of the kernel.

    Returns
    -------
    KernelSpec
        The kernel the map is timed on.
    """
    return KernelSpec(name=get_map(map_key).timing_kernel, degree=degree)


def time_maps(map_keys: Iterable[str], d_values, D_values, n_values, *, kernel_degree: int = 2,
              repeats: int = 5, warmup: int = 1, random_state: int = 0,
              progress: Callable[[float, str], None] | None = None, client=None) -> pd.DataFrame:
    """Time ``fit`` and ``transform`` of each map for every (d, D, n).

    Each map is built with :func:`rkcore.registry.make_map` on the kernel from
    :func:`timing_kernel` of degree ``kernel_degree``. Data are N(0, 1), drawn once
    per (d, n) from ``random_state``. Every run builds a new map (seed
    ``random_state + repeat``) and times ``fit(X)`` and ``transform(X)`` with
    :func:`time.perf_counter`, the garbage collector off (as :mod:`timeit` does).
    ``warmup`` untimed runs come first. Nothing is cached.

    Parameters
    ----------
    map_keys : str or iterable of str
        Keys of :data:`rkcore.registry.MAPS`.
    d_values, D_values, n_values : int or iterable of int
        Numbers of input features, of random features and of rows (all >= 1).
    kernel_degree : int, default=2
        Order m of the kernel each map is timed on.
    repeats : int, default=5
        Timed runs per (map, d, D, n).
    warmup : int, default=1
        Untimed runs first.
    random_state : int, default=0
        Seeds the data and, with the repeat number, each map.
    progress : callable(fraction, message) or None, default=None
        Called after every run (on Dask: after every (map, d, D, n) cell), ending with 1.0.
    client : dask.distributed.Client or None, default=None
        Time the (map, d, D, n) cells on this Dask cluster, one task per cell (its
        warm-up and repeats run back to back on one worker). Data and seeds are those
        of a local run; the times are the workers'.

    Returns
    -------
    DataFrame
        Tidy: columns map, d, D, n, repeat, phase ("fit" or "transform"), seconds.

    Examples
    --------
    >>> from rkcore.studies.timing import time_maps
    >>> df = time_maps(["rk", "scrk"], [16], [64], [50], repeats=2)
    >>> df.groupby(["map", "phase"]).size().tolist()
    [2, 2, 2, 2]
    """
    map_keys, specs, d_values, D_values, n_values, repeats, warmup = _checked_sweep(
        map_keys, d_values, D_values, n_values, kernel_degree, repeats, warmup)
    if client is not None:
        cells = [(key, specs[key], d, D, n, repeats, warmup, random_state)
                 for d, n in product(d_values, n_values) for D, key in product(D_values, map_keys)]
        return pd.DataFrame(_time_on_dask(client, cells, progress), columns=COLUMNS)
    total = len(d_values) * len(n_values) * len(D_values) * len(map_keys) * (warmup + repeats)
    done = 0
    rows = []
    for d, n in product(d_values, n_values):
        X = _timing_data(random_state, d, n)
        for D, key in product(D_values, map_keys):
            for repeat, run_rows in _cell_runs(key, specs[key], d, D, n, X, repeats, warmup, random_state):
                rows += run_rows
                done += 1
                if progress is not None:
                    what = "warm-up" if repeat < 0 else f"repeat {repeat + 1}/{repeats}"
                    progress(done / total, f"{key} d={d} D={D} n={n} {what}")
    return pd.DataFrame(rows, columns=COLUMNS)


def _checked_sweep(map_keys, d_values, D_values, n_values, kernel_degree: int, repeats, warmup
                   ) -> tuple[list[str], dict[str, KernelSpec], list[int], list[int], list[int], int, int]:
    """The sweep of :func:`time_maps` checked: (map keys, {key: timing kernel}, d, D and n values, repeats,
    warm-up runs). Every map's kernel must fit the smallest d."""
    map_keys = [map_keys] if isinstance(map_keys, str) else list(map_keys)
    if not map_keys:
        raise ValueError(f"map_keys is empty; allowed keys: {', '.join(MAPS)}.")
    specs = {key: timing_kernel(key, kernel_degree) for key in map_keys}  # raises on unknown keys
    d_values, D_values, n_values = (check_int_list(v, name) for v, name in
                                    ((d_values, "d_values"), (D_values, "D_values"), (n_values, "n_values")))
    repeats = check_int(repeats, "repeats")
    warmup = check_int(warmup, "warmup", minimum=0)
    for key, spec in specs.items():
        try:
            spec.check_fits(min(d_values))
        except ValueError:
            raise ValueError(f"kernel_degree={kernel_degree} exceeds d={min(d_values)} for map {key!r} "
                             f"(the {spec.name} kernel needs 1 <= degree <= d).") from None
    _require_sweep_memory(map_keys, max(d_values), max(D_values), max(n_values), kernel_degree)
    return map_keys, specs, d_values, D_values, n_values, repeats, warmup


def _require_sweep_memory(map_keys: list[str], d: int, D: int, n: int, degree: int) -> None:
    """Refuse a sweep whose largest cell needs more than the memory budget: its data X, its features Z and
    what the map keeps and its transform's scratch (the registry cost model, as :func:`costs.map_floats` reads it)
    - before the data are drawn. The message names the largest d, D and n that fit (the others as given)."""
    models = [get_map(key).cost for key in map_keys]
    m = max(int(degree), 1)

    def map_part(n_, d_, D_) -> int:
        return math.ceil(max(cost.stored_floats(d_, D_, m) + cost.scratch_floats(n_, d_, D_, m) for cost in models))

    def bytes_for(n_, d_, D_) -> int:
        return nbytes((n_, d_), (n_, D_), (map_part(n_, d_, D_),))

    require_memory({"the data X": (n, d), "the features Z": (n, D), "the map's weights and scratch": (map_part(n, d, D),)},
                   what="This timing sweep", hint="Lower d_values, D_values or n_values.",
                   largest={"d": lambda v: bytes_for(n, v, D), "D": lambda v: bytes_for(n, d, v),
                            "n": lambda v: bytes_for(v, d, D)})


def _timing_data(random_state: int, d: int, n: int) -> np.ndarray:
    """The N(0, 1) data of every (d, n): the same wherever a cell runs (locally or on a Dask worker)."""
    return np.random.default_rng([random_state, d, n]).standard_normal((n, d))


def _cell_runs(key: str, spec: KernelSpec, d: int, D: int, n: int, X: np.ndarray, repeats: int, warmup: int,
               random_state: int) -> Iterator[tuple[int, list[tuple]]]:
    """The warm-up runs, then the timed ones, of one (map, d, D, n) cell: (repeat, rows) per run, repeat < 0
    and no rows for a warm-up run. Each run builds a new map seeded ``random_state + repeat``."""
    for run in range(warmup + repeats):
        repeat = run - warmup
        fit_s, transform_s = _time_once(key, spec, D, random_state + max(repeat, 0), X)
        rows = [(key, d, D, n, repeat, "fit", fit_s), (key, d, D, n, repeat, "transform", transform_s)]
        yield repeat, rows if repeat >= 0 else []


def _time_on_dask(client, cells: list[tuple], progress: Callable[[float, str], None] | None) -> list[tuple]:
    """The rows of every cell, one Dask task per cell (:func:`_time_cell`), progress after each."""
    from .distributed import run_tasks

    rows = []
    for i, (cell, cell_rows) in enumerate(zip(cells, run_tasks(client, _time_cell, cells)), start=1):
        rows += cell_rows
        if progress is not None:
            progress(i / len(cells), f"{cell[0]} d={cell[2]} D={cell[3]} n={cell[4]}")
    return rows


def _time_cell(key: str, spec: KernelSpec, d: int, D: int, n: int, repeats: int, warmup: int,
               random_state: int) -> list[tuple]:
    """Warm-up and timed runs of one (map, d, D, n) cell, on the same data as a local run."""
    X = _timing_data(random_state, d, n)
    return [row for _, rows in _cell_runs(key, spec, d, D, n, X, repeats, warmup, random_state) for row in rows]


def _time_once(key: str, spec: KernelSpec, D: int, seed: int, X: np.ndarray) -> tuple[float, float]:
    estimator = make_map(key, spec, D, random_state=seed)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. Nystroem when D > n: it uses n components
            t0 = time.perf_counter()
            estimator.fit(X)
            t1 = time.perf_counter()
            Z = estimator.transform(X)
            t2 = time.perf_counter()
    finally:
        if gc_was_enabled:
            gc.enable()
    del Z
    return t1 - t0, t2 - t1


def predicted_operations(map_keys: Sequence[str], along: str, values: Sequence[int], *, d: int = 256,
                         D: int = 1024, degree: int = 2) -> pd.DataFrame:
    """Operations per sample predicted by the complexity formulas (registry ``operations``), along d
    or D (the other fixed).

    Returns one row per (map, value): map, label, ``along`` value, operations, slope (the local
    slope of log operations against log ``along``, by finite differences).

    Parameters
    ----------
    map_keys : Sequence[str]
        Registry keys of the maps.
    along : {"d", "D"}
        The dimension that varies.
    values : Sequence[int]
        Its values (sorted and deduplicated).
    d : int, default 256
        Number of input features when ``along`` is "D".
    D : int, default 1024
        Number of random features when ``along`` is "d".
    degree : int, default 2
        Order m of the kernel.

    Returns
    -------
    pandas.DataFrame
        One row per (map, value).
    """
    if along not in ("d", "D"):
        raise ValueError(f"along must be 'd' or 'D', got {along!r}.")
    entries = [get_map(k) for k in map_keys]  # unknown keys raise, listing the registered maps
    x = np.asarray(sorted(set(check_int_list(list(values), "values"))), dtype=np.float64)
    frames = []
    for entry in entries:
        dd, DD = (x, np.full_like(x, D)) if along == "d" else (np.full_like(x, d), x)
        ops = np.asarray(entry.operations(dd, DD, degree), dtype=np.float64) * np.ones_like(x)
        slope = np.gradient(np.log(ops), np.log(x)) if x.size > 1 else np.full_like(x, np.nan)
        frames.append(pd.DataFrame({"map": entry.key, "label": entry.short_label, along: x.astype(np.int64),
                                    "operations": ops, "slope": slope}))
    return pd.concat(frames, ignore_index=True)


#: Rough throughput of the maps' inner loops (one BLAS thread, measured under load), operations / s.
OPS_PER_SECOND = 2e9


def estimate_seconds(map_keys: Sequence[str], d_list, D_at: int, D_list, d_at: int, n: int, degree: int,
                     repeats: int) -> float:
    """Rough wall time of a sweep over d (at D_at) and one over D (at d_at): registry operations per
    sample x n x (warm-up + repeats) / :data:`OPS_PER_SECOND`, plus 10 ms of overhead per run.

    Parameters
    ----------
    map_keys : Sequence[str]
        Registry keys of the maps.
    d_list : sequence of int
        Values of d of the sweep over d.
    D_at : int
        Number of random features of the sweep over d.
    D_list : sequence of int
        Values of D of the sweep over D.
    d_at : int
        Number of input features of the sweep over D.
    n : int
        Number of rows.
    degree : int
        Order m of the kernel.
    repeats : int
        Timed runs per cell (one warm-up run is added).

    Returns
    -------
    float
        Estimated seconds.
    """
    ops = 0.0
    for key in map_keys:
        f = get_map(key).operations
        ops += sum(float(f(np.float64(d), np.float64(D_at), degree)) for d in d_list)
        ops += sum(float(f(np.float64(d_at), np.float64(D), degree)) for D in D_list)
    runs = (1 + repeats) * (len(d_list) + len(D_list))
    return ops * n * (1 + repeats) / OPS_PER_SECOND + 0.01 * len(map_keys) * runs


def median_table(df: pd.DataFrame, phase: str = "transform") -> pd.DataFrame:
    """Median seconds per (d, D, n) x map for one phase, one column per map (milliseconds).

    Parameters
    ----------
    df : pandas.DataFrame
        Timings from :func:`time_maps`.
    phase : {"transform", "fit"}, default "transform"
        The timed phase.

    Returns
    -------
    pandas.DataFrame
        Columns d, D, n and ``<map label> (ms)`` per map.
    """
    sub = df[df["phase"] == phase]
    if sub.empty:
        raise ValueError(f"No timings of phase {phase!r}.")
    med = sub.groupby(["d", "D", "n", "map"])["seconds"].median().unstack("map") * 1e3
    order = list(dict.fromkeys(sub["map"]))
    med = med[order]
    med.columns = [f"{get_map(k).short_label} (ms)" for k in order]
    return med.reset_index()


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """Median, quartiles, IQR, min, max and number of repeats of ``seconds`` per (map, d, D, n, phase).

    Parameters
    ----------
    df : pandas.DataFrame
        Timings from :func:`time_maps`.

    Returns
    -------
    pandas.DataFrame
        One row per (map, d, D, n, phase).
    """
    _check_columns(df)
    g = df.groupby(["map", "d", "D", "n", "phase"], sort=True)["seconds"]
    out = g.agg(median="median", q1=lambda s: s.quantile(0.25), q3=lambda s: s.quantile(0.75),
                min="min", max="max", repeats="count").reset_index()
    out.insert(list(out.columns).index("q3") + 1, "iqr", out["q3"] - out["q1"])
    return out


def growth_exponent(df: pd.DataFrame, along: str = "d", phase: str | None = "transform") -> pd.DataFrame:
    """Slope of log(median seconds) against log(``along``), per map (and phase and the other dimensions).

    Fitted with ``np.polyfit`` on the medians over repeats: time ~ C * along^slope.
    Rows with fewer than two distinct values of ``along`` get NaN. ``phase=None`` keeps both phases.

    Parameters
    ----------
    df : pandas.DataFrame
        Timings from :func:`time_maps`.
    along : {"d", "D", "n"}, default "d"
        The dimension the slope is taken against.
    phase : {"transform", "fit"} or None, default "transform"
        The timed phase; None for both.

    Returns
    -------
    pandas.DataFrame
        Columns map, phase, the other two dimensions, exponent and n_points.
    """
    _check_columns(df)
    if along not in DIMENSIONS:
        raise ValueError(f"along={along!r} is not a timing dimension; allowed: {', '.join(DIMENSIONS)}.")
    if phase is not None:
        if phase not in ("fit", "transform"):
            raise ValueError(f"phase={phase!r} is not allowed; use 'fit', 'transform' or None.")
        df = df[df["phase"] == phase]
    others = [c for c in DIMENSIONS if c != along]
    medians = df.groupby(["map", "phase", *others, along])["seconds"].median().reset_index()
    rows = []
    for key, g in medians.groupby(["map", "phase", *others], sort=True):
        x, y = g[along].to_numpy(float), g["seconds"].to_numpy(float)
        ok = y > 0
        slope = np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0] if np.unique(x[ok]).size >= 2 else np.nan
        rows.append((*key, slope, int(ok.sum())))
    return pd.DataFrame(rows, columns=["map", "phase", *others, "exponent", "n_points"])


def crossover(df: pd.DataFrame, fast: str = "scrk", slow: str = "rk", along: str = "d",
              phase: str = "transform") -> int | float | None:
    """Smallest value of ``along`` from which ``fast`` has a lower median time than ``slow``
    at that value and every larger one measured; None if ``fast`` is not faster at the largest.

    The other two dimensions must each take a single value in ``df``.

    Parameters
    ----------
    df : pandas.DataFrame
        Timings from :func:`time_maps`.
    fast : str, default "scrk"
        Registry key of the map expected to become faster.
    slow : str, default "rk"
        Registry key of the map it is compared with.
    along : {"d", "D", "n"}, default "d"
        The dimension that varies.
    phase : {"transform", "fit"}, default "transform"
        The timed phase.

    Returns
    -------
    int or float or None
        The crossover value of ``along``, or None.
    """
    _check_columns(df)
    for name in (fast, slow):
        if name not in set(df["map"]):
            raise ValueError(f"map {name!r} is not in the timings; present: {', '.join(sorted(set(df['map'])))}.")
    sub = df[(df["phase"] == phase) & df["map"].isin([fast, slow])]
    for other in DIMENSIONS:
        if other != along and sub[other].nunique() > 1:
            raise ValueError(f"crossover along {along!r} needs a single {other!r}; filter the timings first.")
    med = sub.groupby([along, "map"])["seconds"].median().unstack("map").dropna().sort_index()
    faster = (med[fast] < med[slow]).to_numpy()
    if faster.size == 0 or not faster[-1]:
        return None
    first = faster.size - np.argmin(faster[::-1]) if not faster.all() else 0
    return med.index[first].item()


def _check_columns(df: pd.DataFrame) -> None:
    missing = [c for c in COLUMNS if c != "repeat" and c not in df.columns]
    if missing:
        raise ValueError(f"timings DataFrame lacks column(s) {missing}; expected {COLUMNS} (see time_maps).")


def render_report(df: pd.DataFrame, degree: int) -> str:
    """Plain-text tables: median transform (and fit) time per (D, n, d) x map, RK/SCRK ratio, crossover.

    Parameters
    ----------
    df : pandas.DataFrame
        Timings from :func:`time_maps`.
    degree : int
        Order m of the kernels timed, for the kernel labels.

    Returns
    -------
    str
        The report.
    """
    lines = []
    kernels = ", ".join(f"{k}: {timing_kernel(k, degree).label()}" for k in dict.fromkeys(df["map"]))
    lines.append(f"Data N(0,1); kernels: {kernels}; repeats per cell: {df['repeat'].nunique()}.")
    for (D, n), g in df.groupby(["D", "n"], sort=True):
        for phase in ("transform", "fit"):
            med = (g[g["phase"] == phase].groupby(["d", "map"])["seconds"].median().unstack("map") * 1e3)
            med = med[[k for k in dict.fromkeys(df["map"])]]
            if {"rk", "scrk"} <= set(med.columns):
                med["RK/SCRK"] = med["rk"] / med["scrk"]
            lines.append(f"\nMedian {phase} time [ms], D={D}, n={n}:")
            lines.append(med.to_string(float_format=lambda v: f"{v:10.1f}"))
        exps = growth_exponent(g, along="d")
        if exps["exponent"].notna().any():
            lines.append("Growth exponent of transform time in d (slope of log time vs log d): "
                         + ", ".join(f"{r.map} {r.exponent:.2f}" for r in exps.itertuples()))
        if {"rk", "scrk"} <= set(g["map"]):
            d_star = crossover(g, "scrk", "rk")
            ds = sorted(g["d"].unique())
            if d_star is None:
                lines.append(f"Crossover: none in range (SCRK is not faster than RK at d={ds[-1]}).")
            elif d_star == ds[0]:
                lines.append(f"Crossover: SCRK is faster than RK over the whole range, from d={d_star} (at or below).")
            else:
                lines.append(f"Crossover: SCRK becomes faster than RK at d={d_star}.")
    return "\n".join(lines)
