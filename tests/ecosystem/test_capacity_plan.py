"""The 300-student plan (benchmarks/app/capacity_plan.py) is arithmetic on measured figures: checked here against
a brute-force search over whole cores and GiB with exact fractions, on hand-made figures in results files written
the way the benchmarks write them; the hosting guide's table is what the generator writes from the committed
results; the capacity search climbs and steps down as its docstring says (rounds faked, no server)."""
from __future__ import annotations

import json
from argparse import Namespace
from fractions import Fraction
from itertools import count

import pytest

from benchmarks.app import bench_burst, bench_classroom, capacity_plan, capacity_search

MIB = 2**20


def _section(title: str, kind: str, data: dict) -> str:
    return f"## {title}\n\nRun ...\n\n| x |\n|---|\n| 1 |\n\n<!-- {kind} {json.dumps(data)} -->\n"


FIXTURE_CAPACITY = {2: {"processes": 2, "cores": 2, "capacity": 90, "students_per_core": 45.0, "first_failed": 120,
                        "round_seconds": 90.0},
                    1: {"processes": 1, "cores": 2, "capacity": 40, "students_per_core": 20.0, "first_failed": 60,
                        "round_seconds": 90.0}}
FIXTURE_A = {"N": 60, "cores": 2, "rss_start": 800 * MIB, "peak": 1250 * MIB, "actions": 1000, "server_cpu": 100.0,
             "cpu_roles": {"app": 60.0, "nginx": 2.0, "dask": 38.0}, "p50": 0.1, "p95": 0.8, "max": 2.7, "errors": 0,
             "by_load": 0}
FIXTURE_B = {"N": 120, "to_last": 7.4, "p95": 6.1, "errors": 0}


@pytest.fixture
def results(tmp_path):
    (tmp_path / "classroom.md").write_text(
        "# Classroom\n\n" + _section("30 students, 5 minutes each", "classroom-data", dict(FIXTURE_A, N=30))
        + "\n".join(_section(capacity_plan.CAPACITY[p], "capacity-data", FIXTURE_CAPACITY[p]) for p in (1, 2))
        + _section(capacity_plan.CLASSROOM + " <!-- readme -->", "classroom-data", FIXTURE_A), encoding="utf-8")
    (tmp_path / "burst.md").write_text("# Burst\n\n" + _section(capacity_plan.BURST, "burst-data", FIXTURE_B),
                                       encoding="utf-8")
    return tmp_path


def smallest(holds) -> int:
    """The smallest whole number k >= 1 for which ``holds(k)``, by trying them in turn."""
    return next(k for k in count(1) if holds(k))


@pytest.mark.parametrize("students, headroom, per_machine", [(300, Fraction(3, 10), 16), (300, Fraction(3, 10), 4),
                                                             (120, Fraction(0), 16), (1000, Fraction(1, 2), 8)])
def test_plan_is_the_brute_force_answer(results, students, headroom, per_machine):
    inputs = capacity_plan.Inputs.read(results)
    assert inputs.classroom["N"] == 60 and inputs.missing() == []  # the (a) section, not the 30-student one
    got = capacity_plan.plan(inputs, students, float(headroom), per_machine)
    load = students * (1 + headroom)
    steady = smallest(lambda k: k * Fraction(90, 2) >= load)  # k cores hold k x 45 students
    burst = smallest(lambda k: Fraction(74, 10) * (load / k) / Fraction(120, 2) <= 15)
    cores = max(steady, burst)
    need = cores * Fraction(800 * MIB, 2) + load * Fraction(450 * MIB, 60)
    memory = smallest(lambda g: g * 2**30 >= need)
    app = smallest(lambda k: k >= cores * Fraction(62, 100))
    workers = smallest(lambda k: k >= cores * Fraction(38, 100))
    machines = 1 if cores <= per_machine else 1 + smallest(lambda m: m * per_machine >= workers)
    assert (got.steady_cores, got.burst_cores, got.cores, got.memory_gib) == (steady, burst, cores, memory)
    assert (got.app_cores, got.worker_cores, got.machines) == (app, workers, machines)


def test_the_300_student_figures_by_hand(results):
    """300 x 1.3 = 390 students: 390 / 45 = 8.7 -> 9 cores; burst 390 x 7.4 x 2 / (120 x 15) = 3.2 -> 4 cores;
    memory 9 x 400 MiB + 390 x 7.5 MiB = 6525 MiB -> 7 GiB."""
    p = capacity_plan.plan(capacity_plan.Inputs.read(results))
    assert (p.cores, p.steady_cores, p.burst_cores, p.memory_gib, p.machines) == (9, 9, 4, 7, 1)
    table = capacity_plan.guide_table(capacity_plan.Inputs.read(results))
    assert "**9 cores** (steady: 9, burst: 4), **7 GiB**" in table and "45.0 (90 students on 2 cores held" in table


def test_a_missing_figure_is_named_with_its_command(results):
    (results / "burst.md").unlink()
    inputs = capacity_plan.Inputs.read(results)
    assert inputs.missing() == [capacity_plan.COMMANDS["burst"]]
    with pytest.raises(ValueError, match="bench_burst.py --students 120"):
        capacity_plan.plan(inputs)
    assert "not measured yet" in capacity_plan.guide_table(inputs)


def test_a_class_that_held_nothing_gives_no_plan(results):
    text = (results / "classroom.md").read_text().replace('"capacity": 90', '"capacity": 0')
    (results / "classroom.md").write_text(text.replace('"students_per_core": 45.0', '"students_per_core": 0.0'))
    assert capacity_plan.COMMANDS["capacity"] in capacity_plan.Inputs.read(results).missing()


