"""What /metrics reports, read from the database so that any daemon of a cluster
answers for all of them: counts by status, the outbox's depth and age, processing
times, bounces, and the daemons alive."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlmodel import Session, col, func, select

from pbm.clock import as_utc
from pbm.store.models import InboundMessage, OutboxMail
from pbm.store.models_cluster import DaemonBeat
from pbm.store.models_mail import BounceEvent

# Processing times are read from this many most recent messages at most.
LATENCY_SAMPLE = 10_000


def inbound_by_status(session: Session) -> dict[str, int]:
    query = select(InboundMessage.status, func.count()).group_by(InboundMessage.status)
    return {str(status): int(n) for status, n in session.exec(query)}


def inbound_by_via(session: Session) -> dict[str, int]:
    query = select(InboundMessage.via, func.count()).group_by(InboundMessage.via)
    return {str(via): int(n) for via, n in session.exec(query)}


def outbox_by_status_reason(session: Session) -> dict[tuple[str, str], int]:
    query = select(OutboxMail.status, OutboxMail.reason, func.count()).group_by(
        col(OutboxMail.status), col(OutboxMail.reason)
    )
    return {(str(s), str(r) if r else "none"): int(n) for s, r, n in session.exec(query)}


def oldest_queued(session: Session) -> datetime | None:
    query = select(func.min(OutboxMail.created_at)).where(OutboxMail.status == "queued")
    found = session.exec(query).one()
    return None if found is None else as_utc(found)


def processing_seconds(session: Session) -> list[float]:
    """Seconds from arrival to done of the latest processed messages."""
    query = (
        select(InboundMessage.received_at, InboundMessage.processed_at)
        .where(col(InboundMessage.processed_at).is_not(None))
        .order_by(col(InboundMessage.id).desc())
        .limit(LATENCY_SAMPLE)
    )
    return [
        max(0.0, (as_utc(done) - as_utc(got)).total_seconds())
        for got, done in session.exec(query)
        if done is not None
    ]


def bounces_by_kind(session: Session) -> dict[str, int]:
    query = select(BounceEvent.kind, func.count()).group_by(BounceEvent.kind)
    return {str(kind): int(n) for kind, n in session.exec(query)}


def daemons_alive(session: Session, now: datetime, lease: timedelta) -> int:
    query = (
        select(func.count())
        .select_from(DaemonBeat)
        .where(col(DaemonBeat.stopped_at).is_(None), col(DaemonBeat.last_seen) >= now - lease)
    )
    return int(session.exec(query).one())
