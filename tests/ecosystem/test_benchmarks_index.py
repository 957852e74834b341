"""benchmarks/ is a suite with an index: every script sits in a subject folder and is listed in
benchmarks/README.md with what it measures and its results file; every results file is cited by the
index (a results file nothing cites is a diary nobody reads); every path the index names exists."""
from __future__ import annotations

import re

from tests.conftest import REPO

BENCH = REPO / "benchmarks"
INDEX = (BENCH / "README.md").read_text(encoding="utf-8")


def test_every_script_is_in_a_subject_folder_and_the_index():
    top = {p.name for p in BENCH.glob("*.py")} | {p.name for p in BENCH.glob("*.sh")}
    assert top == {"make_readme_tables.py", "results_io.py"}, top
    scripts = sorted(p.relative_to(BENCH).as_posix() for ext in ("py", "sh") for p in BENCH.glob(f"*/*.{ext}"))
    missing = [s for s in scripts if f"`{s}`" not in INDEX]
    assert scripts and not missing, missing


def test_every_results_file_is_cited_and_every_cited_path_exists():
    results = sorted(p.name for p in (BENCH / "results").glob("*.md"))
    uncited = [r for r in results if f"results/{r}" not in INDEX]
    assert not uncited, uncited
    named = set(re.findall(r"`((?:maps|numerics|studies|app|robustness)/[\w.]+|results/[\w.-]+\.md)`", INDEX))
    assert named and not [n for n in named if not (BENCH / n).exists()]
