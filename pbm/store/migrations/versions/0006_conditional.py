"""conditional moves: game_players.conditional, a player's tree of conditional moves

Each player keeps at most one tree of conditional moves per board (issue 15), as JSON
text; a board without any keeps NULL.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("game_players") as batch:
        batch.add_column(sa.Column("conditional", sa.Text(), nullable=True))


def downgrade() -> None:
    # SQLite drops a column by copying the table (batch mode).
    with op.batch_alter_table("game_players") as batch:
        batch.drop_column("conditional")
