"""The per-address reply budget: at most `replies_per_address_hour` mails an hour to one
address, beyond the board mails of games it plays (pbm.output_limits decides which
mails count). It stops mail loops with auto-responders that add no robot headers, and
backscatter to the forged sender of a stream of messages."""

from __future__ import annotations

from datetime import timedelta

from pbm.mail.identity import mailbox_key
from pbm.services.context import Context
from pbm.store import queries

_KIND = "reply"
_WINDOW = timedelta(hours=1)


def take(ctx: Context, address: str) -> bool:
    """Whether one more mail may go to `address` this hour; if so, it is counted."""
    # One budget per mailbox, however its address is spelled (`+tag`, IDN, case).
    key = mailbox_key(address)
    spent = queries.count_events(ctx.session, _KIND, key, ctx.now() - _WINDOW)
    if spent >= ctx.config.replies_per_address_hour:
        return False
    queries.add_event(ctx.session, _KIND, key, ctx.now())
    return True
