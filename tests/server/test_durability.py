"""Never bounce, never lose: a store failure is temporary, and a stored message whose
processing met one waits and runs later; only a bug marks a message failed.

Every failure here is real: SQLite's write lock held by another connection for longer
than the busy timeout (shortened for the tests), a page limit or a full file system, a
file that is not a database, a table dropped. The one injected fault is the bug, which
is code by definition."""

from __future__ import annotations

import dataclasses
import errno
import json
import os
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlmodel import col, select
from typer.testing import CliRunner

from pbm.app import initialize
from pbm.cli import app
from pbm.clock import FrozenClock
from pbm.config import PACKAGE_TEMPLATES, Config
from pbm.errors import StoreUnavailable
from pbm.intake import RETRY, Backoff, process_inbound, retry_failed
from pbm.mailstore import DbInbox
from pbm.store.engine import make_engine, session_for
from pbm.store.failures import Failure, classify, file_failure
from pbm.store.models import BoardRow, InboundMessage, Move
from pbm.store.schema import init_db
from tests.server.conftest import SERVER, START, Server, legal_texts, small_tmpfs

runner = CliRunner()


def sqlite_server(directory: Path) -> Server:
    """A migrated SQLite database in `directory`, served on the frozen clock, with a busy
    timeout of 0.1 s, so that a held lock fails fast."""
    config = Config(
        data_dir=directory,
        database_url=f"sqlite:///{directory / 'pbm.sqlite3'}",
        server_address=SERVER,
        password_cost=4,
        busy_timeout_seconds=0.1,
    )
    engine = make_engine(config.database_url, busy_timeout=config.busy_timeout_seconds)
    init_db(engine)
    return Server(engine=engine, config=config, clock=FrozenClock(START))


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Server]:
    """A SQLite server with a short busy timeout (these failures are SQLite's own)."""
    server = sqlite_server(tmp_path)
    yield server
    server.engine.dispose()


