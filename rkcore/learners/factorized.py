"""Factorization machines and the all-subsets model: the face of :mod:`rkcore.learners.factorization_machine`,
:mod:`rkcore.learners.all_subsets_model` and their shared L-BFGS-B base (:mod:`rkcore.learners.lbfgs`).

One module per model (split by meaning: one was 600 lines with both models and their base); this name stays
for the paths users and the docs already use.
"""
from .all_subsets_model import AllSubsetsModelClassifier
from .factorization_machine import FactorizationMachineClassifier

__all__ = ["AllSubsetsModelClassifier", "FactorizationMachineClassifier"]
