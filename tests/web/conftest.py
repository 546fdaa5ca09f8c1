"""Fixtures for the web tests: a server with boards played by mail, its pages through
Starlette's TestClient (the app as uvicorn runs it), on the server's frozen clock."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.store.engine import make_engine
from pbm.store.readonly import make_read_engine
from pbm.store.schema import init_db
from pbm.web.app import Reader, Writer, make_app
from tests.server.conftest import START, Server, config, legal_texts  # noqa: F401

BASE = "https://pbm.example.org"


@pytest.fixture
def web_config(config: Config) -> Config:  # noqa: F811
    return dataclasses.replace(config, web_base_url=BASE)


@pytest.fixture
def site(web_config: Config) -> Iterator[Server]:
    """A server whose mails link to BASE."""
    engine = make_engine(web_config.database_url)
    init_db(engine)
    yield Server(engine=engine, config=web_config, clock=FrozenClock(START))
    engine.dispose()


def client_for(running: Server) -> TestClient:
    reader = Reader(make_read_engine(running.config.database_url), running.config, running.clock)
    writer = Writer(running.engine, running.config, running.clock)
    return TestClient(make_app(running.config, reader, writer), base_url=BASE)


@pytest.fixture
def client(site: Server) -> Iterator[TestClient]:
    with client_for(site) as running:
        yield running


def play(running: Server, game: str = "quarto", moves: int = 4) -> str:
    """alice and bob play `moves` moves of a new board by mail; returns the board."""
    for userid in ("alice", "bob"):
        running.signup(userid)
    assert running.send("alice@players.example", f"{game} challenge alice bob") == "done"
    for number in range(moves):
        player = ("alice", "bob")[number % 2]
        text = legal_texts(running, game)[0]
        subject = f"{game} move 101 {player} secret {text}"
        assert running.send(f"{player}@players.example", subject) == "done"
    running.new_mail()
    return "101"
