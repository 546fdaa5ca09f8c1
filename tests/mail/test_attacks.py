"""The attacks of docs/security.md through the real daemon and the real mail stack:
Postfix delivers them to `pbm serve`, and the victims' Dovecot mailboxes show what pbm
sent."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pbm.store.models import InboundMessage, Move, OutboxMail

from .conftest import MailStack, PbmServer, Postbox, plain_text, sign_up, wait_until

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


# What pbm's budgets and their one notice say (templates/phrases.toml).
NOTICE = "not mailed until"


def _flat(mail) -> str:
    return " ".join(plain_text(mail).split())


def _variant(spelling: str, n: int) -> bytes:
    """consent_variant_spelling.eml from `spelling` of carol's mailbox, its n-th copy."""
    raw = _attack_mail("consent_variant_spelling.eml")
    raw = raw.replace(b"victim+0@victim.test", spelling.encode())
    return raw.replace(b"<consent-variant.0@", f"<consent-variant.{n}@".encode())


def test_tag_idn_nfd_and_case_spellings_of_one_mailbox_share_one_budget(
    pbm_server: PbmServer,
) -> None:
    """Issue 22: carol's one mailbox at bücher.test, spelt with its U-label, NFD, case,
    `+tag`s and its A-label, spends one stranger budget of 10 answers. The U-label and
    NFD answers cannot reach her here (the stack takes no SMTPUTF8 mail for her), so
    they go first: her inbox then holds what the budget had left, and the one notice."""
    pbm_server.start()
    stack = pbm_server.stack
    unicode = ["carol@bücher.test", "carol@bu\u0308cher.test", "Carol+u@BÜCHER.test"]
    ascii_ = [
        "carol@xn--bcher-kva.test",
        "carol+0@xn--bcher-kva.test",
        "CAROL@XN--BCHER-KVA.TEST",
        "Carol+x@Xn--Bcher-Kva.Test",
    ]
    spellings = unicode + ascii_ * 3
    for n, spelling in enumerate(spellings):
        stack.send_raw("carol@xn--bcher-kva.test", [PBM], _variant(spelling, n))
        if n == len(unicode) - 1:  # their answers first, in this order
            _settled_or_failed(pbm_server, len(unicode))
    _settled_or_failed(pbm_server, len(spellings))
    undeliverable = [
        r for r in pbm_server.rows(OutboxMail) if not json.loads(r.recipients)[0].isascii()
    ]
    assert len(undeliverable) == len(unicode), pbm_server.log()
    # Sent with SMTPUTF8, refused by the stack's relay: not a half-sent envelope.
    assert all("550" in (r.last_error or "") for r in undeliverable), pbm_server.log()
    assert "outbox_error" not in pbm_server.log()
    box = Postbox(stack, "carol")
    time.sleep(1)  # anything more would have arrived by now
    mails = box.refresh()
    notices = [m for m in mails if NOTICE in _flat(m)]
    assert len(mails) == 10 - len(unicode) + 1, [str(m["To"]) for m in mails]
    assert len(notices) == 1
    # Postfix delivers in parallel; pbm's queue keeps the order: the notice, then silence.
    assert NOTICE in " ".join(pbm_server.rows(OutboxMail)[-1].body.split())
    # The answers went to the spellings as written (their case aside).
    assert {str(m["To"]).lower() for m in mails} == {a.lower() for a in ascii_}


def _settled_or_failed(server: PbmServer, count: int) -> None:
    """`count` mails handled and none of pbm's answers still waiting to go."""
    assert wait_until(lambda: _all_done(server, count), 60), server.log()
    assert wait_until(lambda: all(r.status != "queued" for r in server.rows(OutboxMail)), 30), (
        server.log()
    )


def _board_token_reply(stack: MailStack, board, body: str) -> None:
    """The owner's reply to a board mail: to its Reply-To, in reply to its Message-ID."""
    stack.send(
        "alice",
        str(board["Reply-To"]),
        f"Re: {board['Subject']}",
        body,
        headers={"In-Reply-To": str(board["Message-ID"])},
    )


