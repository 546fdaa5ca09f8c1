"""Whom a mail vouches for: what a trusted Authentication-Results producer says of its
From (read once per message), and the reply tokens it carries, which let a player's
reply say just the move.

A token counts when it came in our plus-address, or in a Message-ID pbm issued and
recorded, and the mail is from its player's address (pbm.services.mailing.tokens.resolve).
When a trusted producer says the sender's domain failed its check, a token alone
vouches for nobody.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pbm.commands.base import Command, Invocation
from pbm.commands.finder import CommandLine, first_line_and_rest
from pbm.commands.registry import board_verb_by_token, starts_command, token_invocation
from pbm.config import Config
from pbm.errors import AuthError
from pbm.mail.addressing import FoundToken, tokens_in
from pbm.mail.authresults import SenderVerdict, dmarc_passed, sender_verdict
from pbm.mail.inbound import InboundMail
from pbm.services.accounts import consent
from pbm.services.context import Context
from pbm.services.mailing import tokens
from pbm.services.play.boards import board_by_id
from pbm.store import queries
from pbm.texts import phrase

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SenderTrust:
    """What the trusted Authentication-Results of one mail say of its From."""

    verdict: SenderVerdict  # failed: the From is forged, as far as a trusted MTA knows
    dmarc_pass: bool  # dmarc=pass for the From's domain


def sender_trust(mail: InboundMail, config: Config) -> SenderTrust:
    """Read the mail's Authentication-Results once, trusting only `authserv_ids`."""
    results, trusted = mail.authentication_results, config.authserv_ids
    domain = mail.sender.rpartition("@")[2]
    return SenderTrust(
        verdict=sender_verdict(results, trusted),
        dmarc_pass=dmarc_passed(results, trusted, domain),
    )


def issued_tokens(ctx: Context, mail: InboundMail) -> list[FoundToken]:
    """The reply tokens of `mail` that pbm could have issued: in its plus-address, or in
    a Message-ID it recorded sending."""
    return [
        f
        for f in tokens_in(mail, ctx.config.server_address)
        if f.message_id is None or queries.issued_message_id(ctx.session, f.message_id)
    ]


def token_work(
    ctx: Context, mail: InboundMail, trust: SenderTrust, found: list[FoundToken]
) -> list[CommandLine | tuple[Command, Invocation]] | None:
    """The work of a reply by token, or None when no token of `found` is the sender's
    own: a confirmation request's answer, a full command on the first line, or the
    first line as a move on the token's board. Raises AuthError when a trusted producer
    found the From forged and the first line is no full command."""
    names = [f.token for f in found]
    first, rest = first_line_and_rest(mail.fresh_text)
    request = consent.pending(ctx, names)
    if request is not None and request.confirm_token is not None:
        # A reply to a confirmation request: it confirms, or says "not me".
        ctx.sender_token = True
        verb = "notme" if consent.is_refusal(first) else "confirm"
        return [CommandLine(f"{verb} {request.confirm_token}", "")]
    seat = tokens.resolve(ctx, names)
    if seat is None:
        return None
    verdict = trust.verdict
    ctx.sender_token = not verdict.failed
    if first and starts_command(first) and not board_verb_by_token(first):
        return [CommandLine(first, rest)]
    if verdict.failed:
        log.warning(
            "token of %s refused: %s says %s", ctx.sender, verdict.authserv_id, verdict.reason
        )
        raise AuthError(
            phrase("token_untrusted", authserv=verdict.authserv_id, reason=verdict.reason)
        )
    # An empty reply still answers its board: "no move given", with the board.
    board = board_by_id(ctx, seat.game_id)
    # The move count of the answered mail, where the token was found first.
    sent = next(f.move for f in found if f.token == seat.token)
    return [token_invocation(first, rest, board.rules, seat.game_id, seat.user, sent)]


__all__ = ["SenderTrust", "issued_tokens", "sender_trust", "token_work"]