@contextmanager
def write_lock(path: Path) -> Iterator[sqlite3.Connection]:
    """Another process's writer: SQLite's write lock, held until the block ends."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    finally:
        conn.execute("ROLLBACK")
        conn.close()


def db_path(server: Server) -> Path:
    return Path(server.config.data_dir) / "pbm.sqlite3"


def inbound(server: Server) -> list[InboundMessage]:
    with session_for(server.engine) as session:
        return list(session.exec(select(InboundMessage).order_by(col(InboundMessage.id))))


def move_count(server: Server) -> int:
    with session_for(server.engine) as session:
        return len(list(session.exec(select(Move))))


def raise_of(action: Any) -> BaseException:
    try:
        action()
    except BaseException as exc:
        return exc
    raise AssertionError("no exception")


# --- what counts as a store failure ---------------------------------------------------


def test_real_failures_are_sorted_by_kind(db: Server, tmp_path: Path) -> None:
    def run(engine: Any, sql: str) -> None:
        with session_for(engine) as session:
            session.exec(text(sql))  # type: ignore[call-overload]
            session.commit()

    with write_lock(db_path(db)):
        locked = raise_of(lambda: run(db.engine, "SELECT 1"))
    # (raised by the driver itself: pbm's engine issues BEGIN IMMEDIATE straight to it)
    assert isinstance(locked, sqlite3.OperationalError | OperationalError)
    assert classify(locked) is Failure.BUSY

    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"this is no database at all " * 100)
    engine = make_engine(f"sqlite:///{garbage}")
    not_a_db = raise_of(lambda: run(engine, "SELECT 1"))
    engine.dispose()
    assert classify(not_a_db) is Failure.UNAVAILABLE

    missing_table = raise_of(lambda: run(db.engine, "SELECT * FROM no_such_table"))
    assert classify(missing_table) is Failure.SCHEMA

    # Bugs stay bugs: bad SQL, a broken constraint.
    assert classify(raise_of(lambda: run(db.engine, "SELEKT 1"))) is Failure.BUG
    run(db.engine, "INSERT INTO alembic_version VALUES ('dup')")
    duplicate = raise_of(lambda: run(db.engine, "INSERT INTO alembic_version VALUES ('dup')"))
    assert isinstance(duplicate, IntegrityError) and classify(duplicate) is Failure.BUG
    run(db.engine, "DELETE FROM alembic_version WHERE version_num = 'dup'")

    full = make_engine(db.config.database_url)
    event.listen(full, "connect", lambda conn, _r: conn.execute("PRAGMA max_page_count=1"))
    disk_full = raise_of(lambda: run(full, "CREATE TABLE filler (x)"))
    full.dispose()
    assert isinstance(disk_full, DBAPIError) and classify(disk_full) is Failure.FULL

    read_only = make_engine(f"sqlite:///file:{db_path(db)}?mode=ro&uri=true")
    denied = raise_of(lambda: run(read_only, "CREATE TABLE nope (x)"))
    read_only.dispose()
    assert classify(denied) is Failure.PERMISSION

    # An OSError is the store's only where the store raised it, on its own files.
    assert classify(OSError(errno.ENOSPC, "No space left on device")) is Failure.BUG
    assert classify(FileNotFoundError(errno.ENOENT, "No such file", "help.txt")) is Failure.BUG
    with pytest.raises(StoreUnavailable) as raised, file_failure():
        raise OSError(errno.ENOSPC, "No space left on device", str(db_path(db)))
    assert classify(raised.value) is Failure.FULL
    with pytest.raises(StoreUnavailable) as raised, file_failure():
        raise PermissionError(errno.EACCES, "Permission denied", str(db_path(db)))
    assert classify(raised.value) is Failure.PERMISSION
    assert classify(StoreUnavailable("gone")) is Failure.UNAVAILABLE
    assert classify(RuntimeError("a bug")) is Failure.BUG
    # A bug raised *from* a store failure is that store failure.
    wrapped = RuntimeError("while storing")
    wrapped.__cause__ = locked
    assert classify(wrapped) is Failure.BUSY


# --- the pipe: nothing kept, the MTA delivers again -----------------------------------


def test_the_pipe_under_a_lock_keeps_nothing_and_runs_once_released(db: Server) -> None:
    raw = db.raw("carol@players.example", "help")
    with write_lock(db_path(db)):
        error = raise_of(lambda: db.process(raw))
    assert isinstance(error, StoreUnavailable) and error.kind == "busy"
    assert inbound(db) == [] and db.outbox() == []
    assert db.process(raw) == "done"  # the MTA's next delivery
    assert [m.subject for m in db.new_mail()] == ["Help pbm"]


def test_a_dropped_table_is_a_store_failure_not_a_bug(db: Server) -> None:
    with closing(sqlite3.connect(db_path(db))) as conn:
        conn.execute("DROP TABLE outbox")
    error = raise_of(lambda: db.send("carol@players.example", "help"))
    assert isinstance(error, StoreUnavailable) and error.kind == "schema"
    assert inbound(db) == []  # rolled back whole, nothing marked failed


# --- stored messages: back to `new`, with backoff ---------------------------------------


@contextmanager
def full_database(server: Server) -> Iterator[Any]:
    """An engine on the same file that SQLite finds full ("database or disk is full") at
    the size the file has now: a transaction that needs a new page fails, an update in
    place (the retry bookkeeping) still fits."""
    with closing(sqlite3.connect(db_path(server))) as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    engine = make_engine(server.config.database_url)
    event.listen(engine, "connect", lambda c, _r: c.execute(f"PRAGMA max_page_count={pages}"))
    try:
        yield engine
    finally:
        engine.dispose()


def test_a_stored_message_waits_with_backoff_and_runs_later(db: Server) -> None:
    inbox = DbInbox(db.engine, db.clock, db.config)
    inbound_id, _ = inbox.store_now(db.raw("carol@players.example", "help"), "lmtp")
    with full_database(db) as full:
        assert process_inbound(full, inbound_id, clock=db.clock, config=db.config) == "deferred"
    [row] = inbound(db)
    assert (row.status, row.attempts) == ("new", 1)
    assert row.next_attempt_at == START + timedelta(seconds=30)
    assert row.error == ("attempt 1: the store failed (full): database or disk is full")
    assert inbox.pending_ids(10) == []  # not due yet
    db.clock.advance(timedelta(seconds=29))
    assert inbox.pending_ids(10) == []
    db.clock.advance(timedelta(seconds=1))
    assert inbox.pending_ids(10) == [inbound_id]

    with full_database(db) as full:
        result = DbInbox(full, db.clock, db.config).process_some(threading.Event())
    assert result.statuses == {"deferred": 1} and result.unavailable is None
    [row] = inbound(db)
    assert row.attempts == 2 and row.next_attempt_at == db.clock.now() + timedelta(seconds=60)
    assert db.outbox() == []

    db.clock.advance(timedelta(seconds=60))
    result = inbox.process_some(threading.Event())
    assert result.statuses == {"done": 1}
    [row] = inbound(db)
    assert (row.status, row.error) == ("done", None)
    assert [m.subject for m in db.new_mail()] == ["Help pbm"]  # answered once


def test_processing_stops_while_even_the_retry_cannot_be_written(db: Server) -> None:
    inbox = DbInbox(db.engine, db.clock, db.config)
    inbox.store_now(db.raw("carol@players.example", "help"), "lmtp")
    with write_lock(db_path(db)):
        result = inbox.process_some(threading.Event())
    # pending_ids itself met the lock: nothing was tried, nothing changed
    assert result.processed == 0 and isinstance(result.unavailable, StoreUnavailable)
    [row] = inbound(db)
    assert (row.status, row.attempts) == ("new", 0)


def test_backoff_doubles_to_an_hour_and_gives_up_after_two_days() -> None:
    assert [RETRY.delay(n).total_seconds() for n in range(1, 10)] == [
        30,
        60,
        120,
        240,
        480,
        960,
        1920,
        3600,
        3600,
    ]
    last = next(n for n in range(1, 200) if RETRY.gives_up(n))
    waited = sum((RETRY.delay(n) for n in range(1, last + 1)), timedelta())
    assert waited > timedelta(days=2) >= waited - RETRY.delay(last)


def test_giving_up_marks_the_message_failed_with_the_reason(db: Server) -> None:
    inbox = DbInbox(db.engine, db.clock, db.config)
    inbound_id, _ = inbox.store_now(db.raw("carol@players.example", "help"), "lmtp")
    short = Backoff(give_up_after=timedelta(seconds=60))
    statuses = []
    with full_database(db) as full:
        for _ in range(2):
            status = process_inbound(
                full, inbound_id, clock=db.clock, config=db.config, retry=short
            )
            statuses.append(status)
            db.clock.advance(timedelta(minutes=5))
    assert statuses == ["deferred", "failed"]
    [row] = inbound(db)
    assert row.status == "failed" and row.error is not None
    assert row.error.startswith("gave up after 2 attempts over 0 h: the store failed (full)")
    # the admin's retry starts the count afresh and runs it
    assert retry_failed(db.engine, clock=db.clock, config=db.config) == {inbound_id: "done"}
    [row] = inbound(db)
    assert (row.status, row.attempts) == ("done", 0)


def _game(server: Server) -> tuple[str, str]:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quadrature challenge alice bob")
    server.new_mail()
    move = legal_texts(server, "quadrature")[0]
    return alice, f"quadrature move 101 alice secret {move}"


def test_a_move_on_a_full_database_is_processed_later(db: Server) -> None:
    alice, command = _game(db)
    inbox = DbInbox(db.engine, db.clock, db.config)
    inbound_id, _ = inbox.store_now(db.raw(alice, command), "imap")
    with full_database(db) as full:
        assert process_inbound(full, inbound_id, clock=db.clock, config=db.config) == "deferred"
    [*_, row] = inbound(db)
    assert (row.status, row.attempts) == ("new", 1) and "full" in (row.error or "")
    assert move_count(db) == 0 and db.new_mail() == []

    db.clock.advance(timedelta(seconds=30))
    assert inbox.process_some(threading.Event()).statuses == {"done": 1}
    assert move_count(db) == 1
    board_mails = db.new_mail()
    assert len(board_mails) == 2 and all("Board 101" in m.subject for m in board_mails)


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB file system of its own (tmpfs; root only)."""
    with small_tmpfs(tmp_path / "tiny", "2m") as mount:
        yield mount


