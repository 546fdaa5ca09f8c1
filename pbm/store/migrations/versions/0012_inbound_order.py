"""inbound order: inbound_keys

What each stored message is about (its sender's mailbox, the boards its command lines
name), so that mail for one player or one board is processed in the order it was
accepted, whichever daemon holds it. Messages stored before have no keys and wait for
nothing.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26 11:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "inbound_keys",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("inbound_id", sa.Integer(), sa.ForeignKey("inbound_messages.id"), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
    )
    op.create_index("ix_inbound_keys_inbound_id", "inbound_keys", ["inbound_id"])
    op.create_index("ix_inbound_keys_key_inbound", "inbound_keys", ["key", "inbound_id"])


def downgrade() -> None:
    op.drop_index("ix_inbound_keys_key_inbound", table_name="inbound_keys")
    op.drop_index("ix_inbound_keys_inbound_id", table_name="inbound_keys")
    op.drop_table("inbound_keys")
