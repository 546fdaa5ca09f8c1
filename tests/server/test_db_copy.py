"""`pbm db copy SOURCE_URL`: an installation filled through the real pipeline on SQLite
is copied into another database (a new SQLite file, and the private PostgreSQL), table
for table, and plays on there with fresh ids; what must not be copied is refused."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, text, update
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from pbm.cli import app
from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.jobs import run_due
from pbm.store.copy import NOT_COPIED, UNCLAIMED
from pbm.store.engine import make_engine
from pbm.store.schema import init_db, known_revisions, schema_heads
from tests.server.conftest import (
    SERVER,
    START,
    Server,
    legal_texts,
    play_first_moves,
    runner,
)

HOUR = timedelta(hours=1)


@pytest.fixture
def source(tmp_path: Path) -> Iterator[Server]:
    """A SQLite installation (its own data directory), empty but for its schema."""
    home = tmp_path / "old"
    config = Config(
        data_dir=home,
        database_url=f"sqlite:///{home}/pbm.sqlite3",
        server_address=SERVER,
        password_cost=4,
    )
    engine = make_engine(config.database_url)
    init_db(engine)
    running = Server(engine=engine, config=config, clock=FrozenClock(START))
    yield running
    running.engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The URL of an empty database that the configuration (PBM_CONFIG) names."""
    if request.param == "postgresql":
        from tests import pg_cluster

        url = str(request.getfixturevalue("postgres_url"))
        pg_cluster.truncate_all(url)
    else:
        url = f"sqlite:///{tmp_path}/new/pbm.sqlite3"
    path = tmp_path / "pbm.toml"
    path.write_text(
        f'[server]\naddress = "{SERVER}"\ndata_dir = "{tmp_path}/new"\n'
        f'[store]\ndatabase_url = "{url}"\n[security]\npassword_cost = 4\n'
    )
    monkeypatch.setenv("PBM_CONFIG", str(path))
    return url


def _fill(server: Server) -> None:
    """Players, boards running and finished (so ratings), a tournament, chat, vacation,
    reminders (job marks), refused logins, and a claim of a daemon that ran there."""
    alice = server.signup("alice")
    bob = server.signup("bob")
    carol = server.signup("carol")
    assert server.send(alice, "quarto challenge alice bob") == "done"
    play_first_moves(server, "quarto", "101", count=3)
    assert server.send(bob, "quarto resign 101 bob secret") == "done"  # rated: alice won
    assert server.send(carol, "quadrature challenge carol alice") == "done"
    text_ = legal_texts(server, "quadrature", "101")[0]
    assert server.send(carol, f"quadrature move 101 carol secret {text_}") == "done"
    server.send(alice, "quadrature chat 101 alice secret", "good luck")
    server.send(alice, "quadrature subscribe 101 alice secret")
    server.send(bob, "quarto show 101 bob wrong-password")
    server.send(alice, "set alice secret format text")
    assert server.send(alice, "tournament create alice secret spring quarto") == "done"
    assert server.send(bob, "tournament join spring bob secret") == "done"
    server.clock.advance(timedelta(days=8))
    run_due(server.engine, server.clock, server.config)  # reminders: job marks
    server.send(carol, "vacation carol secret start")
    server.new_mail()
    with server.engine.begin() as conn:
        daemons = SQLModel.metadata.tables["daemons"]
        conn.execute(
            daemons.insert().values(
                id=7, host="old-host", pid=42, started_at=START, last_seen=START, counters="{}"
            )
        )
        outbox = SQLModel.metadata.tables["outbox"]
        conn.execute(update(outbox).values(claimed_by=7, claimed_until=START + HOUR))


def _rows(engine: Engine) -> dict[str, list[dict[str, Any]]]:
    """Every table's rows as dicts, by id."""
    found = {}
    with engine.connect() as conn:
        for table in SQLModel.metadata.sorted_tables:
            rows = conn.execute(select(table).order_by(table.c.id)).mappings()
            found[table.name] = [dict(row) for row in rows]
    return found


