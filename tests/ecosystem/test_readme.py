"""The README stays true: its benchmark tables are generated from benchmarks/results, and it names
every rkcore module."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("make_readme_tables", REPO / "benchmarks" / "make_readme_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_benchmark_tables_are_generated_from_results():
    gen = _generator()
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert gen.render(readme) == readme, "run: python benchmarks/make_readme_tables.py"


def test_generator_copies_flagged_sections_and_follows_a_change(tmp_path):
    gen = _generator()
    results = tmp_path / "benchmarks" / "results"
    results.mkdir(parents=True)
    (results / "a.md").write_text("# Title\n\n## Kept <!-- readme -->\n\n| x |\n|---|\n| 1 |\n\n### detail\n\nmore\n\n"
                                  "## Not flagged\n\n| y |\n|---|\n| 2 |\n", encoding="utf-8")
    readme = f"intro\n\n{gen.BEGIN}\nstale\n{gen.END}\n\nafter\n"
    out = gen.render(readme, results)
    assert out.startswith("intro\n\n") and out.endswith("\n\nafter\n") and "stale" not in out
    assert "### Kept\n\n| x |\n|---|\n| 1 |\n\n### detail\n\nmore" in out and "| 2 |" not in out
    assert "(from `benchmarks/results/a.md`)" in out
    (results / "a.md").write_text((results / "a.md").read_text().replace("| 1 |", "| 7 |"), encoding="utf-8")
    assert "| 7 |" in gen.render(out, results) and gen.render(out, results) != out
    with pytest.raises(ValueError, match="markers"):
        gen.render("no markers here", results)


def test_readme_names_every_rkcore_module():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    modules = sorted(p for p in (REPO / "rkcore").rglob("*.py") if p.name != "__init__.py")
    missing = [str(p.relative_to(REPO)) for p in modules
               if str(p.relative_to(REPO)) not in readme and f"`{p.name}`" not in readme]
    assert not missing, f"README.md does not mention: {missing}"
