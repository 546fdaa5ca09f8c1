"""What counts as a failure of the store: the message waits and is tried again, never
bounced nor marked failed. Decided by the database drivers' own exceptions (SQLite's
result codes, PostgreSQL's SQLSTATEs, SQLAlchemy's pool and connection errors), never
by the Python type alone: an OSError from anywhere else (a missing template, a full mail
spool) is a bug, kept with its traceback. The store's own OSErrors on the database's
files are raised as StoreUnavailable where they happen (see `file_failure`)."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum

from sqlalchemy import exc as sa_exc

from pbm.errors import StoreUnavailable


class Failure(StrEnum):
    """What `classify` makes of an exception. Every kind but BUG is temporary for mail:
    the message waits and is tried again. The values are StoreUnavailable's kinds."""

    BUSY = "busy"  # locked, a conflict with another transaction
    FULL = "full"  # disk or quota
    IO = "io"  # I/O, memory
    PERMISSION = "permission"
    UNAVAILABLE = "unavailable"  # missing, unreachable, not a database
    SCHEMA = "schema"  # tables missing or old
    BUG = "bug"  # not the store's trouble: the code's

    @property
    def temporary(self) -> bool:
        return self is not Failure.BUG


# SQLite's primary result codes that mean the store, not the code, is in trouble.
_SQLITE_KINDS = {
    3: Failure.PERMISSION,  # SQLITE_PERM
    5: Failure.BUSY,  # SQLITE_BUSY
    6: Failure.BUSY,  # SQLITE_LOCKED
    7: Failure.IO,  # SQLITE_NOMEM
    8: Failure.PERMISSION,  # SQLITE_READONLY: a read-only file or file system
    10: Failure.IO,  # SQLITE_IOERR
    11: Failure.UNAVAILABLE,  # SQLITE_CORRUPT: restore from a backup
    13: Failure.FULL,  # SQLITE_FULL: the disk (or max_page_count)
    14: Failure.UNAVAILABLE,  # SQLITE_CANTOPEN
    15: Failure.BUSY,  # SQLITE_PROTOCOL
    17: Failure.BUSY,  # SQLITE_SCHEMA: changed under the statement
    23: Failure.PERMISSION,  # SQLITE_AUTH
    26: Failure.UNAVAILABLE,  # SQLITE_NOTADB: not a database file
}
# PostgreSQL SQLSTATEs (exact, then by class) with the same meaning.
_SQLSTATE_KINDS = {
    "42P01": Failure.SCHEMA,  # undefined_table
    "42703": Failure.SCHEMA,  # undefined_column
    "42501": Failure.PERMISSION,  # insufficient_privilege
    "25006": Failure.PERMISSION,  # read_only_sql_transaction (a standby)
    "55P03": Failure.BUSY,  # lock_not_available
    "53100": Failure.FULL,  # disk_full
    "3D000": Failure.UNAVAILABLE,  # invalid_catalog_name: no such database
}
_SQLSTATE_CLASS_KINDS = {
    "08": Failure.UNAVAILABLE,  # connection exception
    "28": Failure.PERMISSION,  # invalid authorization
    "40": Failure.BUSY,  # serialization failure 40001, deadlock 40P01: try again
    "53": Failure.BUSY,  # insufficient resources
    "57": Failure.UNAVAILABLE,  # operator intervention: shutting down, starting up
    "58": Failure.IO,  # system error
}
# The errno of an OSError on one of the database's own files (see `file_failure`).
_OS_KINDS = {
    errno.ENOSPC: Failure.FULL,
    errno.EDQUOT: Failure.FULL,
    errno.EACCES: Failure.PERMISSION,
    errno.EPERM: Failure.PERMISSION,
    errno.EROFS: Failure.PERMISSION,
    errno.ENOENT: Failure.UNAVAILABLE,
    errno.ENOTDIR: Failure.UNAVAILABLE,
}


def classify(exc: BaseException) -> Failure:
    """What kind of store failure `exc` is, or Failure.BUG when it is none.

    An exception raised `from` a store failure counts as one. A unique key broken is a
    bug here; between two daemons on PostgreSQL it is a conflict (pbm.store.claims)."""
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 5:
        kind = _kind_of(current)
        if kind is not None:
            return kind
        current = current.__cause__
        seen += 1
    return Failure.BUG


def _kind_of(exc: BaseException) -> Failure | None:
    if isinstance(exc, StoreUnavailable):  # the store's trouble, whatever its kind says
        known = exc.kind in Failure.__members__.values() and exc.kind != Failure.BUG
        return Failure(exc.kind) if known else Failure.UNAVAILABLE
    if isinstance(exc, sa_exc.TimeoutError):  # no pooled connection came free in time
        return Failure.BUSY
    if isinstance(exc, sa_exc.DBAPIError):
        if exc.connection_invalidated:
            return Failure.UNAVAILABLE
        orig = exc.orig
        if isinstance(orig, sqlite3.Error):
            return _sqlite_kind(orig)
        state = getattr(orig, "sqlstate", None)
        if isinstance(state, str) and state:
            kind = _SQLSTATE_KINDS.get(state) or _SQLSTATE_CLASS_KINDS.get(state[:2])
            if kind is not None:
                return kind
        # a driver's connection failures carry no SQLSTATE
        return Failure.UNAVAILABLE if isinstance(exc, sa_exc.OperationalError) else None
    if isinstance(exc, sqlite3.Error):
        return _sqlite_kind(exc)
    return None


def _sqlite_kind(exc: sqlite3.Error) -> Failure | None:
    # Not "any OperationalError": SQLite reports a syntax error (a bug) as one too.
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in _SQLITE_KINDS:
        return _SQLITE_KINDS[code & 0xFF]
    if str(exc).startswith(("no such table", "no such column")):
        return Failure.SCHEMA
    return None


@contextmanager
def file_failure() -> Iterator[None]:
    """Raise an OSError of the block as StoreUnavailable (its kind from the errno, I/O
    for any other): only around the store's own work on the database's files (its
    directory, the serve lock, the creation marker), which is why it is a store failure
    there and a bug anywhere else."""
    try:
        yield
    except OSError as exc:
        kind = _OS_KINDS.get(exc.errno or 0, Failure.IO)
        raise StoreUnavailable(describe_failure(exc), kind) from exc


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
    kind = classify(exc)
    return StoreUnavailable(describe_failure(exc), kind if kind.temporary else Failure.UNAVAILABLE)


@contextmanager
def unavailable_on_failure() -> Iterator[None]:
    """Let a store failure out as StoreUnavailable; anything else passes unchanged."""
    try:
        yield
    except StoreUnavailable:
        raise
    except Exception as exc:
        if not classify(exc).temporary:
            raise
        raise as_unavailable(exc) from exc
