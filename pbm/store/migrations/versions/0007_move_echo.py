"""move echo: moves.echo

`moves.echo` keeps what the rules said when the move was played ("converts c5",
"x d5"), so board mails, `show` and game records print it without a replay; moves
played before this revision keep NULL (pbm.services.play.echoes replays them).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("moves") as batch:
        batch.add_column(sa.Column("echo", sa.String(length=200), nullable=True))


def downgrade() -> None:
    # SQLite drops a column by copying the table (batch mode).
    with op.batch_alter_table("moves") as batch:
        batch.drop_column("echo")
