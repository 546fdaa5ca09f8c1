"""Forgetting the text of mail handled long ago: a processed message's source and a
sent mail's text are blanked, their rows kept (pbm.services.mailing.retention says
why). Each call forgets at most `limit` rows of a table, oldest first, so that one
transaction stays small however much is due."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Table, delete, func, update
from sqlalchemy import select as sa_select
from sqlmodel import Session

from pbm.store.models import (
    InboundKey,
    InboundMessage,
    MessageStatus,
    OutboxMail,
    OutboxStatus,
)
from pbm.store.types import table_of

_INBOUND = table_of(InboundMessage)
_KEYS = table_of(InboundKey)
_OUTBOX = table_of(OutboxMail)

# Only what is over: a message to process or retry, and a mail still to send, keep theirs.
_INBOUND_OVER = (MessageStatus.DONE, MessageStatus.IGNORED)
_OUTBOX_OVER = (OutboxStatus.SENT, OutboxStatus.FAILED)


def _oldest(
    session: Session, table: Table, over: Sequence[str], since: str, before: datetime, limit: int
) -> list[int]:
    """The ids of up to `limit` rows of `table` in a status of `over`, whose `since`
    column is before `before` and whose text is still there, oldest first."""
    query = (
        sa_select(table.c.id)
        .where(
            table.c.status.in_(over),
            table.c[since] < before,
            func.length(table.c.raw) > 0,
        )
        .order_by(table.c.id)
        .limit(limit)
    )
    return list(session.execute(query).scalars())


def forget_inbound(session: Session, before: datetime, limit: int) -> int:
    """Blank the source of up to `limit` messages processed before `before`, and drop
    their order keys (which only hold back later mail while a message waits)."""
    ids = _oldest(session, _INBOUND, _INBOUND_OVER, "processed_at", before, limit)
    if ids:
        session.execute(update(_INBOUND).where(_INBOUND.c.id.in_(ids)).values(raw=b""))
        session.execute(delete(_KEYS).where(_KEYS.c.inbound_id.in_(ids)))
    return len(ids)


def forget_outbox(session: Session, before: datetime, limit: int) -> int:
    """Blank the text (body, source, HTML order) of up to `limit` mails queued before
    `before` and sent or given up."""
    ids = _oldest(session, _OUTBOX, _OUTBOX_OVER, "created_at", before, limit)
    if ids:
        blank = update(_OUTBOX).where(_OUTBOX.c.id.in_(ids))
        session.execute(blank.values(body="", raw=b"", html=None))
    return len(ids)
