"""Queue one mail in the outbox as an ORM row the test reads back (the pipeline queues
its replies with pbm.services.mailing.outbox.queue_many)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlmodel import Session

from pbm.services.mailing.outbox import outbox_values
from pbm.store.models import OutboxMail


def queue_mail(
    session: Session,
    *,
    now: datetime,
    envelope_from: str,
    recipients: Sequence[str],
    subject: str,
    body: str,
    raw: bytes,
    message_id: str,
    inbound_id: int | None = None,
) -> OutboxMail:
    values = outbox_values(now, envelope_from, recipients, subject, body, raw)
    # outbox_values is an untyped row for a Core insert: validating it makes the ORM row.
    mail = OutboxMail.model_validate({**values, "message_id": message_id, "inbound_id": inbound_id})
    session.add(mail)
    return mail