def _copied(before: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """What a copy of the rows `before` holds: no daemons, no claims."""
    expected = {name: [dict(row) for row in rows] for name, rows in before.items()}
    for name, columns in UNCLAIMED.items():
        for row in expected[name]:
            row.update(dict.fromkeys(columns))
    return expected | {name: [] for name in NOT_COPIED}


def _copy(url: str) -> Any:
    return runner.invoke(app, ["db", "copy", url])


def test_copy_moves_every_row_and_play_goes_on_with_fresh_ids(source: Server, target: str) -> None:
    _fill(source)
    before = _rows(source.engine)
    assert before["player_ratings"] and before["tournament_entries"] and before["job_marks"]

    done = _copy(str(source.engine.url))
    assert done.exit_code == 0, done.output
    total = sum(len(rows) for name, rows in before.items() if name not in NOT_COPIED)
    assert re.search(rf"\n  total +{total} rows in [0-9.]+ s\n", done.output)
    assert done.output.count("\n") == len(before) - len(NOT_COPIED) + 3  # quiet: a line a table

    engine = make_engine(target, create=False)
    try:
        after = _rows(engine)
        assert after == _copied(before)

        # The copy plays on: a move, its mails and its messages take ids after the copied.
        moved = Server(
            engine=engine,
            config=replace(source.config, database_url=target),
            clock=FrozenClock(source.clock.now() + HOUR),
            counter=source.counter,  # Message-IDs the copy has not seen
        )
        move = legal_texts(moved, "quadrature", "101")[0]
        sender = "alice@players.example"
        assert moved.send(sender, f"quadrature move 101 alice secret {move}") == "done"
        fresh = _rows(engine)
        for name in ("moves", "inbound_messages", "outbox"):
            top = max(row["id"] for row in before[name])
            assert [row["id"] for row in fresh[name]][-1] > top, name
        assert len(fresh["moves"]) == len(before["moves"]) + 1
    finally:
        engine.dispose()


def test_a_second_copy_is_refused_and_changes_nothing(source: Server, target: str) -> None:
    source.signup("alice")
    assert _copy(str(source.engine.url)).exit_code == 0
    source.signup("bob")
    again = _copy(str(source.engine.url))
    assert again.exit_code == 78
    assert "holds rows already" in again.output and "empty database" in again.output
    engine = make_engine(target, create=False)
    try:
        assert [row["userid"] for row in _rows(engine)["users"]] == ["alice"]
    finally:
        engine.dispose()


def test_the_configured_database_itself_and_no_database_are_refused(target: str) -> None:
    done = _copy(target)
    assert done.exit_code == 2
    assert "is the configured database itself" in done.output
    unknown = _copy("postgresql+nosuchdriver://pbm:hunter2@db.example.org/pbm")
    assert unknown.exit_code == 2 and unknown.output.count("\n") == 1
    assert "hunter2" not in unknown.output and "pbm:***@db.example.org" in unknown.output
    missing = _copy(f"sqlite:///{target.rpartition('/')[0]}/nothing-here.sqlite3")
    assert missing.exit_code == 69 and "does not exist" in missing.output


def test_a_postgresql_installation_copies_to_sqlite(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other way round (a snapshot of PostgreSQL read in one transaction)."""
    from tests import pg_cluster

    pg_cluster.truncate_all(postgres_url)
    config = Config(
        data_dir=tmp_path, database_url=postgres_url, server_address=SERVER, password_cost=4
    )
    engine = make_engine(postgres_url)
    try:
        _fill(Server(engine=engine, config=config, clock=FrozenClock(START)))
        before = _rows(engine)
    finally:
        engine.dispose()
    path = tmp_path / "pbm.toml"
    path.write_text(
        f'[server]\naddress = "{SERVER}"\ndata_dir = "{tmp_path}"\n'
        f'[store]\ndatabase_url = "sqlite:///{tmp_path}/pbm.sqlite3"\n'
    )
    monkeypatch.setenv("PBM_CONFIG", str(path))
    done = _copy(postgres_url)
    assert done.exit_code == 0, done.output
    copy = make_engine(f"sqlite:///{tmp_path}/pbm.sqlite3", create=False)
    try:
        after = _rows(copy)
    finally:
        copy.dispose()
    assert after == _copied(before)


@pytest.mark.parametrize(
    ("stored", "says"),
    [
        (lambda: sorted(known_revisions() - schema_heads())[-1], "run `pbm db upgrade`"),
        (lambda: "9999_from_the_future", "newer than this pbm"),
    ],
)
def test_a_source_of_another_schema_is_refused(
    source: Server, target: str, stored: Any, says: str
) -> None:
    source.signup("alice")
    with source.engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": stored()})
    done = _copy(str(source.engine.url))
    assert done.exit_code == 78, done.output
    assert says in done.output and done.output.count("\n") == 1


def test_a_copy_that_fails_leaves_the_target_empty(source: Server, target: str) -> None:
    """A row PostgreSQL refuses (SQLite keeps a text longer than its column), in a table
    copied after the players: nothing at all is copied, and the line names the table."""
    source.signup("alice")
    with source.engine.begin() as conn:
        addresses = SQLModel.metadata.tables["user_addresses"]
        conn.execute(addresses.insert().values(user_id=1, address="x" * 300, mailbox="x"))
    done = _copy(str(source.engine.url))
    if target.startswith("sqlite"):
        assert done.exit_code == 0  # SQLite keeps it
        return
    assert done.exit_code == 78, done.output
    assert "cannot copy user_addresses" in done.output and "nothing was copied" in done.output
    engine = make_engine(target, create=False)
    try:
        with engine.connect() as conn:
            users = SQLModel.metadata.tables["users"]
            assert conn.execute(select(func.count()).select_from(users)).scalar_one() == 0
    finally:
        engine.dispose()
