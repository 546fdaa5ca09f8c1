"""How a board ends, written once: `finish` (a result), `remove` (no result, unrated) and
`player_leaves` (resignation, a forfeit on time, a tournament withdrawal).

What else must happen when a board ends (ratings, tournament progress, the next game
of a match) belongs to the services that own it: they are handlers on one list,
registered in order by the composition root (`GAME_END_HANDLERS` in pbm/app.py). This
module calls them without knowing them, so the services below never call back up into
the ones that start games.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlmodel import col, select

from pbm.services.context import Context, ReplyKind
from pbm.services.correspondence.clocks import charged, time_control
from pbm.services.mailing.board_mail import mail_reader, readers
from pbm.services.play.boards import Board, save_board
from pbm.store import queries
from pbm.store.models import EndReason, Subscription
from pbm.store.models_tournament import Tournament, TournamentPairing
from pbm.texts import phrase, wrap

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GameEnd:
    """A board has just ended: with a result (`removed` False), or removed unrated."""

    board: Board
    removed: bool = False
    loser_id: int | None = None  # a removed board's decliner: a tournament scores his loss


GameEndHandler = Callable[[Context, GameEnd], None]
_HANDLERS: list[GameEndHandler] = []


def on_game_end(handler: GameEndHandler) -> GameEndHandler:
    """Register `handler` to run, in registration order, whenever a board ends."""
    if handler not in _HANDLERS:
        _HANDLERS.append(handler)
    return handler


def _ended(ctx: Context, event: GameEnd) -> None:
    mark = len(ctx.replies)
    for handler in _HANDLERS:
        handler(ctx, event)
    # The handlers run before the board's own mails are written (by finish's caller):
    # their mails are marked to be sent after those (pbm.services.context.in_order).
    for reply in ctx.replies[mark:]:
        if reply.after_board is None:
            reply.after_board = event.board.id


def finish(
    ctx: Context,
    board: Board,
    winner: int | None,
    end: EndReason,
    reason: str,
    scores: Sequence[int] | None = None,
) -> None:
    """End the board with a result (`winner` a seat index, None: a tie): `end` says
    how, `reason` is the sentence its readers see."""
    row = board.row
    row.status = "finished"
    row.result = "tie" if winner is None else "won"
    row.winner = winner
    row.end_reason = end
    row.result_reason = reason
    row.scores = list(scores) if scores is not None else None
    row.ended_at = ctx.now()
    row.proposal = None
    row.proposal_votes = None
    for gp, _ in board.players:
        gp.queued_move = None
        gp.submitted_move = None
        gp.conditional = None
    save_board(ctx, board)
    log.info("%s ended: %s", board.label, reason)
    _ended(ctx, GameEnd(board))


def everyone_moved(ctx: Context, board: Board) -> bool:
    """Whether every player has moved once: before, a player who leaves the board (a
    resignation, a tournament withdrawal, a forfeit on time) declines it, and it is
    removed unrated."""
    movers = {m.player for m in queries.moves_of(ctx.session, board.id)}
    return len(movers) >= len(board.players)


def remove(
    ctx: Context,
    board: Board,
    end: EndReason,
    reason: str,
    loser_id: int | None = None,
    note: str = "",
) -> None:
    """End a board unrated and without a result, and mail its readers why; `note` (the
    declining player's comment, signed) comes after."""
    board.row.status = "removed"
    board.row.rated = False
    board.row.ended_at = ctx.now()
    board.row.end_reason = end
    board.row.result_reason = reason
    save_board(ctx, board)
    body = reason + "\n" + removed_counts(ctx, board, loser_id) + "\n"
    if note:
        body += "\n" + note.rstrip() + "\n"
    subject = phrase("subject_removed", game=board.rules.title, board=board.row.board)
    for reader in readers(ctx, board):
        mail_reader(
            ctx, board, reader, subject=subject, body=body, kind=ReplyKind.REMOVED, drawn=False
        )
    _ended(ctx, GameEnd(board, removed=True, loser_id=loser_id))


def removed_counts(ctx: Context, board: Board, loser_id: int | None) -> str:
    """What a removed board counts for: nothing, or, on a running tournament's board,
    what the tournament scores it as (pbm.services.tournaments.results.game_ended: a loss for
    the player who declined it, else a drawn game)."""
    query = (
        select(Tournament.name)
        .join(TournamentPairing, col(TournamentPairing.tournament_id) == Tournament.id)
        .where(TournamentPairing.game_id == board.id, Tournament.status == "running")
    )
    tournament = ctx.session.exec(query).first()
    if tournament is None:
        return phrase("board_removed_body")
    if loser_id is None:
        return wrap(phrase("board_removed_tournament_draw", tournament=tournament), reflow=True)
    loser = next(u.userid for _, u in board.players if u.id == loser_id)
    others = " and ".join(u.userid for _, u in board.players if u.id != loser_id)
    text = phrase(
        "board_removed_tournament_loss", tournament=tournament, loser=loser, others=others
    )
    return wrap(text, reflow=True)


def player_leaves(
    ctx: Context,
    board: Board,
    index: int,
    end: EndReason,
    reason: str,
    *,
    clock_ran: bool = False,
) -> None:
    """Player `index` leaves the game (resigns, forfeits, withdraws): he keeps reading
    the board as a subscriber, and it ends (won by the one player left; with more than
    two seats, since the game protocol cannot skip a seat, without a winner).
    `clock_ran`: his clock ran until now (a forfeit), so his time used shows it."""
    gp, user = board.players[index]
    gp.resigned = True
    if clock_ran:
        control = time_control(board.row)
        idle = charged(ctx.session, control, user.saved_id, board.row.last_move_at, ctx.now())
        gp.seconds_used += idle.total_seconds()
    if queries.subscription(ctx.session, board.id, user.saved_id, "subscribe") is None:
        ctx.session.add(Subscription(game_id=board.id, user_id=user.saved_id))
    remaining = [i for i, (p, _) in enumerate(board.players) if not p.resigned]
    finish(ctx, board, remaining[0] if len(remaining) == 1 else None, end, reason)