def test_forged_wrong_passwords_do_not_stop_the_owners_token_reply(
    pbm_server: PbmServer,
) -> None:
    """Issue 22: 5 mails forging alice's From with a wrong password lock her password
    out, but her reply to the board mail (its token) plays her move."""
    pbm_server.start()
    stack = pbm_server.stack
    boxes = sign_up(pbm_server, "alice", "bob")
    stack.send("alice", PBM, "quarto challenge alice bob")
    board = boxes["alice"].wait_for(lambda m: "Quarto" in str(m["Subject"]), timeout=60)
    assert board, pbm_server.log()
    number = re.search(r"Board (\d+)", str(board[-1]["Subject"]))
    assert number, board[-1]["Subject"]
    forged = (ATTACKS / "consent_forged_wrong_password.eml").read_bytes()
    forged = forged.replace(b"pbm@example.org", PBM.encode())
    forged = forged.replace(b"alice@a.test", b"alice@example.test")
    forged = forged.replace(b"resign 101", f"resign {number[1]}".encode())
    for n in range(5):
        one = forged.replace(b"<consent-forged.5@", f"<consent-forged.{n}@".encode())
        stack.send_raw("alice@example.test", [PBM], one)
    _settled(pbm_server, 10)
    seen = len(boxes["alice"].refresh())
    # Her own password, without a token, is not checked while the lock holds ...
    stack.send("alice", PBM, f"quarto resign {number[1]} alice secret")
    refused = boxes["alice"].wait_for(lambda m: "not checked" in _flat(m).lower(), timeout=60)
    assert refused, (boxes["alice"].subjects()[seen:], pbm_server.log())
    assert pbm_server.rows(Move) == []
    # ... but her reply to the board mail proves her From: the move is played.
    _board_token_reply(stack, board[-1], "give TLRH\n")
    assert wait_until(lambda: len(pbm_server.rows(Move)) == 1, 60), pbm_server.log()


@contextmanager
def _server_with(stack: MailStack, extra: str) -> Iterator[PbmServer]:
    """`pbm serve` on the stack with `extra` in its configuration."""
    workdir = Path(tempfile.mkdtemp(prefix="pbm-serve-", dir="/tmp"))
    server = PbmServer(stack, workdir, extra)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def test_a_player_over_his_budget_still_gets_his_tournament(stack: MailStack) -> None:
    """Issue 22: alice, confirmed, makes more mistakes in an hour than her budget of 5
    answers during a tournament: one notice, then silence for her mistakes, and every
    tournament and board mail still reaches her."""
    with _server_with(stack, "[limits]\nplayer_replies_per_hour = 5\n") as server:
        server.start()
        boxes = sign_up(server, "alice", "bob")
        stack.send("alice", PBM, "tournament create alice secret cup quarto")
        _settled(server, 5)
        for user in ("alice", "bob"):
            stack.send(user, PBM, f"tournament join cup {user} secret")
        _settled(server, 7)
        mistakes = [stack.send("alice", PBM, f"quarto show {900 + n}") for n in range(12)]
        _settled(server, 19)
        stack.send("alice", PBM, "tournament start cup alice secret")
        _settled(server, 20)
        alice = boxes["alice"]
        news = alice.wait_for(
            lambda m: str(m["Subject"]).startswith(("Tournament cup", "New Quarto Board")), 2
        )
        assert len(news) >= 2, (alice.subjects(), server.log())
        time.sleep(1)  # anything more would have arrived by now
        alice.refresh()
        notices = [m for m in alice.mail if NOTICE in _flat(m)]
        assert len(notices) == 1, alice.subjects()
        received = {str(m["Message-ID"]) for m in alice.mail}
        queued = [
            r
            for r in server.rows(OutboxMail)
            if "alice@example.test" in json.loads(r.recipients)
            and ("Tournament" in r.subject or "Board" in r.subject)
        ]
        assert any("round" in r.subject for r in queued), [r.subject for r in queued]
        assert any("New Quarto Board" in r.subject for r in queued)
        missing = [r.subject for r in queued if r.message_id not in received]
        assert missing == [], (missing, alice.subjects())
        # Her mistakes were answered until the budget was spent, then the notice alone:
        # in the order pbm answered them (its outbox), which is the order Postfix handed
        # them over, not always the order they were sent in.
        queued_at = {r.message_id: r.saved_id for r in server.rows(OutboxMail)}
        answered = sorted(
            (queued_at[str(m["Message-ID"])], m)
            for m in alice.mail
            if str(m["In-Reply-To"]) in mistakes
        )
        assert 0 < len(answered) < 12 and answered[-1][1] is notices[0], alice.subjects()
