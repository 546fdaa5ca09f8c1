"""Engine and session setup; schema creation and upgrades through alembic migrations;
what counts as a failure of the store (the message waits and is tried again, never
bounced nor marked failed); and the watch a long-running process keeps on its SQLite
file, so that it never writes into a file that replaced its database."""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import re
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import quote

from sqlalchemy import Table, event, inspect
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine, make_url
from sqlmodel import Session, SQLModel, create_engine

from pbm.errors import SchemaNotReady, StoreUnavailable
from pbm.logfmt import kv
from pbm.store import models  # noqa: F401  (registers the tables on SQLModel.metadata)

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

log = logging.getLogger(__name__)

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
# How long a transaction waits for another process's write lock before the store counts
# as busy (read when an engine is made: tests shorten it).
BUSY_TIMEOUT_MS = 10_000


def table_of(model: type[SQLModel]) -> Table:
    """The Core table of a table model, typed: sqlmodel sets `__table__` but does not
    declare it, so `Model.__table__` fails the type check."""
    table = inspect(model).local_table
    if not isinstance(table, Table):
        raise TypeError(f"{model.__name__} is not a table model")
    return table


def make_engine(url: str, *, watch: DatabaseFile | None = None, create: bool = True) -> Engine:
    """An engine for `url`; SQLite gets WAL, a busy timeout and enforced foreign keys.

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
        timeout = BUSY_TIMEOUT_MS / 1000
        pool: dict[str, Any] = {}
        if watch is not None:
            pool = {"pool_size": 1, "max_overflow": 0, "pool_timeout": timeout}
        engine = create_engine(
            url, connect_args={"timeout": timeout, "check_same_thread": False}, **pool
        )
        event.listen(engine, "connect", _sqlite_pragmas)
        path = sqlite_file(url)
        if not create and path is not None:
            event.listen(engine, "do_connect", _existing_file_only(path.absolute()))
        # pysqlite's own transaction handling would defer BEGIN and break SAVEPOINTs.
        # IMMEDIATE takes the write lock up front: two processes handling mail for one
        # board then queue on the busy timeout instead of failing to upgrade a read lock.
        event.listen(engine, "begin", _begin_immediate)
        if watch is not None:
            watch.attach(engine)
        return engine
    return create_engine(url, pool_pre_ping=True)


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
        marker.write_text(f"pbm created the database {path.name} here\n", encoding="utf-8")


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
    path = sqlite_file(url)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)


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


# --- failures of the store --------------------------------------------------------------

# SQLite's primary result codes that mean the store, not the code, is in trouble.
_SQLITE_KINDS = {
    3: "permission",  # SQLITE_PERM
    5: "busy",  # SQLITE_BUSY
    6: "busy",  # SQLITE_LOCKED
    7: "io",  # SQLITE_NOMEM
    8: "permission",  # SQLITE_READONLY: a read-only file or file system
    10: "io",  # SQLITE_IOERR
    11: "unavailable",  # SQLITE_CORRUPT: restore from a backup
    13: "full",  # SQLITE_FULL: the disk (or max_page_count)
    14: "unavailable",  # SQLITE_CANTOPEN
    15: "busy",  # SQLITE_PROTOCOL
    17: "busy",  # SQLITE_SCHEMA: changed under the statement
    23: "permission",  # SQLITE_AUTH
    26: "unavailable",  # SQLITE_NOTADB: not a database file
}
# PostgreSQL SQLSTATEs (exact, then by class) with the same meaning.
_SQLSTATE_KINDS = {
    "42P01": "schema",  # undefined_table
    "42703": "schema",  # undefined_column
    "42501": "permission",  # insufficient_privilege
    "25006": "permission",  # read_only_sql_transaction (a standby)
    "55P03": "busy",  # lock_not_available
    "53100": "full",  # disk_full
    "3D000": "unavailable",  # invalid_catalog_name: no such database
}
_SQLSTATE_CLASS_KINDS = {
    "08": "unavailable",  # connection exception
    "28": "permission",  # invalid authorization
    "40": "busy",  # serialization failure, deadlock: try again
    "53": "busy",  # insufficient resources
    "57": "unavailable",  # operator intervention: shutting down, starting up
    "58": "io",  # system error
}
_OS_KINDS = {
    errno.ENOSPC: "full",
    errno.EDQUOT: "full",
    errno.EACCES: "permission",
    errno.EPERM: "permission",
    errno.EROFS: "permission",
    errno.ENOENT: "unavailable",
    errno.ENOTDIR: "unavailable",
}


def store_failure(exc: BaseException) -> str | None:
    """What kind of store failure `exc` is, or None when it is none (a bug).

    Kinds: busy (locked, a conflict), full (disk or quota), io (I/O, memory), permission,
    unavailable (missing, unreachable, not a database), schema (tables missing or old).
    Every kind is temporary for mail: the message waits and is tried again. An exception
    raised `from` a store failure counts as one."""
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 5:
        kind = _kind_of(current)
        if kind is not None:
            return kind
        current = current.__cause__
        seen += 1
    return None


def _kind_of(exc: BaseException) -> str | None:
    if isinstance(exc, StoreUnavailable):
        return exc.kind
    if isinstance(exc, sa_exc.TimeoutError):  # no pooled connection came free in time
        return "busy"
    if isinstance(exc, sa_exc.DBAPIError):
        if exc.connection_invalidated:
            return "unavailable"
        orig = exc.orig
        if isinstance(orig, sqlite3.Error):
            return _sqlite_kind(orig)
        state = getattr(orig, "sqlstate", None)
        if isinstance(state, str) and state:
            kind = _SQLSTATE_KINDS.get(state) or _SQLSTATE_CLASS_KINDS.get(state[:2])
            if kind is not None:
                return kind
        # a driver's connection failures carry no SQLSTATE
        return "unavailable" if isinstance(exc, sa_exc.OperationalError) else None
    if isinstance(exc, sqlite3.Error):
        return _sqlite_kind(exc)
    if isinstance(exc, OSError):
        return _OS_KINDS.get(exc.errno or 0, "io")
    return None


def _sqlite_kind(exc: sqlite3.Error) -> str | None:
    # Not "any OperationalError": SQLite reports a syntax error (a bug) as one too.
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _SQLITE_KINDS:
        return _SQLITE_KINDS[code & 0xFF]
    if str(exc).startswith(("no such table", "no such column")):
        return "schema"
    return None


def describe_failure(exc: BaseException) -> str:
    """One line saying what went wrong, without SQL or a traceback."""
    if isinstance(exc, sa_exc.DBAPIError) and exc.orig is not None:
        text = str(exc.orig) or type(exc.orig).__name__
    else:
        text = str(exc) or type(exc).__name__
    return (text.strip().splitlines() or [type(exc).__name__])[0]


def as_unavailable(exc: BaseException) -> StoreUnavailable:
    """`exc` (a store failure) as a StoreUnavailable with its kind and one-line text."""
    if isinstance(exc, StoreUnavailable):
        return exc
    return StoreUnavailable(describe_failure(exc), store_failure(exc) or "unavailable")


@contextmanager
def unavailable_on_failure() -> Iterator[None]:
    """Let a store failure out as StoreUnavailable; anything else passes unchanged."""
    try:
        yield
    except StoreUnavailable:
        raise
    except Exception as exc:
        if store_failure(exc) is None:
            raise
        raise as_unavailable(exc) from exc


# --- the schema -------------------------------------------------------------------------

_REVISION = re.compile(r"^revision\s*=\s*['\"]([^'\"]+)['\"]", re.M)
_DOWN = re.compile(r"^down_revision\s*=\s*(.+)$", re.M)
_QUOTED = re.compile(r"['\"]([^'\"]+)['\"]")


@cache
def _revisions() -> tuple[frozenset[str], frozenset[str]]:
    """(every revision, the heads) of pbm's migrations, read from the files: importing
    alembic costs a tenth of a second, and most runs only need to know that the stored
    schema is current."""
    known: set[str] = set()
    parents: set[str] = set()
    for path in (MIGRATIONS / "versions").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        found = _REVISION.search(text)
        if found is None:
            continue
        known.add(found.group(1))
        down = _DOWN.search(text)
        if down is not None:
            parents.update(_QUOTED.findall(down.group(1)))
    return frozenset(known), frozenset(known - parents)


def schema_heads() -> frozenset[str]:
    """The newest migration(s) this pbm knows."""
    return _revisions()[1]


def stored_heads(engine: Engine) -> frozenset[str]:
    """The migration(s) the database's schema is at; empty when it has none."""
    try:
        with engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT version_num FROM alembic_version").all()
    except sa_exc.DBAPIError as exc:
        if store_failure(exc) == "schema":
            return frozenset()
        raise
    return frozenset(str(r[0]) for r in rows)


