"""Queries the services share. No commits here: callers own the transaction.

The queries every move runs are built once, at import, with bound parameters: building
a statement and computing its cache key cost more than running it. Those that read
plain columns run on the session's connection (Core), skipping the ORM's per-statement
work; they flush pending changes first, as the ORM's autoflush would.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Executable, Result, bindparam, func, insert
from sqlalchemy import select as sa_select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from pbm.store import claims
from pbm.store.models import (
    BoardRow,
    GamePlayer,
    GameTypeSetting,
    InboundKey,
    InboundMessage,
    Move,
    OutboxMail,
    RateEvent,
    Subscription,
    User,
    UserAddress,
)
from pbm.store.models_correspondence import MailPreference

_ADDRESS = UserAddress.__table__.c  # type: ignore[attr-defined]
_MOVE = Move.__table__  # type: ignore[attr-defined]
_EVENT = RateEvent.__table__.c  # type: ignore[attr-defined]


def core_rows(
    session: Session, statement: Executable, params: Mapping[str, Any]
) -> Result[*tuple[Any, ...]]:
    """Run a prebuilt Core statement in the session's transaction, after its autoflush."""
    session.flush()  # a no-op when nothing is pending
    return session.connection().execute(statement, params)


_USER_BY_KEY = select(User).where(User.userid_key == bindparam("key"))


def userid_key(userid: str) -> str:
    """The form userids are compared in: NFKC, case-folded, NFKC again (case folding can
    undo a composition). `Ａlice`, `ALICE` and `alice` are one userid, so are `Straße` and
    `STRASSE`. For ASCII it is `lower()`, the key older rows were stored with."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", userid).casefold())


def user_by_userid(session: Session, userid: str) -> User | None:
    """The account a typed userid names, normalised as `userid_key` does."""
    key = userid_key(userid)
    user = session.exec(_USER_BY_KEY, params={"key": key}).first()
    if user is None and not userid.isascii() and userid.lower() != key:
        # Rows stored before keys were case-folded hold `lower()` of the userid.
        user = session.exec(_USER_BY_KEY, params={"key": userid.lower()}).first()
    return user


def users_by_address(session: Session, address: str) -> list[User]:
    query = (
        select(User)
        .join(UserAddress, col(UserAddress.user_id) == col(User.id))
        .where(UserAddress.address == address.lower())
    )
    return list(session.exec(query))


_ADDRESSES_OF = (
    sa_select(_ADDRESS.address)
    .where(_ADDRESS.user_id == bindparam("user_id"))
    .order_by(_ADDRESS.position)
)


def addresses_of(session: Session, user_id: int) -> list[str]:
    return list(core_rows(session, _ADDRESSES_OF, {"user_id": user_id}).scalars())


_FIRST_ADDRESSES = (
    sa_select(_ADDRESS.user_id, _ADDRESS.address)
    .where(
        _ADDRESS.user_id.in_(bindparam("user_ids", expanding=True)),
        _ADDRESS.confirmed_at.is_not(None),
    )
    .order_by(_ADDRESS.position.desc())
)


def first_addresses(session: Session, user_ids: Sequence[int]) -> dict[int, str]:
    """Each user's first confirmed address (users without one are left out): pbm mails
    nothing but answers and confirmation requests to an address nobody confirmed."""
    rows = core_rows(session, _FIRST_ADDRESSES, {"user_ids": list(user_ids)})
    # Rows come last position first, so the first position is written last.
    return {user_id: address for user_id, address in rows}


def set_addresses(
    session: Session, user_id: int, addresses: Mapping[str, str], now: datetime
) -> list[UserAddress]:
    """Make `addresses` (address: mailbox key, in order) the user's; an address he had
    keeps its confirmation, a new one waits for it from `now`. Returns the new rows."""
    kept = {
        row.address: row
        for row in session.exec(select(UserAddress).where(UserAddress.user_id == user_id))
    }
    for address, row in list(kept.items()):
        if address not in addresses:
            session.delete(row)
            del kept[address]
    session.flush()
    added: list[UserAddress] = []
    for i, (address, mailbox) in enumerate(addresses.items()):
        row = kept.get(address) or UserAddress(
            user_id=user_id, address=address, mailbox=mailbox, unconfirmed_since=now
        )
        if address not in kept:
            added.append(row)
        row.position = i
        session.add(row)
    session.flush()
    return added


def all_users(session: Session) -> list[User]:
    return list(session.exec(select(User).order_by(User.userid_key)))


_GAME_BY_BOARD = (
    select(BoardRow)
    .where(BoardRow.game == bindparam("game"), BoardRow.board == bindparam("board"))
    .with_for_update()
)


def game_by_board(session: Session, game: str, board: str) -> BoardRow | None:
    """The board, row-locked until the transaction ends where the database can (PostgreSQL),
    so two messages about one board are applied one after the other."""
    return session.exec(_GAME_BY_BOARD, params={"game": game, "board": board.lower()}).first()


def next_board_number(session: Session, game: str) -> int:
    """The next free board number of `game` (101 first, then one past the highest), the
    series held until the transaction ends: daemons sharing PostgreSQL that start boards
    at once take turns, so each gets its own number and none is skipped."""
    claims.serialise(session, f"board-number.{game}")
    query = select(func.max(BoardRow.board_number)).where(BoardRow.game == game)
    highest = session.exec(query).one()
    return max(101, (highest or 100) + 1)


_PLAYERS_OF = (
    select(GamePlayer, User)
    .join(User, col(User.id) == col(GamePlayer.user_id))
    .where(GamePlayer.game_id == bindparam("game_id"))
    .order_by(col(GamePlayer.position))
)


def players_of(session: Session, game_id: int) -> list[tuple[GamePlayer, User]]:
    return [(gp, u) for gp, u in session.exec(_PLAYERS_OF, params={"game_id": game_id})]


_BOARD_WITH_PLAYERS = (
    select(BoardRow, GamePlayer, User)
    .join(GamePlayer, col(GamePlayer.game_id) == col(BoardRow.id))
    .join(User, col(User.id) == col(GamePlayer.user_id))
    .where(BoardRow.game == bindparam("game"), BoardRow.board == bindparam("board"))
    .order_by(col(GamePlayer.position))
    .with_for_update(of=BoardRow)
)


class LoadedBoard(NamedTuple):
    row: BoardRow
    players: list[tuple[GamePlayer, User]]


def board_with_players(session: Session, game: str, board: str) -> LoadedBoard | None:
    """`game_by_board` and `players_of` in one statement (every move needs both), the
    board's row locked for the transaction where the database can."""
    params = {"game": game, "board": board.lower()}
    rows = list(session.exec(_BOARD_WITH_PLAYERS, params=params))
    if not rows:  # no such board (or, never in practice, a board without players)
        row = game_by_board(session, game, board)
        return None if row is None else LoadedBoard(row, players_of(session, row.saved_id))
    return LoadedBoard(rows[0][0], [(gp, user) for _, gp, user in rows])


