"""The watch a long-running process keeps on its SQLite file, so that it never writes
into a file that replaced its database, and the lock that makes it the one daemon on
that file."""

from __future__ import annotations

import fcntl
import logging
import os
import secrets
import sqlite3
import threading
from contextlib import closing
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote

from sqlalchemy import event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine

from pbm.errors import StoreUnavailable
from pbm.logfmt import kv
from pbm.store.engine import BUSY_TIMEOUT_SECONDS, sqlite_file
from pbm.store.failures import file_failure
from pbm.store.schema import schema_heads

log = logging.getLogger(__name__)

FileId = tuple[int, int]
_FILE_OF_CONNECTION = "pbm.database_file"
_SIDE_FILES = ("-wal", "-shm")


def open_lock_file(path: Path, live: Path, flags: int) -> int:
    """A lock file beside the database `live`, made (mode 0600) by whoever comes first;
    made by root (`pbm db restore` run as root), it is given the database's owner, who
    runs the daemon and the pipe and must open it after."""
    fd = os.open(path, flags | os.O_CREAT, 0o600)
    if os.geteuid() == 0:
        owner = os.stat(live if live.exists() else live.parent)
        if os.fstat(fd).st_uid != owner.st_uid:
            os.fchown(fd, owner.st_uid, owner.st_gid)
    return fd


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
        self._busy_timeout = BUSY_TIMEOUT_SECONDS  # the engine's (see attach)

    @classmethod
    def of(cls, url: str) -> DatabaseFile | None:
        """The watch for `url`'s file; None for a database that is not a SQLite file."""
        path = sqlite_file(url)
        return None if path is None else cls(path.absolute())

    @property
    def incident(self) -> str | None:
        """What is wrong with the file right now (for status reports), or None."""
        return self._incident

    def attach(self, engine: Engine, busy_timeout: float = BUSY_TIMEOUT_SECONDS) -> None:
        self._busy_timeout = busy_timeout
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
        with file_failure():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = open_lock_file(self.serve_lock_path, self.path, os.O_RDWR)
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
            problem = _not_this_database(self.path, self._database_id, self._busy_timeout)
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


def _not_this_database(path: Path, database_id: int, busy_timeout: float) -> str | None:
    """Why the file at `path` is not the database `database_id` (a copy of it will do) at
    this pbm's schema, or None."""
    try:
        uri = f"file:{quote(str(path))}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=busy_timeout)) as conn:
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
