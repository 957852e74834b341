"""Command line: ``python -m rkcore {timing,table1,accuracy} ...``.

Each sub-command lives in its own module with a ``main(argv)`` function.
"""
from __future__ import annotations

import sys
from importlib import import_module

COMMANDS = {
    "timing": ("rkcore.timing", "mapping time of RK, SCRK, TS, RM (paper Figure 1)"),
    "table1": ("rkcore.table1", "approximation errors on MovieLens 100K (paper Table 1)"),
    "accuracy": ("rkcore.accuracy", "classifier accuracy and time study (paper Figures 2 and 3)"),
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in COMMANDS:
        print("usage: python -m rkcore {%s} [options]\n" % ",".join(COMMANDS))
        for name, (_, text) in COMMANDS.items():
            print(f"  {name:<9} {text}")
        return 0 if argv[:1] in ([], ["-h"], ["--help"]) else 2
    module = import_module(COMMANDS[argv[0]][0])
    return module.main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
