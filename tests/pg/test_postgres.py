"""A representative part of the server suite on PostgreSQL: migrations, full games by
mail, random message streams and concurrent workers (tests/pg/conftest.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from pbm.clock import FrozenClock
from pbm.config import Config
from pbm.errors import StoreUnavailable
from pbm.intake import process_inbound
from pbm.mailstore import DbInbox
from pbm.store import queries
from pbm.store.engine import make_engine, session_for
from pbm.store.failures import Failure, classify
from pbm.store.schema import init_db
from tests import pg_cluster
from tests.server.conftest import (
    SERVER,
    START,
    Server,
    board_row,
    legal_texts,
    pair,  # noqa: F401 (the fixture of the two below)
)
from tests.server.test_full_games import test_full_game  # noqa: F401 (run here too)
from tests.server.test_mail_flow import (  # noqa: F401 (run here too, with its fixture)
    game,
    test_failed_command_rolls_back_alone,
    test_reply_with_just_the_move,
    test_same_message_runs_once,
)
from tests.server.test_property import run_stream, steps
from tests.server.test_quadrupel_server import (  # noqa: F401 (run here too)
    test_maximum_points_match_with_a_tie_and_a_third_game,
    test_setup_stays_secret_from_the_opponent_until_both_are_in,
)
from tests.server.test_store import assert_migrations_build_the_models


def test_migrations_build_the_models_schema_on_postgres(postgres_url: str) -> None:
    engine = make_engine(postgres_url)
    with engine.begin() as conn:  # from nothing: drop what the session fixture migrated
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    try:
        assert_migrations_build_the_models(engine)
    finally:
        engine.dispose()


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(stream=st.lists(steps, min_size=1, max_size=20))
def test_random_streams_on_postgres(
    stream: list[tuple[str, int, int, int]], postgres_url: str, tmp_path: Path
) -> None:
    pg_cluster.truncate_all(postgres_url)
    run_stream(stream, tmp_path, postgres_url)


def test_concurrent_workers_on_one_board(server: Server) -> None:
    """Four workers get the same moves at once: each move is played exactly once, the
    others are refused (not your move / duplicate) and nothing is lost or raises."""
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    for ply in range(4):
        userid, address = ("alice", alice) if ply % 2 == 0 else ("bob", bob)
        move = legal_texts(server, "quarto")[ply * 3 % len(legal_texts(server, "quarto"))]
        raws = [
            server.raw(address, f"quarto move 101 {userid} secret {move}#{ply + 1}")
            for _ in range(4)
        ]
        with ThreadPoolExecutor(max_workers=4) as pool:
            statuses = list(pool.map(server.process, raws))
        assert statuses == ["done"] * 4
        assert board_row(server, "quarto").move_count == ply + 1
    raws = [server.raw(f"p{i}@x.example", f"signup p{i} pw") for i in range(8)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(server.process, raws)) == ["done"] * 8
    with session_for(server.engine) as session:
        assert len(queries.all_users(session)) == 10


def test_a_stopped_postgres_is_a_store_failure_and_the_mail_waits(tmp_path: Path) -> None:
    """A server that went away: the stored message and the piped one both wait (the
    daemon tries again, the MTA delivers again), neither is marked failed as a bug."""
    cluster = pg_cluster.start_cluster()
    try:
        url = pg_cluster.create_database(cluster, "pbm_stopped")
        engine = make_engine(url)
        init_db(engine)
        server = Server(
            engine,
            Config(data_dir=tmp_path, database_url=url, server_address=SERVER, password_cost=4),
            FrozenClock(START),
        )
        inbox = DbInbox(engine, server.clock, server.config)
        stored, _ = inbox.store_now(server.raw("carol@players.example", "help"), "lmtp")
    finally:
        cluster.stop()
    try:
        with pytest.raises(StoreUnavailable) as raised:
            process_inbound(engine, stored, clock=server.clock, config=server.config)
        assert raised.value.kind == Failure.UNAVAILABLE
        assert isinstance(raised.value.__cause__, OperationalError)
        assert classify(raised.value.__cause__) is Failure.UNAVAILABLE
        with pytest.raises(StoreUnavailable) as piped:
            server.process(server.raw("dave@players.example", "help"))
        assert piped.value.kind == Failure.UNAVAILABLE
    finally:
        engine.dispose()


def test_the_database_password_is_never_printed(postgres_url: str, tmp_path: Path) -> None:
    # `pbm db upgrade` printed the URL with its password, and `pbm serve` logged it at
    # every start (to the journal).
    secret = "s3cret-pw"
    url = make_url(postgres_url).set(password=secret).render_as_string(hide_password=False)
    config = tmp_path / "pbm.toml"
    config.write_text(
        f'[server]\ndata_dir = "{tmp_path}"\n[store]\ndatabase_url = "{url}"\n'
        '[mail.listen]\nsmtp = ""\n[web]\nmetrics_listen = ""\n',
        encoding="utf-8",
    )
    pbm = [sys.executable, "-m", "pbm", "--config", str(config)]
    upgraded = subprocess.run([*pbm, "db", "upgrade"], capture_output=True, text=True, timeout=120)
    assert upgraded.returncode == 0, upgraded.stderr
    assert secret not in upgraded.stdout and ":***@" in upgraded.stdout
    with (tmp_path / "serve.log").open("w+") as log:
        daemon = subprocess.Popen([*pbm, "serve"], stdout=subprocess.DEVNULL, stderr=log)
        try:
            deadline = time.monotonic() + 60
            while "event=started" not in (tmp_path / "serve.log").read_text():
                assert time.monotonic() < deadline and daemon.poll() is None, (
                    tmp_path / "serve.log"
                ).read_text()[-2000:]
                time.sleep(0.2)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
    logged = (tmp_path / "serve.log").read_text()
    assert secret not in logged and ":***@" in logged
