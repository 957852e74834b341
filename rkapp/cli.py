"""The ``rkcore-app`` command: ``streamlit run`` on the installed app (extra arguments go to streamlit,
e.g. ``rkcore-app --server.port 8601``)."""
from __future__ import annotations

import sys

from .navigation import PAGES_DIR


def main(argv: list[str] | None = None) -> None:
    from streamlit.web import cli as stcli

    # rkapp/app.py in a wheel (pages in rkapp/pages), the repository's app.py in a checkout; streamlit
    # reads .streamlit/config.toml next to it
    script = PAGES_DIR.parent / "app.py"
    sys.argv = ["streamlit", "run", str(script), *(sys.argv[1:] if argv is None else argv)]
    sys.exit(stcli.main())


if __name__ == "__main__":
    main()