def test_the_guide_table_is_generated_from_the_committed_results():
    args = capacity_plan.parse_arguments([])
    guide = capacity_plan.GUIDE.read_text(encoding="utf-8")
    assert capacity_plan.render_guide(guide, capacity_plan.Inputs.read(), args) == guide, \
        "run: python benchmarks/app/capacity_plan.py"


def _row(n: int, p95: float, **more) -> dict:
    roles = {"app": 1.0, "nginx": 0.0, "dask": 2.0}
    return dict(N=n, processes=2, workers=-1, cores=2, seconds=100.0, wall=100.0, actions=10, charted=10, unfinished=0,
                p50=0.1, p95=p95, max=p95, by_load=0, gated=0, queued=0, peak=3 * MIB, rss_start=MIB, peak_roles=roles,
                role_peaks=roles, cpu_roles=roles, server_cpu=3.0, errors=[], load_before=(0.1,), load_after=(0.2,)) | more


def test_the_writers_comments_are_what_the_plan_reads():
    text = bench_classroom.row_data(_row(60, 0.8))
    assert capacity_plan.figures(text, "classroom-data")[0]["peak"] == 3 * MIB
    burst = dict(_row(120, 6.1), window=5.0, to_last=7.4, cpu_per_change=0.1, load_before=0.1, load_after=0.2)
    assert capacity_plan.figures(bench_burst.row_data(burst), "burst-data")[0]["to_last"] == 7.4


def _fake_rounds(monkeypatch, holds_up_to: int) -> list[int]:
    tried: list[int] = []

    def measure_round(server, n, seconds, seed, grace=None):
        tried.append(n)
        return _row(n, 1.0 if n <= holds_up_to else 9.0)

    monkeypatch.setattr(capacity_search, "measure_round", measure_round)
    monkeypatch.setattr(capacity_search, "wait_idle", lambda server: 0.0)
    monkeypatch.setattr(capacity_search, "print_row", lambda row: None)
    return tried


@pytest.mark.parametrize("holds, start, tried, capacity", [
    (60, 0, [20, 40, 60, 90], 60),      # climbs until a round fails
    (200, 0, [20, 40, 60, 90, 120], 120),  # every step holds: the capacity is at least the last
    (60, 3, [90, 60], 60),              # starts above: the first round fails, it steps down to the first that holds
    (10, 1, [40, 20], 0),               # nothing holds
])
def test_search_climbs_then_steps_down(monkeypatch, holds, start, tried, capacity):
    done = _fake_rounds(monkeypatch, holds)
    rows = capacity_search.search(None, [20, 40, 60, 90, 120], start, 90.0, 30.0, 0)
    assert done == tried and capacity_search.capacity_of(rows) == capacity
    data = capacity_search.capacity_data(rows, 2, -1, Namespace(round_seconds=90.0, grace=30.0, steps=[20, 40]))
    assert data["capacity"] == capacity and data["students_per_core"] == capacity / data["cores"]


def test_search_tries_no_larger_class_after_its_deadline(monkeypatch):
    done = _fake_rounds(monkeypatch, 200)
    rows = capacity_search.search(None, [20, 40, 60], 0, 90.0, 30.0, 0, deadline=0.0)  # long past
    assert done == [20] and capacity_search.capacity_of(rows) == 20
    done.clear()
    rows = capacity_search.search(None, [20, 40, 60], 2, 90.0, 30.0, 0, deadline=0.0)
    assert done == [60]  # the first round always runs


class _Process:
    def __init__(self, pid, ppid, name, cmdline):
        self.pid, self._ppid, self._name, self._cmdline = pid, ppid, name, cmdline

    def ppid(self):
        return self._ppid

    def name(self):
        return self._name

    def cmdline(self):
        return self._cmdline.split()


def test_the_sampler_sees_every_process_by_role(monkeypatch):
    """rkcore-app's tree: the launcher, two Streamlit processes, nginx and its worker, the Dask cluster's process
    (a subprocess of the launcher) and what it spawned (resource tracker, two workers, one of theirs)."""
    from benchmarks.app.streamlit_server import StreamlitServer

    tree = [_Process(1, 0, "python", "python -m rkapp.cli --processes 2"),
            _Process(2, 1, "python", "python -c serve_local_cluster(2, ...)"),
            _Process(3, 1, "python", "python -m streamlit run serve.py"), _Process(4, 1, "python", "python -m streamlit"),
            _Process(5, 1, "nginx", "nginx: master process"), _Process(6, 2, "python", "python -B -c resource_tracker"),
            _Process(7, 2, "python", "python -c spawn_main"), _Process(8, 2, "python", "python -c spawn_main"),
            _Process(9, 5, "nginx", "nginx: worker process"), _Process(10, 7, "python", "python -c child")]
    server = StreamlitServer.__new__(StreamlitServer)
    monkeypatch.setattr(server, "_processes", lambda: tree, raising=False)
    roles = {role: sorted(p.pid for p in ps) for role, ps in server.roles().items()}
    assert roles == {"app": [1, 3, 4], "nginx": [5, 9], "dask": [2, 6, 7, 8, 10]}


def test_app_processes_that_do_not_fit_one_machine_are_said_so(results):
    table = capacity_plan.guide_table(capacity_plan.Inputs.read(results), students=3000, cores_per_machine=8)
    assert "do not fit one machine of 8" in table
    assert "do not fit" not in capacity_plan.guide_table(capacity_plan.Inputs.read(results), cores_per_machine=8)
