"""Bounces, complaints, stop addresses and the headers by stream, through the pipeline
(issue 23, points 1, 2, 3 and 5; issue 22, point 4). The reports are DSN and ARF mails
as receiving systems write them (tests/bounce_mails.py), taken in like any mail."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from sqlmodel import select

from pbm.mail.bounces import verp_address
from pbm.mail.streams import MailReason
from pbm.services.context import Context
from pbm.services.mailing.bounces import health_of
from pbm.store.engine import session_for
from pbm.store.models import OutboxMail
from pbm.store.models_mail import BounceEvent
from tests.bounce_mails import arf, dsn
from tests.server.conftest import (
    Sent,
    Server,
    cli_ok,
    flat,
    fresh_server,
    legal_texts,
    operator_cli,
)


def _board(server: Server, bob_address: str = "") -> tuple[str, str]:
    alice, bob = server.signup("alice"), server.signup("bob", address=bob_address)
    assert server.send(alice, "quarto challenge alice bob") == "done"
    server.new_mail()
    return alice, bob


def _move(server: Server, player: str, userid: str) -> list[Sent]:
    move = legal_texts(server, "quarto")[0]
    assert server.send(player, f"quarto move 101 {userid} secret {move}") == "done"
    return server.new_mail()


def _bounce(server: Server, sent: Sent, status: str = "5.1.1", *, verp: str | None = None) -> str:
    with session_for(server.engine) as session:
        row = session.get(OutboxMail, sent.id)
        assert row is not None
        code = row.verp if verp is None else verp
        envelope = row.envelope_from
    raw = dsn(
        envelope_from=envelope,
        mail_id=sent.id,
        verp=code,
        recipient=sent.to[0],
        raw=sent.raw,
        status=status,
        now=server.clock.now(),
        message_id=f"<dsn.{next(server.counter)}@mx.players.example>",
    )
    return server.process(raw)


def _score(server: Server, address: str) -> tuple[float, bool]:
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        row = health_of(ctx, address)
        return (0.0, False) if row is None else (row.score, row.disabled_at is not None)


def test_every_mail_has_one_recipient_a_reason_and_its_stream_headers(server: Server) -> None:
    alice, bob = server.signup("alice"), server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    mails = server.new_mail()
    assert all(len(m.to) == 1 for m in mails)
    [to_alice] = server.to(alice, mails)
    [to_bob] = server.to(bob, mails)
    head_alice = to_alice.raw.split(b"\r\n\r\n")[0].decode()
    head_bob = to_bob.raw.split(b"\r\n\r\n")[0].decode()
    assert "X-PBM-Reason: answer" in head_alice
    assert "List-Unsubscribe" not in head_alice  # his own command's answer
    assert "List-Id: <quarto-101.boards.example.org>" in head_bob
    assert "Feedback-ID: " in head_bob and ":quarto:pbm:example.org" in head_bob
    assert "List-Unsubscribe: <mailto:pbm-stop+" in head_bob
    with session_for(server.engine) as session:
        reasons = {r.reason for r in session.exec(select(OutboxMail)) if r.id in (to_bob.id,)}
    assert reasons <= {MailReason.YOUR_MOVE, MailReason.OPPONENT_MOVED}


def test_notifications_come_from_the_second_address(server: Server) -> None:
    server.config = dataclasses.replace(server.config, notify_address="games@example.org")
    alice, bob = _board(server)
    mails = _move(server, alice, "alice")
    [to_bob] = server.to(bob, mails)
    [to_alice] = server.to(alice, mails)
    assert "games@example.org" in to_bob.raw.split(b"\r\n\r\n")[0].decode().split("From:")[1]
    assert "X-PBM-Reason: your-move" in to_bob.raw.decode()
    assert b"From: PBeM Server <pbm@example.org>" in to_alice.raw


def test_hard_bounces_disable_the_mailbox_and_tell_the_opponent_once(server: Server) -> None:
    alice, bob = _board(server)
    [to_bob] = server.to(bob, _move(server, alice, "alice"))
    for day in range(5):
        # The mail bounces again each day (a retrying MTA, or new mails): one a day counts.
        assert _bounce(server, to_bob) == "done"
        assert _bounce(server, to_bob) == "done"
        assert _score(server, bob)[0] == day + 1
        told = server.new_mail()
        if day < 4:
            assert told == []
            server.clock.advance(timedelta(days=1))
    assert _score(server, bob) == (5.0, True)
    [notice] = [m for m in told if m.to == [alice]]
    assert "bob cannot be reached by mail since" in notice.body
    assert "quarto 101" in notice.body
    # Disabled: bob gets nothing, not even the board after alice's move.
    assert server.send(alice, "quarto show 101") == "done"
    server.send(alice, "message alice secret bob", "Still there?")
    assert server.to(bob, server.new_mail()) == []
    assert _bounce(server, to_bob) == "done"
    assert server.new_mail() == []  # told once
    # His next mail is answered, with why pbm stopped and a fresh confirmation request;
    # the mail alone does not show that mail to him arrives.
    server.send(bob, "quarto show 101")
    answers = server.new_mail()
    assert all(m.to == [bob] for m in answers)
    # The answers come as one mail (pbm.output_limits), the request as its own.
    [answer] = [m for m in answers if "Quarto" in m.subject]
    [request] = [m for m in answers if m.subject == "Confirm your address for bob"]
    assert len(answers) == 2
    stopped = answer.body.split("== 2. Mail to your address was stopped ==")[1]
    assert "returned again and again" in flat(stopped)
    assert "A confirmation request went to this address" in flat(stopped)
    assert "Until you confirm the address again" in flat(request.body)
    assert _score(server, bob) == (5.0, True)
    # Until he confirms, pbm mails him nothing but answers to his own mail.
    assert server.to(bob, _move(server, alice, "alice")) == []
    server.send(alice, "message alice secret bob", "Still there?")
    assert server.to(bob, server.new_mail()) == []
    # His confirmation enables the mailbox, says so, and his boards' mail flows again.
    server.confirm(bob)
    [confirmed] = server.to(bob, server.new_mail())
    assert "pbm mails it again from now on" in flat(confirmed.body)
    assert _score(server, bob) == (0.0, False)
    assert len(server.to(bob, _move(server, bob, "bob"))) == 1
    assert len(server.to(bob, _move(server, alice, "alice"))) == 1


def _bounced_for_five_days(server: Server, alice: str, bob: str) -> list[Sent]:
    """alice moves, and her board mail to bob bounces once a day for five days (enough
    to disable his mailbox); returns what pbm mailed meanwhile."""
    [to_bob] = server.to(bob, _move(server, alice, "alice"))
    for _ in range(5):
        assert _bounce(server, to_bob) == "done"
        server.clock.advance(timedelta(days=1))
    return server.new_mail()


def _disable(server: Server) -> tuple[str, str]:
    """alice and bob on a board, bob's mailbox disabled by five days of hard bounces."""
    alice, bob = _board(server)
    _bounced_for_five_days(server, alice, bob)
    assert _score(server, bob) == (5.0, True)
    return alice, bob


