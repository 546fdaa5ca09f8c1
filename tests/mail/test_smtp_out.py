"""The outbox sender against the real Postfix: sent, deferred with backoff, failed."""

from __future__ import annotations

import asyncio
import itertools
import json
import mailbox
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from sqlmodel import select

from pbm.clock import SystemClock
from pbm.mail.compose import compose
from pbm.mail.settings import RelaySettings
from pbm.mail.smtp_out import (
    MaildirTransport,
    OutboxSender,
    OutgoingMail,
    RateLimiter,
    RetryPolicy,
    SendOutcome,
    SmtpRelay,
)
from pbm.mailstore import DbOutbox
from pbm.store.engine import make_engine, session_for
from pbm.store.models import OutboxMail
from pbm.store.schema import init_db
from tests.outbox_rows import queue_mail

from .conftest import free_ports


@pytest.fixture()
def outbox(tmp_path: Path) -> DbOutbox:
    engine = make_engine(f"sqlite:///{tmp_path / 'pbm.sqlite3'}")
    init_db(engine)
    return DbOutbox(engine, SystemClock())


def enqueue(outbox: DbOutbox, *recipients: str, subject: str = "Re: move") -> int:
    now = datetime.now(UTC)
    mid = f"<out.{time.monotonic_ns()}@example.test>"
    raw = compose(
        sender="pbm@example.test",
        to=list(recipients),
        subject=subject,
        body="accepted\n",
        message_id=mid,
        date=now,
    )
    with session_for(outbox.engine) as session:
        mail = queue_mail(
            session,
            now=now,
            envelope_from="pbm@example.test",
            recipients=recipients,
            subject=subject,
            body="accepted\n",
            raw=raw,
            message_id=mid,
        )
        session.commit()
        assert mail.id is not None
        return mail.id


def rows(outbox: DbOutbox) -> dict[int, OutboxMail]:
    with session_for(outbox.engine) as session:
        return {m.id: m for m in session.exec(select(OutboxMail)) if m.id is not None}


def relay(stack, port: int | None = None, connections: int = 4) -> RelaySettings:
    return RelaySettings(
        host=stack.host if stack else "127.0.0.1",
        port=port or stack.smtp_port,
        starttls=False,
        rate=0,
        connections=connections,
        timeout_seconds=10,
        retry_base_seconds=30,
    )


def smtpd_connections(stack) -> int:
    log = (stack.ms / "postfix" / "postfix.log").read_text(errors="replace")
    return sum(1 for line in log.splitlines() if "/smtpd[" in line and ": connect from " in line)


@pytest.mark.mailstack
def test_sends_everything_over_one_connection(stack, outbox: DbOutbox) -> None:
    ids = [
        enqueue(outbox, "alice@example.test", subject="one"),
        enqueue(outbox, "bob@example.test", subject="two"),
        enqueue(outbox, "alice@example.test", "carol@example.test", subject="three"),
    ]
    before = smtpd_connections(stack)

    async def scenario() -> int:
        transport = SmtpRelay(relay(stack, connections=1))
        sender = OutboxSender(outbox, transport)
        try:
            return await sender.drain()
        finally:
            await transport.close()

    assert asyncio.run(scenario()) == 3
    assert smtpd_connections(stack) - before == 1
    state = rows(outbox)
    assert [state[i].status for i in ids] == ["sent", "sent", "sent"]
    assert all(state[i].sent_at is not None and state[i].attempts == 1 for i in ids)
    assert stack.wait_count("alice", 2) == 2
    assert stack.wait_count("carol", 1) == 1
    assert sorted(m["Subject"] for m in stack.messages("alice")) == ["one", "three"]
    assert [m["Subject"] for m in stack.messages("bob")] == ["two"]


@pytest.mark.mailstack
def test_connections_side_by_side_each_kept_for_the_next_mails(stack, outbox: DbOutbox) -> None:
    """Six mails to three addresses on three connections: each connection opened once
    and reused (a lane waits while a mail to the same address is in flight)."""
    players = ("alice", "bob", "carol")
    ids = [
        enqueue(outbox, f"{p}@example.test", subject=f"{p} {n}") for n in (1, 2) for p in players
    ]
    counts = {p: len(stack.messages(p)) for p in players}
    before = smtpd_connections(stack)

    async def scenario() -> int:
        transport = SmtpRelay(relay(stack, connections=3))
        try:
            return await OutboxSender(outbox, transport).drain()
        finally:
            await transport.close()

    assert asyncio.run(scenario()) == 6
    assert smtpd_connections(stack) - before == 3
    state = rows(outbox)
    assert [state[i].status for i in ids] == ["sent"] * 6
    assert {state[i].attempts for i in ids} == {1}
    for p in players:
        assert stack.wait_count(p, counts[p] + 2) == counts[p] + 2
        subjects = {m["Subject"] for m in stack.messages(p)}
        assert {f"{p} 1", f"{p} 2"} <= subjects


