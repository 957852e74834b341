"""Every heavy path priced (issue 37, finding 3): each cost model's cliff cases, where the Newton check of the
ANOVA / up-to fast paths hands values to the stable recursion (large d and m, m close to d), run on small
sizes that still trigger the cliff, single-threaded, timed in CPU seconds (the load of a shared machine
does not count): no run may take more than 3x its estimate. On the old cost models the Timing page at
m = 5 and d = 1,024 was estimated at 11 s and ran for more than 600 s. The timed cases are marked slow (CI's
long-test step); the check of the switch itself runs in the default suite."""
from __future__ import annotations

import time

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from rkcore.registry import KernelSpec, make_map
from rkcore.studies import costs
from rkcore.studies.costs.stable_path import stable_share
from rkcore.studies.gram import gram_pair
from rkcore.studies.timing import time_maps

MAX_RATIO = 3.0


@pytest.fixture(autouse=True)
def quiet_machine_rates(monkeypatch):
    monkeypatch.setenv(costs.SPEED_FACTOR_ENV, "1")  # the estimates of the calibration machine, in CPU seconds


def cpu_seconds(run) -> float:
    with threadpool_limits(1):
        start = time.process_time()
        run()
        return time.process_time() - start


def assert_within_estimate(what: str, estimate: float, run) -> None:
    spent = cpu_seconds(run)
    assert spent <= MAX_RATIO * estimate, f"{what}: ran {spent:.3f} CPU-s, estimated {estimate:.3f} s"


@pytest.mark.slow  # a few seconds of timed runs each
@pytest.mark.parametrize("m, d_list, d_at, D_at, D_list, n", [
    (5, [512, 1024], 1024, 64, [32, 64], 20),  # the page's case: m = 5, the d sweep reaching 1,024
    (3, [1024, 2048], 2048, 32, [16, 32], 20),  # the closed form of m = 3 switches between d = 1,024 and 2,048
    (8, [8, 16], 8, 512, [256, 512], 100),  # m close to d: every value rejected
])
def test_the_timing_page_is_priced_at_its_cliffs(m, d_list, d_at, D_at, D_list, n):
    maps = ["rk", "scrk"]
    estimate = costs.timing_cost(maps, d_list, D_at, D_list, d_at, n, m, repeats=1).seconds

    def both_sweeps():  # what the page runs (pages/5_Timing.py run_timings)
        time_maps(maps, d_list, [D_at], [n], kernel_degree=m, repeats=1, warmup=1)
        time_maps(maps, [d_at], D_list, [n], kernel_degree=m, repeats=1, warmup=1)

    assert_within_estimate(f"Timing m={m} d={d_list}", estimate, both_sweeps)


@pytest.mark.slow
@pytest.mark.parametrize("kernel, m, d, distribution", [
    ("anova", 5, 1024, "rademacher"), ("anova", 5, 1024, "gaussian"), ("up_to", 5, 1024, "rademacher"),
    ("anova", 3, 2048, "gaussian"), ("anova", 7, 8, "gaussian"), ("anova", 5, 16, "gaussian"),
])
def test_rk_transform_is_priced_at_its_cliffs(kernel, m, d, distribution):
    n, D = 20, 64
    X = np.random.default_rng(1).standard_normal((n, d))
    estimate = costs.map_transform_seconds(n, d, D, m, "rk", kernel, distribution)
    spec = KernelSpec(kernel, m)
    assert_within_estimate(f"RK {kernel} m={m} d={d} {distribution}", estimate,
                           lambda: make_map("rk", spec, D, distribution, random_state=0).fit(X).transform(X))


@pytest.mark.slow
@pytest.mark.parametrize("m, d", [(5, 1024), (8, 8)])
def test_the_gram_view_is_priced_at_its_cliffs(m, d):
    n, D = 40, 64
    X = np.random.default_rng(2).standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # the page's row normalization
    estimate = costs.gram_view_cost(n, d, D, "anova", m, "rk").seconds
    assert_within_estimate(f"Gram m={m} d={d}", estimate, lambda: gram_pair(X, KernelSpec("anova", m), "rk", D))


def test_the_cliff_is_the_codes_own_switch():
    """The share comes from the code's check (numerics.newton_is_safe): none below the switch, all above,
    for RK's default weights as for the exact kernel's products; m close to d is rejected."""
    assert stable_share(512, 5) == 0.0 and stable_share(1024, 5) == 1.0
    assert stable_share(1024, 5, "anova", "gaussian") == 1.0 and stable_share(1024, 3) == 0.0
    assert stable_share(8, 8) == 1.0 and stable_share(1024, 5, "dot") == 0.0
    cheap, cliff = (costs.map_transform_seconds(1000, d, 1024, 5, "rk", "anova", "rademacher") for d in (512, 1024))
    assert cliff > 20 * cheap, (cheap, cliff)
