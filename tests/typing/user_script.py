"""A scikit-learn user's script, typed: what a type checker must infer for the public API of rkcore.

Checked by mypy (tests/ecosystem/test_types.py, .ci/types.sh) with the project's configuration, and run
as a script by the same test (so every line is real use, not only a declaration). ``assert_type`` makes
the checker fail when an inferred type changes - in particular when a result degrades to ``Any``, which
is what issue 40 found: ``itemset_kernel`` and ``fit_transform`` came out as ``Any`` in a user's script.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from typing_extensions import assert_type  # typing.assert_type from Python 3.11; requires-python is 3.10

import rkcore
from rkcore import ItemsetFamily, RandomKernel, anova_kernel, itemset_kernel
from rkcore.learners import FactorizationMachineClassifier

rng = np.random.default_rng(0)
X = rng.uniform(-1.0, 1.0, size=(40, 6))
y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)

# Itemset families, built by their constructors (0-based feature indices).
families = [ItemsetFamily.anova(6, 2), ItemsetFamily.all_subsets(6), ItemsetFamily.dot(6),
            ItemsetFamily.up_to(6, 2), ItemsetFamily.custom(6, [(0, 1), (2, 3, 4)]),
            ItemsetFamily.cross_fields([(0, 1, 2), (3, 4, 5)], m=2)]
assert_type(families[0], ItemsetFamily)
assert_type(families, list[ItemsetFamily])

# Exact kernels: a Gram matrix, dense, from dense or sparse rows.
gram = itemset_kernel(X, family=families[4])
assert_type(gram, np.ndarray)
assert_type(anova_kernel(X, degree=2), np.ndarray)
assert_type(anova_kernel(sp.csr_matrix(X), X[:5], degree=3), np.ndarray)
assert_type(rkcore.itemset_kernel(X[:3], family=families[0]), np.ndarray)  # the lazy top-level names keep their types
assert gram.shape == (40, 40)

# A random feature map, as a scikit-learn transformer.
rk = RandomKernel(n_components=64, kernel="anova", degree=2, random_state=0)
features = rk.fit_transform(X)
assert_type(features, NDArray[np.float64] | NDArray[np.float32])
assert_type(rk.fit(X), RandomKernel)
approx = features @ features.T
assert approx.shape == gram.shape

# A learner of the paper's comparison: fit returns the estimator, predict the labels.
clf = FactorizationMachineClassifier(degree=2, n_components=4, random_state=0)
assert_type(clf.fit(X, y), FactorizationMachineClassifier)
predicted = clf.predict(X)
assert_type(predicted, np.ndarray)
assert predicted.shape == (40,)