def fill(directory: Path) -> Path:
    """Fill the file system until it refuses another byte; returns the filler file."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (65536, 4096, 1):
            try:
                while True:
                    os.write(fd, b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


def test_a_move_on_a_briefly_full_disk_is_processed_later(tiny_fs: Path) -> None:
    server = sqlite_server(tiny_fs)
    try:
        alice, command = _game(server)
        inbox = DbInbox(server.engine, server.clock, server.config)
        inbox.store_now(server.raw(alice, command), "imap")
        filler = fill(tiny_fs)
        result = inbox.process_some(threading.Event())
        # Deferred when the retry bookkeeping still fitted, else not even that was
        # written: either way the message waits, due, with nothing of the move applied.
        assert result.statuses == {"deferred": 1} or (
            result.processed == 0 and result.unavailable is not None
        ), result
        assert result.unavailable is None or result.unavailable.kind == "full"
        filler.unlink()  # the disk has room again
        [*_, row] = inbound(server)
        assert row.status == "new" and move_count(server) == 0
        server.clock.advance(timedelta(seconds=30))
        assert inbox.process_some(threading.Event()).statuses == {"done": 1}
        assert move_count(server) == 1
        with session_for(server.engine) as session:
            assert session.exec(select(BoardRow.move_count)).one() == 1
    finally:
        server.engine.dispose()


# --- bugs: failed, with the traceback, for `pbm mail failed` ---------------------------


def test_only_a_bug_is_failed_and_mail_failed_shows_it(
    db: Server, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    config_file = db_path(db).parent / "pbm.toml"
    config_file.write_text(
        f'[server]\naddress = "{SERVER}"\ndata_dir = "{db.config.data_dir}"\n'
        f'[store]\ndatabase_url = "{db.config.database_url}"\n',
        encoding="utf-8",
    )
    monkeypatch.setenv("PBM_CONFIG", str(config_file))
    inbox = DbInbox(db.engine, db.clock, db.config)
    # one message waiting for a retry after a store failure: not "failed"
    waiting, _ = inbox.store_now(db.raw("dave@players.example", "help"), "lmtp")
    with full_database(db) as full:
        assert process_inbound(full, waiting, clock=db.clock, config=db.config) == "deferred"

    import pbm.commands.account as account

    def boom(self: object, ctx: object, inv: object) -> None:
        raise RuntimeError("a bug in help")

    monkeypatch.setattr(account.Help, "run", boom)
    raw = db.raw("Carol Doe <carol@players.example>", "help", message_id="<bug.1@players>")
    assert db.process(raw, failing=True) == "failed"

    result = runner.invoke(app, ["mail", "failed", "--json"])
    assert result.exit_code == 0, result.output
    [shown] = json.loads(result.stdout)
    assert shown["message_id"] == "<bug.1@players>"
    assert shown["sender"] == "Carol Doe <carol@players.example>"
    assert shown["error"] == "RuntimeError: a bug in help"
    assert "Traceback (most recent call last)" in shown["traceback"]
    assert shown["failed_at"].startswith(START.isoformat()[:16])
    table = runner.invoke(app, ["mail", "failed"]).stdout
    assert "<bug.1@players>" in table and "RuntimeError: a bug in help" in table
    assert "dave@" not in table


# --- an OSError outside the store is a bug, failed on the first try --------------------


def failed_at_once(server: Server, subject: str) -> list[InboundMessage]:
    """`subject` mailed twice, stored then processed and piped: both rows as they end."""
    inbox = DbInbox(server.engine, server.clock, server.config)
    stored, _ = inbox.store_now(server.raw("carol@players.example", subject), "lmtp")
    assert process_inbound(server.engine, stored, clock=server.clock, config=server.config) == (
        "failed"
    )
    piped = server.raw("dave@players.example", subject, message_id="<piped.1@players>")
    assert server.process(piped, failing=True) == "failed"
    rows = inbound(server)
    for row in rows:
        assert row.status == "failed" and row.attempts == 0 and row.next_attempt_at is None
        assert "Traceback (most recent call last)" in (row.error or "")
    return rows


def test_a_missing_template_fails_the_message_with_its_traceback(
    db: Server, tmp_path: Path
) -> None:
    templates = tmp_path / "templates"
    shutil.copytree(PACKAGE_TEMPLATES, templates)
    (templates / "help.txt").unlink()
    server = dataclasses.replace(db, config=dataclasses.replace(db.config, templates_dir=templates))
    initialize(server.config)  # as a process started with that configuration would
    try:
        rows = failed_at_once(server, "help")
    finally:
        initialize(db.config)
    for row in rows:
        first = (row.error or "").splitlines()[0]
        assert first.startswith("FileNotFoundError: ") and "help.txt" in first


def test_an_os_error_in_a_command_is_a_bug_even_a_full_disk(
    db: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pbm.commands.account as account

    def full_elsewhere(self: object, ctx: object, inv: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", "/var/spool/pictures/1.png")

    monkeypatch.setattr(account.Help, "run", full_elsewhere)
    for row in failed_at_once(db, "help"):
        assert (row.error or "").startswith("OSError: [Errno 28] No space left on device")
