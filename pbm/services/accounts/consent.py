"""Consent: pbm mails an address nothing but one confirmation request until its owner
confirms it (docs/security.md).

Every address an account names (signup, `change address`, `pbm user`) is stored
unconfirmed and gets one request carrying a secret token. A reply to it from that
address (strict From, the same mailbox) confirms it; a reply saying "not me" refuses:
the address is dropped from the account and never mailed for it again, and after
refusals for `refusals_block_mailbox` accounts it gets no request for any new account.
At most `confirmations_per_mailbox_day` requests go to one mailbox a day. Everything
here keys on the mailbox (pbm.mail.identity), never on the address's spelling.

A mailbox that bounces disabled (pbm.services.mailing.bounces) counts as unconfirmed again: it
gets answers to its own mail and a fresh request caused by such a mail, nothing else.
"""

from __future__ import annotations

import base64
import logging
import secrets
from collections.abc import Collection, Sequence
from datetime import timedelta

from pbm.errors import PbmError
from pbm.mail import web_links
from pbm.mail.identity import mailbox_key, operator_rules
from pbm.services.context import Context, Reply, ReplyKind
from pbm.store import addresses, mail_queries, queries
from pbm.store.models import User, UserAddress
from pbm.texts import phrase, render, wrap

log = logging.getLogger(__name__)

_REQUEST_EVENT = "confirm-mail"
_TOKEN_BYTES = 15  # 24 base32 characters: an addressing token (8 to 40 a-z0-9)
# First lines of a reply to a request that refuse it; anything else confirms.
_REFUSALS = frozenset({"not me", "notme", "no", "refuse", "stop"})


def mailbox(ctx: Context, address: str) -> str:
    """The mailbox `address` reaches, under the operator's rules."""
    return mailbox_key(address, operator_rules(ctx.config))


def is_refusal(first_line: str) -> bool:
    """Whether a reply's first line says "not me"."""
    return " ".join(first_line.lower().strip(" .!").split()) in _REFUSALS


def new_rows(ctx: Context, user: User, added: Sequence[UserAddress]) -> None:
    """What follows an account's new addresses: one already confirmed for the same
    mailbox by this account is confirmed at once; the others wait for `request`."""
    confirmed = {r.mailbox for r in addresses.rows_of(ctx.session, user.saved_id) if r.confirmed_at}
    for row in added:
        if row.mailbox in confirmed:
            row.confirmed_at = ctx.now()
            ctx.session.add(row)


def request(
    ctx: Context, user: User, row: UserAddress, *, to_sender: bool = False, again: bool = False
) -> str | None:
    """Issue the confirmation token of `row` unless its mailbox refused this account (or
    too many), or had its requests for today, or bounces disabled it and this mail is
    not from it; returns the token (None: no request).
    `to_sender`: the caller mails the request inside its own answer; else it is queued
    here, to that address alone. `again`: a fresh confirmation of a confirmed address
    whose mailbox bounces disabled."""
    if row.confirmed_at is not None and not again:
        return None
    refusers = addresses.refusers_of(ctx.session, row.mailbox)
    if user.userid_key in refusers or len(refusers) >= ctx.config.refusals_block_mailbox:
        log.info("no confirmation request to %s for %s: refused", row.address, user.userid)
        return None
    if _disabled(ctx, row.mailbox) and (not ctx.sender or mailbox(ctx, ctx.sender) != row.mailbox):
        log.info("no confirmation request to %s for %s: disabled", row.address, user.userid)
        return None
    since = ctx.now() - timedelta(days=1)
    sent = queries.count_events(ctx.session, _REQUEST_EVENT, row.mailbox, since)
    if sent >= ctx.config.confirmations_per_mailbox_day:
        log.warning(
            "no confirmation request to %s for %s: %d today", row.address, user.userid, sent
        )
        return None
    queries.add_event(ctx.session, _REQUEST_EVENT, row.mailbox, ctx.now())
    row.confirm_token = base64.b32encode(secrets.token_bytes(_TOKEN_BYTES)).decode().lower()
    if row.confirmed_at is None:
        row.unconfirmed_since = ctx.now()  # the request promises `unconfirmed_days` from now
    ctx.session.add(row)
    log.info("confirmation request to %s for %s", row.address, user.userid)
    if not to_sender:
        ctx.reply(
            Reply(
                to=[row.address],
                subject=phrase("subject_confirm", userid=user.userid),
                body=request_text(ctx, user, row),
                kind=ReplyKind.CONFIRMATION,
                token=row.confirm_token,
            )
        )
    return row.confirm_token


