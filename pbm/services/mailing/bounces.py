"""Bounce scores and spam complaints per mailbox, kept as Mailman 3 keeps them.

A bounce attributed to an outbox mail (pbm.mail.bounces) counts against the mailbox of
its recipient, under the operator's rules as consent reads it
(pbm.services.accounts.consent.mailbox: `[mail] tag_separators`, `fold_local_case`), so
the mailbox a bounce disables is the one a confirmation enables. A hard failure counts
1, a soft one 0.5, at most one bounce a day, and a score is forgotten after
`bounce_forget_days` without a bounce. At `bounce_threshold` the mailbox is disabled:
pbm mails it nothing but answers to its own mail
(pbm.services.accounts.consent.deliverable counts it unconfirmed). Its player is told
at another address of his, or in the answer to his next mail from it, which also asks
for a fresh confirmation; confirming enables the mailbox again. His opponents on
running boards and the directors of his tournaments are told once that he cannot be
reached by mail since that day.

A spam complaint (ARF) turns off every notification to its mailbox at once; answers to
the mailbox's own commands still go. Every bounce and complaint is logged and kept
(`bounce_events`), so `pbm mail bounces` shows the complaint rate per day.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import func, or_
from sqlmodel import Session, col, select

from pbm.mail.bounces import BounceKind, Report
from pbm.mail.identity import u_label
from pbm.mail.streams import MailReason
from pbm.services.accounts import consent
from pbm.services.accounts.users import reply_addresses
from pbm.services.context import Context, Reply, ReplyKind
from pbm.store import addresses, mail_queries, queries
from pbm.store.mail_queries import MailboxState
from pbm.store.models import OutboxMail, User, UserAddress
from pbm.store.models_mail import BounceEvent, MailboxHealth
from pbm.store.models_tournament import Tournament, TournamentEntry
from pbm.texts import phrase

log = logging.getLogger(__name__)

_POINTS = {BounceKind.HARD: 1.0, BounceKind.SOFT: 0.5}


def health_of(ctx: Context, address: str) -> MailboxHealth | None:
    return _health(ctx.session, consent.mailbox(ctx, address))


def _health(session: Session, key: str) -> MailboxHealth | None:
    return session.exec(select(MailboxHealth).where(MailboxHealth.mailbox == key)).first()


def blocked(ctx: Context, addresses: Sequence[str]) -> dict[str, MailboxState]:
    """The state of those of `addresses` whose mailbox bounced or complained, by
    address: one query for all of a message's mails."""
    keys = {a: consent.mailbox(ctx, a) for a in addresses}
    states = mail_queries.mailbox_states(ctx.session, set(keys.values()))
    return {a: states[k] for a, k in keys.items() if k in states}


def why_not(state: MailboxState | None, reason: MailReason) -> str | None:
    """Why a mailbox in `state` may not get a mail sent for `reason`, or None (a
    disabled mailbox is consent's to gate: pbm.services.accounts.consent.deliverable)."""
    if state is None:
        return None
    if state.complained_at is not None and not reason.asked_for:
        return "spam complaint"
    return None


@dataclass(frozen=True)
class Attributed:
    """A report matched to its mail: the mailbox it counted against and what it did."""

    mailbox: str
    kind: BounceKind
    disabled: bool = False


def record(
    ctx: Context, report: Report, mail: OutboxMail | None, recipients: Sequence[str]
) -> list[Attributed]:
    """Count `report` against the mailbox of each of `recipients` (the attributed mail's
    own, or the report's when no mail was found)."""
    done = []
    for address in dict.fromkeys(recipients):
        key = consent.mailbox(ctx, address)
        row = _health(ctx.session, key) or MailboxHealth(mailbox=key)
        event = BounceEvent(
            at=ctx.now(),
            mailbox=key,
            kind=report.kind,
            status=report.status[:16],
            outbox_id=None if mail is None else mail.id,
        )
        disabled = False
        if report.kind is BounceKind.COMPLAINT:
            row.complained_at = row.complained_at or ctx.now()
        else:
            event.counted = _count(ctx, row, report.kind)
            if row.disabled_at is None and row.score >= ctx.config.bounce_threshold:
                row.disabled_at = ctx.now()
                disabled = True
        ctx.session.add(row)
        ctx.session.add(event)
        ctx.session.flush()
        log.info(
            "%s of %s (mail %s, status %s): score %.1f%s",
            report.kind.value,
            key,
            None if mail is None else mail.id,
            report.status or "-",
            row.score,
            ", disabled" if disabled else "",
        )
        if disabled:
            _tell_disabled(ctx, address, row)
        done.append(Attributed(key, report.kind, disabled))
    return done