def _token(request: Sent) -> str:
    [token] = re.findall(r"^ +confirm (\w+)$", request.body, re.MULTILINE)
    return token


def test_confirm_token_from_the_disabled_mailbox_enables_it(server: Server) -> None:
    _alice, bob = _disable(server)
    server.send(bob, "help")
    [request] = [m for m in server.new_mail() if m.subject == "Confirm your address for bob"]
    token = _token(request)
    # From another mailbox the token confirms nothing.
    server.send("eve@players.example", f"confirm {token}")
    assert _score(server, bob) == (5.0, True)
    server.new_mail()
    server.send(bob, f"confirm {token}")
    [answer] = server.new_mail()
    assert "is confirmed for bob" in flat(answer.body) and "arrives" in answer.body
    assert _score(server, bob) == (0.0, False)


def test_the_operators_confirmation_enables_a_disabled_mailbox(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `pbm user confirm` said "confirmed" and the mailbox stayed disabled: the operator,
    # told by the player that his mailbox works again, could not mail it again.
    operator_cli(server, tmp_path, monkeypatch)
    _alice, bob = _disable(server)
    assert cli_ok("user", "confirm", "bob", bob) == (
        f"{bob} confirmed for bob, and mailed again (bounces had disabled it)\n"
    )
    assert _score(server, bob) == (0.0, False)
    assert cli_ok("user", "confirm", "bob", bob) == f"{bob} confirmed for bob\n"


def test_requests_to_a_disabled_mailbox_keep_consents_daily_limit(server: Server) -> None:
    _alice, bob = _disable(server)
    requests = []
    for _ in range(4):
        server.send(bob, "help")
        mails = server.new_mail()
        requests += [m for m in mails if m.subject == "Confirm your address for bob"]
        [answer] = [m for m in mails if m.subject != "Confirm your address for bob"]
    assert len(requests) == 3
    assert "No confirmation request can go to this address today" in flat(answer.body)
    # Only the newest request's token confirms: each request replaced the one before.
    first, last = (_token(m) for m in (requests[0], requests[-1]))
    server.send(bob, f"confirm {first}")
    assert _score(server, bob) == (5.0, True)
    server.send(bob, f"confirm {last}")
    assert _score(server, bob) == (0.0, False)


def test_nobody_else_gets_a_request_sent_to_a_disabled_mailbox(server: Server) -> None:
    server.config = dataclasses.replace(server.config, shared_mailboxes=True)
    _alice, bob = _disable(server)
    assert server.send("carol@players.example", f"signup carol secret {bob}") == "done"
    mails = server.new_mail()
    assert server.to(bob, mails) == []
    [welcome] = mails
    assert "No confirmation request can go to the addresses" in flat(welcome.body)


def test_soft_bounces_count_half_and_are_forgotten_after_a_week(server: Server) -> None:
    alice, bob = _board(server)
    mails = _move(server, alice, "alice")
    _bounce(server, server.to(bob, mails)[0], "4.2.2")
    assert _score(server, bob) == (0.5, False)
    server.clock.advance(timedelta(days=8))
    _bounce(server, server.to(bob, mails)[0], "4.2.2")
    assert _score(server, bob) == (0.5, False)  # the old half point was forgotten


def test_a_forged_verp_code_is_not_attributed(server: Server) -> None:
    alice, bob = _board(server)
    mails = _move(server, alice, "alice")
    sent = server.to(bob, mails)[0]
    # The original's Message-ID still attributes a report; without it nothing does.
    forged = dataclasses.replace(sent, raw=b"Subject: x\r\n\r\n")
    assert _bounce(server, forged, verp="ffffffffffffffff") == "ignored"
    assert _score(server, bob) == (0.0, False)
    with session_for(server.engine) as session:
        assert list(session.exec(select(BounceEvent))) == []


def test_a_complaint_stops_notifications_but_not_answers(server: Server) -> None:
    server.config = dataclasses.replace(server.config, feedback_address="pbm-fbl@example.org")
    alice, bob = _board(server)
    mails = _move(server, alice, "alice")
    sent = server.to(bob, mails)[0]
    report = arf(
        to="pbm-fbl@example.org",
        recipient=bob,
        raw=sent.raw,
        now=server.clock.now(),
        message_id="<arf.1@fbl.players.example>",
    )
    assert server.process(report) == "done"
    mails = _move(server, bob, "bob")
    assert [m.to for m in mails if "X-PBM-Reason: answer" in m.raw.decode()] == [[bob]]
    mails = _move(server, alice, "alice")
    assert server.to(bob, mails) == []
    with session_for(server.engine) as session:
        [event] = session.exec(select(BounceEvent))
    assert (event.kind.value, event.outbox_id) == ("complaint", sent.id)


def _stop_address(mail: Sent) -> str:
    header = mail.raw.decode().split("List-Unsubscribe: <mailto:")[1]
    return header.split(">")[0]


def test_the_stop_address_switches_boards_to_the_digest_and_back(server: Server) -> None:
    alice, bob = _board(server)
    mails = _move(server, alice, "alice")
    stop = _stop_address(server.to(bob, mails)[0])
    # Anyone may mail it (a mail program's unsubscribe button), no password needed.
    assert server.send(bob, "unsubscribe", to=stop) == "done"
    [confirmation] = server.new_mail()
    assert confirmation.to == [bob] and "daily digest" in confirmation.body
    assert server.send(bob, "unsubscribe", to=stop) == "done"
    assert server.new_mail() == []  # one confirmation only
    mails = _move(server, bob, "bob")
    assert sorted(m.to[0] for m in mails) == [alice, bob]  # his own answer still comes
    mails = _move(server, alice, "alice")
    assert server.to(bob, mails) == []
    # Nothing was resigned: the board goes on; the confirmation's reply address resumes.
    resume = confirmation.raw.decode().split("Reply-To: ")[1].split("\r\n")[0]
    assert resume == stop.replace("@", ".on@")
    server.send(bob, "Re: Mail stream boards switched off", to=resume)
    [on] = server.new_mail()
    assert "switched on again" in on.body
    mails = _move(server, bob, "bob")
    mails = _move(server, alice, "alice")
    assert len(server.to(bob, mails)) == 1


def test_the_operator_sees_scores_disabled_mailboxes_and_the_complaint_rate(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    operator_cli(server, tmp_path, monkeypatch)
    alice, bob = _board(server)
    [to_bob] = server.to(bob, _move(server, alice, "alice"))
    for _ in range(5):
        _bounce(server, to_bob)
        server.clock.advance(timedelta(days=1))
    report = arf(
        to=verp_address("pbm-bounces@example.org", to_bob.id, _verp_of(server, to_bob.id)),
        recipient=bob,
        raw=to_bob.raw,
        now=server.clock.now(),
        message_id="<arf.2@fbl.players.example>",
    )
    assert server.process(report) == "done"
    data = json.loads(cli_ok("mail", "bounces", "--json"))
    [row] = data["mailboxes"]
    assert (row["mailbox"], row["score"]) == ("bob@players.example", 5.0)
    assert row["disabled_at"] and row["complained_at"]
    assert data["events"] == {"hard": 5, "complaint": 1}
    assert {e["outbox_id"] for e in data["recent"]} == {to_bob.id}
    # It printed Python's dict ("events ever: {'hard': 5, ...}") and three tables as one.
    lines = cli_ok("mail", "bounces").splitlines()
    assert lines[0] == "bounce threshold 5; events ever: hard 5, complaint 1"
    assert lines[1:3] == ["", "mailboxes with bounces or complaints:"]
    assert lines[lines.index("latest bounces and complaints:") - 1] == ""
    assert lines[lines.index("mails sent and spam complaints, the last 7 days:") - 1] == ""
    shown = cli_ok("user", "show", "bob")
    assert "bob@players.example: disabled by bounces since" in shown
    assert "bounce score 5" in shown


def _verp_of(server: Server, mail_id: int) -> str | None:
    with session_for(server.engine) as session:
        row = session.get(OutboxMail, mail_id)
        assert row is not None
        return row.verp


def test_set_mail_stream_turns_a_stream_off_and_on_with_the_password(server: Server) -> None:
    alice, bob = _board(server)
    server.send(bob, "set bob secret mail messages off")
    [ok] = server.new_mail()
    assert '"messages" mails are switched off' in ok.body
    server.send(alice, "message alice secret bob", "Hello")
    assert server.to(bob, server.new_mail()) == []
    server.send(bob, "set bob secret mail messages on")
    server.new_mail()
    server.send(alice, "message alice secret bob", "Hello again")
    [message] = server.to(bob, server.new_mail())
    assert "X-PBM-Reason: message" in message.raw.decode()
    server.send(bob, "set bob secret mail everything off")
    [refused] = server.new_mail()
    assert "'everything' is not one of boards, reminders, tournaments, digest, messages." in (
        " ".join(refused.body.split())
    )


def test_the_player_is_told_at_his_other_address_and_directors_see_it(server: Server) -> None:
    alice, bob = _board(server)
    server.send(bob, "change address bob secret bob@players.example bob@elsewhere.example")
    server.confirm("bob@elsewhere.example")  # pbm tells only a confirmed address
    server.new_mail()
    assert server.send(alice, "tournament create alice secret spring quarto") == "done"
    server.send(bob, "tournament join spring bob secret")
    server.new_mail()
    [to_bob] = server.to(bob, _move(server, alice, "alice"))
    for _ in range(5):
        _bounce(server, to_bob)
        server.clock.advance(timedelta(days=1))
    told = server.new_mail()
    [player] = server.to("bob@elsewhere.example", told)
    assert "bob@players.example" in player.body and "returned" in player.body
    [opponent] = [m for m in server.to(alice, told) if "quarto 101" in m.body]
    [director] = [m for m in server.to(alice, told) if "tournament" in m.body]
    assert "spring" in director.body and opponent is not director


def test_a_persons_mail_to_the_feedback_address_is_an_ordinary_mail(server: Server) -> None:
    server.config = dataclasses.replace(server.config, feedback_address="pbm@example.org")
    assert server.send("carol@players.example", "signup carol secret") == "done"
    [welcome] = server.new_mail()
    assert welcome.to == ["carol@players.example"]
    # A report that is no bounce, to a VERP address, is ignored and never answered.
    raw = server.raw("mx@players.example", "hello", to="pbm-bounces+1-abcdefgh@example.org")
    assert server.process(raw) == "ignored"
    assert server.new_mail() == []


def test_bounces_key_a_mailbox_as_the_operator_configured_it() -> None:
    """With `[mail] tag_separators = "+-"`, bob-pbm@ and bob@ are one mailbox to consent,
    and so to bounces: his bouncing mailbox is disabled whichever spelling pbm would mail,
    and a confirmation from any of its spellings enables it again. (Bounces once keyed
    by the default rules alone: the mailbox consent confirmed was not the one bounces
    disabled.)"""
    with fresh_server(tag_separators="+-") as server:
        alice, bob = _board(server, "bob-pbm@players.example")
        _bounced_for_five_days(server, alice, bob)
        for spelling in (bob, "bob@players.example", "bob+games@players.example"):
            assert _score(server, spelling) == (5.0, True), spelling
        assert _score(server, "bobby@players.example") == (0.0, False)
        # His next mail gets a fresh request; its token, sent from another spelling of
        # the mailbox, confirms it and enables it again.
        server.send(bob, "help")
        [request] = [m for m in server.new_mail() if m.subject == "Confirm your address for bob"]
        server.send("bob@players.example", f"confirm {_token(request)}")
        [answer] = server.new_mail()
        assert "is confirmed for bob" in flat(answer.body), answer.body
        assert _score(server, bob) == (0.0, False)


def test_a_player_at_an_internationalised_domain_is_found_when_his_mailbox_is_disabled(
    server: Server,
) -> None:
    """The mailbox key writes a domain as its A-label (xn--...); bob signed up with the
    U-label, and his opponent is still told when his mailbox is disabled."""
    alice, bob = _board(server, "bob@bücher.example")
    told = _bounced_for_five_days(server, alice, bob)
    assert _score(server, "bob@xn--bcher-kva.example") == (5.0, True)
    [notice] = server.to(alice, told)
    assert "bob cannot be reached by mail since" in notice.body
    assert "quarto 101" in notice.body
