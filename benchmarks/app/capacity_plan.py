"""The plan for a 300-student course (issue 37 (c)), on paper from the measured figures, never typed by hand.

    python benchmarks/app/capacity_plan.py [--students 300] [--headroom 0.3] [--cores-per-machine 16]
    python benchmarks/app/capacity_plan.py --check    # exit 1 when the hosting guide's table is out of date

Reads the figures the benchmarks leave in their sections (HTML comments, exact numbers) of
benchmarks/results/classroom.md and burst.md:

- students per core: ``bench_classroom.py --find-capacity --processes 1 2`` (sections "Students per core, ...");
- (a), memory and CPU: ``bench_classroom.py --students 60 --processes 2`` (:data:`CLASSROOM`);
- (b), the burst: ``bench_burst.py --students 120 --processes 2`` (:data:`BURST`).

The rule (also written with the plan):

1. Design load: the course's students plus a headroom, L = students x (1 + headroom) (300 x 1.3 = 390).
2. Steady cores: S = students per core with 2 app processes on the measured machine (the largest class that held
   p95 <= 3 s with 0 errors and 0 gated by load, over its cores; a deployment runs one app process and one Dask
   worker per core, ``rkcore-app --processes auto``, the ratio measured); cores >= L / S.
3. Burst cores: the last of B students had its chart T s after the first change on C cores; the burst's work is
   spread over the cores, so the time grows with students per core: T x (L / K) / (B / C) <= 15 s on K cores.
4. Cores: the larger of the two; app processes and Dask workers: one per core each.
5. Memory: from (a)'s N students on C cores, the server at its start R0 (warmed up, no student) and its peak P:
   R0 / C per core plus (P - R0) / N per student: cores x R0 / C + L x (P - R0) / N, rounded up to a GiB.
6. Machines: one when the cores fit one machine (``--cores-per-machine``); else the app processes (their
   share of (a)'s CPU, with nginx: they must share one machine's upload store) on one machine and the Dask
   workers (their share) on others, through ``RKCORE_SCHEDULER``.

The plan is a section of benchmarks/results/capacity_plan.md and a table between markers in
docs/user_guide/hosting.md ("Hosting a class"). A figure not measured yet makes the plan say so, with the
command that measures it.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a checkout: benchmarks/<subject>/this file

from benchmarks.app.bench_burst import burst_title  # noqa: E402
from benchmarks.app.bench_classroom import capacity_title, report_title  # noqa: E402
from benchmarks.results_io import README_FLAG, RESULTS, Run, add_output_arguments  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "user_guide" / "hosting.md"
BEGIN = "<!-- BEGIN generated capacity: python benchmarks/app/capacity_plan.py; do not edit by hand -->"
END = "<!-- END generated capacity -->"
CAPACITY = {p: capacity_title(p) for p in (1, 2)}
CLASSROOM = report_title([60], 5, 2)
BURST = burst_title(120, 5, 2)
COMMANDS = {
    "capacity": "python benchmarks/app/bench_classroom.py --find-capacity --processes 1 2",
    "classroom": "python benchmarks/app/bench_classroom.py --students 60 --minutes 5 --processes 2",
    "burst": "python benchmarks/app/bench_burst.py --students 120 --processes 2",
}
LAST_CHART_TARGET = 15.0  # seconds (issue 37: the last of a synchronized class has its chart within 15 s)
GIB = 2**30
_HEADING = re.compile(r"^##\s+(.*?)\s*$")


def sections(text: str) -> dict[str, str]:
    """A results file's ``##`` sections: title (without the README flag) -> body."""
    found: dict[str, str] = {}
    title, body = None, []
    for line in text.splitlines() + ["## <end>"]:
        match = _HEADING.match(line)
        if match:
            if title is not None:
                found[title] = "\n".join(body)
            title, body = match.group(1).removesuffix(README_FLAG).rstrip(), []
        elif title is not None:
            body.append(line)
    return found


def figures(body: str, kind: str) -> list[dict]:
    """The ``<!-- kind {json} -->`` comments of a section's body."""
    return [json.loads(m.group(1)) for m in re.finditer(rf"<!-- {re.escape(kind)} (\{{.*?\}}) -->", body)]


