r"""Learners compared in the paper's accuracy study (Atarashi, Maji & Oyama, AAAI-19, Section 6).

* :class:`ExactKernelSVC` - a kernel SVM on any exact kernel of the registry
  (libsvm through ``SVC(kernel="precomputed")``, Gram matrices in row blocks).
* :func:`random_feature_pipeline` - a linear SVM / logistic regression on any
  registered random feature map (RK, SCRK, TS, RM, ...), built through
  :func:`rkcore.registry.make_map`.
* :class:`FactorizationMachineClassifier` - higher-order factorization machines
  (paper eq. 5, Blondel et al. 2016a/b) of any ANOVA order m >= 2.
* :class:`AllSubsetsModelClassifier` - the all-subsets model (paper eq. 6).
* :class:`RandomFeatureSGDClassifier` - a linear model on random features trained batch by batch
  (``partial_fit``; memory independent of the number of rows).
* :class:`SparseRandomFeatureClassifier` - Sparse Random Features (Yen et al.,
  NIPS 2014, Algorithm 1) over any registered map.

The two factorized models are fitted with L-BFGS-B on their exact regularized
objective with analytic, fully vectorized gradients (power sums and Newton's
identities for the ANOVA kernel; sparse leave-one-out products for the
all-subsets kernel). For more than two classes they fit one binary model
per class against the rest themselves.

The four learner families live in sub-modules (pure moves; everything is re-exported here, so
``from rkcore.learners import ...`` works as before):

======================================  ============================================================
rkcore.learners.common                  losses, label checks, sparse products shared by the learners
rkcore.learners.kernel_svm              ExactKernelSVC, exact_gram
rkcore.learners.linear                  random_feature_pipeline
rkcore.learners.factorization_machine   FactorizationMachineClassifier
rkcore.learners.all_subsets_model       AllSubsetsModelClassifier
rkcore.learners.lbfgs                   the L-BFGS-B binary classifier the two share
rkcore.learners.sparse_rf               SparseRandomFeatureClassifier
rkcore.learners.streaming               RandomFeatureSGDClassifier
rkcore.learners.regression              FactorizationMachineRegressor, ExactKernelRidge, random_feature_ridge,
                                        for_many_classes (one-vs-rest for the binary-by-nature models)
======================================  ============================================================
"""
# Re-exports: the public names only; private helpers are imported from the module that owns them.
from .common import CLASSIFIERS, LOSSES, expected_failed_checks
from .kernel_svm import ExactKernelSVC, exact_gram
from .linear import random_feature_pipeline
from .all_subsets_model import AllSubsetsModelClassifier
from .factorization_machine import FactorizationMachineClassifier
from .sparse_rf import SparseRandomFeatureClassifier
from .streaming import RandomFeatureSGDClassifier
from .regression import (BINARY_BY_NATURE, ExactKernelRidge, FactorizationMachineRegressor, for_many_classes,
                         random_feature_ridge)

__all__ = [
    "expected_failed_checks",
    "exact_gram",
    "ExactKernelSVC",
    "FactorizationMachineClassifier",
    "AllSubsetsModelClassifier",
    "SparseRandomFeatureClassifier",
    "random_feature_pipeline",
    "RandomFeatureSGDClassifier",
    "FactorizationMachineRegressor",
    "ExactKernelRidge",
    "random_feature_ridge",
    "for_many_classes",
]
