"""Every comparing sentence holds for the numbers it describes: for 40 seeds on every built-in data set,
the note is computed from the numbers, and an independent check (plain numpy here, not the claim code)
reads the sentence back and verifies each comparison it makes (issue 38, finding 1-2).

The claim functions are pure, so the seeds run on small n and D; the rules are those stated in
:mod:`rkcore.teaching.claims` and :func:`rkcore.metrics.separated` (two standard errors)."""
from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rkcore.data import BUILTIN
from rkcore.figures.gram import gram_note
from rkcore.registry import KernelSpec
from rkcore.spec import load_view_data
from rkcore.studies.gram import gram_error_stats, gram_pair, gram_pairs
from rkcore.teaching.claims import LEAD_CHARS, lead_and_rest

SEEDS = range(40)
DATASETS = list(BUILTIN)
SPEC = KernelSpec("anova", degree=2)
ROOT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=None)
def points(dataset: str, n: int = 60) -> np.ndarray:
    data = load_view_data(dataset, "l1", n)
    X = np.asarray(data.X.todense() if hasattr(data.X, "todense") else data.X, dtype=float)
    return X if data.y is None else X[np.argsort(np.asarray(data.y), kind="stable")]


def gram_view(dataset, map_key, D, seed, distribution="rademacher", spec=SPEC):
    X = points(dataset)
    K, K_hat = gram_pair(X, spec, map_key, D, distribution if map_key == "rk" else None, seed)
    pairs = gram_pairs(K, K_hat, max_points=4000, random_state=0)
    return K, K_hat, gram_error_stats(K, K_hat), pairs


@pytest.mark.parametrize("dataset", DATASETS)
def test_gram_note_says_which_side_of_y_equals_x_the_dots_are(dataset):
    """The old note said "the dots straddle the dashed line" at every seed; at the default (digits, seed 0)
    90% of them were above it, and at most seeds one draw moves every entry the same way."""
    said = {"straddle": 0, "above": 0, "below": 0}
    for seed in SEEDS:
        _, _, stats, pairs = gram_view(dataset, "rk", 256, seed)
        note = gram_note(stats, D=256, map_label="Random Kernel (RK)", distribution_label="Rademacher", pairs=pairs,
                         n=60)
        assert len(lead_and_rest(note)[0]) <= LEAD_CHARS and lead_and_rest(note)[1], note
        above = float(np.mean(pairs["approx"].to_numpy() > pairs["exact"].to_numpy()))
        if "straddle" in note:
            assert 0.25 <= above <= 0.75, (seed, above, note)
            said["straddle"] += 1
        else:
            match = re.search(r"(\d+)% of the dots lie (above|below)", note)
            assert match, note
            share = above if match[2] == "above" else 1 - above
            assert share > 0.75 and abs(int(match[1]) - 100 * share) <= 0.5 + 1e-9, (seed, above, note)
            said[match[2]] += 1
    assert sum(said.values()) == len(SEEDS)


