"""Walk rkcore's public API with huge sizes; run as a script by tests/base/test_public_memory.py.

Every public function and class of every public module (the enumeration of tests/ecosystem/test_docs.py) that
takes a size (a parameter named in SIZES) is called once per size parameter with that size huge (HUGE, or
[HUGE] for a list of sizes) and the other sizes at their defaults (or small); a class is built that way and fit
and transformed on a small X. Functions taking X and Y (Gram matrices) are also called with a tall X (TALL
rows). Each call runs under tracemalloc, a time limit and an address-space limit (so that an unguarded
allocation fails fast with MemoryError instead of taking the machine), with RKCORE_MEMORY_BUDGET set by the
caller. Prints one JSON line per call: path, parameter, outcome (returned, refused, the exception's type,
timeout, unbuilt: a required argument the walk cannot make), message, peak bytes.
"""
from __future__ import annotations

import importlib
import inspect
import json
import resource
import signal
import sys
import tracemalloc
import warnings
from pathlib import Path

ADDRESS_SPACE = 4 * 2**30
resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

import numpy as np  # noqa: E402 - after the limit, so that numpy's own mappings count

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ecosystem"))
from test_docs import _public_modules, public_objects  # noqa: E402

HUGE = 10**9
TALL = 200_000
#: Parameter names that are sizes (counts of rows, features, random features, trials, points, ...).
SIZES = {"n", "d", "D", "n_components", "n_samples", "n_features", "d_values", "D_values", "n_values", "D_list",
         "d_list", "m_max", "trials", "n_points", "n_terms", "n_rows", "n_categories", "max_draws", "n_trials",
         "n_pairs", "n_train", "n_test", "degree", "repeats", "max_features"}
LISTS = {"d_values", "D_values", "n_values", "D_list", "d_list"}
#: Seconds one call may take.
SECONDS = 3


def _argument(name: str):
    """A small valid value of a required non-size argument, by name (LookupError: the walk cannot make one)."""
    from rkcore.registry import KernelSpec

    X = np.random.RandomState(0).rand(6, 4)
    table = {"X": X, "Y": X, "A": X, "x": X[:1], "y": np.array([0, 1] * 3), "spec": KernelSpec("anova", 2),
             "kernel": "anova", "map_key": "rk", "map_keys": ["rk"]}
    if name in table:
        return table[name]
    raise LookupError(name)


class _Timeout(Exception):
    pass


def _on_alarm(*_):
    raise _Timeout()


def _call(obj, huge: str | None, tall: bool):
    kwargs = {}
    for p in inspect.signature(obj).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name == huge:
            kwargs[p.name] = [HUGE] if p.name in LISTS else HUGE
        elif tall and p.name == "X":
            kwargs[p.name] = np.ones((TALL, 3))
        elif p.default is inspect.Parameter.empty:
            kwargs[p.name] = ([2] if p.name in LISTS else 2) if p.name in SIZES else _argument(p.name)
    out = obj(**kwargs)
    if inspect.isclass(obj) and hasattr(out, "fit"):
        X = _argument("X")
        out.fit(X, _argument("y")) if hasattr(out, "predict") else out.fit(X)
        if hasattr(out, "transform"):
            out.transform(X)


def _calls():
    for module in _public_modules():
        mod = importlib.import_module(module)
        for path in public_objects(module):
            name = path[len(module) + 1:]
            if "." in name:  # methods: reached through their class
                continue
            obj = getattr(mod, name)
            try:
                params = inspect.signature(obj).parameters
            except (TypeError, ValueError):
                continue
            for size in [p for p in params if p in SIZES]:
                yield path, obj, size, False
            if "X" in params and "Y" in params:
                yield path, obj, "X (rows)", True


def main() -> None:
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _on_alarm)
    skip = set(sys.argv[1:])
    for path, obj, size, tall in _calls():
        if f"{path}:{size}" in skip:
            continue
        tracemalloc.start()
        signal.alarm(SECONDS)
        try:
            _call(obj, None if tall else size, tall)
            outcome, message = "returned", ""
        except LookupError as exc:
            outcome, message = "unbuilt", str(exc)
        except _Timeout:
            outcome, message = "timeout", ""
        except Exception as exc:  # noqa: BLE001 - the outcome is reported, the caller judges it
            message = str(exc)
            refused = isinstance(exc, ValueError) and "of memory" in message and "allowed" in message
            outcome = "refused" if refused else type(exc).__name__
        finally:
            signal.alarm(0)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        print(json.dumps(dict(path=path, size=size, outcome=outcome, message=message[:2000], peak=peak)), flush=True)


if __name__ == "__main__":
    main()
