"""LMTP and SMTP intake: 250 only after the store committed, 451 when it failed."""

from __future__ import annotations

import asyncio
import smtplib
import socket
import time
from pathlib import Path

import pytest
from sqlmodel import col, select

from pbm.clock import SystemClock
from pbm.config import Config
from pbm.mail.lmtp_in import start_listener
from pbm.mail.settings import Endpoint
from pbm.mailstore import DbInbox
from pbm.store.engine import make_engine, session_for
from pbm.store.models import InboundMessage
from pbm.store.schema import init_db

from .conftest import free_ports, wait_until


@pytest.fixture()
def inbox(tmp_path: Path) -> DbInbox:
    engine = make_engine(f"sqlite:///{tmp_path / 'pbm.sqlite3'}")
    init_db(engine)
    return DbInbox(engine, SystemClock(), Config(data_dir=tmp_path))


def rows(inbox: DbInbox) -> list[InboundMessage]:
    with session_for(inbox.engine) as session:
        return list(session.exec(select(InboundMessage).order_by(col(InboundMessage.id))))


RAW = (
    b"From: alice@example.test\r\nTo: pbm@example.test\r\nSubject: signup alice pw\r\n"
    b"Message-ID: <lmtp.1@example.test>\r\n\r\nhello\r\n"
)


class Gate:
    """A store that fails while `broken` is set, like a database that is away."""

    def __init__(self, inbox: DbInbox, via: str) -> None:
        self.inbox = inbox
        self.via = via
        self.broken = False
        self.calls = 0

    async def __call__(self, raw: bytes) -> object:
        self.calls += 1
        if self.broken:
            raise OSError("database unavailable")
        return await self.inbox.store(raw, self.via)


def lmtp_exchange(port: int, raw: bytes, rcpts: list[str]) -> list[int]:
    """One LMTP transaction by hand (smtplib.LMTP reads one DATA reply, RFC 2033 sends
    one per recipient); returns the DATA reply codes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        stream = sock.makefile("rwb")

        def reply() -> list[bytes]:
            lines = [stream.readline()]
            while lines[-1][3:4] == b"-":
                lines.append(stream.readline())
            return lines

        def command(line: bytes) -> int:
            stream.write(line + b"\r\n")
            stream.flush()
            return int(reply()[-1][:3])

        assert int(reply()[-1][:3]) == 220
        assert command(b"LHLO client.example.test") == 250
        assert command(b"MAIL FROM:<alice@example.test>") == 250
        for rcpt in rcpts:
            assert command(b"RCPT TO:<" + rcpt.encode() + b">") == 250
        assert command(b"DATA") == 354
        stream.write(raw + b".\r\n")
        stream.flush()
        codes = [int(reply()[-1][:3]) for _ in rcpts]
        command(b"QUIT")
        return codes


def client_session(port: int, *, lmtp: bool, raw: bytes, rcpts: list[str]) -> object:
    if lmtp:
        return lmtp_exchange(port, raw, rcpts)
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:
        try:
            return client.sendmail("alice@example.test", rcpts, raw)
        except smtplib.SMTPDataError as exc:
            return exc.smtp_code


@pytest.mark.parametrize("lmtp", [True, False], ids=["lmtp", "smtp"])
def test_answers_after_commit_and_451_on_failure(inbox: DbInbox, lmtp: bool) -> None:
    (port,) = free_ports(1)
    gate = Gate(inbox, "lmtp" if lmtp else "smtp")
    rcpts = ["pbm@example.test", "pbm+abcdefgh@example.test"]

    async def scenario() -> tuple[object, object, object]:
        server = await start_listener(
            Endpoint("127.0.0.1", port), gate, lmtp=lmtp, max_bytes=100_000
        )
        try:
            gate.broken = True
            refused = await asyncio.to_thread(client_session, port, lmtp=lmtp, raw=RAW, rcpts=rcpts)
            gate.broken = False
            accepted = await asyncio.to_thread(
                client_session, port, lmtp=lmtp, raw=RAW, rcpts=rcpts
            )
            again = await asyncio.to_thread(client_session, port, lmtp=lmtp, raw=RAW, rcpts=rcpts)
            return refused, accepted, again
        finally:
            server.close()
            await server.wait_closed()

    refused, accepted, again = asyncio.run(scenario())
    if lmtp:
        assert refused == [451, 451] and accepted == [250, 250] and again == [250, 250]
    else:
        assert refused == 451 and accepted == {} and again == {}
    stored = rows(inbox)
    assert len(stored) == 1  # the retry after 451 and the duplicate run once
    assert stored[0].via == ("lmtp" if lmtp else "smtp")
    # the envelope recipients, with the plus-address token, are kept for the pipeline
    assert b"Delivered-To: pbm+abcdefgh@example.test\r\n" in stored[0].raw
    assert gate.calls == 3


@pytest.mark.mailstack
def test_postfix_delivers_over_lmtp_and_retries_after_451(stack, inbox: DbInbox) -> None:
    gate = Gate(inbox, "lmtp")

    async def scenario() -> None:
        server = await start_listener(
            Endpoint("127.0.0.1", stack.pbm_lmtp_port), gate, lmtp=True, max_bytes=1_000_000
        )
        try:
            gate.broken = True
            await asyncio.to_thread(stack.send, "bob", "pbm-lmtp@example.test", "move 1 a1")
            deadline = time.monotonic() + 20
            while gate.calls < 1 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert gate.calls >= 1 and not rows(inbox)
            assert await asyncio.to_thread(stack.queue_size) == 1  # Postfix kept it
            gate.broken = False
            # Postfix retries deferred mail within seconds (queue_run_delay = 1s in the stack)
            await asyncio.to_thread(stack.postfix, "postqueue", "-f")
            deadline = time.monotonic() + 30
            while not rows(inbox) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
        finally:
            server.close()
            await server.wait_closed()

    asyncio.run(scenario())
    stored = rows(inbox)
    assert len(stored) == 1
    assert b"Subject: move 1 a1" in stored[0].raw
    assert b"Delivered-To: pbm-lmtp@example.test" in stored[0].raw
    # Postfix drops the queue file once it has read the 250, which pbm gives after the
    # row is stored: a moment after the row is seen, not before.
    assert wait_until(lambda: stack.queue_size() == 0, 10), stack.queue_size()
