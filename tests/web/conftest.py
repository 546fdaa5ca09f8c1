"""Fixtures for the web tests: a server whose mails link to BASE, with boards and a
tournament played by mail, and its pages through Starlette's TestClient (the app as
uvicorn runs it), on the server's frozen clock."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from sqlalchemy import inspect
from starlette.testclient import TestClient

from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.store.engine import make_engine
from pbm.store.readonly import make_read_engine
from pbm.store.schema import init_db
from pbm.web.app import Reader, Writer, make_app
from tests.server.conftest import START, Server, config, legal_texts, postgres_url, server  # noqa: F401 (fixtures)

BASE = "https://pbm.example.org"
PEOPLE = ("alice", "bob", "cat")


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


@contextmanager
def reader_for(running: Server, settings: Config | None = None) -> Iterator[Reader]:
    """The pages' reader on the server's database, its engine closed after."""
    settings = settings or running.config
    engine = make_read_engine(settings.database_url)
    try:
        yield Reader(engine, settings, running.clock)
    finally:
        engine.dispose()


@contextmanager
def client_for(running: Server, settings: Config | None = None) -> Iterator[TestClient]:
    settings = settings or running.config
    writer = Writer(running.engine, settings, running.clock)
    with (
        reader_for(running, settings) as reader,
        TestClient(make_app(settings, reader, writer), base_url=BASE) as client,
    ):
        yield client


@pytest.fixture
def client(site: Server) -> Iterator[TestClient]:
    with client_for(site) as running:
        yield running


def move(running: Server, game: str, board: str, player: str, index: int = 0) -> None:
    """`player` plays the `index`-th legal move of the board by mail, an hour later."""
    running.clock.advance(timedelta(hours=1))
    text = legal_texts(running, game, board)[index]
    subject = f"{game} move {board} {player} secret {text}"
    assert running.send(f"{player}@players.example", subject) == "done"


def play(running: Server, game: str = "quarto", moves: int = 4, signup: bool = True) -> str:
    """alice and bob play `moves` moves of a new board by mail; returns the board."""
    if signup:
        for userid in PEOPLE:
            running.signup(userid)
    assert running.send("alice@players.example", f"{game} challenge alice bob") == "done"
    board = "101"
    for number in range(moves):
        move(running, game, board, ("alice", "bob")[number % 2])
    running.new_mail()
    return board


def with_everything(running: Server) -> None:
    """A running Quarto board, a finished one, and a started round robin of three."""
    play(running)
    assert running.send("alice@players.example", "quarto challenge bob alice") == "done"
    for number in range(4):
        move(running, "quarto", "102", ("bob", "alice")[number % 2])
    assert running.send("alice@players.example", "quarto resign 102 alice secret") == "done"
    assert running.send("alice@players.example", "tournament create alice secret cup quarto")
    for userid in PEOPLE:
        running.send(f"{userid}@players.example", f"tournament join cup {userid} secret")
    running.send("alice@players.example", "tournament start cup alice secret")
    running.new_mail()


def snapshot(running: Server) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table: what a GET must leave as it was."""
    with running.engine.connect() as conn:
        names = inspect(conn).get_table_names()
        return {
            name: sorted(map(tuple, conn.exec_driver_sql(f'SELECT * FROM "{name}"')), key=repr)
            for name in names
        }
