"""Game records as JSON: one object per board, versioned, described by
docs/record.schema.json (docs/records.md). `to_json` writes one, `from_json` reads it
back into the same `records.Record` the text format gives, so `pbm game import` and
preview take either."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel import select

from pbm.clock import as_utc
from pbm.errors import PbmError
from pbm.services.context import Context
from pbm.services.correspondence.clocks import time_control
from pbm.services.play import records
from pbm.services.play.boards import Board
from pbm.services.play.echoes import with_echoes
from pbm.store import queries
from pbm.store.models_correspondence import RatingChange
from pbm.texts import phrase

FORMAT = "pbm-game-record"
VERSION = 1
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


@dataclass(frozen=True)
class StartRating:
    """A player's ratings on this game type before the game counted (rated, finished)."""

    pbmserv: float
    glicko: float


def _iso(dt: datetime | None) -> str | None:
    return None if dt is None else as_utc(dt).strftime(TIME_FORMAT)


def _start_ratings(ctx: Context, board: Board) -> dict[int, StartRating]:
    query = select(RatingChange).where(RatingChange.game_id == board.id)
    return {
        change.user_id: StartRating(change.before, change.glicko_before)
        for change in ctx.session.exec(query)
    }


def _clock(board: Board) -> dict[str, Any]:
    control = time_control(board.row)
    fischer = control.fischer
    return {
        "nag_days": control.nag_days,
        "forfeit_days": control.forfeit_days,
        "total_days": control.total_days,
        "fischer": None
        if fischer is None
        else {
            "initial_days": fischer.initial_days,
            "increment_days": fischer.increment_days,
            "maximum_days": fischer.max_days,
        },
        "weekends_free": control.weekends_free,
    }


def to_json(ctx: Context, board: Board) -> dict[str, Any]:
    """The record of a board (any status) as a JSON-ready object."""
    row = board.row
    ratings = _start_ratings(ctx, board)
    players = []
    for gp, user in board.players:
        start = ratings.get(user.saved_id)
        players.append(
            {
                "seat": gp.position + 1,
                "userid": user.userid,
                "bot": user.bot,
                "seconds_used": round(gp.seconds_used),
                "rating_at_start": None
                if start is None
                else {"pbmserv": round(start.pbmserv), "glicko2": round(start.glicko)},
            }
        )
    moves = queries.moves_of(ctx.session, board.id)
    move_list = [
        {
            "number": move.number,
            "seat": move.player + 1,
            "at": _iso(move.made_at),
            "text": move.text,
            "echo": echoed.echo or move.text,
            "auto": move.auto,
        }
        for move, echoed in zip(moves, with_echoes(board.rules, board.options, moves), strict=True)
    ]
    winner = board.userids[row.winner] if row.result == "won" and row.winner is not None else None
    return {
        "format": FORMAT,
        "version": VERSION,
        "game": board.rules.name,
        "title": board.rules.title,
        "board": row.board,
        "variant": board.options.get("variant"),
        "options": dict(sorted(board.options.items())),
        "server_options": row.server_options or {},
        "clock": _clock(board),
        "rated": row.rated,
        "status": row.status,
        "started": _iso(row.created_at),
        "ended": _iso(row.ended_at),
        "players": players,
        "moves": move_list,
        # The board's comment is on every board mail, so every reader of the record saw it.
        "comments": [{"by": row.comment_by, "text": row.comment}] if row.comment else [],
        "result": {
            "kind": row.result,
            "winner": winner,
            "scores": row.scores or None,
            "reason": row.result_reason,
            "end": row.end_reason.value if row.end_reason is not None else None,
        },
    }


def dumps(ctx: Context, board: Board) -> str:
    return json.dumps(to_json(ctx, board), indent=2, ensure_ascii=False) + "\n"


def looks_like_json(text: str) -> bool:
    return text.lstrip().startswith("{")


def _bad(problem: str) -> PbmError:
    return PbmError(phrase("record_unreadable", problem=problem))


def _time(value: object, where: str) -> datetime:
    if not isinstance(value, str):
        raise _bad(f"{where} must be a time like 2026-11-22T02:41:00Z")
    try:
        return as_utc(datetime.strptime(value, TIME_FORMAT))
    except ValueError:
        raise _bad(f"{where} '{value}' is not a time like 2026-11-22T02:41:00Z") from None


def _field(data: dict[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        raise _bad(f"'{key}' is missing or not a {kind.__name__}")
    return value


def from_json(text: str) -> records.Record:
    """Read a JSON record; checks its form, not its moves (see `records.check`)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(f"the JSON does not read ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise _bad(f'a JSON record starts {{"format": "{FORMAT}", "version": {VERSION}, ...')
    if data.get("version") != VERSION:
        raise _bad(f"this server reads version {VERSION} of the JSON record")
    players = _field(data, "players", list)
    userids = [str(_field(p, "userid", str)) for p in players if isinstance(p, dict)]
    if not userids or len(userids) != len(players):
        raise _bad("'players' must list each player with his 'userid'")
    result = data.get("result") or {}
    record = records.Record(
        game=_field(data, "game", str),
        board=_field(data, "board", str),
        players=userids,
        options={str(k): str(v) for k, v in _field(data, "options", dict).items()},
        server_options={str(k): str(v) for k, v in data.get("server_options", {}).items()},
        rated=bool(data.get("rated", True)),
        status=str(data.get("status", "active")),
        started=_time(data.get("started"), "'started'"),
        ended=_time(data["ended"], "'ended'") if data.get("ended") else None,
        result=result.get("kind"),
        reason=result.get("reason"),
        end=records.read_end(str(result["end"]), "'result.end'") if result.get("end") else None,
        scores=result.get("scores"),
        seconds_used=[float(p.get("seconds_used", 0)) for p in players],
    )
    if record.result == "won":
        if result.get("winner") not in userids:
            raise _bad("'result.winner' must be one of the players")
        record.winner = userids.index(result["winner"])
    elif record.result not in (None, "tie"):
        raise _bad('\'result.kind\' must be "won", "tie" or null')
    for n, move in enumerate(_field(data, "moves", list), start=1):
        seat = move.get("seat") if isinstance(move, dict) else None
        if not isinstance(seat, int) or not 1 <= seat <= len(userids):
            raise _bad(f"move {n} needs a 'seat' from 1 to {len(userids)}")
        if move.get("number") != n:
            raise _bad("the moves are not numbered 1, 2, 3...")
        record.moves.append(
            records.RecordMove(
                n,
                seat - 1,
                _time(move.get("at"), f"move {n}'s 'at'"),
                str(_field(move, "text", str)),
                bool(move.get("auto", False)),
            )
        )
    return record
