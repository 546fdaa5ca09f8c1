"""Consent (issue 22): pbm mails an address nothing but one confirmation request until its
owner confirms it; one mailbox, one identity; budgets by trust. Through the pipeline on
a real database: every mail counted here is a row of the outbox."""

from __future__ import annotations

import email
import logging
import re
from datetime import timedelta
from email.message import EmailMessage
from email.policy import SMTPUTF8
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text
from sqlmodel import select

from pbm.config import Config
from pbm.games import get_game
from pbm.jobs import run_due
from pbm.outgoing import queue_replies
from pbm.services.context import Context
from pbm.services.play.challenges import NewBoard, create_game
from pbm.store.engine import make_engine, session_for
from pbm.store.models import User, UserAddress
from pbm.store.schema import alembic_config
from tests.server.conftest import SERVER, Sent, Server, cli_ok, flat, legal_texts

VICTIM = "victim@victim.example"


def reply_to(mail: Sent) -> str:
    value = email.message_from_bytes(mail.raw)["Reply-To"]
    assert value, mail.subject
    return str(value)


def requests_to(server: Server, address: str) -> list[Sent]:
    return [m for m in server.outbox() if address in m.to and "confirm " in flat(m.body)]


def test_signup_asks_each_address_once_and_answers_the_sender_alone(server: Server) -> None:
    server.send("me@home.example", "signup carol pw carol@work.example me@home.example")
    mails = server.new_mail()
    assert all(len(m.to) == 1 for m in mails)
    welcome = [m for m in mails if m.to == ["me@home.example"]]
    work = [m for m in mails if m.to == ["carol@work.example"]]
    # The sender's own address: the welcome is its request; the other gets its own.
    assert len(welcome) == 1 and "reply to this" in flat(welcome[0].body)
    assert "carol@work.example" in flat(welcome[0].body)
    assert len(work) == 1 and "me@home.example asked" in flat(work[0].body)
    assert "not me" in flat(work[0].body) and "carol" in flat(work[0].body)
    assert reply_to(work[0]).startswith("pbm+")


def test_more_than_three_addresses_are_refused(server: Server) -> None:
    many = " ".join(f"v{i}@victim.example" for i in range(4))
    server.send("att@evil.example", f"signup xx pw {many}")
    [refusal] = server.new_mail()
    assert refusal.to == ["att@evil.example"]
    assert "at most 3 addresses, not 4" in flat(refusal.body)


def test_a_reply_confirms_and_then_boards_come(server: Server) -> None:
    alice = server.signup("alice")
    server.send("bob@players.example", "signup bob secret")
    server.new_mail()
    # bob has no confirmed address: alice's challenge is refused, to her alone.
    server.send(alice, "quarto challenge alice bob")
    [refused] = server.new_mail()
    assert refused.to == [alice] and "bob has no confirmed address" in flat(refused.body)
    server.confirm("bob@players.example")
    server.new_mail()
    server.send(alice, "quarto challenge alice bob")
    mails = server.new_mail()
    assert sorted(a for m in mails for a in m.to) == [alice, "bob@players.example"]


def test_not_me_stops_requests_for_that_account_and_then_for_new_ones(server: Server) -> None:
    server.send("att@evil.example", f"signup a1 pw {VICTIM}")
    [request] = server.to(VICTIM, server.new_mail())
    server.send(VICTIM, "Re: confirm", "not me\n", to=reply_to(request))
    [noted] = server.new_mail()
    assert noted.to == [VICTIM] and "will not mail" in flat(noted.body)
    # The address is gone from a1: a new address change by the attacker asks again? No:
    # the mailbox refused a1, so no request goes for it.
    server.send("att@evil.example", f"change address a1 pw {VICTIM}")
    assert server.to(VICTIM, server.new_mail()) == []
    server.send("att@evil.example", f"signup a2 pw {VICTIM}")
    [second] = server.to(VICTIM, server.new_mail())
    server.send(VICTIM, "Re: confirm", "Not me.\n", to=reply_to(second))
    server.new_mail()
    server.clock.advance(timedelta(days=2))
    server.send("att@evil.example", f"signup a3 pw {VICTIM}")
    assert server.to(VICTIM, server.new_mail()) == []  # two refusals: no new account


