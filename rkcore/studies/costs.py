"""Cost models of the engines behind the dashboard's views: seconds and peak bytes of exactly what a
view computes, before it computes it. Arithmetic (no streamlit, nothing proportional to the inputs
allocated), so a page can estimate a run, refuse it, or search the largest settings that fit.

The constants are single-thread rates of the 2-core server on a quiet machine (the pages limit BLAS
to one thread), fitted per model to the CPU time of the runs of ``benchmarks/studies/bench_run_estimates.py``.
:func:`section` multiplies every estimate by :func:`estimate_factor`: 1 (the calibration machine), or
``RKCORE_SPEED_FACTOR`` on a slower or faster host. Never by the load now: a momentary spike of a
probe took students' charts away (issue 26); the server's queue (rkcore.base.limits.Admission) is what
says how busy it is, and an estimate, hence the run-or-wait decision, is the same on every rerun of
the same settings. :func:`speed_factor` (a probe of the slowdown now) is kept for the benchmark,
which compares every model with measured runs (time and peak memory) and writes
benchmarks/results/run_estimates.md. Memory uses :func:`rkcore.base.limits.nbytes` (float64 arrays), the
same accounting as the per-view budget.
"""
from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits  # a dependency of scikit-learn

from .accuracy import estimate_seconds as accuracy_estimate_seconds
from .accuracy import total_seconds as accuracy_total_seconds
from ..kernels.all_subsets_gram import GRAM_GROUP, GROUP_ROUNDINGS, _products_within_contract
from ..kernels.itemsets import MAX_ENUMERATION
from ..base.limits import format_bytes, format_estimate, nbytes
from ..registry import get_map, get_method
from .timing import estimate_seconds as timing_estimate_seconds

# Calibrated by benchmarks/studies/bench_run_estimates.py on the 2-core machine at speed factor 1 (quiet): each
# model's constants against its runs' CPU seconds (which equal wall seconds on a quiet machine), 20:30 UTC
# 2026-11-23; the earlier constants were fitted to wall times at load 3-13 and were 2-9x high when quiet.
#: flop/s of a large float64 GEMM on one thread.
GEMM_FLOPS = 37e9
#: seconds per element of one numpy element-wise pass over a large array (read + write + temporaries).
ELEMENT_SECONDS = 1.7e-9
#: seconds per random number drawn by numpy's Generator (normal / uniform / Rademacher).
RNG_SECONDS = 1.2e-8
#: seconds of fixed overhead of one engine call (validation, estimator construction, a small DataFrame).
CALL_SECONDS = 1e-3
#: bytes of one row of a tidy result frame (a few float / int / object columns and the index).
TIDY_ROW_BYTES = 80
#: seconds per row of a tidy result frame built from Python dicts.
TIDY_ROW_SECONDS = 2e-6
#: The methods' fit models (rkcore.studies.accuracy, the registry's fit_seconds, rated under load) against whole
#: studies on a quiet machine: 0.7x their sum, plus a fixed cost per fit (splitting, sklearn's set-up,
#: predicting) and a cost per random feature of every fit (drawing, transforming and the linear SVM on
#: D columns dominate small-n studies: the page's default n = 200 study takes about 1 s).
CLASSIFIER_SCALE = 0.7
FIT_SECONDS = 0.005
FIT_SECONDS_PER_FEATURE = 1.3e-4
#: The Timing page's model (rkcore.studies.timing.estimate_seconds, rated under load) on a quiet machine.
TIMING_SCALE = 0.22
#: Peak memory of a run beyond its named arrays: numpy temporaries, pandas copies (a factor).
OVERHEAD = 1.25
#: Peak memory of any run beyond that: small frames, index arrays, the allocator's granularity.
BASE_BYTES = 8 * 2**20


@dataclass(frozen=True)
class RunCost:
    """Seconds and peak bytes of a run, with its sections ((name, seconds, bytes), in order).

    Parameters
    ----------
    seconds : float
        Estimated wall seconds.
    bytes : int
        Estimated peak memory.
    sections : tuple of (str, float, int), default ()
        Name, seconds and peak bytes of each section.
    """

    seconds: float
    bytes: int
    sections: tuple[tuple[str, float, int], ...] = ()

    def __add__(self, other: "RunCost") -> "RunCost":
        """Sections run one after the other: times add, the peak is the larger one."""
        return RunCost(self.seconds + other.seconds, max(self.bytes, other.bytes), self.sections + other.sections)

    def describe(self) -> str:
        """The sections as text.

        Returns
        -------
        str
            "name: about N s, M MiB" (or "under 1 s") per section, joined by "; ".
        """
        return "; ".join(f"{name}: {format_estimate(s)}, {format_bytes(b)}" for name, s, b in self.sections)


