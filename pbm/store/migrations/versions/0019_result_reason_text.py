"""result reason as text: a board's result sentence of any length

`games.result_reason` held 200 characters, which PostgreSQL enforces. A sentence that
names players grows when one of them is renamed (`pbm user rename`) or erased (his
pseudonym), so the rename left a sentence the new userid made longer than that under
the old userid. It is text now, as the board's comment is.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-27 17:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.alter_column(
            "result_reason",
            existing_type=sa.String(length=200),
            type_=sa.Text(),
            existing_nullable=True,
        )


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.alter_column(
            "result_reason",
            existing_type=sa.Text(),
            type_=sa.String(length=200),
            existing_nullable=True,
        )
