"""Theory of the RK estimator: the error bounds of Lemmas 1-3 and its exact variance (Lemma 4)."""
