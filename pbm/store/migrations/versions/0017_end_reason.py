"""end reason: how a board ended, as one of a fixed set of words

`games.end_reason` holds a `pbm.store.models.EndReason` word (rules, resigned,
forfeit, ...) beside `result_reason`, the sentence people read, so code asks how a
board ended without comparing sentences. Boards that ended before this revision get
the word their stored sentence was written for (the templates' words at the time); a
finished board whose sentence matches none of them ended by the rules.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 14:50:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

# The sentence each server ending stored, as SQL patterns (templates/phrases.toml).
_FINISHED = (
    ("resigned", "% resigns."),
    ("withdrew", "% has withdrawn from tournament %"),  # before forfeit: it forfeits too
    ("forfeit", "%forfeits on %"),
    ("draw-agreed", "The players agreed to a draw."),
)


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("end_reason", sa.String(length=16), nullable=True))
    removed = (
        "UPDATE games SET end_reason = CASE WHEN result_reason LIKE '% has decided not to "
        "play.' THEN 'declined' ELSE 'aborted' END WHERE status = 'removed'"
    )
    op.execute(removed)
    for word, pattern in _FINISHED:
        op.execute(
            sa.text(
                "UPDATE games SET end_reason = :word WHERE status = 'finished' "
                "AND end_reason IS NULL AND result_reason LIKE :pattern"
            ).bindparams(word=word, pattern=pattern)
        )
    op.execute(
        "UPDATE games SET end_reason = 'rules' WHERE status = 'finished' AND end_reason IS NULL"
    )


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("end_reason")
