"""Every benchmark script with a results file writes its own section: each one's ``--quick --out <tmp file>``
runs in a subprocess (a few at a time) and must leave a section with the provenance line of
benchmarks/results_io.py and a table; scripts that need pyrfm or a browser are skipped when those are absent.
The helper's section replacement is checked on its own, without a subprocess."""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import REPO

BENCH = REPO / "benchmarks"
PYRFM = Path(os.environ.get("PYRFM_DIR", Path.home() / ".cache" / "rkcore-bench" / "pyrfm"))
#: script -> what it needs beyond the project's requirements ("" nothing)
SCRIPTS = {
    "maps/bench_core.py": "", "maps/bench_scrk.py": "", "maps/bench_all_maps.py": "", "maps/bench_float32.py": "",
    "maps/bench_vs_pyrfm.py": "pyrfm", "maps/gram_cpu_vs_pyrfm.py": "pyrfm", "maps/bench_fourier_vs_pyrfm.py": "pyrfm",
    "numerics/bench_numerics.py": "", "numerics/bench_float_range.py": "", "numerics/bench_check_floor.py": "",
    "numerics/bench_contract_paths.py": "",
    "studies/fourier_variance_table.py": "", "studies/orthogonal_rk_table.py": "", "studies/bench_accuracy.py": "",
    "studies/bench_trial_stacking.py": "", "studies/bench_dask.py": "", "studies/bench_run_estimates.py": "",
    "studies/table1_results.py": "", "studies/bench_partial_fit_memory.py": "", "studies/bench_speed_accuracy.py": "",
    "app/app_render_times.py": "", "app/bench_rerun_server.py": "", "app/bench_classroom.py": "",
    "app/bench_burst.py": "", "app/bench_uploads.py": "", "app/capacity_plan.py": "", "app/bench_follow.py": "",
    "app/profile_change.py": "", "app/bench_run_trip.py": "",
    "app/bench_browser.py": "browser", "app/profile_browser.py": "browser", "app/bench_home_content.py": "browser",
    "app/bench_plotly_preload.py": "browser",
    "robustness/repro_hostile_lib.py": "", "robustness/repro_upload_bounds.py": "",
}
PROVENANCE = re.compile(r"^Run \d{4}-\d\d-\d\d \d\d:\d\d UTC \(quick smoke run: tiny sizes\), `python benchmarks/"
                        r"(\S+) --quick --out \S+`, commit \S+.*load average \(1 min\) [\d.]+ before, [\d.]+ after\.$",
                        re.M)


def missing(need: str) -> str | None:
    """Why a script cannot run here (None: it can)."""
    if need == "pyrfm" and not (PYRFM / "pyrfm").is_dir() and importlib.util.find_spec("pyrfm") is None:
        return "needs pyrfm (benchmarks/maps/setup_pyrfm.sh)"
    if need == "browser" and (not Path("/usr/bin/chromium").exists() or importlib.util.find_spec("playwright") is None):
        return "needs /usr/bin/chromium and playwright"
    return None


def _results_io():
    from benchmarks import results_io  # the repository root is on sys.path (tests.conftest)

    return results_io


