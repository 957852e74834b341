"""The cost of each view of the dashboard, before it runs: the Gram, error, variance, RFF, projection,
compositional and kernel-trick views, and the measurement pages (timing, classifiers, itemsets). Each is a
:class:`~rkcore.studies.costs.rates.RunCost` of seconds and peak bytes, built from the priced units of
:mod:`rkcore.studies.costs.rates`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ...base.limits import block_bytes, nbytes
from ...kernels.itemsets import MAX_ENUMERATION
from ...registry import get_map, get_method
from ..accuracy import estimate_seconds as accuracy_estimate_seconds
from ..accuracy import total_seconds as accuracy_total_seconds
from ..timing import estimate_seconds as timing_estimate_seconds
from .rates import (
    CALL_SECONDS, ELEMENT_SECONDS, RNG_SECONDS, TIDY_ROW_BYTES, RunCost, elements_seconds, exact_kernel_seconds,
    gemm_seconds, gram_product_seconds, map_floats, map_stable_seconds, map_transform_seconds, section,
)
from .speed import estimate_factor

if TYPE_CHECKING:
    import pandas as pd

# Calibrated with the rates (rkcore.studies.costs.rates) by benchmarks/studies/bench_run_estimates.py.
#: The methods' fit models (rkcore.studies.accuracy, the registry's fit_seconds, rated under load) against whole
#: studies on a quiet machine: 0.7x their sum, plus a fixed cost per fit (splitting, sklearn's set-up,
#: predicting) and a cost per random feature of every fit (drawing, transforming and the linear SVM on
#: D columns dominate small-n studies: the page's default n = 200 study takes about 1 s).
CLASSIFIER_SCALE = 0.7
FIT_SECONDS = 0.005
FIT_SECONDS_PER_FEATURE = 1.3e-4
#: The Timing page's model (rkcore.studies.timing.estimate_seconds, rated under load) on a quiet machine.
TIMING_SCALE = 0.22


# ---------------------------------------------------------------------------- the views
def gram_view_cost(n: int, d: int, D: int, kernel: str, degree: int, map_key: str) -> RunCost:
    """Gram page: exact K, the map's Z, K̂ = Z Zᵀ, error statistics, pairs and block averages.

    Parameters
    ----------
    n : int
        Points.
    d : int
        Input features.
    D : int
        Random features.
    kernel : str
        Kernel name.
    degree : int
        Order m of the kernel.
    map_key : str
        Registry key of the map.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    seconds = (exact_kernel_seconds(n, n, d, degree, kernel) + map_transform_seconds(n, d, D, degree, map_key, kernel)
               + gram_product_seconds(n, D) + elements_seconds(50 * n * n) + 4 * CALL_SECONDS)  # memory-bound n² passes
    # the map's weights and transform scratch (its registry cost model) beside X, Z and the n x n matrices:
    # RK at m = 7, D = 55,842, n = 258 peaked at 1.4 GB where X, Z and K alone gave 148 MB (fuzz seed 44)
    floats = map_floats(n, d, D, degree, map_key)
    return section("exact and approximate Gram matrices", seconds,
                   nbytes((n, d), (n, D), *[(n, n)] * 4) + 8 * floats)


