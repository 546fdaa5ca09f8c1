"""`pbm db init|upgrade|backup|current`: the database schema, upgraded in place."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from pbm.cli.common import EXIT_TEMPFAIL, config, engine, fail
from pbm.store.engine import mark_created, shown_url, sqlite_file
from pbm.store.schema import current_revision, init_db


def init(cli: typer.Context) -> None:
    """Create the database (or bring an existing one up to date)."""
    _migrate(cli, create=True)


def upgrade(cli: typer.Context) -> None:
    """Apply every schema migration not yet applied."""
    _migrate(cli, create=False)


def _migrate(cli: typer.Context, *, create: bool) -> None:
    cfg = config(cli)
    eng = engine(cfg, schema=False, create=create)
    try:
        before = current_revision(eng)
        init_db(eng)
        after = current_revision(eng)
    finally:
        eng.dispose()
    path = sqlite_file(cfg.database_url)
    if path is not None:
        mark_created(path)
    # not the URL itself: it holds the PostgreSQL password
    typer.echo(f"database {shown_url(cfg.database_url)}: schema {before or 'none'} -> {after}")


def current(cli: typer.Context) -> None:
    """Print the schema revision of the database."""
    eng = engine(config(cli), schema=False)
    try:
        typer.echo(current_revision(eng) or "none")
    finally:
        eng.dispose()


def backup(
    cli: typer.Context,
    target: Annotated[
        Path | None,
        typer.Argument(
            metavar="FILE",
            help="A new backup file (default: pbm-backup-DATE-TIME.sqlite3 in the data dir).",
        ),
    ] = None,
) -> None:
    """Copy a SQLite database consistently (online backup); PostgreSQL: use pg_dump."""
    cfg = config(cli)
    if not cfg.database_url.startswith("sqlite:///"):
        fail("backup copies SQLite databases; use pg_dump for PostgreSQL")
    source = Path(cfg.database_url.removeprefix("sqlite:///"))
    if not source.exists():
        fail(f"no database at {source}")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    target = target or cfg.data_dir / f"pbm-backup-{stamp}.sqlite3"
    # Never over a file: that could be the live database itself, or an older backup.
    if target.exists() or target.is_symlink():
        fail(f"{target} exists already: name a new file (a backup never overwrites one)")
    # Written under a name of its own and linked to `target` once whole: a backup that
    # failed (a full disk) or was stopped left a part at `target` that looked like a
    # backup, and a second try was refused because it existed.
    part = target.with_name(target.name + ".part")
    dst = _new_database(part, target)
    try:
        with closing(sqlite3.connect(source)) as src:
            src.backup(dst)
        dst.close()
        _take_name(part, target)
    except BaseException as exc:
        dst.close()
        part.unlink(missing_ok=True)
        if isinstance(exc, sqlite3.Error) and exc.sqlite_errorcode & 0xFF == sqlite3.SQLITE_FULL:
            # the copy is the only side written: it was not the database that was full
            fail(f"cannot write the backup {target}: the disk is full", EXIT_TEMPFAIL)
        if isinstance(exc, FileExistsError):
            fail(f"{target} exists already: name a new file (a backup never overwrites one)")
        raise
    part.unlink(missing_ok=True)
    typer.echo(f"backed up {source} to {target}")


def _take_name(part: Path, target: Path) -> None:
    """Give the whole copy `part` the name `target`, never over a file that appeared
    there meanwhile: a hard link where the file system has them, else a rename after a
    last look (a FAT or SMB mount has no links)."""
    try:
        os.link(part, target)
    except FileExistsError:
        raise
    except OSError:
        if target.exists():
            raise FileExistsError(target) from None
        os.rename(part, target)


def _new_database(path: Path, target: Path) -> sqlite3.Connection:
    """A connection that creates `path`, the part of the backup `target` (which the
    errors name); a place it cannot be made ends the command."""
    if target.parent.exists() and not target.parent.is_dir():
        fail(f"cannot write the backup {target}: {target.parent} is not a directory")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # Readable by pbm's user only, as the DKIM key: a backup holds every player's
        # mail, addresses and password hashes, and may be written far from the data
        # directory. SQLite makes its side files with the mode of the file.
        path.unlink(missing_ok=True)  # a part a killed backup left
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        return sqlite3.connect(path)
    except (OSError, sqlite3.Error) as exc:
        problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        fail(f"cannot write the backup {target}: {problem}")
