"""Bounces through the real MTA (issue 23): pbm's mail to a mailbox that stopped existing
is refused by Dovecot, the test Postfix writes the DSN to the mail's VERP envelope
sender, it comes back to pbm's mailbox and through the daemon's IMAP intake, and is
attributed to the exact mail; at the threshold the mailbox gets nothing more, and the
player and his opponent are told. Once it exists again, a mail from it gets its answer
and a fresh confirmation request, and only the confirmation enables it."""

from __future__ import annotations

import imaplib
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from pbm.games import GAMES
from pbm.mail.identity import mailbox_key
from pbm.store.models import OutboxMail
from pbm.store.models_mail import BounceEvent, MailboxHealth

from .conftest import PASSWORD, MailStack, PbmServer, free_ports, plain_text, sign_up, wait_until

pytestmark = [pytest.mark.mailstack, pytest.mark.slow]

GHOST = "ghost"
# The VERP address is pbm+ID-CODE@example.test (PbmServer's [bounces] local_part), which
# Dovecot (recipient_delimiter +) delivers to pbm's own mailbox, the one the daemon
# reads; one hard bounce disables.
BOUNCES = "threshold = 1.0\n"


@pytest.fixture()
def bouncing_server(stack: MailStack) -> Iterator[PbmServer]:
    workdir = Path(tempfile.mkdtemp(prefix="pbm-serve-", dir="/tmp"))
    server = PbmServer(stack, workdir, extra=BOUNCES)
    stack.script("adduser", GHOST)
    try:
        yield server
    finally:
        server.stop()
        _remove_user(stack, GHOST)
        shutil.rmtree(workdir, ignore_errors=True)


def _remove_user(stack: MailStack, user: str) -> None:
    """The mailbox stops existing: Dovecot's LMTP refuses it with 550 5.1.1 from now on
    (its passwd-file is read again on every lookup)."""
    users = stack.ms / "dovecot" / "users"
    lines = users.read_text().splitlines(keepends=True)
    users.write_text("".join(x for x in lines if not x.startswith(f"{user}:")))


def _logs_in(stack: MailStack, user: str) -> bool:
    """Whether Dovecot knows `user` (it reads its passwd-file again within a second or
    two of a change)."""
    client = imaplib.IMAP4(stack.host, stack.imap_port, timeout=30)
    try:
        client.login(user, PASSWORD)
    except imaplib.IMAP4.error:
        return False
    finally:
        client.logout()
    return True


def _first_move() -> str:
    rules = GAMES["quarto"]
    state = rules.new_state()
    return rules.format_move(state, next(iter(rules.legal_moves(state))))


