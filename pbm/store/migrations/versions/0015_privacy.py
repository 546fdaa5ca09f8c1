"""privacy: erasure requests by mail and the queued parts of large exports

`erase USERID PASSWORD` is confirmed by a token and carried out days later; an export
past its bound is mailed in parts a day apart (docs/privacy.md, docs/records.md).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 14:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from pbm.store.types import UTCDateTime

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "erasure_requests",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False, unique=True),
        sa.Column("token", sa.String(length=32), nullable=False),
        sa.Column("asked_at", UTCDateTime(), nullable=False),
        sa.Column("confirmed_at", UTCDateTime(), nullable=True),
        sa.Column("due_at", UTCDateTime(), nullable=True),
    )
    op.create_index("ix_erasure_requests_due_at", "erasure_requests", ["due_at"])
    op.create_table(
        "export_parts",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("user_id", sa.Integer(), sa.ForeignKey("users.id"), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=True),
        sa.Column("which", sa.String(length=16), nullable=False),
        sa.Column("since", UTCDateTime(), nullable=True),
        sa.Column("from_created_at", UTCDateTime(), nullable=False),
        sa.Column("from_game_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("due_at", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_export_parts_user_id", "export_parts", ["user_id"])
    op.create_index("ix_export_parts_due_at", "export_parts", ["due_at"])


def downgrade() -> None:
    op.drop_table("export_parts")
    op.drop_table("erasure_requests")