def mail_preference(session: Session, user_id: int) -> MailPreference | None:
    """A player's mail preferences (digest, format); None while he has set none."""
    query = select(MailPreference).where(MailPreference.user_id == user_id)
    return session.exec(query).first()


def own_mail_preference(session: Session, user_id: int) -> MailPreference:
    """A player's mail preferences to change: his row, or a new one with the defaults,
    in the session either way (the caller sets a field and flushes)."""
    found = mail_preference(session, user_id)
    if found is None:
        found = MailPreference(user_id=user_id)
        session.add(found)
    return found


_PREFERENCE = MailPreference.__table__.c  # type: ignore[attr-defined]


class MailChoice(NamedTuple):
    """How one player reads his board mail (see MailPreference)."""

    digest: bool
    format: str


_CHOICES_OF = sa_select(_PREFERENCE.user_id, _PREFERENCE.digest, _PREFERENCE.format).where(
    _PREFERENCE.user_id.in_(bindparam("among", expanding=True))
)


def mail_choices(session: Session, among: Collection[int]) -> dict[int, MailChoice]:
    """The choices of those of `among` who made any, in one query: a board mail asks
    for its readers' digests and formats together."""
    if not among:
        return {}
    rows = core_rows(session, _CHOICES_OF, {"among": sorted(among)})
    return {user_id: MailChoice(bool(digest), fmt) for user_id, digest, fmt in rows}