def ask_unasked_sender(ctx: Context) -> None:
    """Mail from an address registered before consent and never asked gets it asked:
    one request (the daily limit and refusals apply), from which its account has
    `unconfirmed_days` to confirm. Called after the mail's commands."""
    if not ctx.sender:
        return
    for row in addresses.unasked_in(ctx.session, mailbox(ctx, ctx.sender)):
        request(ctx, owner(ctx, row), row)


def request_text(ctx: Context, user: User, row: UserAddress) -> str:
    """The request's words; a confirmed address's fresh one says why it is asked again.
    With web pages, the confirmation link follows (a button there confirms)."""
    # Filled in, a long address or userid would run past the mail's 72 columns.
    text = render(
        "confirm" if row.confirmed_at is None else "reconfirm",
        userid=user.userid,
        address=row.address,
        asker=ctx.sender or phrase("confirm_asked_by_operator"),
        server=ctx.config.server_address,
        token=row.confirm_token,
        days=f"{ctx.config.unconfirmed_days:g}",
    )
    text = wrap(text, reflow=True)
    web = ctx.config.web_url
    if not web or row.confirm_token is None:
        return text
    link = phrase("confirm_web", url=web_links.confirm_url(web, row.confirm_token))
    return f"{text.rstrip()}\n\n{link}\n"


def _disabled(ctx: Context, key: str) -> bool:
    """Whether bounces disabled mailbox `key` (pbm.services.mailing.bounces)."""
    state = mail_queries.mailbox_states(ctx.session, [key]).get(key)
    return state is not None and state.disabled_at is not None


def pending(ctx: Context, tokens: Sequence[str]) -> UserAddress | None:
    """The unconfirmed address one of `tokens` was issued for, if the mail comes from
    its mailbox (and no trusted MTA said its From was forged)."""
    if ctx.sender_unverified or not ctx.sender:
        return None
    for token in tokens:
        row = addresses.by_confirm_token(ctx.session, token.lower())
        if row is not None and row.mailbox == mailbox(ctx, ctx.sender):
            return row
    return None


def confirm(ctx: Context, row: UserAddress) -> None:
    """Mark `row` confirmed; PbmError when another account confirmed its mailbox and the
    operator does not allow shared mailboxes."""
    if not ctx.config.shared_mailboxes:
        others = [
            r for r in addresses.confirmed_in(ctx.session, row.mailbox) if r.user_id != row.user_id
        ]
        if others:
            log.warning(
                "confirmation of %s refused: mailbox confirmed for another account", row.address
            )
            raise PbmError(phrase("confirm_mailbox_taken", address=row.address))
    row.confirmed_at = ctx.now()
    row.confirm_token = None
    ctx.session.add(row)
    log.info("address %s confirmed for user %d", row.address, row.user_id)


def refuse(ctx: Context, user: User, row: UserAddress) -> None:
    """The mailbox says "not me": drop the address from the account and remember it."""
    addresses.add_refusal(ctx.session, row.mailbox, user.userid_key, ctx.now())
    ctx.session.delete(row)
    ctx.session.flush()
    log.warning("address %s refused account %s", row.address, user.userid)


def confirm_trusted(ctx: Context, row: UserAddress) -> bool:
    """Confirm `row` without a round trip (its sender's DMARC passed at a trusted MTA);
    False when the mailbox is another account's."""
    try:
        confirm(ctx, row)
    except PbmError:
        return False
    return True


