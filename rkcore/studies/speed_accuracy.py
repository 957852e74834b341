"""Speed against accuracy: linear models on random features against the exact kernel SVM they approximate,
the comparison scikit-learn's gallery draws for its own kernel approximations.

Two measurements, both tidy DataFrames with one row per fit:

* :func:`sweep_D`: for every D of a grid and every seed, test accuracy, training seconds and prediction
  seconds of the linear SVM on RK and SCRK features (targets: the ANOVA kernel of degree 2), on random
  Fourier features and on Nystroem features (targets: the RBF kernel, ``gamma`` as scikit-learn's "scale"),
  and of the two exact kernel SVMs (their accuracy and time is a flat line across D). The seed draws the
  train / validation / test split *and* the map, so every method, the exact SVMs included, has one result
  per seed. C is chosen once per target kernel on the first seed's validation set by the exact SVM (the
  paper's rule, :func:`rkcore.studies.accuracy.validate_C_kernel_svm`).
* :func:`time_against_n`: training and prediction seconds of the exact ANOVA kernel SVM and of the linear
  SVM on RK features at a fixed D, for growing n (synthetic interaction data, which has any number of
  rows). :func:`extrapolate` fits a power law t = a nᵇ to the measured points of each (model, phase) and
  carries it up to the n where the exact kernel's n x n Gram matrix no longer fits the memory budget;
  every row says whether it was ``measured`` or ``extrapolated``. :func:`crossover_n` is where the two
  fitted curves cross.

Times are wall-clock ``perf_counter()`` around ``fit`` and ``predict`` (mapping included), one BLAS thread
where the caller sets it; they vary with the machine's load, so the sentences (:mod:`rkcore.teaching.speed`)
compare ratios of medians over seeds and say "faster" only when the seeds' ranges do not overlap.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from ..base.limits import memory_budget
from ..learners import ExactKernelSVC, random_feature_pipeline
from ..registry import KERNELS, MAPS, KernelSpec
from .accuracy import DEFAULT_SPLIT, validate_C_kernel_svm
from .splits import split_indices, split_sizes

__all__ = ["CONTENDERS", "COLUMNS", "MEASURED_N", "TIME_COLUMNS", "TIME_D", "Contender", "TimeStudy", "crossover_n",
           "extrapolate", "fits_in_memory", "fit_power_law", "rbf_gamma", "summarize_sweep", "sweep_D",
           "time_against_n", "time_study"]

#: The study kernel of RK and SCRK (the paper's ANOVA kernel of degree 2).
ANOVA2 = KernelSpec("anova", degree=2)
#: Candidate C of the exact SVMs' validation (C is shared by every method of the same target kernel).
C_GRID = (1.0, 10.0, 100.0)
#: Most D of a sweep and most seeds: bounded before any work.
MAX_D = 4096
MAX_SEEDS = 50
#: Most training points :func:`time_against_n` measures (the exact SVM's Gram: 8 n² bytes, 128 MB here).
MAX_MEASURED_N = 4000
#: The training sizes time against n measures by default (the exact SVM's Gram at 4,000: 128 MB) and RK's D there
#: (16 d of the interaction data, the paper's largest multiple).
MEASURED_N = (250, 500, 1000, 2000, 4000)
TIME_D = 320
#: The largest measured n a power law is fitted to (at small n fixed costs dominate and bend the line).
FIT_POINTS = 3


@dataclass(frozen=True)
class Contender:  # numpydoc ignore=PR02
    """One curve of the comparison: an exact kernel SVM (``map_key`` None) or a linear SVM on a map's features.

    Parameters
    ----------
    key : str
        Short key (a registry map key, or "svm_anova" / "svm_rbf").
    label : str
        Legend text.
    map_key : str or None
        Registry map; None for the exact kernel SVM.
    target : str
        The kernel family approximated: "anova" (degree 2) or "rbf".
    color : str
        Line colour.
    """

    key: str
    label: str
    map_key: str | None
    target: str
    color: str

    @property
    def exact(self) -> bool:
        """Whether this is an exact kernel SVM (a flat line across D).

        Returns
        -------
        bool
            True when the contender has no map.
        """
        return self.map_key is None


def _map_contender(map_key: str, target: str) -> Contender:
    entry = MAPS[map_key]
    return Contender(map_key, f"Linear SVM + {entry.short_label}", map_key, target, entry.color)


#: The contenders, by key: two exact kernel SVMs and the maps approximating them.
CONTENDERS: dict[str, Contender] = {c.key: c for c in (
    Contender("svm_anova", "Kernel SVM, exact ANOVA (m = 2)", None, "anova", "#000000"),
    _map_contender("rk", "anova"), _map_contender("scrk", "anova"),
    Contender("svm_rbf", "Kernel SVM, exact RBF", None, "rbf", "#777777"),
    _map_contender("rff", "rbf"), _map_contender("nystroem", "rbf"),
)}

COLUMNS = ["contender", "label", "target", "D", "seed", "accuracy", "train_seconds", "predict_seconds", "C",
           "n_train", "n_test"]
TIME_COLUMNS = ["model", "n", "phase", "seconds", "source"]


def rbf_gamma(X_train) -> float:
    """Width of the RBF kernel: scikit-learn's ``gamma="scale"``, 1 / (d · Var(X)).

    Parameters
    ----------
    X_train : ndarray of shape (n_samples, n_features)
        Training rows.

    Returns
    -------
    float
        gamma > 0 (1.0 for constant data).
    """
    X_train = np.asarray(X_train, dtype=float)
    spread = float(X_train.var()) * X_train.shape[1]
    return 1.0 / spread if spread > 0 and math.isfinite(spread) else 1.0


def _target_spec(target: str, gamma: float) -> KernelSpec:
    return ANOVA2 if KERNELS[target].single_order else KernelSpec(target, gamma=gamma)


def _estimator(contender: Contender, spec: KernelSpec, D: int | None, C: float, seed: int):
    if contender.map_key is None:  # contender.exact
        return ExactKernelSVC(spec, C=C)
    if D is None:
        raise ValueError(f"{contender.label} needs a number of random features D.")
    return random_feature_pipeline(contender.map_key, spec, int(D), random_state=seed, C=C,
                                   classifier_params={"max_iter": 5000})


def _timed_fit(estimator, X_train, y_train, X_test, y_test) -> dict:
    start = time.perf_counter()
    estimator.fit(X_train, y_train)
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    pred = estimator.predict(X_test)
    predict_seconds = time.perf_counter() - start
    return {"accuracy": float(np.mean(pred == y_test)), "train_seconds": train_seconds,
            "predict_seconds": predict_seconds}


def _check_sweep(contenders, D_grid, seeds) -> tuple[list[Contender], list[int], list[int]]:
    unknown = [k for k in contenders if k not in CONTENDERS]
    if unknown or not contenders:
        raise ValueError(f"Unknown methods {unknown}; choose from {', '.join(CONTENDERS)}.")
    Ds = sorted({int(D) for D in D_grid})
    if not Ds or Ds[0] < 1 or Ds[-1] > MAX_D:
        raise ValueError(f"The numbers of random features D must lie between 1 and {MAX_D:,}; got {list(D_grid)}.")
    seeds = [int(s) for s in seeds]
    if not seeds or len(seeds) > MAX_SEEDS or min(seeds) < 0:
        raise ValueError(f"Give between 1 and {MAX_SEEDS} seeds (integers >= 0); got {len(seeds)}.")
    return [CONTENDERS[k] for k in contenders], Ds, seeds


def sweep_D(X, y, D_grid, seeds, contenders=tuple(CONTENDERS), *, split=DEFAULT_SPLIT, C_grid=C_GRID
            ) -> pd.DataFrame:
    """Accuracy, training and prediction time of every contender for every D and seed (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The data (normalized beforehand if wanted).
    y : ndarray of shape (n_samples,)
        Labels (at least two classes).
    D_grid : sequence of int
        Numbers of random features (1 to MAX_D).
    seeds : sequence of int
        One split and one map per seed (1 to MAX_SEEDS of them).
    contenders : sequence of str, default every key of CONTENDERS
        The methods compared.
    split : (train, validation, test), default DEFAULT_SPLIT
        Fractions (or counts) of the rows.
    C_grid : sequence of float, default C_GRID
        Candidate C values, chosen by the exact SVM of each target kernel on the first seed's validation set.

    Returns
    -------
    pandas.DataFrame
        One row per (contender, D, seed), columns :data:`COLUMNS` (D is NaN for the exact SVMs).

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.studies.speed_accuracy import sweep_D
    >>> rng = np.random.RandomState(0); X = rng.rand(120, 5); y = (X[:, 0] * X[:, 1] > 0.25).astype(int)
    >>> df = sweep_D(X, y, [16], [0, 1], ["svm_anova", "rk"])
    >>> df[["contender", "seed"]].to_numpy().tolist()
    [['svm_anova', 0], ['rk', 0], ['svm_anova', 1], ['rk', 1]]
    """
    chosen, Ds, seeds = _check_sweep(list(contenders), D_grid, seeds)
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    sizes = split_sizes(X.shape[0], split)
    C_by_target: dict[str, float] = {}
    rows = []
    for seed in seeds:
        tr, va, te = split_indices(y, sizes, seed)
        gamma = rbf_gamma(X[tr])
        for contender in chosen:
            spec = _target_spec(contender.target, gamma)
            if contender.target not in C_by_target:  # the first seed's validation set, as the paper's rule
                table = validate_C_kernel_svm(spec, X[tr], y[tr], X[va], y[va], C_grid)
                best = cast(int, table["val_accuracy"].idxmax())  # a RangeIndex label; the stubs say Hashable
                C_by_target[contender.target] = float(table["C"].loc[best])
            C = C_by_target[contender.target]
            for D in ([None] if contender.exact else Ds):
                est = _estimator(contender, spec, D, C, seed)
                rows.append({"contender": contender.key, "label": contender.label, "target": contender.target,
                             "D": np.nan if D is None else float(D), "seed": seed,
                             **_timed_fit(est, X[tr], y[tr], X[te], y[te]), "C": C, "n_train": len(tr),
                             "n_test": len(te)})
    return pd.DataFrame(rows, columns=COLUMNS)


def summarize_sweep(df: pd.DataFrame) -> pd.DataFrame:
    """Per (contender, D): mean and standard error of the accuracy, median times, and the seeds' time ranges.

    Parameters
    ----------
    df : pandas.DataFrame
        :func:`sweep_D` output.

    Returns
    -------
    pandas.DataFrame
        Columns contender, label, target, D, seeds, accuracy_mean, accuracy_std (ddof 0), accuracy_se
        (ddof 1 / √seeds; NaN for one seed), train_median, train_min, train_max, predict_median,
        predict_min, predict_max.
    """
    g = df.groupby(["contender", "label", "target", "D"], dropna=False, sort=False)
    out = g.agg(seeds=("seed", "count"), accuracy_mean=("accuracy", "mean"),
                accuracy_std=("accuracy", lambda v: float(np.std(v))),
                accuracy_sd1=("accuracy", lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else np.nan),
                train_median=("train_seconds", "median"), train_min=("train_seconds", "min"),
                train_max=("train_seconds", "max"), predict_median=("predict_seconds", "median"),
                predict_min=("predict_seconds", "min"), predict_max=("predict_seconds", "max")).reset_index()
    out["accuracy_se"] = out.pop("accuracy_sd1") / np.sqrt(out["seeds"])
    return out


# ============================================================================ time against n
def fits_in_memory(budget: int | None = None) -> int:
    """The largest n whose n x n float64 Gram matrix (8 n² bytes) fits the memory budget.

    Parameters
    ----------
    budget : int, optional
        Bytes; None reads :func:`rkcore.base.limits.memory_budget`.

    Returns
    -------
    int
        The largest such n.
    """
    budget = memory_budget() if budget is None else int(budget)
    return int(math.isqrt(max(budget, 8) // 8))


def _interaction_rows(n: int, seed: int):
    from ..data.builtin import make_interactions

    data = make_interactions(n, random_state=seed)
    X = np.asarray(data.X, dtype=float)
    return X / np.maximum(np.abs(X).sum(axis=1, keepdims=True), 1e-300), np.asarray(data.y)  # L1 rows, the paper's


def time_against_n(n_grid, D: int, *, n_test: int = 4000, C: float = 1.0, seed: int = 0, repeats: int = 3
                   ) -> pd.DataFrame:
    """Measured training and prediction seconds of the exact ANOVA kernel SVM and of the linear SVM on RK
    features (D fixed) for every n of ``n_grid`` training points of the synthetic interaction data (L1 rows).

    Parameters
    ----------
    n_grid : sequence of int
        Training sizes (2 to MAX_MEASURED_N).
    D : int
        RK's number of random features.
    n_test : int, default=4000
        Rows predicted (the same for every n; thousands, so that a prediction takes milliseconds, not microseconds).
    C : float, default=1.0
        The SVMs' C.
    seed : int, default=0
        Seed of the data and the map.
    repeats : int, default=3
        Fits per (model, n) after one warm-up fit at the smallest n; the fastest is kept (1 to 9): on a shared
        machine the load only ever adds time, so the minimum is the least disturbed measurement.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`TIME_COLUMNS` (model "svm_anova" or "rk"; phase "train" or "predict"; source "measured").
    """
    ns = sorted({int(n) for n in n_grid})
    if not 1 <= int(repeats) <= 9:
        raise ValueError(f"repeats must lie between 1 and 9, got {repeats!r}.")
    if not ns or ns[0] < 10 or ns[-1] > MAX_MEASURED_N or not 1 <= int(D) <= MAX_D or not 1 <= n_test <= 10_000:
        raise ValueError(f"Measured n must lie between 10 and {MAX_MEASURED_N:,}, D between 1 and {MAX_D:,} and "
                         f"the test rows between 1 and 10,000; got n {list(n_grid)}, D = {D}, {n_test} test rows.")
    X, y = _interaction_rows(ns[-1] + n_test, seed)
    X_test, y_test = X[-n_test:], y[-n_test:]
    rows = []
    for contender in (CONTENDERS["svm_anova"], CONTENDERS["rk"]):  # warm-up: imports, first-call set-up
        _timed_fit(_estimator(contender, ANOVA2, D, C, seed), X[:ns[0]], y[:ns[0]], X_test, y_test)
    for n in ns:
        for contender in (CONTENDERS["svm_anova"], CONTENDERS["rk"]):
            times = pd.DataFrame([_timed_fit(_estimator(contender, ANOVA2, D, C, seed), X[:n], y[:n], X_test, y_test)
                                  for _ in range(int(repeats))]).min()
            rows += [{"model": contender.key, "n": n, "phase": phase, "seconds": float(times[f"{phase}_seconds"]),
                      "source": "measured"} for phase in ("train", "predict")]
    return pd.DataFrame(rows, columns=TIME_COLUMNS)


def fit_power_law(n, seconds) -> tuple[float, float]:
    """Least-squares line through (log n, log seconds): seconds ≈ a · nᵇ.

    Parameters
    ----------
    n, seconds : array-like
        At least two distinct n, positive seconds.

    Returns
    -------
    a, b : float
        Scale and exponent.
    """
    n, seconds = np.asarray(n, dtype=float), np.asarray(seconds, dtype=float)
    if np.unique(n).size < 2 or np.any(seconds <= 0) or np.any(n <= 0):
        raise ValueError("A power law needs at least two distinct n and positive times.")
    b, log_a = np.polyfit(np.log(n), np.log(seconds), 1)
    return float(math.exp(log_a)), float(b)


def extrapolate(measured: pd.DataFrame, n_max: int, points: int = 6) -> pd.DataFrame:
    """The measured rows plus, per (model, phase), the power law fitted to its FIT_POINTS largest measured n, at
    ``points`` n from beyond the largest measured n up to ``n_max`` (geometric steps), marked ``extrapolated``.

    Parameters
    ----------
    measured : pandas.DataFrame
        :func:`time_against_n` output.
    n_max : int
        Last n (e.g. :func:`fits_in_memory`).
    points : int, default=6
        Extrapolated n per curve.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`TIME_COLUMNS`; ``attrs["fits"]`` maps (model, phase) to (a, b).
    """
    rows, fits = [measured], {}
    last = int(measured["n"].max())
    ns = np.unique(np.geomspace(last, max(n_max, last), points + 1)[1:].round().astype(int))
    ns = ns[ns > last]
    for (model, phase), part in measured.groupby(["model", "phase"], sort=False):
        part = part.sort_values("n").tail(FIT_POINTS)  # the largest n: fixed costs of small n bend the line
        a, b = fit_power_law(part["n"], part["seconds"])
        fits[(model, phase)] = (a, b)
        rows.append(pd.DataFrame({"model": model, "n": ns, "phase": phase, "seconds": a * ns.astype(float) ** b,
                                  "source": "extrapolated"}))
    out = pd.concat(rows, ignore_index=True)[TIME_COLUMNS]
    out.attrs["fits"] = fits
    return out


def crossover_n(measured: pd.DataFrame, phase: str = "train", slow: str = "svm_anova", fast: str = "rk"
                ) -> tuple[float | None, str]:
    """The n beyond which ``fast`` takes less time than ``slow`` in ``phase``, and how it was found.

    Between two measured n where the sign of (slow − fast) changes, the crossover is interpolated on log-log
    axes ("measured"); if the measured points show no change, the two power laws fitted to the FIT_POINTS largest n
    are solved for their intersection ("extrapolated"); none when they never cross at n > 1 in that direction.

    Parameters
    ----------
    measured : pandas.DataFrame
        :func:`time_against_n` output.
    phase : {"train", "predict"}, default "train"
        Which times.
    slow, fast : str
        The two models.

    Returns
    -------
    n : float or None
        The crossover.
    source : str
        "measured", "extrapolated", "already faster" (fast is faster at every measured n) or "none".
    """
    part = measured[(measured["phase"] == phase) & (measured["source"] == "measured")]
    wide = part.pivot_table(index="n", columns="model", values="seconds", aggfunc="median").sort_index()
    gap = np.log(wide[slow].to_numpy()) - np.log(wide[fast].to_numpy())  # > 0: fast is faster
    logn = np.log(wide.index.to_numpy(dtype=float))
    if np.all(gap > 0):
        return None, "already faster"
    for k in range(len(gap) - 1):
        if gap[k] <= 0 < gap[k + 1]:
            t = -gap[k] / (gap[k + 1] - gap[k])
            return float(math.exp(logn[k] + t * (logn[k + 1] - logn[k]))), "measured"
    tail = wide.tail(FIT_POINTS)
    a_s, b_s = fit_power_law(tail.index, tail[slow])
    a_f, b_f = fit_power_law(tail.index, tail[fast])
    if b_s <= b_f:
        return None, "none"
    n = (a_f / a_s) ** (1.0 / (b_s - b_f))
    return (float(n), "extrapolated") if n > float(wide.index.max()) else (None, "none")


@dataclass(frozen=True)
class TimeStudy:  # numpydoc ignore=PR02
    """Time against n, measured and extrapolated (:func:`time_study`).

    Parameters
    ----------
    times : DataFrame
        :func:`extrapolate` output.
    crossovers : dict
        Phase ("train", "predict") -> (n or None, source) from :func:`crossover_n`.
    n_memory : int
        The largest n whose exact Gram fits the memory budget (:func:`fits_in_memory`).
    D : int
        RK's number of random features.
    max_measured : int
        The largest measured n.
    """

    times: pd.DataFrame
    crossovers: dict[str, tuple[float | None, str]]
    n_memory: int
    D: int
    max_measured: int


def time_study(n_grid=MEASURED_N, D: int = TIME_D, C: float = 1.0) -> TimeStudy:
    """:func:`time_against_n` with one BLAS thread, extrapolated to the memory limit, and both crossovers.

    Parameters
    ----------
    n_grid : sequence of int, default MEASURED_N
        Measured training sizes.
    D : int, default TIME_D
        RK's number of random features.
    C : float, default=1.0
        The SVMs' C.

    Returns
    -------
    TimeStudy
        The tables.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        measured = time_against_n(n_grid, D, C=C)
    n_memory = fits_in_memory()
    crossovers = {phase: crossover_n(measured, phase) for phase in ("train", "predict")}
    return TimeStudy(extrapolate(measured, n_memory), crossovers, n_memory, int(D), int(measured["n"].max()))
