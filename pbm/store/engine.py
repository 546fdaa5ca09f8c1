"""Engine and session setup: SQLite's pragmas, locking and busy timeout, PostgreSQL's
pre-ping; where a SQLite database's file is, and the marker left beside one pbm made."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError
from sqlmodel import Session, create_engine

from pbm.config import ConfigError
from pbm.errors import StoreUnavailable
from pbm.store import models  # noqa: F401  (registers the tables on SQLModel.metadata)
from pbm.store.failures import file_failure

# How long a transaction waits for another process's write lock before the store counts
# as busy (the `[store] busy_timeout_seconds` setting's default).
BUSY_TIMEOUT_SECONDS = 10.0


class EngineWatch(Protocol):
    """What keeps a long-running process's engine on its file (DatabaseFile: a protocol
    here, since that module needs this one)."""

    def attach(self, engine: Engine, busy_timeout: float) -> None: ...


def make_engine(
    url: str,
    *,
    watch: EngineWatch | None = None,
    create: bool = True,
    busy_timeout: float = BUSY_TIMEOUT_SECONDS,
) -> Engine:
    """An engine for `url`; SQLite gets WAL, a busy timeout of `busy_timeout` seconds and
    enforced foreign keys.

    `create=False` (SQLite): a missing database file is a StoreUnavailable naming `pbm
    db init`, never a new empty file (only `pbm db init` and a first `pbm serve` create
    one; see `creation_marker`).

    `watch` (SQLite only): the engine of a long-running process, which keeps to the
    database file it started with (see DatabaseFile). It has one connection, so that no
    connection to a deleted or replaced file outlives the check; SQLite lets one writer
    in at a time and every transaction here takes the write lock, so a second connection
    would only wait on the busy timeout instead of on the pool.
    """
    if url.startswith("sqlite"):
        if create:
            _ensure_sqlite_dir(url)
        pool: dict[str, Any] = {}
        if watch is not None:
            pool = {"pool_size": 1, "max_overflow": 0, "pool_timeout": busy_timeout}
        engine = create_engine(
            url, connect_args={"timeout": busy_timeout, "check_same_thread": False}, **pool
        )
        event.listen(engine, "connect", _sqlite_pragmas(busy_timeout))
        path = sqlite_file(url)
        if not create and path is not None:
            event.listen(engine, "do_connect", _existing_file_only(path.absolute()))
        # pysqlite's own transaction handling would defer BEGIN and break SAVEPOINTs.
        # IMMEDIATE takes the write lock up front: two processes handling mail for one
        # board then queue on the busy timeout instead of failing to upgrade a read lock.
        event.listen(engine, "begin", _begin_immediate)
        if watch is not None:
            watch.attach(engine, busy_timeout)
        return engine
    try:
        return create_engine(url, pool_pre_ping=True)
    except (ArgumentError, ImportError, NoSuchModuleError) as exc:
        raise ConfigError(_unusable_url(url, exc)) from exc


def shown_url(url: str) -> str:
    """`url` as a terminal or the log may show it: its password as ***."""
    return _hidden(url) or "(not an URL)"


def _hidden(url: str) -> str | None:
    """`url` with its password as ***, or None when it is no URL at all."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return None


def _unusable_url(url: str, exc: Exception) -> str:
    """Why `url` names no database pbm can open, without its password: a bad setting
    (exit 78), not the traceback of a bug."""
    advice = "write sqlite:///PATH or postgresql+psycopg://USER:PASSWORD@HOST/DATABASE"
    shown = _hidden(url)
    if shown is None:
        return f"[store] database_url is not an URL: {advice}"
    if isinstance(exc, NoSuchModuleError):  # a subclass of ArgumentError
        why = "no database of that kind"
    elif isinstance(exc, ImportError):
        why = "its driver is not installed"
    else:
        why = str(exc)
    return f"[store] database_url {shown!r}: {why}; {advice}"


def _existing_file_only(path: Path) -> Callable[..., None]:
    """A connect hook that opens `path` read-write without creating it (`mode=rw`), and
    says what to run when it is not there."""

    def before_connect(_dialect: Any, _record: Any, cargs: list[Any], cparams: Any) -> None:
        if not path.exists():
            raise StoreUnavailable(missing_database(path))
        if cargs and not str(cargs[0]).startswith("file:"):
            cargs[0] = f"file:{quote(str(path))}?mode=rw"
            cparams["uri"] = True

    return before_connect


def missing_database(path: Path) -> str:
    """The one line for a database file that is not there."""
    return f"the database file {path} does not exist: create it with `pbm db init`"


def creation_marker(path: Path) -> Path:
    """The file pbm leaves beside a SQLite database it created (in the data directory by
    default): once it is there, a missing database is lost, not yet to be made, so even
    `pbm serve` does not make a new empty one."""
    return path.with_name(path.name + ".created")


def mark_created(path: Path) -> None:
    """Leave `creation_marker` for the database file `path` (it exists by now)."""
    marker = creation_marker(path)
    if not marker.exists():
        with file_failure():
            marker.write_text(f"pbm created the database {path.name} here\n", encoding="utf-8")


def _begin_immediate(conn: Any) -> None:
    # Straight to the driver: this runs for every transaction, and SQLAlchemy's statement
    # machinery costs more than the statement.
    conn.connection.dbapi_connection.execute("BEGIN IMMEDIATE")


def _sqlite_pragmas(busy_timeout: float) -> Callable[[Any, Any], None]:
    """The connect hook that sets up each new SQLite connection."""

    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (see make_engine)
        cur = dbapi_conn.cursor()
        if not _is_memory(dbapi_conn):
            cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA busy_timeout={round(busy_timeout * 1000)}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.close()

    return on_connect


def _is_memory(dbapi_conn: Any) -> bool:
    cur = dbapi_conn.cursor()
    try:
        rows = cur.execute("PRAGMA database_list").fetchall()
        return any(r[1] == "main" and not r[2] for r in rows)
    finally:
        cur.close()


def _ensure_sqlite_dir(url: str) -> None:
    path = sqlite_file(url)
    if path is None:
        return
    try:
        with file_failure():
            path.parent.mkdir(parents=True, exist_ok=True)
    except StoreUnavailable as exc:
        # The OSError's own text names a directory, not what pbm was making it for.
        raise StoreUnavailable(
            f"cannot make the directory of the database {path}: {exc}", exc.kind
        ) from exc.__cause__


def sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL; None for another database or one in memory."""
    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite"):
        return None
    name = parsed.database or ""
    if name.startswith("file:"):
        name = name.removeprefix("file:")
        if "mode=memory" in url:
            return None
    if not name or name == ":memory:":
        return None
    return Path(name)


def session_for(engine: Engine) -> Session:
    """A session whose objects stay readable after commit (services return them)."""
    return Session(engine, expire_on_commit=False)