def moves_of(session: Session, game_id: int) -> list[Move]:
    query = select(Move).where(Move.game_id == game_id).order_by(col(Move.number))
    return list(session.exec(query))


class MoveRecord(NamedTuple):
    """One stored move as a board mail lists it: read-only, not an ORM object."""

    number: int
    player: int
    text: str
    auto: bool
    echo: str | None = None  # what the rules said of it; None for moves before 0007


_MOVE_RECORDS = (
    sa_select(_MOVE.c.number, _MOVE.c.player, _MOVE.c.text, _MOVE.c.auto, _MOVE.c.echo)
    .where(_MOVE.c.game_id == bindparam("game_id"))
    .order_by(_MOVE.c.number)
)


def move_records(session: Session, game_id: int) -> list[MoveRecord]:
    """The moves in order, read-only: a board mail's move list needs no ORM identity
    map, which costs more than the query."""
    return [MoveRecord._make(r) for r in core_rows(session, _MOVE_RECORDS, {"game_id": game_id})]


_ADD_MOVE = _MOVE.insert()


def add_move(
    session: Session,
    game_id: int,
    number: int,
    player: int,
    text: str,
    auto: bool,
    at: datetime,
    echo: str | None = None,
) -> None:
    """Store one move (with its echo, what the rules said of it): a Core insert, since
    nothing in this transaction needs it as an object, and no flush first (the board's
    pending changes wait for its own flush)."""
    values = {"game_id": game_id, "number": number, "player": player, "text": text}
    values.update(auto=auto, made_at=at, echo=echo)
    session.connection().execute(_ADD_MOVE, values)


def last_move(session: Session, game_id: int) -> Move | None:
    query = select(Move).where(Move.game_id == game_id).order_by(col(Move.number).desc())
    return session.exec(query.limit(1)).first()


# Every board mail asks this, and most boards have no subscriber: their ids by a
# prebuilt Core statement, the accounts then (if any) by one ORM query.
_SUBSCRIBER_IDS = sa_select(col(Subscription.user_id)).where(
    col(Subscription.game_id) == bindparam("game_id"), col(Subscription.kind) == bindparam("kind")
)


def subscribers_of(session: Session, game_id: int, kind: str = "subscribe") -> list[User]:
    """The users subscribed to a board (`kind` "notify": told when it ends), by userid."""
    ids = core_rows(session, _SUBSCRIBER_IDS, {"game_id": game_id, "kind": kind}).scalars()
    wanted = list(ids)
    if not wanted:
        return []
    query = select(User).where(col(User.id).in_(wanted)).order_by(col(User.userid_key))
    return list(session.exec(query))


def subscription(session: Session, game_id: int, user_id: int, kind: str) -> Subscription | None:
    query = select(Subscription).where(
        Subscription.game_id == game_id, Subscription.user_id == user_id, Subscription.kind == kind
    )
    return session.exec(query).first()


def games_of_user(
    session: Session, user_id: int, game: str | None = None, statuses: Sequence[str] = ()
) -> list[BoardRow]:
    query = (
        select(BoardRow)
        .join(GamePlayer, col(GamePlayer.game_id) == col(BoardRow.id))
        .where(GamePlayer.user_id == user_id)
    )
    if game:
        query = query.where(BoardRow.game == game)
    if statuses:
        query = query.where(col(BoardRow.status).in_(statuses))
    return list(session.exec(query.order_by(BoardRow.game, col(BoardRow.id))))


def games_of_type(session: Session, game: str, statuses: Sequence[str] = ()) -> list[BoardRow]:
    query = select(BoardRow).where(BoardRow.game == game)
    if statuses:
        query = query.where(col(BoardRow.status).in_(statuses))
    return list(session.exec(query.order_by(col(BoardRow.id))))


