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


def test_the_configured_database_under_another_name_of_its_host_is_refused(target: str) -> None:
    # `localhost` and `127.0.0.1` were compared as words: a copy of the database onto
    # itself went ahead (and stopped at "holds rows already", or emptied nothing only
    # because the copy runs in one transaction).
    if not target.startswith("postgresql"):
        pytest.skip("a host name is a server database's")
    for other in ("localhost", "[::1]"):
        done = _copy(target.replace("@127.0.0.1:", f"@{other}:"))
        assert done.exit_code == 2, done.output
        assert "is the configured database itself" in done.output


LOCALHOST = "postgresql+psycopg://pbm@localhost/pbm"


@pytest.mark.parametrize(
    ("other", "same"),
    [
        ("postgresql://someone:secret@127.0.0.1:5432/pbm", True),  # the default port
        ("postgresql+psycopg://pbm@[::1]/pbm", True),
        ("postgresql+psycopg://pbm@/pbm", True),  # the local socket
        ("postgresql+psycopg://pbm@localhost:5433/pbm", False),
        ("postgresql+psycopg://pbm@localhost/pbm2", False),
        ("postgresql+psycopg://pbm@192.0.2.7/pbm", False),
        ("sqlite:///pbm", False),
    ],
)
def test_same_database_compares_addresses_port_and_name(other: str, same: bool) -> None:
    from pbm.store.copy import same_database

    assert same_database(LOCALHOST, other) is same
    assert same_database(other, LOCALHOST) is same


def test_same_database_knows_this_machine_by_its_own_name() -> None:
    import socket

    from pbm.store.copy import same_database

    own = f"postgresql+psycopg://pbm@{socket.gethostname()}/pbm"
    assert same_database(LOCALHOST, own)


def test_same_database_resolves_names_and_keeps_an_unknown_one_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import socket

    from pbm.store.copy import same_database

    real = socket.getaddrinfo
    zone = {"db.example.org": "192.0.2.7", "pg.example.org": "192.0.2.7"}
    zone["other.example.org"] = "192.0.2.8"

    def lookup(host: str, *args: Any, **kwargs: Any) -> Any:
        if host in zone:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (zone[host], 0))]
        if host.endswith(".example.org"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    url = "postgresql://pbm@{}/pbm".format
    assert same_database(url("db.example.org"), url("pg.example.org"))
    assert same_database(url("db.example.org"), url("192.0.2.7"))
    assert not same_database(url("db.example.org"), url("other.example.org"))
    assert same_database(url("gone.example.org"), url("GONE.example.org."))
    assert not same_database(url("gone.example.org"), url("lost.example.org"))
