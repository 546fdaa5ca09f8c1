"""Queries the services share. No commits here: callers own the transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import cast

from sqlalchemy import func
from sqlalchemy import select as sa_select
from sqlmodel import Session, col, select

from pbm.store.models import (
    Game,
    GamePlayer,
    GameTypeSetting,
    Move,
    RateEvent,
    Subscription,
    User,
    UserAddress,
)


def user_by_userid(session: Session, userid: str) -> User | None:
    return session.exec(select(User).where(User.userid_key == userid.lower())).first()


def users_by_address(session: Session, address: str) -> list[User]:
    query = (
        select(User)
        .join(UserAddress, col(UserAddress.user_id) == col(User.id))
        .where(UserAddress.address == address.lower())
    )
    return list(session.exec(query))


def addresses_of(session: Session, user_id: int) -> list[str]:
    query = (
        select(UserAddress.address)
        .where(UserAddress.user_id == user_id)
        .order_by(col(UserAddress.position))
    )
    return list(session.exec(query))


def addresses_of_users(session: Session, user_ids: Sequence[int]) -> dict[int, list[str]]:
    """The addresses of several users in one query, each list in `addresses_of`'s order."""
    found: dict[int, list[str]] = {uid: [] for uid in user_ids}
    query = (
        select(UserAddress.user_id, UserAddress.address)
        .where(col(UserAddress.user_id).in_(list(user_ids)))
        .order_by(col(UserAddress.user_id), col(UserAddress.position))
    )
    for user_id, address in session.exec(query):
        found[user_id].append(address)
    return found


def set_addresses(session: Session, user_id: int, addresses: Sequence[str]) -> None:
    for row in session.exec(select(UserAddress).where(UserAddress.user_id == user_id)):
        session.delete(row)
    session.flush()
    for i, address in enumerate(dict.fromkeys(a.lower() for a in addresses)):
        session.add(UserAddress(user_id=user_id, address=address, position=i))


def all_users(session: Session) -> list[User]:
    return list(session.exec(select(User).order_by(User.userid_key)))


def game_by_board(session: Session, game: str, board: str) -> Game | None:
    """The board, row-locked until the transaction ends where the database can (PostgreSQL),
    so two messages about one board are applied one after the other."""
    query = select(Game).where(Game.game == game, Game.board == board.lower())
    return session.exec(query.with_for_update()).first()


def next_board_number(session: Session, game: str) -> int:
    query = select(func.max(Game.board_number)).where(Game.game == game)
    highest = session.exec(query).one()
    return max(101, (highest or 100) + 1)


def players_of(session: Session, game_id: int) -> list[tuple[GamePlayer, User]]:
    query = (
        select(GamePlayer, User)
        .join(User, col(User.id) == col(GamePlayer.user_id))
        .where(GamePlayer.game_id == game_id)
        .order_by(col(GamePlayer.position))
    )
    return [(gp, u) for gp, u in session.exec(query)]


def moves_of(session: Session, game_id: int) -> list[Move]:
    query = select(Move).where(Move.game_id == game_id).order_by(col(Move.number))
    return list(session.exec(query))


def move_records(session: Session, game_id: int) -> list[Move]:
    """The moves in order as plain read-only rows (attributes as on Move): a board mail's
    move list needs no ORM identity map, which costs more than the query."""
    table = Move.__table__  # type: ignore[attr-defined]
    query = sa_select(table).where(table.c.game_id == game_id).order_by(table.c.number)
    return cast(list[Move], list(session.connection().execute(query)))


def last_move(session: Session, game_id: int) -> Move | None:
    query = select(Move).where(Move.game_id == game_id).order_by(col(Move.number).desc())
    return session.exec(query.limit(1)).first()


def subscribers_of(session: Session, game_id: int, kind: str = "subscribe") -> list[User]:
    query = (
        select(User)
        .join(Subscription, col(Subscription.user_id) == col(User.id))
        .where(Subscription.game_id == game_id, Subscription.kind == kind)
        .order_by(User.userid_key)
    )
    return list(session.exec(query))


def subscription(session: Session, game_id: int, user_id: int, kind: str) -> Subscription | None:
    query = select(Subscription).where(
        Subscription.game_id == game_id, Subscription.user_id == user_id, Subscription.kind == kind
    )
    return session.exec(query).first()


def games_of_user(
    session: Session, user_id: int, game: str | None = None, statuses: Sequence[str] = ()
) -> list[Game]:
    query = (
        select(Game)
        .join(GamePlayer, col(GamePlayer.game_id) == col(Game.id))
        .where(GamePlayer.user_id == user_id)
    )
    if game:
        query = query.where(Game.game == game)
    if statuses:
        query = query.where(col(Game.status).in_(statuses))
    return list(session.exec(query.order_by(Game.game, col(Game.id))))


def games_of_type(session: Session, game: str, statuses: Sequence[str] = ()) -> list[Game]:
    query = select(Game).where(Game.game == game)
    if statuses:
        query = query.where(col(Game.status).in_(statuses))
    return list(session.exec(query.order_by(col(Game.id))))


def active_count(session: Session, user_id: int, game: str) -> int:
    query = (
        select(func.count())
        .select_from(Game)
        .join(GamePlayer, col(GamePlayer.game_id) == col(Game.id))
        .where(GamePlayer.user_id == user_id, Game.game == game, Game.status == "active")
    )
    return int(session.exec(query).one())


def type_setting(session: Session, user_id: int, game: str) -> GameTypeSetting | None:
    query = select(GameTypeSetting).where(
        GameTypeSetting.user_id == user_id, GameTypeSetting.game == game
    )
    return session.exec(query).first()


def settings_of_type(session: Session, game: str) -> list[GameTypeSetting]:
    return list(session.exec(select(GameTypeSetting).where(GameTypeSetting.game == game)))


def count_events(session: Session, kind: str, key: str, since: datetime) -> int:
    query = (
        select(func.count())
        .select_from(RateEvent)
        .where(RateEvent.kind == kind, RateEvent.key == key, RateEvent.at >= since)
    )
    return int(session.exec(query).one())


def counts_by_key(
    session: Session, pairs: Sequence[tuple[str, str]], since: datetime
) -> dict[tuple[str, str], int]:
    """Recent events for several (kind, key) pairs in one query."""
    kinds = {k for k, _ in pairs}
    keys = {key for _, key in pairs}
    query = (
        select(RateEvent.kind, RateEvent.key, func.count())
        .where(col(RateEvent.kind).in_(kinds), col(RateEvent.key).in_(keys))
        .where(RateEvent.at >= since)
        .group_by(RateEvent.kind, RateEvent.key)
    )
    found = {(k, key): int(n) for k, key, n in session.exec(query)}
    return {pair: found.get(pair, 0) for pair in pairs}


def player_by_token(session: Session, token: str) -> GamePlayer | None:
    return session.exec(select(GamePlayer).where(GamePlayer.token == token)).first()


def add_event(session: Session, kind: str, key: str, at: datetime) -> None:
    session.add(RateEvent(kind=kind, key=key, at=at))
