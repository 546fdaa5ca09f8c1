"""The reason of each outgoing mail (pbm.mail.streams.MailReason), from what made it."""

from __future__ import annotations

from pbm.mail.streams import MailReason
from pbm.services.context import Reply

# Notifications by the kind of the Reply that made them; any other kind is an answer.
_NOTIFICATION_KINDS = {
    "board": MailReason.OPPONENT_MOVED,
    "new-board": MailReason.OPPONENT_MOVED,
    "removed": MailReason.OPPONENT_MOVED,
    "notification": MailReason.OPPONENT_MOVED,
    "nag": MailReason.REMINDER,
    "tournament": MailReason.TOURNAMENT,
    "digest": MailReason.DIGEST,
    "chat": MailReason.MESSAGE,
    "message": MailReason.MESSAGE,
}


def reason_of(reply: Reply, sender: str) -> MailReason:
    """`reply.reason` when the service set it; else an answer when the mail goes to the
    sender of the message being handled, else the notification its kind is."""
    if reply.reason is not None:
        return reply.reason
    if sender and sender.lower() in (a.lower() for a in reply.to):
        return MailReason.ANSWER
    return _NOTIFICATION_KINDS.get(reply.kind, MailReason.ANSWER)
