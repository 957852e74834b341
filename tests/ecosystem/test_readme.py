"""The README and the user guide stay true: every ```python block runs as written (in order, one namespace,
in a fresh interpreter, per page) and alone, the benchmark page's tables are generated from
benchmarks/results, and the guide's module page names every rkcore module."""
from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The pages a reader copies code from: the README and the user guide (docs/user_guide/*.md).
PAGES = [REPO / "README.md", *sorted((REPO / "docs" / "user_guide").glob("*.md"))]
BENCHMARK_PAGE = REPO / "docs" / "benchmarks" / "index.md"
MODULES_PAGE = REPO / "docs" / "user_guide" / "modules.md"


#: A fenced Python block: its first line number and its code.
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)

#: Runs the blocks given as JSON [[line, code], ...] in one namespace; names the block that fails.
RUNNER = """
import json, sys, traceback
namespace = {"__name__": "__main__"}
for line, code in json.loads(sys.stdin.read()):
    try:
        exec(compile(code, f"README.md block at line {line}", "exec"), namespace)
    except BaseException:
        print(f"README.md block at line {line} failed:", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
    print(f"block at line {line}: ok")
"""


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The ```python blocks of a Markdown text, with the line their code starts on."""
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in PYTHON_BLOCK.finditer(text)]


def run_blocks(blocks: list[tuple[int, str]], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", RUNNER], input=json.dumps(blocks), capture_output=True,
                          text=True, cwd=REPO, timeout=timeout)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_python_block_of_a_page_runs_as_written(page):
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    if not blocks:
        pytest.skip(f"{page.name} has no python block")
    done = run_blocks(blocks)
    assert done.returncode == 0, f"{page.relative_to(REPO)}: " + done.stderr[-3000:]
    assert done.stdout.count(": ok") == len(blocks)


def test_the_pages_hold_the_guides_code():
    assert sum(len(python_blocks(page.read_text(encoding="utf-8"))) for page in PAGES) >= 4


def test_block_runner_names_the_failing_block():
    text = "intro\n\n```python\nx = 1\n```\n\n```bash\nls\n```\n\n```python\nprint(x + y)\n```\n"
    blocks = python_blocks(text)
    assert blocks == [(4, "x = 1\n"), (12, "print(x + y)\n")]
    done = run_blocks(blocks, timeout=60)
    assert done.returncode == 1 and "block at line 4: ok" in done.stdout
    assert "README.md block at line 12 failed" in done.stderr and "NameError: name 'y'" in done.stderr


def _generator():
    spec = importlib.util.spec_from_file_location("make_readme_tables", REPO / "benchmarks" / "make_readme_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_tables_are_generated_from_results():
    gen = _generator()
    page = BENCHMARK_PAGE.read_text(encoding="utf-8")
    assert gen.render(page) == page, "run: python benchmarks/make_readme_tables.py"


def test_generator_copies_flagged_sections_and_follows_a_change(tmp_path):
    gen = _generator()
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "a.md").write_text("# Title\n\n## Kept <!-- readme -->\n\n| x |\n|---|\n| 1 |\n\n### detail\n\nmore\n\n"
                                  "## Not flagged\n\n| y |\n|---|\n| 2 |\n", encoding="utf-8")
    readme = f"intro\n\n{gen.BEGIN}\nstale\n{gen.END}\n\nafter\n"
    out = gen.render(readme, results)
    assert out.startswith("intro\n\n") and out.endswith("\n\nafter\n") and "stale" not in out
    assert "## Kept\n\n| x |\n|---|\n| 1 |\n\n## detail\n\nmore" in out and "| 2 |" not in out
    assert "(from `benchmarks/results/a.md`)" in out
    (results / "a.md").write_text((results / "a.md").read_text().replace("| 1 |", "| 7 |"), encoding="utf-8")
    assert "| 7 |" in gen.render(out, results) and gen.render(out, results) != out
    with pytest.raises(ValueError, match="markers"):
        gen.render("no markers here", results)


def test_the_module_page_names_every_rkcore_module():
    readme = MODULES_PAGE.read_text(encoding="utf-8")
    modules = sorted(p for p in (REPO / "rkcore").rglob("*.py") if p.name != "__init__.py")
    missing = [str(p.relative_to(REPO)) for p in modules
               if str(p.relative_to(REPO)) not in readme and f"`{p.name}`" not in readme]
    assert not missing, f"docs/user_guide/modules.md does not mention: {missing}"


@pytest.mark.parametrize("line_and_code", [block for page in PAGES for block in python_blocks(page.read_text(encoding="utf-8"))],
                         ids=lambda block: f"line{block[0]}")
def test_every_python_block_runs_alone(line_and_code):
    """A reader copies one block, not the page: each block imports and builds what it uses."""
    done = run_blocks([line_and_code])
    assert done.returncode == 0, done.stderr[-3000:]
