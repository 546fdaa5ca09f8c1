"""A tournament board that waits for a player on vacation: his clock stops, so nothing
else would tell his opponent why the board, and the round with it, stands still. The
periodic job (pbm.jobs) asks `tell_waiting` of every board; a `JobMark` per board and
vacation makes it tell once, however often the job runs."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import select

from pbm.services.context import Context
from pbm.services.correspondence.vacation import running, running_end
from pbm.services.play.boards import Board
from pbm.services.tournaments.lookup import pairing_of_board
from pbm.services.tournaments.notices import tell
from pbm.store.models_correspondence import JobMark
from pbm.store.models_tournament import Tournament
from pbm.texts import phrase, prose

# The JobMark kind of a notice sent (`JobMark.kind` holds at most 16 characters).
MARK_KIND = "vacation-wait"


def tell_waiting(ctx: Context, board: Board) -> bool:
    """Tell the opponents of the player to move, once per vacation of his (and end date),
    that the tournament board waits for him; whether it told them now."""
    row = board.row
    if not board.active or row.to_move is None:
        return False
    away = board.players[row.to_move][1]
    vacation = running(ctx.session, away, ctx.now())  # asked first: it is mostly None
    until = None if vacation is None else running_end(vacation)
    if vacation is None or vacation.started_at is None or until is None:
        return False
    pairing = pairing_of_board(ctx.session, board.id)
    t = None if pairing is None else ctx.session.get(Tournament, pairing.tournament_id)
    if pairing is None or pairing.score is not None or t is None or t.status != "running":
        return False
    key = f"{board.id}:{away.saved_id}:{_stamp(vacation.started_at)}:{_stamp(until)}"
    query = select(JobMark).where(JobMark.kind == MARK_KIND, JobMark.key == key)
    if ctx.session.exec(query).first() is not None:
        return False
    ctx.session.add(JobMark(kind=MARK_KIND, key=key, at=ctx.now()))
    body = prose(
        "tournament_vacation_wait",
        userid=away.userid,
        until=f"{until:%Y-%m-%d %H:%M} UTC",
        board=row.board,
        name=t.name,
        round=pairing.round,
    )
    opponents = [user for _gp, user in board.players if user.id != away.id]
    subject = phrase("subject_tournament_waits", name=t.name, board=row.board)
    tell(ctx, t, opponents, subject, body + "\n")
    ctx.session.flush()
    return True


def _stamp(when: datetime) -> int:
    return int(when.timestamp())


__all__ = ["MARK_KIND", "tell_waiting"]
