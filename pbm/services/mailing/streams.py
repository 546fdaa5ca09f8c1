"""Notification streams a reader stops without a password (issue 22, point 4).

Every notification (another's move, a reminder, tournament news, the digest, a
`message`) carries its reader's stop address for its stream in `List-Unsubscribe`:
`pbm-stop+CODE@host`, CODE a random secret stored per reader and stream (so it cannot be
guessed, and a leaked one stops one stream of one reader). A mail to it, by any intake,
switches that stream off: for the boards he plays, to the daily digest instead; it never
forfeits or resigns anything. He gets one confirmation, whose reply address
(`pbm-stop+CODE.on@host`) turns the stream on again, as does `set USERID PASSWORD mail
STREAM on`. The https one-click form (RFC 8058) will resolve the same codes
(`stream_by_code`) once pbm has web pages.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Collection

from sqlmodel import select

from pbm.mail.bounces import tagged_address
from pbm.mail.streams import MailReason, Stream
from pbm.services.accounts.users import reply_addresses
from pbm.services.context import Context, Reply, ReplyKind
from pbm.services.correspondence.digest import set_digest
from pbm.store import mail_queries
from pbm.store.mail_queries import StreamState
from pbm.store.models import User
from pbm.store.models_mail import MailStream
from pbm.texts import phrase

log = logging.getLogger(__name__)

RESUME_SUFFIX = ".on"


def stream_state(ctx: Context, user_id: int, stream: Stream) -> StreamState:
    """The reader's `stream`: its code and whether he stopped it (the code is made the
    first time a mail of it is sent)."""
    found = mail_queries.stream_state(ctx.session, user_id, stream)
    if found is None:
        found = StreamState(secrets.token_hex(10), None)
        mail_queries.add_stream(ctx.session, user_id, stream, found.code)
    return found


def stream_states(
    ctx: Context, wanted: Collection[tuple[int, Stream]]
) -> dict[tuple[int, Stream], StreamState]:
    """`stream_state` of each (reader, stream) of `wanted`, asked at once: a message's
    mails cost one query, not one each."""
    found = mail_queries.stream_states(ctx.session, {user_id for user_id, _ in wanted})
    for user_id, stream in sorted(set(wanted) - found.keys()):
        found[user_id, stream] = stream_state(ctx, user_id, stream)
    return found


def stop_address(ctx: Context, code: str) -> str:
    return tagged_address(ctx.config.stop_local_part, ctx.config.server_host, code)


def stream_by_code(ctx: Context, code: str) -> MailStream | None:
    return ctx.session.exec(select(MailStream).where(MailStream.code == code.lower())).first()


def switch(ctx: Context, user: User, stream: Stream, on: bool) -> bool:
    """Turn `stream` on or off for `user`; returns whether that changed anything. The
    boards stream off means the daily digest (pbm.services.correspondence.digest) instead."""
    stream_state(ctx, user.saved_id, stream)  # its row exists from here on
    query = select(MailStream).where(MailStream.user_id == user.id, MailStream.stream == stream)
    row = ctx.session.exec(query).one()
    if (row.stopped_at is None) == on:
        return False
    row.stopped_at = None if on else ctx.now()
    ctx.session.add(row)
    if stream is Stream.BOARDS:
        set_digest(ctx.session, user, not on)
    ctx.session.flush()
    log.info("stream %s of %s switched %s", stream.value, user.userid, "on" if on else "off")
    return True


def handle_stop_mail(ctx: Context, tag: str) -> bool:
    """A mail to the stop address `LOCAL+TAG@host`: stop (or, with `.on`, resume) the
    stream its code names and confirm it once; returns whether the code was known."""
    code, on = tag, False
    if tag.endswith(RESUME_SUFFIX):
        code, on = tag.removesuffix(RESUME_SUFFIX), True
    row = stream_by_code(ctx, code)
    user = None if row is None else ctx.session.get(User, row.user_id)
    if row is None or user is None:
        log.info("stop address with an unknown code from %s", ctx.sender or "nobody")
        return False
    if switch(ctx, user, row.stream, on):
        _confirm(ctx, user, row, on)
    return True


def _confirm(ctx: Context, user: User, row: MailStream, on: bool) -> None:
    """The one mail saying what changed and how to undo it."""
    to = reply_addresses(ctx, user)
    if not to:
        return
    stream = row.stream.value
    resume = tagged_address(
        ctx.config.stop_local_part, ctx.config.server_host, row.code + RESUME_SUFFIX
    )
    off = "stream_off_boards" if row.stream is Stream.BOARDS else "stream_off"
    body = phrase(
        "stream_on" if on else off,
        stream=stream,
        userid=user.userid,
        resume=resume,
    )
    ctx.reply(
        Reply(
            to=to,
            subject=phrase("subject_stream", stream=stream, state="on" if on else "off"),
            body=body + "\n",
            kind=ReplyKind.ACCOUNT,
            user_id=user.id,
            reason=MailReason.CONFIRMATION,
            reply_to=None if on else resume,
        )
    )