def test_fifty_signups_and_a_tournament_reach_the_victim_three_times(server: Server) -> None:
    lines = [f"signup v{i:02d} pw {VICTIM}" for i in range(50)]
    lines += ["tournament create v00 pw cup quarto"]
    lines += [f"tournament join cup v{i:02d} pw" for i in range(50)]
    lines += ["tournament start cup v00 pw"]
    # 50 commands at most per mail: the attacker sends two.
    server.send("att@evil.example", "multiple", "\n".join(lines[:50]) + "\n")
    server.send("att@evil.example", "multiple", "\n".join(lines[50:]) + "\n")
    to_victim = server.to(VICTIM, server.new_mail())
    # At most 3 requests a day (those of one message go as one mail), and nothing else.
    assert 1 <= len(to_victim) <= 3
    assert all("confirm " in flat(m.body) for m in to_victim)
    with session_for(server.engine) as session:
        assert session.exec(select(UserAddress).where(UserAddress.confirmed_at != None)).all() == []  # noqa: E711


def test_message_goes_only_to_acquaintances_at_most_ten(server: Server) -> None:
    att = server.signup("att")
    for i in range(12):
        server.signup(f"m{i}")
    names = " ".join(f"m{i}" for i in range(11))
    server.send(att, f"message att secret {names}", "buy now")
    [refused] = server.new_mail()
    assert refused.to == [att] and "at most 10 players, not 11" in flat(refused.body)
    names = " ".join(f"m{i}" for i in range(10))
    server.send(att, f"message att secret {names}", "buy now")
    [answer] = server.new_mail()
    assert answer.to == [att] and "Not sent" in flat(answer.body)
    # A player who opted in gets it; one who shares a board gets it.
    server.send("m0@players.example", "set m0 secret messages anyone")
    server.send(att, "quarto challenge att m1")
    server.new_mail()
    server.send(att, f"message att secret {names}", "hello")
    got = sorted(a for m in server.new_mail() for a in m.to if a != att)
    assert got == ["m0@players.example", "m1@players.example"]


def test_a_message_refused_for_one_player_is_told_in_the_singular(server: Server) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.signup("carol")
    server.send(alice, "message alice secret bob", "hi bob")
    [refused] = server.new_mail()
    assert "Not sent: bob shares no board or tournament with you and takes no messages" in flat(
        refused.body
    )
    assert "or has no confirmed address." in flat(refused.body)
    server.send("carol@players.example", "set carol secret messages anyone")
    server.new_mail()
    server.send(alice, "message alice secret bob carol", "hi both")
    answer = server.to(alice, server.new_mail())[-1]
    assert "Not sent to bob: this player shares no board" in flat(answer.body)
    server.send(alice, "message alice secret bob dave", "hi")
    [unknown] = server.new_mail()
    assert "dave" in unknown.body
    server.signup("dave")
    server.send(alice, "message alice secret bob dave", "hi")
    [both] = server.new_mail()
    assert "Not sent: bob dave share no board" in flat(both.body)


def test_unconfirmed_accounts_go_after_seven_days(server: Server) -> None:
    server.signup("alice")
    server.send("ghost@nowhere.example", "signup ghost pw")
    server.new_mail()
    server.clock.advance(timedelta(days=6))
    assert run_due(server.engine, server.clock, server.config)["unconfirmed"] == 0
    server.clock.advance(timedelta(days=1, minutes=1))
    assert run_due(server.engine, server.clock, server.config)["unconfirmed"] == 1
    with session_for(server.engine) as session:
        users = {u.userid: u.disabled for u in session.exec(select(User))}
    assert users == {"alice": False, "ghost": True}
    assert server.new_mail() == []


