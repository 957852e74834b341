"""One module + one registry entry is all a kernel or a map needs (issue 36): a toy kernel (the Laplacian
kernel exp(-gamma ||x - y||_1), its exact Gram from its definition) and a toy map (random Fourier features
with Cauchy frequencies, which estimate it), each registered explicitly with ``register_kernel`` /
``register_map`` and removed after the test, are then offered everywhere with no edit elsewhere: make_map and
the exact Gram, the command line's names and parser, the state table's choices, the sidebar's widgets, the
Timing page's complexity formula and the Gram page (AppTest).
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils import check_random_state

from rkcore.cli import build_parser, names
from rkcore.registry import (
    KERNELS, MAPS, CostModel, KernelEntry, KernelSpec, MapEntry, get_kernel, make_map, maps_for, register_kernel,
    register_map, same_kernel, time_complexity_latex, unregister_kernel, unregister_map,
)
from rkcore.registry.kernels import WIDTH
from rkcore.views.settings import FIELDS
from rkapp.widgets import kernel_widgets
from tests.conftest import error_texts, plotly_figures

KERNEL, MAP = "toy_laplacian", "toy_cauchy"


# ---------------------------------------------------------------------------- the toy kernel's module
def laplacian_gram(X, Y, spec: KernelSpec) -> np.ndarray:
    """exp(-gamma sum_j |x_j - y_j|), from the definition."""
    X = np.asarray(X, dtype=np.float64)
    Y = X if Y is None else np.asarray(Y, dtype=np.float64)
    return np.exp(-spec.gamma * np.abs(X[:, None, :] - Y[None, :, :]).sum(axis=-1))


TOY_KERNEL = KernelEntry(key=KERNEL, label="Laplacian (toy)", exact=laplacian_gram, parameters=(WIDTH,),
                         latex=r"K(\mathbf{x},\mathbf{y}) = \exp(-\gamma\|\mathbf{x}-\mathbf{y}\|_1)")


# ---------------------------------------------------------------------------- the toy map's module
class CauchyFourierFeatures(TransformerMixin, BaseEstimator):
    """sqrt(2/D) cos(W x + b), W ~ Cauchy(0, gamma) per entry, b ~ U[0, 2 pi): E[z(x) z(y)] is the Laplacian
    kernel, the Fourier transform of a product of Cauchy densities (Rahimi & Recht 2007)."""

    def __init__(self, n_components=64, gamma=1.0, random_state=None):
        self.n_components = n_components
        self.gamma = gamma
        self.random_state = random_state

    def fit(self, X, y=None):
        rng = check_random_state(self.random_state)
        d = np.asarray(X).shape[1]
        self.weights_ = self.gamma * rng.standard_cauchy((d, self.n_components))
        self.offsets_ = rng.uniform(0, 2 * np.pi, self.n_components)
        return self

    def transform(self, X):
        return np.sqrt(2.0 / self.n_components) * np.cos(np.asarray(X) @ self.weights_ + self.offsets_)


def toy_map_entry() -> MapEntry:
    """The toy map's one registry entry (made once its kernel is registered: an entry names known kernels)."""
    return MapEntry(
    key=MAP, label="Cauchy Fourier features (toy)", short_label="TOYC", kernels=(KERNEL,),
    distributions=("gaussian",), time_complexity=r"O(D\,d\,\mathrm{toy})", memory_complexity=r"O(D\,d)",
    build=lambda spec, D, distribution, seed: CauchyFourierFeatures(D, spec.gamma, seed), timing_kernel=KERNEL,
    operations=lambda d, D, m: D * d, unbiased=True, color="#117733", classifier_kernel=same_kernel,
    cost=CostModel(random_numbers=lambda d, D, m: d * D + D, gemm_flops=lambda n, d, D, m: 2.0 * n * d * D,
                   elements=lambda n, d, D, m: 3 * n * D, stored_floats=lambda d, D, m: d * D + D,
                   fit_seconds=lambda n, d, D, m: 1e-7 * n * D + 0.003),
    reference="a test of the registry")


@pytest.fixture
def toys():
    """Both toys registered for the test, and gone after it (registration is explicit, never on import)."""
    assert KERNEL not in KERNELS and MAP not in MAPS
    register_kernel(TOY_KERNEL)
    try:
        register_map(toy_map_entry())
        try:
            yield
        finally:
            unregister_map(MAP)
    finally:
        unregister_kernel(KERNEL)
    assert KERNEL not in KERNELS and MAP not in MAPS


