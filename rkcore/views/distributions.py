"""Distributions and variance: which weight distribution gives the most precise RK estimate (Lemma 4, Table 1).

Three computations, run as one (one estimate, one button: ``rkapp.views.run_view(STUDY, ..., along=(VARIANCES,
EXACT))``): :data:`STUDY`, the paper's Table 1 protocol; :data:`VARIANCES`, the measured variance of three pairs;
:data:`EXACT`, their exact variance and the per-distribution summary, which no random map enters (the page runs it
on :func:`without_seed`, so a seed change recomputes nothing of it). The page
(``pages/4_Distributions_and_variance.py``) draws their results with the figure builders re-exported here.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from rkcore.base.arrays import dense
from rkcore.base.limits import format_estimate
from rkcore.figures.variance import (
    distribution_note, error_vs_D_figure, lowest_by_D, variance_by_distribution_figure, variance_figure,
)
from rkcore.maps.distributions import DISTRIBUTIONS
from rkcore.registry import ITEMSET_KERNELS, KERNELS
from rkcore.studies import errors
from rkcore.studies.costs import error_study_cost, pair_variance_cost
from rkcore.studies.costs.rates import RunCost
from rkcore.studies.orthogonal_study import against_iid, orthogonal_note, variance_ratio_summary
from rkcore.studies.table1 import table1_view
from rkcore.studies.variance_study import (
    empirical_pair_variance, exact_pair_variance, iid_only, select_pairs, variance_by_distribution,
)
from rkcore.theory.variance import VARIANCE_KERNELS

from .base import View
from .settings import ViewSpec, choices

MULTIPLES, TRIALS, VARIANCE_TRIALS = choices("dv_mult"), choices("dv_trials"), choices("dv_vtrials")
#: The paper's comparison when fewer than two distributions are chosen; orthogonal rows on request.
IID = tuple(k for k, e in DISTRIBUTIONS.items() if e.iid)
#: Points whose exact kernel picks the three pairs (plenty for three pairs).
PAIR_POINTS = 400


def chosen_distributions(spec: ViewSpec) -> tuple[str, ...]:
    """The distributions compared: the sidebar's when it names two or more, else the i.i.d. ones.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.

    Returns
    -------
    tuple of str
        Distribution keys.
    """
    return tuple(spec.distributions) if len(spec.distributions) >= 2 else IID


def scrk_available(spec: ViewSpec) -> bool:
    """Whether the signed circulant map (SCRK) can join: ANOVA kernels only.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.

    Returns
    -------
    bool
        True for an ANOVA kernel.
    """
    return KERNELS[spec.kernel].single_order


def methods_for(spec: ViewSpec, distributions: tuple[str, ...], scrk: bool) -> list[tuple[str, str | None]]:
    """The (map, distribution) pairs of the study: RK with each distribution, and SCRK when asked and possible.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    distributions : tuple of str
        The distributions compared.
    scrk : bool
        Whether to add SCRK.

    Returns
    -------
    list of (str, str or None)
        The methods, as :func:`rkcore.studies.errors.error_study` takes them.
    """
    methods: list[tuple[str, str | None]] = [("rk", dist) for dist in distributions]
    return methods + [("scrk", None)] if scrk and scrk_available(spec) else methods


def D_values(multiples, d: int) -> tuple[int, ...]:
    """The D of the study: the chosen multiples of d, sorted (2d when none is chosen).

    Parameters
    ----------
    multiples : iterable of str
        Multiples of d.
    d : int
        Features.

    Returns
    -------
    tuple of int
        The D.
    """
    return tuple(sorted(int(m) * d for m in multiples)) or (2 * d,)


def without_seed(spec: ViewSpec) -> ViewSpec:
    """The settings of what no random map enters (the pairs, the exact variances): the same for every seed.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.

    Returns
    -------
    ViewSpec
        The same with seed 0.
    """
    return spec.with_(seed=0)


@dataclass(frozen=True)
class DistributionStudy:  # numpydoc ignore=PR02
    """The Table 1 protocol on the view's data.

    Parameters
    ----------
    study : DataFrame
        :func:`rkcore.studies.errors.error_study` rows.
    wide, tidy : DataFrame
        :func:`rkcore.studies.table1.table1_view` of the study.
    lowest : DataFrame
        The lowest mean per D and its ties (:func:`rkcore.figures.variance.lowest_by_D`).
    n, d : int
        Points and features.
    D_list : tuple of int
        The D of the study.
    kernel_label : str
        The kernel in words.
    """

    study: pd.DataFrame
    wide: pd.DataFrame
    tidy: pd.DataFrame
    lowest: pd.DataFrame
    n: int
    d: int
    D_list: tuple[int, ...]
    kernel_label: str

    @property
    def errors(self) -> pd.DataFrame:
        """The mean absolute error rows (the chart's CSV).

        Returns
        -------
        DataFrame
            The rows of the study whose metric is ``mean_abs_error``.
        """
        return self.study[self.study["metric"] == "mean_abs_error"]


def compute_study(spec: ViewSpec, data, *, dv_mult: tuple, dv_trials: int, dv_scrk: bool,
                  progress=None) -> DistributionStudy:
    """Table 1 protocol on the view's data: the error study over the methods, D and trials.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    data : Dataset
        The view's data.
    dv_mult : tuple of str
        D as multiples of d.
    dv_trials : int
        Maps per D.
    dv_scrk : bool
        Include SCRK (ANOVA kernels).
    progress : callable, optional
        ``report(fraction, message)`` (the dashboard's progress bar).

    Returns
    -------
    DistributionStudy
        The study and its Table 1 views.
    """
    if not dv_mult:
        raise ValueError("Choose at least one multiple of d for D (the paper uses 2d, 4d, 8d and 16d).")
    kernel = spec.kernel_spec(data)
    n, d = data.X.shape
    D_list = D_values(dv_mult, d)
    # one BLAS thread: small products, and a shared 2-core machine (threads fighting cost 100x)
    with threadpool_limits(limits=1, user_api="blas"):
        study = errors.error_study(data.X, kernel, methods_for(spec, chosen_distributions(spec), bool(dv_scrk)),
                                   list(D_list), int(dv_trials), pairs="nonzero", random_state=spec.seed,
                                   progress=progress)
    wide, tidy = table1_view(study, d)
    return DistributionStudy(study, wide, tidy, lowest_by_D(tidy), n, d, D_list, kernel.label())


def study_cost(spec: ViewSpec, n: int, d: int, *, dv_mult: tuple, dv_trials: int, dv_scrk: bool) -> RunCost:
    """Seconds and peak bytes of :func:`compute_study`.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Points and features.
    dv_mult : tuple of str
        D as multiples of d.
    dv_trials : int
        Maps per D.
    dv_scrk : bool
        Include SCRK.

    Returns
    -------
    RunCost
        The estimate.
    """
    kernel = spec.kernel_spec(d=d)
    methods = methods_for(spec, chosen_distributions(spec), bool(dv_scrk))
    return error_study_cost(n, d, kernel.name, kernel.degree, D_values(dv_mult, d), methods, int(dv_trials))


def reproduce(spec: ViewSpec, *, dv_mult: tuple, dv_trials: int, dv_scrk: bool) -> str:
    """Python code running the Table 1 study of this view with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    dv_mult : tuple of str
        D as multiples of d.
    dv_trials : int
        Maps per D.
    dv_scrk : bool
        Include SCRK.

    Returns
    -------
    str
        The code.
    """
    return spec.code(
        "from rkcore.studies.errors import error_study, summarize_errors",
        "from rkcore.theory.variance import rk_variance, variance_table",
        "from rkcore.studies.table1 import table1_view",
        "from rkcore.figures.variance import error_vs_D_figure",
        "",
        f"D_list = [m * d for m in {[int(m) for m in sorted(dv_mult, key=int)]}]",
        f"methods = {methods_for(spec, chosen_distributions(spec), bool(dv_scrk))!r}",
        f"study = error_study(X, spec, methods, D_list, {int(dv_trials)}, pairs='nonzero', random_state={spec.seed})",
        "wide, tidy = table1_view(study, d)",
        "print(wide.to_string(index=False))",
        "error_vs_D_figure(study).show()",
        "# exact variance of <Z(x), Z(y)> for the pairs (X[i], X[j]) at D features:",
        f"# rk_variance(X[i], X[j], D, kernel={spec.kernel!r}, degree={spec.degree}, distribution='rademacher')",
    )


def _pairs(X, kernel) -> pd.DataFrame:
    """Three pairs of points picked from the exact kernel of the first PAIR_POINTS points."""
    return select_pairs(kernel.exact(X[:PAIR_POINTS]))


@dataclass(frozen=True)
class PairVariances:  # numpydoc ignore=PR02
    """The measured variance of three pairs, and, for weights drawn orthogonal in blocks, its ratio to the
    exact i.i.d. variance of the same law.

    Parameters
    ----------
    empirical : DataFrame
        :func:`rkcore.studies.variance_study.empirical_pair_variance` rows.
    orthogonal : DataFrame or None
        :func:`rkcore.studies.orthogonal_study.variance_ratio_summary` rows (None: no orthogonal rows chosen).
    """

    empirical: pd.DataFrame
    orthogonal: pd.DataFrame | None


def compute_variances(spec: ViewSpec, data, *, dv_mult: tuple, dv_vtrials: int) -> PairVariances:
    """The sample variance of the estimate for three pairs, over ``dv_vtrials`` independent maps per D.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    data : Dataset
        The view's data.
    dv_mult : tuple of str
        D as multiples of d.
    dv_vtrials : int
        Maps per distribution and D.

    Returns
    -------
    PairVariances
        The measured variances.
    """
    kernel, X = spec.kernel_spec(data), dense(data.X)
    chosen = chosen_distributions(spec)
    with threadpool_limits(limits=1, user_api="blas"):
        empirical = empirical_pair_variance(X, _pairs(X, kernel), kernel, chosen, D_values(dv_mult, X.shape[1]),
                                            int(dv_vtrials), random_state=spec.seed)
    orthogonal = None
    if any(not DISTRIBUTIONS[dist].iid for dist in chosen):  # no exact formula: against i.i.d. weights of the law
        orthogonal = variance_ratio_summary(against_iid(empirical, X, kernel))
    return PairVariances(empirical, orthogonal)


def variances_cost(spec: ViewSpec, n: int, d: int, *, dv_mult: tuple, dv_vtrials: int) -> RunCost:
    """Seconds and peak bytes of :func:`compute_variances`.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Points and features.
    dv_mult : tuple of str
        D as multiples of d.
    dv_vtrials : int
        Maps per distribution and D.

    Returns
    -------
    RunCost
        The estimate.
    """
    kernel = spec.kernel_spec(d=d)
    return pair_variance_cost(d, kernel.name, kernel.degree, D_values(dv_mult, d), len(chosen_distributions(spec)),
                              int(dv_vtrials), False)


@dataclass(frozen=True)
class ExactVariances:  # numpydoc ignore=PR02
    """What no random map enters: the exact variance line of the three pairs and the per-distribution summary.

    Parameters
    ----------
    exact : DataFrame or None
        :func:`rkcore.studies.variance_study.exact_pair_variance` rows (None: no exact formula for the kernel).
    summary : DataFrame or None
        :func:`rkcore.studies.variance_study.variance_by_distribution` rows (None: no formula, or no i.i.d. law).
    """

    exact: pd.DataFrame | None
    summary: pd.DataFrame | None


def compute_exact(spec: ViewSpec, data, *, dv_mult: tuple) -> ExactVariances:
    """The exact variance (E[f²] − K²)/D of the three pairs over the D range, and the exact per-feature variance
    by distribution over a fixed sample of pairs (the same numbers whatever the seed of the maps).

    Parameters
    ----------
    spec : ViewSpec
        The view's settings (the page passes :func:`without_seed` of them).
    data : Dataset
        The view's data.
    dv_mult : tuple of str
        D as multiples of d.

    Returns
    -------
    ExactVariances
        The exact variances (None where no formula covers the kernel).
    """
    kernel, X = spec.kernel_spec(data), dense(data.X)
    if kernel.name not in VARIANCE_KERNELS:
        return ExactVariances(None, None)
    chosen = chosen_distributions(spec)
    D_list = D_values(dv_mult, X.shape[1])
    D_line = np.logspace(np.log10(D_list[0]), np.log10(D_list[-1]), 40)
    exact = exact_pair_variance(X, _pairs(X, kernel), kernel, chosen, D_line)
    summary = variance_by_distribution(data.X, kernel, chosen, random_state=0) if iid_only(chosen) else None
    return ExactVariances(exact, summary)


def exact_cost(spec: ViewSpec, n: int, d: int, *, dv_mult: tuple) -> RunCost:
    """Seconds and peak bytes of :func:`compute_exact`: the pairs' kernel, the exact line and the summary.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    n, d : int
        Points and features.
    dv_mult : tuple of str
        D as multiples of d.

    Returns
    -------
    RunCost
        The estimate.
    """
    kernel = spec.kernel_spec(d=d)
    part = pair_variance_cost(d, kernel.name, kernel.degree, D_values(dv_mult, d), len(chosen_distributions(spec)),
                              0, kernel.name in VARIANCE_KERNELS)  # no maps: the kernel and the formulas
    return RunCost(part.seconds, part.bytes, (("exact variances", part.seconds, part.bytes),))


def reproduce_variances(spec: ViewSpec, *, dv_mult: tuple, dv_vtrials: int) -> str:
    """Python code measuring the variance of three pairs with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    dv_mult : tuple of str
        D as multiples of d.
    dv_vtrials : int
        Maps per distribution and D.

    Returns
    -------
    str
        The code.
    """
    return spec.code(
        "from rkcore.studies.variance_study import empirical_pair_variance, select_pairs",
        "",
        f"pairs = select_pairs(spec.exact(X[:{PAIR_POINTS}]))",
        f"D_list = [m * d for m in {[int(m) for m in sorted(dv_mult, key=int)] or [2]}]",
        f"distributions = {list(chosen_distributions(spec))!r}",
        f"print(empirical_pair_variance(X, pairs, spec, distributions, D_list, {int(dv_vtrials)}, "
        f"random_state={spec.seed}))",
    )


def reproduce_exact(spec: ViewSpec, *, dv_mult: tuple) -> str:
    """Python code computing the exact variances of this view with rkcore.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    dv_mult : tuple of str
        D as multiples of d.

    Returns
    -------
    str
        The code.
    """
    return spec.code(
        "from rkcore.studies.variance_study import exact_pair_variance, select_pairs, variance_by_distribution",
        "",
        f"pairs = select_pairs(spec.exact(X[:{PAIR_POINTS}]))",
        f"D_list = [m * d for m in {[int(m) for m in sorted(dv_mult, key=int)] or [2]}]",
        f"distributions = {list(chosen_distributions(spec))!r}",
        "print(exact_pair_variance(X, pairs, spec, distributions, np.logspace(np.log10(D_list[0]), "
        "np.log10(D_list[-1]), 40)))",
        "print(variance_by_distribution(X, spec, distributions, random_state=0))",
    )


def variance_rows(variances: PairVariances, exact: ExactVariances) -> pd.DataFrame:
    """The variance chart's data (its CSV): the measured rows, and the exact ones when there are.

    Parameters
    ----------
    variances : PairVariances
        The measured variances.
    exact : ExactVariances
        The exact variances.

    Returns
    -------
    DataFrame
        The rows, with a ``kind`` column when both are present.
    """
    if exact.exact is None:
        return variances.empirical
    return pd.concat([variances.empirical.assign(kind="empirical"), exact.exact.assign(kind="exact")],
                     ignore_index=True)


def describe(spec: ViewSpec, result: DistributionStudy, *, description: str, kernel: str, dv_mult: tuple,
             dv_trials: int, dv_scrk: bool) -> str:
    """The study's caption: data, kernel, D, trials, the error measured and the estimated cost.

    Parameters
    ----------
    spec : ViewSpec
        The view's settings.
    result : DistributionStudy
        The study.
    description, kernel : str
        The data's description and the kernel's label, escaped for markdown by the caller.
    dv_mult : tuple of str
        D as multiples of d.
    dv_trials : int
        Maps per D.
    dv_scrk : bool
        Include SCRK.

    Returns
    -------
    str
        The caption.
    """
    n, d = result.n, result.d
    seconds = study_cost(spec, n, d, dv_mult=dv_mult, dv_trials=dv_trials, dv_scrk=dv_scrk).seconds
    return (f"{description} n = {n} points, d = {d}, {spec.normalization}-normalized; "
            f"{kernel} kernel; D ∈ {{{', '.join(map(str, result.D_list))}}}; {dv_trials} trials per "
            f"cell; error = mean of |⟨Z(xᵢ), Z(xⱼ)⟩ − K(xᵢ, xⱼ)| over the pairs with K ≠ 0 (diagonal included), "
            f"as in the paper. Estimated cost {format_estimate(seconds)}.")


def lowest_text(lowest: pd.DataFrame) -> str:
    """The lowest mean per D, and what ties with it.

    Parameters
    ----------
    lowest : DataFrame
        :func:`rkcore.figures.variance.lowest_by_D` rows.

    Returns
    -------
    str
        "D = 40: Rademacher (ties with Gaussian); ..."
    """
    return "; ".join(f"D = {D}: {best}" + (f" (ties with {', '.join(t for t in tied if t != best)})"
                                            if len(tied) > 1 else "")
                     for D, best, tied in zip(lowest["D"], lowest["lowest"], lowest["tied"]))


STUDY = View(key="dv", what="the distribution study", compute=compute_study, cost=study_cost, reproduce=reproduce,
             settings=("dv_mult", "dv_trials", "dv_scrk"), progress="Measuring the errors…")
VARIANCES = View(key="dv_pair_variances", what="the variances", compute=compute_variances, cost=variances_cost,
                 reproduce=reproduce_variances, settings=("dv_mult", "dv_vtrials"))
EXACT = View(key="dv_exact_variances", what="the exact variances", compute=compute_exact, cost=exact_cost,
             reproduce=reproduce_exact, settings=("dv_mult",))
VIEWS = (STUDY, VARIANCES, EXACT)

__all__ = ["DISTRIBUTIONS", "EXACT", "IID", "ITEMSET_KERNELS", "MULTIPLES", "STUDY", "TRIALS", "VARIANCES",
           "VARIANCE_TRIALS", "DistributionStudy", "ExactVariances", "PairVariances", "chosen_distributions",
           "distribution_note", "error_vs_D_figure", "lowest_text", "orthogonal_note", "scrk_available",
           "variance_by_distribution_figure", "variance_figure", "variance_rows", "without_seed", "describe"]
