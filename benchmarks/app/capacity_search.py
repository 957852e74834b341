"""Students per core (issue 37 (c)): ``bench_classroom.py --find-capacity``.

    python benchmarks/app/bench_classroom.py --find-capacity --processes 1 2 [--steps 20 40 60 90 120 150 180]
        [--round-seconds 90] [--grace 30]

For each ``--processes`` value one server (``rkcore-app --processes N`` with its local Dask cluster, as in
bench_classroom.py) is started and warmed up once; then rounds of growing classes run on it. A round is a
new class of N students (each with a random stream of its own, new for every round, so the view cache
answers none of them from an earlier round) arriving within 10 s and acting for ``--round-seconds`` after
that, exactly as in bench_classroom.py; the changes still waiting ``--grace`` seconds after the round count
with their wait so far (a lower bound over 3 s, so the verdict below stays exact). Between two rounds the
server is left to finish what the last one cut off (until it uses under 0.15 cores, at most 60 s).

A round passes when change -> charts p95 <= 3 s, 0 errors and 0 gated by load. The search climbs the steps
until a round fails; the capacity is the largest N that passed, and students per core divides it by the usable
cores. The next ``--processes`` value starts one step above the previous capacity (more app processes on the
same cores hold at least as many students: the rounds that would only confirm it are saved); if that first
round fails it steps down. Each value's rounds and capacity are a section "Students per core, ..." of
benchmarks/results/classroom.md, with its figures in an HTML comment that capacity_plan.py reads.
"""
from __future__ import annotations

import json
import time

from benchmarks.app.bench_classroom import (ARRIVAL_SECONDS, HEADER, P95_TARGET, PREAMBLE, capacity_title, details,
                                            format_row, idle_cores, machine_line, measure_round, passed, print_row,
                                            row_data, usable_cores, verdict, wait_idle, warm_up)
from benchmarks.app.streamlit_server import StreamlitServer

DATA = "capacity-data"  # the HTML comment holding a search's result, read by capacity_plan.py


def search(server: StreamlitServer, steps: list[int], start: int, round_seconds: float, grace: float,
           seed: int, deadline: float = float("inf")) -> list[dict]:
    """The rounds from ``steps[start]`` up until one fails (down from it while none has passed); no new round
    starts after ``deadline`` (time.monotonic()) once one has passed."""
    rows: list[dict] = []
    index, direction = start, +1
    while 0 <= index < len(steps) and not (time.monotonic() > deadline and any(passed(r) for r in rows)):
        n = steps[index]
        began = time.monotonic()
        row = measure_round(server, n, ARRIVAL_SECONDS + round_seconds, f"{seed}:round{n}", grace=grace)
        row["idle_wait"] = wait_idle(server)
        row["round_wall"] = time.monotonic() - began
        rows.append(row)
        print_row(row)
        print(f"   round of {n}: {row['round_wall']:.0f} s with the wait for an idle server", flush=True)
        ok = passed(row)
        if ok and direction < 0:
            break  # stepping down: the first pass is the capacity
        if not ok and (direction > 0 and any(passed(r) for r in rows)):
            break
        if not ok and direction > 0:
            direction = -1  # the first round failed: step down
            index = start
        index += direction
    return rows


def capacity_of(rows: list[dict]) -> int:
    """The largest class that passed (0: none)."""
    return max((r["N"] for r in rows if passed(r)), default=0)


def capacity_data(rows: list[dict], processes: int, workers: int, args) -> dict:
    """The search's result as capacity_plan.py reads it."""
    capacity, cores = capacity_of(rows), usable_cores()
    failed = sorted(r["N"] for r in rows if not passed(r) and r["N"] > capacity)
    return {"processes": processes, "workers": workers, "cores": cores, "capacity": capacity,
            "students_per_core": capacity / cores, "first_failed": failed[0] if failed else None,
            "round_seconds": args.round_seconds, "grace": args.grace, "steps": args.steps,
            "tried": [r["N"] for r in rows], "p95_target": P95_TARGET}


def capacity_body(rows: list[dict], data: dict, args, env: dict[str, str]) -> str:
    """The section: the rounds, their verdicts, the capacity and its figures."""
    top = (f"no class passed (the smallest tried: {min(data['tried'])})" if not data["capacity"] else
           f"**{data['capacity']} students** (p95 ≤ {P95_TARGET:g} s, 0 errors, 0 gated by load) on {data['cores']} "
           f"cores: **{data['students_per_core']:.1f} students per core**")
    above = (f"; the next step, {data['first_failed']}, failed" if data["first_failed"] is not None else
             "; no larger class was tried (the steps or the time budget ended there: the capacity is at least this)")
    return "\n".join([
        machine_line(args, env),
        "",
        f"Rounds of {args.round_seconds:g} s after the students' arrival ({ARRIVAL_SECONDS:g} s), a grace of "
        f"{args.grace:g} s for the changes in flight; one server for all rounds; steps {args.steps}.",
        "",
        HEADER,
        *[format_row(r) for r in rows],
        "",
        *[verdict(r) for r in rows],
        "",
        f"Capacity: {top}{above}.",
        "",
        "Round lengths with the wait for an idle server: " + ", ".join(
            f"N = {r['N']}: {r['round_wall']:.0f} s" for r in rows) + ".",
        "",
        f"<!-- {DATA} {json.dumps(data, sort_keys=True)} -->",
        *[row_data(r) for r in rows],
        *details(rows),
    ])


def find_capacity(args, env: dict[str, str], run) -> int:
    """Each ``--processes`` value's search, written as its own section (see the module's docstring)."""
    previous, began_all = 0, time.monotonic()
    for number, processes in enumerate(args.processes):
        above = [i for i, n in enumerate(args.steps) if n > previous]
        start = above[0] if above else len(args.steps) - 1
        began = time.monotonic()
        with StreamlitServer(env=env, processes=processes, workers=args.workers) as server:
            warm_up(server, args.seed)
            idle = idle_cores(server)
            print(f"{processes} app process(es): server up and warmed in {time.monotonic() - began:.0f} s", flush=True)
            print(HEADER, flush=True)
            share = (began_all + 60 * args.max_minutes - time.monotonic()) / (len(args.processes) - number)
            rows = [r | {"idle_cores": idle} for r in search(server, args.steps, start, args.round_seconds, args.grace,
                                                               args.seed, time.monotonic() + share)]
        data = capacity_data(rows, processes, args.workers, args)
        print(f"{processes} app process(es): capacity {data['capacity']} ({data['students_per_core']:.1f} per core), "
              f"search {time.monotonic() - began:.0f} s", flush=True)
        run.write(capacity_title(processes, args.workers, env), capacity_body(rows, data, args, env),
                  preamble=PREAMBLE)
        previous = max(previous, data["capacity"])
    return 0