@pytest.fixture
def X():
    return np.random.default_rng(0).uniform(0, 1, (12, 4))


def test_exact_gram_is_the_definition_and_the_map_estimates_it(toys, X):
    spec = KernelSpec(KERNEL, gamma=0.5)
    exact = spec.exact(X)
    i, j = 3, 7
    assert np.isclose(exact[i, j], np.exp(-0.5 * np.sum(np.abs(X[i] - X[j]))), rtol=1e-12)
    assert maps_for(spec) == [MAP] and maps_for(KERNEL) == [MAP]
    D = 20_000
    Z = make_map(MAP, spec, D, random_state=1).fit(X).transform(X)
    # each entry of Z Z^T averages D independent terms in [-2/D, 2/D] with mean K(x, y) (E cos(a) cos(b) over
    # the phase is cos(a - b) / 2): Hoeffding with probability 1 - 1e-9 over the 144 entries gives this bound
    bound = np.sqrt(8 * np.log(2 * 144 / 1e-9) / D)
    assert np.max(np.abs(Z @ Z.T - exact)) < bound
    with pytest.raises(ValueError, match="gamma"):
        KernelSpec(KERNEL, gamma=0.0)


def test_the_entry_answers_the_questions_code_used_to_ask_with_keys(toys):
    entry = get_kernel(KERNEL)
    assert entry.uses_gamma and not entry.uses_degree and not entry.takes_family and not entry.is_itemset
    assert not entry.is_polynomial and not entry.ordered and entry.widgets == ("gamma",)
    assert KernelSpec(KERNEL).family(4) is None and KernelSpec(KERNEL).label() == "Laplacian (toy)"


def test_the_command_line_offers_both(toys):
    assert MAP in names.map_keys() and MAP in names.method_keys()
    assert KERNEL in names.accuracy_kernels()  # a map offered to the study estimates it on itself
    parser = build_parser()
    assert parser.parse_args(["timing", "--maps", f"rk,{MAP}"]).maps == [["rk", MAP]]
    assert parser.parse_args(["accuracy", "--data", "builtin:gaussian", "--kernel", KERNEL]).kernel == KERNEL


def test_the_command_line_forgets_them_when_unregistered():
    assert MAP not in names.map_keys() and KERNEL not in names.accuracy_kernels()
    with pytest.raises(SystemExit):
        build_parser().parse_args(["timing", "--maps", MAP])


def test_the_state_table_and_the_sidebar_offer_both(toys):
    assert KERNEL in FIELDS["kernel"].options() and MAP in FIELDS["map"].options()
    assert MAP in FIELDS["tm_maps"].options()
    assert kernel_widgets(KERNEL) == ["gamma"]
    assert r"\text{TOYC: } O(D\,d\,\mathrm{toy})" in time_complexity_latex()


def test_the_gram_page_draws_the_toy_kernel_with_its_map(toys, run_page):
    at = run_page("pages/1_Gram_matrices.py", kernel=KERNEL, map=MAP, gamma=0.5, n=20, D=64)
    assert not at.exception and not error_texts(at), error_texts(at)
    assert at.selectbox(key="kernel").value == KERNEL and at.selectbox(key="map").value == MAP
    assert at.selectbox(key="map").options == ["Cauchy Fourier features (toy)"]  # the one map of its kernel
    assert [w.key for w in at.sidebar.number_input] == ["D", "seed", "n", "gamma"]  # its widget, no degree
    assert [[t["type"] for t in f["data"]] for f in plotly_figures(at)] == [["heatmap", "heatmap"]]


def test_registration_refuses_twins_wrong_types_and_orphans(toys):
    with pytest.raises(ValueError, match="already registered"):
        register_kernel(TOY_KERNEL)
    with pytest.raises(ValueError, match="register_map takes a MapEntry, got KernelEntry"):
        register_map(TOY_KERNEL)
    # a map still names the kernel: removing the kernel first would leave the map pointing at nothing
    with pytest.raises(ValueError, match=f"still named by the map.*{MAP}"):
        unregister_kernel(KERNEL)
    assert KERNEL in KERNELS
