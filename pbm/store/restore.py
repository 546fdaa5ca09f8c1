"""Putting a SQLite backup back in the database's place (`pbm db restore`): the backup is
copied beside the database and checked there (SQLite's integrity check, pbm's schema,
upgraded when older), the database is set aside under a new name with its write-ahead
log, and the checked copy takes its name in one rename. The backup itself is only read."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import text

from pbm.store.engine import make_engine
from pbm.store.schema import current_revision, init_db, stored_heads

SIDE_FILES = ("-wal", "-shm")  # SQLite's, beside a database file of the same name


class RestoreRefused(Exception):
    """A backup that must not take the database's place: the sentence says why."""


@dataclass(frozen=True)
class Staged:
    """A checked copy of the backup beside the database, ready to take its place."""

    path: Path
    schema_before: str  # the backup's schema revision
    schema: str  # the copy's, upgraded when the backup's was older
    users: int
    boards: int


def staging_path(live: Path) -> Path:
    return live.with_name(live.name + ".restore-part")


def stage(backup: Path, live: Path, busy_timeout: float) -> Staged:
    """Copy `backup` beside `live` and check the copy (RestoreRefused, the copy removed,
    when it is no pbm database or a damaged one); its schema is upgraded to this pbm's."""
    part = staging_path(live)
    remove_with_sides(part)
    try:
        _copy(backup, part)
        _check_integrity(part)
        return _upgraded(part, busy_timeout)
    except BaseException:
        remove_with_sides(part)
        raise


def _copy(backup: Path, part: Path) -> None:
    """SQLite's online backup from `backup`, opened read-only (nothing is written
    into it, not even a write-ahead log replayed) into a new file of mode 0600."""
    os.close(os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    source_uri = f"{backup.absolute().as_uri()}?mode=ro"
    try:
        with (
            closing(sqlite3.connect(source_uri, uri=True)) as src,
            closing(sqlite3.connect(part)) as dst,
        ):
            src.backup(dst)
    except sqlite3.DatabaseError as exc:
        raise RestoreRefused(f"{backup} cannot be read as a SQLite database ({exc})") from exc


def _check_integrity(part: Path) -> None:
    try:
        with closing(sqlite3.connect(part)) as conn:
            problems = [str(row[0]) for row in conn.execute("PRAGMA integrity_check")]
    except sqlite3.DatabaseError as exc:
        problems = [str(exc)]
    if problems != ["ok"]:
        raise RestoreRefused(f"the backup is damaged: SQLite's integrity check says {problems[0]}")


def _upgraded(part: Path, busy_timeout: float) -> Staged:
    engine = make_engine(f"sqlite:///{part}", create=False, busy_timeout=busy_timeout)
    try:
        if not stored_heads(engine):
            raise RestoreRefused("the backup holds no pbm schema: it is no pbm database")
        before = current_revision(engine) or "none"
        init_db(engine)  # refuses a schema newer than this pbm's (SchemaNotReady)
        with engine.connect() as conn:
            users = conn.execute(text("SELECT count(*) FROM users")).scalar_one()
            boards = conn.execute(text("SELECT count(*) FROM games")).scalar_one()
        staged = Staged(part, before, current_revision(engine) or "none", users, boards)
    finally:
        engine.dispose()
    with closing(sqlite3.connect(part)) as conn:
        # all in the file itself (its log emptied into it): only the file is moved
        conn.execute("PRAGMA journal_mode=DELETE")
    return staged


def set_aside(live: Path, stamp: str) -> Path | None:
    """Rename the database `live` with its write-ahead log and shared index to
    `live.before-restore-STAMP` (and its -wal, -shm): kept whole, and SQLite opens the
    three together; None when there is no database there."""
    if not live.exists():
        return None
    kept = live.with_name(f"{live.name}.before-restore-{stamp}")
    for side in SIDE_FILES:
        if Path(f"{live}{side}").exists():
            os.rename(f"{live}{side}", f"{kept}{side}")
    os.rename(live, kept)
    return kept


def take_mode_of(staged: Staged, live: Path) -> None:
    """Give the checked copy the mode (and, for root, the owner) of the database `live`
    it replaces, if there is one: the daemon's user must own it."""
    if live.exists():
        st = live.stat()
        os.chmod(staged.path, st.st_mode & 0o777)
        if os.geteuid() == 0:
            os.chown(staged.path, st.st_uid, st.st_gid)


def put_in_place(staged: Staged, live: Path) -> None:
    """Give the checked copy the database's name (set aside first)."""
    os.rename(staged.path, live)


def remove_with_sides(path: Path) -> None:
    for name in (str(path), *(f"{path}{side}" for side in SIDE_FILES)):
        Path(name).unlink(missing_ok=True)
