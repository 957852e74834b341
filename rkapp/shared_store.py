"""One SQLite file of the server's shared state (uploads, classes, answers): every app process opens the same
file (``RKCORE_STORE_DIR``), so what one process writes the others read.

Python's own ``sqlite3`` (nothing to install): one connection per thread (a connection stays in its thread),
write-ahead logging (readers never wait for a writer) and transactions that take the write lock first
(``BEGIN IMMEDIATE``), so the checks and the change inside one transaction see one state of the file, whichever
process writes at the same time.
"""
from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence


class SharedStore:
    """The SQLite file ``path_of()`` names, created with ``schema`` (statements run on every new connection:
    write them ``IF NOT EXISTS``).

    Parameters
    ----------
    path_of : callable
        Returns the file's path now (it may follow the environment: a test points it elsewhere).
    schema : sequence of str
        The statements that create the tables and indexes.
    """

    def __init__(self, path_of: Callable[[], Path], schema: Sequence[str]) -> None:
        self._path_of = path_of
        self._schema = tuple(schema)
        self._local = threading.local()

    def connection(self) -> sqlite3.Connection:
        """This thread's connection to the file (a new one when the path changed).

        Returns
        -------
        sqlite3.Connection
            In autocommit mode: transactions are spelled out (:meth:`transaction`).
        """
        path = self._path_of()
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "path", None) != path:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=30, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            for statement in self._schema:
                conn.execute(statement)
            self._local.conn, self._local.path = conn, path
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` when the block raises).

        Yields
        ------
        sqlite3.Connection
            The connection, inside the transaction.
        """
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