@pytest.mark.mailstack
def test_refused_recipient_fails_for_good_and_others_go_on(stack, outbox: DbOutbox) -> None:
    bad = enqueue(outbox, "someone@elsewhere.invalid", subject="nowhere")
    good = enqueue(outbox, "bob@example.test", subject="fine")

    async def scenario() -> None:
        transport = SmtpRelay(relay(stack))
        try:
            await OutboxSender(outbox, transport).drain()
        finally:
            await transport.close()

    asyncio.run(scenario())
    state = rows(outbox)
    assert state[bad].status == "failed"
    assert "550" in (state[bad].last_error or "")
    assert state[good].status == "sent"
    assert stack.wait_count("bob", 1) == 1


def test_unreachable_relay_defers_with_backoff_then_gives_up(outbox: DbOutbox) -> None:
    (port,) = free_ports(1)  # nothing listens there
    mail_id = enqueue(outbox, "alice@example.test")
    policy = RetryPolicy(base_seconds=30, max_seconds=3600, max_attempts=3)
    assert [policy.delay(n).total_seconds() for n in (1, 2, 3, 9)] == [30, 60, 120, 3600]

    async def attempt() -> None:
        transport = SmtpRelay(relay(None, port))
        await OutboxSender(outbox, transport, retry=policy).drain()
        await transport.close()

    started = datetime.now(UTC)
    asyncio.run(attempt())
    mail = rows(outbox)[mail_id]
    assert (mail.status, mail.attempts) == ("queued", 1)
    assert "connect" in (mail.last_error or "")
    due_in = mail.next_attempt_at.replace(tzinfo=UTC) - started
    assert timedelta(seconds=29) <= due_in <= timedelta(seconds=40)
    # not due yet: nothing is tried
    asyncio.run(attempt())
    assert rows(outbox)[mail_id].attempts == 1
    for _ in range(2):  # make it due twice more; the third failure gives up
        with session_for(outbox.engine) as session:
            row = session.get(OutboxMail, mail_id)
            assert row is not None
            row.next_attempt_at = datetime.now(UTC) - timedelta(seconds=1)
            session.add(row)
            session.commit()
        asyncio.run(attempt())
    mail = rows(outbox)[mail_id]
    assert (mail.status, mail.attempts) == ("failed", 3)
    assert "gave up after 3 attempts" in (mail.last_error or "")


@pytest.mark.mailstack
def test_reused_connection_survives_a_postfix_restart(stack, outbox: DbOutbox) -> None:
    async def scenario() -> None:
        transport = SmtpRelay(relay(stack))
        sender = OutboxSender(outbox, transport)
        try:
            enqueue(outbox, "alice@example.test", subject="before")
            assert await sender.drain() == 1
            await asyncio.to_thread(stack.script, "restart-smtp")
            enqueue(outbox, "alice@example.test", subject="after")
            assert await sender.drain() == 1
        finally:
            await transport.close()

    asyncio.run(scenario())
    assert {m.status for m in rows(outbox).values()} == {"sent"}
    assert stack.wait_count("alice", 2) == 2


class CrashingRecord:
    """The outbox as seen by a process that dies after sending, before recording."""

    def __init__(self, outbox: DbOutbox) -> None:
        self.outbox = outbox

    async def due(self, limit: int, held: frozenset[int] = frozenset()) -> list[OutgoingMail]:
        return await self.outbox.due(limit, held)

    async def record(self, outcomes: Sequence[SendOutcome]) -> None:
        raise Killed("killed between send and mark_sent")


class Killed(Exception):
    pass


@pytest.mark.mailstack
def test_crash_before_marking_sends_twice_never_zero(stack, outbox: DbOutbox) -> None:
    mail_id = enqueue(outbox, "carol@example.test", subject="at least once")

    async def crash_then_resume() -> None:
        transport = SmtpRelay(relay(stack))
        with pytest.raises(Killed):
            await OutboxSender(CrashingRecord(outbox), transport).drain()
        await transport.close()
        assert rows(outbox)[mail_id].status == "queued"
        transport = SmtpRelay(relay(stack))
        await OutboxSender(outbox, transport).drain()
        await transport.close()

    asyncio.run(crash_then_resume())
    assert rows(outbox)[mail_id].status == "sent"
    assert stack.wait_count("carol", 2) == 2