def error_study_cost(n: int, d: int, kernel: str, degree: int, D_list, methods, trials: int,
                     n_eps: int = 0) -> RunCost:
    """rkcore.studies.errors.error_study over ``methods`` ((map key, distribution) pairs, as the engine takes
    them): per (method, D, trial) the map over all n rows (its registry cost model) and a sweep of the n²
    pairs in row blocks against cached exact strips (the exact kernel once).

    Parameters
    ----------
    n : int
        Points.
    d : int
        Input features.
    kernel : str
        Kernel name.
    degree : int
        Order m of the kernel.
    D_list : sequence
        Numbers of random features.
    methods : sequence
        (map key, distribution) pairs.
    trials : int
        Maps per (method, D).
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
        map_transform_seconds(n, d, D, degree, map_key, kernel, distribution) + gemm_seconds(n, D, n)
        + elements_seconds(n * n * (4 + n_eps / 8)) + CALL_SECONDS for map_key, distribution in methods for D in D_list)
    block = min(n, max(1, block_bytes(64 * 2**20) // (8 * n * (2 * max(degree, 2) + 6))))  # errors.BLOCK_BYTES
    peak = nbytes((n, max(D_list)), (min(n * n, 64 * 2**20 // 8),), (block * (2 * max(degree, 2) + 6), n))
    return section("error study", seconds, peak)


def pair_variance_cost(d: int, kernel: str, degree: int, D_list, n_distributions: int, var_trials: int,
                       exact_line: bool) -> RunCost:
    """Distributions page, variance section: three pairs picked from the exact kernel of 400 points,
    var_trials maps of the largest D per distribution on the 6 points, the exact variance line and the
    per-distribution summary over up to 2,000 pairs.

    Parameters
    ----------
    d : int
        Input features.
    kernel : str
        Kernel name.
    degree : int
        Order m.
    D_list : sequence of int
        Numbers of random features (the largest is drawn).
    n_distributions : int
        Distributions compared.
    var_trials : int
        Maps per distribution.
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
        seconds += n_distributions * elements_seconds(2000 * d * m * m * 40)  # variance formulas over sampled pairs
    chunk = min(var_trials, max(1, block_bytes(32 * 2**20) // (8 * D_max * 6 * (d + 2))))  # variance_study.CHUNK_BYTES
    return section("pair variances", seconds, nbytes((400, 400), (chunk * D_max * 6, d + 2)))


def rff_curve_cost(n: int, d: int, D_list, trials: int) -> RunCost:
    """rkcore.teaching.fourier_features.rff_error_curve: K once, then per trial Z (n × D_max) and running sums of the
    Gram estimate with the error metrics at every D.

    Parameters
    ----------
    n : int
        Points.
    d : int
        Input features.
    D_list : sequence of int
        Numbers of random features.
    trials : int
        Independent maps.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    D_list = sorted(int(D) for D in D_list)
    D_max = D_list[-1]
    per_trial = (RNG_SECONDS * d * D_max + gemm_seconds(n, d, D_max) + elements_seconds(4 * n * D_max)
                 + gram_product_seconds(n, D_max) + len(D_list) * elements_seconds(12 * n * n))
    seconds = gemm_seconds(n, d, n) + elements_seconds(6 * n * n) + trials * (per_trial + CALL_SECONDS)
    return section("RFF error curve", seconds, nbytes((n, d), (n, D_max), *[(n, n)] * 4))


def projection_cost(n: int, dim: int, m_list, trials: int, kinds) -> RunCost:
    """Random projections page: the vectors (explicit degree-2 features or rows), then per kind and draw
    a projector of m_max rows, one product, the running norms, and the tidy frame of every ratio.

    Parameters
    ----------
    n : int
        Number of vectors.
    dim : int
        Their dimension.
    m_list : sequence
        Projection sizes (int).
    trials : int
        Draws per kind.
    kinds : sequence
        Projector kinds (str: "gaussian", "sparse").

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    m_list = sorted(int(m) for m in m_list)
    m_max = m_list[-1]
    rows = n * len(m_list) * trials * len(kinds)
    per_draw = {"gaussian": RNG_SECONDS * m_max * dim + gemm_seconds(n, dim, m_max),
                "sparse": RNG_SECONDS * m_max * dim * 0.1 + elements_seconds(n * dim * 2) + gemm_seconds(n, dim, m_max) * 0.2}
    seconds = (elements_seconds(4 * n * dim)
               + trials * sum(per_draw.get(k, per_draw["gaussian"]) + elements_seconds(3 * n * m_max) + 12 * CALL_SECONDS
                              for k in kinds)
               + rows * 1e-6)  # the tidy frames: built column-wise, concatenated, summarized
    peak = nbytes((n, dim), (m_max, dim), (2, n, m_max)) + 2 * rows * TIDY_ROW_BYTES
    return section("projections", seconds, peak)


def compositional_cost(n: int, d: int, D_list, trials: int, n_modes: int, D_gram: int, n_nodes: int) -> RunCost:
    """Compositional page: the exact skeleton kernel, one de-duplicated estimate at D_gram, and the error
    curves (per mode, D and trial: draw D features, build the n × D complex features, Z Zᵀ).

    Parameters
    ----------
    n : int
        Points.
    d : int
        Input features.
    D_list : sequence of int
        Numbers of random features of the error curves.
    trials : int
        Draws per (mode, D).
    n_modes : int
        Modes.
    D_gram : int
        D of the single estimate.
    n_nodes : int
        Skeleton nodes.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    D_list = [int(D) for D in D_list]

    def one_estimate(D: int) -> float:  # numpydoc ignore=GL08
        return (elements_seconds(n * D * n_nodes * 0.3) + D * n_nodes * 0.5e-6 + 1.5 * gemm_seconds(n, D, n) + elements_seconds(6 * n * n)
                + CALL_SECONDS)

    seconds = (elements_seconds(n * n * n_nodes * 6) + one_estimate(int(D_gram))
               + n_modes * trials * sum(one_estimate(D) for D in D_list))
    D_top = max(max(D_list), int(D_gram))
    return section("compositional kernel", seconds, nbytes(*[(n, n)] * 4, (n, 8 * D_top)))


def kernel_trick_cost(n_features, d_list, n: int, degree: int, repeats: int) -> RunCost:
    """rkcore.teaching.kernel_trick.kernel_trick_timing: per d, (repeats + 1 warm-up) × (explicit features
    Φ (n × F) and Φ Φᵀ, then the kernel formula on n² pairs).

    Parameters
    ----------
    n_features : sequence of int
        Explicit feature count F for each input dimension d.
    d_list : sequence of int
        The input dimensions d.
    n : int
        Points.
    degree : int
        Order m of the kernel.
    repeats : int
        Timed runs per d.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    m = max(int(degree), 1)
    seconds = sum((repeats + 1) * (elements_seconds(n * F * (m + 1)) + gemm_seconds(n, F, n) + gemm_seconds(n, d, n)
                                   + elements_seconds(n * n * (m + 3)) + 2 * CALL_SECONDS)
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
    d_list : sequence of int
        Values of the sweep over d.
    D_at : int
        D of the d sweep.
    D_list : sequence of int
        Values of the sweep over D.
    d_at : int
        D of the D sweep.
    n : int
        Rows.
    degree : int
        Order m.
    repeats : int
        Timed runs per cell.

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
    # RK and SCRK on the ANOVA kernel (their timing kernel), default weights, N(0, 1) data: the stable path
    # where the Newton check rejects (at m = 5 every feature from d ~ 850 on: ~50x the fast path's time)
    stable = sum(map_stable_seconds(n, d, D, m, key, "anova", get_map(key).distributions[0])
                 for key in map_keys for d, D in cells)
    seconds = (TIMING_SCALE * timing_estimate_seconds(map_keys, d_list, D_at, D_list, d_at, n, degree, repeats)
               + runs * (draws + stable))
    d_max, D_max = max(d for d, _ in cells), max(D for _, D in cells)
    # the maps run one after another: the peak is the largest map's own floats at its largest cell
    floats = max((map_floats(n, d, D, degree, key) for key in map_keys for d, D in cells), default=0)
    peak = nbytes((n, d_max), (n, D_max), (int(floats),))
    return section("timings", seconds, peak)


def classifier_fit_seconds(method_keys, n_train: int, n_test: int, d: int, D_list, degree: int) -> pd.DataFrame:
    """Seconds of one fit + prediction per (method, D), as :func:`rkcore.studies.accuracy.estimate_seconds` gives
    them, calibrated like :func:`classifier_cost` (the Classifiers page's chart of the estimate).

    Parameters
    ----------
    method_keys : sequence of str
        Keys of the methods.
    n_train : int
        Training rows.
    n_test : int
        Test rows.
    d : int
        Input features.
    D_list : sequence of int
        Numbers of random features.
    degree : int
        Order m of the kernel.

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
    n_train : int
        Training rows.
    n_test : int
        Test rows.
    d : int
        Input features.
    D_list : sequence of int
        Numbers of random features.
    spec : KernelSpec
        The study kernel.
    trials : int
        Trials.
    n_C : int
        Values of C validated.

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
    listing_limit : int
        Itemsets listed when not enumerated.
    explicit_max : int
        Most columns of the explicit features.

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


#: Seconds per (training row x feature) of liblinear on dense random features (measured: RFF at D = 640 on 1,000
#: rows, 0.13 s; doubled for the load), and libsvm per entry of the training Gram (the registry's kernel_svm model).
LINEAR_SVM_SECONDS = 4e-7
LIBSVM_SECONDS = 4e-8


def _exact_svm_seconds(n_train: int, n_test: int, d: int, kernel: str) -> float:
    """One exact kernel SVM: its training Gram, libsvm on it, and the test rows against the training rows."""
    return (exact_kernel_seconds(n_train, n_train + n_test, d, 2, kernel) + LIBSVM_SECONDS * n_train * n_train
            * max(d / 20, 1) + FIT_SECONDS)


#: The Speed and accuracy page's maps (registry key, the kernel family they approximate) and exact SVMs.
SPEED_MAPS = (("rk", "anova"), ("scrk", "anova"), ("rff", "rbf"), ("nystroem", "rbf"))
SPEED_EXACT = ("anova", "rbf")


def speed_accuracy_cost(n: int, d: int, D_list, seeds: int, measured_n, time_D: int, repeats: int = 3, *,
                        maps=SPEED_MAPS, exact_kernels=SPEED_EXACT) -> RunCost:
    """Speed and accuracy page (:mod:`rkcore.views.speed_accuracy`): C validated by both exact SVMs once (3 values),
    per seed both exact SVMs and a linear SVM on RK, SCRK, RFF and Nystroem features for every D (Nystroem adds its
    D x D eigendecomposition); then time against n: per measured n, ``repeats`` fits of the exact ANOVA SVM and of
    RK at ``time_D`` on 4,000 test rows, plus one warm-up.

    Parameters
    ----------
    n, d : int
        Points and features of the sweep's data (train, validation, test: 0.5, 0.1, 0.4 of n).
    D_list : sequence of int
        Numbers of random features.
    seeds : int
        Seeds.
    measured_n : sequence of int
        Training sizes of time against n (the synthetic interaction data, d = 20).
    time_D : int
        RK's D there.
    repeats : int, default 3
        Fits per measured n.
    maps : sequence of (str, str), default SPEED_MAPS
        The maps compared and their kernel families (the story's duel: RK alone).
    exact_kernels : sequence of str, default SPEED_EXACT
        The exact SVMs' kernel families.

    Returns
    -------
    RunCost
        Estimated seconds (at the machine's speed now) and peak bytes.
    """
    n_train, n_test = int(0.5 * n), int(0.4 * n)
    D_list = [int(D) for D in D_list]
    exact = sum(_exact_svm_seconds(n_train, n_test, d, k) for k in exact_kernels)
    mapped = sum(map_transform_seconds(n_train + n_test, d, D, 2, key, kernel) + LINEAR_SVM_SECONDS * n_train * D
                 + FIT_SECONDS for D in D_list for key, kernel in maps)
    nystroem = sum(gemm_seconds(D, D, D) * 10 for D in D_list for key, _ in maps if key == "nystroem")
    sweep = 3 * exact + int(seeds) * (exact + mapped + nystroem)
    timing = (int(repeats) + 1) * sum(_exact_svm_seconds(m, 4000, 20, "anova") + map_transform_seconds(
        m + 4000, 20, time_D, 2, "rk") + LINEAR_SVM_SECONDS * m * time_D + FIT_SECONDS for m in measured_n)
    largest = max(max(measured_n), n_train)
    peak = nbytes(*[(largest, largest)] * 3, (n_train + n_test, max(D_list)), (max(D_list), max(D_list)))
    return section("speed and accuracy comparison", sweep + timing, peak)
