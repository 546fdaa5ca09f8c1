"""web: a player may hide his page

`mail_preferences.profile_hidden`: `set USERID PASSWORD profile hidden` keeps his player
page, feeds and calendar off the web pages (docs/web.md).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26 14:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("mail_preferences") as batch:
        batch.add_column(
            sa.Column("profile_hidden", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("mail_preferences") as batch:
        batch.drop_column("profile_hidden")