def _count(ctx: Context, row: MailboxHealth, kind: BounceKind) -> bool:
    """Add a bounce to the score, Mailman's way; returns whether it counted."""
    now = ctx.now()
    last = row.last_bounce_at
    if last is not None and now - last > timedelta(days=ctx.config.bounce_forget_days):
        row.score = 0.0  # stale: the mailbox worked for a week
    elif last is not None and last.date() == now.date():
        return False  # at most one bounce a day counts
    row.score += _POINTS[kind]
    row.last_bounce_at = now
    return True


def users_of_mailbox(ctx: Context, key: str) -> list[tuple[User, str]]:
    """The accounts with an address of mailbox `key`, and that address: those whose
    stored key is `key`, and (the operator may have changed his rules since it was
    stored) those at its domain, written as the key writes it (the A-label) or as
    players write it (the U-label), whose address keys to it now."""
    domain = key.rpartition("@")[2]
    spellings = {domain, u_label(domain)}
    query = (
        select(User, UserAddress)
        .where(UserAddress.user_id == User.id)
        .where(
            or_(
                col(UserAddress.mailbox) == key,
                *(col(UserAddress.address).like(f"%@{d}") for d in spellings),
            )
        )
    )
    found = ctx.session.exec(query)
    return [(u, a.address) for u, a in found if consent.mailbox(ctx, a.address) == key]


def _tell_disabled(ctx: Context, address: str, row: MailboxHealth) -> None:
    """The player at another confirmed address of his (else his next mail from this
    one is answered with it), and once each his opponents and tournament directors."""
    since = f"{row.disabled_at:%Y-%m-%d}"
    for user, _ in users_of_mailbox(ctx, row.mailbox):
        mine = [
            a
            for a in queries.addresses_of(ctx.session, user.saved_id)
            if consent.mailbox(ctx, a) != row.mailbox
        ]
        # Not one that bounced or complained itself: their states in one query.
        known = blocked(ctx, mine)
        others = [a for a in mine if a not in known]
        confirmed = consent.confirmed_mailboxes(ctx, others)  # the gate drops the rest
        others = [a for a in others if consent.mailbox(ctx, a) in confirmed]
        if others:
            ctx.reply(
                Reply(
                    to=others[:1],
                    subject=phrase("subject_mailbox_disabled", address=address),
                    body=phrase("mailbox_disabled_player", address=address, since=since) + "\n",
                    kind=ReplyKind.ACCOUNT,
                    user_id=user.id,
                    reason=MailReason.CONFIRMATION,
                )
            )
        for other, boards in _opponents(ctx.session, user):
            _tell(ctx, other, user, since, "mailbox_disabled_opponent", ", ".join(boards))
        for director, names in _directors(ctx.session, user):
            _tell(ctx, director, user, since, "mailbox_disabled_director", ", ".join(names))


def _tell(ctx: Context, reader: User, user: User, since: str, key: str, where: str) -> None:
    to = reply_addresses(ctx, reader)
    if to:
        ctx.reply(
            Reply(
                to=to,
                subject=phrase("subject_unreachable", userid=user.userid),
                body=phrase(key, userid=user.userid, since=since, where=where) + "\n",
                kind=ReplyKind.ACCOUNT,
                user_id=reader.id,
                reason=MailReason.OPPONENT_MOVED,
            )
        )


def _opponents(session: Session, user: User) -> list[tuple[User, list[str]]]:
    """Each player (not bot) who shares a running board with `user`: those boards."""
    found: dict[int, tuple[User, list[str]]] = {}
    for game in queries.games_of_user(session, user.saved_id, statuses=("active",)):
        for _gp, other in queries.players_of(session, game.saved_id):
            if other.id != user.id and not other.bot:
                found.setdefault(other.saved_id, (other, []))[1].append(f"{game.game} {game.board}")
    return list(found.values())


def _directors(session: Session, user: User) -> list[tuple[User, list[str]]]:
    """The directors of the open or running tournaments `user` entered: their names."""
    query = select(Tournament).where(
        TournamentEntry.tournament_id == Tournament.id,
        TournamentEntry.user_id == user.id,
        col(Tournament.status).in_(("open", "running")),
    )
    found: dict[int, tuple[User, list[str]]] = {}
    for t in session.exec(query):
        director = None if t.created_by is None else session.get(User, t.created_by)
        if director is not None and director.id != user.id:
            found.setdefault(director.saved_id, (director, []))[1].append(t.name)
    return list(found.values())


