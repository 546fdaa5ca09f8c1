"""Random finished games of every game and variant, and their round trip through every
record format (docs/records.md): tests/server/test_record_roundtrip.py and
benchmarks/records_roundtrip.py share them."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.games import GAMES
from pbm.services.accounts.users import create_user
from pbm.services.context import Context
from pbm.services.play import record_formats, records
from pbm.services.play.boards import board_by_id
from pbm.services.play.records import RecordFormat
from pbm.services.play.records_sgf import GAME as SGF_GAME
from pbm.store import queries
from pbm.store.engine import make_engine, session_for
from pbm.store.models import EndReason
from pbm.store.schema import init_db

PLAYERS = ("ann", "ben", "cat", "dan")
MAX_PLIES = 160
START = datetime(2026, 11, 22, 2, 41, tzinfo=UTC)


def players_database(directory: Path) -> tuple[Engine, Config]:
    """A new SQLite database in `directory` with the accounts of PLAYERS."""
    engine = make_engine(f"sqlite:///{directory}/pbm.sqlite3")
    init_db(engine)
    config = Config(data_dir=directory, password_cost=4)
    with session_for(engine) as session:
        ctx = context(session, config)
        for userid in PLAYERS:
            create_user(ctx, userid, "pw", [f"{userid}@x.example"])
        session.commit()
    return engine, config


def context(session: Session, config: Config) -> Context:
    return Context(session=session, clock=FrozenClock(START), config=config, sender="")


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def variants() -> list[tuple[str, dict[str, str]]]:
    """(game, options) for every game's example options and named variants."""
    found: list[tuple[str, dict[str, str]]] = []
    for name, rules in sorted(GAMES.items()):
        option_sets = [*rules.example_options, *rules.variant_aliases.values()]
        for options in [{}, *option_sets]:
            entry = (name, {k: _text(v) for k, v in options.items()})
            if entry not in found:
                found.append(entry)
    return found


def formats_of(game: str) -> list[RecordFormat]:
    return [f for f in RecordFormat if f is not RecordFormat.SGF or game == SGF_GAME]


def random_record(
    rng: random.Random, game: str, options: dict[str, str], start: datetime
) -> records.Record:
    """A finished game of random legal moves; one that runs past MAX_PLIES is resigned
    by the player to move."""
    rules = GAMES[game]
    state = rules.new_state(**options)
    seats = len(rules.seats)
    record = records.Record(
        game=game,
        board="1",
        players=list(PLAYERS[:seats]),
        options=dict(options),
        server_options={"nagtime": str(rng.randint(1, 9))} if rng.random() < 0.5 else {},
        rated=rng.random() < 0.8,
        status="finished",
        started=start,
        seconds_used=[float(rng.randint(0, 10**6)) for _ in range(seats)],
    )
    at = start
    while (mover := rules.to_move(state)) is not None and len(record.moves) < MAX_PLIES:
        move = rng.choice(rules.legal_moves(state))
        text = rules.format_move(state, move)
        state = rules.apply(state, move)
        at += timedelta(seconds=rng.randint(1, 3 * 86400))
        player = rules.player_seats(state).index(mover)
        record.moves.append(
            records.RecordMove(len(record.moves) + 1, player, at, text, rng.random() < 0.1)
        )
    outcome = rules.outcome(state)
    if outcome is None:
        loser = rules.player_seats(state).index(rules.to_move(state) or 0)
        record.result, record.winner = "won", (loser + 1) % seats
        record.reason = f"{record.players[loser]} resigns."
        record.end = EndReason.RESIGNED
    else:
        seats_now = rules.player_seats(state)
        if outcome.winner is None:
            record.result = "tie"
        else:
            record.result, record.winner = "won", seats_now.index(outcome.winner)
        record.reason = outcome.reason
        record.end = EndReason.RULES
        record.scores = list(outcome.scores) if outcome.scores else None
    record.ended = at + timedelta(minutes=1)
    return record


def _seen(ctx: Context, board_id: int) -> tuple[object, ...]:
    """What a round trip must keep: position, result, times, clocks."""
    board = board_by_id(ctx, board_id)
    row = board.row
    moves = queries.moves_of(ctx.session, board_id)
    return (
        row.game,
        row.options,
        row.position,
        row.status,
        row.result,
        row.winner,
        row.scores,
        row.result_reason,
        row.end_reason,
        row.created_at,
        row.ended_at,
        row.rated,
        row.server_options,
        tuple(board.userids),
        tuple(round(gp.seconds_used) for gp, _ in board.players),
        tuple((m.number, m.player, m.text, m.auto, m.made_at, m.echo) for m in moves),
    )


def roundtrip_problems(ctx: Context, record: records.Record) -> list[str]:
    """Imports the record, then exports and imports it again in every format its game
    has; names each format whose copy differs from the first import."""
    first = records.import_record(ctx, record)
    want = _seen(ctx, first.id)
    problems = []
    for form in formats_of(record.game):
        text = record_formats.write(ctx, first, form)
        again = records.import_record(ctx, record_formats.read(text))
        got = _seen(ctx, again.id)
        if got != want:
            diff = [i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b]
            problems.append(f"{record.game} {record.options} {form}: fields {diff} differ")
    return problems