@dataclass(frozen=True)
class Inputs:
    """The measured figures the plan uses (None: not measured yet)."""

    capacity: dict[int, dict | None]  # app processes -> capacity-data
    classroom: dict | None  # classroom-data of (a)
    burst: dict | None  # burst-data of (b)

    @classmethod
    def read(cls, results: Path = RESULTS) -> "Inputs":
        def one(file: str, title: str, kind: str) -> dict | None:
            path = results / file
            body = sections(path.read_text(encoding="utf-8")).get(title) if path.exists() else None
            found = figures(body, kind) if body else []
            return found[0] if found else None

        return cls({p: one("classroom.md", CAPACITY[p], "capacity-data") for p in CAPACITY},
                   one("classroom.md", CLASSROOM, "classroom-data"), one("burst.md", BURST, "burst-data"))

    def missing(self) -> list[str]:
        """The commands still to run for a plan."""
        return ([COMMANDS["capacity"]] if self.capacity[2] is None or not self.capacity[2]["capacity"] else []) + \
            ([COMMANDS["classroom"]] if self.classroom is None else []) + ([COMMANDS["burst"]] if self.burst is None else [])


@dataclass(frozen=True)
class Plan:
    """A course's plan (see the module's rule)."""

    students: int
    headroom: float
    design_load: float
    steady_cores: int
    burst_cores: int
    cores: int
    memory_gib: int
    per_student_bytes: float
    per_core_bytes: float
    app_cores: int
    worker_cores: int
    machines: int
    cores_per_machine: int


def plan(inputs: Inputs, students: int = 300, headroom: float = 0.3, cores_per_machine: int = 16) -> Plan:
    """The plan from the measured figures (raises ValueError when one is missing)."""
    if inputs.missing():
        raise ValueError("not measured yet: " + "; ".join(inputs.missing()))
    cap, a, b = inputs.capacity[2], inputs.classroom, inputs.burst
    load = students * (1 + headroom)
    steady = math.ceil(load / cap["students_per_core"] - 1e-9)
    burst = math.ceil(load * b["to_last"] * cap["cores"] / (b["N"] * LAST_CHART_TARGET) - 1e-9)
    cores = max(steady, burst, 1)
    per_student = (a["peak"] - a["rss_start"]) / a["N"]
    per_core = a["rss_start"] / a["cores"]
    memory = math.ceil((cores * per_core + load * per_student) / GIB - 1e-9)
    cpu = a["cpu_roles"]
    app_share = (cpu["app"] + cpu["nginx"]) / sum(cpu.values())
    app_cores = max(1, math.ceil(cores * app_share - 1e-9))
    worker_cores = max(1, math.ceil(cores * (1 - app_share) - 1e-9))
    machines = 1 if cores <= cores_per_machine else 1 + math.ceil(worker_cores / cores_per_machine - 1e-9)
    return Plan(students, headroom, load, steady, burst, cores, memory, per_student, per_core, app_cores, worker_cores,
                machines, cores_per_machine)


def _fmt_capacity(data: dict | None) -> str:
    if data is None:
        return f"not measured yet (`{COMMANDS['capacity']}`)"
    above = f", {data['first_failed']} failed" if data["first_failed"] is not None else ", the largest step tried"
    return (f"{data['students_per_core']:.1f} ({data['capacity']} students on {data['cores']} cores held{above}; "
            f"rounds of {data['round_seconds']:g} s)")


def guide_table(inputs: Inputs, students: int = 300, headroom: float = 0.3, cores_per_machine: int = 16) -> str:
    """The hosting guide's capacity table: the measured figures and the plan for ``students``."""
    a, b = inputs.classroom, inputs.burst
    rows = [
        ("Students per core, p95 ≤ 3 s, 0 errors, 0 gated by load: 1 app process", _fmt_capacity(inputs.capacity[1])),
        ("the same, 2 app processes (`--processes 2`)", _fmt_capacity(inputs.capacity[2])),
        ("(a) 60 students for 5 minutes, 2 app processes: change → charts p50 / p95 / max, errors, gated by load",
         f"{a['p50']:.2f} / {a['p95']:.2f} / {a['max']:.2f} s, {a['errors']}, {a['by_load']}" if a else
         f"not measured yet (`{COMMANDS['classroom']}`)"),
        ("(a) peak memory of all processes together (at the start); server CPU-s per change (app / Dask)",
         f"{a['peak'] / GIB:.2f} GiB ({a['rss_start'] / GIB:.2f} GiB); "
         f"{a['server_cpu'] / a['actions']:.3f} ({a['cpu_roles']['app'] / a['actions']:.3f} / "
         f"{a['cpu_roles']['dask'] / a['actions']:.3f})" if a else f"not measured yet (`{COMMANDS['classroom']}`)"),
        ("(b) 120 students change D within 5 s: first change → last chart; change → chart p95",
         f"{b['to_last']:.1f} s; {b['p95']:.2f} s ({b['errors']} errors)" if b else
         f"not measured yet (`{COMMANDS['burst']}`)"),
    ]
    try:
        p = plan(inputs, students, headroom, cores_per_machine)
    except ValueError as missing:
        rows.append((f"Plan for {students} students", str(missing)))
    else:
        rows += [(f"Plan for {students} students (+{headroom:.0%} headroom: {p.design_load:g})",
                  f"**{p.cores} cores** (steady: {p.steady_cores}, burst: {p.burst_cores}), **{p.memory_gib} GiB**"),
                 ("app processes; Dask workers", f"{p.cores}; {p.cores} (`rkcore-app --processes auto` on one machine)"
                  if p.machines == 1 else f"{p.app_cores} on one machine; {p.worker_cores} on {p.machines - 1} more "
                  f"machine(s) of {p.cores_per_machine} cores (`RKCORE_SCHEDULER`)" + (
                      f"; **{p.app_cores} app cores do not fit one machine of {p.cores_per_machine}**: the app processes "
                      "share one machine's upload store, so this needs a larger machine (or a store shared across "
                      "machines, not supported yet)" if p.app_cores > p.cores_per_machine else "")),
                 ("machines", f"{p.machines} (of up to {p.cores_per_machine} cores)")]
    return "\n".join(["| figure | value |", "|---|---|", *[f"| {k} | {v} |" for k, v in rows]])


