"""Game records: the complete story of one board as plain text (docs/records.md), written
by `export` and read back by `parse` (preview) and `import_record` (a new board).

The format is line based: `Key: value` headers, then `Moves:` and one move a line
(`number userid time move [auto] [# echo]`), then `End`. Times are UTC ISO 8601. The
echo (what the rules said of the move, "g4-g5 converts c5") is written when it says
more than the move; reading ignores it, since replaying the moves gives it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from pbm.clock import as_utc
from pbm.errors import PbmError
from pbm.games import GameError
from pbm.services.context import Context
from pbm.services.mailing.tokens import new_token
from pbm.services.play.boards import (
    BOARD_NAME,
    Board,
    board_from_row,
    replay,
    rules_for,
    save_board,
)
from pbm.services.play.boards import board_name as named
from pbm.services.play.echoes import with_echoes
from pbm.services.play.finished import outcome, with_reason
from pbm.services.play.ratings import rate_row
from pbm.services.play.secrecy import hidden_moves
from pbm.store import queries
from pbm.store.models import BoardRow, EndReason, GamePlayer, Move
from pbm.store.queries import MoveRecord
from pbm.texts import phrase

MAGIC = "pbm game record 1"
# Before a move's echo; no move text holds "#" (it marks the move number in commands).
ECHO_MARK = "#"


class RecordFormat(StrEnum):
    """The formats a record is written in (docs/records.md)."""

    PBM = "pbm"
    JSON = "json"
    SGF = "sgf"


@dataclass
class RecordMove:
    number: int
    player: int
    at: datetime
    text: str
    auto: bool = False


@dataclass
class Record:
    game: str
    board: str
    players: list[str]
    options: dict[str, str] = field(default_factory=dict)
    server_options: dict[str, str] = field(default_factory=dict)
    rated: bool = True
    status: str = "active"
    started: datetime | None = None
    ended: datetime | None = None
    result: str | None = None  # won | tie | None
    winner: int | None = None
    reason: str | None = None
    end: EndReason | None = None  # how it ended (the reason is its sentence)
    scores: list[int] | None = None
    seconds_used: list[float] = field(default_factory=list)
    moves: list[RecordMove] = field(default_factory=list)


def _iso(dt: datetime) -> str:
    return as_utc(dt).strftime("%Y-%m-%dT%H:%M:%SZ")


def _pairs(options: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(options.items()))


def export(ctx: Context, board: Board) -> str:
    """The record of a board (any status)."""
    row = board.row
    lines = [
        MAGIC,
        f"Game: {board.rules.name}",
        f"Title: {board.rules.title}",
        f"Board: {row.board}",
        f"Options: {_pairs(board.options)}".rstrip(),
        f"Server-Options: {_pairs(row.server_options or {})}".rstrip(),
        f"Rated: {'yes' if row.rated else 'no'}",
        f"Status: {row.status}",
        f"Started: {_iso(row.created_at)}",
    ]
    if row.ended_at is not None:
        lines.append(f"Ended: {_iso(row.ended_at)}")
    for gp, user in board.players:
        lines.append(f"Player: {gp.position + 1} {user.userid} {gp.seconds_used:.0f}")
    if row.result == "won" and row.winner is not None:
        lines.append(f"Result: won {board.userids[row.winner]}")
    elif row.result == "tie":
        lines.append("Result: tie")
    if row.scores:
        lines.append("Scores: " + " ".join(str(s) for s in row.scores))
    if row.end_reason is not None:
        lines.append(f"Ended-By: {row.end_reason.value}")
    for reason_line in (row.result_reason or "").splitlines():
        lines.append(f"Reason: {reason_line}")
    lines.append("Moves:")
    moves = queries.moves_of(ctx.session, board.id)
    for move, echoed in zip(moves, with_echoes(board.rules, board.options, moves), strict=True):
        auto = " auto" if move.auto else ""
        userid = board.userids[move.player]
        echo = f" {ECHO_MARK} {echoed.echo}" if echoed.echo not in (None, move.text) else ""
        lines.append(f"{move.number} {userid} {_iso(move.made_at)} {move.text}{auto}{echo}")
    lines.append("End")
    return "\n".join(lines) + "\n"


def _bad(problem: str) -> PbmError:
    return PbmError(phrase("record_unreadable", problem=problem))


def read_end(text: str, where: str) -> EndReason:
    """How a record says its board ended (`where`: its field, for the error)."""
    try:
        return EndReason(text)
    except ValueError:
        words = ", ".join(e.value for e in EndReason)
        raise _bad(f"{where} '{text}' should be one of: {words}") from None


def _time(text: str) -> datetime:
    try:
        return as_utc(datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))
    except ValueError:
        raise _bad(f"'{text}' is not a time like 2026-11-22T02:41:00Z") from None


def _split_pairs(text: str) -> dict[str, str]:
    pairs = {}
    for word in text.split():
        name, sep, value = word.partition("=")
        if not sep:
            raise _bad(f"option '{word}' is not name=value")
        pairs[name] = value
    return pairs


def parse(text: str) -> Record:
    """Read a record; checks its form, not its moves (see `check`)."""
    lines = [line.rstrip() for line in text.strip().splitlines()]
    # A record mailed back may carry quoting or the mail's own lines before it.
    starts = [i for i, line in enumerate(lines) if line.lstrip("> ") == MAGIC]
    if not starts:
        raise _bad(f"the first line must be '{MAGIC}'")
    lines = [line.removeprefix("> ").removeprefix(">") for line in lines[starts[0] + 1 :]]
    headers: dict[str, list[str]] = {}
    it = iter(lines)
    for line in it:
        if line == "Moves:":
            break
        key, sep, value = line.partition(":")
        if not sep:
            raise _bad(f"'{line}' is not 'Key: value'")
        headers.setdefault(key.strip().lower(), []).append(value.strip())
    else:
        raise _bad("no 'Moves:' line")

    def one(key: str, default: str | None = None) -> str:
        values = headers.get(key)
        if not values:
            if default is None:
                raise _bad(f"no '{key.title()}:' line")
            return default
        return values[0]

    players: list[str] = []
    used: list[float] = []
    for value in headers.get("player", []):
        parts = value.split()
        if len(parts) < 2 or not parts[0].isdigit() or int(parts[0]) != len(players) + 1:
            raise _bad(f"'Player: {value}' should be 'Player: N userid [seconds]' in order")
        players.append(parts[1])
        used.append(float(parts[2]) if len(parts) > 2 else 0.0)
    if not players:
        raise _bad("no players")
    record = Record(
        game=one("game"),
        board=one("board"),
        players=players,
        options=_split_pairs(one("options", "")),
        server_options=_split_pairs(one("server-options", "")),
        rated=one("rated", "yes") == "yes",
        status=one("status", "active"),
        started=_time(one("started")),
        seconds_used=used,
    )
    if "ended" in headers:
        record.ended = _time(one("ended"))
    result = one("result", "").split()
    if result[:1] == ["tie"]:
        record.result = "tie"
    elif result[:1] == ["won"] and len(result) == 2 and result[1] in players:
        record.result, record.winner = "won", players.index(result[1])
    elif result:
        raise _bad(f"'Result: {' '.join(result)}' should be 'won USERID' or 'tie'")
    if "scores" in headers:
        record.scores = [int(s) for s in one("scores").split()]
    if "reason" in headers:
        record.reason = "\n".join(headers["reason"])
    if "ended-by" in headers:
        record.end = read_end(one("ended-by"), "'Ended-By:'")
    for line in it:
        if line == "End":
            break
        # The echo, if any, goes: replaying gives it (and records before 0007 have none).
        parts = line.partition(f" {ECHO_MARK} ")[0].split(" ")
        if len(parts) < 4 or not parts[0].isdigit() or parts[1] not in players:
            raise _bad(f"move line '{line}' should be 'number userid time move'")
        auto = parts[-1] == "auto" and len(parts) > 4
        text = " ".join(parts[3:-1] if auto else parts[3:])
        record.moves.append(
            RecordMove(int(parts[0]), players.index(parts[1]), _time(parts[2]), text, auto)
        )
    else:
        raise _bad("no 'End' line")
    if [m.number for m in record.moves] != list(range(1, len(record.moves) + 1)):
        raise _bad("the moves are not numbered 1, 2, 3...")
    return record


def check(record: Record) -> str:
    """Replay the record's moves under the game's rules; returns the final board as text,
    and for an ended game its result line in place of the rules' "to move" (a resigned
    board's rules would still name a player to move)."""
    rules = rules_for(record.game)
    try:
        state = replay(rules, record.options, [m.text for m in record.moves])
    except GameError as exc:
        raise _bad(str(exc)) from None
    ended = outcome(record.status, record.result, record.winner, record.scores, record.players)
    if ended is None:
        return rules.render(state).rstrip("\n")
    drawn = rules.render(state, headline=False).rstrip("\n")
    return f"{drawn}\n\n{with_reason(record.reason or '', ended, record.end)}"


