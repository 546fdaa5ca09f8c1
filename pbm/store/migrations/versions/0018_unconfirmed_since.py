"""unconfirmed since: when each address began to wait for its owner's confirmation

`user_addresses.unconfirmed_since` is set when an address is added and again when a
confirmation request goes to it; an account with no confirmed address is removed
`[consent] unconfirmed_days` after the latest of these. Before this revision the
days counted from the account's creation, so upgrading a database from before consent
(0013) removed, at the first run of the jobs, every older account whose address had
never been asked: nobody had told its owner anything. Such an address keeps NULL here
(never asked; kept until its owner writes or the operator confirms it), and one that
was asked keeps the account's creation time, as before.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27 13:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from pbm.store.types import UTCDateTime

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("user_addresses") as batch:
        batch.add_column(sa.Column("unconfirmed_since", UTCDateTime(), nullable=True))
    # An address asked since consent (it holds a request's token) or confirmed counts
    # from its account's creation, as the jobs counted until now.
    op.execute(
        "UPDATE user_addresses SET unconfirmed_since = (SELECT users.created_at FROM users"
        " WHERE users.id = user_addresses.user_id)"
        " WHERE confirm_token IS NOT NULL OR confirmed_at IS NOT NULL"
    )


def downgrade() -> None:
    with op.batch_alter_table("user_addresses") as batch:
        batch.drop_column("unconfirmed_since")