def plan_body(inputs: Inputs, args) -> str:
    """The results section: the rule, the inputs, the arithmetic and the table."""
    lines = [guide_table(inputs, args.students, args.headroom, args.cores_per_machine), ""]
    try:
        p = plan(inputs, args.students, args.headroom, args.cores_per_machine)
    except ValueError:
        return "\n".join(lines + ["The plan needs the figures above; run the commands named there on a quiet machine."])
    cap, a, b = inputs.capacity[2], inputs.classroom, inputs.burst
    lines += [
        "The arithmetic (the rule: `benchmarks/app/capacity_plan.py`'s docstring):",
        f"- design load L = {args.students} x {1 + args.headroom:g} = {p.design_load:g} students;",
        f"- steady: L / S = {p.design_load:g} / {cap['students_per_core']:.2f} → {p.steady_cores} cores;",
        f"- burst: L x T x C / (B x 15 s) = {p.design_load:g} x {b['to_last']:.2f} x {cap['cores']} / ({b['N']} x 15) "
        f"→ {p.burst_cores} cores;",
        f"- memory: {p.cores} x {p.per_core_bytes / GIB:.3f} GiB per core + {p.design_load:g} x "
        f"{p.per_student_bytes / 2**20:.1f} MiB per student → {p.memory_gib} GiB;",
        f"- (a)'s CPU: app processes and nginx {(p.app_cores)} of {p.cores} cores, Dask workers {p.worker_cores} "
        f"(from {a['cpu_roles']['app'] + a['cpu_roles']['nginx']:.0f} and {a['cpu_roles']['dask']:.0f} CPU-s).",
        "",
        "Students per core is a lower bound from a grid of class sizes (the true capacity lies between the largest "
        "class that held and the next step); the burst's scaling assumes the burst's work spreads over the cores "
        "(the time to the last chart grows with students per core), which is what one worker and one app process "
        "per core give on one machine.",
    ]
    return "\n".join(lines)


def render_guide(guide: str, inputs: Inputs, args) -> str:
    """The hosting guide with the generated table replaced (the markers must be there, once each)."""
    if guide.count(BEGIN) != 1 or guide.count(END) != 1 or guide.index(BEGIN) > guide.index(END):
        raise ValueError(f"{GUIDE.name} must hold the BEGIN and END markers of the generated capacity table once each.")
    head, rest = guide.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + "\n" + guide_table(inputs, args.students, args.headroom, args.cores_per_machine) + "\n" + END + tail


def parse_arguments(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--headroom", type=float, default=0.3, help="the share of students added to the design load")
    ap.add_argument("--cores-per-machine", type=int, default=16)
    ap.add_argument("--check", action="store_true", help="exit 1 when the hosting guide's table is out of date")
    add_output_arguments(ap, "capacity_plan.md")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_arguments(argv)
    inputs = Inputs.read()
    guide = GUIDE.read_text(encoding="utf-8")
    wanted = render_guide(guide, inputs, args)
    if args.check:
        if wanted != guide:
            print("The hosting guide's capacity table is out of date: run python benchmarks/app/capacity_plan.py",
                  file=sys.stderr)
            return 1
        return 0
    run = Run.start(args, None if argv is None else [__file__, *argv])
    run.write(f"The plan for {args.students} students", plan_body(inputs, args),
              preamble="# The plan for a course (issue 37 (c)), from the measured capacity")
    if not args.quick and wanted != guide:
        GUIDE.write_text(wanted, encoding="utf-8")
        print(f"{GUIDE.relative_to(REPO)} updated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
