"""drop game_players.queued_resign: no code ever set or read it

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 23:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # SQLite drops a column by copying the table (batch mode).
    with op.batch_alter_table("game_players") as batch:
        batch.drop_column("queued_resign")


def downgrade() -> None:
    with op.batch_alter_table("game_players") as batch:
        batch.add_column(
            sa.Column("queued_resign", sa.Boolean(), nullable=False, server_default=sa.false())
        )