def run_quick(script: str, out: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO), OPENBLAS_NUM_THREADS="1", STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    return subprocess.run([sys.executable, f"benchmarks/{script}", "--quick", "--out", str(out)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def quick_runs(request, tmp_path_factory) -> dict[str, tuple[subprocess.CompletedProcess, Path]]:
    """The quick run of every selected, runnable script, three at a time (2 cores: imports overlap with work)."""
    folder = tmp_path_factory.mktemp("quick")
    selected = {item.callspec.params["script"] for item in request.session.items
                if item.originalname == "test_quick_run_writes_its_section"}
    runnable = [s for s, need in SCRIPTS.items() if s in selected and missing(need) is None]
    outs = {s: folder / (s.replace("/", "_") + ".md") for s in runnable}
    with ThreadPoolExecutor(max_workers=3) as pool:
        done = dict(zip(runnable, pool.map(lambda s: run_quick(s, outs[s]), runnable)))
    return {s: (done[s], outs[s]) for s in runnable}


def test_the_list_is_every_script_with_a_results_file():
    """A script the index gives a results file (not "stdout only", not a helper) is in SCRIPTS."""
    index = (BENCH / "README.md").read_text(encoding="utf-8")
    with_results = {m.group(1) for m in re.finditer(r"^\| `((?:maps|numerics|studies|app|robustness)/\w+\.py)` \|"
                                                    r"[^|]*\| [^|]*results/", index, re.M)}
    assert with_results == set(SCRIPTS), (with_results ^ set(SCRIPTS))


@pytest.mark.slow
@pytest.mark.parametrize("script", [pytest.param(s, marks=[pytest.mark.browser] if need == "browser" else [])
                                    for s, need in SCRIPTS.items()])
def test_quick_run_writes_its_section(script, quick_runs):
    """About 60 s on a quiet 2-core machine for the scripts without a browser (8 min at load average 9); the
    browser ones (marked ``browser``) add about a minute each under load."""
    reason = missing(SCRIPTS[script])
    if reason:
        pytest.skip(reason)
    done, out = quick_runs[script]
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# "), text[:200]  # the results file's title (the preamble of a new file)
    provenance = PROVENANCE.search(text)
    assert provenance and provenance.group(1) == script, text[:600]
    after = text[provenance.end():]
    assert re.search(r"^\|.*\|\n\|[-:|]+\|\n\|", after, re.M), after[:1500]  # a table with at least one row
    heading = text[:provenance.start()].rstrip().splitlines()[-1]
    assert re.match(r"#{2,3} \S", heading), heading


def test_replace_section_keeps_the_rest_and_the_readme_flag():
    rio = _results_io()
    text = ("# T\n\nintro\n\n## A <!-- readme -->\n\nold A\n\n### detail of A\n\nx\n\n## B\n\nkeep B\n")
    new = rio.replace_section(text, "A", "## A\n\nnew A")
    assert new == "# T\n\nintro\n\n## A <!-- readme -->\n\nnew A\n\n## B\n\nkeep B\n"
    assert rio.replace_section(new, "C", "## C\n\nc") == new + "\n## C\n\nc\n"
    level3 = rio.replace_section("# T\n\n### A\n\nold\n\n### B\n\nb\n", "A", "### A\n\nnew", level=3)
    assert level3 == "# T\n\n### A\n\nnew\n\n### B\n\nb\n"
    assert rio.replace_section("# T\n\n## AB\n\nx\n", "A", "## A\n\ny") == "# T\n\n## AB\n\nx\n\n## A\n\ny\n"


def test_quick_run_writes_nothing_by_default_and_a_full_run_writes_the_results_file(tmp_path, monkeypatch):
    rio = _results_io()
    monkeypatch.setattr(rio, "RESULTS", tmp_path)
    parser = __import__("argparse").ArgumentParser()
    rio.add_output_arguments(parser, "x.md")
    assert rio.output_path(parser.parse_args(["--quick"])) is None
    assert rio.output_path(parser.parse_args([])) == tmp_path / "x.md"
    assert rio.output_path(parser.parse_args(["--out", ""])) is None
    run = rio.Run.start(parser.parse_args([]), ["benchmarks/maps/x.py"])
    assert run.write("Title", "| a |\n|---|\n| 1 |", preamble="# File") == tmp_path / "x.md"
    run.write("Title", "| a |\n|---|\n| 2 |")
    text = (tmp_path / "x.md").read_text()
    assert text.startswith("# File\n\n## Title\n\nRun ") and text.count("## Title") == 1 and "| 2 |" in text
    assert "| 1 |" not in text


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_provenance_names_the_commit():
    rio = _results_io()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    assert rio.commit().split()[0] == head
