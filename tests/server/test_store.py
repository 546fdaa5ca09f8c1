"""The store: migrations match the models, SQLite settings, intake and outbox contract,
and the cached position of every board equals a replay of its moves."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlmodel import SQLModel

from pbm.games import get_game
from pbm.intake import arrival, message_id_of, store_inbound
from pbm.mail.identity import DEFAULT_RULES
from pbm.mailstore import DbInbox
from pbm.services.mailing import outbox
from pbm.services.play.boards import replay
from pbm.store import claims, queries
from pbm.store.engine import make_engine, session_for
from pbm.store.models import User
from pbm.store.schema import alembic_config, current_revision, init_db, schema_heads
from pbm.store.types import Stored, UnsavedRowError
from tests.outbox_rows import queue_mail
from tests.server.conftest import START, Server, legal_texts


def assert_migrations_build_the_models(engine: Engine) -> None:
    """Migrating an empty database (twice: an up-to-date one upgrades harmlessly) gives
    exactly the schema the models describe."""
    init_db(engine)
    init_db(engine)
    assert current_revision(engine) is not None
    with engine.connect() as conn:
        diff = compare_metadata(
            MigrationContext.configure(conn, opts={"compare_type": True}), SQLModel.metadata
        )
    assert diff == []


def test_migrated_schema_equals_the_models(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    try:
        assert_migrations_build_the_models(engine)
    finally:
        engine.dispose()


def test_a_database_with_players_upgrades_from_the_first_schema(tmp_path: Path) -> None:
    """Upgrading copies tables that others point at (users, games): a database of the
    first schema with players, a board, its moves and mails upgrades to the newest with
    every row kept, and the connection enforces foreign keys again afterwards."""
    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    command.upgrade(alembic_config(engine), "0001")
    at = "'2026-01-01 00:00:00'"
    rows = [
        f"INSERT INTO users VALUES (1, 'alice', 'alice', 'x', {at}, 0),"
        f" (2, 'bob', 'bob', 'x', {at}, 0)",
        "INSERT INTO user_addresses VALUES (1, 1, 'alice@example.org', 0),"
        " (2, 2, 'bob@example.org', 0)",
        "INSERT INTO games (id, game, board, board_number, status, options, server_options,"
        " position, move_count, to_move, created_at, last_move_at, rated) VALUES (1,"
        " 'quarto', '101', 101, 'active', '{}', '{}', '', 1, 1, " + at + ", " + at + ", 1)",
        "INSERT INTO game_players VALUES (1, 1, 1, 0, 0, NULL, 0, NULL, 60.0, 't1'),"
        " (2, 1, 2, 1, 0, NULL, 1, NULL, 0.0, 't2')",
        f"INSERT INTO moves VALUES (1, 1, 1, 0, 'give TLRH', 0, {at})",
        f"INSERT INTO inbound_messages VALUES (1, '<a@x>', {at}, 'smtp', x'41', 'done',"
        f" NULL, {at})",
        f"INSERT INTO outbox VALUES (1, {at}, 'pbm@example.org', '[\"b@example.org\"]',"
        f" 's', 'b', x'41', 'sent', 1, {at}, NULL, {at}, '<o@x>', 1)",
    ]
    with engine.begin() as conn:
        for sql in rows:
            conn.execute(text(sql))
    init_db(engine)
    with engine.connect() as conn:
        assert current_revision(engine) in schema_heads()
        counted = {
            table: conn.execute(text(f"SELECT count(*) FROM {table}")).scalar()
            for table in ("users", "user_addresses", "games", "game_players", "moves")
        }
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA foreign_key_check")).all() == []
    engine.dispose()
    assert counted == {"users": 2, "user_addresses": 2, "games": 1, "game_players": 2, "moves": 1}


def test_sqlite_uses_wal_and_a_busy_timeout(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'w.sqlite3'}")
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 10000
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
    engine.dispose()


def test_store_inbound_is_idempotent(server: Server) -> None:
    raw = server.raw("a@b.example", "help", message_id="<same@b.example>")
    with session_for(server.engine) as session:
        first = store_inbound(session, arrival(raw, DEFAULT_RULES), via="imap", now=START)
        again = store_inbound(session, arrival(raw, DEFAULT_RULES), via="lmtp", now=START)
        session.commit()
    assert first[1] is True and again == (first[0], False)
    # A mail without a Message-ID is known again by its bytes, and another is not taken
    # for it.
    no_id = b"From: a@b.example\r\nSubject: help\r\n\r\nhi\r\n"
    other = no_id.replace(b"hi", b"hello")
    assert message_id_of(no_id).startswith("<missing.")
    assert message_id_of(other).startswith("<missing.")
    with session_for(server.engine) as session:
        kept = store_inbound(session, arrival(no_id, DEFAULT_RULES), via="imap", now=START)
        same = store_inbound(session, arrival(no_id, DEFAULT_RULES), via="lmtp", now=START)
        new = store_inbound(session, arrival(other, DEFAULT_RULES), via="imap", now=START)
        session.commit()
    assert kept[1] is True and same == (kept[0], False)
    assert new[1] is True and len({first[0], kept[0], new[0]}) == 3


def test_outbox_contract(server: Server) -> None:
    with session_for(server.engine) as session:
        mail = queue_mail(
            session,
            now=START,
            envelope_from="pbm@example.org",
            recipients=["x@y.example"],
            subject="s",
            body="b",
            raw=b"raw",
            message_id="<m@x>",
        )
        session.commit()
        assert mail.id is not None
        assert outbox.outbox_depth(session) == 1
        assert [m.id for m in claims.claim_outbox(session, owner=1, now=START, limit=10)] == [
            mail.id
        ]
        # the sender's mails in hand are never claimed again, even by their own daemon
        assert claims.claim_outbox(session, owner=1, now=START, limit=10, held={mail.id}) == []
        outbox.mark_retry(session, mail.id, START, "421 busy", timedelta(minutes=5))
        session.commit()
        assert claims.claim_outbox(session, owner=1, now=START, limit=10) == []
        later = START + timedelta(minutes=6)
        assert [m.id for m in claims.claim_outbox(session, owner=1, now=later, limit=10)] == [
            mail.id
        ]
        outbox.mark_sent(session, [mail.id], later)
        session.commit()
        session.expire_all()  # mark_sent is one Core UPDATE: the row held here is stale
        row = session.get(type(mail), mail.id)
        assert row is not None and row.status == "sent" and row.attempts == 2
        assert outbox.outbox_depth(session) == 0
        assert json.loads(row.recipients) == ["x@y.example"]


def test_cached_position_equals_replay(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    players = {0: (alice, "alice"), 1: (bob, "bob")}
    rules = get_game("quarto")
    for ply in range(6):
        address, userid = players[ply % 2]
        move = legal_texts(server, "quarto")[ply * 7 % len(legal_texts(server, "quarto"))]
        assert server.send(address, f"quarto move 101 {userid} secret {move}") == "done"
    with session_for(server.engine) as session:
        row = queries.game_by_board(session, "quarto", "101")
        assert row is not None and row.id is not None and row.move_count == 6
        texts = [m.text for m in queries.moves_of(session, row.id)]
        assert rules.dump(replay(rules, row.options, texts)) == row.position


def test_json_columns_keep_their_stored_text_and_read_back_typed(server: Server) -> None:
    """The typed JSON columns store the text pbm always stored (keys sorted), so old
    rows read back and no data migration is needed; callers get dicts and lists."""
    alice = server.signup("alice")
    server.signup("bob")
    assert server.send(alice, "quarod challenge size=10 nagtime=5 alice bob") == "done"
    with session_for(server.engine) as session:
        row = queries.game_by_board(session, "quarod", "101")
        assert row is not None
        assert row.options == {"size": "10"} and row.server_options == {"nagtime": "5"}
        assert row.proposal_votes is None
        row.proposal_votes = [1, 0]
        row.server_options = {"b": "2", "a": "1"}
        session.commit()
        stored = session.connection().execute(
            text("SELECT options, server_options, proposal_votes FROM games WHERE id = :i"),
            {"i": row.id},
        )
        options, server_options, votes = stored.one()
    assert (options, server_options, votes) == ('{"size": "10"}', '{"a": "1", "b": "2"}', "[1, 0]")


def test_concurrent_processing_on_sqlite(server: Server) -> None:
    """Several workers (IMAP, LMTP, pipe) may process at once: each message still runs."""
    from concurrent.futures import ThreadPoolExecutor

    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    raws = [server.raw(f"p{i}@x.example", f"signup p{i} pw") for i in range(12)]
    raws += [server.raw(alice, "quarto show 101") for _ in range(12)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        statuses = list(pool.map(server.process, raws))
    assert statuses == ["done"] * len(raws)
    with session_for(server.engine) as session:
        assert len(queries.all_users(session)) == 14


def test_saved_id_is_the_id_of_a_flushed_row_and_refuses_an_unflushed_one(
    tmp_path: Path,
) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'ids.sqlite3'}")
    init_db(engine)
    with session_for(engine) as session:
        user = User(userid="ida", userid_key="ida", password_hash="x", created_at=START)
        with pytest.raises(UnsavedRowError, match="User has no id until it is flushed"):
            _ = user.saved_id
        session.add(user)
        session.flush()
        assert user.id is not None and user.saved_id == user.id
        assert every_table_is_stored()


def every_table_is_stored() -> bool:
    """Every table model derives from Stored, so every row has `saved_id`."""
    tables = [m.class_ for m in SQLModel._sa_registry.mappers]
    return bool(tables) and all(issubclass(t, Stored) for t in tables)


def test_marking_a_mail_that_is_not_there_sent_raises(server: Server) -> None:
    with session_for(server.engine) as session, pytest.raises(KeyError):
        outbox.mark_sent(session, [123456], START)


def test_each_processed_message_is_announced_as_it_commits(server: Server) -> None:
    """The daemon's processor wakes its sender after each message (pbm.runners.processor),
    so the first replies of a chunk go out while the rest is processed: the hook is called
    once per message, after that message's commit (its reply is in the outbox)."""
    inbox = DbInbox(server.engine, server.clock, server.config)
    for sender in ("a@players.example", "b@players.example", "c@players.example"):
        inbox.store_now(server.raw(sender, "help"), "lmtp")
    queued: list[int] = []

    def processed() -> None:
        with session_for(server.engine) as session:
            queued.append(outbox.outbox_depth(session))

    result = inbox.process_some(threading.Event(), limit=10, processed=processed)
    assert result.statuses == {"done": 3}
    assert queued == [1, 2, 3]
