"""What ends a tournament's games: a board that ended (`game_ended`, a game-end
handler of pbm.services.play.endings), a player's withdrawal, the tournament's cancellation."""

from __future__ import annotations

from sqlmodel import select

from pbm.services.context import Context
from pbm.services.correspondence.timeouts import forfeit
from pbm.services.play.boards import board_by_id
from pbm.services.play.endings import GameEnd
from pbm.services.play.moves import abort
from pbm.services.tournaments.lookup import (
    TournamentError,
    entries,
    entry_of,
    pairing_of_board,
    pairings,
)
from pbm.services.tournaments.notices import tell, with_organiser
from pbm.services.tournaments.rounds import advance
from pbm.store.models import EndReason, User
from pbm.store.models_tournament import Tournament
from pbm.texts import phrase, prose


def game_ended(ctx: Context, end: GameEnd) -> None:
    """A game-end handler (pbm.services.play.endings): a tournament board that ended (finished
    or removed) records its result and starts what comes next. `end.loser_id` names a
    player who declined the board (a resignation before everyone moved): he loses it."""
    board, loser_id = end.board, end.loser_id
    pairing = pairing_of_board(ctx.session, board.id)
    if pairing is None or pairing.score is not None:
        return
    # Locked, so two boards of a round ending at once cannot both miss the round's end
    # (SQLite's BEGIN IMMEDIATE serialises anyway; other databases need the row lock).
    query_t = select(Tournament).where(Tournament.id == pairing.tournament_id).with_for_update()
    t = ctx.session.exec(query_t).first()
    if t is None or t.status != "running":
        return
    row = board.row
    if loser_id is not None:
        pairing.score, pairing.how = (0.0 if loser_id == pairing.first_id else 1.0), "game"
    elif row.status == "removed":
        pairing.score, pairing.how = 0.5, "aborted"
    elif row.result == "won" and row.winner is not None:
        winner = board.players[row.winner][1].id
        pairing.score, pairing.how = (1.0 if winner == pairing.first_id else 0.0), "game"
    else:
        pairing.score, pairing.how = 0.5, "game"
    ctx.session.add(pairing)
    ctx.session.flush()
    advance(ctx, t)


def withdraw(ctx: Context, t: Tournament, user: User) -> None:
    """The player is not paired again; his boards still being played are forfeited, or
    removed unrated where not everyone has moved yet (as a resignation then is). His
    own mailed `tournament leave` is answered at the address it came from."""
    if t.status != "running":
        raise TournamentError(phrase("tournament_not_running", name=t.name))
    entry = entry_of(ctx.session, t, user)
    if entry is None or entry.withdrawn:
        raise TournamentError(phrase("tournament_not_in", name=t.name, userid=user.userid))
    if entry.eliminated:  # no board and no pairing left; the table keeps him "(out)"
        raise TournamentError(phrase("tournament_out_already", name=t.name, userid=user.userid))
    entry.withdrawn = True
    ctx.session.add(entry)
    ctx.session.flush()
    # Told before his boards are forfeited: a forfeit may end the tournament, and the
    # final standings, mailed to him too, must come after (not above) his withdrawal.
    tell(
        ctx,
        t,
        [user],
        phrase("subject_tournament", name=t.name),
        prose("tournament_withdrawn", name=t.name, userid=user.userid) + "\n",
        answering=user,
    )
    reason = phrase("tournament_withdrew", userid=user.userid, name=t.name)
    for p in pairings(ctx.session, t):
        if p.score is not None or p.game_id is None or user.id not in (p.first_id, p.second_id):
            continue
        board = board_by_id(ctx, p.game_id)
        if not board.active:
            continue
        # Ends the board (removed unrated before everyone has moved, as a resignation
        # then), and game_ended scores it as his loss.
        index = board.index_of(user.id)
        assert index is not None
        forfeit(ctx, board, index, reason, EndReason.WITHDREW)
    # Waiting pairings of the round may now be settled (a knockout bye-winner withdrawn).
    if t.status == "running":
        advance(ctx, t)


def check_cancellable(t: Tournament) -> None:
    """TournamentError when `t` is over already: nothing is left to cancel."""
    if t.status in ("finished", "cancelled"):
        raise TournamentError(phrase("tournament_over", name=t.name, status=t.status))


def cancel(ctx: Context, t: Tournament, answering: User | None = None) -> None:
    """Stop a tournament: its boards still being played are removed unrated, and the
    entrants and the organiser are told (the CLI's `cancel` and the organiser's by mail);
    `answering`, the organiser whose mailed `cancel` it is, where his mail came from."""
    check_cancellable(t)
    t.status = "cancelled"
    t.ended_at = ctx.now()
    ctx.session.add(t)
    ctx.session.flush()
    for p in pairings(ctx.session, t):
        if p.game_id is not None and p.score is None:
            board = board_by_id(ctx, p.game_id)
            if board.active:
                abort(ctx, board, phrase("tournament_cancelled", name=t.name))
    tell(
        ctx,
        t,
        with_organiser(ctx, t, [u for _, u in entries(ctx.session, t)]),
        phrase("subject_tournament", name=t.name),
        prose("tournament_cancelled", name=t.name) + "\n",
        answering=answering,
    )


__all__ = ["cancel", "check_cancellable", "game_ended", "withdraw"]
