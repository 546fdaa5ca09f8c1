"""consent: confirmed addresses, their mailbox keys, refusals, messages from anyone

`user_addresses.mailbox` is the address's mailbox key (pbm.mail.identity), which
consent and budgets key on; `confirmed_at` says when its owner confirmed it and
`confirm_token` is the secret its confirmation request carries. `address_refusals`
holds each mailbox's "not me" to an account. `mail_preferences.messages_anyone` lets
players who share no board with him `message` a player.

Upgrading keeps players playing: an address from which pbm has taken in and run a
message (its strict From, of a message marked done) is counted as confirmed, since
pbm answered it and its owner kept writing; the count is logged.

Revision ID: 0013
Revises: 0011
Create Date: 2026-11-26 11:30:00
"""

from __future__ import annotations

import logging

import sqlalchemy as sa
from alembic import op

from pbm.mail.identity import mailbox_key
from pbm.mail.inbound import parse_message
from pbm.store.types import UTCDateTime

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

log = logging.getLogger("pbm.store.migrations")


def upgrade() -> None:
    with op.batch_alter_table("user_addresses") as batch:
        batch.add_column(
            sa.Column("mailbox", sa.String(length=255), nullable=False, server_default="")
        )
        batch.add_column(sa.Column("confirmed_at", UTCDateTime(), nullable=True))
        batch.add_column(sa.Column("confirm_token", sa.String(length=40), nullable=True))
        batch.create_index("ix_user_addresses_mailbox", ["mailbox"])
        batch.create_unique_constraint("uq_user_addresses_confirm_token", ["confirm_token"])
    op.create_table(
        "address_refusals",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("mailbox", sa.String(length=255), nullable=False),
        sa.Column("userid_key", sa.String(length=64), nullable=False),
        sa.Column("refused_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("mailbox", "userid_key"),
    )
    op.create_index("ix_address_refusals_mailbox", "address_refusals", ["mailbox"])
    with op.batch_alter_table("mail_preferences") as batch:
        batch.add_column(
            sa.Column("messages_anyone", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    _backfill()


def _backfill() -> None:
    """Every address gets its mailbox key; those pbm has run mail from count as confirmed."""
    conn = op.get_bind()
    addresses = sa.table(
        "user_addresses",
        sa.column("id", sa.Integer()),
        sa.column("address", sa.String()),
        sa.column("mailbox", sa.String()),
        sa.column("confirmed_at", UTCDateTime()),
    )
    inbound = sa.table(
        "inbound_messages",
        sa.column("raw", sa.LargeBinary()),
        sa.column("status", sa.String()),
        sa.column("processed_at", UTCDateTime()),
    )
    senders: dict[str, object] = {}
    done = sa.select(inbound.c.raw, inbound.c.processed_at).where(inbound.c.status == "done")
    for raw, at in conn.execute(done):
        sender = parse_message(bytes(raw)).sender
        if sender:
            senders.setdefault(sender.lower(), at)
    confirmed = 0
    rows = conn.execute(sa.select(addresses.c.id, addresses.c.address)).all()
    for row_id, address in rows:
        at = senders.get(address.lower())
        if at is not None:
            confirmed += 1
        conn.execute(
            addresses.update()
            .where(addresses.c.id == row_id)
            .values(mailbox=mailbox_key(address), confirmed_at=at)
        )
    if rows:  # an upgrade of a database with players; a new one has nothing to say
        log.warning(
            "consent: %d of %d addresses confirmed by the mail pbm ran from them",
            confirmed,
            len(rows),
        )


def downgrade() -> None:
    # SQLite drops a column by copying the table (batch mode).
    with op.batch_alter_table("mail_preferences") as batch:
        batch.drop_column("messages_anyone")
    op.drop_index("ix_address_refusals_mailbox", "address_refusals")
    op.drop_table("address_refusals")
    with op.batch_alter_table("user_addresses") as batch:
        batch.drop_constraint("uq_user_addresses_confirm_token", type_="unique")
        batch.drop_index("ix_user_addresses_mailbox")
        batch.drop_column("confirm_token")
        batch.drop_column("confirmed_at")
        batch.drop_column("mailbox")