class CountingLock:
    """The daemon's write lock, counting the transactions that took it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.taken = 0

    def __enter__(self) -> None:
        self.lock.acquire()
        self.taken += 1

    def __exit__(self, *_exc: object) -> None:
        self.lock.release()


def test_outcomes_recorded_meanwhile_go_in_one_transaction(tmp_path: Path) -> None:
    """Three connections record at once while the processor holds the write lock: the
    first waits for it, the two that came meanwhile share the next transaction, and
    each returns only once its outcome is committed."""
    engine = make_engine(f"sqlite:///{tmp_path / 'pbm.sqlite3'}")
    init_db(engine)
    lock = CountingLock()
    outbox = DbOutbox(engine, SystemClock(), lock)
    ids = [enqueue(outbox, f"p{n}@example.org") for n in range(3)]

    async def scenario() -> None:
        lock.lock.acquire()  # the processor's move in hand
        first = asyncio.ensure_future(outbox.record([SendOutcome(ids[0], "sent")]))
        await asyncio.sleep(0.1)  # its transaction waits for the lock; two more come
        later = [asyncio.ensure_future(outbox.record([SendOutcome(i, "sent")])) for i in ids[1:]]
        records = [first, *later]
        await asyncio.sleep(0.2)
        assert not any(r.done() for r in records)
        assert {m.status for m in rows(outbox).values()} == {"queued"}
        lock.lock.release()
        await asyncio.gather(*records)

    asyncio.run(scenario())
    assert lock.taken == 2
    assert [rows(outbox)[i].status for i in ids] == ["sent"] * 3


def test_maildir_transport_is_the_embedded_default(tmp_path: Path, outbox: DbOutbox) -> None:
    enqueue(outbox, "alice@example.org", subject="first")
    enqueue(outbox, "bob@example.org", subject="second")
    box_path = tmp_path / "var" / "outbox"

    async def scenario() -> int:
        return await OutboxSender(outbox, MaildirTransport(box_path)).drain()

    assert asyncio.run(scenario()) == 2
    box = mailbox.Maildir(box_path, create=False)
    assert sorted(m["Subject"] for m in box) == ["first", "second"]
    assert {m.status for m in rows(outbox).values()} == {"sent"}
    assert json.loads(next(iter(rows(outbox).values())).recipients) == ["alice@example.org"]
    # Maildir files hold LF line ends, as mail programs reading a Maildir expect (the
    # CRLF of the wire format would show as ^M); the message is otherwise the same.
    files = sorted((box_path / "new").iterdir())
    assert len(files) == 2
    for path in files:
        data = path.read_bytes()
        assert b"\r" not in data and b"\n\naccepted\n" in data


def test_batches_claimed_ahead_send_each_mail_once(tmp_path: Path, outbox: DbOutbox) -> None:
    """The next batch is claimed while one goes out: no mail of the batch in hand is
    claimed again, and none is left behind."""
    subjects = [f"mail {n}" for n in range(7)]
    for subject in subjects:
        enqueue(outbox, "alice@example.org", subject=subject)
    box_path = tmp_path / "var" / "outbox"

    async def scenario() -> int:
        return await OutboxSender(outbox, MaildirTransport(box_path), batch=3).drain()

    assert asyncio.run(scenario()) == 7
    box = mailbox.Maildir(box_path, create=False)
    assert sorted(m["Subject"] for m in box) == subjects
    state = rows(outbox).values()
    assert {m.status for m in state} == {"sent"}
    assert {m.attempts for m in state} == {1}
    assert {m.claimed_by for m in state} == {None}


def test_rate_limit_spaces_sends_of_connections_asking_at_once() -> None:
    async def scenario() -> list[float]:
        limiter = RateLimiter(rate=20)
        started = time.monotonic()

        async def one() -> float:
            await limiter.wait()
            return time.monotonic() - started

        return sorted(await asyncio.gather(*(one() for _ in range(6))))

    # each takes its own slot: 0, 0.05, ... 0.25 s after the first, never two at once
    times = asyncio.run(scenario())
    assert times[-1] >= 0.24
    assert all(later - earlier >= 0.04 for earlier, later in itertools.pairwise(times))


def test_rate_limit_spaces_sends() -> None:
    async def scenario() -> float:
        limiter = RateLimiter(rate=20)
        started = time.monotonic()
        for _ in range(6):
            await limiter.wait()
        return time.monotonic() - started

    # six sends at 20/s: the last may start 5 intervals (0.25 s) after the first
    assert asyncio.run(scenario()) >= 0.24


class _Received:
    """An aiosmtpd handler that keeps the envelopes it was given."""

    def __init__(self) -> None:
        self.rcpts: list[list[str]] = []

    async def handle_DATA(self, server, session, envelope) -> str:
        self.rcpts.append(list(envelope.rcpt_tos))
        return "250 OK"


def test_an_internationalised_address_needs_smtputf8(outbox: DbOutbox) -> None:
    """A relay without SMTPUTF8 cannot take carol@bücher.test: that mail fails at once
    (no half-sent envelope), and the next goes on the same connection."""
    handler = _Received()
    (port,) = free_ports(1)
    server = Controller(handler, hostname="127.0.0.1", port=port, enable_SMTPUTF8=False)
    server.start()
    try:
        bad = enqueue(outbox, "carol@bücher.test", subject="idn")
        good = enqueue(outbox, "bob@example.test", subject="ascii")

        async def scenario() -> None:
            transport = SmtpRelay(relay(None, port))
            try:
                await OutboxSender(outbox, transport).drain()
            finally:
                await transport.close()

        asyncio.run(scenario())
    finally:
        server.stop()
    state = rows(outbox)
    assert state[bad].status == "failed"
    assert "SMTPUTF8" in (state[bad].last_error or "")
    assert state[good].status == "sent"
    assert handler.rcpts == [["bob@example.test"]]
