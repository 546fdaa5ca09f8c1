"""Queries about bots: their settings rows, and the boards where one has to act."""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import func
from sqlalchemy.orm import aliased
from sqlmodel import Session, col, select

from pbm.store.models import BoardRow, GamePlayer, User
from pbm.store.models_bots import Bot


class BotTurn(NamedTuple):
    """A board where a bot has something to do, as it stood when it was read."""

    game_id: int
    user_id: int  # the bot's account
    position: int  # its challenge-order index on the board
    move_count: int  # the board's move count then: the move must still follow it
    kind: str  # "move" (its turn) or "draw" (a draw proposal it has not answered)
    waiting: int | None = None  # the board's first human player by seat (None: bots only)


def bot_of(session: Session, user_id: int) -> Bot | None:
    return session.exec(select(Bot).where(Bot.user_id == user_id)).first()


def all_bots(session: Session) -> list[tuple[Bot, User]]:
    query = select(Bot, User).join(User, col(User.id) == col(Bot.user_id)).order_by(User.userid_key)
    return [(bot, user) for bot, user in session.exec(query)]


def active_boards(session: Session, user_id: int) -> int:
    """The user's active boards, in every game."""
    query = (
        select(func.count())
        .select_from(BoardRow)
        .join(GamePlayer, col(GamePlayer.game_id) == col(BoardRow.id))
        .where(GamePlayer.user_id == user_id, BoardRow.status == "active")
    )
    return int(session.exec(query).one())


def boards_against_bots(session: Session, user_id: int) -> int:
    """The user's active boards on which another player is a bot."""
    other = aliased(GamePlayer)
    query = (
        select(func.count(func.distinct(col(BoardRow.id))))
        .select_from(BoardRow)
        .join(GamePlayer, col(GamePlayer.game_id) == col(BoardRow.id))
        .join(other, col(other.game_id) == col(BoardRow.id))
        .join(User, col(User.id) == col(other.user_id))
        .where(
            GamePlayer.user_id == user_id,
            BoardRow.status == "active",
            col(other.user_id) != user_id,
            col(User.bot),
        )
    )
    return int(session.exec(query).one())


def _first_humans(session: Session, game_ids: set[int]) -> dict[int, int]:
    """Each board's human player first in seat order, by board id."""
    query = (
        select(GamePlayer)
        .join(User, col(User.id) == col(GamePlayer.user_id))
        .where(col(GamePlayer.game_id).in_(game_ids), col(User.bot).is_(False))
        .order_by(col(GamePlayer.position))
    )
    first: dict[int, int] = {}
    for gp in session.exec(query):
        first.setdefault(gp.game_id, gp.user_id)
    return first


def due_turns(session: Session) -> list[BotTurn]:
    """Every active board where an enabled bot is to move (oldest move first), or has
    another player's draw or undo proposal to answer, with the human player waiting."""
    base = (
        select(BoardRow, GamePlayer)
        .join(GamePlayer, col(GamePlayer.game_id) == col(BoardRow.id))
        .join(User, col(User.id) == col(GamePlayer.user_id))
        .join(Bot, col(Bot.user_id) == col(User.id))
        .where(BoardRow.status == "active", col(User.bot), col(Bot.disabled).is_(False))
    )
    turns: list[BotTurn] = []
    moving = base.where(col(BoardRow.to_move) == col(GamePlayer.position)).order_by(
        col(BoardRow.last_move_at), col(BoardRow.id)
    )
    for game, gp in session.exec(moving):
        turns.append(BotTurn(game.saved_id, gp.user_id, gp.position, game.move_count, "move"))
    # A proposal made while the bot is to move is answered with its move (it accepts a
    # draw instead of moving, or moves, which clears the proposal as a player's does).
    proposed = base.where(
        col(BoardRow.proposal).in_(("draw", "undo")),
        col(BoardRow.to_move) != col(GamePlayer.position),
    ).order_by(col(BoardRow.id))
    for game, gp in session.exec(proposed):
        if gp.position not in (game.proposal_votes or []):
            kind = game.proposal or ""
            turns.append(BotTurn(game.saved_id, gp.user_id, gp.position, game.move_count, kind))
    if not turns:
        return turns
    humans = _first_humans(session, {turn.game_id for turn in turns})
    return [turn._replace(waiting=humans.get(turn.game_id)) for turn in turns]