def _unechoed(move: RecordMove) -> MoveRecord:
    return MoveRecord(move.number, move.player, move.text, move.auto, None)


def import_record(ctx: Context, record: Record, board_name: str | None = None) -> Board:
    """Store a record as a new board (the players must have accounts)."""
    rules = rules_for(record.game)
    check(record)
    users = []
    for userid in record.players:
        user = queries.user_by_userid(ctx.session, userid)
        if user is None:
            raise PbmError(phrase("unknown_userid", userids=userid))
        users.append(user)
    # The operator's name must do; a record's own that no mail could name is renumbered.
    name = named(board_name) if board_name is not None else record.board.lower()
    number = int(name) if name.isdigit() else None
    if (
        not BOARD_NAME.fullmatch(name)
        or queries.game_by_board(ctx.session, rules.name, name) is not None
    ):
        if board_name is not None:
            raise PbmError(phrase("board_exists", game=rules.title, board=name))
        number = queries.next_board_number(ctx.session, rules.name)
        name = str(number)
    started = record.started or ctx.now()
    last = record.moves[-1].at if record.moves else started
    row = BoardRow(
        game=rules.name,
        board=name,
        board_number=number,
        status=record.status,
        options=dict(record.options),
        server_options=dict(record.server_options),
        created_at=started,
        last_move_at=last,
        ended_at=record.ended,
        winner=record.winner,
        result=record.result,
        result_reason=record.reason,
        end_reason=record.end,
        scores=list(record.scores) if record.scores is not None else None,
        rated=record.rated,
        move_count=len(record.moves),
    )
    ctx.session.add(row)
    ctx.session.flush()
    for position, user in enumerate(users):
        used = record.seconds_used[position] if position < len(record.seconds_used) else 0.0
        ctx.session.add(
            GamePlayer(
                game_id=row.saved_id,
                user_id=user.saved_id,
                position=position,
                seconds_used=used,
                token=new_token(ctx, row.saved_id, user.saved_id),
            )
        )
    # The echoes are the rules' own, replayed (a record's echo lines are for reading).
    replayed = with_echoes(rules, record.options, [_unechoed(m) for m in record.moves])
    for move, echoed in zip(record.moves, replayed, strict=True):
        ctx.session.add(
            Move(
                game_id=row.saved_id,
                number=move.number,
                player=move.player,
                text=move.text,
                auto=move.auto,
                made_at=move.at,
                echo=(echoed.echo or move.text)[:200],
            )
        )
    ctx.session.flush()
    board = board_from_row(ctx, row, rules)
    save_board(ctx, board)
    if row.status == "finished":
        rate_row(ctx.session, row, [u.saved_id for u in users])
    ctx.session.flush()
    return board


def secret_to(ctx: Context, board: Board, reader_index: int | None) -> bool:
    """Whether some of the board's moves are still secret to the player at
    `reader_index` (None: an observer): a record, which lists every move, waits."""
    return bool(hidden_moves(board, queries.moves_of(ctx.session, board.id), reader_index))
