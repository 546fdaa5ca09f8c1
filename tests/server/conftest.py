"""Fixtures for the server tests: a fresh database, a frozen clock, a mail helper."""

from __future__ import annotations

import email
import itertools
import json
import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage
from email.policy import SMTPUTF8, default
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, col, select
from typer.testing import CliRunner

from pbm.cli import app
from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.intake import process_message
from pbm.mail.inbound import InboundMail, parse_message
from pbm.store.engine import make_engine, session_for
from pbm.store.models import BoardRow, GamePlayer, InboundMessage, OutboxMail, User
from pbm.store.schema import init_db

START = datetime(2026, 11, 22, 2, 41, tzinfo=UTC)
SERVER = "pbm@example.org"
DATA = Path(__file__).resolve().parent.parent / "data" / "server"


@dataclass
class Sent:
    """A queued reply, parsed back the way a player's mail program reads it."""

    to: list[str]
    subject: str
    body: str
    raw: bytes
    mail: InboundMail
    id: int = 0


@dataclass
class Server:
    engine: Engine
    config: Config
    clock: FrozenClock
    counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    seen: int = 0

    def raw(
        self,
        sender: str,
        subject: str,
        body: str = "",
        *,
        to: str = SERVER,
        headers: dict[str, str] | None = None,
        message_id: str | None = None,
    ) -> bytes:
        # An internationalised address goes in UTF-8 (SMTPUTF8), as its mail program sends it.
        msg = EmailMessage(policy=default if sender.isascii() else SMTPUTF8)
        msg["From"] = sender
        msg["To"] = to
        msg["Subject"] = subject
        msg["Date"] = format_datetime(self.clock.now())
        msg["Message-ID"] = message_id or f"<test.{next(self.counter)}@players.example>"
        for name, value in (headers or {}).items():
            msg[name] = value
        msg.set_content(body or "\n")
        return msg.as_bytes()

    def send(
        self, sender: str, subject: str, body: str = "", *, failing: bool = False, **kw: Any
    ) -> str:
        return self.process(self.raw(sender, subject, body, **kw), failing=failing)

    def process(self, raw: bytes, *, failing: bool = False) -> str:
        """Process one mail; its status. A mail whose processing failed (a bug in pbm, its
        traceback stored with it) fails the test there, unless `failing` says the test
        makes it fail: else a test that checks only that nothing happened would pass."""
        status = process_message(self.engine, raw, via="cli", clock=self.clock, config=self.config)
        if status == "failed" and not failing:
            with session_for(self.engine) as session:
                query = select(InboundMessage).where(InboundMessage.status == "failed")
                row = session.exec(query.order_by(col(InboundMessage.id).desc())).first()
                raise AssertionError(f"the mail failed: {row.error if row else '?'}")
        return status

    def outbox(self, after: int = 0) -> list[Sent]:
        """Queued replies (with an outbox id above `after`), parsed."""
        with session_for(self.engine) as session:
            query = (
                select(OutboxMail).where(col(OutboxMail.id) > after).order_by(col(OutboxMail.id))
            )
            rows = list(session.exec(query))
        sent = []
        for r in rows:
            mail = parse_message(r.raw)
            sent.append(
                Sent(json.loads(r.recipients), r.subject, mail.text, r.raw, mail, r.saved_id)
            )
        return sent

    def new_mail(self) -> list[Sent]:
        """Replies queued since the last call."""
        fresh = self.outbox(after=self.seen)
        if fresh:
            self.seen = fresh[-1].id
        return fresh

    def to(self, address: str, mails: list[Sent]) -> list[Sent]:
        return [m for m in mails if address in m.to]

    def signup(self, userid: str, password: str = "secret", address: str = "") -> str:
        """Sign `userid` up from `address` (by default USERID@players.example) and
        confirm the address the way its owner does: a reply to the welcome mail, which
        is its confirmation request. Returns the address; the mails are read."""
        address = address or f"{userid}@players.example"
        assert self.send(address, f"signup {userid} {password}") == "done"
        self.confirm(address)
        self.new_mail()
        return address

    def confirm(self, address: str) -> None:
        """Answer the newest confirmation request mailed to `address` from it (an empty
        reply to its Reply-To address, as a mail program sends it)."""
        mine = address.lower()
        requests = [
            m for m in self.outbox() if mine in map(str.lower, m.to) and "confirm " in m.body
        ]
        assert requests, f"no confirmation request to {address}"
        request = requests[-1].mail
        reply_to = email.message_from_bytes(requests[-1].raw)["Reply-To"]
        assert reply_to, f"the request to {address} has no Reply-To"
        headers = {"In-Reply-To": request.message_id} if request.message_id else {}
        assert self.send(address, "Re: confirm", "\n", to=reply_to, headers=headers) == "done"
        answer = [m for m in self.outbox(after=requests[-1].id) if mine in map(str.lower, m.to)]
        assert answer and "is confirmed for" in flat(answer[-1].body), answer and answer[-1].body


