"""Quadrature records in SGF (FF[4], GM[15], the game number the SGF standard gives
Quadrature): `to_sgf` writes one board, `from_sgf` reads it back into a
`records.Record`. The properties pbm writes are listed in docs/records.md; the
private ones (X*, CV, RV, RS, TS, AQ) carry what a pbm text record carries, so the
round trip loses nothing."""

from __future__ import annotations

import re
from datetime import datetime

from pbm.clock import as_utc
from pbm.errors import PbmError
from pbm.games import quadrature_board as qb
from pbm.services.context import Context
from pbm.services.play import records
from pbm.services.play.boards import Board
from pbm.services.play.echoes import with_echoes
from pbm.store import queries
from pbm.texts import phrase

GAME = "quadrature"
GM = 15
COLORS = ("B", "W")  # seat 0 is Black, seat 1 White (pbm.games.quadrature)
TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_PROPERTY = re.compile(r"\s*([A-Z]+)((?:\s*\[(?:\\.|[^\]\\])*\])+)", re.S)
_VALUE = re.compile(r"\[((?:\\.|[^\]\\])*)\]", re.S)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.S)


def _prop(name: str, *values: str) -> str:
    return name + "".join(f"[{_escape(v)}]" for v in values)


def _iso(dt: datetime) -> str:
    return as_utc(dt).strftime(TIME_FORMAT)


def _pairs(options: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(options.items()))


def _outcome(board: Board) -> str:
    """SGF's RE: B+ / W+, 0 for a draw, ? while it goes on (the reason is in XN: pbm
    keeps its words, not SGF's R/T/F codes)."""
    row = board.row
    if row.result == "tie":
        return "0"
    if row.result == "won" and row.winner is not None:
        return f"{COLORS[row.winner]}+"
    return "?"


def _points_after(echo: str, word: str) -> list[str]:
    """The points an echo lists after `word` ("b3-b4 converts c5 d5 removes e6")."""
    words = echo.split()
    if word not in words:
        return []
    taken = []
    for w in words[words.index(word) + 1 :]:
        if not re.fullmatch(r"[a-k]\d{1,2}", w):
            break
        taken.append(w)
    return taken


def to_sgf(ctx: Context, board: Board) -> str:
    """The SGF record of a Quadrature board (any status)."""
    if board.rules.name != GAME:
        raise PbmError(phrase("record_no_sgf", title=board.rules.title))
    row = board.row
    userids = board.userids
    root = [
        _prop("FF", "4"),
        _prop("GM", str(GM)),
        _prop("CA", "UTF-8"),
        _prop("AP", "pbm:1"),
        _prop("SZ", str(qb.SIZE)),
        _prop("GN", board.label),
        _prop("PB", userids[0]),
        _prop("PW", userids[1]),
        _prop("DT", as_utc(row.created_at).strftime("%Y-%m-%d")),
        _prop("RE", _outcome(board)),
        _prop("RU", _pairs(board.options) or "repetition=threefold"),
        _prop("XB", row.board),
        _prop("XO", _pairs(board.options)),
        _prop("XS", _pairs(row.server_options or {})),
        _prop("XR", "yes" if row.rated else "no"),
        _prop("XU", row.status),
        _prop("XT", _iso(row.created_at)),
        _prop("XP", *(f"{gp.seconds_used:.0f}" for gp, _ in board.players)),
    ]
    if row.ended_at is not None:
        root.append(_prop("XE", _iso(row.ended_at)))
    if row.result_reason:
        root.append(_prop("XN", row.result_reason))
    if row.end_reason is not None:
        root.append(_prop("XD", row.end_reason.value))
    if row.comment:
        root.append(_prop("GC", row.comment))
    nodes = [";" + "".join(root)]
    moves = queries.moves_of(ctx.session, board.id)
    state = board.rules.new_state(**board.options)
    for move, echoed in zip(moves, with_echoes(board.rules, board.options, moves), strict=True):
        state = board.rules.apply(state, board.rules.parse_move(state, move.text))
        echo = echoed.echo or move.text
        node = [
            _prop(COLORS[move.player], "" if move.text == "pass" else move.text),
            _prop("MN", str(move.number)),
            _prop("TS", _iso(move.made_at)),
        ]
        if converted := _points_after(echo, "converts"):
            node.append(_prop("CV", *converted))
        if removed := _points_after(echo, "removes"):
            node.append(_prop("RV", *removed))
        reserves = (qb.MEN - qb.count(state.black), qb.MEN - qb.count(state.white))
        node.append(_prop("RS", *(str(max(r, 0)) for r in reserves)))
        if move.auto:
            node.append(_prop("AQ", "1"))
        nodes.append(";" + "".join(node))
    return "(" + "\n".join(nodes) + ")\n"


