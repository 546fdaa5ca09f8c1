"""Engine and session setup; schema creation and upgrades through alembic migrations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config as AlembicConfig
from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import Session, create_engine

from pbm.store import models  # noqa: F401  (registers the tables on SQLModel.metadata)

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
BUSY_TIMEOUT_MS = 10_000


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite gets WAL, a busy timeout and enforced foreign keys."""
    if url.startswith("sqlite"):
        _ensure_sqlite_dir(url)
        engine = create_engine(
            url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "check_same_thread": False}
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        # pysqlite's own transaction handling would defer BEGIN and break SAVEPOINTs.
        # IMMEDIATE takes the write lock up front: two processes handling mail for one
        # board then queue on the busy timeout instead of failing to upgrade a read lock.
        event.listen(engine, "begin", _begin_immediate)
        return engine
    return create_engine(url, pool_pre_ping=True)


def _begin_immediate(conn: Any) -> None:
    # Straight to the driver: this runs for every transaction, and SQLAlchemy's statement
    # machinery costs more than the statement.
    conn.connection.dbapi_connection.execute("BEGIN IMMEDIATE")


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (see make_engine)
    cur = dbapi_conn.cursor()
    if not _is_memory(dbapi_conn):
        cur.execute("PRAGMA journal_mode=WAL")
    cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


def _is_memory(dbapi_conn: Any) -> bool:
    cur = dbapi_conn.cursor()
    try:
        rows = cur.execute("PRAGMA database_list").fetchall()
        return any(r[1] == "main" and not r[2] for r in rows)
    finally:
        cur.close()


def _ensure_sqlite_dir(url: str) -> None:
    path = url.split(":///", 1)[1] if ":///" in url else ""
    if path and not path.startswith(":memory:") and "mode=memory" not in url:
        Path(path.split("?", 1)[0]).parent.mkdir(parents=True, exist_ok=True)


def alembic_config(engine: Engine) -> AlembicConfig:
    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["engine"] = engine
    return cfg


def init_db(engine: Engine) -> None:
    """Create the schema, or upgrade it in place to the newest migration."""
    # "heads": a schema whose revisions branched (two features migrated side by side)
    # still upgrades to every head.
    command.upgrade(alembic_config(engine), "heads")


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        heads = MigrationContext.configure(conn).get_current_heads()
    return ",".join(sorted(heads)) or None


def session_for(engine: Engine) -> Session:
    """A session whose objects stay readable after commit (services return them)."""
    return Session(engine, expire_on_commit=False)


@event.listens_for(Session, "after_transaction_end")
def _forget_transaction_caches(session: Session, _transaction: Any) -> None:
    """Services may keep what they read in `session.info` for a transaction (keys
    starting "pbm."); once it ends (a savepoint too: its rollback may have undone what was
    read, and after a commit other processes may write) the reading is stale. A flush's
    own inner transaction ends nothing of the kind."""
    if _transaction.parent is not None and not _transaction.nested:
        return
    for key in [k for k in session.info if isinstance(k, str) and k.startswith("pbm.")]:
        del session.info[key]