def test_a_dead_mailbox_bounces_back_through_the_mta_and_is_disabled(
    bouncing_server: PbmServer,
) -> None:
    server, stack = bouncing_server, bouncing_server.stack
    server.start()
    boxes = sign_up(server, "alice", GHOST)
    stack.send("alice", "pbm@example.test", "quarto challenge alice ghost")
    new = boxes[GHOST].wait_for(lambda m: "New Quarto Board" in str(m["Subject"]))
    assert new, boxes[GHOST].subjects()
    board = re.search(r"Board (\d+)", str(new[0]["Subject"])).group(1)  # type: ignore[union-attr]
    ghost = stack.address(GHOST)

    _remove_user(stack, GHOST)
    # Dovecot reads its passwd-file again within a second or two: until then it would
    # still take the mail, and nothing would bounce.
    assert wait_until(lambda: not _logs_in(stack, GHOST), timeout=30)
    stack.send("alice", "pbm@example.test", f"quarto move {board} alice secret {_first_move()}")
    assert wait_until(lambda: bool(server.rows(BounceEvent)), timeout=60), server.log()
    [event] = server.rows(BounceEvent)
    [mail] = [m for m in server.rows(OutboxMail) if m.id == event.outbox_id]
    # Attributed to the exact mail: the board mail to ghost after alice's move.
    assert (event.kind.value, event.status, event.mailbox) == ("hard", "5.1.1", mailbox_key(ghost))
    assert ghost in mail.recipients and "Quarto Board" in mail.subject
    [health] = server.rows(MailboxHealth)
    assert health.disabled_at is not None

    # His opponent is told once that he cannot be reached by mail.
    told = boxes["alice"].wait_for(lambda m: "cannot be reached" in str(m["Subject"]))
    assert len(told) == 1 and f"quarto {board}" in plain_text(told[0])

    # After the threshold pbm mails the mailbox nothing, whatever happens on the board.
    before = len(server.rows(OutboxMail))
    stack.send("alice", "pbm@example.test", "message alice secret ghost", body="Still there?")
    stack.send("alice", "pbm@example.test", f"quarto show {board}")
    assert wait_until(lambda: len(server.rows(OutboxMail)) >= before + 2, timeout=30)
    later = [m for m in server.rows(OutboxMail) if m.id > before and ghost in m.recipients]
    assert later == []
    assert len(boxes["alice"].wait_for(lambda m: "cannot be reached" in str(m["Subject"]))) == 1

    # The mailbox exists again. A mail from it is answered, with why pbm had stopped and
    # a fresh confirmation request, but it does not enable the mailbox by itself.
    stack.script("adduser", GHOST)
    assert wait_until(lambda: _logs_in(stack, GHOST), timeout=30)
    stack.send(GHOST, "pbm@example.test", f"quarto show {board}")
    box = boxes[GHOST]
    request = box.wait_for(lambda m: str(m["Subject"]) == "Confirm your address for ghost")
    assert request, (box.subjects(), server.log())
    assert box.wait_for(lambda m: "was stopped" in plain_text(m)), box.subjects()
    [health] = server.rows(MailboxHealth)
    assert health.disabled_at is not None
    stack.send("alice", "pbm@example.test", "message alice secret ghost", body="Still there?")
    assert wait_until(lambda: "not mailing " + ghost in server.log(), timeout=30)

    # His reply to the request enables the mailbox, the answer says so, and mail that
    # he did not ask for reaches him again.
    stack.send(
        GHOST,
        str(request[0]["Reply-To"]),
        f"Re: {request[0]['Subject']}",
        "\n",
        headers={"In-Reply-To": str(request[0]["Message-ID"])},
    )
    assert box.wait_for(lambda m: "pbm mails it again" in " ".join(plain_text(m).split()))
    [health] = server.rows(MailboxHealth)
    assert (health.disabled_at, health.score) == (None, 0.0)
    stack.send("alice", "pbm@example.test", "message alice secret ghost", body="Welcome back")
    assert box.wait_for(lambda m: "Welcome back" in plain_text(m)), box.subjects()


@pytest.fixture()
def dead_relay(stack: MailStack) -> Iterator[str]:
    """A domain whose mail Postfix hands to a relay that is down, with a delay warning
    after a second (instead of hours): the DSN a player's full or unreachable server
    causes. The stack's settings are put back afterwards."""
    etc = stack.ms / "postfix" / "etc"
    (port,) = free_ports(1)
    transport = etc / "transport"
    saved = transport.read_text()
    transport.write_text(saved + f"dead.example.test smtp:[127.0.0.1]:{port}\n")
    stack.postfix("postconf", "-e", "delay_warning_time = 1s")
    stack.postfix("postfix", "reload")
    try:
        yield "far@dead.example.test"
    finally:
        transport.write_text(saved)
        stack.postfix("postconf", "-e", "delay_warning_time = 0")
        stack.postfix("postsuper", "-d", "ALL")
        stack.postfix("postfix", "reload")


def test_a_relay_that_is_down_gives_a_soft_bounce(stack: MailStack, dead_relay: str) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="pbm-serve-", dir="/tmp"))
    server = PbmServer(stack, workdir, extra=BOUNCES)
    try:
        server.start()
        stack.send(dead_relay, "pbm@example.test", "signup far secret")
        assert wait_until(lambda: bool(server.rows(BounceEvent)), timeout=90), server.log()
        [event] = server.rows(BounceEvent)[:1]
        assert event.kind.value == "soft" and event.status.startswith("4.")
        [health] = server.rows(MailboxHealth)
        assert (health.mailbox, health.score, health.disabled_at) == (dead_relay, 0.5, None)
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
