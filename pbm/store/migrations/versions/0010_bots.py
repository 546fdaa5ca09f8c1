"""bots: users.bot and the bots table

A bot is a `users` row flagged `bot` (no address, no usable password) with one `bots`
row: the games it plays, its level, its engine (built-in or an outside program's
command line), its limit of active boards, whether it is disabled, and the record of
its outside engine's failures (`pbm bot show`).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

from pbm.store.types import UTCDateTime

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.add_column(sa.Column("bot", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("games", sqlmodel.sql.sqltypes.AutoString(length=255), nullable=False),
        sa.Column("level", sa.Integer(), nullable=False),
        sa.Column("engine", sa.Text(), nullable=False),
        sa.Column("max_games", sa.Integer(), nullable=True),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("fallbacks", sa.Integer(), nullable=False),
        sa.Column("last_failure", sa.Text(), nullable=True),
        sa.Column("last_failure_at", UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("user_id"),
    )


def downgrade() -> None:
    op.drop_table("bots")
    # SQLite drops a column by copying the table (batch mode).
    with op.batch_alter_table("users") as batch:
        batch.drop_column("bot")
