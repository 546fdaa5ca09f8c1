"""Accounts by mail: signup, password changes, throttling, addresses, signoff, delete,
help, list, message relay."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from pbm.services.accounts.passwords import hash_password, verify_password
from tests.server.conftest import Server, flat


def test_password_hashes() -> None:
    stored = hash_password("chocolate", 4)
    assert stored.startswith("scrypt$4$8$1$")
    assert "chocolate" not in stored
    assert verify_password("chocolate", stored)
    assert not verify_password("Chocolate", stored)
    assert hash_password("chocolate", 4) != stored  # salted
    assert not verify_password("x", "garbage")


def test_signup_welcomes_and_refuses_duplicates(server: Server) -> None:
    assert server.send("fms123@moo.example", "signup fsmith chocolate") == "done"
    [welcome] = server.new_mail()
    assert welcome.to == ["fms123@moo.example"]
    assert welcome.subject == "Welcome to the PBeM Server, fsmith"
    server.send("other@moo.example", "signup FSmith other")
    [err] = server.new_mail()
    assert "The userid FSmith is taken" in err.body
    server.send("x@moo.example", "signup bad:name pw")
    [err] = server.new_mail()
    assert "cannot be a userid" in err.body
    server.send("x@moo.example", "signup")
    [err] = server.new_mail()
    assert "Usage: signup userid password [address...]" in err.body


def test_signup_with_other_addresses(server: Server) -> None:
    server.send("me@home.example", "signup carol pw carol@work.example carol@home.example")
    mails = server.new_mail()
    # One answer to the sender, one request to each address: no mail names another.
    assert sorted(m.to for m in mails) == [
        ["carol@home.example"],
        ["carol@work.example"],
        ["me@home.example"],
    ]


def test_change_password_and_address(server: Server) -> None:
    alice = server.signup("alice", "old")
    server.send(alice, "change password alice old new")
    [ok] = server.new_mail()
    assert "has been changed" in ok.body
    server.send(alice, "quarto limit alice old")
    [err] = server.new_mail()
    assert "Invalid password" in err.body
    server.send(alice, "quarto limit alice new")
    [ok] = server.new_mail()
    assert "accept any number" in ok.body
    server.send(alice, "change address alice new alice@new.example")
    [ok, request] = server.new_mail()
    assert "alice@new.example" in ok.body and request.to == ["alice@new.example"]
    server.confirm("alice@new.example")
    server.send(alice, "quarto challenge alice alice")
    server.new_mail()
    server.signup("bob")
    # A challenge must come from a registered address of a player it names.
    server.send("alice@new.example", "quarto challenge alice bob")
    mails = server.new_mail()
    assert sorted(m.to[0] for m in mails) == ["alice@new.example", "bob@players.example"]


def test_userids_ignore_case(server: Server) -> None:
    alice = server.signup("Alice")
    server.send(alice, "quarto limit ALICE secret 3")
    [ok] = server.new_mail()
    assert "limited to 3" in ok.body


def test_repeated_failures_are_throttled_and_logged(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    alice = server.signup("alice")
    with caplog.at_level(logging.WARNING):
        for _ in range(3):
            server.send("mallory@evil.example", "quarto limit alice guess")
    assert sum("wrong password for alice" in r.getMessage() for r in caplog.records) == 3
    assert any("password budget used up" in r.getMessage() for r in caplog.records)
    server.new_mail()
    # Now even the right password is refused from that address, for the window...
    server.send("mallory@evil.example", "quarto limit alice secret")
    [err] = server.new_mail()
    assert "Too many wrong passwords" in err.body
    # ...but not from alice's own address: a stranger cannot lock her out.
    server.send(alice, "quarto limit alice secret")
    [ok] = server.new_mail()
    assert "accept any number" in ok.body
    server.clock.advance(timedelta(minutes=16))
    server.send("mallory@evil.example", "quarto limit alice secret")
    [ok] = server.new_mail()
    assert "accept any number" in ok.body


def test_signoff_refuses_challenges_and_delete_needs_no_games(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(bob, "quarto challenge alice bob")
    server.new_mail()
    server.send(alice, "delete alice secret")
    [err] = server.new_mail()
    assert "Finish or resign these boards first: quarto 101" in err.body
    server.send(alice, "signoff alice secret")
    [done] = server.new_mail()
    # It spoke of alice and "your boards" in one breath, and not of the way back.
    assert "alice is signed off: you refuse every challenge" in flat(done.body)
    assert "'GAME accept alice PASSWORD' takes challenges of a game again." in flat(done.body)
    server.send(bob, "quadrature challenge alice bob")
    [err] = server.new_mail()
    assert err.subject == "Invalid challenge"
    server.send(alice, "quad accept alice secret")
    server.new_mail()
    assert server.send(bob, "quad challenge alice bob") == "done"
    assert len(server.new_mail()) == 2  # the new board, to each player
    server.send(alice, "quad resign 101 alice secret")
    server.new_mail()
    server.send(alice, "quarto resign 101 alice secret")
    server.new_mail()
    server.send(alice, "delete alice secret")
    [ok] = server.new_mail()
    assert "has been deleted" in ok.body
    server.send(bob, "quarto challenge bob alice")
    [err] = server.new_mail()
    assert "Userid not known here:\n\talice" in err.body


def test_help_topics(server: Server) -> None:
    server.send("who@x.example", "help")
    [general] = server.new_mail()
    assert general.subject == "Help pbm"
    assert "signup userid password" in general.body
    assert "GAME move board userid password move[#n]" in general.body
    server.send("who@x.example", "help quarto move")
    [both] = server.new_mail()  # one answer per message, each topic a section
    assert both.subject == "Help quarto (and 1 more answers)"
    assert "== 1. Help quarto ==" in both.body and "Notation" in both.body
    assert "quarto move board userid password" in both.body
    assert "== 2. Help move ==\n\nGAME move board userid password move[#n]" in both.body
    server.send("who@x.example", "quarto help")
    [game_help] = server.new_mail()
    assert "Notation" in game_help.body
    server.send("who@x.example", "help chalenge")
    [unknown] = server.new_mail()
    assert "challenge" in unknown.body


def test_list_and_message(server: Server) -> None:
    alice = server.signup("alice")
    bob = server.signup("bob")
    server.send(alice, "list")
    [catalogue] = server.new_mail()
    assert "Quarto" in catalogue.body and "Quadrature" in catalogue.body
    server.send(alice, "quarto challenge alice bob")  # players of one board may message
    server.new_mail()
    server.send(alice, "message alice secret bob", "Fancy a game?")
    mails = server.new_mail()
    relay = next(m for m in mails if m.to == [bob])
    assert relay.subject == "Message from alice via PBeM Server"
    assert "Fancy a game?" in relay.body and alice not in relay.body
    assert any(m.to == [alice] and m.subject == "Message sent" for m in mails)
    server.send(alice, "message alice secret ghost", "hello")
    [err] = server.new_mail()
    assert "Userid not known here:\n\tghost\n" in err.body


def test_an_unknown_userid_is_worded_alike_everywhere(server: Server) -> None:
    """`message` and `all show` said "not recognized", `challenge` "not known here"."""
    alice = server.signup("alice")
    for command in ("message alice secret ghost", "all show ghost", "quarto challenge alice ghost"):
        server.send(alice, command, "hello")
        [err] = server.new_mail()
        assert "Userid not known here:\n\tghost\n" in err.body, command
        assert "recognized" not in err.body


def test_all_show(server: Server) -> None:
    alice = server.signup("alice")
    server.signup("bob")
    server.send(alice, "quarto challenge alice bob")
    server.send(alice, "quadrature challenge bob alice")
    server.new_mail()
    server.send(alice, "all show alice")
    [both] = server.new_mail()  # one answer per message, each board a section
    assert "Quarto Board 101 alice" in both.body
    assert "Quadrature Board 101 bob" in both.body
    server.send(alice, "all show alice next")
    [only] = server.new_mail()
    assert only.subject == "Quarto Board 101 alice"
