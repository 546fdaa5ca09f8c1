"""Making bots and playing their moves in the server tests."""

from __future__ import annotations

from collections.abc import Sequence

from pbm.jobs import play_bots
from pbm.services.context import Context
from pbm.services.play import bots
from pbm.store.engine import session_for
from tests.server.conftest import Server


def add_bot(
    server: Server,
    name: str,
    *,
    games: Sequence[str] = (),
    level: int = 1,
    engine: str = "builtin",
    max_games: int | None = None,
) -> bots.BotInfo:
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        info = bots.add_bot(ctx, name, games=games, level=level, engine=engine, max_games=max_games)
        session.commit()
    return info


def show(server: Server, name: str) -> bots.BotInfo:
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        return bots.show_bot(ctx, name)


def play(server: Server, limit: int | None = None) -> int:
    """The bots' due moves, as `pbm jobs run` plays them (small searches: fast tests)."""
    return play_bots(server.engine, server.clock, server.config, limit=limit, iterations=40)
