"""bounces: outbox reason and VERP code, mailbox health, bounce events, mail streams

Each outgoing mail records why it was sent and the secret of its VERP envelope sender;
bounces and complaints are counted per mailbox; readers' notification streams carry
stop addresses (docs/bounces.md).

Revision ID: 0014
Revises: 0011
Create Date: 2026-11-26 11:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from pbm.store.types import UTCDateTime

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def _enum(*values: str) -> sa.Enum:
    return sa.Enum(*values, native_enum=False, create_constraint=False, length=16)


REASONS = (
    "your-move",
    "opponent-moved",
    "reminder",
    "tournament",
    "answer",
    "confirmation",
    "digest",
    "message",
)


def upgrade() -> None:
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("reason", _enum(*REASONS), nullable=True))
        batch.add_column(sa.Column("verp", sa.String(length=32), nullable=True))
    op.create_table(
        "mailbox_health",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("mailbox", sa.String(length=255), nullable=False, unique=True),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("last_bounce_at", UTCDateTime(), nullable=True),
        sa.Column("disabled_at", UTCDateTime(), nullable=True),
        sa.Column("complained_at", UTCDateTime(), nullable=True),
    )
    op.create_table(
        "bounce_events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("mailbox", sa.String(length=255), nullable=False),
        sa.Column("kind", _enum("hard", "soft", "complaint"), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("outbox_id", sa.Integer(), sa.ForeignKey("outbox.id"), nullable=True),
        sa.Column("counted", sa.Boolean(), nullable=False),
    )
    op.create_index("ix_bounce_events_at", "bounce_events", ["at"])
    op.create_index("ix_bounce_events_mailbox", "bounce_events", ["mailbox"])
    op.create_table(
        "mail_streams",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False),
        sa.Column(
            "stream",
            _enum("boards", "reminders", "tournaments", "digest", "messages"),
            nullable=False,
        ),
        sa.Column("code", sa.String(length=32), nullable=False, unique=True),
        sa.Column("stopped_at", UTCDateTime(), nullable=True),
        sa.UniqueConstraint("user_id", "stream"),
    )
    op.create_index("ix_mail_streams_user_id", "mail_streams", ["user_id"])


def downgrade() -> None:
    op.drop_table("mail_streams")
    op.drop_table("bounce_events")
    op.drop_table("mailbox_health")
    with op.batch_alter_table("outbox") as batch:
        batch.drop_column("verp")
        batch.drop_column("reason")