def flat(text: str) -> str:
    """`text` with its line breaks and runs of spaces as single spaces: what a sentence
    says, however a phrase was folded at 72 columns."""
    return " ".join(text.split())


@contextmanager
def fresh_server(**settings: Any) -> Iterator[Server]:
    """A server on a new SQLite database in a temporary directory (for property tests,
    whose examples each need one), with `settings` over the test defaults."""
    with tempfile.TemporaryDirectory() as tmp:
        # Any setting of any type: Config checks each one as it does a file's.
        defaults: dict[str, Any] = {
            "data_dir": Path(tmp),
            "database_url": f"sqlite:///{tmp}/p.sqlite3",
            "server_address": SERVER,
            "password_cost": 1,
        }
        config = Config(**(defaults | settings))
        engine = make_engine(config.database_url)
        SQLModel.metadata.create_all(engine)
        try:
            yield Server(engine=engine, config=config, clock=FrozenClock(START))
        finally:
            engine.dispose()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A migrated database in a private PostgreSQL cluster, for the whole test session."""
    from tests import pg_cluster

    if not (pg_cluster.required() or pg_cluster.available()):
        pytest.skip("no PostgreSQL here (PBM_TEST_POSTGRES=required installs it or fails)")
    try:
        cluster = pg_cluster.start_cluster()
    except pg_cluster.ClusterUnavailable as exc:
        if pg_cluster.required():
            setting = os.environ["PBM_TEST_POSTGRES"]
            pytest.fail(f"PBM_TEST_POSTGRES={setting}, but no PostgreSQL: {exc}")
        pytest.skip(f"no PostgreSQL: {exc}")
    try:
        url = pg_cluster.create_database(cluster, "pbm_test")
        engine = make_engine(url)
        init_db(engine)
        engine.dispose()
        yield url
    finally:
        cluster.stop()


def database_url(tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """SQLite in the test's directory; an emptied PostgreSQL database with PBM_TEST_POSTGRES=1
    (or when the test asks for `postgres_url` itself)."""
    from tests import pg_cluster

    on_sqlite = request.node.get_closest_marker("sqlite") is not None
    if (pg_cluster.wanted() and not on_sqlite) or "postgres_url" in request.fixturenames:
        url = str(request.getfixturevalue("postgres_url"))
        pg_cluster.truncate_all(url)
        return url
    return f"sqlite:///{tmp_path / 'pbm.sqlite3'}"


runner = CliRunner()


@pytest.fixture
def cfg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A configuration file (PBM_CONFIG) over an initialised database, for the admin CLI."""
    path = tmp_path / "pbm.toml"
    path.write_text(
        f'[server]\naddress = "pbm@example.org"\ndata_dir = "{tmp_path}"\n'
        f'[store]\ndatabase_url = "sqlite:///{tmp_path}/pbm.sqlite3"\n'
        "[security]\npassword_cost = 4\n"
    )
    monkeypatch.setenv("PBM_CONFIG", str(path))
    assert runner.invoke(app, ["db", "init"]).exit_code == 0
    return path


def cli_ok(*args: str, input: str | bytes | None = None) -> str:
    """The output of a `pbm` command that must succeed."""
    result = runner.invoke(app, list(args), input=input)
    assert result.exit_code == 0, result.output
    return result.output


