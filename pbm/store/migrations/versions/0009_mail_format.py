"""mail format: mail_preferences.format and outbox.html

`mail_preferences.format` is the reader's choice, "html" (a text part and an HTML part
with the drawn board, the default) or "text" (the text part alone). `outbox.html` is
the order for a queued mail's HTML part (JSON: the boards to draw), filled in when the
mail is sent (pbm.services.mailing.mail_html); NULL sends the text part alone.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 04:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("mail_preferences") as batch:
        batch.add_column(
            sa.Column("format", sa.String(length=8), nullable=False, server_default="html")
        )
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("html", sa.Text(), nullable=True))


def downgrade() -> None:
    # SQLite drops a column by copying the table (batch mode).
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("html")
    with op.batch_alter_table("mail_preferences") as batch:
        batch.drop_column("format")
