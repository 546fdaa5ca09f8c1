"""matches: games linked into a match (match_id, match_game)

Revision ID: 0001a
Revises: 0001
Create Date: 2026-11-22 05:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001a"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("match_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("match_game", sa.Integer(), nullable=True))
        batch.create_index("ix_games_match_id", ["match_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_index("ix_games_match_id")
        batch.drop_column("match_game")
        batch.drop_column("match_id")
