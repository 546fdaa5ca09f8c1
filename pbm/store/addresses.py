"""Queries of consent (pbm.services.accounts.consent): addresses by mailbox and by confirmation
token, and the refusals a mailbox has sent. No commits here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import bindparam
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from pbm.store.models import AddressRefusal, BoardRow, GamePlayer, User, UserAddress
from pbm.store.models_correspondence import MailPreference
from pbm.store.models_tournament import TournamentEntry
from pbm.store.queries import core_rows


def rows_of(session: Session, user_id: int) -> list[UserAddress]:
    query = (
        select(UserAddress)
        .where(UserAddress.user_id == user_id)
        .order_by(col(UserAddress.position))
    )
    return list(session.exec(query))


def by_confirm_token(session: Session, token: str) -> UserAddress | None:
    query = select(UserAddress).where(UserAddress.confirm_token == token)
    return session.exec(query).first()


def confirmed_in(session: Session, mailbox: str) -> list[UserAddress]:
    """The confirmed addresses of every account that reach `mailbox`."""
    query = select(UserAddress).where(
        UserAddress.mailbox == mailbox, col(UserAddress.confirmed_at).is_not(None)
    )
    return list(session.exec(query))


# Asked for every mail pbm queues: a prebuilt Core statement, not an ORM query.
_CONFIRMED_AMONG = sa_select(col(UserAddress.mailbox)).where(
    col(UserAddress.mailbox).in_(bindparam("mailboxes", expanding=True)),
    col(UserAddress.confirmed_at).is_not(None),
)


def confirmed_mailboxes(session: Session, mailboxes: Sequence[str]) -> set[str]:
    """Those of `mailboxes` that some account has confirmed."""
    if not mailboxes:
        return set()
    found = core_rows(session, _CONFIRMED_AMONG, {"mailboxes": list(mailboxes)})
    return set(found.scalars())


def refusers_of(session: Session, mailbox: str) -> set[str]:
    """The userid keys of the accounts `mailbox` said "not me" to."""
    query = (
        select(AddressRefusal.userid_key)
        .where(AddressRefusal.mailbox == mailbox)
        .order_by(col(AddressRefusal.refused_at))
    )
    return set(session.exec(query))


def add_refusal(session: Session, mailbox: str, userid_key: str, at: datetime) -> None:
    if userid_key not in refusers_of(session, mailbox):
        session.add(AddressRefusal(mailbox=mailbox, userid_key=userid_key, refused_at=at))


# Asked of every mail pbm runs (pbm.services.accounts.consent.ask_unasked_sender), and
# nearly always empty: a prebuilt Core statement of ids costs a fraction of an ORM select.
_UNASKED = sa_select(col(UserAddress.id)).where(
    col(UserAddress.mailbox) == bindparam("mailbox"),
    col(UserAddress.confirmed_at).is_(None),
    col(UserAddress.unconfirmed_since).is_(None),
)


def unasked_in(session: Session, mailbox: str) -> list[UserAddress]:
    """The addresses reaching `mailbox` that are from before consent and were never
    asked to confirm (`UserAddress.unconfirmed_since`)."""
    ids = core_rows(session, _UNASKED, {"mailbox": mailbox}).scalars().all()
    return [row for i in ids if (row := session.get(UserAddress, i)) is not None]


def unconfirmed_users(
    session: Session, waiting_before: datetime, user_id: int | None = None
) -> list[User]:
    """Accounts (not bots, not removed; `user_id` alone if given) created before
    `waiting_before` that have no confirmed address, none that has waited for its
    owner only since then or was never asked (from before consent), and play no
    started board: such a player is kept until his boards end (listing him made every
    run of the job say so again, every five minutes in the log and, from cron, in a
    mail)."""
    confirmed = select(UserAddress.user_id).where(col(UserAddress.confirmed_at).is_not(None))
    waiting = select(UserAddress.user_id).where(
        col(UserAddress.unconfirmed_since).is_(None)
        | (col(UserAddress.unconfirmed_since) >= waiting_before)
    )
    playing = (
        select(GamePlayer.user_id)
        .join(BoardRow, col(BoardRow.id) == col(GamePlayer.game_id))
        .where(col(BoardRow.status) == "active", col(BoardRow.move_count) > 0)
    )
    query = (
        select(User)
        .where(
            col(User.created_at) < waiting_before,
            col(User.bot).is_(False),
            col(User.disabled).is_(False),
            col(User.id).not_in(confirmed),
            col(User.id).not_in(waiting),
            col(User.id).not_in(playing),
        )
        .order_by(col(User.id))
    )
    if user_id is not None:
        query = query.where(User.id == user_id)
    return list(session.exec(query))


def acquainted(session: Session, user_id: int, other_ids: Sequence[int]) -> set[int]:
    """Those of `other_ids` who share a board (as players) or a tournament (as entrants)
    with `user_id`."""
    mine_games = select(GamePlayer.game_id).where(GamePlayer.user_id == user_id)
    boards = select(GamePlayer.user_id).where(
        col(GamePlayer.game_id).in_(mine_games), col(GamePlayer.user_id).in_(list(other_ids))
    )
    mine_cups = select(TournamentEntry.tournament_id).where(TournamentEntry.user_id == user_id)
    cups = select(TournamentEntry.user_id).where(
        col(TournamentEntry.tournament_id).in_(mine_cups),
        col(TournamentEntry.user_id).in_(list(other_ids)),
    )
    return set(session.exec(boards)) | set(session.exec(cups))


def open_to_anyone(session: Session, user_ids: Sequence[int]) -> set[int]:
    """Those of `user_ids` who take `message`s from players they share nothing with."""
    query = select(MailPreference.user_id).where(
        col(MailPreference.user_id).in_(list(user_ids)), col(MailPreference.messages_anyone)
    )
    return set(session.exec(query))
