"""How long pbm keeps the text of mail ([privacy] mail_text_days, docs/privacy.md).

A message's source and a reply's text are needed while the message waits to be
processed and the reply to be sent, and for a while after, to look into a complaint;
past `mail_text_days` they are blanked. The rows stay, small: a Message-ID seen again
is still known (a mail delivered twice is not run twice), a late bounce still finds
the mail it answers, and the player's log (`mydata`) still lists when each came and
went. The games keep what they need (every move, its echo and comment) in their own
rows."""

from __future__ import annotations

from datetime import timedelta

from pbm.services.context import Context
from pbm.store import mail_text

# Rows of each table forgotten per transaction.
BATCH = 500


def forget_old_text(ctx: Context) -> int:
    """Forget the text of up to BATCH messages and BATCH replies handled more than
    `mail_text_days` ago (none when it is 0); returns how many were forgotten."""
    days = ctx.config.mail_text_days
    if not days:
        return 0
    before = ctx.now() - timedelta(days=days)
    return mail_text.forget_inbound(ctx.session, before, BATCH) + mail_text.forget_outbox(
        ctx.session, before, BATCH
    )