# ---------------------------------------------------------------------------- the machine's speed now
#: Wall seconds of :func:`probe_seconds` on the quiet machine the constants were fitted on (median of
#: 15 probes in fresh processes, 12.4-15.7 ms, with no other job running).
PROBE_REFERENCE_SECONDS = 0.014
#: Bounds of :func:`speed_factor`: a faster server than the calibration machine halves the estimates at
#: most; a loaded one multiplies them by up to 16 (wall / CPU time of the benchmark's runs reached 10-16x
#: at load average 7-13 on the 2-core machine, benchmarks/results/run_estimates.md).
MIN_SPEED_FACTOR, MAX_SPEED_FACTOR = 0.5, 16.0
#: Seconds a measured speed factor is reused: every rerun of every page asks for it.
SPEED_CACHE_SECONDS = 10.0
#: Environment variable that fixes the speed factor (the tests pin it to 1, so which settings auto-run,
#: wait or are refused does not move with the machine).
SPEED_FACTOR_ENV = "RKCORE_SPEED_FACTOR"
_speed_lock = threading.Lock()
_speed_cache: dict[str, float] = {}  # "at": _clock() at the probe, "factor": its factor
_clock = time.monotonic


def probe_seconds(rounds: int = 20) -> float:
    """Wall seconds of a fixed small workload of the two kinds the models price (a 192 × 192 GEMM on one
    BLAS thread and element-wise passes over 65,536 numbers), ``rounds`` pieces of ~1 ms back to back,
    after one warm-up piece: about 14 ms on the quiet machine (up to 16x that on a busy one, once per
    SPEED_CACHE_SECONDS). The total, not a median of the pieces:
    a 1 ms piece mostly escapes the scheduler's time slicing (medians did not move at a 3x slowdown),
    while 25 ms in a row share the cores like a run does.

    Parameters
    ----------
    rounds : int, default 20
        Timed pieces of work.

    Returns
    -------
    float
        Wall seconds of the timed pieces.
    """
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((192, 192)), rng.standard_normal(1 << 16)

    def piece() -> None:
        A @ A
        np.sqrt(np.abs(x * 1.5 + 0.5)).sum()

    with threadpool_limits(limits=1, user_api="blas"):
        piece()
        started = time.perf_counter()
        for _ in range(int(rounds)):
            piece()
        return time.perf_counter() - started


def _clamped(factor: float) -> float:
    return min(max(float(factor), MIN_SPEED_FACTOR), MAX_SPEED_FACTOR)


def speed_factor() -> float:
    """How much slower than the calibration machine a run is now: :func:`probe_seconds` over
    PROBE_REFERENCE_SECONDS, clamped to [MIN_SPEED_FACTOR, MAX_SPEED_FACTOR] and reused for
    SPEED_CACHE_SECONDS. ``RKCORE_SPEED_FACTOR`` fixes it (clamped as well; a value that is not a
    positive number is ignored). benchmarks/results/run_estimates.md compares it with the load average.

    Returns
    -------
    float
        The slowdown factor (1 on the quiet calibration machine).
    """
    fixed = os.environ.get(SPEED_FACTOR_ENV, "").strip()
    if fixed:
        try:
            value = float(fixed)
        except ValueError:
            value = math.nan
        if value > 0 and math.isfinite(value):
            return _clamped(value)
    with _speed_lock:  # one probe at a time: concurrent sessions reuse it instead of probing at once
        if not _speed_cache or _clock() - _speed_cache["at"] > SPEED_CACHE_SECONDS:
            _speed_cache.update(at=_clock(), factor=_clamped(probe_seconds() / PROBE_REFERENCE_SECONDS))
        return _speed_cache["factor"]


def estimate_factor() -> float:
    """The factor of every estimate: ``RKCORE_SPEED_FACTOR`` (clamped like :func:`speed_factor`; a value
    that is not a positive number is ignored), else 1. Constant while a server runs, so the same
    settings always get the same estimate and the same decision (run, wait for the button, refuse)."""
    fixed = os.environ.get(SPEED_FACTOR_ENV, "").strip()
    try:
        value = float(fixed) if fixed else math.nan
    except ValueError:
        value = math.nan
    return _clamped(value) if value > 0 and math.isfinite(value) else 1.0


