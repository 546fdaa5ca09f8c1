"""scale-out: the daemons table and claims on inbound messages and outbox mails

Several `pbm serve` processes may share one PostgreSQL database. Each records a
heartbeat in `daemons`; a daemon claims the stored messages it processes and the mails
it sends (`claimed_by`, `claimed_until`), so that no two daemons take the same work
and the work of a daemon that died is taken over once its lease has run out.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 12:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from pbm.store.types import UTCDateTime

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

_CLAIMED = ("inbound_messages", "outbox")


def upgrade() -> None:
    op.create_table(
        "daemons",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("host", sa.String(length=255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("last_seen", UTCDateTime(), nullable=False),
        sa.Column("stopped_at", UTCDateTime(), nullable=True),
        sa.Column("listen", sa.String(length=255), nullable=False),
        sa.Column("counters", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    for table in _CLAIMED:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("claimed_by", sa.Integer(), nullable=True))
            batch.add_column(sa.Column("claimed_until", UTCDateTime(), nullable=True))


def downgrade() -> None:
    for table in _CLAIMED:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("claimed_until")
            batch.drop_column("claimed_by")
    op.drop_table("daemons")
