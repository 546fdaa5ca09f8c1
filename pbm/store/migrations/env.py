"""Alembic environment: runs migrations on the engine pbm hands over (pbm db upgrade)."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

from pbm.config import load_config
from pbm.store import models  # noqa: F401  (the tables the migrations describe)
from pbm.store.engine import make_engine

target_metadata = SQLModel.metadata


def run_migrations_online() -> None:
    engine = context.config.attributes.get("engine")
    if engine is None:
        config = load_config()
        engine = make_engine(config.database_url, busy_timeout=config.busy_timeout_seconds)
    with engine.connect() as connection:
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
