"""The outbox: mail queued in the same transaction as the state change it reports.

The transport drains it; a failed send never touches game state. The caller commits.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta

from sqlalchemy import bindparam, func, insert, update
from sqlmodel import Session, col, select

from pbm.mail.visible import visible
from pbm.store.models import OutboxMail, OutboxStatus


def outbox_values(
    now: datetime,
    envelope_from: str,
    recipients: Sequence[str],
    subject: str,
    body: str,
    raw: bytes,
    html: str | None = None,
) -> dict[str, object]:
    """The columns of a freshly queued mail but its Message-ID and inbound message;
    `html` is the order for its HTML part (pbm.services.mailing.mail_html.html_order)."""
    return {
        "created_at": now,
        "envelope_from": envelope_from,
        "recipients": json.dumps(list(recipients)),
        "subject": subject,
        "body": visible(body),  # the text as composed, for `pbm mail outbox`
        "raw": raw,
        "html": html,
        "status": OutboxStatus.QUEUED,
        "attempts": 0,
        "next_attempt_at": now,
    }


_OUTBOX = OutboxMail.__table__  # type: ignore[attr-defined]
_QUEUE = insert(_OUTBOX)


def queue_many(session: Session, rows: Sequence[dict[str, object]]) -> None:
    """Queue several mails in one Core insert: no ORM objects for rows nobody reads back
    in this transaction. Each row is outbox_values() plus message_id and inbound_id."""
    if rows:
        session.connection().execute(_QUEUE, list(rows))


def _mark(session: Session, mail_id: int, **values: object) -> None:
    """One attempt at a mail recorded with `values`, in one UPDATE: loading the row (its
    whole raw mail) to change a few columns cost more than the statement. Like
    `mark_sent`, it does not update a row this session holds."""
    done = session.connection().execute(
        update(_OUTBOX)
        .where(_OUTBOX.c.id == mail_id)
        .values(attempts=_OUTBOX.c.attempts + 1, **values)
    )
    if done.rowcount != 1:
        raise KeyError(f"no outbox mail {mail_id}")


_SENT = (
    update(_OUTBOX)
    .where(_OUTBOX.c.id == bindparam("mail_id"))
    .values(
        status=OutboxStatus.SENT,
        attempts=_OUTBOX.c.attempts + 1,
        sent_at=bindparam("sent"),
        last_error=None,
    )
)


def mark_sent(session: Session, mail_ids: Sequence[int], now: datetime) -> None:
    """Mails sent, in one statement for all (the sender records a batch at a time);
    rows this session holds are not updated with it."""
    if not mail_ids:
        return
    done = session.connection().execute(_SENT, [{"mail_id": i, "sent": now} for i in mail_ids])
    if done.rowcount != len(mail_ids):
        raise KeyError(f"not every one of outbox mails {list(mail_ids)}")


def mark_retry(session: Session, mail_id: int, now: datetime, error: str, delay: timedelta) -> None:
    _mark(session, mail_id, last_error=error, next_attempt_at=now + delay)


def mark_failed(session: Session, mail_id: int, now: datetime, error: str) -> None:
    """Give up on a mail for good (a permanent SMTP refusal, too many attempts)."""
    _mark(session, mail_id, status=OutboxStatus.FAILED, last_error=error, next_attempt_at=now)


def outbox_depth(session: Session) -> int:
    """How many mails wait to be sent."""
    query = (
        select(func.count()).select_from(OutboxMail).where(OutboxMail.status == OutboxStatus.QUEUED)
    )
    return int(session.exec(query).one())


def recipients_of(mail: OutboxMail) -> list[str]:
    return list(json.loads(mail.recipients))


def list_outbox(
    session: Session, status: OutboxStatus | None = OutboxStatus.QUEUED
) -> list[OutboxMail]:
    query = select(OutboxMail).order_by(col(OutboxMail.id))
    if status:
        query = query.where(OutboxMail.status == status)
    return list(session.exec(query))
