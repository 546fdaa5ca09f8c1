"""Random streams of valid, invalid and duplicated messages never raise, never lose a
stored message, and leave a database whose every board replays to its cached position."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func
from sqlmodel import SQLModel, select

from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.games import get_game
from pbm.services.play.boards import replay
from pbm.store import queries
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow, InboundMessage
from tests.server.conftest import START, Server

PLAYERS = ("alice", "bob", "carol")
GAMES = ("quarto", "quadrature")

# One step of a stream: (kind, player index, game index, a number used as a choice).
steps = st.tuples(
    st.sampled_from(
        [
            "move",
            "move",
            "move",
            "bad-move",
            "wrong-password",
            "challenge",
            "resign",
            "duplicate",
            "garbage",
            "robot",
            "show",
            "propose",
            "accept",
            "queue",
            "token-move",
        ]
    ),
    st.integers(0, 2),
    st.integers(0, 1),
    st.integers(0, 10_000),
)


def _legal(server: Server, game: str, board: str) -> list[str] | None:
    rules = get_game(game)
    with session_for(server.engine) as session:
        row = queries.game_by_board(session, game, board)
        if row is None or row.status != "active":
            return None
        state = rules.load(row.position)
        return [rules.format_move(state, m) for m in rules.legal_moves(state)]


def _mover(server: Server, game: str, board: str) -> str | None:
    with session_for(server.engine) as session:
        row = queries.game_by_board(session, game, board)
        if row is None or row.to_move is None or row.id is None:
            return None
        return queries.players_of(session, row.id)[row.to_move][1].userid


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(stream=st.lists(steps, min_size=1, max_size=25))
def test_random_streams(stream: list[tuple[str, int, int, int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run_stream(stream, Path(tmp), f"sqlite:///{tmp}/p.sqlite3")


def run_stream(stream: list[tuple[str, int, int, int]], tmp: Path, url: str) -> None:
    """Play one random stream on an empty database at `url` and check the invariants."""
    config = Config(
        data_dir=tmp,
        database_url=url,
        server_address="pbm@example.org",
        password_cost=1,
    )
    engine = make_engine(config.database_url)
    SQLModel.metadata.create_all(engine)
    server = Server(engine=engine, config=config, clock=FrozenClock(START))
    sent: list[bytes] = []

    def send(raw: bytes) -> None:
        sent.append(raw)
        status = server.process(raw)
        assert status in ("done", "ignored"), status

    for userid in PLAYERS:
        send(server.raw(f"{userid}@p.example", f"signup {userid} pw"))
    for kind, who, which, n in stream:
        game = GAMES[which]
        userid = PLAYERS[who]
        address = f"{userid}@p.example"
        board = str(101 + n % 2)
        legal = _legal(server, game, board) or ["a1"]
        mover = _mover(server, game, board) or userid
        move = legal[n % len(legal)]
        if kind == "move":
            send(server.raw(f"{mover}@p.example", f"{game} move {board} {mover} pw {move}"))
        elif kind == "token-move":
            mine = [
                m for m in server.outbox() if m.to == [f"{mover}@p.example"] and m.mail.reply_to
            ]
            if mine:
                reply_to = mine[-1].mail.reply_to
                assert reply_to  # only mails with a Reply-To were kept
                send(server.raw(f"{mover}@p.example", "Re: x", move, to=reply_to))
        elif kind == "queue":
            send(server.raw(address, f"{game} queue {board} {userid} pw {move}"))
        elif kind == "bad-move":
            send(server.raw(address, f"{game} move {board} {userid} pw zz{n}"))
        elif kind == "wrong-password":
            send(server.raw(address, f"{game} move {board} {userid} nope {move}"))
        elif kind == "challenge":
            other = PLAYERS[(who + 1 + n % 2) % 3]
            send(server.raw(address, f"{game} challenge {userid} {other}", "hi"))
        elif kind in ("resign", "propose", "accept"):
            send(server.raw(address, f"{game} move {board} {userid} pw {kind}"))
        elif kind == "show":
            send(server.raw(address, f"{game} show {board}"))
        elif kind == "duplicate" and sent:
            send(sent[n % len(sent)])
        elif kind == "garbage":
            send(bytes([n % 256]) * (n % 50) + b"\r\n\r\n\xff\xfe")
        elif kind == "robot":
            send(server.raw("MAILER-DAEMON@p.example", "Undelivered Mail", "bounce"))
    with session_for(engine) as session:
        stored = session.exec(select(func.count()).select_from(InboundMessage)).one()
        # Every mail the stream made has a Message-ID of its own (or, garbage, none): a
        # mail is stored once however often it came, and two different mails are two.
        assert stored == len(set(sent))
        statuses = set(session.exec(select(InboundMessage.status)))
        assert statuses <= {"done", "ignored"}
        for row in session.exec(select(BoardRow)):
            assert row.id is not None
            rules = get_game(row.game)
            texts = [m.text for m in queries.moves_of(session, row.id)]
            position = rules.dump(replay(rules, row.options, texts))
            assert position == row.position
            assert row.move_count == len(texts)
    engine.dispose()