def test_an_account_from_before_consent_is_asked_before_its_days_count(server: Server) -> None:
    # Upgrading counted the days from the account's creation: every older account whose
    # address pbm had never asked was removed at the first run of the jobs, unasked.
    server.signup("alice")
    server.send("ghost@nowhere.example", "signup ghost pw")
    server.new_mail()
    with session_for(server.engine) as session:  # as the upgrade leaves a never-asked one
        [row] = session.exec(
            select(UserAddress).where(UserAddress.address == "ghost@nowhere.example")
        )
        row.unconfirmed_since = None
        row.confirm_token = None
        session.add(row)
        session.commit()
    server.clock.advance(timedelta(days=30))
    assert run_due(server.engine, server.clock, server.config)["unconfirmed"] == 0
    assert server.new_mail() == []  # the job asks nobody: only the owner's own mail does
    server.send("ghost@nowhere.example", "help")
    subjects = [(m.to, m.subject) for m in server.new_mail()]
    ghost = ["ghost@nowhere.example"]
    assert subjects == [(ghost, "Help pbm"), (ghost, "Confirm your address for ghost")]
    server.clock.advance(timedelta(days=6))
    assert run_due(server.engine, server.clock, server.config)["unconfirmed"] == 0
    server.send("ghost@nowhere.example", "help")  # asked already: no second request
    assert [m.subject for m in server.new_mail()] == ["Help pbm"]
    server.clock.advance(timedelta(days=1, minutes=1))
    assert run_due(server.engine, server.clock, server.config)["unconfirmed"] == 1
    with session_for(server.engine) as session:
        users = {u.userid: u.disabled for u in session.exec(select(User))}
    assert users == {"alice": False, "ghost": True}


