r"""Approximation-error engine: how far <Z(x_i), Z(x_j)> is from K(x_i, x_j) over all pairs.

For a random feature map Z with D components, trial t and the n x n pairs of rows of X,
the error of a pair is E_ij = <Z(x_i), Z(x_j)> - K(x_i, x_j). One trial reports, over
the selected pairs P (all, the kernel's exact support, or the paper's floating-point
K_ij != 0.0 mask; diagonal in or out),

.. math::
    \text{MAE} = \frac{1}{|P|}\sum_{P}|E_{ij}|,\quad
    \text{RMS} = \Big(\frac{1}{|P|}\sum_{P}E_{ij}^2\Big)^{1/2},\quad
    \max_{P}|E_{ij}|,\quad \frac{1}{|P|}\sum_{P}E_{ij},\quad
    \Pr_P(|E| \ge \varepsilon).

This is the protocol of Table 1 of Atarashi, Maji & Oyama (AAAI-19): MovieLens 100K,
L1-normalized, n = 10,000 instances, 100 trials, mean absolute error. The n x n
matrices are never materialized: Z = map(X) is computed once per (method, D, trial)
and the pairs are swept in row blocks I, exact strip K[I, a:] = spec.exact(X[I], X[a:])
and approximate strip Z[I] @ Z[a:].T (a = first row of I), accumulating sums. Both
matrices are symmetric (every kernel in the registry is), so only the upper block
triangle is visited and the pairs outside the diagonal blocks count twice. The exact
strips are identical in every trial, so up to ``exact_cache_bytes`` of them are
computed once and reused (the default holds the whole upper triangle of n = 10,000).
Trials are independent: a task computes a chunk of the trials of one (method, D) (at small n
several RK trials form one stacked map, as per-map overhead dominates there; at large n one
trial per task), run by joblib workers (``n_jobs``) or a Dask cluster with ``client=`` (X and
the exact strips are scattered to the workers once, so the task graph holds only the per-task
arguments; see :mod:`rkcore.studies.distributed`). Every trial has its own seed, so the results do not
depend on where or with which others it ran.

Output is tidy (long) form: one row per (method, D, trial, metric[, eps]).
"""
from __future__ import annotations

import zlib
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from ..maps.circulant import SignedCirculantRandomKernel, stacked_scrk_features
from ..maps.distributions import get_distribution
from ..kernels.itemsets import ItemsetFamily
from ..kernels.exact import anova_newton_float, check_array, itemset_support
from ..maps.random_kernel import RandomKernel, stacked_features
from ..registry import KernelSpec, get_map, make_map
from ..base.limits import block_bytes
from ..base.validation import check_eps, check_int, check_int_list
from ..kernels.numerics import row_batches
from ..base.annotations import is_sparse

PAIRS = ("all", "nonzero", "nonzero_float")
DEFAULT_EPS = (1e-4, 1e-3, 1e-2, 1e-1)
#: Memory for one row block of the sweep (exact + approximate + error blocks and temporaries); this and
#: STACKED_FEATURES_BYTES are lowered to scikit-learn's working_memory when that is smaller (block_bytes).
BLOCK_BYTES = 64 * 2**20
#: Memory for the exact Gram strips cached across trials (the upper triangle of n = 10,000 is 400 MB).
EXACT_CACHE_BYTES = 512 * 2**20
#: Memory for the features of the trials one task computes together (_trials_per_task).
STACKED_FEATURES_BYTES = 16 * 2**20

METRICS = ("mean_abs_error", "rms_error", "max_abs_error", "mean_error", "tail_prob")  # keys of rkcore.metrics.METRICS
COLUMNS = ("method", "map", "distribution", "kernel", "D", "trial", "metric", "eps", "value", "n_pairs")


def method_label(map_key: str, distribution: str | None = None) -> str:
    """Short display label of a method: "RK (Rademacher)" for maps with a choice of distribution, else "SCRK".

    Parameters
    ----------
    map_key : str
        Registry key of the map (:data:`rkcore.registry.MAPS`).
    distribution : str or None, default=None
        Key of its weight distribution (:data:`rkcore.maps.distributions.DISTRIBUTIONS`); None takes the
        map's default. Ignored for maps without a choice of distribution.

    Returns
    -------
    str
        The label used in the ``method`` column of :func:`error_study` and in the charts.

    Raises
    ------
    ValueError
        If ``map_key`` or ``distribution`` is unknown (the message lists the allowed keys).

    Examples
    --------
    >>> from rkcore.studies.errors import method_label
    >>> method_label("rk", "gaussian"), method_label("scrk")
    ('RK (Gaussian)', 'SCRK')
    """
    entry = get_map(map_key)
    if entry.takes_distribution:
        return f"{entry.short_label} ({get_distribution(distribution or entry.distributions[0]).label})"
    return entry.short_label


