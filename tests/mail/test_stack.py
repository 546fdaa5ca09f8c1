"""The test stack itself: mail submitted over SMTP reaches IMAP, announced by IDLE."""

from __future__ import annotations

import asyncio
import email
import email.policy

import aioimaplib
import pytest

pytestmark = pytest.mark.mailstack


def test_smtp_to_imap_idle_push(stack) -> None:
    async def scenario() -> bytes:
        client = aioimaplib.IMAP4(stack.host, stack.imap_port, timeout=10)
        await client.wait_hello_from_server()
        assert (await client.login("pbm", "secret")).result == "OK"
        assert (await client.select("INBOX")).result == "OK"
        idle = await client.idle_start(timeout=30)
        await asyncio.to_thread(stack.send, "alice", "pbm+abcdef12@example.test", "signup alice x")
        pushed = False
        # bounded: IDLE also pushes keep-alives; a wait of 10 s that hears nothing raises
        # (no hang), and how soon the push comes is for benchmarks/mail_e2e.py to measure
        for _ in range(20):
            push = await client.wait_server_push(timeout=10)
            if isinstance(push, list) and any(line.endswith(b" EXISTS") for line in push):
                pushed = True
                break
        client.idle_done()
        await asyncio.wait_for(idle, 5)
        assert pushed
        found = await client.uid_search("UNSEEN", charset=None)
        uid = found.lines[0].split()[-1].decode()
        fetched = await client.uid("fetch", uid, "(BODY.PEEK[])")
        raw = next(bytes(x) for x in fetched.lines if isinstance(x, bytearray))
        await client.logout()
        return raw

    raw = asyncio.run(scenario())
    msg = email.message_from_bytes(raw, policy=email.policy.default)
    assert msg["Subject"] == "signup alice x"
    # plus-addressed mail lands in the server's own mailbox, the token kept in the headers
    assert "pbm+abcdef12@example.test" in raw.decode()


def test_unknown_local_user_bounces_to_sender(stack) -> None:
    stack.send("alice", "nobody@example.test", "hello")
    assert stack.wait_count("alice", 1) == 1
    bounce = stack.messages("alice")[0]
    assert bounce["Auto-Submitted"] == "auto-replied"
    assert bounce.get_content_type() == "multipart/report"