def reconfirm_on_mail(ctx: Context) -> None:
    """Mail from a disabled mailbox does not prove mail to it arrives: the answer says
    why pbm stopped, and a fresh confirmation request goes to it (consent's daily
    limit and refusals apply). Called after the mail's commands, so a reply to an
    earlier request confirms first."""
    state = blocked(ctx, [ctx.sender]).get(ctx.sender)
    if state is None or state.disabled_at is None:
        return
    rows = addresses.confirmed_in(ctx.session, consent.mailbox(ctx, ctx.sender))
    if rows:
        row = rows[0]
        sent = consent.request(ctx, consent.owner(ctx, row), row, again=True) is not None
        follow = phrase("reconfirm_sent" if sent else "reconfirm_not_sent")
    else:
        follow = phrase("reconfirm_no_account")
    log.info("mail from disabled mailbox %s", consent.mailbox(ctx, ctx.sender))
    since = f"{state.disabled_at:%Y-%m-%d}"
    ctx.reply(
        Reply(
            to=[ctx.sender],
            subject=phrase("subject_mailbox_stopped"),
            body=phrase("mailbox_stopped", address=ctx.sender, since=since)
            + "\n\n"
            + follow
            + "\n",
            kind=ReplyKind.ACCOUNT,
            to_sender=True,
            answer=True,
        )
    )


def enable(ctx: Context, address: str) -> str:
    """A confirmation from `address` proves mail reaches it: its mailbox's disabled
    state and score are cleared; returns what the answer says of it ("" if nothing)."""
    row = health_of(ctx, address)
    if row is None or row.disabled_at is None:
        return ""
    since = f"{row.disabled_at:%Y-%m-%d}"
    row.disabled_at = None
    row.score = 0.0
    row.last_bounce_at = None
    ctx.session.add(row)
    ctx.session.flush()
    log.info("mailbox %s enabled again by its confirmation", row.mailbox)
    return phrase("mailbox_enabled", address=address, since=since)


@dataclass(frozen=True)
class DayCount:
    day: str
    sent: int
    complaints: int

    @property
    def rate(self) -> float:
        return self.complaints / self.sent if self.sent else 0.0


def mailboxes(session: Session) -> list[MailboxHealth]:
    """Every mailbox with a score, a complaint or disabled, the worst first."""
    query = select(MailboxHealth).order_by(col(MailboxHealth.score).desc(), MailboxHealth.mailbox)
    return list(session.exec(query))


def complaint_days(session: Session, now: datetime, days: int = 7) -> list[DayCount]:
    """Mails sent and complaints received on each of the last `days` days, newest first."""
    start = (now - timedelta(days=days - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
    sent = session.exec(select(OutboxMail.sent_at).where(col(OutboxMail.sent_at) >= start)).all()
    complaints = session.exec(
        select(BounceEvent.at).where(
            BounceEvent.kind == BounceKind.COMPLAINT, col(BounceEvent.at) >= start
        )
    ).all()
    result = []
    for n in range(days):
        day = f"{now - timedelta(days=n):%Y-%m-%d}"
        result.append(
            DayCount(
                day,
                sum(1 for t in sent if t is not None and f"{t:%Y-%m-%d}" == day),
                sum(1 for t in complaints if f"{t:%Y-%m-%d}" == day),
            )
        )
    return result


def bounce_counts(session: Session) -> dict[str, int]:
    """Bounces and complaints ever recorded, by kind, in BounceKind's order (a GROUP BY
    comes back in any order, and on PostgreSQL not the one SQLite gives)."""
    rows = session.exec(select(BounceEvent.kind, func.count()).group_by(BounceEvent.kind)).all()
    found = {BounceKind(k): int(n) for k, n in rows}
    return {kind.value: found[kind] for kind in BounceKind if kind in found}


def recent_events(session: Session, limit: int = 20) -> list[BounceEvent]:
    """The latest bounces and complaints, each with the outbox mail it returned."""
    query = select(BounceEvent).order_by(col(BounceEvent.id).desc()).limit(limit)
    return list(session.exec(query))


def outbox_mail_by_message_id(session: Session, message_id: str) -> OutboxMail | None:
    query = select(OutboxMail).where(OutboxMail.message_id == message_id.strip())
    return session.exec(query).first()
