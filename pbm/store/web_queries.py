"""The web pages' queries: every list a page shows is one bounded page of rows
(`limit` and `offset`), with the count of all of them for the page links."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from sqlmodel import Session, col, func, select

from pbm.store.models import BoardRow, GamePlayer, Move, User
from pbm.store.models_correspondence import MailPreference, PlayerRating, RatingChange
from pbm.store.models_tournament import Tournament, TournamentEntry


class Slice(NamedTuple):
    """One page of a longer list: which rows, and how many there are in all."""

    offset: int
    limit: int

    def after(self, total: int) -> bool:
        return self.offset + self.limit < total


def _games(user_id: int | None, game: str | None, statuses: Sequence[str]):  # type: ignore[no-untyped-def]
    query = select(BoardRow)
    if user_id is not None:
        query = query.join(GamePlayer, col(GamePlayer.game_id) == col(BoardRow.id)).where(
            GamePlayer.user_id == user_id
        )
    if game:
        query = query.where(BoardRow.game == game)
    if statuses:
        query = query.where(col(BoardRow.status).in_(statuses))
    return query


def games_page(
    session: Session,
    part: Slice,
    *,
    user_id: int | None = None,
    game: str | None = None,
    statuses: Sequence[str] = (),
    newest_end_first: bool = False,
) -> tuple[list[BoardRow], int]:
    """Boards (of one player, one game type, in some statuses), newest first."""
    query = _games(user_id, game, statuses)
    total = session.exec(select(func.count()).select_from(query.subquery())).one()
    order = (
        (col(BoardRow.ended_at).desc(), col(BoardRow.id).desc())
        if newest_end_first
        else (col(BoardRow.id).desc(),)
    )
    rows = list(session.exec(query.order_by(*order).offset(part.offset).limit(part.limit)))
    return rows, int(total)


def ratings_page(
    session: Session, game: str, part: Slice
) -> tuple[list[tuple[PlayerRating, User]], int]:
    """The rating table of a game type, best first; hidden profiles are left out by
    the caller's template only by userid, never by address (there is none here)."""
    query = (
        select(PlayerRating, User)
        .join(User, col(User.id) == col(PlayerRating.user_id))
        .where(PlayerRating.game == game, PlayerRating.games > 0)
    )
    total = session.exec(select(func.count()).select_from(query.subquery())).one()
    rows = session.exec(
        query.order_by(col(PlayerRating.value).desc(), col(User.userid_key))
        .offset(part.offset)
        .limit(part.limit)
    )
    return [(r, u) for r, u in rows], int(total)


def ratings_of(session: Session, user_id: int) -> list[PlayerRating]:
    """A player's ratings, one per game type he played (a handful at most)."""
    query = select(PlayerRating).where(PlayerRating.user_id == user_id, PlayerRating.games > 0)
    return list(session.exec(query.order_by(col(PlayerRating.game))))


def rating_history(session: Session, user_id: int, game: str, limit: int) -> list[RatingChange]:
    """The player's last `limit` rating changes on one game type, oldest first."""
    query = (
        select(RatingChange)
        .where(RatingChange.user_id == user_id, RatingChange.game == game)
        .order_by(col(RatingChange.at).desc(), col(RatingChange.id).desc())
        .limit(limit)
    )
    return list(reversed(list(session.exec(query))))


def tournaments_page(
    session: Session, part: Slice, user_id: int | None = None
) -> tuple[list[Tournament], int]:
    """Tournaments (those a player entered), newest first."""
    query = select(Tournament)
    if user_id is not None:
        query = query.join(
            TournamentEntry, col(TournamentEntry.tournament_id) == col(Tournament.id)
        ).where(TournamentEntry.user_id == user_id)
    total = session.exec(select(func.count()).select_from(query.subquery())).one()
    rows = session.exec(
        query.order_by(col(Tournament.id).desc()).offset(part.offset).limit(part.limit)
    )
    return list(rows), int(total)


def tournament_named(session: Session, name: str) -> list[Tournament]:
    return list(session.exec(select(Tournament).where(Tournament.name == name)))


def board_names(session: Session, ids: Sequence[int]) -> dict[int, str]:
    """Board names by game id (a tournament's pairings link their boards)."""
    if not ids:
        return {}
    query = select(BoardRow.id, BoardRow.board).where(col(BoardRow.id).in_(ids))
    return {int(game_id): str(board) for game_id, board in session.exec(query) if game_id}


def moves_page(session: Session, game_id: int, limit: int) -> list[Move]:
    """A board's last `limit` moves, newest first (its feed)."""
    query = (
        select(Move).where(Move.game_id == game_id).order_by(col(Move.number).desc()).limit(limit)
    )
    return list(session.exec(query))


def recent_boards(session: Session, user_id: int, limit: int) -> list[BoardRow]:
    """A player's boards, the one moved last first (his feed and calendar)."""
    query = (
        _games(user_id, None, ())
        .order_by(col(BoardRow.last_move_at).desc(), col(BoardRow.id).desc())
        .limit(limit)
    )
    return list(session.exec(query))


def players_of_games(
    session: Session, ids: Sequence[int]
) -> dict[int, list[tuple[GamePlayer, User]]]:
    """The players of every board in `ids`, by challenge order, in one query (a list
    page shows up to a page of boards)."""
    found: dict[int, list[tuple[GamePlayer, User]]] = {game_id: [] for game_id in ids}
    if not ids:
        return found
    query = (
        select(GamePlayer, User)
        .join(User, col(User.id) == col(GamePlayer.user_id))
        .where(col(GamePlayer.game_id).in_(ids))
        .order_by(col(GamePlayer.game_id), col(GamePlayer.position))
    )
    for gp, user in session.exec(query):
        found[gp.game_id].append((gp, user))
    return found


def hidden_profiles(session: Session, user_ids: Sequence[int]) -> set[int]:
    """Those of `user_ids` who hid their page (pbm.services.accounts.profile)."""
    if not user_ids:
        return set()
    query = select(MailPreference.user_id).where(
        col(MailPreference.user_id).in_(user_ids), col(MailPreference.profile_hidden)
    )
    return set(session.exec(query))


def board_named(session: Session, game: str, board: str) -> BoardRow | None:
    """The board, read without a row lock (queries.game_by_board locks it for a move; a
    read-only transaction may not)."""
    query = select(BoardRow).where(BoardRow.game == game, BoardRow.board == board.lower())
    return session.exec(query).first()
