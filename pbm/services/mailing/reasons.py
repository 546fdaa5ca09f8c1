"""The reason of each outgoing mail (pbm.mail.streams.MailReason), from what made it."""

from __future__ import annotations

from pbm.mail.streams import MailReason
from pbm.services.context import Reply, ReplyKind

# Notifications by the kind of the Reply that made them; any other kind is an answer.
_NOTIFICATION_KINDS = {
    ReplyKind.BOARD: MailReason.OPPONENT_MOVED,
    ReplyKind.NEW_BOARD: MailReason.OPPONENT_MOVED,
    ReplyKind.REMOVED: MailReason.OPPONENT_MOVED,
    ReplyKind.NOTIFICATION: MailReason.OPPONENT_MOVED,
    ReplyKind.NAG: MailReason.REMINDER,
    ReplyKind.TOURNAMENT: MailReason.TOURNAMENT,
    ReplyKind.DIGEST: MailReason.DIGEST,
    ReplyKind.CHAT: MailReason.MESSAGE,
    ReplyKind.MESSAGE: MailReason.MESSAGE,
}


def reason_of(reply: Reply, sender: str) -> MailReason:
    """`reply.reason` when the service set it; else an answer when the mail goes to the
    sender of the message being handled, else the notification its kind is."""
    if reply.reason is not None:
        return reply.reason
    if sender and sender.lower() in (a.lower() for a in reply.to):
        return MailReason.ANSWER
    return _NOTIFICATION_KINDS.get(reply.kind, MailReason.ANSWER)
