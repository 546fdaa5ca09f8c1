"""Alembic environment: runs migrations on the engine pbm hands over (pbm db upgrade)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from alembic import context
from sqlalchemy.engine import Connection
from sqlmodel import SQLModel

from pbm.config import load_config
from pbm.store import models  # noqa: F401  (the tables the migrations describe)
from pbm.store.engine import make_engine

target_metadata = SQLModel.metadata


@contextmanager
def _foreign_keys_off(connection: Connection) -> Iterator[None]:
    """SQLite alters a table by copying it and dropping the old one (batch mode), and
    with foreign keys enforced, as pbm's connections have them, dropping `users` or
    `games` while other rows point at them fails: a database with players in it could
    not be upgraded. SQLite's own recipe: enforcement off for the migration (outside any
    transaction, where the pragma counts), the references checked after it, and on
    again before the connection goes back to the pool."""
    if connection.dialect.name != "sqlite":
        yield
        return
    driver: Any = connection.connection.driver_connection
    driver.execute("PRAGMA foreign_keys=OFF")
    try:
        yield
        broken = driver.execute("PRAGMA foreign_key_check").fetchall()
        if broken:
            table, rowid, parent, _ = broken[0]
            raise RuntimeError(
                f"the upgrade left {len(broken)} broken reference(s), the first "
                f"{table} row {rowid} to {parent}"
            )
    finally:
        driver.execute("PRAGMA foreign_keys=ON")


def run_migrations_online() -> None:
    engine = context.config.attributes.get("engine")
    if engine is None:
        config = load_config()
        engine = make_engine(config.database_url, busy_timeout=config.busy_timeout_seconds)
    with engine.connect() as connection, _foreign_keys_off(connection):
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=True,  # SQLite can only ALTER through table copies
            compare_type=True,
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()


run_migrations_online()