def ensure_schema(engine: Engine, *, create: bool = False) -> None:
    """Make sure the schema is this pbm's: on SQLite (the embedded default) upgrade it
    after an update, and create it only when `create` says so (`pbm db init`, a first
    `pbm serve`); a database without pbm's schema otherwise raises SchemaNotReady naming
    `pbm db init`, and on any other database, where upgrades are the operator's to
    schedule, an old schema raises SchemaNotReady naming `pbm db upgrade`. One query
    when the schema is current."""
    have = stored_heads(engine)
    want = schema_heads()
    if have == want:
        return
    if not have and not (create and engine.dialect.name == "sqlite"):
        raise SchemaNotReady(
            f"the database {_shown(engine)} holds no pbm schema: create it with `pbm db init`"
        )
    unknown = have - _revisions()[0]
    if unknown:
        raise SchemaNotReady(
            f"the database schema ({', '.join(sorted(unknown))}) is newer than this pbm "
            f"knows ({', '.join(sorted(want))}): run the newer pbm"
        )
    if engine.dialect.name == "sqlite":
        init_db(engine)
        return
    stored = ", ".join(sorted(have)) if have else "missing"
    raise SchemaNotReady(
        f"the database schema is {stored}, this pbm needs {', '.join(sorted(want))}: "
        "run `pbm db upgrade`"
    )


