"""The web pages' engine: reads only, and never in the way of mail.

Every transaction of pbm's own engine on SQLite takes the write lock (BEGIN IMMEDIATE,
see pbm.store.engine), so pages read through an engine of their own: on SQLite a
read-only connection (`mode=ro`) whose transactions begin deferred, which in WAL mode
never waits for a writer nor makes one wait; on PostgreSQL read-only transactions.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine
from sqlalchemy.pool import QueuePool

from pbm.store.engine import sqlite_file

# Connections kept open, and the most at once: as many as the web server's worker threads
# (anyio's default limit), so that no page waits for a connection under load.
POOL_SIZE = 8
MAX_CONNECTIONS = 40
_FILE = "pbm.read_file"  # the (device, inode) a connection opened, in its pool record


def make_read_engine(url: str, busy_timeout: float = 10.0) -> Engine:
    """An engine that cannot write: a page's GET changes nothing, whatever its code."""
    path = sqlite_file(url)
    if url.startswith("sqlite"):
        if path is None:  # in memory: nothing to open read-only, the tests' case only
            return create_engine(url, connect_args={"check_same_thread": False})
        location = path.absolute().as_uri()

        def connect() -> sqlite3.Connection:
            conn = sqlite3.connect(
                f"{location}?mode=ro", uri=True, timeout=busy_timeout, check_same_thread=False
            )
            conn.isolation_level = None  # BEGIN is ours (below): deferred, a reader's
            return conn

        # A queue of connections shared by the threads (the in-memory URL's default pool
        # would keep one per thread and close the others' past its size).
        engine = create_engine(
            "sqlite://",
            creator=connect,
            poolclass=QueuePool,
            pool_size=POOL_SIZE,
            max_overflow=MAX_CONNECTIONS - POOL_SIZE,
        )
        event.listen(engine, "begin", _begin_deferred)
        _follow_the_file(engine, path)
        return engine
    engine = create_engine(
        url, pool_pre_ping=True, pool_size=POOL_SIZE, max_overflow=MAX_CONNECTIONS - POOL_SIZE
    )
    return engine.execution_options(postgresql_readonly=True)


def _follow_the_file(engine: Engine, path: Path) -> None:
    """Keep the pooled connections on the file at `path`. A connection holds the file it
    opened even after a restore moved a backup there (docs/mail-setup.md) or the file was
    deleted: the pages and /metrics went on showing the old database and /healthz said
    ok while the daemon took no mail. A connection whose file is no longer at `path` is
    closed before use and a new one opened there; with no file there that fails, and
    the page or /healthz says the store is unavailable."""

    def connected(_dbapi_conn: Any, record: Any) -> None:
        record.info[_FILE] = _identity(path)

    def checkout(_dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        found = _identity(path)
        if found is None or found != record.info.get(_FILE):
            raise sa_exc.DisconnectionError(f"database file {path} changed")

    event.listen(engine, "connect", connected)
    event.listen(engine, "checkout", checkout)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _begin_deferred(conn: Any) -> None:
    conn.connection.dbapi_connection.execute("BEGIN")
