"""What the cost models are made of: the machine's single-thread rates (GEMM flop/s, element-wise passes,
random numbers, a call's overhead), :class:`RunCost` and :func:`section` (seconds times
:func:`rkcore.studies.costs.speed.estimate_factor`, peak bytes with overhead), the priced units
(:func:`gemm_seconds`, :func:`gram_product_seconds`, :func:`elements_seconds`), and the exact kernels' and
the registry maps' work (:func:`exact_kernel_seconds`, :func:`map_transform_seconds`, :func:`map_floats`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...base.limits import format_bytes, format_estimate
from ...kernels.all_subsets_gram import grouped_gram_within_contract
from ...registry import KERNELS, get_map
from .speed import estimate_factor
from .stable_path import stable_seconds

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
#: Peak memory of a run beyond its named arrays: numpy temporaries, pandas copies (a factor).
OVERHEAD = 1.25
#: Peak memory of any run beyond that: small frames, index arrays, the allocator's granularity.
BASE_BYTES = 8 * 2**20


@dataclass(frozen=True)
class RunCost:  # numpydoc ignore=PR02
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



def gemm_seconds(m: float, k: float, n: float) -> float:
    """Seconds of an (m × k) @ (k × n) float64 product on one thread (2 m k n flops at GEMM_FLOPS).

    Parameters
    ----------
    m, k, n : float
        Rows of the left factor, inner dimension, columns of the right factor.

    Returns
    -------
    float
        Seconds on the quiet machine.
    """
    return 2.0 * m * k * n / GEMM_FLOPS


def gram_product_seconds(n: float, k: float) -> float:
    """Z Zᵀ of an n × k matrix: numpy hands ``Z @ Z.T`` to a symmetric rank-k update (half the flops).

    Parameters
    ----------
    n, k : float
        Rows and columns of Z.

    Returns
    -------
    float
        Seconds on the quiet machine.
    """
    return gemm_seconds(n, k, n) / 2


def elements_seconds(count: float) -> float:
    """Seconds of element-wise numpy passes over ``count`` elements in all (ELEMENT_SECONDS each).

    Parameters
    ----------
    count : float
        Elements read and written, summed over the passes.

    Returns
    -------
    float
        Seconds on the quiet machine.
    """
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
        Kernel key; its entry's ``gram_work`` decides the price (a key not in the registry: one GEMM).

    Returns
    -------
    float
        Seconds on the quiet machine.
    """
    m = max(int(degree), 1)
    block = n_rows * n_cols
    work = getattr(KERNELS.get(kernel), "gram_work", "gemm")  # how the kernel's entry says its Gram is computed
    if work == "elementary":
        # the entries the Newton check rejects go to the stable recursion (stable_path: products x * y of rows)
        return (m * gemm_seconds(n_rows, d, n_cols) + elements_seconds(block * (m * m + 2 * m))
                + stable_seconds(block, d, m, kernel, "gaussian"))
    if work == "product":
        if not grouped_gram_within_contract(d):
            # beyond ~1,500 shared columns float64 products leave the accuracy contract: long double
            # products, one column at a time (measured ~14 ns per entry and column, 2026-11-24)
            return elements_seconds(block * 8 * d)
        return elements_seconds(block * (2 * d + 2))
    return gemm_seconds(n_rows, d, n_cols) + elements_seconds(4 * block)


def map_transform_seconds(n: float, d: int, D: int, degree: int, map_key: str = "rk", kernel: str = "anova",
                          distribution: str | None = None) -> float:
    """Drawing a map's weights and transforming n rows, priced from the map's registry cost model
    (:class:`rkcore.registry.CostModel`): its random numbers, GEMM flops and element-wise passes, and for RK
    and SCRK the features their Newton check hands to the stable recursion (:mod:`.stable_path`).

    Parameters
    ----------
    n : float
        Number of rows transformed.
    d, D, degree : int
        Input features, random features, order m of the kernel.
    map_key : str, default "rk"
        Registry key of the map.
    kernel : str, default "anova"
        The family RK maps ("anova" and "up_to" have the stable path; SCRK is always ANOVA).
    distribution : str, optional
        RK's weight distribution; None: the costlier of Rademacher and Gaussian weights.

    Returns
    -------
    float
        Seconds on the quiet machine.
    """
    m = max(int(degree), 1)
    cost = get_map(map_key).cost
    return (RNG_SECONDS * cost.random_numbers(d, D, m) + cost.gemm_flops(n, d, D, m) / GEMM_FLOPS
            + elements_seconds(cost.elements(n, d, D, m)) + map_stable_seconds(n, d, D, degree, map_key, kernel,
                                                                               distribution))


def map_stable_seconds(n: float, d: int, D: int, degree: int, map_key: str, kernel: str = "anova",
                       distribution: str | None = None) -> float:
    """Seconds of the stable recursion in a map's transform of n rows (:mod:`.stable_path`): RK's rejected
    features, SCRK's rejected rows (every feature of a rejected row is recomputed); 0 for other maps.

    Parameters
    ----------
    n : float
        Number of rows transformed.
    d, D, degree : int
        Input features, random features, order m of the kernel.
    map_key : str
        Registry key of the map.
    kernel : str, default "anova"
        RK's family.
    distribution : str, optional
        RK's weight distribution; None: the costlier of Rademacher and Gaussian weights.

    Returns
    -------
    float
        Seconds on the quiet machine.
    """
    if map_key == "scrk":
        return stable_seconds(n * D, d, degree, "anova", "rademacher")  # +-1 circulant entries
    if map_key != "rk":
        return 0.0
    weights = ("rademacher", "gaussian") if distribution is None else (distribution,)
    return max(stable_seconds(n * D, d, degree, kernel, w) for w in weights)


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
