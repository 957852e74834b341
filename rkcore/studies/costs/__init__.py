"""Cost models of the engines behind the dashboard's views: seconds and peak bytes of exactly what a
view computes, before it computes it. Arithmetic (no streamlit, nothing proportional to the inputs
allocated), so a page can estimate a run, refuse it, or search the largest settings that fit.

The constants are single-thread rates of the 2-core server on a quiet machine (the pages limit BLAS
to one thread), fitted per model to the CPU time of the runs of ``benchmarks/studies/bench_run_estimates.py``.
:func:`section` multiplies every estimate by :func:`estimate_factor`: 1 (the calibration machine), or
``RKCORE_SPEED_FACTOR`` on a slower or faster host. Never by the load now: a momentary spike of a
probe took students' charts away (issue 26); the server's queue (rkcore.base.admission.Admission) is what
says how busy it is, and an estimate, hence the run-or-wait decision, is the same on every rerun of
the same settings. :func:`speed_factor` (a probe of the slowdown now) is kept for the benchmark,
which compares every model with measured runs (time and peak memory) and writes
benchmarks/results/run_estimates.md. Memory uses :func:`rkcore.base.limits.nbytes` (float64 arrays), the
same accounting as the per-view budget.

This package is the face of three modules, imported from here:

- :mod:`rkcore.studies.costs.speed`: the machine's speed now (:func:`speed_factor`) and the factor of every
  estimate (:func:`estimate_factor`);
- :mod:`rkcore.studies.costs.rates`: the single-thread rates, :class:`RunCost`, :func:`section` and the priced
  units of work (GEMMs, element-wise passes, exact kernels, registry maps);
- :mod:`rkcore.studies.costs.views`: one cost function per view of the dashboard.
"""
from __future__ import annotations

from .rates import (
    BASE_BYTES, CALL_SECONDS, ELEMENT_SECONDS, GEMM_FLOPS, OVERHEAD, RNG_SECONDS, TIDY_ROW_BYTES, TIDY_ROW_SECONDS,
    RunCost, elements_seconds, exact_kernel_seconds, gemm_seconds, gram_product_seconds, map_floats,
    map_transform_seconds, section,
)
from .speed import (
    MAX_SPEED_FACTOR, MIN_SPEED_FACTOR, PROBE_REFERENCE_SECONDS, SPEED_CACHE_SECONDS, SPEED_FACTOR_ENV,
    estimate_factor, probe_seconds, speed_factor,
)
from .views import (
    CLASSIFIER_SCALE, FIT_SECONDS, FIT_SECONDS_PER_FEATURE, TIMING_SCALE, classifier_cost, classifier_fit_seconds,
    compositional_cost, error_study_cost, gram_view_cost, itemsets_view_cost, kernel_trick_cost, pair_variance_cost,
    projection_cost, rff_curve_cost, speed_accuracy_cost, timing_cost,
)

__all__ = [
    "BASE_BYTES", "CALL_SECONDS", "ELEMENT_SECONDS", "GEMM_FLOPS", "OVERHEAD", "RNG_SECONDS", "TIDY_ROW_BYTES",
    "TIDY_ROW_SECONDS", "RunCost", "elements_seconds", "exact_kernel_seconds", "gemm_seconds",
    "gram_product_seconds", "map_floats", "map_transform_seconds", "section",
    "MAX_SPEED_FACTOR", "MIN_SPEED_FACTOR", "PROBE_REFERENCE_SECONDS", "SPEED_CACHE_SECONDS", "SPEED_FACTOR_ENV",
    "estimate_factor", "probe_seconds", "speed_factor",
    "CLASSIFIER_SCALE", "FIT_SECONDS", "FIT_SECONDS_PER_FEATURE", "TIMING_SCALE", "classifier_cost",
    "classifier_fit_seconds", "compositional_cost", "error_study_cost", "gram_view_cost", "itemsets_view_cost",
    "kernel_trick_cost", "pair_variance_cost", "projection_cost", "rff_curve_cost", "speed_accuracy_cost",
    "timing_cost",
]
