"""A board's time rules and its players' clocks, on the stored rows.

The rules come from the challenge's server options (`--nagtime`, `--forfeittime`,
`--totaltime`, `--fischer=initial/increment/maximum`, `--weekendfree`), else pbmserv's
defaults (7 and 21 days; tournament boards 1 and 7). Time that counts against a player
leaves out his vacations and, on a weekend-free board, Saturdays and Sundays
(pbm.timecontrol does the arithmetic).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum

from sqlmodel import Session, select

from pbm.config import Config
from pbm.errors import PbmError
from pbm.services.context import Context
from pbm.services.correspondence.vacation import clipped_spans
from pbm.services.play.boards import Board
from pbm.store.models import BoardRow
from pbm.store.models_correspondence import ClockBank
from pbm.texts import phrase
from pbm.timecontrol import Fischer, TimeControl, chargeable, fischer_bank_after_move

DAY_SECONDS = 86400.0
# Server options a challenge may give, beyond pbmserv's three (see challenges.SERVER_OPTIONS).
TIME_OPTIONS = ("nagtime", "forfeittime", "totaltime", "fischer", "weekendfree")
FORFEIT_PRECISION = timedelta(seconds=1)  # how close forfeit_at finds the instant
FORFEIT_HORIZON = timedelta(days=20 * 365)  # past this, forfeit_at finds no deadline


def is_tournament_board(name: str) -> bool:
    """pbmserv: a board named with a letter first and a digit last (a101) is a tournament's."""
    return bool(name) and name[0].isalpha() and name[-1].isdigit()


def _days(name: str, value: str) -> float:
    try:
        days = float(value)
    except ValueError:
        raise PbmError(phrase("bad_time_option", name=name, value=value)) from None
    if not 0 < days <= 3650:
        raise PbmError(phrase("bad_time_option", name=name, value=value))
    return days


def parse_fischer(value: str) -> Fischer:
    parts = value.replace(",", "/").split("/")
    try:
        initial, increment, maximum = (float(p) for p in parts)
    except ValueError:
        raise PbmError(phrase("bad_fischer", value=value)) from None
    if not (0 < initial <= maximum and 0 <= increment <= maximum):
        raise PbmError(phrase("bad_fischer", value=value))
    return Fischer(initial, increment, maximum)


def validate(options: dict[str, str]) -> None:
    """Refuse malformed time options when the challenge is made, not when a job runs."""
    for name in ("nagtime", "forfeittime", "totaltime"):
        if name in options:
            _days(name, options[name])
    if "fischer" in options:
        parse_fischer(options["fischer"])


def check_floors(config: Config, nag_days: float | None, forfeit_days: float | None) -> None:
    """Refuse reminder and forfeit times set by mail below the operator's floors: a
    reminder every minute would make pbm a weapon against the player to move."""
    floor_nag = config.min_nag_hours / 24
    if nag_days is not None and nag_days < floor_nag:
        raise PbmError(
            phrase("nag_floor", days=days_text(nag_days), hours=f"{config.min_nag_hours:g}")
        )
    if forfeit_days is not None and forfeit_days < config.min_forfeit_days:
        raise PbmError(
            phrase(
                "forfeit_floor",
                days=days_text(forfeit_days),
                floor=days_text(config.min_forfeit_days),
            )
        )


def check_option_floors(config: Config, options: dict[str, str]) -> None:
    """`check_floors` on a challenge's `-nagtime` and `-forfeittime`."""
    nag = _days("nagtime", options["nagtime"]) if "nagtime" in options else None
    forfeit = _days("forfeittime", options["forfeittime"]) if "forfeittime" in options else None
    check_floors(config, nag, forfeit)


def time_control(row: BoardRow) -> TimeControl:
    options: dict[str, str] = row.server_options or {}
    base = TimeControl.tournament_default() if is_tournament_board(row.board) else TimeControl()
    nag = _days("nagtime", options["nagtime"]) if "nagtime" in options else base.nag_days
    forfeit = (
        _days("forfeittime", options["forfeittime"])
        if "forfeittime" in options
        else base.forfeit_days
    )
    total = _days("totaltime", options["totaltime"]) if "totaltime" in options else None
    fischer = parse_fischer(options["fischer"]) if "fischer" in options else None
    return TimeControl(nag, forfeit, total, fischer, "weekendfree" in options)


def shows_timing(row: BoardRow) -> bool:
    """pbmserv prints the timing block on boards with time rules of their own."""
    options = row.server_options or {}
    return is_tournament_board(row.board) or any(k in options for k in TIME_OPTIONS)


def pauses(session: Session, user_id: int) -> list[tuple[datetime, datetime | None]]:
    return clipped_spans(session, user_id)


def charged(
    session: Session, control: TimeControl, user_id: int, start: datetime, end: datetime
) -> timedelta:
    """The part of start..end that counts against the player."""
    return chargeable(
        start, end, weekends_free=control.weekends_free, pauses=pauses(session, user_id)
    )


def idle(session: Session, row: BoardRow, user_id: int, now: datetime) -> timedelta:
    """How long the player to move has kept the board waiting (counted time only)."""
    return charged(session, time_control(row), user_id, row.last_move_at, now)


def _bank_row(session: Session, game_id: int, position: int) -> ClockBank | None:
    query = select(ClockBank).where(ClockBank.game_id == game_id, ClockBank.position == position)
    return session.exec(query).first()