def section(name: str, seconds: float, bytes_: float) -> RunCost:
    """One section of a run: its quiet-machine seconds times :func:`estimate_factor`, and its peak.

    Parameters
    ----------
    name : str
        Name of the section.
    seconds, bytes_ : float
        Quiet-machine seconds, and bytes of the named arrays (overhead and a base are added).

    Returns
    -------
    RunCost
        Estimated seconds and peak bytes.
    """
    seconds = float(seconds) * estimate_factor()
    peak = int(bytes_ * OVERHEAD) + BASE_BYTES
    return RunCost(seconds, peak, ((name, seconds, peak),))


def _gemm(m: float, k: float, n: float) -> float:
    return 2.0 * m * k * n / GEMM_FLOPS


def _gram_product(n: float, k: float) -> float:
    """Z Zᵀ of an n × k matrix: numpy hands ``Z @ Z.T`` to a symmetric rank-k update (half the flops)."""
    return _gemm(n, k, n) / 2


def _elements(count: float) -> float:
    return count * ELEMENT_SECONDS


def exact_kernel_seconds(n_rows: float, n_cols: float, d: int, degree: int, kernel: str) -> float:
    """The exact Gram block (n_rows × n_cols) of a kernel: power sums cost one GEMM per degree plus the
    elementary-polynomial recursion; all-subsets a product over d; rbf / polynomial one GEMM.

    Parameters
    ----------
    n_rows, n_cols : float
        Shape of the block.
    d, degree : int
        Number of input features, order m of the kernel.
    kernel : str
        Kernel name (anova, itemset, up_to, all_subsets, or another for one GEMM).

    Returns
    -------
    float
        Seconds on the quiet machine.
    """
    m = max(int(degree), 1)
    block = n_rows * n_cols
    if kernel in ("anova", "itemset", "up_to"):
        return m * _gemm(n_rows, d, n_cols) + _elements(block * (m * m + 2 * m))
    if kernel == "all_subsets":
        if not _products_within_contract(GROUP_ROUNDINGS * -(-d // GRAM_GROUP), "float64"):
            # beyond ~1,500 shared columns float64 products leave the accuracy contract: long double
            # products, one column at a time (measured ~14 ns per entry and column, 2026-11-24)
            return _elements(block * 8 * d)
        return _elements(block * (2 * d + 2))
    return _gemm(n_rows, d, n_cols) + _elements(4 * block)


def map_transform_seconds(n: float, d: int, D: int, degree: int, map_key: str = "rk") -> float:
    """Drawing a map's weights and transforming n rows, priced from the map's registry cost model
    (:class:`rkcore.registry.CostModel`): its random numbers, GEMM flops and element-wise passes.

    Parameters
    ----------
    n : float
        Number of rows transformed.
    d, D, degree : int
        Input features, random features, order m of the kernel.
    map_key : str, default "rk"
        Registry key of the map.

    Returns
    -------
    float
        Seconds on the quiet machine.
    """
    m = max(int(degree), 1)
    cost = get_map(map_key).cost
    return (RNG_SECONDS * cost.random_numbers(d, D, m) + cost.gemm_flops(n, d, D, m) / GEMM_FLOPS
            + _elements(cost.elements(n, d, D, m)))


def map_floats(n: float, d: int, D: int, degree: int, map_key: str) -> float:
    """Floats a fitted map keeps plus its transform's transient ones beyond X and Z (registry cost model).

    Parameters
    ----------
    n : float
        Number of rows transformed.
    d, D, degree : int
        Input features, random features, order m of the kernel.
    map_key : str
        Registry key of the map.

    Returns
    -------
    float
        Number of floats.
    """
    m = max(int(degree), 1)
    cost = get_map(map_key).cost
    return cost.stored_floats(d, D, m) + cost.scratch_floats(n, d, D, m)


# ---------------------------------------------------------------------------- the views
def gram_view_cost(n: int, d: int, D: int, kernel: str, degree: int, map_key: str) -> RunCost:
    """Gram page: exact K, the map's Z, K̂ = Z Zᵀ, error statistics, pairs and block averages.

    Parameters
    ----------
    n, d, D, degree : int
        Points, input features, random features, order m of the kernel.
    kernel, map_key : str
        Kernel name, and registry key of the map.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    seconds = (exact_kernel_seconds(n, n, d, degree, kernel) + map_transform_seconds(n, d, D, degree, map_key)
               + _gram_product(n, D) + _elements(50 * n * n) + 4 * CALL_SECONDS)  # memory-bound n² passes
    return section("exact and approximate Gram matrices", seconds, nbytes((n, d), (n, D), *[(n, n)] * 4))


def error_study_cost(n: int, d: int, kernel: str, degree: int, D_list, methods, trials: int,
                     n_eps: int = 0) -> RunCost:
    """rkcore.studies.errors.error_study over ``methods`` ((map key, distribution) pairs, as the engine takes
    them): per (method, D, trial) the map over all n rows (its registry cost model) and a sweep of the n²
    pairs in row blocks against cached exact strips (the exact kernel once).

    Parameters
    ----------
    n, d, degree, trials : int
        Points, input features, order m of the kernel, maps per (method, D).
    kernel : str
        Kernel name.
    D_list, methods : sequence
        Numbers of random features; (map key, distribution) pairs.
    n_eps : int, default 0
        Error thresholds counted per pair.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    D_list = [int(D) for D in D_list]
    # measured: about 1 ms of fixed cost per (method, D, trial) cell, not three engine calls
    seconds = exact_kernel_seconds(n, n, d, degree, kernel) + trials * sum(
        map_transform_seconds(n, d, D, degree, map_key) + _gemm(n, D, n) + _elements(n * n * (4 + n_eps / 8))
        + CALL_SECONDS for map_key, _ in methods for D in D_list)
    block = min(n, max(1, 64 * 2**20 // (8 * n * (2 * max(degree, 2) + 6))))
    peak = nbytes((n, max(D_list)), (min(n * n, 64 * 2**20 // 8),), (block * (2 * max(degree, 2) + 6), n))
    return section("error study", seconds, peak)


def pair_variance_cost(d: int, kernel: str, degree: int, D_list, n_distributions: int, var_trials: int,
                       exact_line: bool) -> RunCost:
    """Distributions page, variance section: three pairs picked from the exact kernel of 400 points,
    var_trials maps of the largest D per distribution on the 6 points, the exact variance line and the
    per-distribution summary over up to 2,000 pairs.

    Parameters
    ----------
    d, degree, n_distributions, var_trials : int
        Input features, order m, distributions compared, maps per distribution.
    kernel : str
        Kernel name.
    D_list : sequence of int
        Numbers of random features (the largest is drawn).
    exact_line : bool
        Whether the exact variance line and summary are computed.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    D_max = max(int(D) for D in D_list)
    m = max(int(degree), 1)
    draws = n_distributions * var_trials * D_max
    seconds = (exact_kernel_seconds(400, 400, d, degree, kernel)
               + draws * (RNG_SECONDS * d + 3 * d * m * ELEMENT_SECONDS)  # weights; the 6 points' features
               + n_distributions * var_trials * CALL_SECONDS / 4)
    if exact_line:
        seconds += n_distributions * _elements(2000 * d * m * m * 40)  # variance formulas over sampled pairs
    chunk = min(var_trials, max(1, 32 * 2**20 // (8 * D_max * 6 * (d + 2))))  # variance_study.CHUNK_BYTES
    return section("pair variances", seconds, nbytes((400, 400), (chunk * D_max * 6, d + 2)))


def rff_curve_cost(n: int, d: int, D_list, trials: int) -> RunCost:
    """rkcore.teaching.foundations.rff_error_curve: K once, then per trial Z (n × D_max) and running sums of the
    Gram estimate with the error metrics at every D.

    Parameters
    ----------
    n, d, trials : int
        Points, input features, independent maps.
    D_list : sequence of int
        Numbers of random features.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    D_list = sorted(int(D) for D in D_list)
    D_max = D_list[-1]
    per_trial = (RNG_SECONDS * d * D_max + _gemm(n, d, D_max) + _elements(4 * n * D_max)
                 + _gram_product(n, D_max) + len(D_list) * _elements(12 * n * n))
    seconds = _gemm(n, d, n) + _elements(6 * n * n) + trials * (per_trial + CALL_SECONDS)
    return section("RFF error curve", seconds, nbytes((n, d), (n, D_max), *[(n, n)] * 4))


def projection_cost(n: int, dim: int, m_list, trials: int, kinds) -> RunCost:
    """Random projections page: the vectors (explicit degree-2 features or rows), then per kind and draw
    a projector of m_max rows, one product, the running norms, and the tidy frame of every ratio.

    Parameters
    ----------
    n, dim, trials : int
        Number of vectors, their dimension, draws per kind.
    m_list, kinds : sequence
        Projection sizes (int); projector kinds (str: "gaussian", "sparse").

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    m_list = sorted(int(m) for m in m_list)
    m_max = m_list[-1]
    rows = n * len(m_list) * trials * len(kinds)
    per_draw = {"gaussian": RNG_SECONDS * m_max * dim + _gemm(n, dim, m_max),
                "sparse": RNG_SECONDS * m_max * dim * 0.1 + _elements(n * dim * 2) + _gemm(n, dim, m_max) * 0.2}
    seconds = (_elements(4 * n * dim)
               + trials * sum(per_draw.get(k, per_draw["gaussian"]) + _elements(3 * n * m_max) + 12 * CALL_SECONDS
                              for k in kinds)
               + rows * 1e-6)  # the tidy frames: built column-wise, concatenated, summarized
    peak = nbytes((n, dim), (m_max, dim), (2, n, m_max)) + 2 * rows * TIDY_ROW_BYTES
    return section("projections", seconds, peak)


def compositional_cost(n: int, d: int, D_list, trials: int, n_modes: int, D_gram: int, n_nodes: int) -> RunCost:
    """Compositional page: the exact skeleton kernel, one de-duplicated estimate at D_gram, and the error
    curves (per mode, D and trial: draw D features, build the n × D complex features, Z Zᵀ).

    Parameters
    ----------
    n, d, trials, n_modes, D_gram, n_nodes : int
        Points, input features, draws per (mode, D), modes, D of the single estimate, skeleton nodes.
    D_list : sequence of int
        Numbers of random features of the error curves.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    D_list = [int(D) for D in D_list]

    def one_estimate(D: int) -> float:
        return (_elements(n * D * n_nodes * 0.3) + D * n_nodes * 0.5e-6 + 1.5 * _gemm(n, D, n) + _elements(6 * n * n)
                + CALL_SECONDS)

    seconds = (_elements(n * n * n_nodes * 6) + one_estimate(int(D_gram))
               + n_modes * trials * sum(one_estimate(D) for D in D_list))
    D_top = max(max(D_list), int(D_gram))
    return section("compositional kernel", seconds, nbytes(*[(n, n)] * 4, (n, 8 * D_top)))


def kernel_trick_cost(n_features, d_list, n: int, degree: int, repeats: int) -> RunCost:
    """rkcore.teaching.foundations.kernel_trick_timing: per d, (repeats + 1 warm-up) × (explicit features
    Φ (n × F) and Φ Φᵀ, then the kernel formula on n² pairs).

    Parameters
    ----------
    n_features, d_list : sequence of int
        Explicit feature count F for each input dimension d, and the d.
    n, degree, repeats : int
        Points, order m of the kernel, timed runs per d.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    m = max(int(degree), 1)
    seconds = sum((repeats + 1) * (_elements(n * F * (m + 1)) + _gemm(n, F, n) + _gemm(n, d, n)
                                   + _elements(n * n * (m + 3)) + 2 * CALL_SECONDS)
                  for F, d in zip(n_features, d_list))
    F_max = max(n_features, default=1)
    return section("kernel trick timings", seconds, nbytes((n, F_max), (2, n, n)))


# ---------------------------------------------------------------------------- the measurement pages
def timing_cost(map_keys, d_list, D_at: int, D_list, d_at: int, n: int, degree: int, repeats: int) -> RunCost:
    """Timing page: both sweeps of :func:`rkcore.studies.timing.time_maps`, every (map, setting) cell a warm-up and
    ``repeats`` timed runs of fit (drawing the weights: the registry's cost model) and transform (the
    registry's operation counts), and the data X, features Z and the largest map's own floats (its cost
    model's stored and scratch floats: weights, Nystroem's D × D, Tensor Sketch's FFTs).

    Parameters
    ----------
    map_keys : iterable of str
        Registry keys of the maps.
    d_list, D_list : sequence of int
        Values of the sweeps over d and over D.
    D_at, d_at, n, degree, repeats : int
        D of the d sweep, d of the D sweep, rows, order m, timed runs per cell.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    map_keys = list(map_keys)
    cells = [(d, int(D_at)) for d in d_list] + [(int(d_at), D) for D in D_list]
    runs = 1 + int(repeats)
    m = max(int(degree), 1)
    draws = sum(RNG_SECONDS * get_map(key).cost.random_numbers(d, D, m) for key in map_keys for d, D in cells)
    seconds = TIMING_SCALE * timing_estimate_seconds(map_keys, d_list, D_at, D_list, d_at, n, degree, repeats) + runs * draws
    d_max, D_max = max(d for d, _ in cells), max(D for _, D in cells)
    # the maps run one after another: the peak is the largest map's own floats at its largest cell
    floats = max((map_floats(n, d, D, degree, key) for key in map_keys for d, D in cells), default=0)
    peak = nbytes((n, d_max), (n, D_max), (int(floats),))
    return section("timings", seconds, peak)


def classifier_fit_seconds(method_keys, n_train: int, n_test: int, d: int, D_list, degree: int):
    """Seconds of one fit + prediction per (method, D), as :func:`rkcore.studies.accuracy.estimate_seconds` gives
    them, calibrated like :func:`classifier_cost` (the Classifiers page's chart of the estimate).

    Parameters
    ----------
    method_keys : sequence of str
        Keys of the methods.
    n_train, n_test, d, degree : int
        Training rows, test rows, input features, order m of the kernel.
    D_list : sequence of int
        Numbers of random features.

    Returns
    -------
    pandas.DataFrame
        The rows of the accuracy estimate with ``seconds`` recalibrated.
    """
    per_fit = accuracy_estimate_seconds(method_keys, n_train, n_test, d, D_list, degree)
    seconds = CLASSIFIER_SCALE * per_fit["seconds"] + FIT_SECONDS + FIT_SECONDS_PER_FEATURE * per_fit["D"].fillna(0)
    return per_fit.assign(seconds=seconds * estimate_factor())


def classifier_cost(method_keys, n_train: int, n_test: int, d: int, D_list, spec, trials: int,
                    n_C: int) -> RunCost:
    """Classifiers page: :func:`rkcore.studies.accuracy.accuracy_study` from the methods' cost models (every fit
    and prediction, the trials of randomized methods, C validation with the exact SVMs), and the exact
    SVM's n_train² Gram next to the largest features Z and RK weights.

    Parameters
    ----------
    method_keys : sequence of str
        Keys of the methods.
    n_train, n_test, d, trials, n_C : int
        Training rows, test rows, input features, trials, values of C validated.
    D_list : sequence of int
        Numbers of random features.
    spec : KernelSpec
        The study kernel.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    D_max = max(int(D) for D in D_list)
    per_fit = accuracy_estimate_seconds(method_keys, n_train, n_test, d, D_list, spec.degree)
    fits = len(per_fit) * int(trials) + n_C
    seconds = (CLASSIFIER_SCALE * accuracy_total_seconds(per_fit, int(trials), n_train, d, spec, n_C=n_C)
               + fits * FIT_SECONDS + FIT_SECONDS_PER_FEATURE * float(per_fit["D"].fillna(0).sum()) * int(trials))
    exact = any(get_method(key).learner == "kernel_svm" for key in method_keys)
    peak = nbytes((n_train if exact else 0, n_train), (n_train + n_test, D_max), (D_max, d))
    return section("classifier study", seconds, peak)


def itemsets_view_cost(family, listing_limit: int, explicit_max: int) -> RunCost:
    """Itemsets page: the counts by size (log-binomials and exact integers per size), the listing (the
    family enumerated when it has at most MAX_ENUMERATION itemsets, else the head of each size), the
    restriction of φ_S to at most ``explicit_max`` columns (one count per candidate d′, from d down) and
    the kernel check (6 pairs × the restricted family). All of it grows with d and the number of sizes,
    never with |S|.

    Parameters
    ----------
    family : ItemsetFamily
        The itemset family shown.
    listing_limit, explicit_max : int
        Itemsets listed when not enumerated; most columns of the explicit features.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    d, kind = family.d, family.kind
    sizes = d + 1 if kind == "all_subsets" else max(int(family.max_size), 1) + 1
    n_itemsets = family.n_itemsets  # an exact int (or inf): compared, never converted to float
    listed = int(n_itemsets) if n_itemsets <= MAX_ENUMERATION else listing_limit
    restricting = (d if n_itemsets > explicit_max else 0) * (3e-6 if kind == "all_subsets" else 6e-5)
    seconds = (4 * CALL_SECONDS + sizes * 6e-5  # counts by size, and the heads of each size
               + listed * 2.5e-6                # enumerating itemsets for the listing
               + restricting                    # the largest d′ whose family fits explicit_max columns
               + explicit_max * 5e-6)           # φ_S of the shown rows and the check's pairs
    peak = nbytes((listed, 8), (2 * 6, explicit_max), (sizes, 4)) + listed * TIDY_ROW_BYTES
    return section("itemset family views", seconds, peak)
