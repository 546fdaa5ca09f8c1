"""`pbm db init|upgrade|backup|current`: the database schema, upgraded in place."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from pbm.cli.common import config, engine, fail
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
    dst = _new_database(target)
    try:
        with closing(sqlite3.connect(source)) as src:
            src.backup(dst)
    finally:
        dst.close()
    typer.echo(f"backed up {source} to {target}")


def _new_database(target: Path) -> sqlite3.Connection:
    """A connection that creates `target`; a place it cannot be made ends the command."""
    if target.parent.exists() and not target.parent.is_dir():
        fail(f"cannot write the backup {target}: {target.parent} is not a directory")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        return sqlite3.connect(target)
    except (OSError, sqlite3.Error) as exc:
        problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        fail(f"cannot write the backup {target}: {problem}")