def operator_cli(server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The admin CLI (`cli_ok`) pointed at the server's database, as the operator runs it."""
    path = tmp_path / "cli.toml"
    path.write_text(
        f'[server]\naddress = "pbm@example.org"\ndata_dir = "{tmp_path}"\n'
        f'[store]\ndatabase_url = "{server.config.database_url}"\n'
    )
    monkeypatch.setenv("PBM_CONFIG", str(path))


@pytest.fixture
def config(tmp_path: Path, request: pytest.FixtureRequest) -> Config:
    return Config(
        data_dir=tmp_path,
        database_url=database_url(tmp_path, request),
        server_address=SERVER,
        server_name="PBeM Server",
        password_cost=4,
        max_failures=3,
    )


@pytest.fixture
def server(config: Config) -> Iterator[Server]:
    engine = make_engine(config.database_url)
    init_db(engine)
    running = Server(engine=engine, config=config, clock=FrozenClock(START))
    yield running
    # A test may restart the engine (a new process): close whichever it left open.
    running.engine.dispose()
    engine.dispose()


def legal_texts(server: Server, game: str, board: str = "101") -> list[str]:
    """Canonical texts of the legal moves on a stored board (to drive games in tests)."""
    from pbm.games import get_game
    from pbm.store import queries

    rules = get_game(game)
    with session_for(server.engine) as session:
        row = queries.game_by_board(session, rules.name, board)
        assert row is not None
        state = rules.load(row.position)
    return [rules.format_move(state, m) for m in rules.legal_moves(state)]


@pytest.fixture
def pair(server: Server) -> tuple[str, str]:
    """alice and bob signed up, their addresses confirmed: (alice's, bob's address)."""
    return server.signup("alice"), server.signup("bob")


def play_first_moves(
    server: Server, game: str, board: str = "101", count: int | None = None
) -> list[Sent]:
    """Play the first legal move of the player to move (alice or bob, by challenge
    order, password "secret"), `count` times or until the board ends; returns the mails
    of the last move."""
    mails: list[Sent] = []
    played = 0
    while board_row(server, game, board).status == "active" and (count is None or played < count):
        userid = ("alice", "bob")[seat_to_move(board_row(server, game, board))]
        move = legal_texts(server, game, board)[0]
        sender = f"{userid}@players.example"
        assert server.send(sender, f"{game} move {board} {userid} secret {move}") == "done"
        mails = server.new_mail()
        played += 1
    return mails


def seated(session: Session, rows: Iterable[BoardRow]) -> list[tuple[str, list[str]]]:
    """(board, userids in seat order) of each of `rows`, by board name."""
    found = []
    for row in sorted(rows, key=lambda r: r.board):
        seats = session.exec(
            select(User.userid)
            .join(GamePlayer, col(GamePlayer.user_id) == User.id)
            .where(GamePlayer.game_id == row.id)
            .order_by(col(GamePlayer.position))
        ).all()
        found.append((row.board, list(seats)))
    return found


def find_board(server: Server, game: str, board: str = "101") -> BoardRow | None:
    """The row of `game`'s board `board`, or None when there is no such board."""
    from pbm.games import get_game
    from pbm.store import queries

    with session_for(server.engine) as session:
        return queries.game_by_board(session, get_game(game).name, board)


def board_row(server: Server, game: str, board: str = "101") -> BoardRow:
    """The row of `game`'s board `board`, which the test expects to exist."""
    row = find_board(server, game, board)
    assert row is not None, f"there is no {game} board {board}"
    return row


def seat_to_move(row: BoardRow) -> int:
    """The seat to move on `row`, a board the test expects to be running."""
    assert row.to_move is not None, f"board {row.board} is over: no one is to move"
    return row.to_move


@contextmanager
def small_tmpfs(directory: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` mounted at `directory` (root only; the test is skipped
    otherwise), unmounted afterwards: a real full or read-only disk for store tests."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    directory.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
        capture_output=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount tmpfs: {done.stderr.decode().strip()}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", "-l", str(directory)], check=False)
