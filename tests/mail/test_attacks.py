"""The attacks of docs/security.md through the real daemon and the real mail stack:
Postfix delivers them to `pbm serve`, and the victims' Dovecot mailboxes show what pbm
sent."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pbm.store.models import InboundMessage, Move, OutboxMail

from .conftest import PbmServer, Postbox, plain_text, sign_up, wait_until

pytestmark = [pytest.mark.mailstack, pytest.mark.slow]

PBM = "pbm@example.test"


def _all_done(server: PbmServer, count: int) -> bool:
    rows = server.rows(InboundMessage)
    return len(rows) >= count and all(r.status in ("done", "ignored") for r in rows)


def _settled(server: PbmServer, count: int) -> None:
    assert wait_until(lambda: _all_done(server, count), 60), server.log()
    assert wait_until(lambda: all(r.status == "sent" for r in server.rows(OutboxMail)), 30), (
        server.log()
    )


def test_forged_help_flood_sends_the_victim_one_mail(pbm_server: PbmServer) -> None:
    pbm_server.start()
    stack = pbm_server.stack
    stack.send("carol", PBM, "help " + " ".join(["quarto"] * 2000))
    stack.send("carol", PBM, "multiple", "\n".join(["quarto show 101", "list quarto"] * 500))
    _settled(pbm_server, 2)
    box = Postbox(stack, "carol")
    time.sleep(1)  # anything more would have arrived by now
    assert len(box.refresh()) == 2  # one answer per message


def test_a_loop_with_an_unmarked_auto_responder_stops(pbm_server: PbmServer) -> None:
    """bob's mail program answers everything pbm sends with a mail that looks human."""
    pbm_server.start()
    stack = pbm_server.stack
    box = Postbox(stack, "bob")
    for n in range(20):
        stack.send("bob", PBM, f"help round {n}")
    _settled(pbm_server, 20)
    assert len(box.refresh()) == 11  # the reply budget of one hour, and its one notice


def test_forged_from_and_foreign_tokens_play_nothing(pbm_server: PbmServer) -> None:
    pbm_server.start()
    stack = pbm_server.stack
    sign_up(pbm_server, "alice", "bob")  # 2 signups, 2 confirmations
    stack.send("alice", PBM, "quarto challenge alice bob")
    _settled(pbm_server, 5)
    alice = Postbox(stack, "alice")
    board = alice.wait_for(lambda m: "Quarto" in str(m["Subject"]))[-1]
    token = str(board["Reply-To"]).split("+", 1)[1].split("@", 1)[0]
    # The CVE-2023-27043 shape: a lenient parser reads alice, mail programs the attacker.
    stack.send_raw(
        "carol@example.test",
        [PBM],
        (
            "From: alice@example.test <carol@example.test>\r\n"
            f"To: pbm+{token}@example.test\r\nSubject: Re: x\r\n"
            "Message-ID: <cve.1@example.test>\r\n\r\ngive TLRH\r\n"
        ).encode(),
    )
    # A token in a Message-ID of another host.
    stack.send(
        "alice",
        PBM,
        "Re: x",
        "give TLRH",
        headers={"In-Reply-To": f"<pbm.{token}.0123@evil.host>"},
    )
    _settled(pbm_server, 7)
    assert pbm_server.rows(Move) == []
    assert Postbox(stack, "carol").refresh() == []  # the forged mail got no answer either


ATTACKS = Path(__file__).resolve().parent.parent / "data" / "mail" / "attacks"


def _attack_mail(name: str) -> bytes:
    """An attack mail of tests/data/mail/attacks, addressed to this stack: pbm is
    pbm@example.test, and the victim is carol."""
    raw = (ATTACKS / name).read_bytes()
    raw = raw.replace(b"pbm@example.org", PBM.encode())
    return raw.replace(b"victim@victim.test", b"carol@example.test")


def test_signups_and_a_tournament_at_a_victim_reach_her_three_times(
    pbm_server: PbmServer,
) -> None:
    """Issue 22: 50 accounts at carol's address and a tournament of them, from one
    attacker: carol gets confirmation requests only, at most 3 of them, and no board
    or tournament mail."""
    pbm_server.start()
    stack = pbm_server.stack
    for name in ("consent_signups_at_victim.eml", "consent_tournament_for_victim.eml"):
        stack.send_raw("attacker@evil.test", [PBM], _attack_mail(name))
    assert wait_until(lambda: _all_done(pbm_server, 2), 120), pbm_server.log()
    # The stack takes no mail for evil.test: the attacker's answers fail, carol's go.
    assert wait_until(lambda: all(r.status != "queued" for r in pbm_server.rows(OutboxMail)), 60), (
        pbm_server.log()
    )
    box = Postbox(stack, "carol")
    time.sleep(1)  # anything more would have arrived by now
    mails = box.refresh()
    assert 1 <= len(mails) <= 3
    for mail in mails:
        assert str(mail["Subject"]).startswith("Confirm your address for")
    assert pbm_server.rows(Move) == []


def test_a_signup_of_5000_addresses_and_a_message_to_500_mail_nobody(
    pbm_server: PbmServer,
) -> None:
    """Issue 22: `signup xx pw a0@... a4999@...` and `message att pw m0 ... m499` (those
    accounts made by one attacker at carol's address) reach carol with nothing but her
    confirmation requests, and no mail has more than one recipient."""
    pbm_server.start()
    stack = pbm_server.stack
    signups = "\n".join(f"signup m{i} pw carol@example.test" for i in range(50))
    stack.send("attacker@evil.test", PBM, "multiple", signups + "\n")
    stack.send_raw("attacker@evil.test", [PBM], _attack_mail("consent_signup_5000_addresses.eml"))
    sign_up(pbm_server, "alice")
    message = _attack_mail("consent_message_500.eml").replace(
        b"From: attacker@evil.test", b"From: alice@example.test"
    )
    stack.send_raw(
        "alice@example.test", [PBM], message.replace(b"message att pw", b"message alice secret")
    )
    assert wait_until(lambda: _all_done(pbm_server, 5), 120), pbm_server.log()
    assert wait_until(lambda: all(r.status != "queued" for r in pbm_server.rows(OutboxMail)), 60), (
        pbm_server.log()
    )
    assert all(len(json.loads(r.recipients)) == 1 for r in pbm_server.rows(OutboxMail))
    time.sleep(1)  # anything more would have arrived by now
    carol = Postbox(stack, "carol").refresh()
    assert 1 <= len(carol) <= 3
    assert all(str(m["Subject"]).startswith("Confirm your address for") for m in carol)
    answer = Postbox(stack, "alice").wait_for(lambda m: "at most 10" in plain_text(m))
    assert answer, pbm_server.log()
