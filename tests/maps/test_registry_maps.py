"""Every map in the registry, on every kernel it claims: builds, maps to (n, D), and is unbiased."""
import numpy as np
import pytest

from rkcore.registry import KERNELS, MAPS, KernelSpec, make_map

ITEMSETS = ((0,), (1, 2), (0, 2, 3), (1, 3, 4))


def spec_for(kernel: str) -> KernelSpec:
    return KernelSpec(kernel, degree=2, itemsets=ITEMSETS if kernel == "itemset" else None, c=1.0, gamma=0.5)


PAIRS = [(key, kernel) for key, entry in MAPS.items() for kernel in entry.kernels if entry.supports(spec_for(kernel))]
UNBIASED = [(key, kernel) for key, kernel in PAIRS if MAPS[key].unbiased]  # not Nystroem (data-dependent), SORF
UNSUPPORTED = [(key, kernel) for key, entry in MAPS.items() for kernel in KERNELS if not entry.supports(spec_for(kernel))]


def _unit_rows(n, d, seed):
    X = np.random.RandomState(seed).standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_every_map_has_a_kernel():
    assert {key for key, _ in PAIRS} == set(MAPS)


def test_the_unbiasedness_test_covers_every_map_declared_unbiased():
    """The exclusion is the registry's field, not a key: only maps declared biased are left out."""
    assert {key for key, _ in UNBIASED} == {k for k, e in MAPS.items() if e.unbiased}
    # Nystroem is data-dependent, SORF biased (fixed row lengths; tests/maps/test_structured.py measures it)
    assert {k for k, e in MAPS.items() if not e.unbiased} == {"nystroem", "sorf"}


@pytest.mark.parametrize("key, kernel", PAIRS)
def test_builds_fits_and_transforms_to_n_by_D(key, kernel):
    X = np.random.RandomState(0).standard_normal((40, 6))  # n >= D, so Nystroem keeps D components
    est = make_map(key, spec_for(kernel), 24, random_state=0)
    Z = est.fit(X).transform(X[:7])
    assert Z.shape == (7, 24) and np.isfinite(Z).all()


def _bias_and_standard_error(key, kernel, n=4, d=5, D=32, seeds=400):
    """|mean over seeds of Z Z^T - K| and its standard error (sd / sqrt(seeds)) per upper-triangle entry.

    Seeds are independent draws of the map, so the mean is ~ normal around its expectation (CLT); an
    unbiased map exceeds 5 SE by chance with probability < 1e-5 per (map, kernel). Seeds are fixed, so the
    tests below are deterministic. d = 5 is small on purpose: a bias that shrinks with d (SORF's) is largest."""
    X = _unit_rows(n, d, seed=1)
    spec = spec_for(kernel)
    iu = np.triu_indices(n)
    est = np.empty((seeds, iu[0].size))
    for s in range(seeds):
        Z = make_map(key, spec, D, random_state=s).fit(X).transform(X)
        est[s] = (Z @ Z.T)[iu]
    return np.abs(est.mean(axis=0) - spec.exact(X)[iu]), est.std(axis=0, ddof=1) / np.sqrt(seeds), spec.exact(X)


@pytest.mark.parametrize("key, kernel", UNBIASED)
def test_mean_gram_over_seeds_approaches_exact_kernel(key, kernel):
    """Every entry within 5 SE of the kernel (see _bias_and_standard_error)."""
    bias, se, K = _bias_and_standard_error(key, kernel)
    assert (bias <= 5 * se + 1e-12 * np.abs(K).max()).all(), (bias, se)


BIASED = [(key, kernel) for key, kernel in PAIRS if not MAPS[key].unbiased and not MAPS[key].data_dependent]


@pytest.mark.parametrize("key, kernel", BIASED)
def test_the_same_test_detects_the_maps_declared_biased(key, kernel):
    """The power check of the test above: on the maps the registry declares biased (SORF: rows of fixed length
    sqrt(p), tests/maps/test_structured.py has its exact bias), the same statistic flags an entry beyond 5 SE.
    Fails if SORF silently became unbiased (then its entry must say so) or if the statistic lost its power."""
    assert BIASED == [("sorf", "rbf")]
    bias, se, K = _bias_and_standard_error(key, kernel)
    assert (bias > 5 * se + 1e-12 * np.abs(K).max()).any(), (bias, se)


@pytest.mark.parametrize("kernel", [k for k in MAPS["nystroem"].kernels])
def test_nystroem_is_exact_on_its_landmarks(kernel):
    """With every training point a landmark, K_nm K_mm^+ K_mn = K on those points."""
    X = _unit_rows(12, 4, seed=2)
    spec = spec_for(kernel)
    Z = make_map("nystroem", spec, 12, random_state=0).fit(X).transform(X)
    np.testing.assert_allclose(Z @ Z.T, spec.exact(X), atol=1e-8)


@pytest.mark.parametrize("key, kernel", UNSUPPORTED)
def test_rejects_kernels_it_does_not_approximate(key, kernel):
    with pytest.raises(ValueError, match="does not approximate"):
        make_map(key, spec_for(kernel), 16)


@pytest.mark.parametrize("key", [k for k, e in MAPS.items() if not e.takes_distribution])
def test_rejects_distributions_it_does_not_draw(key):
    entry = MAPS[key]
    other = next(d for d in ("gaussian", "laplace") if d not in entry.distributions)
    with pytest.raises(ValueError, match="not allowed"):
        make_map(key, spec_for(entry.kernels[0]), 16, distribution=other)


@pytest.mark.parametrize("bad, match", [({"key": "nope"}, "Unknown map"),
                                        ({"distribution": "cauchy"}, "Unknown distribution"),
                                        ({"n_components": 0}, "n_components")])
def test_rejects_bad_arguments(bad, match):
    args = {"key": "rk", "spec": spec_for("anova"), "n_components": 8, **bad}
    with pytest.raises(ValueError, match=match):
        make_map(**args)
