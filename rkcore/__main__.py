"""``python -m rkcore ...`` is the ``rkcore`` command (see :mod:`rkcore.cli`)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
