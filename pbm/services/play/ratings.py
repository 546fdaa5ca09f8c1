"""Ratings per game type: pbmserv's rating (the one lists rank by) and Glicko-2 beside it.

A game is rated once, when it ends (`rate_finished`, a game-end handler: see
pbm.services.play.endings); the change of every player is kept in `rating_changes`, so the
end-of-game mail, `history` and a full `recompute` (which replays every rated game in the
order they ended) agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlmodel import Session, col, delete, select

from pbm.ratings import glicko2, pbmserv
from pbm.store import queries
from pbm.store.models import BoardRow, User
from pbm.store.models_correspondence import PlayerRating, RatingChange
from pbm.texts import phrase

if TYPE_CHECKING:
    from pbm.services.context import Context
    from pbm.services.play.boards import Board


def rating_of(session: Session, user_id: int, game: str) -> PlayerRating:
    """The player's ratings for `game` (a new, unsaved start rating if he has none)."""
    found = session.exec(
        select(PlayerRating).where(PlayerRating.user_id == user_id, PlayerRating.game == game)
    ).first()
    return found or PlayerRating(user_id=user_id, game=game)


def ratings_of_type(session: Session, game: str) -> list[tuple[PlayerRating, User]]:
    query = (
        select(PlayerRating, User)
        .where(PlayerRating.game == game, PlayerRating.user_id == User.id)
        .order_by(col(PlayerRating.value).desc(), col(User.userid_key))
    )
    return [(r, u) for r, u in session.exec(query)]


def scores_of(row: BoardRow, players: int) -> list[float] | None:
    """Each player's clipped result (1, 0.5, 0), or None for a game without a result."""
    if row.result == "tie":
        return [0.5] * players
    if row.result == "won" and row.winner is not None:
        return [1.0 if i == row.winner else 0.0 for i in range(players)]
    return None


def rate_row(session: Session, row: BoardRow, user_ids: Sequence[int]) -> list[RatingChange]:
    """Rate one finished game (once: a second call finds its changes and does nothing)."""
    if not row.rated or row.status != "finished":
        return []
    done = session.exec(select(RatingChange).where(RatingChange.game_id == row.id)).all()
    if done:
        return list(done)
    scores = scores_of(row, len(user_ids))
    if scores is None or len(user_ids) < 2:
        return []
    held = [rating_of(session, uid, row.game) for uid in user_ids]
    old = [pbmserv.Rating(r.value, r.games) for r in held]
    olds = [glicko2.Glicko(r.glicko, r.glicko_rd, r.glicko_volatility) for r in held]
    if len(held) == 2:
        new = list(pbmserv.rate_game(old[0], old[1], scores[0]))
    else:
        new = pbmserv.rate_multiplayer(old, scores)
    # Glicko-2: one rating period per game, every other player an opponent.
    newg = [
        glicko2.update(olds[i], [(olds[j], _pair_score(scores, i, j)) for j in _others(i, held)])
        for i in range(len(held))
    ]
    at = row.ended_at or row.last_move_at
    changes = []
    for i, rating in enumerate(held):
        change = RatingChange(
            game_id=row.saved_id,
            user_id=user_ids[i],
            game=row.game,
            score=scores[i],
            before=rating.value,
            after=new[i].value,
            games_after=new[i].games,
            glicko_before=rating.glicko,
            glicko_after=newg[i].rating,
            at=at,
        )
        rating.value, rating.games = new[i].value, new[i].games
        rating.glicko, rating.glicko_rd = newg[i].rating, newg[i].rd
        rating.glicko_volatility = newg[i].volatility
        rating.won += scores[i] == 1.0
        rating.lost += scores[i] == 0.0
        rating.ties += scores[i] == 0.5
        session.add(rating)
        session.add(change)
        changes.append(change)
    session.flush()
    return changes


def _others(i: int, held: Sequence[object]) -> list[int]:
    return [j for j in range(len(held)) if j != i]


def _pair_score(scores: Sequence[float], i: int, j: int) -> float:
    if scores[i] == scores[j]:
        return 0.5
    return 1.0 if scores[i] > scores[j] else 0.0


def rate_finished(ctx: Context, board: Board) -> list[RatingChange]:
    """Rate a board that has just ended (a game-end handler, wired in pbm/app.py)."""
    ctx.session.add(board.row)
    ctx.session.flush()
    return rate_row(ctx.session, board.row, [u.saved_id for _, u in board.players])


def rating_lines(ctx: Context, board: Board) -> list[str]:
    """pbmserv's lines after the result: a rating per player, or "not rated"."""
    if board.active or board.row.status != "finished":
        return []
    if not board.row.rated:
        return [phrase("rating_unrated")]
    changes = {
        c.user_id: c
        for c in ctx.session.exec(select(RatingChange).where(RatingChange.game_id == board.id))
    }
    lines = []
    for _, user in board.players:
        change = changes.get(user.saved_id)
        if change is None:
            continue
        before = pbmserv.Rating(change.before).shown
        after = pbmserv.Rating(change.after, change.games_after)
        if after.provisional:
            lines.append(phrase("rating_provisional", userid=user.userid, rating=after.shown))
        elif after.shown > before:
            lines.append(phrase("rating_up", userid=user.userid, old=before, new=after.shown))
        elif after.shown < before:
            lines.append(phrase("rating_down", userid=user.userid, old=before, new=after.shown))
        else:
            lines.append(phrase("rating_is", userid=user.userid, rating=after.shown))
    return lines


def recompute(session: Session, game: str | None = None) -> int:
    """Forget every rating (of one game type) and rate the finished games again in the
    order they ended. Returns the number of games rated."""
    for table in (RatingChange, PlayerRating):
        forget = delete(table)
        if game is not None:
            forget = forget.where(col(table.game) == game)
        session.exec(forget)
    session.flush()
    finished = select(BoardRow).where(BoardRow.status == "finished", col(BoardRow.rated).is_(True))
    if game is not None:
        finished = finished.where(BoardRow.game == game)
    rows = sorted(session.exec(finished), key=lambda r: (r.ended_at or r.last_move_at, r.saved_id))

    count = 0
    for row in rows:
        players = queries.players_of(session, row.saved_id)
        if rate_row(session, row, [u.saved_id for _, u in players]):
            count += 1
    return count


def snapshot(session: Session) -> list[tuple[str, str, int, float, float]]:
    """Every rating, for comparing two computations: (game, userid, games, pbmserv, glicko)."""
    rows = session.exec(select(PlayerRating, User).where(PlayerRating.user_id == User.id)).all()
    return sorted(
        (r.game, u.userid, r.games, round(r.value, 6), round(r.glicko, 6)) for r, u in rows
    )


def forget_rating(ctx: Context, board: Board) -> None:
    """A finished board reopened (the administrator's undo): its rating never happened, so
    every rating of the game type is rebuilt without it."""
    ctx.session.add(board.row)
    ctx.session.flush()
    recompute(ctx.session, board.row.game)
