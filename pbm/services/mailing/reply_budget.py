"""Reply budgets, by trust: how many mails an hour one mailbox gets beyond the board,
round and result mails of its own games (pbm.output_limits decides which mails count).

A confirmed player's mailbox has a generous budget (`player_replies_per_hour`): it
only stops a mail loop with an auto-responder that adds no robot headers. A stranger's
or an unconfirmed mailbox keeps the tight one (`replies_per_address_hour`), since its
From may be forged and pbm must not send backscatter without end. Past either budget
the first mail is replaced by one short notice saying when answers resume, and then
nothing goes until an hour has passed since that notice.

Budgets key on the mailbox (pbm.mail.identity): `alice+1@`, `Alice@` and the IDN
spellings of one domain share one."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from pbm.services.accounts import consent
from pbm.services.context import Context
from pbm.store import queries

_STRANGER = "reply"
_PLAYER = "player-reply"
_NOTICE = "reply-notice"
_WINDOW = timedelta(hours=1)


@dataclass(frozen=True)
class Verdict:
    """Whether one more mail may go (`send`); if not, when answers resume if the one
    notice saying so is due now (`notice_until`), else None (silence)."""

    send: bool
    notice_until: datetime | None = None


def take(ctx: Context, address: str, *, player: bool) -> Verdict:
    """Whether one more mail may go to `address` this hour; if so, it is counted.
    `player`: the mailbox is a confirmed player's (the generous budget)."""
    key = consent.mailbox(ctx, address)
    kind = _PLAYER if player else _STRANGER
    limit = ctx.config.player_replies_per_hour if player else ctx.config.replies_per_address_hour
    since = ctx.now() - _WINDOW
    times = queries.event_times(ctx.session, kind, key, since)
    if len(times) < limit:
        queries.add_event(ctx.session, kind, key, ctx.now())
        return Verdict(True)
    if queries.count_events(ctx.session, _NOTICE, key, since):
        return Verdict(False)
    queries.add_event(ctx.session, _NOTICE, key, ctx.now())
    # The mail that frees a place is the oldest still in the window.
    return Verdict(False, times[len(times) - limit] + _WINDOW)


_STRANGER_HELP = "stranger-help"


def take_stranger_help(ctx: Context) -> bool:
    """Whether the short help for a mail with no command may go to its sender: at most
    `stranger_help_per_day` a day per mailbox, however it is spelled; if so, counted."""
    since = ctx.now() - timedelta(days=1)
    box = consent.mailbox(ctx, ctx.sender)
    if queries.count_events(ctx.session, _STRANGER_HELP, box, since) >= (
        ctx.config.stranger_help_per_day
    ):
        return False
    queries.add_event(ctx.session, _STRANGER_HELP, box, ctx.now())
    return True
