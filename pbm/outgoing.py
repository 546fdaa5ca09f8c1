"""The replies of a unit of work, composed and queued: one outbox row per recipient,
with its threading headers, reply token, reason, stream headers and VERP secret, behind
the one gate of every mail pbm sends (consent, bounces, stopped streams).

Only the unit of work (pbm.work) calls queue_replies, once, at the end of its work.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Sequence

from pbm.commands.masking import mask_text
from pbm.mail import web_links
from pbm.mail.addressing import message_id_for, reply_address
from pbm.mail.compose import compose, with_attachment
from pbm.mail.inbound import InboundMail, quotable_original
from pbm.mail.streams import (
    MailReason,
    StreamHeaders,
    board_list_id,
    feedback_id,
    stream_of,
    tournament_list_id,
)
from pbm.services.accounts import consent
from pbm.services.context import Context, Reply
from pbm.services.mailing import bounces, streams
from pbm.services.mailing.mail_html import html_order
from pbm.services.mailing.outbox import outbox_values, queue_many
from pbm.services.mailing.reasons import reason_of
from pbm.texts import phrase

log = logging.getLogger(__name__)


def thread_id(ctx: Context, game_id: int) -> str:
    """A Message-ID every mail of one board refers to, so the board reads as one thread."""
    return f"<pbm-board-{game_id}@{ctx.config.server_host}>"


def _stream_headers(
    ctx: Context, reply: Reply, reason: MailReason, stop_code: str | None
) -> StreamHeaders:
    host = ctx.config.server_host
    web = ctx.config.web_url
    game = reply.board
    archive = None
    if game is not None:
        list_id: str | None = board_list_id(game[0], game[1], host)
        archive = web_links.board_url(web, *game) if web else None
    else:
        list_id = tournament_list_id(reply.tournament, host) if reply.tournament else None
        if web and reply.tournament:
            archive = web_links.tournament_url(web, reply.tournament)
    return StreamHeaders(
        reason=reason,
        feedback_id=feedback_id(reason, game[0] if game else None, host),
        list_id=list_id,
        unsubscribe=streams.stop_address(ctx, stop_code) if stop_code else None,
        unsubscribe_url=web_links.unsubscribe_url(web, stop_code) if web and stop_code else None,
        archive_url=archive,
    )


def _outbox_row(
    ctx: Context,
    reply: Reply,
    address: str,
    headers: StreamHeaders,
    mail: InboundMail | None,
    quote: str | None,
    *,
    inbound_id: int | None,
) -> dict[str, object]:
    """The outbox row of `reply` to one `address`: composed, with its reason and the
    secret of its VERP envelope sender (the address itself is made when it is sent)."""
    config = ctx.config
    token, move = reply.token, reply.move_count
    message_id = message_id_for(token, config.server_host, move)
    references: list[str] = []
    if reply.game_id is not None:
        references.append(thread_id(ctx, reply.game_id))
    in_reply_to = None
    if reply.to_sender and mail is not None and mail.message_id:
        in_reply_to = mail.message_id
        references.append(mail.message_id)
    body = reply.body
    if reply.quote_original and quote is not None:
        body = body.rstrip("\n") + "\n\n" + phrase("original_follows")
    # Notifications the reader did not trigger come from the second address, if set.
    reason = headers.reason
    own = config.server_address if reason.asked_for else config.notify_address
    reply_to = reply.reply_to
    if reply_to is None and token:
        reply_to = reply_address(config.server_address, token, move)
    elif reply_to is None and own and own != config.server_address:
        reply_to = config.server_address  # commands still go to the main address
    raw = compose(
        sender=f"{config.server_name} <{own or config.server_address}>",
        to=[address],
        subject=reply.subject,
        body=body,
        message_id=message_id,
        in_reply_to=in_reply_to,
        references=references,
        reply_to=reply_to,
        date=ctx.now(),
        quote=quote if reply.quote_original else None,
        stream=headers,
    )
    html: str | None = html_order(reply.user_id, reply.pictures)
    if reply.attachment is not None:
        file = reply.attachment
        raw, html = with_attachment(raw, file.filename, file.data, file.mime_type), None
    bounce_address = f"{config.bounce_local_part}@{config.server_host}"
    row = outbox_values(ctx.now(), bounce_address, [address], reply.subject, body, raw, html)
    row["message_id"] = message_id
    row["inbound_id"] = inbound_id
    row["reason"] = reason
    row["verp"] = secrets.token_hex(8)
    return row


def queue_replies(
    ctx: Context, mail: InboundMail | None, replies: Sequence[Reply], inbound_id: int | None
) -> list[str]:
    """Compose every reply (threading headers, reply token) and queue it in the outbox;
    returns the queued Message-IDs."""
    queued: list[dict[str, object]] = []
    # The mailboxes that bounced or complained among the recipients, asked at once.
    states = bounces.blocked(ctx, [a for r in replies for a in r.to if a])
    disabled = {a for a, state in states.items() if state.disabled_at is not None}
    # The confirmed mailboxes and the readers' streams, each asked once for all mails.
    confirmed = consent.confirmed_mailboxes(ctx, [a for r in replies for a in r.to if a])
    reasons = [reason_of(reply, ctx.sender) for reply in replies]
    wanted = {
        (reply.user_id, stream)
        for reply, reason in zip(replies, reasons, strict=True)
        if reply.user_id is not None and (stream := stream_of(reason)) is not None
    }
    stream_states = streams.stream_states(ctx, wanted)
    # The masked original, made only when a reply quotes it (most answers to moves don't).
    quoting = mail is not None and any(r.quote_original for r in replies)
    quote = mask_text(quotable_original(mail)) if mail is not None and quoting else None
    for reply, reason in zip(replies, reasons, strict=True):
        stream = stream_of(reason)
        stop_code = None
        if stream is not None and reply.user_id is not None:
            state = stream_states[reply.user_id, stream]
            if state.stopped_at is not None:
                log.info("stream %s stopped: not mailing %r", stream.value, reply.subject)
                continue
            stop_code = state.code
        # The one gate of every mail pbm sends: no address its owner has not confirmed,
        # or whose mailbox bounces disabled, but for its confirmation request and
        # answers to its own mail.
        allowed = consent.deliverable(ctx, reply, confirmed, disabled)
        headers = _stream_headers(ctx, reply, reason, stop_code)
        # One recipient per mail: nobody sees another's address, and a bounce names one.
        for address in dict.fromkeys(allowed):
            why = bounces.why_not(states.get(address), reason)
            if why is not None:
                log.info("%s: not mailing %s %r", why, address, reply.subject)
                continue
            queued.append(
                _outbox_row(ctx, reply, address, headers, mail, quote, inbound_id=inbound_id)
            )
    queue_many(ctx.session, queued)
    ctx.session.flush()
    return [str(row["message_id"]) for row in queued]


__all__ = ["queue_replies", "thread_id"]
