"""Intake: store each raw message once (Message-ID unique) and process it in one
transaction. The daemon (IMAP, LMTP) stores first and processes each message after;
`process_message` (the pipe, the CLI) stores and processes in a single transaction, since
its sender keeps the message until that commits. A failure rolls the message's work
back and marks it failed, with the traceback, for `pbm mail retry`."""

from __future__ import annotations

import hashlib
import logging
import traceback
from collections.abc import Callable
from datetime import datetime
from email.parser import BytesHeaderParser
from email.policy import compat32
from typing import TYPE_CHECKING

from sqlalchemy import bindparam, insert
from sqlalchemy import select as sa_select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, select

from pbm.clock import Clock
from pbm.config import Config
from pbm.errors import StoreUnavailable
from pbm.store.db import session_for
from pbm.store.models import InboundMessage

if TYPE_CHECKING:
    from pbm.pipeline import StoredMessage

log = logging.getLogger(__name__)

_INBOUND = InboundMessage.__table__  # type: ignore[attr-defined]
_ID_OF = sa_select(_INBOUND.c.id).where(_INBOUND.c.message_id == bindparam("message_id"))
# Where the database can skip a duplicate in the insert itself, no savepoint is needed.
_INSERT_NEW = {
    name: dialect.insert(_INBOUND)
    .on_conflict_do_nothing(index_elements=["message_id"])
    .returning(_INBOUND.c.id)
    for name, dialect in (("sqlite", sqlite), ("postgresql", postgresql))
}
_LOAD = sa_select(_INBOUND.c.id, _INBOUND.c.message_id, _INBOUND.c.raw, _INBOUND.c.status).where(
    _INBOUND.c.id == bindparam("row_id")
)
_FINISH = (
    _INBOUND.update()
    .where(_INBOUND.c.id == bindparam("row_id"))
    .values(status=bindparam("new_status"), error=None, processed_at=bindparam("at"))
)


def message_id_of(raw: bytes) -> str:
    """The Message-ID header, or a stable id derived from the bytes when it is missing."""
    headers = BytesHeaderParser(policy=compat32).parsebytes(raw, headersonly=True)
    value = str(headers.get("Message-ID", "") or "").strip()
    if value:
        return value[:255]
    digest = hashlib.sha256(raw).hexdigest()[:32]
    return f"<missing.{digest}@pbm.invalid>"


def store_inbound(
    session: Session, raw: bytes, *, via: str, now: datetime, message_id: str | None = None
) -> tuple[int, bool]:
    """Add the message unless its Message-ID (`message_id_of`, unless given) is known;
    returns (id, created). The caller commits.
    """
    message_id = message_id or message_id_of(raw)
    values = {
        "message_id": message_id,
        "received_at": now,
        "via": via,
        "raw": raw,
        "status": "new",
    }
    # Insert first and let the unique Message-ID refuse a copy: one statement in the usual
    # case, a Core insert so no ORM unit of work runs for a row nobody reads back here.
    conn = session.connection()
    statement = _INSERT_NEW.get(conn.dialect.name)
    if statement is not None:
        created = conn.execute(statement, values).scalar()
        if created is not None:
            return int(created), True
    else:
        try:
            with session.begin_nested():
                result = session.execute(insert(_INBOUND).values(**values))
            key = result.inserted_primary_key
            assert key is not None and key[0] is not None
            return int(key[0]), True
        except IntegrityError:
            pass
    # Known already (or stored meanwhile by another process): that copy wins.
    return int(conn.execute(_ID_OF, {"message_id": message_id}).scalar_one()), False


def process_inbound(engine: Engine, inbound_id: int, *, clock: Clock, config: Config) -> str:
    """Process one stored message in its own transaction; returns its final status."""

    def begin(session: Session) -> StoredMessage | str:
        return _stored_or_status(session, inbound_id)

    return _process(engine, begin, via="", clock=clock, config=config)


def _stored_or_status(
    session: Session, inbound_id: int, todo: tuple[str, ...] = ("new", "failed")
) -> StoredMessage | str:
    """The stored message to process when its status is one of `todo`, else its status."""
    from pbm.pipeline import StoredMessage

    found = session.connection().execute(_LOAD, {"row_id": inbound_id}).first()
    if found is None:
        raise KeyError(f"no inbound message {inbound_id}")
    if found.status not in todo:
        return str(found.status)
    return StoredMessage(found.id, found.message_id, found.raw)