class Limit(StrEnum):
    """A time rule that ends a board when the player to move lets its time pass."""

    BANK = "bank"  # a Fischer clock's bank
    IDLE = "idle"  # the forfeit days since the last move (boards without Fischer)
    TOTAL = "total"  # what is left of the player's total time


def allowances(session: Session, board: Board) -> list[tuple[Limit, timedelta]]:
    """The time that may count against the player to move since the last move, by each
    of his time rules, in the order the timeout job checks them: the one count that the
    forfeit (pbm.services.correspondence.timeouts), the reminder's deadlines and the
    deadline on the web (`forfeit_at`) all read."""
    row = board.row
    assert row.to_move is not None
    gp, _user = board.players[row.to_move]
    control = time_control(row)
    if control.fischer is not None:
        found = [(Limit.BANK, _bank(session, row, row.to_move, control.fischer))]
    else:
        found = [(Limit.IDLE, timedelta(days=control.forfeit_days))]
    if control.total_days is not None:
        total = timedelta(seconds=control.total_days * DAY_SECONDS - gp.seconds_used)
        found.append((Limit.TOTAL, total))
    return found


def _bank(session: Session, row: BoardRow, position: int, fischer: Fischer) -> timedelta:
    """A Fischer clock's bank as of the player's last move: stored, else the initial days."""
    stored = _bank_row(session, row.saved_id, position)
    return timedelta(seconds=stored.bank_seconds if stored else fischer.initial_days * DAY_SECONDS)


def bank_left(
    session: Session, row: BoardRow, position: int, user_id: int, now: datetime
) -> timedelta | None:
    """What is left of a Fischer clock's bank now (None: the board has no Fischer clock)."""
    control = time_control(row)
    if control.fischer is None:
        return None
    bank = _bank(session, row, position, control.fischer)
    if row.to_move == position and row.status == "active":
        bank -= charged(session, control, user_id, row.last_move_at, now)
    return max(bank, timedelta())


def forfeit_at(session: Session, board: Board) -> datetime | None:
    """When the player to move forfeits if he does not move (None: nobody is to move):
    the first instant at which the time counted against him reaches the least of his
    `allowances`, as the timeout job counts it. Found by searching `chargeable` on his
    pauses, the job's own count, so vacation and free weekends move it exactly as they
    move the forfeit, and a running vacation counts until its days run out."""
    row = board.row
    if not board.active or row.to_move is None:
        return None
    _gp, user = board.players[row.to_move]
    control = time_control(row)
    allowed = min(allowed for _limit, allowed in allowances(session, board))
    spans = pauses(session, user.saved_id)
    start = row.last_move_at

    def counted(end: datetime) -> timedelta:
        return chargeable(start, end, weekends_free=control.weekends_free, pauses=spans)

    if allowed <= timedelta():
        return start
    span = allowed
    while counted(start + span) < allowed:  # weekends and vacations push it later
        span *= 2
        if span > FORFEIT_HORIZON:  # a vacation with no end: no deadline to show
            return None
    early, late = start, start + span  # counted(early) < allowed <= counted(late)
    while late - early > FORFEIT_PRECISION:
        middle = early + (late - early) / 2
        if counted(middle) < allowed:
            early = middle
        else:
            late = middle
    return late


def charge_move(ctx: Context, board: Board, index: int) -> None:
    """Book the time the mover took: his time used, and his Fischer bank."""
    gp, user = board.players[index]
    control = time_control(board.row)
    used = charged(ctx.session, control, user.saved_id, board.row.last_move_at, ctx.now())
    gp.seconds_used += used.total_seconds()
    if control.fischer is None:
        return
    stored = _bank_row(ctx.session, board.id, index)
    if stored is None:
        stored = ClockBank(
            game_id=board.id,
            position=index,
            bank_seconds=control.fischer.initial_days * DAY_SECONDS,
        )
    bank = fischer_bank_after_move(timedelta(seconds=stored.bank_seconds), used, control.fischer)
    stored.bank_seconds = bank.total_seconds()
    ctx.session.add(stored)


def timing_lines(ctx: Context, board: Board) -> list[str]:
    """The time rules in the timing block (pbmserv prints nag and forfeit timeouts)."""
    if not shows_timing(board.row):
        return []
    control = time_control(board.row)
    lines = [phrase("timing_nag", days=days_text(control.nag_days))]
    if control.fischer is None:  # a Fischer board forfeits on its clock, never on age
        lines.append(phrase("timing_forfeit", days=days_text(control.forfeit_days)))
    if control.total_days is not None:
        lines.append(phrase("timing_total", days=days_text(control.total_days)))
    if control.fischer is not None:
        f = control.fischer
        lines.append(
            phrase(
                "timing_fischer",
                initial=days_text(f.initial_days),
                increment=days_text(f.increment_days),
                maximum=days_text(f.max_days),
            )
        )
        if board.active:
            for gp, user in board.players:
                left = bank_left(ctx.session, board.row, gp.position, user.saved_id, ctx.now())
                assert left is not None
                lines.append(phrase("timing_bank", userid=user.userid, left=span_text(left)))
    if control.weekends_free:
        lines.append(phrase("timing_weekends"))
    return lines


def span_text(delta: timedelta) -> str:
    seconds = int(delta.total_seconds())
    days, rest = divmod(seconds, 86400)
    return f"{days_text(days)}, {rest // 3600:02}:{rest % 3600 // 60:02}"


def days_text(days: float) -> str:
    """A number of days with its unit: "1 day", "2 days", "1.5 days"."""
    number = str(int(days)) if days == int(days) else f"{days:g}"
    return f"{number} day" if days == 1 else f"{number} days"
