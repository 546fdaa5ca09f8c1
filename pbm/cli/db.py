"""`pbm db init|upgrade|backup|current|copy`: the database schema, upgraded in place, and
an installation moved to another database."""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from pbm.cli.common import (
    EXIT_CONFIG,
    EXIT_TEMPFAIL,
    EXIT_UNAVAILABLE,
    EXIT_USAGE,
    config,
    engine,
    fail,
)
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
    _mark_made(cfg.database_url)
    # not the URL itself: it holds the PostgreSQL password
    typer.echo(f"database {shown_url(cfg.database_url)}: schema {before or 'none'} -> {after}")


def _mark_made(url: str) -> None:
    """A SQLite file this command made (or upgraded) carries pbm's creation marker, so a
    later command knows a missing file is gone, not never made (docs/security.md)."""
    path = sqlite_file(url)
    if path is not None:
        mark_created(path)


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


def copy_command(
    cli: typer.Context,
    source_url: Annotated[
        str,
        typer.Argument(
            metavar="SOURCE_URL",
            help="The database to copy from, e.g. sqlite:////var/lib/pbm/var/pbm.sqlite3.",
        ),
    ],
) -> None:
    """Copy every table of SOURCE_URL into the configured database, which must be empty
    (move from SQLite to PostgreSQL)."""
    from pbm.config import ConfigError
    from pbm.store.copy import (
        NOT_COPIED,
        CopyRefused,
        check_source,
        copy_database,
        same_database,
    )
    from pbm.store.engine import make_engine

    cfg = config(cli)
    shown = shown_url(source_url)
    if shown == "(not an URL)":
        fail(
            "SOURCE_URL is not a database URL: write sqlite:///PATH or "
            "postgresql+psycopg://USER:PASSWORD@HOST/DATABASE",
            EXIT_USAGE,
        )
    if same_database(source_url, cfg.database_url):
        fail(
            f"{shown} is the configured database itself: a copy goes to another one "
            "([store] database_url)",
            EXIT_USAGE,
        )
    path = sqlite_file(source_url)
    if path is not None and not path.is_file():
        fail(f"the source database file {path} does not exist", EXIT_UNAVAILABLE)
    try:
        source = make_engine(source_url, create=False, busy_timeout=cfg.busy_timeout_seconds)
    except ConfigError as exc:
        fail(f"SOURCE_URL {shown}: {str(exc).partition(': ')[2]}", EXIT_USAGE)
    try:
        check_source(source)
        target = engine(cfg, schema=False, create=True)
        try:
            init_db(target)  # as `pbm db init`: the copy goes into the newest schema
            started = time.monotonic()
            copied = copy_database(source, target)
            seconds = time.monotonic() - started
        finally:
            target.dispose()
    except CopyRefused as exc:
        fail(str(exc), EXIT_CONFIG)
    finally:
        source.dispose()
    _mark_made(cfg.database_url)
    typer.echo(f"copied {shown} to {shown_url(cfg.database_url)}:")
    width = max(len(c.table) for c in copied)
    for one in sorted(copied, key=lambda c: c.table):
        typer.echo(f"  {one.table:<{width}}  {one.rows:>8}")
    total = sum(c.rows for c in copied)
    typer.echo(f"  {'total':<{width}}  {total:>8} rows in {seconds:.1f} s")
    typer.echo(f"not copied: {', '.join(sorted(NOT_COPIED))} (the source's running daemons)")
