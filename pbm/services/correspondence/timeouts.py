"""Deadlines of one board: what is due (nothing, a reminder, a forfeit) and doing it.

Checked by the periodic job and before a move is played, so a forfeit happens at the
same moment whether or not the job ran while the server was down.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from sqlmodel import col, func, select

from pbm.services.context import Context, ReplyKind
from pbm.services.correspondence.clocks import (
    Limit,
    allowances,
    charged,
    days_text,
    span_text,
    time_control,
)
from pbm.services.correspondence.vacation import left_days
from pbm.services.mailing.board_mail import board_facts, mail_board, mail_reader, title_for
from pbm.services.mailing.mail_html import in_words
from pbm.services.play.board_text import subject_for, summary
from pbm.services.play.boards import Board, save_board
from pbm.services.play.endings import everyone_moved, finish, player_leaves, remove
from pbm.store.models import EndReason
from pbm.store.models_correspondence import JobMark
from pbm.texts import phrase, render
from pbm.timecontrol import TimeControl

DAY = timedelta(days=1)
# The job runs every 5 minutes: a forfeit this far past its deadline was missed (the
# server down, the jobs not run), and its mail says so.
LATE = timedelta(hours=1)


@dataclass(frozen=True)
class Due:
    action: str  # "nag" | "forfeit"
    index: int  # the player concerned (challenge order)
    reason: str = ""  # a forfeit's first line
    draw: bool = False  # a pending draw is accepted instead (pbmserv)


def due(ctx: Context, board: Board) -> Due | None:
    """What the board's time rules ask for now, if anything."""
    row = board.row
    if not board.active or row.to_move is None:
        return None
    index = row.to_move
    _gp, user = board.players[index]
    control = time_control(row)
    idle = charged(ctx.session, control, user.saved_id, row.last_move_at, ctx.now())
    over = [(lim, allowed) for lim, allowed in allowances(ctx.session, board) if idle >= allowed]
    if over:
        limit, allowed = over[0]
        reason = _forfeit_reason(limit, control)
        if idle - allowed >= LATE:
            reason += "\n" + phrase("forfeit_late", late=span_text(idle - allowed))
        return Due("forfeit", index, reason, draw=row.proposal == "draw")
    if (
        idle >= timedelta(days=control.nag_days)
        and not nagged(ctx, board)
        and nags_today(ctx, board) < ctx.config.reminders_per_board_day
    ):
        return Due("nag", index)
    return None


def _forfeit_reason(limit: Limit, control: TimeControl) -> str:
    """The rule that ran out, with the time it allows (not the time it took to notice)."""
    if limit is Limit.BANK:
        return phrase("forfeit_bank")
    if limit is Limit.IDLE:
        return phrase("forfeit_idle", days=days_text(control.forfeit_days))
    return phrase("forfeit_total", days=days_text(control.total_days or 0))


def _nag_key(board: Board) -> str:
    return f"{board.id}:{board.row.move_count}:{board.row.to_move}"


def nagged(ctx: Context, board: Board) -> bool:
    """Whether this move's reminder went out already (one per board and move number)."""
    query = select(JobMark).where(JobMark.kind == "nag", JobMark.key == _nag_key(board))
    return ctx.session.exec(query).first() is not None


def nags_today(ctx: Context, board: Board) -> int:
    """The reminders this board sent in the last day (at most `reminders_per_board_day`,
    whatever reminder time a board asked for)."""
    since = ctx.now() - timedelta(days=1)
    query = select(func.count()).where(
        JobMark.kind == "nag", col(JobMark.key).startswith(f"{board.id}:"), JobMark.at >= since
    )
    return int(ctx.session.exec(query).one())


def apply(ctx: Context, board: Board, what: Due) -> None:
    if what.action == "nag":
        send_nag(ctx, board)
    elif what.draw and everyone_moved(ctx, board):
        # pbmserv: at the forfeit time the players who did not vote accept the draw
        # (before everyone has moved, time running out declines the board: `forfeit`).
        finish(ctx, board, None, EndReason.DRAW_AGREED, phrase("draw_agreed"))
        save_board(ctx, board)
        mail_board(ctx, board)
    else:
        forfeit(ctx, board, what.index, what.reason)


def forfeit(
    ctx: Context, board: Board, index: int, reason: str, end: EndReason = EndReason.FORFEIT
) -> None:
    """The player loses on time (or by `end`, a withdrawal): the game ends, is rated,
    and everyone is told (his clock ran until now: the timing block shows the time he
    let pass). Before every player has moved once, leaving declines the board as a
    resignation then would: it is removed unrated (a tournament scores his loss), so a
    challenge left unanswered moves no rating, and nobody gains rating by challenging
    players who are away."""
    user = board.players[index][1]
    if not everyone_moved(ctx, board):
        if end is EndReason.FORFEIT:
            reason += "\n" + phrase("forfeit_unmoved", userid=user.userid, label=board.label)
            end = EndReason.DECLINED
        remove(ctx, board, end, reason, loser_id=user.id)
        return
    text = reason + "\n" + phrase("forfeits", userid=user.userid, label=board.label)
    player_leaves(ctx, board, index, end, text, clock_ran=True)
    save_board(ctx, board)
    mail_board(ctx, board)


def send_nag(ctx: Context, board: Board) -> None:
    """pbmserv's Nag mail to the player to move, saying what time and vacation he has."""
    row = board.row
    assert row.to_move is not None
    index = row.to_move
    _gp, user = board.players[index]
    control = time_control(row)
    now = ctx.now()
    idle = charged(ctx.session, control, user.saved_id, row.last_move_at, now)
    left = {
        limit: max(allowed - idle, timedelta()) for limit, allowed in allowances(ctx.session, board)
    }
    if Limit.BANK in left:
        deadline = phrase("nag_deadline_bank", left=span_text(left[Limit.BANK]))
    else:
        deadline = phrase("nag_deadline_age", days=days_text(control.forfeit_days))
    lines = []
    if Limit.TOTAL in left:
        lines.append(phrase("nag_deadline_total", left=span_text(left[Limit.TOTAL])))
    vacation = left_days(ctx.session, user, now, allowance=ctx.config.vacation_start_days)
    lines.append(phrase("nag_vacation", days=days_text(round(vacation, 1)), userid=user.userid))
    body = render(
        "nag",
        game=board.rules.title,
        board=row.board,
        days=days_text(idle // DAY),
        deadline=deadline,
        left="\n" + "\n".join(lines) + "\n",
        signature=ctx.config.server_name,
        subject=subject_for(board),
        summary=summary(
            board,
            board_facts(ctx, board, timing=True),
            title=title_for(board, "Nag"),
            reader=user,
            answer_line=True,
            in_words=in_words(ctx.session, user),
        ),
    )
    ctx.session.add(JobMark(kind="nag", key=_nag_key(board), at=now))
    # a job's work: no message at hand, so the reminder is never an answer
    mail_reader(
        ctx,
        board,
        user,
        subject=phrase("subject_nag", label=board.label, userid=user.userid),
        body=body,
        kind=ReplyKind.NAG,
    )
    ctx.session.flush()


def forfeit_if_due(ctx: Context, board: Board) -> bool:
    """Forfeit a board whose time ran out before the job noticed (a move came too late)."""
    what = due(ctx, board)
    if what is None or what.action != "forfeit":
        return False
    apply(ctx, board, what)
    return True