def test_an_unconfirmed_player_of_a_started_board_is_kept_without_a_word(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    # Every run of the job (every five minutes; from cron, a mail each time) said again
    # "unconfirmed ghost kept: it plays started boards".
    alice = server.signup("alice")
    server.send("ghost@nowhere.example", "signup ghost pw")
    with session_for(server.engine) as session:  # as `pbm game new` makes it
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        create_game(ctx, NewBoard(get_game("quarto"), ["alice", "ghost"]))
        queue_replies(ctx, None, ctx.replies, inbound_id=None)
        session.commit()
    server.send(alice, f"quarto move 101 alice secret {legal_texts(server, 'quarto', '101')[0]}")
    server.new_mail()
    server.clock.advance(timedelta(days=8))
    with caplog.at_level(logging.WARNING, logger="pbm.jobs"):
        for _ in range(2):
            assert run_due(server.engine, server.clock, server.config)["unconfirmed"] == 0
    assert "unconfirmed ghost" not in caplog.text
    with session_for(server.engine) as session:
        users = {u.userid: u.disabled for u in session.exec(select(User))}
    assert users == {"alice": False, "ghost": False}


def test_three_requests_a_day_per_mailbox_whatever_the_spelling(server: Server) -> None:
    spellings = [
        "victim+1@victim.example",
        "Victim@VICTIM.example",
        "victim+x@victim.example",
        "victim@victim.example",
        "victim+2@victim.example.",
    ]
    for i, address in enumerate(spellings):
        server.send("att@evil.example", f"signup s{i} pw {address}")
    requests = [m for m in server.new_mail() if m.to != ["att@evil.example"]]
    assert len(requests) == 3
    server.clock.advance(timedelta(days=1, minutes=1))
    server.send("att@evil.example", f"signup s9 pw {VICTIM}")
    assert len(server.to(VICTIM, server.new_mail())) == 1


def utf8_mail(sender: str, subject: str, n: int) -> bytes:
    """A mail from an internationalised address (SMTPUTF8: the From in UTF-8)."""
    msg = EmailMessage(policy=SMTPUTF8)
    msg["From"], msg["To"], msg["Subject"] = sender, SERVER, subject
    msg["Message-ID"] = f"<idn.{n}@players.example>"
    msg.set_content("\n")
    return msg.as_bytes()


def test_idn_and_nfd_spellings_share_one_budget(server: Server) -> None:
    spellings = [
        "p@bücher.example",
        "p@xn--bcher-kva.example",
        "p@bu\u0308cher.example",
        "P+z@BÜCHER.example",
    ]
    for i in range(12):
        assert server.process(utf8_mail(spellings[i % len(spellings)], "help quarto", i)) == "done"
    mails = server.new_mail()
    helps = [m for m in mails if m.subject.startswith("Help")]
    notices = [m for m in mails if "not mailed until" in flat(m.body)]
    assert len(helps) == 10 and len(notices) == 1  # the stranger budget, once for all


def test_a_stranger_over_budget_gets_one_notice(server: Server) -> None:
    for _ in range(14):
        server.send("s@stranger.example", "help quarto")
    mails = server.new_mail()
    notices = [
        m
        for m in mails
        if "answers resume" in flat(m.body).lower() or "not mailed until" in flat(m.body)
    ]
    assert len(mails) == 11 and len(notices) == 1
    assert "2026-11-22 03:41 UTC" in flat(notices[0].body)


def test_the_operator_confirms_and_lists(server: Server, cfg: object) -> None:
    cli_ok("user", "add", "carol", "carol@x.example", "--password", "pw")
    assert "carol@x.example?" in cli_ok("user", "list", "--unconfirmed")
    cli_ok("user", "confirm", "carol", "carol@x.example")
    assert "carol" not in cli_ok("user", "list", "--unconfirmed")


def test_dmarc_pass_at_a_trusted_mta_confirms_a_signup_at_once(server: Server) -> None:
    server.config = server.config.__class__(
        **{**server.config.__dict__, "authserv_ids": ("mx.example.org",)}
    )
    header = "mx.example.org; dmarc=pass header.from=good.example"
    server.send("dee@good.example", "signup dee pw", headers={"Authentication-Results": header})
    [welcome] = server.new_mail()
    assert "is confirmed" in flat(welcome.body)
    assert server.to("pbm@example.org", [welcome]) == [] and SERVER not in welcome.to


def test_upgrading_confirms_the_addresses_players_wrote_from(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The migration to consent: an address pbm ran a message from is confirmed, one it
    never heard from is not, and the count is logged."""
    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    command.upgrade(alembic_config(engine), "0011")
    raw = b"From: Alice@Old.example\r\nTo: pbm@example.org\r\nSubject: help\r\n\r\nhi\r\n"
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO users (id, userid, userid_key, password_hash, created_at, disabled,"
                " bot) VALUES (1, 'alice', 'alice', 'x', '2026-01-01 00:00:00', 0, 0),"
                " (2, 'ghost', 'ghost', 'x', '2026-01-01 00:00:00', 0, 0)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO user_addresses (user_id, address, position) VALUES"
                " (1, 'alice@old.example', 0), (2, 'ghost+x@old.example', 0)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO inbound_messages (message_id, received_at, via, raw, status,"
                " processed_at, attempts) VALUES ('<a@old>', '2026-01-02 00:00:00', 'imap',"
                " :raw, 'done', '2026-01-02 00:00:01', 0)"
            ),
            {"raw": raw},
        )
    with caplog.at_level(logging.WARNING):
        command.upgrade(alembic_config(engine), "heads")
    assert "consent: 1 of 2 addresses confirmed" in caplog.text
    with session_for(engine) as session:
        rows = {
            r.address: (r.mailbox, r.confirmed_at is not None)
            for r in session.exec(select(UserAddress))
        }
    engine.dispose()
    assert rows == {
        "alice@old.example": ("alice@old.example", True),
        "ghost+x@old.example": ("ghost@old.example", False),
    }


def test_upgrading_keeps_the_days_of_asked_addresses_and_none_for_the_others(
    tmp_path: Path,
) -> None:
    """The migration that counts each address's days to confirm from its own start: one
    asked since consent (holding a request's token) or confirmed counts from its
    account's creation, as before; one never asked has none (kept until asked)."""
    engine = make_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    command.upgrade(alembic_config(engine), "0017")
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO users (id, userid, userid_key, password_hash, created_at, disabled,"
                " bot) VALUES (1, 'asked', 'asked', 'x', '2026-01-01 00:00:00', 0, 0),"
                " (2, 'unasked', 'unasked', 'x', '2026-02-01 00:00:00', 0, 0),"
                " (3, 'sure', 'sure', 'x', '2026-03-01 00:00:00', 0, 0)"
            )
        )
        conn.execute(
            text(
                "INSERT INTO user_addresses (user_id, address, position, mailbox, confirm_token,"
                " confirmed_at) VALUES (1, 'a@x.example', 0, 'a@x.example', 'tok', NULL),"
                " (2, 'u@x.example', 0, 'u@x.example', NULL, NULL),"
                " (3, 's@x.example', 0, 's@x.example', NULL, '2026-03-02 00:00:00')"
            )
        )
    command.upgrade(alembic_config(engine), "heads")
    with session_for(engine) as session:
        since = {r.address: r.unconfirmed_since for r in session.exec(select(UserAddress))}
    engine.dispose()
    assert {a: t and f"{t:%Y-%m-%d}" for a, t in since.items()} == {
        "a@x.example": "2026-01-01",
        "u@x.example": None,
        "s@x.example": "2026-03-01",
    }


def test_reminder_and_forfeit_times_by_mail_have_floors(server: Server) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob --nagtime=0.1")
    [refused] = server.new_mail()
    assert "below this server's floor of 12 hours" in flat(refused.body)
    server.send(alice, "quarto challenge alice bob --forfeittime=0.5")
    [refused] = server.new_mail()
    assert "below this server's floor of 1 day" in flat(refused.body)
    server.send(alice, "quarto challenge alice bob --nagtime=0.5 --forfeittime=1")
    assert len(server.new_mail()) == 2  # at the floors: the board starts


def test_one_mailbox_confirms_one_account_unless_the_operator_allows(server: Server) -> None:
    server.signup("alice", address="home@family.example")
    server.send("Home+bob@family.example", "signup bob pw")
    [welcome] = server.new_mail()
    server.send("home+bob@family.example", "Re: welcome", "\n", to=reply_to(welcome))
    [refused] = server.new_mail()
    assert "confirmed for another account already" in flat(refused.body)
    server.config = Config(**{**server.config.__dict__, "shared_mailboxes": True})
    server.send("home+bob@family.example", "Re: welcome", "\n", to=reply_to(welcome))
    [ok] = server.new_mail()
    assert "is confirmed for bob" in flat(ok.body)


def test_a_board_sends_at_most_two_reminders_a_day(server: Server) -> None:
    """A reminder time below the floor (set by the operator, or stored before the floor)
    still sends at most `reminders_per_board_day` reminders a day."""
    alice = server.signup("alice")
    bob = server.signup("bob")
    with session_for(server.engine) as session:
        ctx = Context(session=session, clock=server.clock, config=server.config, sender="")
        names = ["alice", "bob"]
        create_game(ctx, NewBoard(get_game("quarto"), names, server_options={"nagtime": "0.01"}))
        queue_replies(ctx, None, ctx.replies, inbound_id=None)
        session.commit()
    server.new_mail()
    nags = 0
    for turn in range(4):  # a move every 20 minutes, each left waiting past 0.01 days
        server.clock.advance(timedelta(minutes=20))
        nags += run_due(server.engine, server.clock, server.config)["nags"]
        player, address = [("alice", alice), ("bob", bob)][turn % 2]
        move = legal_texts(server, "quarto")[0]
        assert server.send(address, f"quarto move 101 {player} secret {move}") == "done"
    assert nags == 2  # of the 4 moves each waited long enough for its own


def test_long_names_and_addresses_are_folded_in_the_account_mails(server: Server) -> None:
    """A long userid or address filled into the welcome, its confirmation request, an
    address change or a tournament notice is folded at 72 columns; the lines a player
    copies (`confirm TOKEN`, `notme TOKEN`) stand alone."""
    long_a = "alexandra.longname-for-testing@mail.some-university.example.org"
    long_b = "second.address.longname@another-domain.example.net"
    server.send(long_a, "signup alexandra_the_great secret")
    [welcome] = server.new_mail()
    [token] = re.findall(r"^    confirm (\w+)$", welcome.body, re.MULTILINE)
    assert re.search(rf"^    notme {token}$", welcome.body, re.MULTILINE)
    server.send(long_a, f"confirm {token}")
    server.send(long_a, f"change address alexandra_the_great secret {long_a} {long_b}")
    server.send(long_a, "tournament create alexandra_the_great secret springtournament quarto")
    server.send(long_a, "tournament join springtournament alexandra_the_great secret")
    mails = [welcome, *server.new_mail()]
    assert len(mails) == 6
    created = next(mail for mail in mails if "is open for entries" in mail.body)
    assert "\n    tournament start springtournament alexandra_the_great password\n" in (
        created.body
    )
    for mail in mails:
        body = mail.body.split("\n> ")[0]  # the quoted original is the player's own
        # A command to copy stands alone on its line (longest names may run past 72).
        prose = [line for line in body.splitlines() if not line.startswith("    tournament ")]
        assert [line for line in prose if len(line) > 72 and len(line.split()) > 1] == [], (
            mail.subject
        )
