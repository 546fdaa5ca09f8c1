"""Mail to pbm's special addresses, handled before the robot screen would drop it: a
bounce or complaint (to the VERP or feedback address) counted against the mailbox of
the mail it returns, a stop request switching its stream off."""

from __future__ import annotations

import hmac
import logging

from pbm.mail.bounces import Report, parse_report, tag_for, verp_parts
from pbm.mail.inbound import InboundMail
from pbm.services.context import Context
from pbm.services.mailing import bounces, streams
from pbm.services.mailing.outbox import recipients_of
from pbm.store.models import MessageStatus, OutboxMail

log = logging.getLogger(__name__)


def to_special_address(
    ctx: Context, message_id: str, raw: bytes, mail: InboundMail
) -> MessageStatus | None:
    """Handle a mail to the VERP, feedback or stop address (None for any other mail):
    a bounce or complaint is counted against the mailbox of the mail it returns, a stop
    request switches its stream off. Returns done, or ignored for what is neither."""
    config = ctx.config
    host = config.server_host
    verp = tag_for(mail.recipients, config.bounce_local_part, host)
    if verp is not None and verp_parts(verp) is None:
        verp = None  # the local part may be the server's own: `pbm+TOKEN` is a reply
    feedback = bool(config.feedback_address) and config.feedback_address.lower() in (
        a.lower() for a in mail.recipients
    )
    stop = tag_for(mail.recipients, config.stop_local_part, host)
    report = parse_report(raw) if verp is not None or feedback else None
    if report is not None:
        return _report(ctx, message_id, report, verp)
    if verp is not None:
        log.info("%s ignored: no bounce or complaint in it", message_id)
        return MessageStatus.IGNORED
    if stop is not None:
        done = streams.handle_stop_mail(ctx, stop)
        return MessageStatus.DONE if done else MessageStatus.IGNORED
    return None  # a person's mail to the feedback address is an ordinary mail


def _report(ctx: Context, message_id: str, report: Report, verp: str | None) -> MessageStatus:
    """A bounce or complaint: attributed by its VERP address, else by the Message-ID of
    the original it returns; counted against that mail's recipient."""
    mail = None
    parts = verp_parts(verp) if verp is not None else None
    if parts is not None:
        found = ctx.session.get(OutboxMail, parts[0])
        if found is not None and found.verp and hmac.compare_digest(found.verp, parts[1]):
            mail = found
    if mail is None and report.original_message_id:
        mail = bounces.outbox_mail_by_message_id(ctx.session, report.original_message_id)
    if mail is None:
        log.warning(
            "%s: %s not attributed (VERP %r, original %r)",
            message_id,
            report.kind.value,
            verp,
            report.original_message_id,
        )
        return MessageStatus.IGNORED
    bounces.record(ctx, report, mail, recipients_of(mail))
    return MessageStatus.DONE


__all__ = ["to_special_address"]