def _process(
    engine: Engine,
    begin: Callable[[Session], StoredMessage | str],
    *,
    via: str,
    clock: Clock,
    config: Config,
) -> str:
    """In one transaction: `begin` (which finds or stores the message), its commands, its
    replies and its status; returns the status. A failure rolls all of it back and
    stores the message as failed, with the traceback."""
    from pbm.pipeline import LoneCommandFailed, handle_message

    with session_for(engine) as session:
        stored = begin(session)
        if isinstance(stored, str):
            session.commit()
            return stored
        try:
            try:
                status = handle_message(session, stored, clock=clock, config=config, lone=True)
            except LoneCommandFailed as failed:
                # Most messages are one command that works, and it runs without a
                # savepoint; when it fails, all is rolled back and the failure answered.
                session.rollback()
                stored = begin(session)
                if isinstance(stored, str):
                    session.commit()
                    return stored
                status = handle_message(session, stored, clock=clock, config=config, failed=failed)
            session.flush()
            params = {"row_id": stored.id, "new_status": status, "at": clock.now()}
            session.connection().execute(_FINISH, params)
            session.commit()
            return status
        except Exception:
            session.rollback()
            log.exception("message %s failed", stored.message_id)
            trace = traceback.format_exc()
    _mark_failed(engine, stored, via, trace, clock.now())
    return "failed"


def _mark_failed(
    engine: Engine, stored: StoredMessage, via: str, trace: str, now: datetime
) -> None:
    """Keep a failed message with its traceback (storing it again if the failure rolled
    its storing back)."""
    with session_for(engine) as session:
        inbound_id, _ = store_inbound(
            session, stored.raw, via=via, now=now, message_id=stored.message_id
        )
        row = session.get(InboundMessage, inbound_id)
        assert row is not None
        row.status = "failed"
        row.error = trace
        row.processed_at = now
        session.add(row)
        session.commit()


def process_pending(
    engine: Engine, *, clock: Clock, config: Config, limit: int | None = None
) -> int:
    """Process stored messages with status "new", oldest first; returns how many."""
    with session_for(engine) as session:
        query = select(InboundMessage.id).where(InboundMessage.status == "new")
        query = query.order_by(InboundMessage.id)
        if limit is not None:
            query = query.limit(limit)
        ids = list(session.exec(query))
    for inbound_id in ids:
        process_inbound(engine, inbound_id, clock=clock, config=config)
    return len(ids)


def retry_failed(
    engine: Engine, *, clock: Clock, config: Config, ids: list[int] | None = None
) -> dict[int, str]:
    """Process failed messages again (after a fix); returns id -> new status."""
    with session_for(engine) as session:
        query = select(InboundMessage).where(InboundMessage.status == "failed")
        if ids:
            query = query.where(InboundMessage.id.in_(ids))  # type: ignore[union-attr]
        rows = list(session.exec(query.order_by(InboundMessage.id)))
        for row in rows:
            row.status = "new"
            session.add(row)
        session.commit()
        todo = [r.id for r in rows if r.id is not None]
    return {i: process_inbound(engine, i, clock=clock, config=config) for i in todo}


def process_message(engine: Engine, raw: bytes, *, via: str, clock: Clock, config: Config) -> str:
    """Store and process in one transaction: what `pbm mail process` and the tests use.

    Nothing is acknowledged before the commit (the pipe's exit status), so a crash before
    it leaves the message with its sender to deliver again. A message that fails is
    stored as failed, with its traceback, for `pbm mail retry`. A message already stored
    keeps its status (it runs once); one stored but not yet processed is processed here.
    """
    from pbm.pipeline import StoredMessage

    message_id = message_id_of(raw)

    def begin(session: Session) -> StoredMessage | str:
        inbound_id, created = store_inbound(
            session, raw, via=via, now=clock.now(), message_id=message_id
        )
        if created:
            return StoredMessage(inbound_id, message_id, raw)
        # A copy that failed stays failed until `pbm mail retry`.
        return _stored_or_status(session, inbound_id, todo=("new",))

    try:
        return _process(engine, begin, via=via, clock=clock, config=config)
    except OperationalError as exc:
        raise StoreUnavailable(str(exc)) from exc
