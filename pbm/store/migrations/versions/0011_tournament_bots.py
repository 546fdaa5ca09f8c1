"""tournament bots: tournaments.bots

Whether computer players may enter a tournament (`pbm tournament create --bots`);
tournaments made before are closed to them, as a new one is unless it says otherwise.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tournaments") as batch:
        batch.add_column(sa.Column("bots", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    # SQLite drops a column by copying the table (batch mode).
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("bots")
