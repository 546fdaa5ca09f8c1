"""The daemon runs no password check inside a message's transaction, which on SQLite
holds the one write lock: a check no cache keeps rolls the message back, runs outside,
and the message runs again (pbm.mailstore.DbInbox._process, PasswordCheckNeeded). Every
command is still applied once, and the throttle spares exactly what it spared."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator

import pytest
from sqlmodel import col, func, select

from pbm import mailstore
from pbm.daemon import Daemon
from pbm.mailstore import PASSWORD_CHECKS_OUTSIDE
from pbm.services.accounts import passwords
from pbm.store.engine import session_for
from pbm.store.models import Move, RateEvent
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


def _through_daemon(
    server: Server, daemon: Daemon, sender: str, subject: str, body: str = ""
) -> None:
    """Store a mail as the daemon's IMAP intake does, then run its processor once."""
    daemon.inbox.store_now(server.raw(sender, subject, body), "imap")
    result = daemon.inbox.process_some(threading.Event())
    assert result.statuses == {"done": 1}, result


def _failures(server: Server) -> int:
    with session_for(server.engine) as session:
        query = select(func.count()).select_from(RateEvent).where(RateEvent.kind == "auth-pair")
        return int(session.exec(query).one())


def _moves(server: Server) -> list[str]:
    with session_for(server.engine) as session:
        return list(session.exec(select(Move.text).order_by(col(Move.number))).all())


def test_a_first_move_after_a_start_checks_its_password_outside_the_transaction(
    server: Server, daemon: Daemon, scrypt_runs: list[bool]
) -> None:
    move = _board(server, scrypt_runs)
    _through_daemon(server, daemon, "alice@players.example", f"quarto move 101 alice secret {move}")
    assert scrypt_runs == [False]  # one check, between two runs of the message
    mails = server.new_mail()
    assert {a for m in mails for a in m.to} >= {"alice@players.example", "bob@players.example"}
    assert _moves(server) == [move] and _failures(server) == 0
    # The next command finds the outcome kept: no scrypt, no second run.
    _through_daemon(server, daemon, "alice@players.example", "quarto show 101 alice secret")
    assert scrypt_runs == [False]


def test_a_wrong_password_is_checked_outside_once_and_counted_once(
    server: Server, daemon: Daemon, scrypt_runs: list[bool]
) -> None:
    move = _board(server, scrypt_runs)
    for attempt in range(1, server.config.max_failures + 1):
        guess = f"quarto move 101 alice wrong{attempt} {move}"
        _through_daemon(server, daemon, "alice@players.example", guess)
        [reply] = server.new_mail()
        assert "password" in flat(reply.body).lower()
        assert scrypt_runs == [False] * attempt and _failures(server) == attempt
    # The budget is spent: the throttle refuses unchecked, and nothing runs outside either.
    _through_daemon(server, daemon, "alice@players.example", f"quarto move 101 alice secret {move}")
    assert scrypt_runs == [False] * server.config.max_failures
    assert _moves(server) == []


def test_a_command_before_the_check_is_applied_once_and_checks_past_the_bound_run_inside(
    server: Server, daemon: Daemon, scrypt_runs: list[bool]
) -> None:
    move = _board(server, scrypt_runs)
    for name in ("carol", "dave", "erin"):
        server.signup(name)
    scrypt_runs.clear()
    lines = [f"quarto move 101 alice secret {move}"]
    lines += [f"set {name} secret format text" for name in ("bob", "carol", "dave", "erin")]
    _through_daemon(server, daemon, "alice@players.example", "multiple", "\n".join(lines))
    # alice, bob, carol outside, each followed by a run from the start; dave and erin inside
    assert PASSWORD_CHECKS_OUTSIDE == 3
    assert scrypt_runs == [False, False, False, True, True]
    assert _moves(server) == [move]  # the move ran four times, and was kept once
    # one board mail each, one mail with the four answers: nothing sent twice
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == ["alice@players.example"] * 2 + ["bob@players.example"]
    assert flat(next(m.body for m in mails if "answers" in m.subject)).count("plain text") == 4
    assert _failures(server) == 0