def _shown(engine: Engine) -> str:
    path = sqlite_file(str(engine.url))
    return str(path) if path is not None else engine.url.render_as_string(hide_password=True)


def alembic_config(engine: Engine) -> AlembicConfig:
    from alembic.config import Config as AlembicConfig  # see _revisions: import cost

    cfg = AlembicConfig()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["engine"] = engine
    return cfg


def init_db(engine: Engine) -> None:
    """Create the schema, or upgrade it in place to the newest migration."""
    from alembic import command  # see _revisions: import cost

    before = current_revision(engine)
    # "heads": a schema whose revisions branched (two features migrated side by side)
    # still upgrades to every head.
    command.upgrade(alembic_config(engine), "heads")
    after = current_revision(engine)
    if after != before:
        log.info(kv("schema_upgraded", before=before or "none", after=after))
    if engine.dialect.name == "sqlite" and after != before:
        # A migration that alters a SQLite table copies it (batch mode) and leaves the
        # old pages free in the file: give them back once, after the upgrade.
        raw = engine.raw_connection()
        try:
            driver = raw.driver_connection
            if driver is not None:  # None only for a connection already closed
                driver.execute("VACUUM")
        finally:
            raw.close()


def current_revision(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext  # see _revisions

    with engine.connect() as conn:
        heads = MigrationContext.configure(conn).get_current_heads()
    return ",".join(sorted(heads)) or None


# --- the database file of a long-running process ----------------------------------------

FileId = tuple[int, int]
_FILE_OF_CONNECTION = "pbm.database_file"
_SIDE_FILES = ("-wal", "-shm")


class DatabaseFile:
    """Keeps a long-running process (the daemon) on the SQLite file it started with.

    Once `arm`ed, the file at `path` is identified by device and inode, and held open so
    that its inode number cannot pass to another file. Before every transaction (a pool
    checkout) the file there is compared with the one the connection has open: a file
    deleted or replaced under the process is noticed before the next message is stored
    or processed, and the transaction fails with StoreUnavailable (so the listeners
    answer 451 and the message waits). The connection to the old file is closed before
    any other is opened; the old file's write-ahead log and shared-memory index, which
    SQLite leaves behind when its file was unlinked and would otherwise replay into
    whatever file takes the name, are set aside (`pbm.sqlite3-wal.orphan-INODE`) and
    removed; and new connections open with `mode=rw`, so SQLite never creates a fresh
    empty file in the database's place.

    When a file is back at `path` that is this same database (restored from a backup, or
    a copy: SQLite's `user_version` header field, set to a random number by `arm` and
    carried by every copy, says so) and it holds pbm's schema at the revision this pbm
    needs, the process resumes on it. Anything else (an empty file, another database, a
    fresh one that a first run of some command created in its place) is refused until
    that changes: the process does not quietly move to another database. Each incident
    is logged once at ERROR level (a replacement by a copy too, which is used from the
    next transaction on), and its end once at WARNING level.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._armed = False
        self._fd: int | None = None  # the accepted file, held open
        self._accepted: FileId | None = None
        self._sides: dict[str, FileId | None] = {}  # its -wal and -shm, as last opened
        self._incident: str | None = None
        self._database_id = 0  # the file's user_version (see arm)
        self._lock = threading.Lock()
        self._serve_fd: int | None = None  # see hold_for_serve

    @classmethod
    def of(cls, url: str) -> DatabaseFile | None:
        """The watch for `url`'s file; None for a database that is not a SQLite file."""
        path = sqlite_file(url)
        return None if path is None else cls(path.absolute())

    @property
    def incident(self) -> str | None:
        """What is wrong with the file right now (for status reports), or None."""
        return self._incident

    def attach(self, engine: Engine) -> None:
        event.listen(engine, "do_connect", self._before_connect)
        event.listen(engine, "connect", self._connected)
        event.listen(engine, "checkout", self._checkout)

    def arm(self, engine: Engine) -> None:
        """From now on, the file now at `path` is the database (call it once the schema
        is in place). Marks it with a random id in SQLite's `user_version` when it has
        none yet, so that a copy of it can be told from another database."""
        with engine.begin() as conn:
            found = int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)
            if not found:
                found = secrets.randbelow(2**31 - 1) + 1
                conn.exec_driver_sql(f"PRAGMA user_version = {found}")
        self._database_id = found
        with self._lock:
            self._hold()
            if self._accepted is None:
                raise StoreUnavailable(f"no database file at {self.path}")
            self._armed = True
        self._note_sides()

    def close(self) -> None:
        """Let go of the file (after the engine is disposed: closing a descriptor of a
        file drops the process's SQLite locks on it), and of the serve lock."""
        with self._lock:
            self._release()
            self._armed = False
        if self._serve_fd is not None:
            os.close(self._serve_fd)  # drops the flock
            self._serve_fd = None

    @property
    def serve_lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".serve-lock")

    def hold_for_serve(self) -> None:
        """Be the one daemon on this file, or raise StoreUnavailable naming the other.

        An OS lock on a file beside the database (not a row in it: a daemon killed
        with SIGKILL leaves a fresh row behind, but the kernel drops its lock), held
        until `close`; the file keeps the holder's pid for the message."""
        if self._serve_fd is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.serve_lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise StoreUnavailable(
                f"the database file {self.path} is in use by another pbm serve (pid "
                f"{holder}): SQLite takes one daemon per file; several daemons need "
                "PostgreSQL (docs/scale-out.md)",
                "busy",
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._serve_fd = fd

    def check(self) -> None:
        """Raise StoreUnavailable unless the file at `path` is the one in use (after a
        commit: the message went into the file that is still the database)."""
        if self._armed and self._identity(self.path) != self._accepted:
            self._refuse("missing" if self._identity(self.path) is None else "replaced")

    @staticmethod
    def _identity(path: Path) -> FileId | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def _hold(self) -> None:
        """Open and accept the file now at `path` (or nothing, when there is none)."""
        self._release()
        try:
            self._fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return
        st = os.fstat(self._fd)
        self._accepted = (st.st_dev, st.st_ino)

    def _release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
        self._fd = None
        self._accepted = None

    def _checkout(self, _dbapi_conn: Any, record: Any, _proxy: Any) -> None:
        if not self._armed:
            return
        found = self._identity(self.path)
        if found is not None and found == record.info.get(_FILE_OF_CONNECTION) == self._accepted:
            if self._incident is not None:
                self._resolved()
            return
        # This connection's file is gone or no longer at `path`: the pool closes it and
        # connects anew, through _before_connect, which decides about the file there now.
        raise sa_exc.DisconnectionError(f"database file {self.path} changed")

    def _before_connect(self, _dialect: Any, _record: Any, cargs: list[Any], cparams: Any) -> None:
        if not self._armed:
            return  # before the first start (`arm`): the file may be created
        found = self._identity(self.path)
        if found is None or found != self._accepted:
            with self._lock:
                if self._accepted is not None:
                    # The process's connection to the old file is closed by now.
                    self._set_aside_sides()
                    self._release()
            if found is None:
                self._refuse("missing")
            problem = _not_this_database(self.path, self._database_id)
            if problem is not None:
                self._refuse("replaced", problem)
            with self._lock:
                self._hold()
                was, self._incident = self._incident, None
            if was is None:  # replaced by a pbm database in one go (a restore with mv)
                log.error(kv("database_file_replaced", path=self.path, detail="used from now on"))
            else:
                log.warning(kv("database_file_adopted", path=self.path, incident=was))
        if cargs and not str(cargs[0]).startswith("file:"):
            # never create: a missing file fails to open instead of coming back empty
            cargs[0] = f"file:{quote(str(self.path))}?mode=rw"
            cparams["uri"] = True

    def _connected(self, _dbapi_conn: Any, record: Any) -> None:
        # After the pragmas (an earlier listener): WAL mode has opened both side files.
        record.info[_FILE_OF_CONNECTION] = self._identity(self.path)
        self._note_sides()

    def _note_sides(self) -> None:
        self._sides = {s: self._identity(self._side(s)) for s in _SIDE_FILES}

    def _side(self, suffix: str) -> Path:
        return self.path.with_name(self.path.name + suffix)

    def _set_aside_sides(self) -> None:
        """Move the old file's -wal and -shm out of the new file's way (only the very
        files the process had open: a new file may have come with its own)."""
        assert self._accepted is not None
        for suffix, known in self._sides.items():
            side = self._side(suffix)
            if known is None or self._identity(side) != known:
                continue
            try:
                if suffix == "-wal":  # the old file's last commits: kept for forensics
                    side.rename(side.with_name(f"{side.name}.orphan-{self._accepted[1]}"))
                else:  # an index SQLite rebuilds
                    side.unlink()
            except OSError as exc:
                log.error(kv("database_side_file_stuck", path=side, error=repr(exc)))
        self._sides = {}

    def _refuse(self, kind: str, detail: str = "") -> NoReturn:
        text = {
            "missing": f"the database file {self.path} is gone",
            "replaced": f"the database file {self.path} was replaced",
        }[kind]
        if detail:
            text += f" by {detail}"
        with self._lock:
            first = self._incident != kind
            self._incident = kind
        if first:
            fields = {"path": self.path, **({"detail": detail} if detail else {})}
            log.error(kv(f"database_file_{kind}", **fields))
        raise StoreUnavailable(text + "; mail waits until a pbm database is back")

    def _resolved(self) -> None:
        with self._lock:
            was, self._incident = self._incident, None
        if was is not None:
            log.warning(kv("database_file_back", path=self.path, incident=was))


def _not_this_database(path: Path, database_id: int) -> str | None:
    """Why the file at `path` is not the database `database_id` (a copy of it will do) at
    this pbm's schema, or None."""
    try:
        uri = f"file:{quote(str(path))}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)) as conn:
            found = int(conn.execute("PRAGMA user_version").fetchone()[0])
            rows = conn.execute("SELECT version_num FROM alembic_version").fetchall()
    except sqlite3.Error as exc:
        return f"a file that is not a pbm database ({exc})"
    if found != database_id:
        return "another database, not a copy of this one (restart pbm serve to use it)"
    have = frozenset(str(r[0]) for r in rows)
    if have != schema_heads():
        return f"a database at schema {', '.join(sorted(have)) or 'none'}"
    return None


def session_for(engine: Engine) -> Session:
    """A session whose objects stay readable after commit (services return them)."""
    return Session(engine, expire_on_commit=False)