@pytest.mark.parametrize("dataset", DATASETS)
def test_gram_note_on_nystroem_says_exact_at_D_at_least_n_and_promises_no_rate(dataset):
    """The old note called Nyström "unbiased" with an error "falling like 1/√D" and at D = 1,024 ≥ n quoted
    3.55e-14 as if it were the rate at work; D ≥ n simply makes Nyström exact."""
    n = points(dataset).shape[0]
    for seed in SEEDS:
        for D in (n // 2, n, 2 * n):
            K, K_hat, stats, pairs = gram_view(dataset, "nystroem", D, seed, spec=KernelSpec("polynomial", degree=2))
            note = gram_note(stats, D=D, map_label="Nystroem", pairs=pairs, n=n, unbiased=False, nystroem=True)
            assert "1/√D" not in note.replace("no 1/√D rate is promised", "")
            assert "unbiased" not in note.replace("not an unbiased", "")
            if "K̂ = K up to rounding" in note:
                assert D >= n
                assert np.linalg.norm(K_hat - K) <= 1e-6 * np.linalg.norm(K), (seed, D)
            else:
                assert D < n and "not an unbiased estimate" in note


def opening_of(page: str) -> dict:
    tree = ast.parse((ROOT / page).read_text())
    node = next(n for n in tree.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "OPENING")
    return ast.literal_eval(node.value)


def test_gram_opening_seed_is_a_typical_draw():
    """What a first visit sees is typical: the opening seed's error lies in the middle half of 40 seeds at the
    opening settings (seed 0 gave 0.197, the worst decile, while the median is 0.135)."""
    opening = opening_of("rkcore/views/gram.py")  # the opening moved with the view (commit d714da1)
    data = load_view_data(opening["dataset"], "l1", 200)
    X = data.X[np.argsort(np.asarray(data.y), kind="stable")]

    def error(seed):
        K, K_hat = gram_pair(X, SPEC, "rk", opening["D"], "rademacher", seed)
        return np.linalg.norm(K_hat - K) / np.linalg.norm(K)

    errors = np.array([error(seed) for seed in SEEDS])
    low, high = np.quantile(errors, [0.25, 0.75])
    assert low <= error(opening.get("seed", 0)) <= high, (opening, low, high)


# ---------------------------------------------------------------- Distributions: tie / lowest / higher
def _separated(a, b) -> bool:
    """Two standard errors of the difference, from the ddof-0 std of the Table 1 view (restated here)."""
    var = a["std"] ** 2 / (a["n_trials"] - 1) + b["std"] ** 2 / (b["n_trials"] - 1)
    return abs(a["mean"] - b["mean"]) > 2 * np.sqrt(var)


def distribution_tidy(dataset: str, seed: int) -> pd.DataFrame:
    from rkcore.studies.errors import error_study
    from rkcore.studies.table1 import table1_view

    X = points(dataset)[:30]
    d = X.shape[1]
    methods = [("rk", dist) for dist in ("rademacher", "uniform", "gaussian", "laplace")]
    study = error_study(X, SPEC, methods, [d], 4, pairs="nonzero", random_state=seed)
    return table1_view(study, d)[1]


@pytest.mark.parametrize("dataset", DATASETS)
def test_distribution_note_names_every_clearly_higher_distribution(dataset):
    """The old note opened "No distribution has a lower mean error than the others ... they tie" while
    Laplace was above the others beyond the trials' spread."""
    from rkcore.figures.variance import distribution_note, lowest_by_D

    for seed in SEEDS:
        tidy = distribution_tidy(dataset, seed)
        note = distribution_note(lowest_by_D(tidy), None, 4)
        assert len(lead_and_rest(note)[0]) <= LEAD_CHARS, note
        best = tidy.loc[tidy["mean"].idxmin()]
        for row in tidy.itertuples():
            method = row.method
            if row.Index == best.name:
                continue
            clearly = _separated(best, tidy.loc[row.Index])
            named_higher = re.search(r"Clearly higher[^.]*" + re.escape(method) + " at 1 of 1", note)
            assert bool(named_higher) == clearly, (seed, method, note)
            tie_clause = re.search(r"(tie for lowest|tie)\b", note)
            if clearly and tie_clause:  # a method above the spread is never among the tied ones
                assert f"{method} tie" not in note and f"and {method};" not in note, note


def test_lead_is_one_sentence_within_the_limit_and_nothing_is_lost():
    note = ("Gaussian weights give 1.17× the error of Rademacher weights (median over D); beyond the trials' spread "
            "(2 standard errors of the difference over 3 trials) Rademacher is lower at 4 of 5 values of D, as "
            "Lemma 4 predicts; they tie at D = 16. This step uses other data.")
    lead, rest = lead_and_rest(note)
    assert lead == "Gaussian weights give 1.17× the error of Rademacher weights (median over D) …"
    assert rest.startswith("… beyond the trials' spread") and rest.endswith("This step uses other data.")
    assert lead_and_rest("Short. Then more at 0.5 and e.g. D = 2.") == ("Short.", "Then more at 0.5 and e.g. D = 2.")
    assert lead_and_rest("One sentence only.") == ("One sentence only.", "")
    # seen on story step 2: a cut right after the first colon left "Same blocks in both …"
    step2 = ("Same blocks in both: pairs of the same digit average 1.48× the kernel value of different digits in K "
             "and 1.52× in K̂, computed from just D = 256 random features (relative error 0.36).")
    lead, rest = lead_and_rest(step2)
    assert lead.endswith("in K̂ …") and len(lead) <= LEAD_CHARS and rest == "… computed from just D = 256 random " \
        "features (relative error 0.36)."


# ---------------------------------------------------------------- Lemma 4 on every data set (Home, story step 4)
@pytest.mark.parametrize("dataset", DATASETS)
def test_lemma_4_holds_at_every_pair_and_the_sentence_quotes_the_ratios(dataset):
    from rkcore.studies.variance_study import variance_by_distribution
    from rkcore.teaching.claims import variance_order_sentence

    X = load_view_data(dataset, "l1", 200).X
    for seed in SEEDS:
        summary = variance_by_distribution(X, SPEC, ("gaussian", "uniform", "laplace"), max_pairs=200,
                                           random_state=seed)
        assert (summary["at_least_rademacher"] == 1.0).all(), (seed, summary)
        sentence = variance_order_sentence({"this data": summary})
        ratio = float(summary.loc[summary["label"] == "Gaussian", "ratio_to_rademacher"].iloc[0])
        assert "at every sampled pair" in sentence and f"{ratio:.2f}×" in sentence


def test_home_quotes_the_computed_lemma_4_sentence(run_page):
    """Home said "Rademacher weights give the smallest variance" with no condition, and one click to Gaussian
    gave a smaller error on the digits (1.09× the variance there, lost in the seed-to-seed spread)."""
    from rkcore.teaching.claims import HOME_VARIANCE_CLAIM, variance_by_dataset, variance_order_sentence

    assert variance_order_sentence(variance_by_dataset()) == HOME_VARIANCE_CLAIM
    at = run_page("app.py")  # Home, through the navigation
    text = " ".join(m.value for m in at.markdown)
    assert HOME_VARIANCE_CLAIM.replace("±", "$\\pm$") in text


# ---------------------------------------------------------------- story steps 3 and 4
@pytest.mark.parametrize("dataset", DATASETS)
def test_story_step_3_names_every_segment_where_the_error_does_not_fall(dataset):
    """Step 3 said "the error falls" while its chart was flat from D = 16 to 64 (two draws)."""
    from rkcore.teaching.story import median_error, step3_sentence
    from rkcore.studies.gram import gram_errors

    X = points(dataset)
    for seed in SEEDS:
        rows = [{"distribution": "rademacher", "D": D, "trial": t, "seed": seed + t,
                 "rel_fro": gram_errors(*gram_pair(X, SPEC, "rk", D, "rademacher", 1000 * seed + t))["rel_fro"]}
                for D in (16, 64, 256) for t in range(2)]
        trials = pd.DataFrame(rows)
        medians = median_error(trials).sort_values("D")
        sentence = step3_sentence(trials)
        assert len(lead_and_rest(sentence)[0]) <= LEAD_CHARS, sentence
        values = medians["median_rel_fro"].to_numpy()
        if "error falls from" in sentence:
            assert values[-1] < values[0], sentence
        for k, (D1, D2) in enumerate(zip(medians["D"].iloc[:-1], medians["D"].iloc[1:])):
            named = f"from D = {D1:,} to {D2:,}" in sentence
            assert named == (values[k + 1] >= values[k]), (seed, values, sentence)


@pytest.mark.slow  # computes steps 3 and 4 whole (about 5 s of CPU)
def test_story_step_4_says_it_switches_data_and_why():
    """Step 4 switched from the digits to synthetic data without a word (its error at D = 16 jumped from
    0.82 to about 2.5)."""
    from rkcore.teaching.story import error_steps, exact_variance_ratio, story_data

    step4 = error_steps()[1]
    ratio_digits = exact_variance_ratio(story_data()[0])
    ratio_synthetic = exact_variance_ratio(story_data(200, "interactions", "l1")[0])
    assert "synthetic interaction data, not the digits" in step4.sentence
    assert f"{ratio_synthetic:.2f}× Rademacher's" in step4.sentence and f"only {ratio_digits:.2f}×" in step4.sentence
    assert 1.0 <= ratio_digits < ratio_synthetic