def trial_seed(random_state: int, map_key: str, distribution: str | None, n_components: int, trial: int) -> int:
    """Seed of one (method, D, trial) cell of :func:`error_study`.

    A :class:`numpy.random.SeedSequence` of the study seed, a stable hash (CRC-32) of the method,
    D and t, so every cell is reproducible on its own and independent of the others, and does not
    depend on which other methods or D are in the study, nor on the worker it ran on.

    Parameters
    ----------
    random_state : int
        The study seed (>= 0).
    map_key : str
        Registry key of the map.
    distribution : str or None
        Key of its weight distribution, as the study resolved it (None for maps without a choice).
    n_components : int
        The number D of random features.
    trial : int
        The trial index t (>= 0).

    Returns
    -------
    int
        A seed in [0, 2**32 - 1], valid as ``random_state`` of every map.

    Examples
    --------
    >>> from rkcore.studies.errors import trial_seed
    >>> trial_seed(0, "rk", "rademacher", 64, 0) == trial_seed(0, "rk", "rademacher", 64, 0)
    True
    >>> trial_seed(0, "rk", "rademacher", 64, 0) == trial_seed(0, "rk", "rademacher", 64, 1)
    False
    """
    method_hash = zlib.crc32(f"{map_key}:{distribution}".encode())
    seq = np.random.SeedSequence([int(random_state), method_hash, int(n_components), int(trial)])
    return int(seq.generate_state(1, dtype=np.uint32)[0])


# ---------------------------------------------------------------------------- validation
def _check_int_list(values, name: str) -> list[int]:
    return check_int_list(values, name)


def _check_map_pairs(methods, spec: KernelSpec) -> list[tuple[str, str]]:
    if isinstance(methods, tuple) and len(methods) == 2 and all(isinstance(m, str) for m in methods):
        methods = [methods]
    methods = list(methods)
    if not methods:
        raise ValueError("methods must list at least one (map_key, distribution) pair, e.g. [('rk', 'rademacher')].")
    out = []
    for item in methods:
        if isinstance(item, str):
            key, dist = item, None
        else:
            try:
                key, dist = item
            except (TypeError, ValueError):
                raise ValueError(f"Each method must be a (map_key, distribution) pair; got {item!r}.") from None
        entry = get_map(key)  # unknown key -> ValueError listing the allowed maps
        dist = dist or entry.distributions[0]
        make_map(key, spec, 1, dist, 0)  # checks kernel support and the distribution
        out.append((key, dist))
    if len(set(out)) != len(out):
        raise ValueError(f"methods lists the same (map, distribution) more than once: {out}.")
    return out