def has_confirmed(ctx: Context, user: User) -> bool:
    return any(r.confirmed_at for r in addresses.rows_of(ctx.session, user.saved_id))


def require_confirmed(ctx: Context, user: User) -> str | None:
    """Why `user` cannot be named in a challenge or a tournament: no confirmed address
    (None: he can; bots have no address and need none)."""
    if user.bot:
        return None
    if has_confirmed(ctx, user):
        return None
    return phrase("not_confirmed", userid=user.userid)


def confirmed_mailboxes(ctx: Context, to: Sequence[str]) -> set[str]:
    """The mailboxes of `to` that some account has confirmed."""
    return addresses.confirmed_mailboxes(ctx.session, sorted({mailbox(ctx, a) for a in to}))


def deliverable(
    ctx: Context, reply: Reply, confirmed: Collection[str], disabled: Collection[str] = ()
) -> list[str]:
    """The recipients of `reply` pbm may mail: a confirmation request's, an answer's to
    the mailbox its message came from, and otherwise those whose mailbox is among
    `confirmed` (`confirmed_mailboxes` of every recipient of the message's mails, asked
    once); those of `disabled` (by bounces) count as unconfirmed until confirmed again."""
    to = [a for a in reply.to if a]
    if reply.kind is ReplyKind.CONFIRMATION:
        return to
    boxes = {a: mailbox(ctx, a) for a in to}
    sender = mailbox(ctx, ctx.sender) if ctx.sender else None
    kept = []
    for address, box in boxes.items():
        if (box in confirmed and address not in disabled) or (reply.to_sender and box == sender):
            kept.append(address)
        elif address in disabled:
            log.info("disabled by bounces: not mailing %s %r", address, reply.subject)
        else:
            log.warning("not mailing unconfirmed %s %r", address, reply.subject)
    return kept


def own_row(ctx: Context, rows: Sequence[UserAddress]) -> UserAddress | None:
    """The one of `rows` that reaches the sender's own mailbox, if any."""
    if not ctx.sender:
        return None
    box = mailbox(ctx, ctx.sender)
    return next((r for r in rows if r.mailbox == box), None)


def owner(ctx: Context, row: UserAddress) -> User:
    user = ctx.session.get(User, row.user_id)
    assert user is not None  # an address row always has its account
    return user


def welcome_lines(
    ctx: Context,
    user: User,
    own: UserAddress | None,
    token: str | None,
    asked: Sequence[str],
) -> str:
    """What a signup's answer says of consent: how to confirm the sender's own address
    (the answer is its request), or that it is confirmed, and which other addresses
    were sent a request (`asked`)."""
    parts = []
    if own is not None and own.confirmed_at is not None:
        parts.append(phrase("welcome_confirmed", address=own.address))
    elif own is not None and token is not None:
        parts.append(request_text(ctx, user, own).rstrip("\n"))
    elif own is not None:
        parts.append(phrase("welcome_no_request", address=own.address))
    if asked:
        parts.append(phrase("welcome_requests", addresses=" ".join(asked)))
    return "\n\n".join(parts) or phrase("welcome_none_asked")


def message_refusals(ctx: Context, sender: User, people: Sequence[User]) -> list[User]:
    """Those of `people` the sender may not `message`: no confirmed address, or no
    board or tournament shared with him and no "messages anyone" of their own."""
    ids = [p.saved_id for p in people]
    known = addresses.acquainted(ctx.session, sender.saved_id, ids)
    known |= addresses.open_to_anyone(ctx.session, ids)
    known.add(sender.saved_id)
    return [p for p in people if p.saved_id not in known]


def messages_anyone(ctx: Context, user: User) -> bool:
    return user.saved_id in addresses.open_to_anyone(ctx.session, [user.saved_id])


def set_messages_anyone(ctx: Context, user: User, value: bool) -> None:
    queries.own_mail_preference(ctx.session, user.saved_id).messages_anyone = value
    ctx.session.flush()
