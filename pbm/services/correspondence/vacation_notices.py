"""The opponents told that boards wait on a vacation: a player on vacation stops his
clocks, so nothing else would tell the players waiting for his move why their boards
(and a tournament's round with them) stand still. The periodic job (pbm.jobs) asks
`tell_opponents` of every player on vacation; each opponent gets one mail for all the
boards that wait for him, and a `JobMark` per board and vacation keeps the job, which
runs every few minutes, from telling a board twice. A new vacation, or more days
granted to this one (a later end), is told again."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlmodel import Session, col, select

from pbm.services.accounts.users import reply_addresses
from pbm.services.context import Context, Reply, ReplyKind
from pbm.services.correspondence.vacation import running, running_end
from pbm.services.play.boards import Board, board_from_row
from pbm.store import queries
from pbm.store.models import User
from pbm.store.models_correspondence import JobMark
from pbm.store.models_tournament import Tournament, TournamentPairing
from pbm.texts import phrase, prose

# The JobMark kind of a board told (`JobMark.kind` holds at most 16 characters).
MARK_KIND = "vacation-wait"


def tell_opponents(ctx: Context, user_id: int) -> int:
    """Tell each opponent of the player `user_id`, on vacation, which boards wait for
    his move and until when at most, once per board and vacation; returns the mails."""
    away = ctx.session.get(User, user_id)
    vacation = None if away is None else running(ctx.session, away, ctx.now())
    until = None if vacation is None else running_end(vacation)
    if away is None or vacation is None or vacation.started_at is None or until is None:
        return 0  # back, or his days ran out, since the list was read
    stamp = f"{_stamp(vacation.started_at)}:{_stamp(until)}"
    waiting: dict[int, list[str]] = {}  # opponent id -> the lines of his boards
    opponents: dict[int, User] = {}
    for board, others in _waiting_boards(ctx, away):
        key = f"{board.id}:{away.saved_id}:{stamp}"
        if _told(ctx.session, key):
            continue
        ctx.session.add(JobMark(kind=MARK_KIND, key=key, at=ctx.now()))
        line = _board_line(ctx.session, board)
        for other in others:
            opponents[other.saved_id] = other
            waiting.setdefault(other.saved_id, []).append(line)
    sent = 0
    for other_id, lines in waiting.items():
        sent += _mail(ctx, opponents[other_id], away, until, lines)
    ctx.session.flush()
    return sent


def _waiting_boards(ctx: Context, away: User) -> list[tuple[Board, list[User]]]:
    """The running boards where `away` is to move, each with the other players."""
    found = []
    for row in queries.games_of_user(ctx.session, away.saved_id, statuses=("active",)):
        board = board_from_row(ctx, row)
        if row.to_move is not None and board.players[row.to_move][1].id == away.id:
            found.append((board, [u for _, u in board.players if u.id != away.id]))
    return found


def _told(session: Session, key: str) -> bool:
    query = select(JobMark.id).where(JobMark.kind == MARK_KIND, JobMark.key == key)
    return session.exec(query).first() is not None


def _board_line(session: Session, board: Board) -> str:
    """`Quarto board 101`, with its tournament and round when it is a running one's."""
    query = (
        select(Tournament.name, TournamentPairing.round)
        .join(Tournament, col(Tournament.id) == col(TournamentPairing.tournament_id))
        .where(TournamentPairing.game_id == board.id, Tournament.status == "running")
    )
    pairing = session.exec(query).first()
    if pairing is None:
        return board.label
    name, number = pairing
    return phrase("vacation_wait_round", label=board.label, name=name, round=number)


def _mail(ctx: Context, reader: User, away: User, until: datetime, lines: Sequence[str]) -> int:
    to = reply_addresses(ctx, reader)
    if not to:
        return 0
    intro = "vacation_wait_one" if len(lines) == 1 else "vacation_wait_many"
    when = f"{until:%Y-%m-%d %H:%M} UTC"
    boards = "\n".join(f"    {line}" for line in lines)
    body = f"{prose(intro, userid=away.userid, until=when)}\n\n{boards}\n\n"
    ctx.reply(
        Reply(
            to=to,
            subject=phrase("subject_vacation_wait", userid=away.userid),
            body=body + prose("vacation_wait_end") + "\n",
            kind=ReplyKind.NOTIFICATION,
            user_id=reader.id,
        )
    )
    return 1


def _stamp(when: datetime) -> int:
    return int(when.timestamp())
