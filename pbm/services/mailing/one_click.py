"""The two things a web page may change, each only with a secret pbm mailed: stopping a
notification stream by the code of its one-click link (RFC 8058: the https twin of the
stop address, pbm.services.mailing.streams) and confirming an address by the token of its
confirmation request (pbm.services.accounts.consent). Both take effect in the caller's
transaction and say what they did, for the page that answers the POST."""

from __future__ import annotations

from dataclasses import dataclass

from pbm.mail.streams import MailReason, Stream
from pbm.services.accounts import consent
from pbm.services.context import Context, Reply, ReplyKind
from pbm.services.mailing import bounces, streams
from pbm.store import addresses
from pbm.store.models import User
from pbm.texts import phrase


@dataclass(frozen=True)
class StreamLink:
    """What a stop code names: whose stream, and whether it is stopped now."""

    userid: str
    stream: Stream
    stopped: bool


def stream_link(ctx: Context, code: str) -> StreamLink | None:
    """The stream a one-click code names (None: no such code), changing nothing."""
    row = streams.stream_by_code(ctx, code)
    user = None if row is None else ctx.session.get(User, row.user_id)
    if row is None or user is None:
        return None
    return StreamLink(user.userid, row.stream, row.stopped_at is not None)


def unsubscribe(ctx: Context, code: str) -> StreamLink | None:
    """Stop the stream `code` names at once, as a mail to its stop address does (with
    the one mail saying how to turn it on again); None for an unknown code."""
    if not streams.handle_stop_mail(ctx, code):
        return None
    return stream_link(ctx, code)


@dataclass(frozen=True)
class AddressLink:
    """What a confirmation token names: the account (never the address: a page shows
    none) and whether it is confirmed now."""

    userid: str
    confirmed: bool


def address_link(ctx: Context, token: str) -> AddressLink | None:
    """The account a confirmation token was issued for, changing nothing."""
    row = addresses.by_confirm_token(ctx.session, token.lower())
    if row is None:
        return None
    return AddressLink(consent.owner(ctx, row).userid, row.confirmed_at is not None)


def confirm(ctx: Context, token: str) -> AddressLink | None:
    """Confirm the address whose request carried `token`, as a reply to that request
    does, and mail it the answer; None for a token not (or no longer) issued. Raises
    pbm.errors.PbmError when the mailbox is another account's (consent.confirm)."""
    row = addresses.by_confirm_token(ctx.session, token.lower())
    if row is None:
        return None
    user = consent.owner(ctx, row)
    address = row.address
    consent.confirm(ctx, row)
    more = bounces.enable(ctx, address)
    text = phrase("confirmed", userid=user.userid, address=address)
    ctx.reply(
        Reply(
            to=[address],
            subject=phrase("subject_account", userid=user.userid),
            body=(f"{text}\n\n{more}" if more else text) + "\n",
            kind=ReplyKind.ACCOUNT,
            user_id=user.id,
            reason=MailReason.CONFIRMATION,
        )
    )
    return AddressLink(user.userid, True)


__all__ = ["AddressLink", "StreamLink", "address_link", "confirm", "stream_link"]
