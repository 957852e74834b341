"""Server time of a seed change per page (AppTest, headless): what one student's rerun costs the shared
server, for this checkout and, with --before, a previous one, interleaved.

Each (checkout, repeat) is a fresh process that imports that checkout, runs the page once (imports, caches
for the first seed), then changes the seed --changes times; the process reports the median of those reruns.
Checkouts alternate within every repeat, so machine load hits both alike; the table gives the median over
repeats, their spread and the ratio after / before.

    python benchmarks/app/bench_rerun_server.py --before /tmp/before [--pages Distributions_and_variance ...]
        [--repeats 3] [--changes 6] [--quick] [--out FILE]

Writes the section "Server time of a seed change" of benchmarks/results/browser.md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]  # benchmarks/<subject>/this file
sys.path.insert(0, str(REPO))

from benchmarks.results_io import Run, add_output_arguments  # noqa: E402

TITLE = "Server time of a seed change (`python benchmarks/app/bench_rerun_server.py`)"

#: the child: runs one page in AppTest and prints the median seconds of its seed changes
CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[2], default_timeout=300)
at.run()
def seed_field():  # looked up after every run: a widget of an earlier run's tree no longer sets anything
    fields = [w for w in at.number_input if (w.label or "").startswith("Seed")]
    return fields[0] if fields else None
times = []
for seed in range(1, int(sys.argv[3]) + 1):
    if seed_field() is None:
        break
    seed_field().set_value(seed)
    start = time.perf_counter()
    at.run()
    times.append(time.perf_counter() - start)
    assert not at.exception, at.exception
    assert seed_field().value == seed, "the seed change did not take"
print(json.dumps(statistics.median(times) if times else None))
"""


def page_paths(repo: Path, names: list[str] | None) -> dict[str, str]:
    files = sorted((repo / "pages").glob("*.py"))
    found = {f.stem.split("_", 1)[1] if f.stem[0].isdigit() else f.stem: f"pages/{f.name}" for f in files}
    return {n: found[n] for n in names} if names else found


def run_child(repo: Path, page: str, changes: int) -> float | None:
    env = dict(os.environ, PYTHONPATH=str(repo), STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
    out = subprocess.run([sys.executable, "-c", CHILD, str(repo), str(repo / page), str(changes)], cwd=repo,
                         env=env, capture_output=True, text=True, check=True).stdout.strip().splitlines()
    return json.loads(out[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", type=Path, help="a checkout of the previous version")
    ap.add_argument("--pages", nargs="*", help="page names without the number (default: every page)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--changes", type=int, default=6)
    add_output_arguments(ap, "browser.md")
    args = ap.parse_args(argv)
    if args.quick:
        args.pages, args.repeats, args.changes = args.pages or ["Kernel_trick"], 1, 1
    run = Run.start(args, None if argv is None else [__file__, *argv])
    checkouts = {"after": REPO, **({"before": args.before.resolve()} if args.before else {})}
    pages = page_paths(REPO, args.pages)
    load = os.getloadavg()
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeats):
        for name, path in pages.items():
            for version, repo in checkouts.items():
                seconds = run_child(repo, path, args.changes)
                if seconds is not None:
                    samples.setdefault((name, version), []).append(seconds)
    lines = [f"Load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, at end "
             + " ".join(f"{v:.2f}" for v in os.getloadavg()) + f"; {args.repeats} repeats x {args.changes} seed "
             f"changes; *before*: {args.before or 'not measured'}.", "",
             "| page | after, s (min–max) | before, s (min–max) | after / before |", "|---|---|---|---|"]
    for name in pages:
        cells, medians = [], {}
        for version in ("after", "before"):
            s = samples.get((name, version))
            if s:
                medians[version] = statistics.median(s)
                cells.append(f"{medians[version]:.3f} ({min(s):.3f}–{max(s):.3f})")
            else:
                cells.append("–")
        ratio = f"{medians['after'] / medians['before']:.2f}" if len(medians) == 2 else "–"
        lines.append(f"| {name} | {cells[0]} | {cells[1]} | {ratio} |")
    run.write(TITLE, "\n".join(lines), preamble="# Browser timings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
