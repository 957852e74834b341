"""The fuzz harness's wording check (tests.pages.fuzz_cases.wording_problems) tells internals' wording from
the dashboard's: it flags the messages issue 35 found (numpy, scikit-learn, Python's TypeError and KeyError,
another interface's words) and lets the dashboard's own refusals through. Fast (no app run): the fuzz runs
the check on every error, warning and info it sees (``-m fuzz``)."""
from __future__ import annotations

import pytest

from tests.pages.fuzz_cases import wording_problems

INTERNALS = [
    "setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 dimensions.",
    "The 'degree' parameter of FactorizationMachineClassifier must be an int in the range [2, inf). Got 1 instead.",
    "'coo_matrix' object is not subscriptable",
    "unhashable type: 'list'",
    "'target'",
    "KeyError: 'target'",
    "could not convert string to float: 'abc'",
    "operands could not be broadcast together with shapes (3,) (4,)",
    "Something went wrong while computing the view (TypeError: bad operand). The details are in the server log.",
    "Input contains NaN, infinity or a value too large for dtype('float64').",
    "Pass --n-components to choose D.",
    "use normalize=False to keep the raw rows",
    "The file 'a.svm' is not valid LIBSVM format (label index:value ...): Invalid index -5 in SVMlight/LibSVM data file.",
    "split (0.5, 0.1, 0.4) gives a part with fewer than 2 samples (sizes [6, 1, 4]).",
]

OWN_WORDS = [
    "n (points) = 5001 is out of range: allowed values are 2 to 5000. (from the link; using 200)",
    "Row normalization: 'not_a_choice' is not an allowed choice; allowed: l1, l2, none. (from the link; using l1)",
    "Presenter mode: could not read 'maybe' from the link (allowed: true or false); using false.",
    "Computing the Gram matrices would take 12 minutes and 3.1 GB of memory (n = 5,000, D = 65,536), more than "
    "the 5 minutes and 2 GB allowed per view. With D = 65536 and d = 64, n up to 1,200 fits.",
    "This link names an uploaded file that this browser cannot open: an upload is private to the browser that "
    "uploaded it unless its uploader shares it with the link.",
    "The factorization machine needs degree m >= 2 (it models pairs of features and more); m = 1 is a linear model.",
    "Target column 'grade' is not in data.csv; its columns are: 'a', 'b'. Using no target.",
    "The split of 11 rows leaves a part with fewer than 2 rows (training 6, validation 1, test 4): use more rows "
    "or larger fractions.",
    "The file 'a.svm' is not valid LIBSVM format (label index:value ...): feature index -5 is not allowed: indices "
    "are whole numbers from 1 (or from 0).",
]


@pytest.mark.parametrize("message", INTERNALS)
def test_internal_wording_is_flagged(message):
    assert wording_problems(message), message


@pytest.mark.parametrize("message", OWN_WORDS)
def test_the_dashboards_words_pass(message):
    assert not wording_problems(message), wording_problems(message)


@pytest.mark.fuzz
def test_classifiers_at_degree_one_leave_the_fm_out_in_the_users_words(run_page):
    """Degree m = 1 is legal on the Classifiers page, the factorization machine is not defined there: it is left
    out with a note, not run into scikit-learn's "must be an int in the range [2, inf)" (issue 35, item 4)."""
    at = run_page("pages/6_Classifiers.py", n=40, degree=1, cl_methods="fm,rk", cl_mult="1", cl_trials=1)
    for button in at.button:
        if button.label.startswith("Run"):
            button.click().run()
            break
    messages = [e.value for kind in ("error", "warning", "info") for e in at.get(kind)]
    assert not at.exception and not any(wording_problems(m) for m in messages), messages
    assert any("factorization machine" in c.value and "m = 2" in c.value for c in at.caption)
