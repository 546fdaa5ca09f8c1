"""The daemon checks the passwords a stored message names before the message's
transaction (pbm.passwords_ahead): scrypt no longer runs while the transaction holds
SQLite's one write lock, and the ahead checks never cost what the throttle spares."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from datetime import timedelta

import pytest
from sqlmodel import func, select

from pbm import mailstore
from pbm.config import Config
from pbm.daemon import Daemon
from pbm.passwords_ahead import MAX_CHECKS, named_pairs, password_position
from pbm.services.accounts import passwords
from pbm.store.engine import session_for
from pbm.store.models import RateEvent
from tests.server.conftest import Server, flat, legal_texts


@pytest.fixture
def daemon(server: Server) -> Iterator[Daemon]:
    """The daemon's own inbox over the test server's database, as `pbm serve` wires it."""
    running = Daemon(server.config)
    running.prepare_store()
    running.clock = running.inbox.clock = server.clock
    yield running
    # On PostgreSQL this closes its liveness lock too: the next test's daemon, numbered 1
    # again once the tables are emptied, would wait for it forever.
    running.close()


@pytest.fixture
def scrypt_runs(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each scrypt run from here on, whether a message's transaction was open; the
    password caches emptied first, as in a daemon just started."""
    monkeypatch.setattr(passwords, "_verified", OrderedDict())
    monkeypatch.setattr(passwords, "_refuted", OrderedDict())
    in_transaction = threading.Event()
    runs: list[bool] = []
    real_scrypt, real_process = passwords._scrypt, mailstore.process_inbound

    def scrypt(*args: object, **kw: object) -> bytes:
        runs.append(in_transaction.is_set())
        return real_scrypt(*args, **kw)  # type: ignore[arg-type]

    def process_inbound(*args: object, **kw: object) -> str:
        in_transaction.set()
        try:
            return real_process(*args, **kw)  # type: ignore[arg-type]
        finally:
            in_transaction.clear()

    monkeypatch.setattr(passwords, "_scrypt", scrypt)
    monkeypatch.setattr(mailstore, "process_inbound", process_inbound)
    return runs


def _board(server: Server, scrypt_runs: list[bool]) -> str:
    """alice and bob at a new Quarto board; alice's first move. The scrypt runs of the
    set-up are forgotten."""
    server.signup("alice")
    server.signup("bob")
    assert server.send("alice@players.example", "quarto challenge alice bob") == "done"
    server.new_mail()
    scrypt_runs.clear()
    return legal_texts(server, "quarto")[0]


def _through_daemon(server: Server, daemon: Daemon, sender: str, subject: str) -> None:
    """Store a mail as the daemon's IMAP intake does, then run its processor once."""
    daemon.inbox.store_now(server.raw(sender, subject), "imap")
    result = daemon.inbox.process_some(threading.Event())
    assert result.statuses == {"done": 1}, result


def _failures(server: Server) -> int:
    with session_for(server.engine) as session:
        query = select(func.count()).select_from(RateEvent).where(RateEvent.kind == "auth-pair")
        return int(session.exec(query).one())


def test_a_first_move_after_a_start_checks_its_password_outside_the_transaction(
    server: Server, daemon: Daemon, scrypt_runs: list[bool]
) -> None:
    move = _board(server, scrypt_runs)
    _through_daemon(server, daemon, "alice@players.example", f"quarto move 101 alice secret {move}")
    assert scrypt_runs == [False]  # one check, before the transaction
    mails = server.new_mail()
    assert {a for m in mails for a in m.to} >= {"alice@players.example", "bob@players.example"}
    assert _failures(server) == 0


def test_a_wrong_password_is_checked_ahead_once_then_in_the_transaction_as_before(
    server: Server, daemon: Daemon, scrypt_runs: list[bool]
) -> None:
    move = _board(server, scrypt_runs)
    _through_daemon(server, daemon, "alice@players.example", f"quarto move 101 alice wrong1 {move}")
    # Refuted ahead; the transaction found the outcome kept, and counted the failure.
    assert scrypt_runs == [False]
    [reply] = server.new_mail()
    assert "password" in flat(reply.body).lower() and _failures(server) == 1
    # An account refuted ahead in the failure window is not checked ahead again: a
    # stranger's guesses cost no more scrypt runs than they did before.
    _through_daemon(server, daemon, "alice@players.example", f"quarto move 101 alice wrong2 {move}")
    assert scrypt_runs == [False, True] and _failures(server) == 2
    # Once the window has passed, the account is checked ahead again.
    server.clock.advance(timedelta(minutes=server.config.failure_window_minutes + 1))
    _through_daemon(server, daemon, "alice@players.example", f"quarto move 101 alice secret {move}")
    assert scrypt_runs == [False, True, False]
    assert "bob@players.example" in {a for m in server.new_mail() for a in m.to}  # played


def test_a_daemon_on_a_database_file_checks_ahead(daemon: Daemon) -> None:
    assert daemon.inbox.ahead is not None


def test_the_pairs_a_mail_names_are_few_and_never_a_new_accounts(server: Server) -> None:
    config: Config = server.config
    lines = "\n".join(f"quarto move 101 player{n} pw{n} a1 SLQF" for n in range(6))
    several = server.raw("alice@players.example", "multiple", lines)
    assert named_pairs(several, config) == [(f"player{n}", f"pw{n}") for n in range(MAX_CHECKS)]
    repeated = server.raw("alice@players.example", "multiple", "quarto resign 101 alice pw\n" * 5)
    assert named_pairs(repeated, config) == [("alice", "pw")]
    # a signup's password is no account's yet; an ambiguous usage names no pair
    assert named_pairs(server.raw("x@players.example", "signup alice guess"), config) == []
    subscribe = server.raw("alice@players.example", "quarto subscribe 101 alice pw")
    assert named_pairs(subscribe, config) == []
    assert password_position("board userid password | userid password board...|all") is None
    assert password_position("password userid current-password new-password") == 1
    # no command runs for a robot's mail, so no password is checked for it
    robot = server.raw(
        "alice@players.example",
        "quarto resign 101 alice pw",
        headers={"Auto-Submitted": "auto-replied"},
    )
    assert named_pairs(robot, config) == []
