"""IMAP intake against the real Dovecot: store, then file away; IDLE; reconnects."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from sqlmodel import col, select

from pbm.clock import SystemClock
from pbm.config import Config
from pbm.mail.imap_in import ImapIntake, fetched_messages
from pbm.mail.settings import ImapSettings
from pbm.mailstore import DbInbox
from pbm.store.engine import make_engine, session_for
from pbm.store.models import InboundMessage
from pbm.store.schema import init_db

pytestmark = pytest.mark.mailstack


def settings(stack, **over) -> ImapSettings:
    values = dict(
        host=stack.host,
        port=stack.imap_port,
        user="pbm",
        password="secret",
        ssl=False,
        poll_seconds=3.0,
        timeout_seconds=10.0,
        reconnect_min_seconds=0.2,
        reconnect_max_seconds=1.0,
    )
    values.update(over)
    return ImapSettings(**values)


async def run_until(
    intake: ImapIntake, stop: asyncio.Event, done: Callable[[], bool], timeout: float = 20
) -> None:
    task = asyncio.create_task(intake.run())
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline and not task.done():
        await asyncio.sleep(0.05)
    stop.set()
    await asyncio.wait_for(task, 15)


@pytest.fixture()
def inbox(tmp_path: Path) -> DbInbox:
    engine = make_engine(f"sqlite:///{tmp_path / 'pbm.sqlite3'}")
    init_db(engine)
    return DbInbox(engine, SystemClock(), Config(data_dir=tmp_path))


def stored_rows(inbox: DbInbox) -> list[InboundMessage]:
    with session_for(inbox.engine) as session:
        return list(session.exec(select(InboundMessage).order_by(col(InboundMessage.id))))


def test_fetched_messages_keys_on_literals() -> None:
    lines: list[bytes | bytearray] = [
        b"1 FETCH (UID 7 BODY[] {5}",
        bytearray(b"hello"),
        b")",
        b"2 FETCH (UID 9 BODY[] {3}",
        bytearray(b"abc"),
        b" FLAGS (\\Seen))",
        b"Fetch completed.",
    ]
    assert fetched_messages(lines) == [(7, b"hello"), (9, b"abc")]


def test_stores_every_unseen_message_then_moves_it(stack, inbox: DbInbox) -> None:
    for n in range(3):
        stack.send("alice", "pbm@example.test", f"before {n}")
    assert stack.wait_count("pbm", 3) == 3

    async def scenario() -> None:
        stop = asyncio.Event()
        intake = ImapIntake(settings(stack), lambda raw: inbox.store(raw, "imap"), stop=stop)
        task = asyncio.create_task(run_until(intake, stop, lambda: intake.state.stored >= 4))
        # the fourth arrives while the intake waits in IDLE
        for _ in range(200):
            if intake.state.stored >= 3:
                break
            await asyncio.sleep(0.05)
        await asyncio.to_thread(stack.send, "bob", "pbm+tok12345@example.test", "during idle")
        await task
        assert intake.state.idle_supported and intake.state.move_supported

    asyncio.run(scenario())
    rows = stored_rows(inbox)
    subjects = sorted(row.raw.split(b"Subject: ")[1].split(b"\r\n")[0] for row in rows)
    assert subjects == [b"before 0", b"before 1", b"before 2", b"during idle"]
    assert all(row.via == "imap" and row.status == "new" for row in stored_rows(inbox))
    assert stack.count("pbm", "INBOX") == 0
    assert stack.count("pbm", "Processed") == 4


def test_the_same_message_twice_is_stored_once(stack, inbox: DbInbox) -> None:
    mid = "<twice.1@example.test>"
    stack.send("alice", "pbm@example.test", "move 1 a1", message_id=mid)
    stack.send("alice", "pbm@example.test", "move 1 a1", message_id=mid)
    assert stack.wait_count("pbm", 2) == 2

    async def scenario() -> None:
        stop = asyncio.Event()
        intake = ImapIntake(settings(stack), lambda raw: inbox.store(raw, "imap"), stop=stop)
        await run_until(intake, stop, lambda: intake.state.stored >= 2)

    asyncio.run(scenario())
    rows = stored_rows(inbox)
    assert [row.message_id for row in rows] == [mid]
    assert stack.count("pbm", "Processed") == 2  # both copies filed away


def test_a_failing_store_leaves_the_message_in_the_inbox(stack, inbox: DbInbox) -> None:
    stack.send("carol", "pbm@example.test", "signup carol pw")
    assert stack.wait_count("pbm", 1) == 1
    failures = {"left": 2}

    async def flaky(raw: bytes) -> object:
        if failures["left"] > 0:
            failures["left"] -= 1
            # what the daemon's store raises when the database is locked or gone
            raise OSError("database unavailable")
        return await inbox.store(raw, "imap")

    async def scenario() -> ImapIntake:
        stop = asyncio.Event()
        intake = ImapIntake(settings(stack), flaky, stop=stop)
        await run_until(intake, stop, lambda: intake.state.stored >= 1)
        return intake

    intake = asyncio.run(scenario())
    assert intake.state.reconnects == 2
    assert len(stored_rows(inbox)) == 1
    assert stack.count("pbm", "INBOX") == 0
    assert stack.count("pbm", "Processed") == 1


def test_seen_flag_when_no_processed_folder(stack, inbox: DbInbox) -> None:
    stack.send("alice", "pbm@example.test", "flag me")
    assert stack.wait_count("pbm", 1) == 1
    calls: list[bytes] = []

    async def store(raw: bytes) -> object:
        calls.append(raw)
        return await inbox.store(raw, "imap")

    async def scenario() -> None:
        stop = asyncio.Event()
        intake = ImapIntake(settings(stack, processed_folder=""), store, stop=stop)
        # two polls: a message flagged \Seen is not taken again
        task = asyncio.create_task(intake.run())
        await asyncio.sleep(4)
        stop.set()
        await asyncio.wait_for(task, 15)

    asyncio.run(scenario())
    assert len(calls) == 1
    client = stack.imap("pbm")
    try:
        client.select("INBOX", readonly=True)
        _, seen = client.uid("search", "SEEN")
        assert len(seen[0].split()) == 1
    finally:
        client.logout()


class CopyOnlyIntake(ImapIntake):
    """The intake as it behaves with a server that lacks MOVE (RFC 6851)."""

    async def _prepare(self, client) -> None:
        await super()._prepare(client)
        self.state.move_supported = False


def test_copy_delete_expunge_without_move(stack, inbox: DbInbox) -> None:
    for n in range(2):
        stack.send("bob", "pbm@example.test", f"copy {n}")
    assert stack.wait_count("pbm", 2) == 2

    async def scenario() -> None:
        stop = asyncio.Event()
        intake = CopyOnlyIntake(settings(stack), lambda raw: inbox.store(raw, "imap"), stop=stop)
        await run_until(intake, stop, lambda: intake.state.stored >= 2)

    asyncio.run(scenario())
    assert len(stored_rows(inbox)) == 2
    assert stack.count("pbm", "INBOX") == 0
    assert stack.count("pbm", "Processed") == 2


def test_reconnects_after_dovecot_restarts(
    stack, inbox: DbInbox, caplog: pytest.LogCaptureFixture
) -> None:
    store: Callable[[bytes], Awaitable[object]] = lambda raw: inbox.store(raw, "imap")  # noqa: E731

    async def scenario() -> ImapIntake:
        stop = asyncio.Event()
        intake = ImapIntake(settings(stack), store, stop=stop)
        task = asyncio.create_task(intake.run())
        for _ in range(200):
            if intake.state.connected:
                break
            await asyncio.sleep(0.05)
        assert intake.state.connected
        for n in range(2):
            await asyncio.to_thread(stack.script, "restart-imap")
            await asyncio.to_thread(stack.send, "alice", "pbm@example.test", f"after restart {n}")
            deadline = time.monotonic() + 30
            while intake.state.stored < n + 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
        stop.set()
        await asyncio.wait_for(task, 15)
        return intake

    with caplog.at_level(logging.WARNING, logger="pbm.mail.imap_in"):
        intake = asyncio.run(scenario())
    assert intake.state.reconnects >= 2
    assert sorted(row.raw.count(b"after restart") for row in stored_rows(inbox)) == [1, 1]
    # Each outage after a working session waits the shortest delay first, not where the
    # previous outage's backoff ended.
    waits = [r.getMessage() for r in caplog.records if "imap_disconnected" in r.getMessage()]
    assert sum("retry_in=0.2" in w for w in waits) >= 2, waits


def test_idle_is_reissued_and_still_hears_new_mail(stack, inbox: DbInbox) -> None:
    async def scenario() -> ImapIntake:
        stop = asyncio.Event()
        # IDLE re-issued every half second here (every 25 minutes by default)
        intake = ImapIntake(
            settings(stack, idle_minutes=0.5 / 60, poll_seconds=30),
            lambda raw: inbox.store(raw, "imap"),
            stop=stop,
        )
        task = asyncio.create_task(intake.run())
        for _ in range(100):  # bounded: at most 5 s for three IDLE cycles
            if intake.state.idle_cycles >= 3:
                break
            await asyncio.sleep(0.05)
        await asyncio.to_thread(stack.send, "carol", "pbm@example.test", "after re-idle")
        deadline = time.monotonic() + 10
        while intake.state.stored < 1 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(task, 15)
        return intake

    intake = asyncio.run(scenario())
    assert intake.state.idle_cycles >= 3
    assert intake.state.reconnects == 0
    assert [b"after re-idle" in row.raw for row in stored_rows(inbox)] == [True]
