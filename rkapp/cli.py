"""The ``rkcore-app`` command: ``streamlit run`` on the installed app's server entry (serve.py), extra
arguments going to streamlit (e.g. ``rkcore-app --server.port 8601``). Without the app extra it says in
one line what to install.

``rkcore-app --processes N`` (``auto``: one per core) starts N app processes behind nginx on the same
port (:mod:`rkapp.serving.proxy`); ``--processes 1``, or no flag, is the single process as before.

Heavy work (views' computations, parsing uploads) runs in Dask worker processes (:mod:`rkapp.workers`): unless
``RKCORE_SCHEDULER`` names a cluster, ``rkcore-app`` starts a local one (``--workers N``, default ``auto``: one
worker per core; ``--workers 0``: compute in the app process) and passes its address to every app process."""
from __future__ import annotations

import os
import sys
from importlib.util import find_spec

from . import APP_EXTRA_MISSING

INSTALL_HINT = "rkcore-app needs {missing}: pip install 'rkcore[app]'"


def main(argv: list[str] | None = None) -> None:
    """Start the dashboard with ``streamlit run``; exit with code 1 and one line when streamlit is missing.

    Parameters
    ----------
    argv : list of str, optional
        Arguments passed on to ``streamlit run`` (default: ``sys.argv[1:]``).
    """
    if APP_EXTRA_MISSING:
        sys.exit(INSTALL_HINT.format(missing=" and ".join(APP_EXTRA_MISSING)))  # to stderr, code 1
    from streamlit.web import cli as stcli

    from .navigation import PAGES_DIR
    from .serving.proxy import processes_from, supervise_argv, take_option
    from rkcore.base.limits import format_bytes

    from .workers import (SCHEDULER_ENV, one_blas_thread_here, scheduler_address, start_local_cluster,
                          stop_local_cluster, worker_memory_limit, workers_from)

    # rkapp/serve.py in a wheel (pages in rkapp/pages), the repository's serve.py in a checkout (the app.py
    # next to it under st.App, with the app's own owner cookie: rkapp.identity); streamlit reads
    # .streamlit/config.toml next to it
    script = PAGES_DIR.parent / "serve.py"
    processes, args = take_option(list(sys.argv[1:] if argv is None else argv), "--processes")
    count = processes_from(processes) if processes is not None else 1
    workers, args = take_option(args, "--workers")
    cluster = None
    if scheduler_address() is None and workers_from(workers or "auto") > 0 and find_spec("distributed") is None:
        print("Dask distributed is not installed (pip install 'rkcore[dask]'): heavy work runs in the app "
              "process(es)", flush=True)
    elif scheduler_address() is None and workers_from(workers or "auto") > 0:
        count_workers = workers_from(workers or "auto")
        cluster, address = start_local_cluster(count_workers)
        os.environ[SCHEDULER_ENV] = address  # every app process (this one, or the farm's) sends its heavy work there
        print(f"Heavy work runs in {count_workers} Dask worker process(es) of {format_bytes(worker_memory_limit())} "
              f"each; their scheduler: {address}", flush=True)
    if scheduler_address() is not None:
        one_blas_thread_here()  # this process and the app processes it starts: heavy work goes to the workers
    if count > 1:  # supervise with the standard library only (0.23 GB less); the cluster watches this pid
        sys.stdout.flush()
        os.execv(sys.executable, supervise_argv(script, count, args))
    try:
        sys.argv = ["streamlit", "run", str(script), *args]
        sys.exit(stcli.main())
    finally:
        if cluster is not None:
            stop_local_cluster(cluster)


if __name__ == "__main__":
    main()