def active_count(session: Session, user_id: int, game: str) -> int:
    query = (
        select(func.count())
        .select_from(BoardRow)
        .join(GamePlayer, col(GamePlayer.game_id) == col(BoardRow.id))
        .where(GamePlayer.user_id == user_id, BoardRow.game == game, BoardRow.status == "active")
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


# Two (kind, key) pairs at most (a userid and a sender): fixed parameters, since an
# expanding IN renders its SQL anew on every run.
_COUNTS_BY_KEY = (
    sa_select(_EVENT.kind, _EVENT.key, func.count())
    .where(_EVENT.kind.in_([bindparam("kind0"), bindparam("kind1")]))
    .where(_EVENT.key.in_([bindparam("key0"), bindparam("key1")]))
    .where(_EVENT.at >= bindparam("since"))
    .group_by(_EVENT.kind, _EVENT.key)
)


def counts_by_key(
    session: Session, pairs: Sequence[tuple[str, str]], since: datetime
) -> dict[tuple[str, str], int]:
    """Recent events for several (kind, key) pairs in one query per two pairs."""
    found: dict[tuple[str, str], int] = {}
    for start in range(0, len(pairs), 2):
        (kind0, key0), (kind1, key1) = (list(pairs[start : start + 2]) * 2)[:2]
        params = {"kind0": kind0, "kind1": kind1, "key0": key0, "key1": key1, "since": since}
        for k, key, n in core_rows(session, _COUNTS_BY_KEY, params):
            found[(k, key)] = int(n)
    return {pair: found.get(pair, 0) for pair in pairs}


_PLAYER_BY_TOKEN = select(GamePlayer).where(GamePlayer.token == bindparam("token"))


def player_by_token(session: Session, token: str) -> GamePlayer | None:
    return session.exec(_PLAYER_BY_TOKEN, params={"token": token}).first()


def issued_message_id(session: Session, message_id: str) -> bool:
    """Whether pbm queued a mail with this Message-ID (a reply may cite only those)."""
    query = select(OutboxMail.id).where(OutboxMail.message_id == message_id).limit(1)
    return session.exec(query).first() is not None


def add_event(session: Session, kind: str, key: str, at: datetime) -> None:
    session.add(RateEvent(kind=kind, key=key, at=at))


_EVENT_TIMES = (
    sa_select(_EVENT.at)
    .where(_EVENT.kind == bindparam("kind"), _EVENT.key == bindparam("key"))
    .where(_EVENT.at >= bindparam("since"))
    .order_by(_EVENT.at)
)


def event_times(session: Session, kind: str, key: str, since: datetime) -> list[datetime]:
    """When the events of one (kind, key) since `since` happened, oldest first."""
    params = {"kind": kind, "key": key, "since": since}
    return list(core_rows(session, _EVENT_TIMES, params).scalars())


_INBOUND = InboundMessage.__table__  # type: ignore[attr-defined]
_INBOUND_ID_OF = sa_select(_INBOUND.c.id).where(_INBOUND.c.message_id == bindparam("message_id"))
# Where the database can skip a duplicate in the insert itself, no savepoint is needed.
_INSERT_INBOUND = {
    name: dialect.insert(_INBOUND)
    .on_conflict_do_nothing(index_elements=["message_id"])
    .returning(_INBOUND.c.id)
    for name, dialect in (("sqlite", sqlite), ("postgresql", postgresql))
}


def add_inbound(session: Session, values: Mapping[str, Any]) -> tuple[int, bool]:
    """Store an inbound message's row unless one with its `message_id` exists; returns
    (id, created). Insert first and let the unique Message-ID refuse a copy: one
    statement in the usual case, a Core insert since nobody reads the row back here."""
    conn = session.connection()
    statement = _INSERT_INBOUND.get(conn.dialect.name)
    if statement is not None:
        created = conn.execute(statement, values).scalar()
        if created is not None:
            return int(created), True
    else:
        try:
            with session.begin_nested():
                result = session.connection().execute(insert(_INBOUND).values(**values))
            key = result.inserted_primary_key
            assert key is not None and key[0] is not None
            return int(key[0]), True
        except IntegrityError:
            pass
    # Known already (or stored meanwhile by another process): that copy wins.
    found = conn.execute(_INBOUND_ID_OF, {"message_id": values["message_id"]}).scalar_one()
    return int(found), False


_INBOUND_KEYS = InboundKey.__table__  # type: ignore[attr-defined]


def add_inbound_keys(session: Session, inbound_id: int, keys: Sequence[str]) -> None:
    """What the stored message `inbound_id` is about, for its order (pbm.commands.order)."""
    if keys:
        rows = [{"inbound_id": inbound_id, "key": key} for key in keys]
        session.connection().execute(insert(_INBOUND_KEYS), rows)
