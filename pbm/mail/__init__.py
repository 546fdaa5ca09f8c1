"""The raw-mail layer: parse inbound mail, find reply tokens, compose replies.

No game rules and no database here; see docs/mail-format.md.
"""

from pbm.mail.addressing import FoundToken, message_id_for, reply_address, tokens_in
from pbm.mail.authresults import SenderVerdict, sender_verdict
from pbm.mail.compose import compose
from pbm.mail.inbound import (
    InboundMail,
    first_command_line,
    is_from_self,
    parse_message,
    quotable_original,
)

__all__ = [
    "FoundToken",
    "InboundMail",
    "SenderVerdict",
    "compose",
    "first_command_line",
    "is_from_self",
    "message_id_for",
    "parse_message",
    "quotable_original",
    "reply_address",
    "sender_verdict",
    "tokens_in",
]
