"""Intake: store each raw message once (Message-ID unique), then process it in one
transaction. A crash rolls the message's work back and marks it failed, with the
traceback, for `pbm mail retry`."""

from __future__ import annotations

import hashlib
import logging
import traceback
from datetime import datetime
from email.parser import BytesHeaderParser
from email.policy import compat32

from sqlalchemy import insert
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, select

from pbm.clock import Clock
from pbm.config import Config
from pbm.errors import StoreUnavailable
from pbm.store.db import session_for
from pbm.store.models import InboundMessage

log = logging.getLogger(__name__)


def message_id_of(raw: bytes) -> str:
    """The Message-ID header, or a stable id derived from the bytes when it is missing."""
    headers = BytesHeaderParser(policy=compat32).parsebytes(raw, headersonly=True)
    value = str(headers.get("Message-ID", "") or "").strip()
    if value:
        return value[:255]
    digest = hashlib.sha256(raw).hexdigest()[:32]
    return f"<missing.{digest}@pbm.invalid>"


def store_inbound(session: Session, raw: bytes, *, via: str, now: datetime) -> tuple[int, bool]:
    """Add the message unless its Message-ID is known; returns (id, created).

    The caller commits.
    """
    message_id = message_id_of(raw)
    # Insert first and let the unique Message-ID refuse a copy: one statement in the usual
    # case, a Core insert so no ORM unit of work runs for a row nobody reads back here.
    statement = insert(InboundMessage.__table__).values(  # type: ignore[attr-defined]
        message_id=message_id, received_at=now, via=via, raw=raw, status="new"
    )
    try:
        with session.begin_nested():
            result = session.execute(statement)
    except IntegrityError:
        # Known already (or stored meanwhile by another process): that copy wins.
        again = session.exec(
            select(InboundMessage.id).where(InboundMessage.message_id == message_id)
        ).one()
        return again, False
    key = result.inserted_primary_key
    assert key is not None and key[0] is not None
    return int(key[0]), True


def process_inbound(engine: Engine, inbound_id: int, *, clock: Clock, config: Config) -> str:
    """Process one stored message in its own transaction; returns its final status."""
    from pbm.pipeline import handle_message

    with session_for(engine) as session:
        row = session.get(InboundMessage, inbound_id)
        if row is None:
            raise KeyError(f"no inbound message {inbound_id}")
        if row.status in ("done", "ignored"):
            return row.status
        try:
            status = handle_message(session, row, clock=clock, config=config)
            row.status = status
            row.error = None
            row.processed_at = clock.now()
            session.add(row)
            session.commit()
            return status
        except Exception:
            session.rollback()
            trace = traceback.format_exc()
            log.exception("message %s failed", row.message_id)
    _mark_failed(engine, inbound_id, trace, clock.now())
    return "failed"


def _mark_failed(engine: Engine, inbound_id: int, trace: str, now: datetime) -> None:
    with session_for(engine) as session:
        row = session.get(InboundMessage, inbound_id)
        if row is not None:
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
    """Store, commit, process: what `pbm mail process` and the tests use.

    A message already stored keeps its status (it runs once).
    """
    try:
        with session_for(engine) as session:
            inbound_id, created = store_inbound(session, raw, via=via, now=clock.now())
            session.commit()
            if not created:
                row = session.get(InboundMessage, inbound_id)
                assert row is not None
                if row.status != "new":
                    return row.status
    except OperationalError as exc:
        raise StoreUnavailable(str(exc)) from exc
    return process_inbound(engine, inbound_id, clock=clock, config=config)
