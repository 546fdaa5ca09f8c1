"""safety: retry bookkeeping for inbound messages, outbox Message-IDs indexed

Inbound messages whose processing failed for a temporary reason (the store locked, a
full disk) go back to `new` with a count of attempts and the time of the next one.
Reply tokens in In-Reply-To/References count only inside a Message-ID pbm issued, which
is looked up in the outbox by its Message-ID.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 22:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import pbm.store.types

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("inbound_messages") as batch:
        batch.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(sa.Column("next_attempt_at", pbm.store.types.UTCDateTime(), nullable=True))
    op.create_index("ix_outbox_message_id", "outbox", ["message_id"])


def downgrade() -> None:
    op.drop_index("ix_outbox_message_id", table_name="outbox")
    with op.batch_alter_table("inbound_messages") as batch:
        batch.drop_column("next_attempt_at")
        batch.drop_column("attempts")
