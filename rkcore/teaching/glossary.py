"""Short definitions of the words a page uses before it explains them (issue 38, finding 8): a page puts
:func:`defined` in its text at the word's first use, or :data:`GLOSSARY`'s entry as a widget's hover help.
Each definition is one plain sentence a student reads without the paper."""
from __future__ import annotations

GLOSSARY: dict[str, str] = {
    "TS / RM features": "Tensor Sketch, Random Maclaurin: older random features for the polynomial kernel",
    "sparse random features": "random vectors mostly zero, so each feature reads a few columns",
    "factorization machine": "one learned vector per feature; a pair's weight is their inner product",
    "C is chosen on the validation set": "the regularization C with the best accuracy on held-out data, "
                                         "never the test data",
    "relative Frobenius error": "‖K̂ − K‖ / ‖K‖: 0 is exact, 1 as large as K itself",
    "signed circulant blocks": "one random vector shifted row by row, random signs: an FFT per product",
    "O(m D log d)": "time per sample ∝ m × D × log d: doubling D doubles it, doubling d adds little",
}


def defined(term: str) -> str:
    """``term`` followed by its short definition in parentheses, for its first use in a page's text.

    Parameters
    ----------
    term : str
        A key of :data:`GLOSSARY`.

    Returns
    -------
    str
        "term (definition)".
    """
    if term not in GLOSSARY:
        raise ValueError(f"No definition of {term!r}; the glossary defines: {', '.join(GLOSSARY)}.")
    return f"{term} ({GLOSSARY[term]})"