def _block_rows(n: int, block_size: int | None, degree: int) -> int:
    if block_size is not None:
        return check_int(block_size, "block_size", expected="an integer >= 1 or None (automatic)")
    # exact kernel temporaries (power sums and elementary polynomials: ~2m+2 blocks) plus
    # the approximate / error block and two boolean masks
    temporaries = 2 * degree + 6
    return max(1, min(n, block_bytes(BLOCK_BYTES) // (8 * n * temporaries)))


# ---------------------------------------------------------------------------- the sweep
def _row_blocks(n: int, block: int) -> list[tuple[int, int]]:
    return [(rows.start, rows.stop) for rows in row_batches(n, block)]


def _exact_upper(X, spec: KernelSpec, start: int, stop: int) -> np.ndarray:
    """Exact kernel of rows start:stop against rows start:n (the block's upper-triangle strip)."""
    return np.ascontiguousarray(spec.exact(X[start:stop], X[start:]), dtype=np.float64)


def _support_upper(X, spec: KernelSpec, start: int, stop: int) -> np.ndarray:
    """Exact support of the kernel on the strip (see :func:`rkcore.kernels.exact.itemset_support`):
    pairs sharing an itemset; for (c + <x, y>)^m with c != 0 and the RBF kernel every pair;
    for <x, y>^m the pairs sharing a non-zero feature. Independent of rounding and blocking."""
    A, B = X[start:stop], X[start:]
    family = spec.family(X.shape[1])
    if family is not None:
        return itemset_support(A, B, family)
    if spec.entry.is_polynomial and spec.coef0 == 0:
        return itemset_support(A, B, ItemsetFamily.dot(X.shape[1]))
    return np.ones((stop - start, X.shape[0] - start), dtype=bool)


def _float_formula_upper(X, spec: KernelSpec, start: int, stop: int) -> np.ndarray:
    """The strip as the paper's floating-point formula gives it (eq. 12 for ANOVA, whose
    rounding residues decide the mask; the exact kernel otherwise)."""
    if spec.entry.single_order:
        return anova_newton_float(X[start:stop], X[start:], spec.degree)
    return _exact_upper(X, spec, start, stop)


def _exact_cache(X, spec: KernelSpec, blocks: list[tuple[int, int]], budget: int) -> list[np.ndarray]:
    """Exact strips of the leading row blocks, as many as ``budget`` bytes hold (computed once,
    shared by every trial). Strips hold only columns >= the block start, so the whole upper
    triangle of n = 10,000 (400 MB) fits the default budget."""
    n = X.shape[0]
    cache, used = [], 0
    for start, stop in blocks:
        size = 8 * (stop - start) * (n - start)
        if used + size > budget:
            break
        cache.append(_exact_upper(X, spec, start, stop))
        used += size
    return cache


def _strip_sums(E: np.ndarray, dropped: int, eps: tuple[float, ...]) -> tuple:
    """(count, sum E, sum E^2, sum |E|, max |E|, tail counts) of the kept entries of a view E.

    ``dropped`` entries of E are not kept: they must already be 0 in E, so they add nothing to
    the sums and, as eps > 0, never reach the tails. E is overwritten by |E|.
    """
    count = E.size - dropped
    if E.size == 0:
        return 0, 0.0, 0.0, 0.0, 0.0, np.zeros(len(eps), dtype=np.int64)
    signed = float(E.sum())
    squares = float(np.einsum("ij,ij->", E, E))
    np.abs(E, out=E)
    tails = np.array([np.count_nonzero(E >= e) for e in eps], dtype=np.int64)
    return count, signed, squares, float(E.sum()), float(E.max()), tails


def _trial_features(X, spec: KernelSpec, map_key: str, distribution: str, n_components: int,
                    seeds: Sequence[int]) -> list[np.ndarray]:
    """Z = map(X) of each trial seed, dense float64. RK and SCRK maps of several seeds are computed
    as one stacked map (rkcore.maps.random_kernel.stacked_features, rkcore.maps.circulant.stacked_scrk_features: the
    same numbers, one pass over X); other maps one by one."""
    first = make_map(map_key, spec, n_components, distribution, seeds[0])
    D = n_components
    if isinstance(first, (RandomKernel, SignedCirculantRandomKernel)) and len(seeds) > 1:
        if isinstance(first, RandomKernel):
            Z = stacked_features(X, first.kernel, first.degree, first.itemsets, first.distribution, D, seeds)
        else:
            Z = stacked_scrk_features(X, first.degree, D, seeds).astype(np.float64, copy=False)
        return [Z[:, t * D:(t + 1) * D] for t in range(len(seeds))]
    out = []
    for t, seed in enumerate(seeds):
        est = first if t == 0 else make_map(map_key, spec, n_components, distribution, seed)
        Z = est.fit(X).transform(X)
        out.append(np.ascontiguousarray(np.asarray(Z.toarray() if is_sparse(Z) else Z,
                                                   dtype=np.float64)))
    return out


def _trials_errors(X, spec: KernelSpec, map_key: str, distribution: str, n_components: int, seeds: Sequence[int],
                   pairs: str, include_diagonal: bool, eps: tuple[float, ...], block: int,
                   exact_cache: list[np.ndarray]) -> list[dict]:
    """Error sums of the trials (one per seed) of one (method, D) over all n^2 ordered pairs.

    Both Gram matrices are symmetric, so the sweep visits only the upper block triangle:
    row block [a, b) against columns [a, n). Its square part [a, b) x [a, b) holds both
    (i, j) and (j, i) and counts once; the rest stands for itself and its mirror image and
    counts twice. This halves the products and the element-wise passes. A block's exact
    strip and pair mask serve every trial of the task.
    """
    Zs = _trial_features(X, spec, map_key, distribution, n_components, seeds)
    n = X.shape[0]
    totals = np.zeros((len(Zs), 4))  # per trial: count, sum E, sum E^2, sum |E|
    max_abs = np.zeros(len(Zs))
    tails = np.zeros((len(Zs), len(eps)), dtype=np.int64)
    for k, (start, stop) in enumerate(_row_blocks(n, block)):
        b = stop - start
        exact = exact_cache[k] if k < len(exact_cache) else _exact_upper(X, spec, start, stop)
        drop = None
        if pairs == "nonzero":
            drop = ~_support_upper(X, spec, start, stop)
        elif pairs == "nonzero_float":
            drop = _float_formula_upper(X, spec, start, stop) == 0.0
        if not include_diagonal:
            if drop is None:
                drop = np.zeros((b, n - start), dtype=bool)
            drop[np.arange(b), np.arange(b)] = True
        # counted once per block, not once per trial (the mask is the same for all of them)
        dropped = [0 if drop is None else int(np.count_nonzero(drop[:, cols])) for cols in (slice(0, b), slice(b, None))]
        for t, Z in enumerate(Zs):
            E = Z[start:stop] @ Z[start:].T
            E -= exact
            if drop is not None:
                np.copyto(E, 0.0, where=drop)
            for (weight, cols), skipped in zip(((1, slice(0, b)), (2, slice(b, None))), dropped):
                part = _strip_sums(E[:, cols], skipped, eps)
                totals[t] += weight * np.array(part[:4], dtype=np.float64)
                max_abs[t] = max(max_abs[t], part[4])
                tails[t] += weight * part[5]
    return [{"count": int(totals[t, 0]), "sum_signed": totals[t, 1], "sum_sq": totals[t, 2],
             "sum_abs": totals[t, 3], "max_abs": max_abs[t], "tails": tails[t]} for t in range(len(Zs))]


def _trials_task(spec: KernelSpec, map_key: str, distribution: str, n_components: int, seeds: tuple[int, ...],
                 pairs: str, include_diagonal: bool, eps: tuple[float, ...], block: int, *, X,
                 exact_cache) -> list[dict]:
    """:func:`_trials_errors` with the large read-only inputs as keywords (scattered on Dask)."""
    return _trials_errors(X, spec, map_key, distribution, n_components, seeds, pairs, include_diagonal, eps, block,
                          exact_cache)


def _trials_per_task(n: int, n_components: int, n_trials: int) -> int:
    """Trials of one (method, D) computed together: as many as STACKED_FEATURES_BYTES of features
    hold (small n: per-map overhead dominates; large n: one trial per task, as fine-grained as
    the workers need)."""
    return max(1, min(n_trials, block_bytes(STACKED_FEATURES_BYTES) // (8 * max(n, 1) * n_components)))


def _rows_of(task: tuple, sums: dict, eps: Sequence[float], kernel: str) -> list[tuple]:
    label, key, dist, D, trial = task
    count = sums["count"]
    if count == 0:
        raise ValueError(
            "error_study: no pair of rows is selected, so there is no error to average: with "
            "pairs='nonzero' no two rows share an itemset of the kernel (e.g. m common non-zero "
            "features for ANOVA-m), or the only pairs were the diagonal and include_diagonal=False. "
            "Use pairs='all', more rows, or a lower order."
        )
    values = {"mean_abs_error": sums["sum_abs"] / count, "rms_error": np.sqrt(sums["sum_sq"] / count),
              "max_abs_error": sums["max_abs"], "mean_error": sums["sum_signed"] / count}
    tails = (sums["tails"] / count).tolist()
    head = (label, key, dist, kernel, D, trial)
    out = [head + (metric, np.nan, value, count) for metric, value in values.items()]
    out += [head + ("tail_prob", e, p, count) for e, p in zip(eps, tails)]
    return out


def error_study(X, spec: KernelSpec, methods: Sequence, n_components_list: Sequence[int], n_trials: int, *,
                eps: Sequence[float] = DEFAULT_EPS, pairs: str = "all", include_diagonal: bool = True,
                random_state: int = 0, block_size: int | None = None,
                exact_cache_bytes: int = EXACT_CACHE_BYTES, n_jobs: int | None = 1,
                progress: Callable[[float, str], None] | None = None, client=None) -> pd.DataFrame:
    r"""Approximation errors of random feature maps over all pairs of rows of X.

    Parameters
    ----------
    X : (n, d) array or CSR matrix
        The instances (normalize first; the paper uses L1 so R = 1).
    spec : KernelSpec
        The kernel to approximate (its ``exact`` gives the reference Gram blocks).
    methods : list of (map_key, distribution)
        Maps from :data:`rkcore.registry.MAPS`, e.g. ``[("rk", "rademacher"), ("scrk", None)]``;
        None takes the map's default distribution. Built only via ``make_map``.
    n_components_list : list of int
        The D values.
    n_trials : int
        Independent draws of the map per (method, D). Trial t of (method, D) uses
        :func:`trial_seed` (random_state, method, D, t).
    eps : floats > 0
        Thresholds of the tail fractions P(|E| >= eps).
    pairs : {"all", "nonzero", "nonzero_float"}
        "nonzero" keeps the pairs in the exact support of the kernel: those sharing at
        least one itemset of the family (for ANOVA-m, at least m common non-zero features),
        decided combinatorially, so the pair set does not depend on ``block_size``.
        "nonzero_float" keeps the pairs where the paper's floating-point formula (power
        sums and Newton's identities for ANOVA, eq. 12) is not exactly 0.0: rounding
        residues decide, so the set is implementation-dependent (BLAS, blocking); it is
        kept because it is the protocol that reproduces the paper's Table 1 (rkcore.studies.table1).
    include_diagonal : bool
        Whether the n pairs (i, i) count.
    random_state : int
        Study seed (non-negative); every (method, D, trial) draws its map from
        :func:`trial_seed`, so a cell's result does not depend on the scheduler.
    block_size : int or None
        Rows per block of the sweep; None sizes blocks to about 64 MB of temporaries.
    exact_cache_bytes : int
        Memory for exact Gram strips reused by every trial (computed once, before the
        trials; with joblib's process backends they are memory-mapped to the workers);
        0 disables the cache and every trial recomputes the exact kernel.
    n_jobs : int
        joblib workers over the (method, D, trial) tasks; honours ``joblib.parallel_config``.
    progress : callable(fraction, message) or None
        Called with a non-decreasing fraction ending at 1.0.
    client : dask.distributed.Client or None
        Run the trials on this Dask cluster (``n_jobs`` is then ignored): X and the exact
        strips are scattered once. Same seeds, same results as a local run.

    Returns
    -------
    pandas.DataFrame
        Columns ``method, map, distribution, kernel, D, trial, metric, eps, value, n_pairs``:
        one row per trial and metric; ``metric`` is one of
        ``mean_abs_error, rms_error, max_abs_error, mean_error`` (eps = NaN) or
        ``tail_prob`` (one row per eps). ``n_pairs`` = |P|.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.studies.errors import error_study
    >>> from rkcore.registry import KernelSpec
    >>> X = np.random.RandomState(0).rand(30, 6)
    >>> df = error_study(X, KernelSpec("anova", 2), [("rk", "rademacher")], [16, 64], n_trials=2)
    >>> sorted(df["D"].unique().tolist()), df["trial"].nunique()
    ([16, 64], 2)
    """
    X, methods, D_list, n_trials, eps = _checked_study(X, spec, methods, n_components_list, n_trials, eps, pairs,
                                                       random_state)
    n = X.shape[0]
    block = _block_rows(n, block_size, spec.degree if spec.entry.ordered else 2)
    report = progress or (lambda fraction, message: None)
    report(0.0, f"exact {spec.label()} kernel on {n} rows")
    exact_cache = _exact_cache(X, spec, _row_blocks(n, block), max(0, int(exact_cache_bytes)))
    chunks = _trial_chunks(methods, D_list, n_trials, n)
    arguments = [(spec, key, dist, D, tuple(trial_seed(random_state, key, dist, D, t) for t in trials), pairs,
                  include_diagonal, eps, block) for key, dist, D, trials in chunks]
    results = _run_trials(arguments, {"X": X, "exact_cache": exact_cache}, n_jobs, client)
    return _tidy_errors(chunks, results, eps, spec.label(), n_trials, report)


def _checked_study(X, spec, methods, n_components_list, n_trials, eps, pairs: str, random_state
                   ) -> tuple[Any, list[tuple[str, str]], list[int], int, tuple[float, ...]]:
    """The arguments of :func:`error_study` checked in the signature's order (the first bad one is the one
    reported): (X as an array or CSR matrix, [(map_key, distribution)], [D], n_trials, eps thresholds)."""
    if not isinstance(spec, KernelSpec):
        raise ValueError(f"spec must be a rkcore.registry.KernelSpec, got {type(spec).__name__}.")
    X = check_array(X)
    methods = _check_map_pairs(methods, spec)
    D_list = _check_int_list(n_components_list, "n_components_list (D)")
    (n_trials,) = _check_int_list([n_trials], "n_trials")
    eps = tuple(float(e) for e in np.atleast_1d(check_eps(eps)).ravel())
    if pairs not in PAIRS:
        raise ValueError(f"pairs={pairs!r} is not allowed; use one of {', '.join(map(repr, PAIRS))}.")
    check_int(random_state, "random_state", minimum=0, expected="a non-negative integer")
    return X, methods, D_list, n_trials, eps


def _trial_chunks(methods: Sequence[tuple[str, str]], D_list: list[int], n_trials: int,
                  n: int) -> list[tuple[str, str, int, tuple[int, ...]]]:
    """One task per (method, D) and chunk of trials (:func:`_trials_per_task`): (key, distribution, D, trials)."""
    return [(key, dist, D, tuple(range(t, min(t + size, n_trials))))
            for key, dist in methods for D in D_list for size in [_trials_per_task(n, D, n_trials)]
            for t in range(0, n_trials, size)]


def _run_trials(arguments: list[tuple], shared: dict, n_jobs: int | None, client):
    """The error sums of every task, in task order: on a Dask cluster (``shared`` scattered once) or
    lazily from joblib workers (so progress is reported as tasks finish)."""
    if client is not None:
        from .distributed import run_tasks

        return run_tasks(client, _trials_task, arguments, shared)
    return Parallel(n_jobs=n_jobs, return_as="generator")(delayed(_trials_task)(*a, **shared) for a in arguments)


def _tidy_errors(chunks: list[tuple], results, eps: Sequence[float], kernel: str, n_trials: int,
                 report: Callable[[float, str], None]) -> pd.DataFrame:
    """The tidy frame of :func:`error_study` from the tasks' sums, reporting progress per finished task."""
    n_cells = sum(len(trials) for *_, trials in chunks)  # (method, D, trial) cells, for the progress fraction
    rows: list[tuple] = []
    done = 0
    for (key, dist, D, trials), sums_list in zip(chunks, results):
        for t, sums in zip(trials, sums_list):
            rows += _rows_of((method_label(key, dist), key, dist, D, t), sums, eps, kernel)
        done += len(trials)
        report(done / n_cells, f"{method_label(key, dist)}, D={D}, trial {trials[-1] + 1}/{n_trials}")
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    return frame.astype({"D": np.int64, "trial": np.int64, "n_pairs": np.int64, "value": np.float64, "eps": np.float64})


def summarize_errors(df: pd.DataFrame, ddof: int = 0) -> pd.DataFrame:
    """Mean and standard deviation over trials per (method, D, metric, eps).

    Parameters
    ----------
    df : pandas.DataFrame
        The tidy output of :func:`error_study` (at least the columns method, D, trial, metric and value;
        map, distribution, kernel and eps are kept as keys when present).
    ddof : int, default=0
        Delta degrees of freedom of the standard deviation: 0 is numpy's default ``np.std``, as in the
        "mean +- std" of the paper's Table 1; 1 gives the unbiased sample variance's root.

    Returns
    -------
    pandas.DataFrame
        One row per (method, D, metric, eps), columns method, map, distribution, kernel, D, metric, eps,
        mean, std (float64) and n_trials (the number of trials averaged), in the order of ``df``.

    Raises
    ------
    ValueError
        If ``df`` lacks a column of :func:`error_study`'s output that the summary needs.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.registry import KernelSpec
    >>> from rkcore.studies.errors import error_study, summarize_errors
    >>> X = np.random.RandomState(0).rand(20, 5)
    >>> df = error_study(X, KernelSpec("anova", 2), [("rk", "rademacher")], [32], n_trials=3, eps=[0.1])
    >>> summary = summarize_errors(df)
    >>> summary["metric"].tolist(), summary["n_trials"].unique().tolist()
    (['mean_abs_error', 'rms_error', 'max_abs_error', 'mean_error', 'tail_prob'], [3])
    """
    missing = {"method", "D", "trial", "metric", "value"} - set(df.columns)
    if missing:
        raise ValueError(f"summarize_errors needs the columns of error_study's output; missing: {sorted(missing)}.")
    keys = [c for c in ("method", "map", "distribution", "kernel", "D", "metric", "eps") if c in df.columns]
    grouped = df.groupby(keys, dropna=False, sort=False)["value"]
    out = grouped.agg(mean="mean", n_trials="count").reset_index()
    out["std"] = grouped.std(ddof=ddof).to_numpy()
    return out[keys + ["mean", "std", "n_trials"]]
