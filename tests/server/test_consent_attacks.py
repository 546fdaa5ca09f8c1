"""The consent attacks of issue 22, with the attack mails of tests/data/mail/attacks, run
through the pipeline on a real database: what each makes pbm queue, mail by mail."""

from __future__ import annotations

import email
from datetime import timedelta
from pathlib import Path

from pbm.config import Config
from pbm.jobs import run_due
from tests.server.conftest import Sent, Server, flat

ATTACKS = Path(__file__).resolve().parent.parent / "data" / "mail" / "attacks"
VICTIM = "victim@victim.test"
ATTACKER = "attacker@evil.test"


def attack(server: Server, name: str, message_id: str | None = None) -> str:
    raw = (ATTACKS / name).read_bytes()
    if message_id is not None:
        msg = email.message_from_bytes(raw)
        msg.replace_header("Message-ID", message_id)
        raw = msg.as_bytes()
    return server.process(raw)


def to_victim(server: Server) -> list[Sent]:
    return server.to(VICTIM, server.outbox())


def test_signups_and_a_tournament_at_the_victim(server: Server) -> None:
    assert attack(server, "consent_signups_at_victim.eml") == "done"
    assert attack(server, "consent_tournament_for_victim.eml") == "done"
    # Days of reminders and forfeits later, nothing more reaches her.
    for _ in range(3):
        server.clock.advance(timedelta(hours=8))
        run_due(server.engine, server.clock, server.config)
    mails = to_victim(server)
    assert 1 <= len(mails) <= 3
    assert all("confirm " in flat(m.body) and "not me" in flat(m.body) for m in mails)
    assert not [m for m in mails if "Board" in m.subject or "Tournament" in m.subject]
    # The attacker hears why: the tournament's floor, and nobody to pair.
    answers = " ".join(m.body for m in server.to(ATTACKER, server.outbox()))
    assert "floor" in answers


def test_message_to_500_reaches_nobody(server: Server) -> None:
    server.signup("att", "pw")
    for start in range(0, 500, 50):
        lines = "\n".join(f"signup m{i} pw" for i in range(start, start + 50))
        server.send(f"many{start}@victims.test", "multiple", lines + "\n")
    server.new_mail()
    raw = (ATTACKS / "consent_message_500.eml").read_bytes()
    raw = raw.replace(b"From: attacker@evil.test", b"From: att@players.example")
    assert server.process(raw) == "done"
    mails = server.new_mail()
    assert [m.to for m in mails if m.to != ["att@players.example"]] == []
    assert all(len(m.to) == 1 for m in mails)
    assert "at most 10 players, not 500" in flat(mails[-1].body)


def test_a_signup_of_5000_addresses(server: Server) -> None:
    assert attack(server, "consent_signup_5000_addresses.eml") == "done"
    mails = server.outbox()
    assert [m.to for m in mails] == [[ATTACKER]]
    assert "at most 3 addresses, not 5000" in flat(mails[0].body)


def test_forged_wrong_passwords_do_not_stop_the_owners_token_reply(server: Server) -> None:
    alice = server.signup("alice", address="alice@a.test")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    board = server.to(alice, server.new_mail())[-1]
    reply_to = str(email.message_from_bytes(board.raw)["Reply-To"])
    for n in range(5):
        assert attack(server, "consent_forged_wrong_password.eml", f"<forged.{n}@evil.test>")
    server.new_mail()
    # Without a token her own mail is refused unchecked for the window ...
    server.send(alice, "quarto resign 101 alice secret")
    [refused] = server.new_mail()
    assert "refused" in flat(refused.body).lower() or "not checked" in flat(refused.body).lower()
    # ... but a reply to her board mail proves her From, and skips the lock.
    server.send(alice, "Re: board", "quarto resign 101 alice secret\n", to=reply_to)
    mails = server.new_mail()
    # She resigned before a move: the board is removed, and both are told.
    assert any("alice has decided not to play" in flat(m.body) for m in server.to(alice, mails))
    assert not any("not checked" in flat(m.body).lower() for m in mails)


def test_a_player_over_his_budget_still_gets_his_tournament(server: Server) -> None:
    server.config = Config(**{**server.config.__dict__, "player_replies_per_hour": 5})
    people = {name: server.signup(name) for name in ("ann", "ben", "cat", "dan")}
    ann = people["ann"]
    server.send(ann, "tournament create ann secret cup quarto")
    for name, address in people.items():
        server.send(address, f"tournament join cup {name} secret")
    server.new_mail()
    for n in range(12):
        server.send(ann, f"quarto show {900 + n}")
    mistakes = server.to(ann, server.new_mail())
    notices = [m for m in mistakes if "not mailed until" in flat(m.body)]
    # Answers until the budget is spent, then one notice, then silence.
    assert len(notices) == 1 and mistakes[-1] is notices[0] and len(mistakes) < 12
    server.send(ann, "tournament start cup ann secret")
    mails = server.to(ann, server.new_mail())
    assert any(m.subject.startswith("Tournament cup round") for m in mails)
    assert any(m.subject.startswith("New Quarto Board") for m in mails)
    assert not any("not mailed until" in flat(m.body) for m in mails)
