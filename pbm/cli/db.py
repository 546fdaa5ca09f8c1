"""`pbm db init|upgrade|backup|current`: the database schema, upgraded in place."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from pbm.cli.common import ConfigOption, config, engine, fail, remember_config
from pbm.store.db import current_revision, init_db

db_app = typer.Typer(help="Create, upgrade and back up the database.", no_args_is_help=True)


@db_app.callback()
def _options(config_file: ConfigOption = None) -> None:
    remember_config(config_file)


@db_app.command("init")
def init() -> None:
    """Create the database (or bring an existing one up to date)."""
    upgrade()


@db_app.command("upgrade")
def upgrade() -> None:
    """Apply every schema migration not yet applied."""
    cfg = config()
    eng = engine(cfg, schema=False)
    try:
        before = current_revision(eng)
        init_db(eng)
        after = current_revision(eng)
    finally:
        eng.dispose()
    typer.echo(f"database {cfg.database_url}: schema {before or 'none'} -> {after}")


@db_app.command("current")
def current() -> None:
    """Print the schema revision of the database."""
    eng = engine(schema=False)
    typer.echo(current_revision(eng) or "none")
    eng.dispose()


@db_app.command("backup")
def backup(
    target: Annotated[Path | None, typer.Argument(help="Backup file (default: data dir).")] = None,
) -> None:
    """Copy a SQLite database consistently (online backup); PostgreSQL: use pg_dump."""
    cfg = config()
    if not cfg.database_url.startswith("sqlite:///"):
        fail("backup copies SQLite databases; use pg_dump for PostgreSQL")
    import sqlite3

    source = Path(cfg.database_url.removeprefix("sqlite:///"))
    if not source.exists():
        fail(f"no database at {source}")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    target = target or cfg.data_dir / f"pbm-backup-{stamp}.sqlite3"
    target.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    typer.echo(f"backed up {source} to {target}")
