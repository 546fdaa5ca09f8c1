"""Prebuilt Core queries of mail hygiene, asked for every mail pbm queues: whether its
mailbox is disabled or complained, and its reader's stream (pbm.services.mailing.bounces,
pbm.services.mailing.streams). Core, not the ORM: they run twice per move."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import NamedTuple

from sqlalchemy import bindparam
from sqlalchemy import select as sa_select
from sqlmodel import Session

from pbm.mail.streams import Stream
from pbm.store.models_mail import MailboxHealth, MailStream
from pbm.store.queries import core_rows
from pbm.store.types import table_of

_HEALTH = table_of(MailboxHealth)
_STREAMS = table_of(MailStream)

_STATES = sa_select(_HEALTH.c.mailbox, _HEALTH.c.disabled_at, _HEALTH.c.complained_at).where(
    _HEALTH.c.mailbox.in_(bindparam("keys", expanding=True))
)


class MailboxState(NamedTuple):
    disabled_at: datetime | None
    complained_at: datetime | None


def mailbox_states(session: Session, keys: Collection[str]) -> dict[str, MailboxState]:
    """The state of each of the mailboxes `keys` that has one (most have none)."""
    if not keys:
        return {}
    rows = core_rows(session, _STATES, {"keys": list(keys)})
    return {m: MailboxState(d, c) for m, d, c in rows}


_STREAM = sa_select(_STREAMS.c.code, _STREAMS.c.stopped_at).where(
    _STREAMS.c.user_id == bindparam("user_id"), _STREAMS.c.stream == bindparam("stream")
)
_ADD_STREAM = _STREAMS.insert()


class StreamState(NamedTuple):
    code: str
    stopped_at: datetime | None


_STREAMS_OF = sa_select(
    _STREAMS.c.user_id, _STREAMS.c.stream, _STREAMS.c.code, _STREAMS.c.stopped_at
).where(_STREAMS.c.user_id.in_(bindparam("users", expanding=True)))


def stream_state(session: Session, user_id: int, stream: Stream) -> StreamState | None:
    found = core_rows(session, _STREAM, {"user_id": user_id, "stream": stream}).first()
    return None if found is None else StreamState(found.code, found.stopped_at)


def stream_states(
    session: Session, user_ids: Collection[int]
) -> dict[tuple[int, Stream], StreamState]:
    """Every stream row of the readers `user_ids`, by reader and stream: one query for
    all the mails of a message."""
    if not user_ids:
        return {}
    rows = core_rows(session, _STREAMS_OF, {"users": sorted(user_ids)})
    return {(u, Stream(s)): StreamState(c, at) for u, s, c, at in rows}


def add_stream(session: Session, user_id: int, stream: Stream, code: str) -> None:
    session.connection().execute(
        _ADD_STREAM, {"user_id": user_id, "stream": stream, "code": code, "stopped_at": None}
    )