def _bad(problem: str) -> PbmError:
    return PbmError(phrase("record_unreadable", problem=problem))


def looks_like_sgf(text: str) -> bool:
    return text.lstrip().startswith("(;")


def _nodes(text: str) -> list[dict[str, list[str]]]:
    body = text.strip()
    if not body.startswith("(;") or not body.endswith(")"):
        raise _bad("an SGF record starts with '(;' and ends with ')'")
    nodes = []
    # Values may hold ';' (escaped or not), so nodes are split between properties.
    rest = body[1:-1]
    while rest.strip():
        rest = rest.lstrip()
        if not rest.startswith(";"):
            raise _bad(f"'{rest[:20]}' is not an SGF node (pbm writes no variations)")
        rest = rest[1:]
        node: dict[str, list[str]] = {}
        while match := _PROPERTY.match(rest):
            node[match[1]] = [_unescape(v) for v in _VALUE.findall(match[2])]
            rest = rest[match.end() :]
        nodes.append(node)
    return nodes


def _time(value: str, where: str) -> datetime:
    try:
        return as_utc(datetime.strptime(value, TIME_FORMAT))
    except ValueError:
        raise _bad(f"{where} '{value}' is not a time like 2026-11-22T02:41:00Z") from None


def _split_pairs(text: str) -> dict[str, str]:
    return dict(word.partition("=")[::2] for word in text.split())


def from_sgf(text: str) -> records.Record:
    """Read a Quadrature SGF record written by pbm; checks its form, not its moves."""
    root, *moves = _nodes(text)

    def one(key: str, default: str | None = None) -> str:
        values = root.get(key)
        if not values:
            if default is None:
                raise _bad(f"the root node has no {key}[]")
            return default
        return values[0]

    if one("GM") != str(GM):
        raise _bad(f"pbm reads SGF for Quadrature only, GM[{GM}]")
    players = [one("PB"), one("PW")]
    used = [float(v) for v in root.get("XP", ["0", "0"])]
    record = records.Record(
        game=GAME,
        board=one("XB", "1"),
        players=players,
        options=_split_pairs(one("XO", "")),
        server_options=_split_pairs(one("XS", "")),
        rated=one("XR", "yes") == "yes",
        status=one("XU", "finished"),
        started=_time(one("XT"), "XT"),
        ended=_time(one("XE"), "XE") if "XE" in root else None,
        reason=root["XN"][0] if "XN" in root else None,
        end=records.read_end(one("XD"), "XD") if "XD" in root else None,
        seconds_used=used,
    )
    outcome = one("RE", "?")
    if outcome == "0":
        record.result = "tie"
    elif outcome[:2] in ("B+", "W+"):
        record.result, record.winner = "won", COLORS.index(outcome[0])
    for n, node in enumerate(moves, start=1):
        color = next((c for c in COLORS if c in node), None)
        if color is None or "TS" not in node:
            raise _bad(f"move node {n} needs B[] or W[] and TS[]")
        text_ = node[color][0] or "pass"
        record.moves.append(
            records.RecordMove(
                n, COLORS.index(color), _time(node["TS"][0], f"move {n}'s TS"), text_, "AQ" in node
            )
        )
    return record
