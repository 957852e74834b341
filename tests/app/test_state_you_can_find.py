"""Issue 36, "State you can find": one record per script run, no process-wide override shared by the sessions
of one server, no import-time side effects, and ViewSpec as a written class agreeing with the state table."""
import dataclasses
import subprocess
import sys
import threading

from rkapp.run_context import ScriptRun, begin_run, current_run
from rkcore.base.limits import memory_budget, memory_budget_set
from rkcore.views.settings import TABLE, ViewSpec


def _in_thread(function):
    result = []
    thread = threading.Thread(target=lambda: result.append(function()))
    thread.start()
    thread.join()
    return result[0]


def test_one_record_per_script_run_and_thread():
    begin_run(title="Gram matrices", figures=[], settings={"n": 3})
    assert current_run().title == "Gram matrices"
    other = _in_thread(current_run)  # another session's script thread, or a fragment's rerun
    assert other == ScriptRun(), "a thread that began no run sees nothing of another run"
    assert current_run().settings == {"n": 3}


def test_a_memory_budget_block_in_one_session_leaves_the_others_alone():
    """Two sessions' scripts are two threads of one process: a block setting a budget in one of them must not
    change what the other one reads (a process-wide stack did)."""
    outside = memory_budget()
    entered, leave = threading.Event(), threading.Event()

    def session_a():
        with memory_budget_set(999):
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=session_a)
    thread.start()
    try:
        assert entered.wait(10)
        assert memory_budget() == outside, "session B reads its own budget while A's block is open"
        assert _in_thread(memory_budget) == outside
    finally:
        leave.set()
        thread.join()
    with memory_budget_set(1234):
        assert memory_budget() == 1234
    assert memory_budget() == outside


IMPORT_ALL = """
import importlib, pkgutil
import streamlit.elements.widgets.number_input as number_input
deserialize = number_input.NumberInputSerde.deserialize
from rkcore.data.builtin import GENERATED
generated = dict(GENERATED)
import rkcore, rkapp
for package in (rkcore, rkapp):
    for module in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
        if ".serving" in module.name or module.name.endswith((".serve", ".app")):
            continue  # the server's entry points start a server
        importlib.import_module(module.name)
assert GENERATED == generated, "importing a module changed the generated datasets' table"
from rkcore.data.catalog import BUILTIN
assert set(BUILTIN) == set(generated) | {"movielens_ratings"}, sorted(BUILTIN)
assert number_input.NumberInputSerde.deserialize is deserialize, "importing rkapp patched Streamlit"
print("ok")
"""


def test_importing_any_module_changes_nothing_elsewhere():
    out = subprocess.run([sys.executable, "-c", IMPORT_ALL], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith("ok"), out.stderr[-2000:]


def test_viewspec_is_the_tables_sidebar_fields():
    fields = [f for f in dataclasses.fields(ViewSpec) if f.name != "upload"]
    assert [(f.name, f.default) for f in fields] == [(f.name, f.default) for f in TABLE if f.view]
    assert ViewSpec.__module__ == "rkcore.views.settings" and "kernel_spec" in ViewSpec.__dict__
